// The tests of `step07_loop.rs` and `step08_loop.rs`, one copy: step 8
// keeps step 7's loop, and each file names its step as `step` before it
// includes this one.

use std::cell::{Cell, RefCell};
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::rc::Rc;
use std::thread;
use std::time::{Duration, Instant};

use mio::Token;
use mio::net::TcpStream;
use step::EventLoop;
use workshop_tests::{HANG_LIMIT, within};

/// How long a test waits for a callback before it gives up and says which
/// one never ran; nothing here comes close.
const RESCUE: Duration = Duration::from_secs(2);

/// Our end of a connected pair over loopback, non-blocking and registered
/// with `lp`, after the peer has written a byte to it and the byte is in:
/// the loop's first `poll` reports the socket readable and writable in
/// one event. Returns our end, its token, and the peer's end.
fn socket_with_a_byte_in(
    lp: &EventLoop,
) -> (Rc<RefCell<TcpStream>>, Token, std::net::TcpStream) {
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .expect("a loopback port");
    let mut peer =
        std::net::TcpStream::connect(listener.local_addr().expect("an address"))
            .expect("connected");
    let (ours, _) = listener.accept().expect("the peer connects");
    peer.write_all(b"x").expect("the peer writes");
    ours.set_nonblocking(true).expect("a non-blocking socket");
    let deadline = Instant::now() + HANG_LIMIT;
    while let Err(err) = ours.peek(&mut [0]) {
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock, "peek failed: {err}");
        assert!(Instant::now() < deadline, "the peer's byte never came");
        thread::sleep(Duration::from_millis(1));
    }
    let mut ours = TcpStream::from_std(ours);
    let token = lp.register(&mut ours).expect("registered");
    (Rc::new(RefCell::new(ours)), token, peer)
}

/// Every 10 ms until `done` is set, checks the time; once `deadline` has
/// passed, takes the socket off the loop (and any callback still waiting
/// with it), so a loop that lost a wake-up ends and the test can say which.
fn watchdog(
    lp: &EventLoop,
    deadline: Instant,
    done: Rc<Cell<bool>>,
    socket: (Rc<RefCell<TcpStream>>, Token),
) {
    lp.call_later(Duration::from_millis(10), move |lp| {
        if done.get() {
            return;
        }
        if Instant::now() >= deadline {
            let (stream, token) = socket;
            let _ = lp.deregister(&mut *stream.borrow_mut(), token);
            return;
        }
        watchdog(lp, deadline, done, socket);
    });
}

/// `watchdog`, and sooner: once one side's callback has run, the other
/// gets two more ticks. The event moved both to the ready queue together,
/// so a callback that has not run two turns after its partner never will;
/// waiting `RESCUE` for it held a verdict 2 s.
fn one_side_then_two_ticks(
    lp: &EventLoop,
    woken: Rc<Cell<(bool, bool)>>,
    done: Rc<Cell<bool>>,
    socket: (Rc<RefCell<TcpStream>>, Token),
    ticks_left: u32,
) {
    lp.call_later(Duration::from_millis(10), move |lp| {
        if done.get() {
            return;
        }
        let (read, write) = woken.get();
        let ticks_left = if read || write { ticks_left - 1 } else { ticks_left };
        if ticks_left == 0 {
            done.set(true); // the watchdog's ticks end too
            let (stream, token) = socket;
            let _ = lp.deregister(&mut *stream.borrow_mut(), token);
            return;
        }
        one_side_then_two_ticks(lp, woken, done, socket, ticks_left);
    });
}

#[test]
fn one_event_that_makes_a_socket_readable_and_writable_wakes_both_waiters() {
    let (read_woken, write_woken) = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let (stream, token, peer) = socket_with_a_byte_in(&lp);
        let woken = Rc::new(Cell::new((false, false)));
        let done = Rc::new(Cell::new(false));
        for reading in [true, false] {
            let (seen, owner, finished) =
                (woken.clone(), stream.clone(), done.clone());
            let callback = move |lp: &EventLoop| {
                let (read, write) = seen.get();
                let now = if reading { (true, write) } else { (read, true) };
                seen.set(now);
                if now == (true, true) {
                    finished.set(true);
                    let _ = lp.deregister(&mut *owner.borrow_mut(), token);
                }
            };
            if reading {
                lp.read_wait(token, callback);
            } else {
                lp.write_wait(token, callback);
            }
        }
        let both_sides = (stream.clone(), token);
        one_side_then_two_ticks(&lp, woken.clone(), done.clone(), both_sides, 2);
        watchdog(&lp, Instant::now() + RESCUE, done, (stream, token));
        lp.run().expect("the loop runs");
        drop(peer);
        woken.get()
    });
    for (side, woken) in [("read", read_woken), ("write", write_woken)] {
        assert!(
            woken,
            "one event made a socket readable and writable at once, and the \
             callback waiting to {side} never ran: wait_for_io must move every \
             callback `take_ready` gives for the event to the ready queue (it \
             has taken both out of the socket's slots; one left out is a task \
             that never wakes)"
        );
    }
}

#[test]
fn a_socket_callback_queues_behind_the_callbacks_already_ready() {
    let order = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let (stream, token, peer) = socket_with_a_byte_in(&lp);
        let order = Rc::new(RefCell::new(Vec::new()));
        let done = Rc::new(Cell::new(false));
        let (log, owner, finished) = (order.clone(), stream.clone(), done.clone());
        lp.read_wait(token, move |lp| {
            log.borrow_mut().push("the socket's read callback");
            finished.set(true);
            let _ = lp.deregister(&mut *owner.borrow_mut(), token);
        });
        // Ready before the first turn's `poll`, which reports the socket.
        let log = order.clone();
        lp.call_soon(move |_| log.borrow_mut().push("a callback queued first"));
        watchdog(&lp, Instant::now() + RESCUE, done, (stream, token));
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
