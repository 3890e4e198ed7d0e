//! Step 1: the loop itself.
//!
//! At its heart an event loop is a queue of work and a `while` loop that takes
//! the next piece of work off the front and runs it, until nothing is left.
//! Everything later steps add (callbacks, timers, sockets, tasks) is a new way
//! of putting work on that queue.
//!
//! Here the work is a plain function, `fn()`: it takes nothing and remembers
//! nothing between runs. That is enough to see the order in which work runs,
//! and, in the demo, why plain functions are not yet enough for concurrency.

use std::fmt;

use heapless::Deque;

// ANCHOR: task
/// One piece of work: a plain function with no arguments and no state.
pub type Task = fn();
// ANCHOR_END: task

// ANCHOR: capacity
/// How many tasks may wait in the queue at once.
///
/// The queue never grows. A real loop must decide what happens when work
/// arrives faster than it runs; with a fixed capacity that decision is
/// visible: `push` says no, and the caller has to handle it.
pub const CAPACITY: usize = 8;
// ANCHOR_END: capacity

// ANCHOR: event_loop
/// A queue of tasks, run in the order they were pushed.
#[derive(Debug)]
pub struct EventLoop {
    tasks: Deque<Task, CAPACITY>,
}

impl EventLoop {
    pub fn new() -> Self {
        EventLoop {
            tasks: Deque::new(),
        }
    }

    /// Puts `task` at the back of the queue, or says why it could not.
    pub fn push(&mut self, task: Task) -> Result<(), QueueFull> {
        self.tasks.push_back(task).map_err(|_rejected| QueueFull)
    }

    /// Runs tasks from the front of the queue until the queue is empty.
    pub fn run(&mut self) {
        while let Some(task) = self.tasks.pop_front() {
            task();
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
        write!(f, "the task queue is full ({CAPACITY} tasks)")
    }
}

impl std::error::Error for QueueFull {}
// ANCHOR_END: queue_full
