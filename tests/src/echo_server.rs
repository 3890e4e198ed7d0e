//! The echo server's contract, as scenarios a step's real binary must pass
//! in `serve` mode: many clients at once, clients that misbehave or vanish,
//! a client that never reads, and a process that runs out of file
//! descriptors. Every step with an echo server runs all of them through
//! `echo_server_tests!`.
//!
//! Every socket has a time limit, every wait is bounded, and every server
//! is killed when its scenario ends, passing or failing.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Barrier;
use std::thread;
use std::time::Duration;

use crate::server::RunningServer;

/// Which step's echo server, and the line limit it promises.
#[derive(Debug, Clone, Copy)]
pub struct EchoServer {
    /// The step's package, run as `PACKAGE serve 127.0.0.1:0`.
    pub package: &'static str,
    /// The longest line it answers, newline not counted.
    pub max_line: usize,
    /// Its answer to a longer line.
    pub too_long: &'static [u8],
}

/// Writes one `#[test]` for each scenario here, run against `$server` (an
/// `EchoServer`), in the test file that calls it; a new scenario is listed
/// here once, and every step's server faces it.
#[macro_export]
macro_rules! echo_server_tests {
    ($server:expr) => {
        $crate::echo_server_tests!(@each $server, $crate::echo_server, [
            serve_mode_answers_each_line_as_it_is_typed_like_nc_shows,
            two_hundred_clients_at_once_each_get_exactly_their_own_replies_in_order,
            a_line_arriving_one_byte_at_a_time_is_answered_once_and_whole,
            bytes_that_are_not_utf8_come_back_exactly,
            an_overlong_line_gets_an_error_and_the_lines_after_it_are_answered,
            after_a_half_close_every_owed_reply_is_sent_then_the_server_closes,
            a_client_that_reads_late_gets_every_reply_once_it_reads,
            a_last_line_without_a_newline_is_answered_when_the_client_closes,
        ]);
        // Linux only: they read `/proc` and run util-linux's `prlimit`.
        #[cfg(target_os = "linux")]
        $crate::echo_server_tests!(@each $server, $crate::echo_server::linux, [
            clients_that_leave_abruptly_are_freed_and_the_others_are_served,
            a_client_that_never_reads_cannot_grow_the_servers_memory,
            an_idle_server_sleeps_even_with_clients_connected,
            running_out_of_descriptors_neither_crashes_nor_spins_and_service_resumes,
            a_pause_is_announced_only_while_a_client_waits,
            a_full_stderr_costs_no_client_when_descriptors_run_out,
            a_closed_stderr_pipe_costs_no_client_when_descriptors_run_out,
        ]);
    };
    (@each $server:expr, $module:path, [$($scenario:ident,)*]) => {
        $(
            #[test]
            fn $scenario() {
                use $module as scenarios;
                scenarios::$scenario($server);
            }
        )*
    };
}

/// Longer than any healthy exchange here takes, even on a busy machine.
const PATIENCE: Duration = Duration::from_secs(20);

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("the server accepts connections");
    stream
        .set_read_timeout(Some(crate::patience(PATIENCE)))
        .expect("a timeout");
    stream
        .set_write_timeout(Some(crate::patience(PATIENCE)))
        .expect("a timeout");
    stream
}

/// Sends `request`, closes the sending side, and returns all the server
/// sent before it closed the connection.
fn exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = connect(addr);
    stream
        .write_all(request)
        .expect("the server takes the request");
    stream.shutdown(Shutdown::Write).expect("a half-close");
    let mut reply = Vec::new();
    stream
        .read_to_end(&mut reply)
        .expect("the server replies, then closes");
    reply
}

/// `Got: ` and the line, for each line.
fn replies_to(lines: &[&[u8]]) -> Vec<u8> {
    let mut replies = Vec::new();
    for line in lines {
        replies.extend_from_slice(b"Got: ");
        replies.extend_from_slice(line);
        replies.push(b'\n');
    }
    replies
}

/// Checks that `reply` is exactly the replies to `lines`; on failure it
/// says where they part, not megabytes of both.
fn assert_replies(reply: &[u8], lines: &[&[u8]]) {
    let expected = replies_to(lines);
    let agree = reply
        .iter()
        .zip(&expected)
        .take_while(|(a, b)| a == b)
        .count();
    assert!(
        reply == expected,
        "{} bytes of replies, {} expected; they part at byte {agree}",
        reply.len(),
        expected.len()
    );
}

fn lines_of(lines: &[&[u8]]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|line| [*line, b"\n"].concat())
        .collect()
}

pub fn serve_mode_answers_each_line_as_it_is_typed_like_nc_shows(echo: EchoServer) {
    let server = RunningServer::start(echo.package);
    let mut stream = connect(server.addr());
    let mut replies = BufReader::new(stream.try_clone().expect("a second handle"));
    for line in ["hello", "how are you?", ""] {
        stream
            .write_all(format!("{line}\n").as_bytes())
            .expect("sent");
        let mut reply = String::new();
        replies.read_line(&mut reply).expect("a reply");
        assert_eq!(reply, format!("Got: {line}\n"));
    }
    // Ctrl-D in nc: the server sees the end and closes its side too.
    stream.shutdown(Shutdown::Write).expect("a half-close");
    let mut rest = String::new();
    replies.read_to_string(&mut rest).expect("a clean close");
    assert_eq!(rest, "");
}

pub fn two_hundred_clients_at_once_each_get_exactly_their_own_replies_in_order(
    echo: EchoServer,
) {
    const CLIENTS: usize = 200;
    const LINES: usize = 200;
    let server = RunningServer::start(echo.package);
    let addr = server.addr();
    let start_together = Barrier::new(CLIENTS);

    let failures: Vec<String> = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let start_together = &start_together;
                scope.spawn(move || {
                    let lines: Vec<Vec<u8>> = (0..LINES)
                        .map(|line| {
                            format!("client {client} line {line}").into_bytes()
                        })
                        .collect();
                    let lines: Vec<&[u8]> =
                        lines.iter().map(Vec::as_slice).collect();
                    let request = lines_of(&lines);
                    start_together.wait();
                    let mut stream = connect(addr);
                    stream.set_nodelay(true).expect("no delay");
                    // Uneven pieces, so lines straddle the writes.
                    for piece in request.chunks(7 + client % 50) {
                        stream.write_all(piece).expect("the server takes it");
                    }
                    stream.shutdown(Shutdown::Write).expect("a half-close");
                    let mut reply = Vec::new();
                    stream
                        .read_to_end(&mut reply)
                        .expect("all replies, then a close");
                    (reply != replies_to(&lines)).then(|| {
                        format!(
                            "client {client} got {} bytes, not its replies",
                            reply.len()
                        )
                    })
                })
            })
            .collect();
        clients
            .into_iter()
            .filter_map(|client| client.join().expect("the client thread ran"))
            .collect()
    });
    assert!(failures.is_empty(), "{failures:#?}");
}

pub fn a_line_arriving_one_byte_at_a_time_is_answered_once_and_whole(
    echo: EchoServer,
) {
    let server = RunningServer::start(echo.package);
    let mut stream = connect(server.addr());
    stream.set_nodelay(true).expect("no delay");
    for &byte in b"one byte at a time" {
        stream.write_all(&[byte]).expect("sent");
        thread::sleep(Duration::from_millis(5));
    }
    // No newline yet: no reply yet, not even part of one.
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .expect("a timeout");
    let early = stream.read(&mut [0; 64]);
    assert!(
        matches!(&early, Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        "the server answered before the line ended: {early:?}"
    );
    stream
        .set_read_timeout(Some(crate::patience(PATIENCE)))
        .expect("a timeout");
    stream.write_all(b"\n").expect("sent");
    stream.shutdown(Shutdown::Write).expect("a half-close");
    let mut reply = Vec::new();
    stream
        .read_to_end(&mut reply)
        .expect("the reply, then a close");
    assert_eq!(reply, b"Got: one byte at a time\n");
}

pub fn bytes_that_are_not_utf8_come_back_exactly(echo: EchoServer) {
    let server = RunningServer::start(echo.package);
    let every_byte_but_newline: Vec<u8> =
        (0..=255).filter(|&b| b != b'\n').collect();
    let lines: [&[u8]; 3] = [&every_byte_but_newline, b"\xff\xfe\x00", b"caf\xe9\r"];
    let reply = exchange(server.addr(), &lines_of(&lines));
    assert_eq!(reply, replies_to(&lines));
}

pub fn an_overlong_line_gets_an_error_and_the_lines_after_it_are_answered(
    echo: EchoServer,
) {
    let server = RunningServer::start(echo.package);
    let longest = vec![b'y'; echo.max_line];
    let one_too_long = vec![b'x'; echo.max_line + 1];
    let far_too_long = vec![b'z'; 100 * echo.max_line];
    let request =
        lines_of(&[&longest, &one_too_long, b"between", &far_too_long, b"after"]);

    let reply = exchange(server.addr(), &request);

    let mut expected = replies_to(&[&longest]);
    expected.extend_from_slice(echo.too_long);
    expected.extend_from_slice(&replies_to(&[b"between"]));
    expected.extend_from_slice(echo.too_long);
    expected.extend_from_slice(&replies_to(&[b"after"]));
    assert_eq!(
        String::from_utf8_lossy(&reply),
        String::from_utf8_lossy(&expected)
    );
}

pub fn after_a_half_close_every_owed_reply_is_sent_then_the_server_closes(
    echo: EchoServer,
) {
    let server = RunningServer::start(echo.package);
    // Far more replies than the server's outbox holds at once, all owed
    // when the client closes its sending side.
    let lines: Vec<Vec<u8>> = (0..2000)
        .map(|n| format!("line {n}").into_bytes())
        .collect();
    let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    let reply = exchange(server.addr(), &lines_of(&lines));
    assert_replies(&reply, &lines);
}

pub fn a_client_that_reads_late_gets_every_reply_once_it_reads(echo: EchoServer) {
    let server = RunningServer::start(echo.package);
    let mut stream = connect(server.addr());
    let mut sender = stream.try_clone().expect("a second handle");
    // Megabytes of replies: more than all the socket buffers in between
    // hold, so the server must stop reading for a while, then (when this
    // client reads at last) start again by itself.
    let lines: Vec<Vec<u8>> = (0..100_000)
        .map(|n| format!("line {n:>6} of a long exchange").into_bytes())
        .collect();
    let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    let request = lines_of(&lines);
    let reply = thread::scope(|scope| {
        scope.spawn(|| {
            sender
                .write_all(&request)
                .expect("the server takes it all, in time");
            sender.shutdown(Shutdown::Write).expect("a half-close");
        });
        thread::sleep(Duration::from_millis(500));
        let mut reply = Vec::new();
        stream
            .read_to_end(&mut reply)
            .expect("every reply, then a close");
        reply
    });
    assert_replies(&reply, &lines);
}

pub fn a_last_line_without_a_newline_is_answered_when_the_client_closes(
    echo: EchoServer,
) {
    let server = RunningServer::start(echo.package);
    let reply = exchange(server.addr(), b"first\nno newline");
    assert_eq!(reply, b"Got: first\nGot: no newline\n");
}

/// The scenarios below watch the server process through Linux's `/proc`
/// (one also limits its descriptors with util-linux's `prlimit`).
// Linux only: macOS and Windows have neither `/proc` nor `prlimit`.
#[cfg(target_os = "linux")]
pub mod linux;
