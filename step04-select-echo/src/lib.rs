//! Step 4: readiness I/O.
//!
//! A callback can now wait for a socket: `read_wait(token, callback)` runs the
//! callback once the socket has data to read, `write_wait` once it has room to
//! write. Where step 3 slept until the next deadline, the loop now asks the OS
//! (through one `mio::Poll`) to wake it when *either* a socket becomes ready
//! *or* that deadline comes. One thread then serves many sockets and timers
//! at once, and never spins while it waits.
//!
//! mio reports readiness *edges*: it says "this socket became readable" once,
//! not "this socket is readable" on every poll. So the rule for every
//! callback is: try the operation first, keep going until the OS answers
//! `WouldBlock`, and only then wait again.
//!
//! # Reading map
//!
//! Read the files in this order: each one uses only the files above it.
//! **NEW** right after a file's name marks a file this step adds; inside an
//! entry, **NEW:** marks what it adds to a file it keeps. Everything else
//! is step 3's, as it was.
//!
//! 1. `lib.rs`: this map, and what the crate shows the world.
//! 2. `trace.rs` **NEW**: what `LOOP_TRACE=1` prints, one call per phase of a
//!    turn; not the lesson.
//! 3. `event_loop.rs`: step 3's loop (`call_soon`, `call_later`/`call_at`
//!    with `deadline_after`, the `Timer` heap, `wait_time`,
//!    `move_due_timers_to_ready`, `run_ready_callbacks`, the `RunGuard`
//!    that lets the loop run once at a time). **NEW**:
//!    `register`/`deregister`, `read_wait`/`write_wait`, the `IoWaiters`
//!    table, and `wait_for_io` in `run`: where step 3 slept, the loop now
//!    waits in `mio::Poll`. `run` goes on while a callback waits for a
//!    socket; `new` and `run` return `io::Result`; step 3's
//!    `naive_call_later` is gone.
//! 4. `apps/mod.rs` **NEW**: not the runtime: programs that run on it.
//!    - `apps/net.rs` **NEW**: `listen`, `Server` and its accept loop, and
//!      `read_now`/`write_now`, which turn `WouldBlock` into "not now".
//!    - `apps/echo.rs` **NEW**: the echo server: `Got: L` for each line `L`.
//!    - `apps/slow.rs` **NEW**: a server that answers after a timer, in
//!      the demo's protocol or in seed 002's own (`Protocol`).
//!    - `apps/client.rs` **NEW**: a client on the loop.
//!    - `apps/demo.rs` **NEW**: the demo `cargo run` shows, and the `serve`
//!      and `serve-slow` modes.
//!    - `apps/terminal.rs` **NEW**: `client` mode: a plain blocking client
//!      to type to the echo server from a terminal; not on the loop.
//! 5. `main.rs`: arguments (**NEW**: `serve [ADDR]`, `client [ADDR]`,
//!    `serve-slow [ADDR]`),
//!    errors, exit codes; its plumbing ends a demo quietly when stdout
//!    closes early (`| head`).
//!
//! `event_loop.rs`, `apps/net.rs` and `apps/client.rs` end with a fenced
//! "Plumbing" section a reader may skip.

pub mod apps;
mod event_loop;
mod trace;

pub use event_loop::{Callback, EventLoop};
