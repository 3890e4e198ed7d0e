//! step04's loop: one `mio::Poll` waits for sockets and timers together.
//!
//! Timing claims have tolerances that hold on a loaded machine: a wait may
//! end late (the OS decides when a woken thread runs), never early, and
//! waiting must not cost CPU.

use std::cell::{Cell, RefCell};
use std::net::{Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;
use step04::EventLoop;
use step04::apps::client::Client;
use step04::apps::echo;
use step04::apps::net::{self, Server};
use step04::apps::slow::{self, Delays};

const SEED: u64 = 7;
const REQUESTS: usize = 10;

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn any_port() -> SocketAddr {
    (Ipv4Addr::LOCALHOST, 0).into()
}

/// A loop with a slow server on it; returns the loop, the server, its
/// address.
fn loop_with_slow_server() -> (EventLoop, Server, SocketAddr) {
    let lp = EventLoop::new().expect("a poller");
    let listener = net::listen(any_port()).expect("a port");
    let server = slow::serve(&lp, listener, slow::DEMO, SEED).expect("a server");
    let addr = server.local_addr().expect("an address");
    (lp, server, addr)
}

/// Sends one request; `then` runs once the response has come (and the
/// server has closed the connection), with the response.
fn request(
    lp: &EventLoop,
    addr: SocketAddr,
    then: impl FnOnce(&EventLoop, Vec<u8>) + 'static,
) {
    let response = Rc::new(RefCell::new(Vec::new()));
    let received = response.clone();
    let client = Client::connect(
        lp,
        addr,
        move |line| received.borrow_mut().extend_from_slice(line),
        move |lp, outcome| {
            outcome.expect("the exchange succeeds");
            then(lp, response.take());
        },
    )
    .expect("a connection");
    client.send(lp, slow::REQUEST);
}

fn serially(
    lp: &EventLoop,
    server: Server,
    addr: SocketAddr,
    left: usize,
    responses: Rc<Cell<usize>>,
) {
    request(lp, addr, move |lp, response| {
        assert_eq!(response, slow::RESPONSE);
        responses.set(responses.get() + 1);
        if left > 1 {
            serially(lp, server, addr, left - 1, responses);
        } else {
            server.stop(lp).expect("stopped");
        }
    });
}

#[test]
fn ten_requests_at_once_take_about_the_longest_delay_not_the_sum() {
    let delays: Vec<Duration> =
        Delays::new(SEED, slow::DEMO).take(REQUESTS).collect();
    let sum: Duration = delays.iter().sum();
    let longest = *delays.iter().max().expect("ten delays");

    let (lp, server, addr) = loop_with_slow_server();
    let responses = Rc::new(Cell::new(0));
    serially(&lp, server, addr, REQUESTS, responses.clone());
    let start = Instant::now();
    lp.run().expect("the loop runs");
    let one_after_another = start.elapsed();
    assert_eq!(responses.get(), REQUESTS);

    let (lp, server, addr) = loop_with_slow_server();
    let responses = Rc::new(Cell::new(0));
    for _ in 0..REQUESTS {
        let (server, responses) = (server.clone(), responses.clone());
        request(&lp, addr, move |lp, response| {
            assert_eq!(response, slow::RESPONSE);
            responses.set(responses.get() + 1);
            if responses.get() == REQUESTS {
                server.stop(lp).expect("stopped");
            }
        });
    }
    let start = Instant::now();
    lp.run().expect("the loop runs");
    let all_at_once = start.elapsed();
    assert_eq!(responses.get(), REQUESTS);

    assert!(
        one_after_another >= sum,
        "{one_after_another:?} < sum {sum:?}"
    );
    assert!(
        all_at_once >= longest,
        "{all_at_once:?} < longest {longest:?}"
    );
    // The ten delays overlapped: far nearer the longest than the sum.
    let halfway = (longest + sum) / 2;
    assert!(
        all_at_once < halfway,
        "{all_at_once:?}: the waits did not overlap"
    );
}

#[test]
fn the_delays_are_the_same_for_the_same_seed_and_in_range() {
    let first: Vec<Duration> = Delays::new(SEED, slow::DEMO).take(100).collect();
    let again: Vec<Duration> = Delays::new(SEED, slow::DEMO).take(100).collect();
    let other: Vec<Duration> = Delays::new(SEED + 1, slow::DEMO).take(100).collect();
    assert_eq!(first, again);
    assert_ne!(first, other);
    assert!(first.iter().all(|delay| (ms(50)..=ms(200)).contains(delay)));
}

#[test]
fn a_timer_fires_on_time_while_a_socket_waits_and_waiting_costs_no_cpu() {
    let lp = EventLoop::new().expect("a poller");
    let server = echo::serve(&lp, net::listen(any_port()).expect("a port"))
        .expect("a server");
    let fired_after = Rc::new(Cell::new(None));
    let fired = fired_after.clone();
    let start = Instant::now();
    lp.call_later(ms(300), move |lp| {
        fired.set(Some(start.elapsed()));
        server.stop(lp).expect("stopped");
    });

    let cpu = ThreadTime::now();
    lp.run().expect("the loop runs");
    let cpu = cpu.elapsed();

    let fired_after = fired_after.get().expect("the timer fired");
    assert!(fired_after >= ms(300), "fired early: {fired_after:?}");
    assert!(
        fired_after < ms(1300),
        "fired far too late: {fired_after:?}"
    );
    // Blocked in the OS until the deadline: microseconds of CPU.
    assert!(cpu < ms(15), "the loop used {cpu:?} of CPU to wait");
}

#[test]
fn a_socket_wakes_the_loop_long_before_the_next_timer() {
    let lp = EventLoop::new().expect("a poller");
    let server = echo::serve(&lp, net::listen(any_port()).expect("a port"))
        .expect("a server");
    let addr = server.local_addr().expect("an address");
    let start = Instant::now();
    // The only timer is a second away; the reply must not wait for it.
    lp.call_later(ms(1000), move |lp| server.stop(lp).expect("stopped"));
    let replied_after = Rc::new(Cell::new(None));
    let replied = replied_after.clone();
    let client = Client::connect(
        &lp,
        addr,
        move |line| {
            assert_eq!(line, b"Got: ping\n");
            replied.set(Some(start.elapsed()));
        },
        |_, outcome| outcome.expect("a clean close"),
    )
    .expect("a connection");
    client.send(&lp, b"ping\n");
    client.close_writing(&lp);
    lp.run().expect("the loop runs");

    let replied_after = replied_after.get().expect("a reply");
    assert!(
        replied_after < ms(500),
        "the reply waited {replied_after:?}"
    );
    assert!(start.elapsed() >= ms(1000), "the timer ran early");
}

#[test]
fn a_stopped_server_leaves_the_loop_nothing_to_wait_for() {
    let lp = EventLoop::new().expect("a poller");
    let server = echo::serve(&lp, net::listen(any_port()).expect("a port"))
        .expect("a server");
    server.stop(&lp).expect("stopped");
    // With the listener's callback gone, `run` has no work and returns.
    let start = Instant::now();
    lp.run().expect("the loop runs");
    assert!(start.elapsed() < ms(500));
}

#[test]
fn tokens_are_never_reused() {
    let lp = EventLoop::new().expect("a poller");
    let mut first = net::listen(any_port()).expect("a port");
    let token = lp.register(&mut first).expect("registered");
    lp.deregister(&mut first, token).expect("deregistered");
    let mut second = net::listen(any_port()).expect("a port");
    let next = lp.register(&mut second).expect("registered");
    assert_ne!(token, next);
}

#[test]
fn a_failed_connect_is_reported_to_the_client() {
    // A port that was free a moment ago and has no listener now.
    let addr = std::net::TcpListener::bind(any_port())
        .and_then(|listener| listener.local_addr())
        .expect("a free port");
    let lp = EventLoop::new().expect("a poller");
    let outcome = Rc::new(RefCell::new(None));
    let seen = outcome.clone();
    let client = Client::connect(
        &lp,
        addr,
        |_| {},
        move |_, result| {
            *seen.borrow_mut() = Some(result.map_err(|err| err.kind()));
        },
    )
    .expect("connecting starts");
    client.send(&lp, b"anyone?\n");
    lp.run().expect("the loop runs");
    assert_eq!(
        outcome.take(),
        Some(Err(std::io::ErrorKind::ConnectionRefused))
    );
}
