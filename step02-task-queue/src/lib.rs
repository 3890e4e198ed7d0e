//! Step 2: callbacks.
//!
//! Step 1's callbacks were plain functions: they could not remember anything,
//! so a long job had to run from start to finish in one go. Here a callback is
//! a closure that carries its own state and receives the loop, so it can do
//! one small piece of work and put the next piece back on the queue with
//! `call_soon`. Two jobs written that way take turns.
//!
//! `LOOP_TRACE=1 cargo run -p step02` makes the loop say, on stderr, each
//! callback it runs, and which one held the loop too long. That code is in
//! `trace.rs`, a call before and after each callback: a window onto the
//! loop, not the lesson.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;

use crate::trace::Trace;

mod trace;

// ANCHOR: callback
/// One piece of work: a closure that runs once and may schedule more work on
/// the loop it is given.
pub type Callback = Box<dyn FnOnce(&EventLoop)>;
// ANCHOR_END: callback

// ANCHOR: event_loop
/// A queue of callbacks, run in the order they were scheduled.
///
/// Callbacks schedule more callbacks *while the loop is running them*, so
/// they receive a shared `&EventLoop`, and the queue sits in a `RefCell` that
/// lets a shared reference change it.
pub struct EventLoop {
    ready: RefCell<VecDeque<Callback>>,
    trace: Trace,
}

impl EventLoop {
    pub fn new() -> Self {
        EventLoop {
            ready: RefCell::new(VecDeque::new()),
            trace: Trace::from_env(),
        }
    }

    // BUILD 1/3: chapter 2, "The idea"; test step02_callbacks::a_callback_scheduled_by_a_callback_runs_after_those_already_queued
    /// Schedules `callback` to run after everything already in the queue.
    pub fn call_soon(&self, callback: impl FnOnce(&EventLoop) + 'static) {
        self.ready.borrow_mut().push_back(Box::new(callback));
    }

    // BUILD 2/3: chapter 2, "The idea"; test step02_callbacks::self_rescheduling_callbacks_take_turns
    /// Runs callbacks, oldest first, until none is left, giving each the
    /// loop. Each comes off the queue (`next_ready`) before it runs.
    ///
    /// For `LOOP_TRACE`: `self.trace.runs(|| …)` just before each callback,
    /// the closure counting the callbacks still queued, and
    /// `self.trace.callback_ends()` just after it.
    pub fn run(&self) {
        while let Some(callback) = self.next_ready() {
            self.trace.runs(|| self.ready.borrow().len());
            callback(self);
            self.trace.callback_ends();
        }
    }

    // BUILD 3/3: chapter 2, "The idea"; test step02_callbacks::run_returns_once_the_queue_is_empty
    /// Takes the next callback off the queue. The queue's borrow ends when
    /// this returns, so the callback is free to call `call_soon` itself.
    fn next_ready(&self) -> Option<Callback> {
        self.ready.borrow_mut().pop_front()
    }
}
// ANCHOR_END: event_loop

impl fmt::Debug for EventLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventLoop")
            .field("ready", &self.ready.borrow().len())
            .finish_non_exhaustive()
    }
}
