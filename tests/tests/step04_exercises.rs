//! The exercises of chapter 4 ("Try it") that a test can check.
//!
//! Each `#[ignore]`d test fails until its exercise is done. Run them with
//!
//!     cargo test -p workshop-tests --test step04_exercises -- --ignored
//!
//! A reference solution lives in `solutions/step04.rs`, and the tests that are
//! not ignored check it, so every exercise here is known to be solvable.

use std::cell::RefCell;
use std::io::Write;
use std::net::TcpListener;
use std::rc::Rc;
use std::thread;
use std::time::{Duration, Instant};

use mio::Token;
use mio::net::TcpStream;
use step04::EventLoop;
use step04::apps::net::read_now;
use workshop_tests::{HANG_LIMIT, within};

#[path = "solutions/step04.rs"]
mod solutions;

/// A socket on the loop, and what has been read from it so far.
struct Counter {
    stream: TcpStream,
    token: Token,
    /// How many bytes have been read.
    total: usize,
    /// The peer has closed its side, so `total` is final.
    finished: bool,
}

// ANCHOR: count_bytes
/// Exercise 1: count every byte the peer sends until it closes its side (a
/// read of 0 bytes), then set `finished`. The test calls this once, and then
/// it runs each time the loop wakes it.
///
/// It reads once per wake-up, as seed 000's `recv` does. With `select`, that
/// works: `select` reports the socket again while bytes are left. mio does
/// not.
fn count_bytes(lp: &EventLoop, counter: Rc<RefCell<Counter>>) {
    let mut buf = [0; 1024];
    let mut this = counter.borrow_mut();
    match read_now(&mut this.stream, &mut buf) {
        // Bytes came: count them, then wait for more.
        Ok(Some(n)) if n > 0 => this.total += n,
        // Nothing there yet (`WouldBlock`): wait.
        Ok(None) => {}
        // The peer closed its side, or the connection failed: done.
        Ok(Some(_)) | Err(_) => {
            this.finished = true;
            return;
        }
    }
    let token = this.token;
    drop(this);
    lp.read_wait(token, move |lp| count_bytes(lp, counter));
}
// ANCHOR_END: count_bytes

/// What the peer sends: more than one read takes, and more than one readiness
/// event brings.
const BYTES: usize = 256 * 1024;

/// How long the loop may take to count them before the test gives up. A
/// correct count takes milliseconds.
const LIMIT: Duration = Duration::from_secs(3);

/// How often the watchdog looks.
const TICK: Duration = Duration::from_millis(20);

fn check_count_bytes(count: fn(&EventLoop, Rc<RefCell<Counter>>)) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let peer = thread::spawn(move || {
        let mut stream = std::net::TcpStream::connect(addr).expect("connected");
        // An error only means the reader gave up and closed: the test then
        // fails on the count, not here.
        let _ = stream.write_all(&vec![b'x'; BYTES]);
        // Dropping the stream closes the peer's side.
    });
    let (stream, _) = listener.accept().expect("the peer connects");
    stream.set_nonblocking(true).expect("a non-blocking socket");
    let mut stream = TcpStream::from_std(stream);

    let lp = EventLoop::new().expect("a new poller");
    let token = lp.register(&mut stream).expect("registered");
    let counter = Rc::new(RefCell::new(Counter {
        stream,
        token,
        total: 0,
        finished: false,
    }));
    count(&lp, Rc::clone(&counter));
    watchdog(&lp, Rc::clone(&counter), Instant::now() + LIMIT);
    lp.run().expect("the loop runs");

    let Counter {
        total, finished, ..
    } = Rc::try_unwrap(counter)
        .ok()
        .expect("no callback holds the counter once the loop is done")
        .into_inner();
    // The stream is closed now, so a peer still writing gets an error.
    peer.join().expect("the peer thread ends");
    assert!(
        finished && total == BYTES,
        "read {total} of {BYTES} bytes, and the end of the stream {}: \
         the rest waited in the kernel, and no new readiness event came for it",
        if finished { "came" } else { "never came" }
    );
}

/// Ends the test's loop if counting takes longer than `LIMIT`: it takes the
/// socket off the loop, which drops the callback waiting on it.
fn watchdog(lp: &EventLoop, counter: Rc<RefCell<Counter>>, deadline: Instant) {
    if counter.borrow().finished {
        return;
    }
    if Instant::now() >= deadline {
        let mut this = counter.borrow_mut();
        let token = this.token;
        lp.deregister(&mut this.stream, token)
            .expect("the socket was registered");
        return;
    }
    lp.call_later(TICK, move |lp| watchdog(lp, counter, deadline));
}

#[test]
#[ignore = "exercise 1 of chapter 4: read until WouldBlock before waiting"]
fn exercise_1_every_byte_is_counted() {
    within(HANG_LIMIT, || {
        check_count_bytes(count_bytes);
    });
}

#[test]
fn exercise_1_has_a_solution() {
    within(HANG_LIMIT, || {
        check_count_bytes(solutions::count_bytes);
    });
}
