//! Step 6: spawn and join.
//!
//! A task can start tasks of its own with `spawn`, and wait for one with the
//! `JoinHandle` it gets back: awaiting the handle gives what the child
//! returned, or a `JoinError` if the child panicked. A panic ends only the
//! task that panicked; the loop and every other task carry on. `join_all`
//! waits for a whole group. `block_on` returns as soon as its own task is
//! done: tasks still running then were background work, and are dropped;
//! their handles say so.
//!
//! # Reading map
//!
//! Read the files in this order: each one uses only the files above it.
//! **NEW** right after a file's name marks a file this step adds; inside an
//! entry, **NEW:** marks what it adds to a file it keeps. Everything else
//! is step 5's, as it was.
//!
//! 1. `lib.rs`: this map, and what the crate shows the world.
//! 2. `trace.rs`: what `LOOP_TRACE=1` prints, one call per phase of a turn;
//!    not the lesson. **NEW:** a poll that `panicked`.
//! 3. `lost_wake_up.rs`: step 5's. **NEW**: a task waiting to join a stuck
//!    child is named as one.
//! 4. `waker.rs`: step 5's, unchanged.
//! 5. `join.rs` **NEW**: `JoinHandle` and the slot it shares with its task,
//!    `JoinState`; `run_and_report`, which catches the task's panic, in a
//!    poll or (`Contained`) in its destructors, and `Reporter`, which leaves
//!    the outcome in the slot, `Cancelled` if the task is dropped
//!    unfinished; `JoinError`;
//!    and, in its plumbing, the slots `JoinHandle::poll` notes a waker
//!    waiting in, for the lost wake-up check.
//! 6. `task.rs`: step 5's. **NEW**: `Tasks::spawn` wraps the future in
//!    `run_and_report` and returns a `JoinHandle`; `Tasks::drop_all`, which
//!    leaves the table empty, even of tasks spawned by the tasks it drops;
//!    `lost_wake_up` counts a waker waiting in a stuck child's slot as the
//!    loop's own.
//! 7. `event_loop.rs`: step 5's loop. **NEW**: `EventLoop::spawn` returns a
//!    `JoinHandle`; `block_on` passes on its task's panic and drops the tasks
//!    left; the free `spawn`, from inside a task; `join_all`.
//! 8. `sleep.rs`: step 5's, unchanged.
//! 9. `apps/mod.rs`, `apps/demo.rs`: not the runtime: the demo `cargo run`
//!    shows, new in this step.
//! 10. `main.rs`: arguments, errors, exit codes; its plumbing ends a
//!     demo quietly when stdout closes early (`| head`).
//!
//! A file with plumbing ends with it, behind a fenced "Plumbing" comment: a
//! reader may skip it.

pub mod apps;
mod event_loop;
mod join;
mod lost_wake_up;
mod sleep;
mod task;
mod trace;
mod waker;

pub use event_loop::{Callback, EventLoop, join_all, spawn};
pub use join::{JoinError, JoinHandle, panic_message};
pub use lost_wake_up::LostWakeUp;
pub use sleep::{Sleep, YieldNow, sleep, sleep_until, yield_now};
