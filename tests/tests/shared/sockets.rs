// The tests of `step08_sockets.rs` that hold for any runtime with step 8's
// API, one copy: `step08_sockets.rs` and `fast`'s `beyond/tests/sockets.rs`
// name their crate `step`, include this file, and each gives the server of
// `a_cancelled_server_closes_its_listener_and_its_connections`: step 8's
// demo's, or `fast`'s own (`fast` has no demo).

use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::Duration;

use step::{
    EventLoop, JoinError, TcpListener, TcpStream, TimedOut, socket_pair, spawn,
    timeout, yield_now,
};
use workshop_tests::{DropFlag, HANG_LIMIT, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

fn any_port() -> SocketAddr {
    (Ipv4Addr::LOCALHOST, 0).into()
}

/// Reads until the peer closes; says how many bytes came first.
async fn bytes_until_closed(stream: &mut TcpStream) -> usize {
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.expect("a clean close")
}

/// A server that `serve` runs on a listener, and three clients: cancelled,
/// the server closes its listener and its connections.
fn a_cancelled_server_closes_its_listener_and_its_connections_serving<F>(
    serve: fn(TcpListener) -> F,
) where
    F: Future<Output = ()> + 'static,
{
    within(HANG_LIMIT, move || {
        let lp = new_loop();
        let on_loop = Rc::clone(&lp);
        let (at_shutdown, closed, after, refused) = lp
            .block_on(async move {
                let listener = TcpListener::bind(any_port()).unwrap();
                let addr = listener.local_addr().unwrap();
                let server = spawn(serve(listener));
                let mut clients = Vec::new();
                for _ in 0..3 {
                    let mut client = TcpStream::connect(addr).await.unwrap();
                    client.write_all(b"ping\n").await.unwrap();
                    let mut reply = [0; 16];
                    assert!(client.read(&mut reply).await.unwrap() > 0);
                    clients.push(client);
                }
                let at_shutdown = on_loop.registered_sockets();
                assert!(server.cancel());
                let mut closed = 0;
                for client in &mut clients {
                    closed += usize::from(bytes_until_closed(client).await == 0);
                }
                let after = on_loop.registered_sockets();
                let refused = TcpStream::connect(addr).await.map(drop);
                (at_shutdown, closed, after, refused)
            })
            .unwrap();
        assert_eq!(at_shutdown, 7, "a listener, 3 connections, 3 clients");
        assert_eq!(closed, 3, "connections the server closed");
        assert_eq!(after, 3, "only the clients' sockets are left");
        let err = refused.expect_err("the listener is closed");
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
    });
}

#[test]
fn a_task_cancelled_while_it_waits_to_read_closes_its_socket() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let on_loop = Rc::clone(&lp);
        let (during, after, peer_read) = lp
            .block_on(async move {
                let (mut near, mut far) = socket_pair().unwrap();
                let reader = spawn(async move {
                    let mut buf = [0; 16];
                    far.read(&mut buf).await
                });
                yield_now().await; // the reader waits on its socket
                let during = on_loop.registered_sockets();
                assert!(reader.cancel());
                assert!(matches!(reader.await, Err(JoinError::Cancelled)));
                let after = on_loop.registered_sockets();
                let mut buf = [0; 16];
                let peer_read = near.read(&mut buf).await.unwrap();
                (during, after, peer_read)
            })
            .unwrap();
        assert_eq!((during, after), (2, 1), "sockets on the loop");
        assert_eq!(peer_read, 0, "the peer did not see the socket close");
        let started = std::time::Instant::now();
        lp.run().unwrap(); // no read waits on the loop any more
        assert!(started.elapsed() < Duration::from_secs(5));
    });
}

#[test]
fn a_read_given_up_by_timeout_is_dropped_and_its_socket_closed() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let on_loop = Rc::clone(&lp);
        let (outcome, left, peer_read) = lp
            .block_on(async move {
                let (mut near, mut far) = socket_pair().unwrap();
                let outcome = timeout(Duration::from_millis(50), async move {
                    let mut buf = [0; 16];
                    far.read(&mut buf).await.map(drop)
                })
                .await;
                let left = on_loop.registered_sockets();
                let mut buf = [0; 16];
                let peer_read = near.read(&mut buf).await.unwrap();
                (outcome.map(|read| read.is_ok()), left, peer_read)
            })
            .unwrap();
        assert_eq!(outcome, Err(TimedOut));
        assert_eq!(left, 1, "the timed-out socket is still on the loop");
        assert_eq!(peer_read, 0);
    });
}

#[test]
fn block_on_drops_a_task_waiting_in_accept_and_frees_its_port() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (flag, dropped) = DropFlag::new();
        let addr = lp
            .block_on(async move {
                let mut listener = TcpListener::bind(any_port()).unwrap();
                let addr = listener.local_addr().unwrap();
                spawn(async move {
                    let _flag = flag;
                    listener.accept().await.map(drop)
                });
                yield_now().await; // it waits in accept
                addr
            })
            .unwrap();
        assert!(dropped.get(), "the accepting task was not dropped");
        assert_eq!(lp.registered_sockets(), 0);
        let err = std::net::TcpStream::connect(addr).expect_err("no listener");
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
    });
}

#[test]
fn dropping_the_loop_drops_a_task_that_holds_a_listener() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let mut listener = lp
            .block_on(async { TcpListener::bind(any_port()) })
            .unwrap()
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let (flag, dropped) = DropFlag::new();
        let accepting = lp.spawn(async move {
            let _flag = flag;
            listener.accept().await.map(drop)
        });
        drop(lp); // the task is still on it, its listener registered
        assert!(dropped.get(), "the task outlived its loop");
        assert!(accepting.is_finished());
        let err = std::net::TcpStream::connect(addr).expect_err("no listener");
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
    });
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

/// The bytes and the end of stream come in one readable edge: the first
/// read takes the bytes, the second must find the end of stream, though no
/// edge follows. Step 8 tries every read first, and finds it. A runtime
/// that takes a short read for proof that its socket is empty, and waits
/// for the next edge without trying (`fast` does), must remember that the
/// socket was closed, or the second read waits for ever.
#[test]
fn a_short_read_still_sees_the_end_of_stream_that_came_with_its_bytes() {
    within(HANG_LIMIT, || {
        let reads = new_loop()
            .block_on(async {
                let (mut near, mut far) = socket_pair().unwrap();
                near.write_all(b"hi").await.unwrap();
                drop(near);
                // The loop's next waits see the bytes and the close, in one
                // edge, while nobody reads yet.
                step::sleep(Duration::from_millis(50)).await;
                let mut buf = [0; 64];
                let first = far.read(&mut buf).await.unwrap();
                let second = far.read(&mut buf).await.unwrap();
                (first, second)
            })
            .unwrap();
        assert_eq!(reads, (2, 0), "(bytes read, then the end of stream)");
    });
}

/// After a read that took fewer bytes than its buffer holds, bytes that
/// come later still wake the reader.
#[test]
fn after_a_short_read_bytes_that_come_later_are_read() {
    within(HANG_LIMIT, || {
        let got = new_loop()
            .block_on(async {
                let (mut near, mut far) = socket_pair().unwrap();
                let writer = spawn(async move {
                    near.write_all(b"a").await.unwrap();
                    step::sleep(Duration::from_millis(30)).await;
                    near.write_all(b"b").await.unwrap();
                    near
                });
                let mut buf = [0; 64];
                let mut got = Vec::new();
                for _ in 0..2 {
                    let n = far.read(&mut buf).await.unwrap();
                    got.extend_from_slice(&buf[..n]);
                }
                drop(writer.await.unwrap());
                got
            })
            .unwrap();
        assert_eq!(got, b"ab");
    });
}
