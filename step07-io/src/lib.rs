//! Step 7: async I/O.
//!
//! A task can now wait for a socket the way it waits for a deadline. It
//! tries to read, write, accept or connect; when the OS answers
//! `WouldBlock`, it leaves its waker with the loop and returns `Pending`,
//! and the loop wakes it once the socket is ready, to try again. That is
//! the reactor: step 4's `read_wait` and `write_wait`, with callbacks whose
//! only job is now to wake a task. On top of it, `accept`, `connect`,
//! `read` and `write_all` are `async fn`s: a server or a client reads as
//! straight-line code, and one thread still serves them all.
//!
//! # Reading map
//!
//! Read the files in this order: each one uses only the files above it.
//! **NEW** right after a file's name marks a file this step adds; inside an
//! entry, **NEW:** marks what it adds to a file it keeps. Everything else
//! is step 6's, as it was.
//!
//! 1. `lib.rs`: this map, and what the crate shows the world.
//! 2. `trace.rs`: what `LOOP_TRACE=1` prints, one call per phase of a turn;
//!    not the lesson. **NEW:** which task a ready socket wakes.
//! 3. `lost_wake_up.rs`: step 6's, unchanged.
//! 4. `waker.rs`: step 6's, unchanged: task ids, `TaskWaker`, `WokenTasks`.
//! 5. `join.rs`: step 6's, unchanged: `JoinHandle` and its `Reporter`.
//! 6. `task.rs`: step 6's, unchanged: `Task` and `Tasks`.
//! 7. `event_loop.rs`: step 6's: the loop, whose `read_wait` and
//!    `write_wait` (step 4's) the reactor uses; `spawn`, `block_on`.
//!    **NEW**: `stop_waiting`, which empties a socket's slot.
//! 8. `sleep.rs`: step 6's, unchanged: `sleep`, `yield_now`.
//! 9. `reactor.rs` **NEW**: `Socket`, a socket registered with the loop;
//!    `poll_io`, which tries an operation and, on `WouldBlock`, leaves the
//!    task's waker in a `read_wait` or `write_wait` callback; `async_io`,
//!    the future that calls it and takes the waker back when dropped;
//!    `read`, `write`, `write_all`; and the `Drop` that deregisters.
//! 10. `net.rs` **NEW**: `TcpListener::accept` (with `accept_waiting`),
//!     `TcpStream::connect` (with `finish_connecting`), `socket_pair`, and
//!     `accept_clients`, the accept loop the servers share.
//! 11. `apps/mod.rs`: not the runtime: programs that run on it.
//!     - `apps/echo.rs` **NEW**: step 4's echo server, a task per client.
//!     - `apps/slow.rs` **NEW**: step 4's slow server, a task per request,
//!       in step 4's two protocols.
//!     - `apps/demo.rs` **NEW**: the demo `cargo run` shows, and `serve` and
//!       `serve-slow`.
//!     - `apps/terminal.rs`: step 4's `client` mode, as it was.
//! 12. `main.rs`: arguments (`serve`, `client`, `serve-slow`), errors, exit
//!     codes; its plumbing ends a demo quietly when stdout closes early
//!     (`| head`).
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
mod trace;
mod waker;

pub use event_loop::{Callback, EventLoop, join_all, spawn};
pub use join::{JoinError, JoinHandle, panic_message};
pub use lost_wake_up::LostWakeUp;
pub use net::{LocalStream, TcpListener, TcpStream, socket_pair};
pub use reactor::Socket;
pub use sleep::{Sleep, YieldNow, sleep, sleep_until, yield_now};
// ANCHOR_END: modules
