//! A solution to chapter 1's exercise. Try it yourself before reading on.

use step01::{Callback, EventLoop};

use super::log;

// ANCHOR: take_turns
/// One callback per line, queued in the order the lines should appear. It works,
/// but every step of both counts had to be written out by hand before the
/// loop started, and the queue holds only eight: counting from 5 would not fit.
pub fn queue_taking_turns(lp: &mut EventLoop) {
    let pieces: [Callback; 6] = [
        || log("Up 0"),
        || log("Down 3"),
        || log("Up 1"),
        || log("Down 2"),
        || log("Up 2"),
        || log("Down 1"),
    ];
    for piece in pieces {
        lp.push(piece)
            .expect("six callbacks fit in a queue of eight");
    }
}
// ANCHOR_END: take_turns
