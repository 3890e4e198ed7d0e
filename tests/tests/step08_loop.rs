//! Step 8's loop under the reactor, as step 4's tests see it: one event
//! that makes a socket readable and writable wakes both of its waiters, and
//! a socket's callback queues behind the callbacks already ready. The
//! reactor's tasks wait through these same `read_wait` and `write_wait`
//! callbacks, so a waiter lost here is a task that never wakes.
//!
//! The tests are in `shared/io_loop.rs`, which `step07_loop.rs` includes
//! for step 7's loop too.

use step08 as step;

include!("shared/io_loop.rs");
