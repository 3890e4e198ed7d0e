//! The exercises of chapter 7 ("Try it") that a test can check.
//!
//! Each `#[ignore]`d test fails until its exercise is done. Run them with
//!
//!     cargo test -p workshop-tests --test step07_exercises -- --ignored
//!
//! A reference solution lives in `solutions/step07.rs`, and the tests that are
//! not ignored check it, so every exercise here is known to be solvable.

use std::future::{self, Future};
use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, Instant};

use mio::Token;
use mio::net::TcpStream;
use step07::{EventLoop, sleep, spawn};
use workshop_tests::{HANG_LIMIT, within};

#[path = "solutions/step07.rs"]
mod solutions;

/// A socket on the loop, as the exercise sees it: the mio stream, the token
/// `register` gave it, and the loop, for `read_wait`.
struct Reader {
    lp: Rc<EventLoop>,
    stream: TcpStream,
    token: Token,
}

// ANCHOR: readable
/// Waits for the next readiness event on `token`: the first poll leaves
/// the task's waker with the loop, and the poll after the wake-up is
/// `Ready`. Seed 004's `yield (EVENT_READ, stream)`, and seed 001's
/// `call_when_ready_for_reading`, as a future.
async fn readable(lp: &EventLoop, token: Token) {
    let mut waiting = false;
    future::poll_fn(|cx| {
        if waiting {
            return Poll::Ready(());
        }
        waiting = true;
        let waker = cx.waker().clone();
        lp.read_wait(token, move |_| waker.wake());
        Poll::Pending
    })
    .await;
}
// ANCHOR_END: readable

// ANCHOR: read_some
/// Exercise 1: wait until the socket has bytes, then read one buffer's
/// worth and return it (empty once the peer has closed).
///
/// It works the way the seeds' `recv` does: wait for readiness, then read.
/// Under `select`, that costs one wait too many when bytes are already
/// there. Under mio, it can wait for ever.
async fn read_some(reader: Rc<Reader>) -> io::Result<Vec<u8>> {
    let mut buf = [0; 1024];
    loop {
        readable(&reader.lp, reader.token).await;
        match (&reader.stream).read(&mut buf) {
            Ok(n) => return Ok(buf[..n].to_vec()),
            // Woken, and still nothing there: wait again.
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
}
// ANCHOR_END: read_some

/// When the peer sends a last message, to end the wait of a reader that
/// missed its second one; the test fails if the second read takes this long.
const LATE: Duration = Duration::from_secs(1);

/// Two sockets connected over loopback: the reader's end, non-blocking, for
/// the loop, and the peer's end, blocking, for the test's own writes.
fn connected_pair() -> (TcpStream, std::net::TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let peer = std::net::TcpStream::connect(addr).expect("connected");
    peer.set_nodelay(true).expect("no Nagle delay");
    let (reader, _) = listener.accept().expect("the peer connects");
    reader.set_nonblocking(true).expect("a non-blocking socket");
    (TcpStream::from_std(reader), peer)
}

/// The peer's script: `one` at once, `two` 20 ms later, while the reader
/// sleeps, and `late` after `LATE`.
async fn peer_script(mut peer: std::net::TcpStream) {
    peer.write_all(b"one").expect("sent");
    sleep(Duration::from_millis(20)).await;
    peer.write_all(b"two").expect("sent");
    sleep(LATE).await;
    // The reader is gone once the test has its answer; that is fine.
    let _ = peer.write_all(b"late");
}

fn check_read_some<F>(read_some: fn(Rc<Reader>) -> F)
where
    F: Future<Output = io::Result<Vec<u8>>> + 'static,
{
    let (first, second, took) = within(HANG_LIMIT, move || {
        let lp = Rc::new(EventLoop::new().expect("a new poller"));
        let (mut stream, peer) = connected_pair();
        let token = lp.register(&mut stream).expect("registered");
        let reader = Rc::new(Reader {
            lp: Rc::clone(&lp),
            stream,
            token,
        });
        lp.block_on(async move {
            spawn(peer_script(peer));
            let first = read_some(Rc::clone(&reader)).await.expect("read");
            // `two` arrives meanwhile, and the loop's poll reports it while
            // no one waits on this socket.
            sleep(Duration::from_millis(100)).await;
            let started = Instant::now();
            let second = read_some(reader).await.expect("read");
            (first, second, started.elapsed())
        })
        .expect("the loop runs")
    });
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    assert_eq!(text(&first), "one");
    assert!(
        text(&second) == "two" && took < LATE / 2,
        "the second read got {:?} after {took:.2?}. `two` was in the socket \
         all along, but its readiness event came while no one waited, and the \
         read waited for the next event: the one `late` brought.",
        text(&second),
    );
}

#[test]
#[ignore = "exercise 1 of chapter 7: try the read before waiting"]
fn exercise_1_bytes_that_came_earlier_are_read_at_once() {
    check_read_some(read_some);
}

#[test]
fn exercise_1_has_a_solution() {
    check_read_some(solutions::read_some);
}
