//! The demo `cargo run -p step04` shows: an echo server and three clients
//! beside two timers, then ten requests to a slow server, one after another
//! and all at once. And `serve`, the echo server alone, for `serve [ADDR]`;
//! and `serve_slow`, seed 002's slow server alone, for `serve-slow [ADDR]`.

use std::cell::{Cell, RefCell};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use plumbing::say;

use crate::apps::client::Client;
use crate::apps::echo;
use crate::apps::net::{self, Server};
use crate::apps::slow::{self, Delays};
use crate::event_loop::EventLoop;

/// The whole demo: its three parts, one after another.
pub fn run() -> io::Result<()> {
    println!("== An echo server and three clients, beside countdown and countup ==");
    let lp = EventLoop::new()?;
    echo_beside_timers(&lp)?;
    lp.run()?;

    let delays: Vec<Duration> =
        Delays::new(SEED, slow::DEMO).take(REQUESTS).collect();
    println!();
    println!("== Ten requests to a slow server, one after another ==");
    let took = with_slow_server(one_after_another)?;
    let sum: Duration = delays.iter().sum();
    println!(
        "took {:.2} s: about the sum of the server's delays ({:.2} s)",
        took.as_secs_f64(),
        sum.as_secs_f64()
    );

    println!();
    println!("== The same ten requests, all at once ==");
    let took = with_slow_server(all_at_once)?;
    let longest = delays.iter().max().expect("ten delays");
    println!(
        "took {:.2} s: about the longest delay alone ({:.2} s)",
        took.as_secs_f64(),
        longest.as_secs_f64()
    );
    Ok(())
}

// ANCHOR: echo_scene
/// The seeds' scene: the echo server, its clients and two timers share one
/// loop, and none of them waits for the others.
fn echo_beside_timers(lp: &EventLoop) -> io::Result<()> {
    let server = echo::serve(lp, net::listen(any_port())?)?;
    let addr = server.local_addr()?;
    lp.call_soon(|lp| countdown(lp, 3));
    lp.call_soon(|lp| countup(lp, 0, 4));

    let start = Instant::now();
    let clients_left = Rc::new(Cell::new(SCRIPTS.len()));
    for (name, script) in SCRIPTS {
        let (server, clients_left) = (server.clone(), clients_left.clone());
        let client = Client::connect(
            lp,
            addr,
            move |line| println!("{name} gets {:?}", String::from_utf8_lossy(line)),
            move |lp, outcome| {
                match outcome {
                    Ok(()) => println!("{name}: the server closed the connection"),
                    Err(err) => println!("{name}: {err}"),
                }
                clients_left.set(clients_left.get() - 1);
                if clients_left.get() == 0 {
                    println!("no clients left: the server stops listening");
                    let _ = server.stop(lp);
                }
            },
        )?;
        for &(at, step) in script {
            let client = client.clone();
            lp.call_at(start + secs(at), move |lp| step.run(lp, name, &client));
        }
    }
    Ok(())
}
// ANCHOR_END: echo_scene

// ANCHOR: countdown
fn countdown(lp: &EventLoop, n: u32) {
    println!("Down {n}");
    if n > 1 {
        lp.call_later(secs(1.0), move |lp| countdown(lp, n - 1));
    }
}

fn countup(lp: &EventLoop, i: u32, stop: u32) {
    println!("Up {i}");
    if i + 1 < stop {
        lp.call_later(secs(0.5), move |lp| countup(lp, i + 1, stop));
    }
}
// ANCHOR_END: countdown

// ANCHOR: scripts
/// What the clients do, and when (seconds after the start).
///
/// The lines must print in the same order on every run, even on a busy
/// machine where the loop's turns come late. A reply takes two turns (the
/// server reads and answers, then the client reads), and a late turn runs
/// the sockets' callbacks before the timers that came due meanwhile; the
/// counters' lines also drift later, as each timer is set from the moment
/// the one before it ran. So nothing is left to a small margin: the
/// counters print on the half seconds, and each client acts on a quarter
/// second in between, at least 0.2 s from any other line, with time for its
/// replies before the next one acts. bob's two pieces are 0.1 s apart, with
/// no reply between them. Steps given the same time run in the order
/// written, and timers due together fire in the order they were scheduled.
const SCRIPTS: [(&str, &[(f64, Step)]); 3] = [
    (
        "ada",
        &[
            (0.25, Step::Send("hello\n")),
            (2.25, Step::Send("bye\n")),
            (2.25, Step::CloseWriting),
        ],
    ),
    (
        "bob",
        &[
            (0.7, Step::Send("split in ")),
            (0.8, Step::Send("two pieces\n")),
            (2.5, Step::CloseWriting),
        ],
    ),
    (
        "cy",
        &[
            (1.25, Step::Send("one\ntwo\nthree\n")),
            (1.75, Step::SendLongLine(2000)),
            (2.75, Step::CloseWriting),
        ],
    ),
];

#[derive(Clone, Copy)]
enum Step {
    Send(&'static str),
    SendLongLine(usize),
    CloseWriting,
}

impl Step {
    fn run(self, lp: &EventLoop, name: &str, client: &Client) {
        match self {
            Step::Send(text) => {
                println!("{name} sends {text:?}");
                client.send(lp, text.as_bytes());
            }
            Step::SendLongLine(length) => {
                println!("{name} sends a line of {length} bytes");
                let mut line = vec![b'x'; length];
                line.push(b'\n');
                client.send(lp, &line);
            }
            Step::CloseWriting => {
                println!("{name} closes its sending side");
                client.close_writing(lp);
            }
        }
    }
}
// ANCHOR_END: scripts

/// The slow server's seed: every run meets the same delays.
const SEED: u64 = 2024;
const REQUESTS: usize = 10;

/// Runs a fresh loop with a slow server and the requests `send` makes;
/// returns how long they took.
fn with_slow_server(
    send: fn(&EventLoop, &Server, SocketAddr),
) -> io::Result<Duration> {
    let lp = EventLoop::new()?;
    let server = slow::serve(&lp, net::listen(any_port())?, slow::DEMO, SEED)?;
    let addr = server.local_addr()?;
    let start = Instant::now();
    send(&lp, &server, addr);
    lp.run()?;
    Ok(start.elapsed())
}

// ANCHOR: one_after_another
/// Each request starts when the one before it has its response.
fn one_after_another(lp: &EventLoop, server: &Server, addr: SocketAddr) {
    fn send_from(lp: &EventLoop, server: Server, addr: SocketAddr, number: usize) {
        request(lp, addr, move |lp, response, took| {
            println!(
                "request {number}: {response:?} after {:.2} s",
                took.as_secs_f64()
            );
            if number < REQUESTS {
                send_from(lp, server.clone(), addr, number + 1);
            } else {
                let _ = server.stop(lp);
            }
        });
    }
    send_from(lp, server.clone(), addr, 1);
}
// ANCHOR_END: one_after_another

// ANCHOR: all_at_once
/// All ten requests go out at once; the loop waits for every response
/// together.
fn all_at_once(lp: &EventLoop, server: &Server, addr: SocketAddr) {
    let left = Rc::new(Cell::new(REQUESTS));
    let answered = Rc::new(Cell::new(0));
    for _ in 0..REQUESTS {
        let (server, left, answered) =
            (server.clone(), left.clone(), answered.clone());
        request(lp, addr, move |lp, response, _took| {
            if response == "response\n" {
                answered.set(answered.get() + 1);
            }
            left.set(left.get() - 1);
            if left.get() == 0 {
                println!("{} of {REQUESTS} got \"response\\n\"", answered.get());
                let _ = server.stop(lp);
            }
        });
    }
}
// ANCHOR_END: all_at_once

/// Sends one request on a new connection; `on_response` gets the response
/// (or what went wrong) and how long it took.
fn request(
    lp: &EventLoop,
    addr: SocketAddr,
    on_response: impl Fn(&EventLoop, String, Duration) + 'static,
) {
    let start = Instant::now();
    let on_response = Rc::new(on_response);
    let response = Rc::new(RefCell::new(Vec::new()));
    let (received, respond) = (response.clone(), on_response.clone());
    let client = Client::connect(
        lp,
        addr,
        move |line| received.borrow_mut().extend_from_slice(line),
        move |lp, outcome| {
            let response = match outcome {
                Ok(()) => String::from_utf8_lossy(&response.borrow()).into_owned(),
                Err(err) => format!("failed: {err}"),
            };
            respond(lp, response, start.elapsed());
        },
    );
    match client {
        Ok(client) => client.send(lp, slow::REQUEST),
        Err(err) => on_response(lp, format!("failed: {err}"), start.elapsed()),
    }
}

// ANCHOR: serve
/// `serve [ADDR]`: the echo server alone, until the process is stopped, on
/// the first of `addrs` (what `ADDR` names) it can listen on.
pub fn serve(addrs: &[SocketAddr]) -> Result<(), String> {
    let lp = EventLoop::new().map_err(|err| err.to_string())?;
    let listener = first_that_works(addrs, net::listen)?;
    let server = echo::serve(&lp, listener).map_err(|err| err.to_string())?;
    let addr = server.local_addr().map_err(|err| err.to_string())?;
    say!("listening on {addr}");
    say!("{}", try_it(addr));
    lp.run().map_err(|err| err.to_string())
}
// ANCHOR_END: serve

// ANCHOR: serve_slow
/// `serve-slow [ADDR]`: the slow server alone, speaking seed 002's own
/// protocol (`slow::SEED_002`), so that the seed's Python clients run
/// against it unchanged.
pub fn serve_slow(addrs: &[SocketAddr]) -> Result<(), String> {
    let lp = EventLoop::new().map_err(|err| err.to_string())?;
    let listener = first_that_works(addrs, net::listen)?;
    let server = slow::serve(&lp, listener, slow::SEED_002, SEED)
        .map_err(|err| err.to_string())?;
    let addr = server.local_addr().map_err(|err| err.to_string())?;
    say!("listening on {addr}");
    say!("{}", try_slow(addr));
    lp.run().map_err(|err| err.to_string())
}
// ANCHOR_END: serve_slow

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

fn secs(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}
