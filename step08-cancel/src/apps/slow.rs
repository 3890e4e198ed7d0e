//! The slow server of seed 002: it answers `request\n` with `response\n`,
//! but only after a delay, the way a busy service far away would.
//!
//! Each connection carries one request, as the seed's clients make them.
//! The delays come from a seeded generator, so every run meets the same
//! ones. They span 0.05 s to 0.2 s: the seed's 0.5 s to 2 s scaled down ten
//! times, so that the demo takes seconds rather than half a minute.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use crate::net::{TcpListener, TcpStream, accept_clients};
use crate::sleep::sleep;

pub const REQUEST: &[u8] = b"request\n";
pub const RESPONSE: &[u8] = b"response\n";
const UNKNOWN: &[u8] = b"error: unknown request\n";

const SHORTEST_MS: u64 = 50;
const LONGEST_MS: u64 = 200;

/// Serves slow answers on `listener` for as long as its task runs; the
/// delays come from `Delays::new(seed)`, one per request, in the order the
/// requests arrive.
pub async fn serve(listener: TcpListener, seed: u64) {
    let delays = Rc::new(RefCell::new(Delays::new(seed)));
    accept_clients(listener, move |stream| {
        answer_request(stream, Rc::clone(&delays))
    })
    .await;
}

// ANCHOR: delays
/// The server's delays: a small pseudo-random generator (xorshift) started
/// from a seed, so the same seed gives the same delays on every run.
#[derive(Debug, Clone)]
pub struct Delays {
    state: u64,
}

impl Delays {
    pub fn new(seed: u64) -> Self {
        // Xorshift stays at zero for ever once there; any other seed works.
        Delays { state: seed.max(1) }
    }
}

impl Iterator for Delays {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let spread = self.state % (LONGEST_MS - SHORTEST_MS + 1);
        Some(Duration::from_millis(SHORTEST_MS + spread))
    }
}
// ANCHOR_END: delays

// ANCHOR: slow_reply
/// One connection: reads the request line, then answers it, after the next
/// delay if it is `request`, at once if it is anything else, and closes.
async fn answer_request(mut stream: TcpStream, delays: Rc<RefCell<Delays>>) {
    let Ok(request) = read_request(&mut stream).await else {
        return; // the client left before its request was complete
    };
    let reply = if request == REQUEST {
        let delay = delays.borrow_mut().next().expect("delays never run out");
        sleep(delay).await;
        RESPONSE
    } else {
        UNKNOWN
    };
    // All sent, or the client is gone: the stream closes here either way.
    let _ = stream.write_all(reply).await;
}
// ANCHOR_END: slow_reply

/// Reads until the first line is complete and returns it, newline included.
/// Bytes that outgrow a request without a newline come back as they are:
/// they are no request. A client that closes before a line is complete is
/// an error.
async fn read_request(stream: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut request = Vec::new();
    let mut chunk = [0; 64];
    loop {
        if let Some(end) = request.iter().position(|&byte| byte == b'\n') {
            request.truncate(end + 1);
            return Ok(request);
        }
        if request.len() > REQUEST.len() {
            return Ok(request);
        }
        match stream.read(&mut chunk).await? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => request.extend_from_slice(&chunk[..n]),
        }
    }
}
