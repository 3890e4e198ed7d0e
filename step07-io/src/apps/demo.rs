//! The demo `cargo run -p step07` shows: a socket pair says hello, an echo
//! server serves three clients at once, and ten requests go to a slow
//! server, one after another and then all at once: every one of them
//! straight-line async code. And `serve`, the echo server alone, for
//! `cargo run -p step07 -- serve [ADDR]`; and `serve_slow`, seed 002's slow
//! server alone, for `serve-slow [ADDR]`.

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, Shutdown, SocketAddr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use plumbing::say;

use crate::apps::echo;
use crate::apps::slow::{self, Delays};
use crate::event_loop::{EventLoop, join_all, spawn};
use crate::join::JoinError;
use crate::net::{LocalStream, TcpListener, TcpStream, socket_pair};
use crate::sleep::{sleep_until, yield_now};

/// The demo: four scenes, each on a loop of its own.
pub fn run() -> io::Result<()> {
    println!("== Hello, world! through a socket pair ==");
    run_scene(hello_through_a_socket_pair())?;

    println!();
    println!("== An echo server and three clients at once ==");
    run_scene(echo_with_three_clients())?;

    let delays: Vec<Duration> =
        Delays::new(SEED, slow::DEMO).take(REQUESTS).collect();
    println!();
    println!("== Ten requests to a slow server, one after another ==");
    let took = run_scene(with_slow_server(one_after_another))?;
    let sum: Duration = delays.iter().sum();
    println!(
        "took {:.2} s: about the sum of the server's delays ({:.2} s)",
        took.as_secs_f64(),
        sum.as_secs_f64()
    );

    println!();
    println!("== The same ten requests, all at once ==");
    let took = run_scene(with_slow_server(all_at_once))?;
    let longest = delays.iter().max().expect("ten delays");
    println!(
        "took {:.2} s: about the longest delay alone ({:.2} s)",
        took.as_secs_f64(),
        longest.as_secs_f64()
    );
    Ok(())
}

/// Runs `scene` on a loop of its own and returns what it returned.
fn run_scene<T: 'static>(
    scene: impl Future<Output = io::Result<T>> + 'static,
) -> io::Result<T> {
    Rc::new(EventLoop::new()?).block_on(scene)?
}

// ANCHOR: hello
/// Seed 004's "Hello, world!" through a socket pair. The reader asks first
/// and finds nothing: it waits, without blocking the writer, until the
/// loop's poll says its socket is readable.
async fn hello_through_a_socket_pair() -> io::Result<()> {
    let (mut writer, reader) = socket_pair()?;
    let receiving = spawn(read_hello(reader));
    yield_now().await; // the reader's first poll comes before the write
    println!("writer: sending 13 bytes");
    writer.write_all(b"Hello, world!").await?;
    joined(receiving.await)
}

async fn read_hello(mut reader: LocalStream) -> io::Result<()> {
    println!("reader: reading; nothing has been sent yet");
    let mut buf = [0; 1024];
    let n = reader.read(&mut buf).await?;
    println!("reader: {}", String::from_utf8_lossy(&buf[..n]));
    Ok(())
}
// ANCHOR_END: hello

// ANCHOR: echo_scene
/// The echo server in a background task, and three clients as tasks beside
/// it; each client waits for its replies while the others carry on.
async fn echo_with_three_clients() -> io::Result<()> {
    let listener = TcpListener::bind(any_port())?;
    let addr = listener.local_addr()?;
    spawn(echo::serve(listener)); // dropped when this scene returns
    let start = Instant::now();
    let clients =
        SCRIPTS.map(|(name, script)| run_script(name, script, addr, start));
    for outcome in join_all(clients).await {
        joined(outcome)?;
    }
    Ok(())
}

/// Connects, then takes each step of `script` at its time.
async fn run_script(
    name: &'static str,
    script: &'static [(f64, Step)],
    addr: SocketAddr,
    start: Instant,
) -> io::Result<()> {
    let mut client = Client {
        name,
        stream: TcpStream::connect(addr).await?,
        received: Vec::new(),
    };
    for &(at, step) in script {
        sleep_until(start + Duration::from_secs_f64(at)).await;
        client.take(step).await?;
    }
    Ok(())
}
// ANCHOR_END: echo_scene

// ANCHOR: scripts
/// What the clients do, and when (seconds after the start).
///
/// The lines must print in the same order on every run, even on a busy
/// machine where the loop's turns come late. Within one client the order is
/// fixed by the code: each step waits for its replies before the next one
/// starts, and steps given the same time run in the order written. Between
/// clients only time orders the lines, and a reply takes two turns (the
/// server reads and answers, then the client reads), so each client acts
/// 0.25 s after the one before it: time for its replies, even when the
/// loop's turns come late.
const SCRIPTS: [(&str, &[(f64, Step)]); 3] = [
    (
        "ada",
        &[
            (0.25, Step::Send("hello\n")),
            (1.25, Step::Send("bye\n")),
            (1.25, Step::CloseWriting),
        ],
    ),
    (
        "bob",
        &[
            (0.5, Step::Send("split in ")),
            (0.75, Step::Send("two pieces\n")),
            (1.5, Step::CloseWriting),
        ],
    ),
    (
        "cy",
        &[
            (1.0, Step::Send("one\ntwo\nthree\n")),
            (1.0, Step::SendLongLine(2000)),
            (1.75, Step::CloseWriting),
        ],
    ),
];

#[derive(Clone, Copy)]
enum Step {
    /// Sends the text, then waits for a reply to each line it ends.
    Send(&'static str),
    /// Sends a line this many bytes long, then waits for the reply.
    SendLongLine(usize),
    /// Closes the sending side, then reads until the server closes too.
    CloseWriting,
}
// ANCHOR_END: scripts

/// One scripted client: its connection, and bytes received that do not
/// make a whole line yet.
struct Client {
    name: &'static str,
    stream: TcpStream,
    received: Vec<u8>,
}

impl Client {
    async fn take(&mut self, step: Step) -> io::Result<()> {
        let name = self.name;
        match step {
            Step::Send(text) => {
                println!("{name} sends {text:?}");
                self.stream.write_all(text.as_bytes()).await?;
                self.print_replies(text.matches('\n').count()).await
            }
            Step::SendLongLine(length) => {
                println!("{name} sends a line of {length} bytes");
                let mut line = vec![b'x'; length];
                line.push(b'\n');
                self.stream.write_all(&line).await?;
                self.print_replies(1).await
            }
            Step::CloseWriting => {
                println!("{name} closes its sending side");
                self.stream.shutdown(Shutdown::Write)?;
                let mut rest = Vec::new();
                self.stream.read_to_end(&mut rest).await?;
                println!("{name}: the server closed the connection");
                Ok(())
            }
        }
    }

    /// Reads until `count` more lines have come, and prints each.
    async fn print_replies(&mut self, count: usize) -> io::Result<()> {
        let mut chunk = [0; 1024];
        for _ in 0..count {
            while !self.received.contains(&b'\n') {
                match self.stream.read(&mut chunk).await? {
                    0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                    n => self.received.extend_from_slice(&chunk[..n]),
                }
            }
            let end = self
                .received
                .iter()
                .position(|&b| b == b'\n')
                .expect("seen");
            let line: Vec<u8> = self.received.drain(..=end).collect();
            println!("{} gets {:?}", self.name, String::from_utf8_lossy(&line));
        }
        Ok(())
    }
}

/// The slow server's seed: every run meets the same delays.
const SEED: u64 = 2024;
const REQUESTS: usize = 10;

/// Starts a slow server in a background task, runs the requests `send`
/// makes to it, and returns how long they took.
async fn with_slow_server<F>(send: fn(SocketAddr) -> F) -> io::Result<Duration>
where
    F: Future<Output = io::Result<()>>,
{
    let listener = TcpListener::bind(any_port())?;
    let addr = listener.local_addr()?;
    spawn(slow::serve(listener, slow::DEMO, SEED));
    let start = Instant::now();
    send(addr).await?;
    Ok(start.elapsed())
}

// ANCHOR: one_after_another
/// Each request starts when the one before it has its response.
async fn one_after_another(addr: SocketAddr) -> io::Result<()> {
    for number in 1..=REQUESTS {
        let start = Instant::now();
        let response = request(addr).await?;
        let took = start.elapsed().as_secs_f64();
        println!("request {number}: {response:?} after {took:.2} s");
    }
    Ok(())
}
// ANCHOR_END: one_after_another

// ANCHOR: all_at_once
/// All ten requests go out at once, each in a task of its own; the loop
/// waits for every response together.
async fn all_at_once(addr: SocketAddr) -> io::Result<()> {
    let responses = join_all((0..REQUESTS).map(|_| request(addr))).await;
    let mut answered = 0;
    for response in responses {
        let response = joined(response)?;
        answered += usize::from(response.as_bytes() == slow::RESPONSE);
    }
    println!("{answered} of {REQUESTS} requests got {:?}", "response\n");
    Ok(())
}
// ANCHOR_END: all_at_once

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

/// What a task returned, or its panic as an error: one `io::Result`.
fn joined<T>(outcome: Result<io::Result<T>, JoinError>) -> io::Result<T> {
    outcome.unwrap_or_else(|panicked| Err(io::Error::other(panicked.to_string())))
}

/// Loopback, on a port the OS picks.
fn any_port() -> SocketAddr {
    (Ipv4Addr::LOCALHOST, 0).into()
}
