//! Step 7's async sockets and the reactor under them: a task that waits for
//! a socket is woken when it is ready, never too late and never for a
//! socket that is not its own; what one readiness edge announces is read
//! whole; partial writes add up; a failed connect says why.

use std::cell::RefCell;
use std::future::{self, Future};
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::panic::{self, AssertUnwindSafe};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::mpsc;
use std::task::Poll;
use std::thread;
use std::time::Duration;

use step07::{
    EventLoop, TcpListener, TcpStream, sleep, socket_pair, spawn, yield_now,
};
use workshop_tests::{BACKSTOP, HANG_LIMIT, counted, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

fn any_port() -> SocketAddr {
    (Ipv4Addr::LOCALHOST, 0).into()
}

/// How many sockets the loop has registered: its `Debug` output counts them.
fn registered_sockets(lp: &EventLoop) -> usize {
    let debug = format!("{lp:?}");
    let count = debug
        .split("sockets: ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap_or_else(|| panic!("no socket count in {debug}"));
    count.parse().expect("a number")
}

/// Bytes that say where in the stream they are, so a lost, repeated or
/// reordered piece shows.
fn patterned(len: usize) -> Vec<u8> {
    (0..251_u8).cycle().take(len).collect()
}

/// `workshop_tests::before_the_backstop` on this step's loop.
async fn before_the_backstop<T>(
    lp: &EventLoop,
    work: impl Future<Output = T>,
) -> Option<T> {
    let set_timer = |delay, wake: Box<dyn FnOnce()>| {
        lp.call_later(delay, move |_| wake());
    };
    workshop_tests::before_the_backstop(set_timer, work).await
}

#[test]
fn socket_pair_carries_hello_world_from_one_end_to_the_other() {
    within(HANG_LIMIT, || {
        let greeting = new_loop()
            .block_on(async {
                let (mut one, mut other) = socket_pair().unwrap();
                let reader = spawn(async move {
                    let mut buf = [0; 64];
                    let n = other.read(&mut buf).await.unwrap();
                    buf[..n].to_vec()
                });
                one.write_all(b"Hello, world!").await.unwrap();
                reader.await.unwrap()
            })
            .unwrap();
        assert_eq!(greeting, b"Hello, world!");
    });
}

#[test]
fn connecting_where_no_one_listens_is_refused() {
    // A port that was just free: bound, then closed again.
    let addr = std::net::TcpListener::bind(any_port())
        .and_then(|listener| listener.local_addr())
        .expect("a free port");
    within(HANG_LIMIT, move || {
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let outcome = lp
            .block_on(async move {
                let connect = TcpStream::connect(addr);
                before_the_backstop(&same_loop, connect).await
            })
            .unwrap()
            .unwrap_or_else(|| {
                panic!(
                    "a connect to a port where no one listens never ended: only \
                     WouldBlock means wait; any other error (here \
                     ConnectionRefused) is the operation's outcome"
                )
            });
        let err = outcome.map(drop).expect_err("no one listens there");
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
    });
}

#[test]
fn connect_and_accept_meet_and_know_each_others_addresses() {
    within(HANG_LIMIT, || {
        new_loop()
            .block_on(async {
                let mut listener = TcpListener::bind(any_port()).unwrap();
                let addr = listener.local_addr().unwrap();
                let client = spawn(async move {
                    let mut stream = TcpStream::connect(addr).await.unwrap();
                    assert_eq!(stream.peer_addr().unwrap(), addr);
                    stream.write_all(b"ping").await.unwrap();
                    stream.local_addr().unwrap()
                });
                let (mut accepted, peer) = listener.accept().await.unwrap();
                let mut ping = [0; 4];
                let mut got = 0;
                while got < ping.len() {
                    got += accepted.read(&mut ping[got..]).await.unwrap();
                }
                assert_eq!(&ping, b"ping");
                assert_eq!(client.await.unwrap(), peer);
            })
            .unwrap();
    });
}

#[test]
fn write_all_to_a_slow_reader_sends_every_byte_in_order() {
    const TOTAL: usize = 8 << 20;
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let (received, write_polls) = lp
            .block_on(async move {
                let (mut writer, mut reader) = socket_pair().unwrap();
                // Reads in small bites with pauses: the writer's buffers fill
                // again and again, and each write takes only what fits.
                let reading = spawn(async move {
                    let mut received = Vec::new();
                    let mut chunk = vec![0; 256 << 10];
                    while received.len() < TOTAL {
                        let n = reader.read(&mut chunk).await.unwrap();
                        assert!(n > 0, "the writer closed early");
                        received.extend_from_slice(&chunk[..n]);
                        sleep(Duration::from_millis(2)).await;
                    }
                    received
                });
                let data = patterned(TOTAL);
                let (writing, polls) = counted(writer.write_all(&data));
                let Some(written) = before_the_backstop(&same_loop, writing).await
                else {
                    return None; // a write waited for room, and was never woken
                };
                written.unwrap();
                Some((reading.await.unwrap(), polls.get()))
            })
            .unwrap()
            .unwrap_or_else(|| {
                panic!(
                    "a write said WouldBlock, and the reader went on reading, but \
                     the writing task was not woken in {BACKSTOP:?}: after \
                     WouldBlock, leave the task's waker with the loop for the \
                     direction it waits in (write_wait when writing), so that \
                     room in the send buffer wakes it"
                )
            });
        assert!(
            write_polls > 1,
            "the send buffer never filled; the test proves nothing"
        );
        assert!(received == patterned(TOTAL), "the bytes differ");
    });
}

#[test]
fn a_read_that_waits_is_woken_when_its_bytes_come() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let read = lp
            .block_on(async move {
                let (mut writer, mut reader) = socket_pair().unwrap();
                let writing = spawn(async move {
                    sleep(Duration::from_millis(20)).await;
                    writer.write_all(b"late").await.unwrap();
                    writer // kept open: no end-of-stream edge either
                });
                let mut buf = [0; 16];
                let read = before_the_backstop(&same_loop, reader.read(&mut buf))
                    .await
                    .map(|n| buf[..n.unwrap()].to_vec());
                drop(writing.await.unwrap());
                read
            })
            .unwrap();
        let bytes = read.unwrap_or_else(|| {
            panic!(
                "a read said WouldBlock, and its bytes came 20 ms later, but its \
                 task was not woken in {BACKSTOP:?}: after WouldBlock, leave the \
                 task's waker with the loop (read_wait), so that the socket's \
                 readiness wakes it"
            )
        });
        assert_eq!(
            bytes,
            b"late",
            "a read that found no bytes yet returned {} bytes instead of waiting \
             for them: WouldBlock means wait, and only 0 bytes read means the \
             peer has closed",
            bytes.len()
        );
    });
}

#[test]
fn a_burst_that_came_under_one_readiness_edge_is_read_whole() {
    const BURST: usize = 64 << 10;
    within(HANG_LIMIT, || {
        let (sent, keep_open) = mpsc::channel::<()>();
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let received = lp
            .block_on(async move {
                let mut listener = TcpListener::bind(any_port()).unwrap();
                let addr = listener.local_addr().unwrap();
                // A peer on another thread sends the whole burst at once and
                // then neither writes nor closes: no further edge will come.
                let peer = thread::spawn(move || {
                    let mut stream = std::net::TcpStream::connect(addr).unwrap();
                    stream.write_all(&patterned(BURST)).unwrap();
                    let _ = keep_open.recv(); // until the test is done
                });
                let (mut stream, _) = listener.accept().await.unwrap();
                // Let the burst arrive, so one edge announces all of it.
                sleep(Duration::from_millis(100)).await;
                let mut received = Vec::new();
                let mut chunk = [0; 1000];
                while received.len() < BURST {
                    let read = stream.read(&mut chunk);
                    let Some(n) = before_the_backstop(&same_loop, read).await else {
                        break; // waited for an edge that will not come
                    };
                    received.extend_from_slice(&chunk[..n.unwrap()]);
                }
                drop(sent);
                peer.join().unwrap();
                received
            })
            .unwrap();
        assert!(
            received.len() == BURST,
            "a burst of {BURST} bytes came under one readiness edge, and the \
             reads stopped after {} bytes, waiting for another edge: a read \
             takes what it can without waiting, and waits only once the OS says \
             WouldBlock",
            received.len()
        );
        assert!(received == patterned(BURST), "the bytes differ");
    });
}

#[test]
fn a_thousand_round_trips_with_a_thread_lose_no_wake_up() {
    // Each reply arrives about when the loop has just found nothing to read
    // and is leaving its waker: the window where a wake-up could be lost.
    within(HANG_LIMIT, || {
        new_loop()
            .block_on(async {
                let mut listener = TcpListener::bind(any_port()).unwrap();
                let addr = listener.local_addr().unwrap();
                let echo = thread::spawn(move || {
                    let mut stream = std::net::TcpStream::connect(addr).unwrap();
                    stream.set_nodelay(true).unwrap();
                    let mut byte = [0];
                    while stream.read_exact(&mut byte).is_ok() {
                        stream.write_all(&byte).unwrap();
                    }
                });
                let (mut stream, _) = listener.accept().await.unwrap();
                stream.set_nodelay(true).unwrap();
                for byte in (0..=255_u8).cycle().take(1000) {
                    let byte = [byte];
                    stream.write_all(&byte).await.unwrap();
                    let mut back = [0];
                    assert_eq!(stream.read(&mut back).await.unwrap(), 1);
                    assert_eq!(back, byte);
                }
                drop(stream);
                echo.join().unwrap();
            })
            .unwrap();
    });
}

#[test]
fn a_spurious_wake_up_only_makes_the_read_try_again() {
    within(HANG_LIMIT, || {
        let (bytes, polls) = new_loop()
            .block_on(async {
                let (mut writer, mut reader) = socket_pair().unwrap();
                spawn(async move {
                    sleep(Duration::from_millis(50)).await;
                    writer.write_all(b"late").await.unwrap();
                });
                let mut buf = [0; 16];
                let mut polls = 0;
                let n = {
                    let mut read = pin!(reader.read(&mut buf));
                    // Wakes itself after every `Pending`, as a task woken for
                    // no reason would be: each poll tries, and waits again.
                    future::poll_fn(|cx| {
                        polls += 1;
                        let poll = read.as_mut().poll(cx);
                        if poll.is_pending() {
                            cx.waker().wake_by_ref();
                        }
                        poll
                    })
                    .await
                    .unwrap()
                };
                (buf[..n].to_vec(), polls)
            })
            .unwrap();
        assert_eq!(bytes, b"late");
        assert!(polls > 2, "woken only {polls} times: no spurious wake-up");
    });
}

#[test]
fn a_dropped_socket_leaves_the_loop_and_none_of_its_events_reach_a_new_one() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let inner = Rc::clone(&lp);
        lp.block_on(async move {
            for _ in 0..100 {
                // The old socket waits to read, its readiness arrives, and
                // it is dropped before the loop has looked.
                let (mut old, mut old_peer) = socket_pair().unwrap();
                let mut buf = [0; 16];
                future::poll_fn(|cx| {
                    let read = pin!(old.read(&mut buf));
                    assert!(read.poll(cx).is_pending());
                    Poll::Ready(())
                })
                .await;
                old_peer.write_all(b"for the old one").await.unwrap();
                drop((old, old_peer));
                assert_eq!(registered_sockets(&inner), 0);

                // The new pair most likely gets the same descriptors back.
                let (mut new, mut new_peer) = socket_pair().unwrap();
                let reading = spawn(async move {
                    let mut buf = [0; 16];
                    let (read, polls) = counted(new.read(&mut buf));
                    let n = read.await.unwrap();
                    (buf[..n].to_vec(), polls.get())
                });
                sleep(Duration::from_millis(5)).await;
                new_peer.write_all(b"for the new one").await.unwrap();
                let (bytes, polls) = reading.await.unwrap();
                assert_eq!(bytes, b"for the new one");
                assert_eq!(polls, 2, "one poll to wait, one when its bytes came");
            }
        })
        .unwrap();
        assert_eq!(registered_sockets(&lp), 0);
    });
}

#[test]
fn a_wake_up_already_queued_for_a_dropped_socket_goes_to_its_own_task_only() {
    // The footgun step 4 warned of: `deregister` cannot take back a callback
    // that the loop's poll has already put on the ready queue.
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let inner = Rc::clone(&lp);
        let polls_of_new = lp
            .block_on(async move {
                let (mut old, mut old_peer) = socket_pair().unwrap();
                let old_read: DroppableRead =
                    Rc::new(RefCell::new(Some(Box::pin(async move {
                        let mut buf = [0; 16];
                        let _ = old.read(&mut buf).await;
                    }))));
                // Waits once in the old socket's read (its waker is left
                // with the loop), then ends when that wake-up comes.
                let waiter = spawn(wait_once_in(Rc::clone(&old_read)));
                yield_now().await; // the waiter has waited

                // The read, and the socket with it, are dropped by a callback
                // that runs at the start of the next turn, after that turn's
                // poll has already queued the old socket's wake-up (its bytes
                // are being written now).
                inner.call_soon(move |_| drop(old_read.take()));
                old_peer.write_all(b"for the old one").await.unwrap();

                let (mut new, mut new_peer) = socket_pair().unwrap();
                let reader = spawn(async move {
                    let mut buf = [0; 16];
                    let (read, polls) = counted(new.read(&mut buf));
                    let n = read.await.unwrap();
                    assert_eq!(&buf[..n], b"for the new one");
                    polls.get()
                });
                sleep(Duration::from_millis(20)).await;
                new_peer.write_all(b"for the new one").await.unwrap();
                waiter.await.unwrap();
                reader.await.unwrap()
            })
            .unwrap();
        assert_eq!(
            polls_of_new, 2,
            "the new socket's task was woken for nothing"
        );
    });
}

/// A read that owns its socket, where a callback can drop it while it waits.
type DroppableRead = Rc<RefCell<Option<Pin<Box<dyn Future<Output = ()>>>>>>;

/// Polls `read` once, so the loop keeps this task's waker for it, and
/// completes when woken.
async fn wait_once_in(read: DroppableRead) {
    let mut waited = false;
    future::poll_fn(|cx| {
        if waited {
            return Poll::Ready(());
        }
        waited = true;
        let mut read = read.borrow_mut();
        let read = read.as_mut().expect("not dropped before its first poll");
        assert!(read.as_mut().poll(cx).is_pending());
        Poll::Pending
    })
    .await;
}

#[test]
fn tokens_are_never_handed_out_twice() {
    let lp = new_loop();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..100 {
        let mut listener = mio::net::TcpListener::bind(any_port()).expect("a port");
        let token = lp.register(&mut listener).expect("registered");
        assert!(seen.insert(token), "{token:?} was handed out before");
        lp.deregister(&mut listener, token).expect("deregistered");
    }
}

#[test]
fn sockets_outliving_their_loop_close_without_panicking() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (one, other) = lp.block_on(async { socket_pair() }).unwrap().unwrap();
        let listener = lp
            .block_on(async { TcpListener::bind(any_port()) })
            .unwrap()
            .unwrap();
        drop(other); // the loop is alive: this one deregisters
        assert_eq!(registered_sockets(&lp), 2);
        drop(lp);
        drop((one, listener)); // the loop is gone: nothing to deregister from
    });
}

#[test]
fn a_socket_that_outlives_its_loop_fails_to_wait_instead_of_panicking() {
    let outcome = within(HANG_LIMIT, || {
        let (mut one, _other) = new_loop()
            .block_on(async { socket_pair() })
            .unwrap()
            .unwrap();
        // That loop is gone. On a new one, the read finds nothing and must
        // wait, with a loop it no longer has.
        panic::catch_unwind(AssertUnwindSafe(|| {
            new_loop()
                .block_on(async move { one.read(&mut [0; 8]).await })
                .unwrap()
                .map_err(|err| err.to_string())
        }))
        .map_err(|_| ())
    });
    let Ok(read) = outcome else {
        panic!(
            "a read on a socket whose loop is gone panicked: wake_when_ready \
             finds the socket's loop through a Weak reference, which may be \
             gone, and then returns an error instead of waiting, which poll_io \
             hands back as the read's outcome (Ready), not Pending"
        );
    };
    let err =
        read.expect_err("a read on a socket whose loop is gone read something");
    assert!(
        err.contains("loop"),
        "the error does not say the loop is gone: {err}"
    );
}

#[test]
fn a_callback_dropped_by_the_loop_may_own_a_socket() {
    // A replaced or deregistered callback is dropped by the loop. If it owns
    // a socket, that socket's drop deregisters itself, reaching back into the
    // loop: the loop must not be holding its waiters' borrow at that moment.
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let inner = Rc::clone(&lp);
        lp.block_on(async move {
            let (first, second) = socket_pair().expect("a socket pair");
            let mut probe = mio::net::UdpSocket::bind(any_port()).expect("a probe");
            let token = inner.register(&mut probe).expect("registered");

            inner.read_wait(token, move |_| drop(first));
            inner.read_wait(token, |_| {}); // drops the callback owning first
            inner.write_wait(token, move |_| drop(second));
            inner.deregister(&mut probe, token).expect("deregistered");
        })
        .expect("the loop ran");
    });
}

#[test]
fn a_cloned_stream_writes_in_one_task_while_another_reads_it_back() {
    // The peer echoes every byte back, and stops reading while its answer
    // waits to be read: 4 MiB is far more than the four buffers between
    // (64 KiB asked of each, which the OS may double), so the writes
    // finish only if the reading goes on at the same time. Left to grow,
    // Linux's buffers hold up to 72 MiB between two loopback sockets.
    const LEN: usize = 4 * 1024 * 1024;
    const BUFFER: usize = 64 * 1024;
    fn small_buffers(socket: &socket2::SockRef) {
        socket.set_recv_buffer_size(BUFFER).unwrap();
        socket.set_send_buffer_size(BUFFER).unwrap();
    }
    within(HANG_LIMIT, || {
        let std_listener = std::net::TcpListener::bind(any_port()).unwrap();
        // An accepted socket takes its buffers' sizes from the listener.
        small_buffers(&socket2::SockRef::from(&std_listener));
        let addr = std_listener.local_addr().unwrap();
        let echo = thread::spawn(move || {
            let mut stream = std::net::TcpStream::connect(addr).unwrap();
            small_buffers(&socket2::SockRef::from(&stream));
            let mut buf = [0; 16 * 1024];
            loop {
                match stream.read(&mut buf).unwrap() {
                    0 => return, // dropping the stream closes it: end of echo
                    n => stream.write_all(&buf[..n]).unwrap(),
                }
            }
        });
        let echoed = new_loop()
            .block_on(async move {
                let mut listener = TcpListener::from_std(std_listener).unwrap();
                let (mut reader, _) = listener.accept().await.unwrap();
                let mut writer = reader.try_clone().unwrap();
                let writing = spawn(async move {
                    writer.write_all(&patterned(LEN)).await.unwrap();
                    writer.shutdown(std::net::Shutdown::Write).unwrap();
                });
                let mut echoed = Vec::new();
                reader.read_to_end(&mut echoed).await.unwrap();
                writing.await.unwrap();
                echoed
            })
            .unwrap();
        echo.join().unwrap();
        assert!(echoed == patterned(LEN), "{} bytes came back", echoed.len());
    });
}

#[test]
fn a_read_dropped_while_it_waits_leaves_no_waiter_behind() {
    // A read polled until it waits, then dropped (as a timeout or a race
    // between two futures drops the loser): it must take its waker back
    // from the loop, or `run` waits for ever on a socket nobody reads.
    let (send_outcome, outcome) = mpsc::channel();
    thread::spawn(move || {
        let lp = new_loop();
        let sockets = lp
            .block_on(async {
                let (writer, mut reader) = socket_pair().expect("a socket pair");
                {
                    let mut buf = [0; 8];
                    let mut read = pin!(reader.read(&mut buf));
                    future::poll_fn(|cx| {
                        assert!(
                            read.as_mut().poll(cx).is_pending(),
                            "nothing was sent"
                        );
                        Poll::Ready(())
                    })
                    .await;
                } // the read is dropped here, waiting
                (writer, reader)
            })
            .unwrap();
        let _ = send_outcome.send(lp.run());
        drop(sockets);
    });
    let limit = Duration::from_secs(5);
    match outcome.recv_timeout(limit) {
        Ok(ran) => ran.expect("run"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("the loop's thread ended without an outcome: it panicked (above)")
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!(
            "run still waited {limit:?} after the only read on the loop was dropped \
             while it waited: a future dropped while it waits must take its waker \
             back from the loop (async_io's guard does), or the loop waits for it"
        ),
    }
}
