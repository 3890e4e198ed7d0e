//! The slow server of seed 002: it answers `request` with `response`, but
//! only after a delay, the way a busy service far away would.
//!
//! Each connection carries one request, as the seed's clients make them.
//! The delays come from a seeded generator, so every run meets the same
//! ones. It speaks one of two protocols: the demo's (`DEMO`: lines, delays
//! of 0.05 s to 0.2 s, the seed's scaled down ten times so that the demo
//! takes seconds rather than half a minute) or the seed's own (`SEED_002`:
//! bare words, 0.5 s to 2 s), which the seed's Python clients speak.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use crate::net::{TcpListener, TcpStream, accept_clients};
use crate::sleep::sleep;

// ANCHOR: protocols
/// The words the server speaks, and how long it makes a client wait.
#[derive(Debug, Clone, Copy)]
pub struct Protocol {
    pub request: &'static [u8],
    pub response: &'static [u8],
    pub shortest_ms: u64,
    pub longest_ms: u64,
}

/// The demo's: a line each way, and the seed's delays scaled down ten times.
pub const DEMO: Protocol = Protocol {
    request: b"request\n",
    response: b"response\n",
    shortest_ms: 50,
    longest_ms: 200,
};

/// The seed's own server's: bare words, no newline, 0.5 s to 2 s. The
/// seed's Python clients send `request`, read once, and close.
pub const SEED_002: Protocol = Protocol {
    request: b"request",
    response: b"response",
    shortest_ms: 500,
    longest_ms: 2000,
};
// ANCHOR_END: protocols

pub const REQUEST: &[u8] = DEMO.request;
pub const RESPONSE: &[u8] = DEMO.response;
const UNKNOWN: &[u8] = b"error: unknown request\n";

/// Serves slow answers in `protocol` on `listener` for as long as its task
/// runs; the delays come from `Delays::new(seed, protocol)`, one per
/// request, in the order the requests arrive.
pub async fn serve(listener: TcpListener, protocol: Protocol, seed: u64) {
    let delays = Rc::new(RefCell::new(Delays::new(seed, protocol)));
    accept_clients(listener, move |stream| {
        answer_request(stream, protocol, Rc::clone(&delays))
    })
    .await;
}

// ANCHOR: delays
/// The server's delays: a small pseudo-random generator (xorshift) started
/// from a seed, so the same seed gives the same delays on every run, each
/// within `protocol`'s range.
#[derive(Debug, Clone)]
pub struct Delays {
    state: u64,
    shortest_ms: u64,
    longest_ms: u64,
}

impl Delays {
    pub fn new(seed: u64, protocol: Protocol) -> Self {
        Delays {
            // Xorshift stays at zero for ever once there; any other seed works.
            state: seed.max(1),
            shortest_ms: protocol.shortest_ms,
            longest_ms: protocol.longest_ms,
        }
    }
}

impl Iterator for Delays {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let spread = self.state % (self.longest_ms - self.shortest_ms + 1);
        Some(Duration::from_millis(self.shortest_ms + spread))
    }
}
// ANCHOR_END: delays

// ANCHOR: slow_reply
/// One connection: reads the request, then answers it, after the next
/// delay if it is the protocol's request, at once if it is anything else,
/// and closes.
async fn answer_request(
    mut stream: TcpStream,
    protocol: Protocol,
    delays: Rc<RefCell<Delays>>,
) {
    let Ok(request) = read_request(&mut stream, protocol).await else {
        return; // the client left before its request was complete
    };
    let reply = if request == protocol.request {
        let delay = delays.borrow_mut().next().expect("delays never run out");
        sleep(delay).await;
        protocol.response
    } else {
        UNKNOWN
    };
    // All sent, or the client is gone: the stream closes here either way.
    let _ = stream.write_all(reply).await;
}
// ANCHOR_END: slow_reply

/// Reads until the request is complete and returns it. A request is
/// complete at its first newline (included) or once it is as long as the
/// protocol's request, whichever comes first: the seed's clients send a
/// bare `request` and wait. A client that closes before its request is
/// complete is an error.
async fn read_request(
    stream: &mut TcpStream,
    protocol: Protocol,
) -> io::Result<Vec<u8>> {
    let mut request = Vec::new();
    let mut chunk = [0; 64];
    loop {
        let longest = protocol.request.len();
        let newline = request.iter().position(|&byte| byte == b'\n');
        let end = newline.map_or(longest, |at| (at + 1).min(longest));
        if request.len() >= end {
            request.truncate(end);
            return Ok(request);
        }
        match stream.read(&mut chunk).await? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => request.extend_from_slice(&chunk[..n]),
        }
    }
}
