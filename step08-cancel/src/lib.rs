//! Step 8: cancellation.
//!
//! A task can be stopped before it ends: `JoinHandle::cancel` has the loop
//! drop the task's future instead of polling it again. Dropping is how Rust
//! cancels: the task stops at the `.await` where it waits, its destructors
//! run and are its cleanup (a socket it held closes and leaves the loop),
//! and its joiner learns it was `Cancelled`. The loop drops it at a safe
//! point, its own next turn to the task, never in the middle of a poll.
//! Timers can be cancelled too, `timeout` gives up on a future by dropping
//! it, and a server's task takes its connections' tasks with it.
//!
//! # Reading map
//!
//! Read the files in this order: each one uses only the files above it.
//! **NEW** marks what this step adds, in four parts: *tasks*, *timers*
//! (and the sweep), *timeout*, and *servers* (shut down with their
//! connections). Only `timeout.rs` is a new file: the others are step 7's,
//! and each entry says what the step adds to it. Everything else is step
//! 7's, as it was.
//!
//! 1. `lib.rs`: this map, and what the crate shows the world.
//! 2. `trace.rs`: what `LOOP_TRACE=1` prints, one call per phase of a turn;
//!    not the lesson. **NEW:** a cancelled task's poll; cancelled timers
//!    skipped and swept.
//! 3. `lost_wake_up.rs`: step 7's. **NEW** (tasks): a task cancelled but
//!    never woken is named as one.
//! 4. `waker.rs`: step 7's. **NEW** (tasks): the `cancelled` mark in
//!    `TaskWaker`, and `TaskWaker::cancel`, which sets it and wakes the task.
//! 5. `join.rs`: step 7's. **NEW** (tasks): `JoinHandle::cancel`,
//!    `is_finished`; `cancel_on_drop` and `CancelOnDrop`, a handle that
//!    cancels its task when dropped; the `Reporter`'s look at the mark.
//! 6. `task.rs`: step 7's. **NEW** (tasks): the safe point:
//!    `Tasks::poll_task` checks the mark, and `drop_cancelled_task` drops
//!    the task, unpolled. `lost_wake_up` names a task cancelled but never
//!    woken.
//! 7. `event_loop.rs`: step 7's loop. **NEW** (timers): `TimerHandle`,
//!    which `call_later` and `call_at` return; `PendingTimers`, the table
//!    that cancelling takes a timer out of, which `has_work` and
//!    `move_due_timers_to_ready` consult; `wake_at`, a timer that wakes a
//!    task, and `TimerHandle::wakes`, which a `Sleep` asks;
//!    `remove_cancelled_timers` (the sweep) at the start of `run_once`;
//!    cancelled timers do not keep `never_wait_for_nothing` from looking.
//!    (Tasks: `join_all` holds `CancelOnDrop`s, so dropping it cancels its
//!    tasks.)
//! 8. `sleep.rs`: step 7's. **NEW** (timers): a dropped `Sleep` cancels
//!    its timer, and its timer owns the waker it wakes (`wake_at`): a poll
//!    from another task replaces the timer. The sleep keeps no waker of
//!    its own.
//! 9. `timeout.rs` **NEW** (timeout): `timeout`, `TimedOut`.
//! 10. `reactor.rs`: step 7's: `Socket`, `poll_io`, `async_io` (a read
//!     dropped by `timeout` takes its waker back).
//! 11. `net.rs`: step 7's. **NEW** (servers): `ConnectionTasks`, which
//!     cancels a server's connections when `accept_clients`'s task is
//!     dropped.
//! 12. `apps/mod.rs`: not the runtime: programs that run on it.
//!     - `apps/echo.rs`: step 7's echo server, unchanged.
//!     - `apps/slow.rs`: step 7's slow server, unchanged.
//!     - `apps/demo.rs`: rewritten. **NEW**: the demo's scenes: a task
//!       cancelled, a request under `timeout`, a server shut down; and
//!       `serve` and `serve-slow`, step 7's.
//!     - `apps/terminal.rs`: step 7's `client` mode, unchanged.
//! 13. `main.rs`: step 7's, but for the crate's name: arguments, errors,
//!     exit codes, and a quiet end when stdout closes.
//!
//! A file with plumbing ends with it, behind a fenced "Plumbing" comment: a
//! reader may skip it.

// ANCHOR: modules
pub mod apps;
mod event_loop;
mod join;
mod lost_wake_up;
pub mod net;
mod reactor;
mod sleep;
mod task;
mod timeout;
mod trace;
mod waker;

pub use event_loop::{Callback, EventLoop, TimerHandle, join_all, spawn};
pub use join::{CancelOnDrop, JoinError, JoinHandle, panic_message};
pub use lost_wake_up::LostWakeUp;
pub use net::{LocalStream, TcpListener, TcpStream, socket_pair};
pub use reactor::Socket;
pub use sleep::{Sleep, YieldNow, sleep, sleep_until, yield_now};
pub use timeout::{TimedOut, timeout};
// ANCHOR_END: modules
