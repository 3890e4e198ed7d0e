//! Step 5: tasks.
//!
//! A task is a future that the loop polls until it is done. Each poll runs
//! the task up to its next `.await` on something not ready yet; the task
//! then hands the loop a `Waker`, and whoever makes it ready (a timer, a
//! socket, another task, another thread) wakes it, which queues one more
//! poll. `sleep` and `yield_now` are the first things a task can await.
//!
//! Tasks sit on top of the callbacks of the steps before. Polling them is
//! not a callback: it is the turn's own last phase, after the ready
//! callbacks have run. `sleep` is a `call_at` whose callback wakes the
//! task.
//!
//! # Reading map
//!
//! Read the files in this order: each one uses only the files above it.
//! **NEW** right after a file's name marks a file this step adds; inside an
//! entry, **NEW:** marks what it adds to a file it keeps. Everything else
//! is step 4's, as it was.
//!
//! 1. `lib.rs`: this map, and what the crate shows the world.
//! 2. `trace.rs`: what `LOOP_TRACE=1` prints, one call per phase of a turn;
//!    not the lesson. **NEW:** the woken tasks and their polls.
//! 3. `lost_wake_up.rs` **NEW**: `LostWakeUp`, the error `block_on`
//!    returns instead of waiting for ever when no task can be woken again,
//!    and what it says; `Tasks::lost_wake_up` in `task.rs` decides.
//! 4. `waker.rs` **NEW**: task ids; `TaskWaker`, what a `Waker` points to;
//!    `WokenTasks`, the list wakers write to.
//! 5. `task.rs` **NEW**: `Task` and `Tasks`: `spawn`, `poll_woken`,
//!    `poll_task`, and `lost_wake_up`, which tells when no task can ever
//!    be woken again.
//! 6. `event_loop.rs`: step 4's loop. **NEW**: `EventLoop::spawn`, `block_on`
//!    (which takes the `RunGuard`, as `run` does), `running_loop`, and
//!    `poll_woken` at the end of `run_once`, the loop's turn, which does
//!    not wait while a task is woken, and `never_wait_for_nothing` before
//!    a wait with no deadline.
//! 7. `sleep.rs` **NEW**: `sleep`, `sleep_until`, `yield_now`.
//! 8. `apps/mod.rs`, `apps/demo.rs`: not the runtime: the demo `cargo run`
//!    shows.
//! 9. `main.rs`: arguments, errors, exit codes; step 4's `serve` mode is
//!    gone with its servers. Its plumbing ends a demo quietly when stdout
//!    closes early (`| head`).
//!
//! Gone: step 4's callback servers and client; they return in step 7 as
//! tasks.
//!
//! A file with plumbing ends with it, behind a fenced "Plumbing" comment: a
//! reader may skip it.

pub mod apps;
mod event_loop;
mod lost_wake_up;
mod sleep;
mod task;
mod trace;
mod waker;

pub use event_loop::{Callback, EventLoop};
pub use lost_wake_up::LostWakeUp;
pub use sleep::{Sleep, YieldNow, sleep, sleep_until, yield_now};
