//! `tests/tests/step08_descriptors.rs` on `fast`, the same scenarios. Step 8 leaks no file descriptor: 10,000 connects under `timeout`, won
//! and lost, leave the process with the descriptors it had, and leave no
//! timer behind.
//!
//! Linux only: it counts the entries of `/proc/self/fd`. It is the only
//! test in this file because that count is the whole process's, and tests
//! in one file run side by side.

// Linux only: it reads `/proc/self/fd`, which macOS and Windows lack.
#![cfg(target_os = "linux")]

use std::fs;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::rc::Rc;
use std::time::Duration;

use fast::{EventLoop, TcpListener, TcpStream, TimedOut, spawn, timeout};
use socket2::{Domain, Socket, Type};
use workshop_tests::within;

const CYCLES: usize = 10_000;

/// One cycle in this many connects where no one will answer, and so
/// times out.
const ONE_IN: usize = 10;

fn open_descriptors() -> usize {
    fs::read_dir("/proc/self/fd")
        .expect("Linux has /proc/self/fd")
        .count()
}

fn any_port() -> SocketAddr {
    (Ipv4Addr::LOCALHOST, 0).into()
}

/// A listener that never accepts, with a backlog of one: once that place
/// is taken, Linux drops every new handshake's first packet, so a connect
/// there waits until whoever made it gives up.
fn unanswered_listener() -> StdListener {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("a socket");
    socket.bind(&any_port().into()).expect("a free port");
    socket.listen(0).expect("listening");
    socket.into()
}

const GREETING: &[u8] = b"hi\n";

/// Connects to `addr` and reads what the server says before it closes:
/// a read that waits, so the `timeout` around it sets its timer.
async fn greeting(addr: SocketAddr) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(addr).await?;
    let mut greeting = Vec::new();
    stream.read_to_end(&mut greeting).await?;
    Ok(greeting)
}

/// What the connects came to.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    connected: usize,
    timed_out: usize,
}

#[test]
fn ten_thousand_connects_under_timeout_leave_no_descriptor_open() {
    let before_loop = open_descriptors();
    let (tally, during, after_cycles, timers) =
        // The cycles take a few seconds; two minutes means a hang.
        within(Duration::from_secs(120), || {
            let lp = Rc::new(EventLoop::new().expect("a new poller"));
            let on_loop = Rc::clone(&lp);
            lp.block_on(async move {
                // Greets each client and closes its connection.
                let mut answering = TcpListener::bind(any_port()).unwrap();
                let answered = answering.local_addr().unwrap();
                spawn(async move {
                    loop {
                        if let Ok((mut stream, _)) = answering.accept().await {
                            let _ = stream.write_all(GREETING).await;
                        }
                    }
                });
                let unanswered = unanswered_listener();
                let ignored = unanswered.local_addr().unwrap();
                // Take the places in its backlog (one, on Linux today),
                // until a connect there waits.
                let mut placed = Vec::new();
                while let Ok(stream) =
                    timeout(Duration::from_millis(200), TcpStream::connect(ignored))
                        .await
                {
                    placed.push(stream.unwrap());
                    assert!(placed.len() < 10, "the backlog never fills");
                }
                let during = (open_descriptors(), on_loop.registered_sockets());

                let mut tally = Tally::default();
                for cycle in 0..CYCLES {
                    let (addr, limit) = if cycle % ONE_IN == 0 {
                        (ignored, Duration::from_millis(1))
                    } else {
                        (answered, Duration::from_secs(10))
                    };
                    match timeout(limit, greeting(addr)).await {
                        Ok(greeting) => {
                            assert_eq!(
                                greeting.expect("the listener answers"),
                                GREETING
                            );
                            tally.connected += 1;
                        }
                        Err(TimedOut) => tally.timed_out += 1,
                    }
                }
                let after_cycles =
                    (open_descriptors(), on_loop.registered_sockets());
                (tally, during, after_cycles, on_loop.timer_heap_size().0)
            })
            .unwrap()
        });
    let after_loop = open_descriptors();

    assert_eq!(
        tally,
        Tally {
            connected: CYCLES - CYCLES / ONE_IN,
            timed_out: CYCLES / ONE_IN
        }
    );
    assert_eq!(after_cycles, during, "(descriptors, sockets on the loop)");
    assert_eq!(after_loop, before_loop, "descriptors open after the loop");
    // Each greeting that came in time cancelled its 10 s timer; left in
    // the heap, there would be 9,000 of them.
    assert!(timers <= 101, "{timers} timers left in the heap");
}
