//! Step 1: the loop itself.
//!
//! At its heart an event loop is a queue of work and a `while` loop that takes
//! the next piece of work off the front and runs it, until nothing is left.
//! Everything later steps add (closures, timers, sockets, tasks) is a new way
//! of putting work on that queue.
//!
//! Here a piece of work, a *callback*, is a plain function, `fn()`: it takes
//! nothing and remembers nothing between runs. That is enough to see the order
//! in which work runs, and, in the demo, why plain functions are not yet
//! enough for concurrency. (We do not call it a task: from step 5 on, a task
//! is a future the loop polls.)

use std::fmt;

use heapless::Deque;

// ANCHOR: callback
/// One piece of work: a plain function with no arguments and no state.
pub type Callback = fn();
// ANCHOR_END: callback

// ANCHOR: capacity
/// How many callbacks may wait in the queue at once.
///
/// The queue never grows. A real loop must decide what happens when work
/// arrives faster than it runs; with a fixed capacity that decision is
/// visible: `push` says no, and the caller has to handle it.
pub const CAPACITY: usize = 8;
// ANCHOR_END: capacity

// ANCHOR: event_loop
/// A queue of callbacks, run in the order they were pushed.
#[derive(Debug)]
pub struct EventLoop {
    ready: Deque<Callback, CAPACITY>,
}

impl EventLoop {
    pub fn new() -> Self {
        EventLoop {
            ready: Deque::new(),
        }
    }

    // BUILD 1/2: chapter 1, "The idea"; test step01_queue::a_full_queue_rejects_the_next_callback_and_runs_only_what_it_accepted
    /// Puts `callback` at the back of the queue, or says why it could not:
    /// `QueueFull`, when all `CAPACITY` places are taken.
    pub fn push(&mut self, callback: Callback) -> Result<(), QueueFull> {
        self.ready
            .push_back(callback)
            .map_err(|_rejected| QueueFull)
    }

    // BUILD 2/2: chapter 1, "The idea"; test step01_queue::callbacks_run_in_the_order_they_were_pushed
    /// Runs callbacks from the front of the queue until the queue is empty,
    /// each taken off the queue before it is called.
    pub fn run(&mut self) {
        while let Some(callback) = self.ready.pop_front() {
            callback();
        }
    }
}
// ANCHOR_END: event_loop

// ANCHOR: queue_full
/// The error `push` returns when all `CAPACITY` places are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFull;

impl fmt::Display for QueueFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the queue is full ({CAPACITY} callbacks)")
    }
}

impl std::error::Error for QueueFull {}
// ANCHOR_END: queue_full
