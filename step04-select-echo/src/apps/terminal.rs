//! `client [ADDR]`: a client to type to the echo server, so trying `serve`
//! needs nothing beyond the workshop (no netcat). It is not on the loop:
//! plain blocking std sockets and two threads, one that sends what you
//! type and one that prints what comes back.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

/// Connects to the first of `addrs` that answers, sends standard input as
/// it comes, and prints what the server sends back. When standard input
/// ends (Ctrl-D), it closes its sending side, as `nc -N` does, and keeps
/// printing until the server closes the connection; then it returns. A
/// server that closes first, before your input ended, went away in the
/// middle of the session: that is an error, and it says so.
pub fn talk(addrs: &[SocketAddr]) -> Result<(), String> {
    let stream =
        TcpStream::connect(addrs).map_err(|err| cannot_connect(addrs, &err))?;
    let mut sending = stream.try_clone().map_err(|err| err.to_string())?;
    let input_ended = Arc::new(AtomicBool::new(false));
    let ended = Arc::clone(&input_ended);
    // Not joined: if the server closes first, this thread may still be
    // waiting for a line you have not typed, and returning ends it.
    thread::spawn(move || {
        let _ = io::copy(&mut io::stdin().lock(), &mut sending);
        // Marked before the shutdown that lets the server close, so the
        // close is never taken for the server going away.
        ended.store(true, Ordering::Release);
        let _ = sending.shutdown(Shutdown::Write);
    });
    print_replies(&stream)?;
    if input_ended.load(Ordering::Acquire) {
        Ok(())
    } else {
        Err("the server closed the connection before your input ended: \
             it stopped or crashed"
            .to_owned())
    }
}

/// Prints what the server sends until it closes the connection.
fn print_replies(mut stream: &TcpStream) -> Result<(), String> {
    let mut stdout = io::stdout().lock();
    let mut buf = [0; 4096];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => {
                return Err(format!("the connection to the server failed: {err}"));
            }
        };
        // A closed stdout (`client | head -n 1`) ends the client quietly,
        // as it ends the demos: main.rs's panic hook exits on this message,
        // the one `println!` panics with.
        stdout
            .write_all(&buf[..n])
            .and_then(|()| stdout.flush())
            .unwrap_or_else(|err| panic!("failed printing to stdout: {err}"));
    }
}

fn cannot_connect(addrs: &[SocketAddr], err: &io::Error) -> String {
    let tried: Vec<String> = addrs.iter().map(ToString::to_string).collect();
    format!("cannot connect to {}: {err}", tried.join(" or "))
}
