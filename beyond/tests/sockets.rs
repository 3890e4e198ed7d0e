//! Step 8's socket tests on `fast`: `tests/tests/shared/sockets.rs`, the
//! file step 8's `step08_sockets.rs` includes too. Where step 8 cancels its
//! demo's echo server, `fast`, which has no demo, cancels the small one below.

use fast as step;

include!("../../tests/tests/shared/sockets.rs");

#[test]
fn a_cancelled_server_closes_its_listener_and_its_connections() {
    a_cancelled_server_closes_its_listener_and_its_connections_serving(echo::serve);
}

/// An echo server on `fast`'s accept loop, where step 8's test uses its
/// demo's (`step08::apps::echo::serve`, on the same `accept_clients`).
mod echo {
    use fast::TcpStream;
    use fast::net::accept_clients;

    pub async fn serve(listener: fast::TcpListener) {
        accept_clients(listener, serve_connection).await;
    }

    async fn serve_connection(mut stream: TcpStream) {
        let mut buffer = [0; 1024];
        while let Ok(n @ 1..) = stream.read(&mut buffer).await {
            if stream.write_all(&buffer[..n]).await.is_err() {
                return;
            }
        }
    }
}

/// Tasks that yield to each other without end keep the loop's turn going
/// (`fast` polls up to 61 in a row), but not for ever: a reader still
/// gets the bytes that arrive on its socket.
#[test]
fn tasks_that_never_stop_yielding_do_not_hold_up_a_socket() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let got = lp
            .block_on(async {
                for _ in 0..2 {
                    spawn(async {
                        loop {
                            yield_now().await;
                        }
                    });
                }
                let (mut one, mut other) = socket_pair().unwrap();
                let reader = spawn(async move {
                    let mut buf = [0; 5];
                    let n = other.read(&mut buf).await.unwrap();
                    buf[..n].to_vec()
                });
                yield_now().await; // the reader waits on its socket
                one.write_all(b"hello").await.unwrap();
                reader.await.unwrap()
            })
            .unwrap();
        assert_eq!(got, b"hello");
    });
}
