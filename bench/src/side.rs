//! A side: one runtime's version of every workload.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use crate::{EchoPlan, Sample};

/// One runtime's version of every workload, as plain functions, so the
/// harness runs every runtime the same way and adding a runtime means
/// writing one more of these.
///
/// Each function builds a fresh current-thread runtime, so nothing carries
/// over from one run to the next, and times only the workload inside it
/// (with a [`Stopwatch`](crate::Stopwatch) started in the runtime), not the
/// building of the runtime.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    /// The column heading: `tokio`, `ours`.
    pub name: &'static str,
    /// Spawns `tasks` empty tasks, then joins each one.
    pub spawn_join: fn(tasks: usize) -> Sample,
    /// Two tasks that each yield `switches / 2` times, so control passes
    /// from one to the other `switches` times.
    pub yield_switch: fn(switches: usize) -> Sample,
    /// One task per delay, each sleeping that long. With `cancel_half`, every
    /// other task is cancelled once all of them are asleep; every task is
    /// joined either way.
    pub sleeps: fn(delays: &[Duration], cancel_half: bool) -> Sample,
    /// One task per delay, each sleeping that long from its first poll (the
    /// `sleep` is made inside the task, not at spawn), all joined in spawn
    /// order: what a program that spawns a task per sleep does. In `sleeps`
    /// each deadline is set at spawn, so when spawning takes longer than
    /// the delays, a sleep finds its deadline passed at its first poll and
    /// sets no timer at all (`bench/RESULTS.md`, the fourth round).
    pub sleeps_from_first_poll: fn(delays: &[Duration]) -> Sample,
    /// One task per delay, each sleeping that long from when it first runs;
    /// returns how late each one woke against that deadline, in
    /// nanoseconds (see [`lateness_ns`](crate::lateness_ns)). Deadlines are
    /// taken in the task, not at spawn, so the time it takes to spawn them
    /// all does not count as lateness.
    pub lateness: fn(delays: &[Duration]) -> Vec<i64>,
    /// One task sleeping for `wait`, and nothing else to do.
    pub idle: fn(wait: Duration) -> Sample,
    /// An echo server and its clients in one runtime; times the round trips
    /// (after every client has connected).
    pub echo: fn(plan: EchoPlan) -> io::Result<Sample>,
    /// The same clients against a server somewhere else.
    pub echo_clients: fn(server: SocketAddr, plan: EchoPlan) -> io::Result<Sample>,
    /// The echo server alone, on `listener`, until the process ends.
    pub serve_echo: fn(listener: TcpListener) -> io::Result<()>,
    /// One connection sending `bytes` through an echo server in the same
    /// runtime while it reads them back.
    pub stream: fn(bytes: usize) -> io::Result<Sample>,
}

/// How many connections may wait to be accepted. std's default (128) is less
/// than the 1,000 connections of the largest echo workload.
const BACKLOG: i32 = 1024;

/// A listening socket on 127.0.0.1, at a port the OS picks, for a side's echo
/// server. Benchmarks never talk to anything but loopback.
pub fn listen_loopback() -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, 0)).into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}
