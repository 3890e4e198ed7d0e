//! The demo `cargo run -p step08` shows: a suspended task is cancelled and
//! cleans up, a slow request is abandoned by `timeout`, and an echo server
//! is shut down with its connections. And `serve`, the echo server alone,
//! for `cargo run -p step08 -- serve [ADDR]`; and `serve_slow`, seed 002's
//! slow server alone, for `serve-slow [ADDR]`.

use std::fmt::Debug;
use std::future::{self, Future};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use plumbing::say;

use crate::apps::{echo, slow};
use crate::event_loop::{EventLoop, spawn};
use crate::join::JoinError;
use crate::net::{TcpListener, TcpStream};
use crate::sleep::{sleep, yield_now};
use crate::timeout::timeout;

/// The demo: three scenes, each on a loop of its own.
pub fn run() -> io::Result<()> {
    println!("== Cancel a suspended task ==");
    run_scene(|_| cancel_a_suspended_task())?;

    println!();
    println!("== A slow request abandoned by timeout ==");
    run_scene(abandon_a_slow_request)?;

    println!();
    println!("== The echo server shut down, its connections cancelled ==");
    run_scene(shut_down_the_echo_server)
}

/// Runs `scene` on a loop of its own, handing it the loop so it can count
/// the loop's sockets, and returns what it returned.
fn run_scene<T: 'static, F>(scene: impl FnOnce(Rc<EventLoop>) -> F) -> io::Result<T>
where
    F: Future<Output = io::Result<T>> + 'static,
{
    let lp = Rc::new(EventLoop::new()?);
    lp.block_on(scene(Rc::clone(&lp)))?
}

// ANCHOR: cancel_suspended
/// Seed 004's cancellation: a child that waits for ever is cancelled, and
/// its cleanup says hello. The cleanup is a destructor: the loop drops the
/// child's future, and all the future held is dropped with it.
async fn cancel_a_suspended_task() -> io::Result<()> {
    let child = spawn(hello("world"));
    yield_now().await; // the child runs, and suspends
    println!("parent: cancel() -> {}", child.cancel());
    println!("parent: cancel() again -> {}", child.cancel());
    print_join("parent", child.await);

    let finished = spawn(async { "done" });
    yield_now().await; // this one runs to its end
    println!("parent: cancel() a finished task -> {}", finished.cancel());
    print_join("parent", finished.await);
    Ok(())
}

async fn hello(name: &'static str) {
    let _cleanup = SayHello(name);
    println!("child: suspended, waiting for ever");
    future::pending::<()>().await;
}

/// Seed 004's `except CancelledError: print('Hello, ...')`, in Rust: it
/// runs when the future that holds it is dropped.
struct SayHello(&'static str);

impl Drop for SayHello {
    fn drop(&mut self) {
        println!("Hello, {}!", self.0);
    }
}

fn print_join(joiner: &str, outcome: Result<impl Debug, JoinError>) {
    match outcome {
        Ok(value) => println!("{joiner}: joining gives {value:?}"),
        Err(err) => println!("{joiner}: joining gives an error: {err}"),
    }
}
// ANCHOR_END: cancel_suspended

/// The slow server's seed: every run meets the same delays, all between
/// 50 ms and 200 ms.
const SEED: u64 = 2024;

// ANCHOR: abandon_request
/// Two requests to the slow server under `timeout`: one with time to spare,
/// one with less time than the server ever takes. The second is dropped at
/// its deadline, and its connection with it.
async fn abandon_a_slow_request(lp: Rc<EventLoop>) -> io::Result<()> {
    let listener = TcpListener::bind(any_port())?;
    let addr = listener.local_addr()?;
    spawn(slow::serve(listener, slow::DEMO, SEED));
    for (label, limit) in [("1.0 s", 1000), ("30 ms", 30)] {
        let start = Instant::now();
        let outcome = timeout(Duration::from_millis(limit), request(addr)).await;
        let took = start.elapsed().as_secs_f64();
        let said = match outcome {
            Ok(response) => format!("{:?}", response?),
            Err(timed_out) => timed_out.to_string(),
        };
        println!("given {label}: {said} after {took:.2} s");
    }
    // The server's side ends its delay (0.2 s at most) after it read the
    // request, a turn or two after the request went out. Waiting 0.5 s
    // leaves 0.3 s to spare for turns that come late on a busy machine.
    sleep(Duration::from_millis(500)).await;
    println!(
        "0.5 s later, sockets on the loop: {} (the listener): no connection is left",
        lp.registered_sockets()
    );
    Ok(())
}
// ANCHOR_END: abandon_request

const CLIENTS: [&str; 3] = ["ada", "bob", "cy"];

// ANCHOR: shut_down
/// An echo server with three clients, shut down by cancelling its task:
/// its listener closes, its connections' tasks are cancelled, and every
/// client sees the server close its connection.
async fn shut_down_the_echo_server(lp: Rc<EventLoop>) -> io::Result<()> {
    let listener = TcpListener::bind(any_port())?;
    let addr = listener.local_addr()?;
    let server = spawn(echo::serve(listener));
    let mut clients = Vec::new();
    for name in CLIENTS {
        let mut stream = TcpStream::connect(addr).await?;
        stream
            .write_all(format!("{name} was here\n").as_bytes())
            .await?;
        println!("{name} gets {:?}", read_line(&mut stream).await?);
        clients.push(stream);
    }
    println!(
        "sockets on the loop: {} (the listener, 3 connections, 3 clients)",
        lp.registered_sockets()
    );

    println!("server: cancel() -> {}", server.cancel());
    for (name, stream) in CLIENTS.iter().zip(&mut clients) {
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await?;
        println!("{name}: the server closed the connection");
    }
    println!(
        "sockets on the loop: {} (the clients' own)",
        lp.registered_sockets()
    );
    print_join("main", server.await);
    drop(clients);
    println!(
        "clients gone, sockets on the loop: {}",
        lp.registered_sockets()
    );
    Ok(())
}
// ANCHOR_END: shut_down

/// Reads one line (the server's reply), however many reads it takes.
async fn read_line(stream: &mut TcpStream) -> io::Result<String> {
    let mut line = Vec::new();
    let mut byte = [0; 1];
    while !line.ends_with(b"\n") {
        match stream.read(&mut byte).await? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            _ => line.push(byte[0]),
        }
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
}

// ANCHOR: request
/// One request on a new connection, as seed 002's dio makes it: connect,
/// write, read the response, which ends when the server closes.
async fn request(addr: SocketAddr) -> io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(slow::REQUEST).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    Ok(String::from_utf8_lossy(&response).into_owned())
}
// ANCHOR_END: request

// ANCHOR: serve
/// `serve [ADDR]`: the echo server alone, until the process is stopped, on
/// the first of `addrs` (what `ADDR` names) it can listen on.
pub fn serve(addrs: &[SocketAddr]) -> Result<(), String> {
    serve_alone(addrs, try_it, echo::serve)
}
// ANCHOR_END: serve

// ANCHOR: serve_slow
/// `serve-slow [ADDR]`: the slow server alone, speaking seed 002's own
/// protocol (`slow::SEED_002`), so that the seed's Python clients run
/// against it unchanged.
pub fn serve_slow(addrs: &[SocketAddr]) -> Result<(), String> {
    serve_alone(addrs, try_slow, |listener| {
        slow::serve(listener, slow::SEED_002, SEED)
    })
}
// ANCHOR_END: serve_slow

/// Runs `server` on the first of `addrs` it can listen on, after saying
/// where and how to `try` it, until the process is stopped.
fn serve_alone<F: Future<Output = ()> + 'static>(
    addrs: &[SocketAddr],
    try_: fn(SocketAddr) -> String,
    server: impl FnOnce(TcpListener) -> F + 'static,
) -> Result<(), String> {
    let lp = Rc::new(EventLoop::new().map_err(|err| err.to_string())?);
    let addrs = addrs.to_vec();
    lp.block_on(async move {
        let listener = first_that_works(&addrs, TcpListener::bind)?;
        let addr = listener.local_addr().map_err(|err| err.to_string())?;
        say!("listening on {addr}");
        say!("{}", try_(addr));
        server(listener).await;
        Ok(())
    })
    .map_err(|err| err.to_string())?
}

/// Listens on the first of `addrs` where `listen` works, as std's
/// `TcpListener::bind` does with a host name; if none does, says why the
/// last one failed.
fn first_that_works<L>(
    addrs: &[SocketAddr],
    listen: impl Fn(SocketAddr) -> io::Result<L>,
) -> Result<L, String> {
    let mut problem = String::from("no address to listen on");
    for &addr in addrs {
        match listen(addr) {
            Ok(listener) => return Ok(listener),
            Err(err) => problem = cannot_listen(addr, &err),
        }
    }
    Err(problem)
}

/// How to talk to the server: the workshop's own client, or netcat.
fn try_it(addr: SocketAddr) -> String {
    let package = env!("CARGO_PKG_NAME");
    format!(
        "try: cargo run -p {package} -- client {addr} (or nc -N {} {}); \
         Ctrl-C stops the server",
        addr.ip(),
        addr.port()
    )
}

/// How to ask the slow server: seed 002's clients, or netcat.
fn try_slow(addr: SocketAddr) -> String {
    format!(
        "try: seed 002's Python clients (they ask 127.0.0.1:8080), or \
         printf request | nc -N {} {}; Ctrl-C stops the server",
        addr.ip(),
        addr.port()
    )
}

fn cannot_listen(addr: SocketAddr, err: &io::Error) -> String {
    let why = match err.kind() {
        io::ErrorKind::AddrInUse => "the address is already in use".to_string(),
        _ => err.to_string(),
    };
    format!("cannot listen on {addr}: {why}")
}

/// Loopback, on a port the OS picks.
fn any_port() -> SocketAddr {
    (Ipv4Addr::LOCALHOST, 0).into()
}
