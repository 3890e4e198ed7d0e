//! `client [ADDR]`: a client to type to the echo server, so trying `serve`
//! needs nothing beyond the workshop (no netcat). It is not on the loop:
//! plain blocking std sockets and two threads, one that sends what you
//! type and one that prints what comes back.

use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::thread;

/// Connects to the first of `addrs` that answers, sends standard input as
/// it comes, and prints what the server sends back. When standard input
/// ends (Ctrl-D), it closes its sending side, as `nc -N` does, and keeps
/// printing until the server closes the connection; then it returns.
pub fn talk(addrs: &[SocketAddr]) -> Result<(), String> {
    let stream =
        TcpStream::connect(addrs).map_err(|err| cannot_connect(addrs, &err))?;
    let mut sending = stream.try_clone().map_err(|err| err.to_string())?;
    // Not joined: if the server closes first, this thread may still be
    // waiting for a line you have not typed, and returning ends it.
    thread::spawn(move || {
        let _ = io::copy(&mut io::stdin().lock(), &mut sending);
        let _ = sending.shutdown(Shutdown::Write);
    });
    let mut stdout = io::stdout().lock();
    io::copy(&mut &stream, &mut stdout).map_err(|err| err.to_string())?;
    stdout.flush().map_err(|err| err.to_string())
}

fn cannot_connect(addrs: &[SocketAddr], err: &io::Error) -> String {
    let tried: Vec<String> = addrs.iter().map(ToString::to_string).collect();
    format!("cannot connect to {}: {err}", tried.join(" or "))
}
