//! step04's loop: one `mio::Poll` waits for sockets and timers together.
//!
//! Timing claims have tolerances that hold on a loaded machine: a wait may
//! end late (the OS decides when a woken thread runs), never early, and
//! waiting must not cost CPU. Where a mistake shows in whether a callback
//! ran and what it found, the test checks that, not the clock.
//!
//! These tests are also the build-it track's checks, so each failure says
//! what chapter 4 expected and what happened instead. Each runs its loop
//! under `within`, so a loop that waits for ever fails instead of hanging.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::panic::{self, AssertUnwindSafe};
use std::rc::{Rc, Weak};
use std::thread;
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;
use mio::Token;
use mio::net::TcpStream;
use step04::EventLoop;
use step04::apps::client::Client;
use step04::apps::echo;
use step04::apps::net::{self, Server, read_now};
use step04::apps::slow::{self, Delays};
use workshop_tests::{DropFlag, HANG_LIMIT, within};

const SEED: u64 = 7;
const REQUESTS: usize = 10;

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn any_port() -> SocketAddr {
    (Ipv4Addr::LOCALHOST, 0).into()
}

/// A duration as a participant reads it: `0.70 s`, `3 ms`.
fn human(duration: Duration) -> String {
    if duration >= ms(100) {
        format!("{:.2} s", duration.as_secs_f64())
    } else {
        format!("{} ms", duration.as_millis())
    }
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

    let one_after_another = within(HANG_LIMIT, || {
        let (lp, server, addr) = loop_with_slow_server();
        let responses = Rc::new(Cell::new(0));
        serially(&lp, server, addr, REQUESTS, responses.clone());
        let start = Instant::now();
        lp.run().expect("the loop runs");
        assert_eq!(responses.get(), REQUESTS, "responses to serial requests");
        start.elapsed()
    });

    let all_at_once = within(HANG_LIMIT, || {
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
        assert_eq!(responses.get(), REQUESTS, "responses to requests at once");
        start.elapsed()
    });

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
    let (fired_after, cpu) = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let server = echo::serve(&lp, net::listen(any_port()).expect("a port"))
            .expect("a server");
        let addr = server.local_addr().expect("an address");
        let fired_after = Rc::new(Cell::new(None));
        let fired = fired_after.clone();
        let start = Instant::now();
        lp.call_later(ms(300), move |lp| {
            fired.set(Some(start.elapsed()));
            server.stop(lp).expect("stopped");
        });
        // A loop that waits for its socket past the deadline would wait for
        // ever; this client wakes it late, so the test can say so.
        wake_late(addr, RESCUE);

        let cpu = ThreadTime::now();
        lp.run().expect("the loop runs");
        (fired_after.get(), cpu.elapsed())
    });

    let fired_after = fired_after.expect("the timer fired");
    assert!(
        fired_after >= ms(300),
        "a 0.3 s timer fired {} early",
        human(ms(300).saturating_sub(fired_after))
    );
    assert!(
        fired_after < ms(1300),
        "a timer due at 0.30 s, beside a server waiting for clients, fired \
         after {}: while sockets wait, the loop must wait no longer than the \
         next deadline (wait_for_io hands `poll` its timeout)",
        human(fired_after)
    );
    // Blocked in the OS until the deadline: microseconds of CPU.
    assert!(
        cpu < ms(15),
        "the loop used {} of CPU to wait 0.3 s: it should block in `poll` \
         until a socket is ready or the deadline comes, not poll in a loop",
        human(cpu)
    );
}

#[test]
fn a_socket_wakes_the_loop_long_before_the_next_timer() {
    let (replied_after, total) = within(HANG_LIMIT, || {
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
        (replied_after.get(), start.elapsed())
    });

    let replied_after = replied_after.expect(
        "the echo server never replied: a socket's readiness must wake the \
         callback waiting on it (read_wait stores it, wait_for_io moves it to \
         the ready queue)",
    );
    assert!(
        replied_after < ms(500),
        "the reply came after {}, with the only timer due at 1 s: a ready \
         socket must wake the loop at once, not wait for the next deadline",
        human(replied_after)
    );
    assert!(total >= ms(1000), "the timer ran early");
}

#[test]
fn a_stopped_server_leaves_the_loop_nothing_to_wait_for() {
    let took = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let server = echo::serve(&lp, net::listen(any_port()).expect("a port"))
            .expect("a server");
        server.stop(&lp).expect("stopped");
        // With the listener's callback gone, `run` has no work and returns.
        let start = Instant::now();
        lp.run().expect("the loop runs");
        start.elapsed()
    });
    assert!(
        took < ms(500),
        "with nothing left to wait for, `run` took {} to return",
        human(took)
    );
}

#[test]
fn tokens_are_never_reused() {
    let lp = EventLoop::new().expect("a poller");
    let mut first = net::listen(any_port()).expect("a port");
    let token = lp.register(&mut first).expect("registered");
    let mut other = net::listen(any_port()).expect("a port");
    let other_token = lp.register(&mut other).expect("registered");
    assert_ne!(
        token, other_token,
        "two sockets registered together got the same token: each socket \
         needs a token of its own, or its events wake the other's callbacks"
    );
    lp.deregister(&mut first, token).expect("deregistered");
    let mut second = net::listen(any_port()).expect("a port");
    let next = lp.register(&mut second).expect("registered");
    assert!(
        next != token && next != other_token,
        "`register` gave out {next:?} again after a socket was deregistered: \
         tokens are never reused, so an event still in flight for a closed \
         socket can never be taken for one opened later"
    );
    // The newest socket's token is not given out again either: the next
    // token is not worked out from the tokens in use.
    lp.deregister(&mut second, next).expect("deregistered");
    let mut third = net::listen(any_port()).expect("a port");
    let after = lp.register(&mut third).expect("registered");
    assert!(
        ![token, other_token, next].contains(&after),
        "`register` gave out {after:?} again after the newest socket was \
         deregistered: a token comes from a count that only goes up, not from \
         the tokens in use"
    );
}

#[test]
fn waiting_on_a_deregistered_token_is_refused_not_kept() {
    let lp = EventLoop::new().expect("a poller");
    let mut listener = net::listen(any_port()).expect("a port");
    let token = lp.register(&mut listener).expect("registered");
    lp.deregister(&mut listener, token).expect("deregistered");
    let kept = panic::catch_unwind(AssertUnwindSafe(|| lp.read_wait(token, |_| {})));
    assert!(
        kept.is_err(),
        "read_wait on a token already deregistered kept its callback: the \
         loop no longer polls that socket, so `run` would wait for it for \
         ever; a token's waiters exist only while it is registered, and \
         read_wait on any other token is a mistake to say at once (a panic)"
    );
}

#[test]
fn a_failed_connect_is_reported_to_the_client() {
    // A port that was free a moment ago and has no listener now.
    let addr = std::net::TcpListener::bind(any_port())
        .and_then(|listener| listener.local_addr())
        .expect("a free port");
    let outcome = within(HANG_LIMIT, move || {
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
        outcome.take()
    });
    assert_eq!(
        outcome,
        Some(Err(std::io::ErrorKind::ConnectionRefused)),
        "a connect that fails must wake the client's waiting callback, which \
         then finds the error"
    );
}

/// When a test's rescue comes: long after anything a correct loop waits for,
/// long before `HANG_LIMIT`.
const RESCUE: Duration = Duration::from_secs(2);

/// The turns, 10 ms apart, in which a fresh connection's write waiter must
/// have run: the OS reports a socket that can take bytes at the first wait
/// after it is registered. Waiting `RESCUE` instead held a verdict on a
/// `register` that asks for readable only 2 s.
const FRESH_SOCKET_TURNS: u32 = 20;

/// Every 10 ms, until `done` is set, counts a turn; after `turns` of them,
/// sets `done` (the watchdog's ticks end too) and calls `give_up`.
fn within_turns(
    lp: &EventLoop,
    turns: u32,
    done: Rc<Cell<bool>>,
    give_up: impl FnOnce(&EventLoop) + 'static,
) {
    fn tick(
        lp: &EventLoop,
        turns_left: u32,
        done: Rc<Cell<bool>>,
        give_up: Box<dyn FnOnce(&EventLoop)>,
    ) {
        if done.get() {
            return;
        }
        if turns_left == 0 {
            done.set(true);
            give_up(lp);
            return;
        }
        lp.call_later(ms(10), move |lp| tick(lp, turns_left - 1, done, give_up));
    }
    let give_up: Box<dyn FnOnce(&EventLoop)> = Box::new(give_up);
    lp.call_later(ms(10), move |lp| tick(lp, turns, done, give_up));
}

/// Connects to `addr` once `after` has passed, from another thread, to wake
/// a loop that is blocked in `poll` when it should not be; errors (nobody
/// listens any more) are what a correct loop leaves it.
fn wake_late(addr: SocketAddr, after: Duration) {
    thread::spawn(move || {
        thread::sleep(after);
        let _ = std::net::TcpStream::connect(addr);
    });
}

/// A connected pair over loopback: our end, non-blocking, for the loop;
/// the peer's, blocking, for the test to write from.
fn connected_pair() -> (TcpStream, std::net::TcpStream) {
    let listener = TcpListener::bind(any_port()).expect("a loopback port");
    let peer =
        std::net::TcpStream::connect(listener.local_addr().expect("an address"))
            .expect("connected");
    let (ours, _) = listener.accept().expect("the peer connects");
    ours.set_nonblocking(true).expect("a non-blocking socket");
    (TcpStream::from_std(ours), peer)
}

/// Our end of a pair, registered on the loop, shared with its callbacks.
struct Watched {
    stream: Rc<RefCell<TcpStream>>,
    token: Token,
}

fn watch(lp: &EventLoop, mut stream: TcpStream) -> Watched {
    let token = lp.register(&mut stream).expect("registered");
    Watched {
        stream: Rc::new(RefCell::new(stream)),
        token,
    }
}

impl Watched {
    /// Takes the socket off the loop, which drops any callback waiting on it.
    fn forget(&self, lp: &EventLoop) {
        lp.deregister(&mut *self.stream.borrow_mut(), self.token)
            .expect("the socket was registered");
    }

    /// Reads what has come: the byte count, or `None` for `WouldBlock`.
    fn read(&self) -> Option<usize> {
        read_now(&mut self.stream.borrow_mut(), &mut [0; 64]).expect("a read")
    }
}

/// Every 10 ms, until `done` is set, checks the time; once `limit` has
/// passed, calls `give_up`, which must leave the loop nothing to wait for.
/// A wrong loop that never wakes a callback then ends instead of waiting for
/// ever, and the test can say what did not happen.
fn watchdog(
    lp: &EventLoop,
    limit: Duration,
    done: Rc<Cell<bool>>,
    give_up: impl FnOnce(&EventLoop) + 'static,
) {
    fn tick(
        lp: &EventLoop,
        deadline: Instant,
        done: Rc<Cell<bool>>,
        give_up: Box<dyn FnOnce(&EventLoop)>,
    ) {
        if done.get() {
            return;
        }
        if Instant::now() >= deadline {
            give_up(lp);
            return;
        }
        lp.call_later(ms(10), move |lp| tick(lp, deadline, done, give_up));
    }
    tick(lp, Instant::now() + limit, done, Box::new(give_up));
}

#[test]
fn a_read_waiter_runs_once_data_has_come_and_not_before() {
    let found = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let (ours, mut peer) = connected_pair();
        let socket = Rc::new(watch(&lp, ours));
        let writer = thread::spawn(move || {
            thread::sleep(ms(100));
            peer.write_all(b"hello").expect("the peer writes");
            peer
        });
        let found = Rc::new(Cell::new(None));
        let done = Rc::new(Cell::new(false));
        let (reader, seen, finished) = (socket.clone(), found.clone(), done.clone());
        lp.read_wait(socket.token, move |lp| {
            seen.set(Some(reader.read()));
            finished.set(true);
            reader.forget(lp);
        });
        watchdog(&lp, RESCUE, done, move |lp| socket.forget(lp));
        lp.run().expect("the loop runs");
        drop(writer.join().expect("the peer thread ends"));
        found.get()
    });
    match found {
        None => panic!(
            "the callback waiting to read never ran, though the peer wrote 5 \
             bytes: wait_for_io must move the callback waiting on a readable \
             socket to the ready queue"
        ),
        Some(None) => panic!(
            "the callback waiting to read ran before any byte had come (its \
             read said WouldBlock): read_wait must keep the callback until the \
             socket is readable"
        ),
        Some(Some(bytes)) => assert_eq!(bytes, 5, "the callback read {bytes} bytes"),
    }
}

#[test]
fn every_socket_ready_in_one_poll_wakes_its_callback() {
    const SOCKETS: usize = 3;
    let woken = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let woken = Rc::new(Cell::new(0));
        let done = Rc::new(Cell::new(false));
        let sockets: Vec<Rc<Watched>> = (0..SOCKETS)
            .map(|_| {
                let (ours, mut peer) = connected_pair();
                // The bytes are in before the loop's first `poll`, which
                // therefore reports all the sockets at once.
                peer.write_all(b"now").expect("the peer writes");
                let socket = Rc::new(watch(&lp, ours));
                let (reader, count, finished) =
                    (socket.clone(), woken.clone(), done.clone());
                lp.read_wait(socket.token, move |lp| {
                    // The peer's end stays open until its callback has run.
                    drop(peer);
                    count.set(count.get() + 1);
                    finished.set(count.get() == SOCKETS);
                    reader.forget(lp);
                });
                socket
            })
            .collect();
        watchdog(&lp, RESCUE, done, move |lp| {
            for socket in &sockets {
                // A socket whose callback ran is already off the loop.
                let _ =
                    lp.deregister(&mut *socket.stream.borrow_mut(), socket.token);
            }
        });
        lp.run().expect("the loop runs");
        woken.get()
    });
    assert_eq!(
        woken, SOCKETS,
        "only {woken} of the {SOCKETS} sockets that were readable woke their \
         callbacks: wait_for_io must go through every event `poll` returned \
         (readiness is reported once; an event skipped is a wake-up lost)"
    );
}

#[test]
fn a_write_waiter_runs_once_the_socket_can_take_bytes() {
    let wrote = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let (ours, peer) = connected_pair();
        let socket = Rc::new(watch(&lp, ours));
        let wrote = Rc::new(Cell::new(None));
        let done = Rc::new(Cell::new(false));
        let (writer, seen, finished) = (socket.clone(), wrote.clone(), done.clone());
        lp.write_wait(socket.token, move |lp| {
            let sent = net::write_now(&mut writer.stream.borrow_mut(), b"x");
            seen.set(Some(sent.expect("a write")));
            finished.set(true);
            writer.forget(lp);
        });
        let forgotten = socket.clone();
        within_turns(&lp, FRESH_SOCKET_TURNS, done.clone(), move |lp| {
            forgotten.forget(lp);
        });
        watchdog(&lp, RESCUE, done, move |lp| socket.forget(lp));
        lp.run().expect("the loop runs");
        drop(peer);
        wrote.get()
    });
    assert_eq!(
        wrote,
        Some(1),
        "a fresh connection can take bytes at once, but the callback waiting \
         to write {}: `register` must ask the OS for writable events too \
         (Interest::WRITABLE), and wait_for_io wake the write waiter",
        if wrote.is_some() {
            "could not write"
        } else {
            "never ran"
        }
    );
}

#[test]
fn a_writable_socket_wakes_only_the_write_waiter() {
    let (read_woken, write_woken) = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        // The peer never writes: the socket is writable, never readable.
        let (ours, peer) = connected_pair();
        let socket = Rc::new(watch(&lp, ours));
        let read_woken = Rc::new(Cell::new(false));
        let write_woken = Rc::new(Cell::new(false));
        let woken = read_woken.clone();
        lp.read_wait(socket.token, move |_| woken.set(true));
        let done = Rc::new(Cell::new(false));
        let (woken, owner, finished) =
            (write_woken.clone(), socket.clone(), done.clone());
        lp.write_wait(socket.token, move |lp| {
            woken.set(true);
            // A few more turns for a wrongly woken reader to show, then the
            // socket leaves the loop, and its read waiter with it.
            lp.call_later(ms(50), move |lp| {
                owner.forget(lp);
                finished.set(true);
            });
        });
        watchdog(&lp, RESCUE, done, move |lp| {
            let _ = lp.deregister(&mut *socket.stream.borrow_mut(), socket.token);
        });
        lp.run().expect("the loop runs");
        drop(peer);
        (read_woken.get(), write_woken.get())
    });
    assert!(
        write_woken,
        "the callback waiting to write on a fresh connection never ran"
    );
    assert!(
        !read_woken,
        "the callback waiting to read ran, though no byte had come and the \
         socket was only writable: an event wakes the waiter of its own side \
         (readable: the read waiter; writable: the write waiter), and \
         read_wait stores the callback as the socket's read waiter"
    );
}

/// Leaves a callback waiting on each side of `socket` (read, then write);
/// once both have run, the socket leaves the loop and `done` is set.
/// Returns what has run: (the read callback, the write callback).
fn wait_on_both_sides(
    lp: &EventLoop,
    socket: &Rc<Watched>,
    done: &Rc<Cell<bool>>,
) -> Rc<Cell<(bool, bool)>> {
    let woken = Rc::new(Cell::new((false, false)));
    for reading in [true, false] {
        let (seen, owner, finished) = (woken.clone(), socket.clone(), done.clone());
        let callback = move |lp: &EventLoop| {
            let (read, write) = seen.get();
            let now = if reading { (true, write) } else { (read, true) };
            seen.set(now);
            if now == (true, true) {
                owner.forget(lp);
                finished.set(true);
            }
        };
        if reading {
            lp.read_wait(socket.token, callback);
        } else {
            lp.write_wait(socket.token, callback);
        }
    }
    woken
}

/// Once one side's callback has run, gives the other two more ticks of
/// 10 ms, then `give_up`. The event moved both to the ready queue
/// together, so a callback that has not run two turns after its partner
/// never will; waiting `RESCUE` for it held a verdict 2 s.
fn one_side_then_two_ticks(
    lp: &EventLoop,
    woken: Rc<Cell<(bool, bool)>>,
    done: Rc<Cell<bool>>,
    give_up: impl FnOnce(&EventLoop) + 'static,
) {
    fn tick(
        lp: &EventLoop,
        woken: Rc<Cell<(bool, bool)>>,
        done: Rc<Cell<bool>>,
        give_up: Box<dyn FnOnce(&EventLoop)>,
        ticks_left: u32,
    ) {
        if done.get() {
            return;
        }
        let (read, write) = woken.get();
        let ticks_left = if read || write {
            ticks_left - 1
        } else {
            ticks_left
        };
        if ticks_left == 0 {
            done.set(true); // the watchdog's ticks end too
            give_up(lp);
            return;
        }
        lp.call_later(ms(10), move |lp| tick(lp, woken, done, give_up, ticks_left));
    }
    let give_up: Box<dyn FnOnce(&EventLoop)> = Box::new(give_up);
    lp.call_later(ms(10), move |lp| tick(lp, woken, done, give_up, 2));
}

#[test]
fn one_event_that_makes_a_socket_readable_and_writable_wakes_both_waiters() {
    let (read_woken, write_woken) = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let (ours, mut peer) = connected_pair();
        // A byte is in and the send buffer is empty before the loop's first
        // `poll`, which therefore reports both in one event.
        peer.write_all(b"x").expect("the peer writes");
        let socket = Rc::new(watch(&lp, ours));
        wait_until_readable(&socket);
        let done = Rc::new(Cell::new(false));
        let woken = wait_on_both_sides(&lp, &socket, &done);
        let forgotten = socket.clone();
        one_side_then_two_ticks(&lp, woken.clone(), done.clone(), move |lp| {
            forgotten.forget(lp);
        });
        watchdog(&lp, RESCUE, done, move |lp| socket.forget(lp));
        lp.run().expect("the loop runs");
        drop(peer);
        woken.get()
    });
    for (side, woken) in [("read", read_woken), ("write", write_woken)] {
        assert!(
            woken,
            "one event made a socket readable and writable at once, and the \
             callback waiting to {side} never ran: `take_ready` has taken both \
             waiters out of the socket's slots, so wait_for_io must move every \
             callback it gives to the ready queue (one left out is a wake-up \
             lost for good)"
        );
    }
}

#[test]
fn a_socket_callback_queues_behind_the_callbacks_already_ready() {
    let order = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let (ours, mut peer) = connected_pair();
        peer.write_all(b"x").expect("the peer writes");
        let socket = Rc::new(watch(&lp, ours));
        wait_until_readable(&socket);
        let order = Rc::new(RefCell::new(Vec::new()));
        let done = Rc::new(Cell::new(false));
        let (log, reader, finished) = (order.clone(), socket.clone(), done.clone());
        lp.read_wait(socket.token, move |lp| {
            log.borrow_mut().push("the socket's read callback");
            finished.set(true);
            reader.forget(lp);
        });
        // Ready before the first turn's `poll`, which reports the socket.
        let log = order.clone();
        lp.call_soon(move |_| log.borrow_mut().push("a callback queued first"));
        watchdog(&lp, RESCUE, done, move |lp| socket.forget(lp));
        lp.run().expect("the loop runs");
        drop(peer);
        order.take()
    });
    assert_eq!(
        order,
        ["a callback queued first", "the socket's read callback"],
        "callbacks run in the order they became ready: wait_for_io puts a \
         socket's callback at the back of the ready queue (push_back), behind \
         what call_soon queued before, as call_soon promises"
    );
}

#[test]
fn a_timer_fires_on_time_while_a_socket_waits_in_vain() {
    let fired_after = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let (ours, mut peer) = connected_pair();
        let socket = Rc::new(watch(&lp, ours));
        lp.read_wait(socket.token, |_| {});
        let start = Instant::now();
        let fired_after = Rc::new(Cell::new(None));
        let fired = fired_after.clone();
        lp.call_later(ms(200), move |lp| {
            fired.set(Some(start.elapsed()));
            socket.forget(lp);
        });
        // Wakes a loop that blocks in `poll` past the deadline, so the test
        // can say how late the timer was instead of waiting for ever.
        thread::spawn(move || {
            thread::sleep(RESCUE);
            let _ = peer.write_all(b"wake up");
        });
        lp.run().expect("the loop runs");
        fired_after.get().expect("the timer fired")
    });
    assert!(
        fired_after >= ms(200),
        "a 0.2 s timer fired {} early",
        human(ms(200).saturating_sub(fired_after))
    );
    assert!(
        fired_after < ms(1200),
        "a timer due at 0.20 s, beside a socket waiting to read, fired after \
         {}: wait_for_io must give `poll` the time until the next deadline as \
         its timeout, so the loop wakes for the timer even when no socket is \
         ready",
        human(fired_after)
    );
}

/// Sets a timer of `each`, which sets the next, until `left` have fired;
/// the last notes the time since `start` and takes the socket off the loop.
fn timer_after_timer(
    lp: &EventLoop,
    each: Duration,
    left: u32,
    start: Instant,
    socket: Rc<Watched>,
    took: Rc<Cell<Option<Duration>>>,
) {
    lp.call_later(each, move |lp| {
        if left > 1 {
            timer_after_timer(lp, each, left - 1, start, socket, took);
        } else {
            took.set(Some(start.elapsed()));
            socket.forget(lp);
        }
    });
}

#[test]
fn timers_in_a_row_beside_a_waiting_socket_take_their_delays_and_no_more() {
    const TIMERS: u32 = 10;
    let each = ms(150);
    let took = within(HANG_LIMIT, move || {
        let lp = EventLoop::new().expect("a poller");
        let (ours, mut peer) = connected_pair();
        let socket = Rc::new(watch(&lp, ours));
        lp.read_wait(socket.token, |_| {});
        let took = Rc::new(Cell::new(None));
        timer_after_timer(&lp, each, TIMERS, Instant::now(), socket, took.clone());
        // As in the tests above: wakes a loop that blocks past a deadline.
        thread::spawn(move || {
            thread::sleep(RESCUE);
            let _ = peer.write_all(b"wake up");
        });
        lp.run().expect("the loop runs");
        took.get().expect("the last timer fired")
    });
    let due = each * TIMERS;
    assert!(
        took >= due,
        "the timers fired {} early",
        human(due.saturating_sub(took))
    );
    // Each wait may end a little late on a busy machine; a whole second for
    // all ten is far more than that, and less than a wait of twice the time
    // or rounded up to the next second.
    assert!(
        took < due + ms(1000),
        "{TIMERS} timers of {}, each set by the one before, beside a socket \
         waiting to read, took {} instead of about {}: wait_for_io must give \
         `poll` the time until the next deadline as it is (not more, not \
         rounded up to a whole second), so each timer fires when it is due",
        human(each),
        human(took),
        human(due)
    );
}

#[test]
fn a_register_that_fails_leaves_no_socket_on_the_loop() {
    let lp = EventLoop::new().expect("a poller");
    let mut listener = net::listen(any_port()).expect("a port");
    lp.register(&mut listener).expect("registered");
    let again = lp.register(&mut listener);
    assert!(again.is_err(), "the OS registers a socket once: {again:?}");
    let shown = format!("{lp:?}");
    assert!(
        shown.contains("sockets: 1"),
        "after a `register` that failed (the socket was registered already), \
         the loop shows {shown}: `register` must hand the socket to the OS \
         first and give the token its waiters only once that succeeded, or a \
         socket that was never registered stays in the loop's map"
    );
}

/// How many times this thread has blocked so far (slept, waited for I/O).
#[cfg(target_os = "linux")]
fn voluntary_switches() -> u64 {
    let status = std::fs::read_to_string("/proc/thread-self/status")
        .expect("Linux shows each thread's counters in /proc/thread-self");
    status
        .lines()
        .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|count| count.trim().parse().ok())
        .expect("a voluntary_ctxt_switches line")
}

// Linux only: it counts the thread's sleeps in /proc, which macOS and
// Windows do not have.
#[cfg(target_os = "linux")]
#[test]
fn waiting_beside_a_socket_blocks_once_until_the_deadline() {
    let wait = ms(300);
    let blocked = within(HANG_LIMIT, move || {
        let lp = EventLoop::new().expect("a poller");
        let (ours, mut peer) = connected_pair();
        let socket = Rc::new(watch(&lp, ours));
        lp.read_wait(socket.token, |_| {});
        lp.call_later(wait, move |lp| socket.forget(lp));
        // As in the test above: wakes a loop that ignores the deadline.
        thread::spawn(move || {
            thread::sleep(RESCUE);
            let _ = peer.write_all(b"wake up");
        });
        let before = voluntary_switches();
        lp.run().expect("the loop runs");
        voluntary_switches() - before
    });
    // One `poll` until the deadline; a few more leave room for the OS.
    // Waking every 10 ms would show 30.
    assert!(
        blocked <= 5,
        "waiting {} for a timer beside a silent socket, the loop's thread \
         blocked {blocked} times: wait_for_io should hand `poll` the whole \
         time until the deadline, so the loop blocks once and wakes when the \
         timer is due or a socket is ready",
        human(wait)
    );
}

/// Waits, outside the loop, until bytes are there to read on `socket`: so
/// that the loop's next `poll` is sure to report them.
fn wait_until_readable(socket: &Watched) {
    let mut byte = [0; 1];
    while let Err(err) = socket.stream.borrow().peek(&mut byte) {
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock, "peek failed: {err}");
        thread::sleep(ms(1));
    }
}

#[test]
fn a_second_read_wait_on_a_socket_replaces_the_first() {
    let (first_ran, first_dropped_at_once, second_ran) = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let (ours, mut peer) = connected_pair();
        let socket = Rc::new(watch(&lp, ours));
        let (first_ran, second_ran) =
            (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
        let (guard, first_dropped) = DropFlag::new();
        let ran = Rc::clone(&first_ran);
        lp.read_wait(socket.token, move |_| {
            let _guard = guard;
            ran.set(true);
        });
        let (ran, reader) = (Rc::clone(&second_ran), Rc::clone(&socket));
        lp.read_wait(socket.token, move |lp| {
            ran.set(true);
            reader.forget(lp);
        });
        let first_dropped_at_once = first_dropped.get();
        peer.write_all(b"hello").expect("the peer writes");
        let done = Rc::clone(&second_ran);
        watchdog(&lp, RESCUE, done, move |lp| socket.forget(lp));
        lp.run().expect("the loop runs");
        (first_ran.get(), first_dropped_at_once, second_ran.get())
    });
    assert!(
        !first_ran,
        "the first callback ran, though a second read_wait on the same socket \
         came after it: each read_wait replaces the callback waiting to read"
    );
    assert!(
        second_ran,
        "the second callback waiting to read never ran, though the peer wrote: \
         each read_wait replaces the callback waiting to read, it is not ignored"
    );
    assert!(
        first_dropped_at_once,
        "the callback a second read_wait replaced was kept: read_wait drops the \
         callback it replaces (once the borrow of io_waiters has ended)"
    );
}

/// Owned by a callback: a second socket of the loop, taken off it when the
/// callback is dropped, as a connection's own drop deregisters it. Dropping
/// it calls the loop, which borrows the waiters.
struct DeregistersOnDrop {
    lp: Weak<EventLoop>,
    socket: Watched,
}

impl Drop for DeregistersOnDrop {
    fn drop(&mut self) {
        if let Some(lp) = self.lp.upgrade() {
            self.socket.forget(&lp);
        }
    }
}

/// Chapter 4's Build it: `read_wait` drops the callback it replaces only
/// once the borrow of the waiters has ended. Dropped inside it, a callback
/// whose drop calls the loop panics with "already borrowed", far from the
/// line at fault: this test names it.
#[test]
fn a_replaced_read_waiter_whose_drop_calls_the_loop_is_dropped_after_the_borrow() {
    let (panicked, second_ran) = within(HANG_LIMIT, || {
        let lp = Rc::new(EventLoop::new().expect("a poller"));
        let (ours, mut peer) = connected_pair();
        let socket = Rc::new(watch(&lp, ours));
        let (other, _other_peer) = connected_pair();
        let owned = DeregistersOnDrop {
            lp: Rc::downgrade(&lp),
            socket: watch(&lp, other),
        };
        lp.read_wait(socket.token, move |_| drop(owned));
        let second_ran = Rc::new(Cell::new(false));
        let (ran, reader) = (Rc::clone(&second_ran), Rc::clone(&socket));
        // Caught, so that the test can say where the panic comes from; the
        // borrow it happened in ends as it unwinds.
        let replaced = panic::catch_unwind(AssertUnwindSafe(|| {
            lp.read_wait(socket.token, move |lp| {
                ran.set(true);
                reader.forget(lp);
            });
        }));
        let panicked = replaced.err().map(|panic| panic_message(&*panic));
        if panicked.is_none() {
            peer.write_all(b"hello").expect("the peer writes");
            let done = Rc::clone(&second_ran);
            watchdog(&lp, RESCUE, done, move |lp| socket.forget(lp));
            lp.run().expect("the loop runs");
        }
        (panicked, second_ran.get())
    });
    if let Some(message) = panicked {
        panic!(
            "a second read_wait on a socket panicked ({message}) while \
             dropping the callback it replaced: that callback owned a socket \
             whose drop takes it off the loop, which borrows io_waiters, \
             still borrowed inside read_wait. read_wait must drop the \
             callback it replaces only after the borrow has ended (keep what \
             `replace` returns, and drop it once `waiters_for` has returned)"
        );
    }
    assert!(
        second_ran,
        "the second callback waiting to read never ran, though the peer wrote: \
         each read_wait replaces the callback waiting to read"
    );
}

/// The text a panic carried, as `panic!` and `expect` give it.
fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// A callback that puts itself back on the ready queue, counting its runs,
/// until `stop` is set or it has run `limit` times.
fn spin(lp: &EventLoop, stop: Rc<Cell<bool>>, spins: Rc<Cell<u32>>, limit: u32) {
    if stop.get() || spins.get() == limit {
        return;
    }
    spins.set(spins.get() + 1);
    lp.call_soon(move |lp| spin(lp, stop, spins, limit));
}

#[test]
fn a_ready_socket_is_heard_while_callbacks_keep_the_queue_full() {
    // A callback is always ready, so every wait is zero: wait_for_io must
    // still ask the OS, without blocking, or the socket is never heard.
    const SPINS: u32 = 1000;
    let (spins, read) = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let (ours, mut peer) = connected_pair();
        let socket = Rc::new(watch(&lp, ours));
        peer.write_all(b"hello").expect("the peer writes");
        wait_until_readable(&socket);
        let read = Rc::new(Cell::new(false));
        let (heard, reader) = (Rc::clone(&read), Rc::clone(&socket));
        lp.read_wait(socket.token, move |lp| {
            heard.set(true);
            reader.forget(lp);
        });
        let spins = Rc::new(Cell::new(0));
        let (heard, counted) = (Rc::clone(&read), Rc::clone(&spins));
        lp.call_soon(move |lp| spin(lp, heard, counted, SPINS));
        lp.run().expect("the loop runs");
        (spins.get(), read.get())
    });
    assert!(read, "the callback waiting to read never ran");
    assert!(
        spins <= 3,
        "bytes were waiting on the socket, yet its callback ran only after \
         {spins} turns of a callback that kept the ready queue full: a ready \
         callback makes the wait zero, and wait_for_io must still poll the OS \
         (without blocking) each turn, or I/O starves"
    );
}
