//! A solution to chapter 4's exercise. Try it yourself before reading on.

use std::cell::RefCell;
use std::rc::Rc;

use step04::EventLoop;
use step04::apps::net::read_now;

use super::Counter;

// ANCHOR: count_bytes
/// Reads until the socket says `WouldBlock`, and only then waits. By then
/// everything that had arrived has been read, so the next byte to arrive
/// brings a readiness event of its own.
pub fn count_bytes(lp: &EventLoop, counter: Rc<RefCell<Counter>>) {
    let mut buf = [0; 1024];
    let mut this = counter.borrow_mut();
    loop {
        match read_now(&mut this.stream, &mut buf) {
            Ok(Some(n)) if n > 0 => this.total += n,
            // Drained: now waiting is safe.
            Ok(None) => break,
            Ok(Some(_)) | Err(_) => {
                this.finished = true;
                return;
            }
        }
    }
    let token = this.token;
    drop(this);
    lp.read_wait(token, move |lp| count_bytes(lp, counter));
}
// ANCHOR_END: count_bytes
