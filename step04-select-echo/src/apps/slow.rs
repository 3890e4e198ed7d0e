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

use mio::Token;
use mio::net::{TcpListener, TcpStream};

use crate::apps::net::{Server, read_now, write_now};
use crate::event_loop::EventLoop;

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

/// Starts the slow server on `listener`, speaking `protocol`; its delays
/// come from `Delays::new(seed, protocol)`, one per request, in the order
/// requests arrive.
pub fn serve(
    lp: &EventLoop,
    listener: TcpListener,
    protocol: Protocol,
    seed: u64,
) -> io::Result<Server> {
    let delays = Rc::new(RefCell::new(Delays::new(seed, protocol)));
    Server::start(lp, listener, move |lp, mut stream| {
        let Ok(token) = lp.register(&mut stream) else {
            return;
        };
        let exchange = Rc::new(RefCell::new(Exchange {
            stream,
            token,
            protocol,
            request: Vec::new(),
            unsent: &[],
        }));
        read_request(lp, exchange, delays.clone());
    })
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

/// One connection: the request as it arrives, then the reply as it leaves.
struct Exchange {
    stream: TcpStream,
    token: Token,
    protocol: Protocol,
    request: Vec<u8>,
    unsent: &'static [u8],
}

// ANCHOR: slow_reply
/// Reads until the request is complete, then answers it: after the next
/// delay if it is the protocol's request, at once if it is anything else.
fn read_request(
    lp: &EventLoop,
    exchange: Rc<RefCell<Exchange>>,
    delays: Rc<RefCell<Delays>>,
) {
    let outcome = exchange.borrow_mut().read_until_complete();
    let protocol = exchange.borrow().protocol;
    match outcome {
        Ok(Some(request)) if request == protocol.request => {
            let delay = delays.borrow_mut().next().expect("delays never run out");
            exchange.borrow_mut().unsent = protocol.response;
            lp.call_later(delay, move |lp| send_reply(lp, exchange));
        }
        Ok(Some(_)) => {
            exchange.borrow_mut().unsent = UNKNOWN;
            send_reply(lp, exchange);
        }
        Ok(None) => {
            let token = exchange.borrow().token;
            lp.read_wait(token, move |lp| read_request(lp, exchange, delays));
        }
        // The client left before its request was complete.
        Err(_) => exchange.borrow_mut().close(lp),
    }
}

/// Writes the reply; once it is all out, closes the connection.
fn send_reply(lp: &EventLoop, exchange: Rc<RefCell<Exchange>>) {
    let mut this = exchange.borrow_mut();
    let unsent = this.unsent;
    match write_now(&mut this.stream, unsent) {
        Ok(written) if written < unsent.len() => {
            this.unsent = &unsent[written..];
            let token = this.token;
            drop(this);
            lp.write_wait(token, move |lp| send_reply(lp, exchange));
        }
        // All sent, or the client is gone: close either way.
        Ok(_) | Err(_) => this.close(lp),
    }
}
// ANCHOR_END: slow_reply

impl Exchange {
    /// Reads what has arrived; returns the request once it is complete,
    /// `None` while it is not. A request is complete at its first newline
    /// (included) or once it is as long as the protocol's request, whichever
    /// comes first: the seed's clients send a bare `request` and wait. A
    /// client that closes before its request is complete is an error.
    fn read_until_complete(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut chunk = [0; 64];
        loop {
            let longest = self.protocol.request.len();
            let newline = self.request.iter().position(|&byte| byte == b'\n');
            let end = newline.map_or(longest, |at| (at + 1).min(longest));
            if self.request.len() >= end {
                return Ok(Some(self.request[..end].to_vec()));
            }
            match read_now(&mut self.stream, &mut chunk)? {
                None => return Ok(None),
                Some(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Some(n) => self.request.extend_from_slice(&chunk[..n]),
            }
        }
    }

    fn close(&mut self, lp: &EventLoop) {
        let _ = lp.deregister(&mut self.stream, self.token);
    }
}
