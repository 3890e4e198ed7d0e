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

use mio::Token;
use mio::net::{TcpListener, TcpStream};

use crate::apps::net::{Server, read_now, write_now};
use crate::event_loop::EventLoop;

pub const REQUEST: &[u8] = b"request\n";
pub const RESPONSE: &[u8] = b"response\n";
const UNKNOWN: &[u8] = b"error: unknown request\n";

const SHORTEST_MS: u64 = 50;
const LONGEST_MS: u64 = 200;

/// Starts the slow server on `listener`; its delays come from
/// `Delays::new(seed)`, one per request, in the order requests arrive.
pub fn serve(
    lp: &EventLoop,
    listener: TcpListener,
    seed: u64,
) -> io::Result<Server> {
    let delays = Rc::new(RefCell::new(Delays::new(seed)));
    Server::start(lp, listener, move |lp, mut stream| {
        let Ok(token) = lp.register(&mut stream) else {
            return;
        };
        let exchange = Rc::new(RefCell::new(Exchange {
            stream,
            token,
            request: Vec::new(),
            unsent: &[],
        }));
        read_request(lp, exchange, delays.clone());
    })
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

/// One connection: the request as it arrives, then the reply as it leaves.
struct Exchange {
    stream: TcpStream,
    token: Token,
    request: Vec<u8>,
    unsent: &'static [u8],
}

// ANCHOR: slow_reply
/// Reads until the request line is complete, then answers it: after the
/// next delay if it is `request`, at once if it is anything else.
fn read_request(
    lp: &EventLoop,
    exchange: Rc<RefCell<Exchange>>,
    delays: Rc<RefCell<Delays>>,
) {
    let outcome = exchange.borrow_mut().read_line();
    match outcome {
        Ok(Some(line)) if line == REQUEST => {
            let delay = delays.borrow_mut().next().expect("delays never run out");
            exchange.borrow_mut().unsent = RESPONSE;
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
    /// Reads what has arrived; returns the first line once it is complete
    /// (newline included), `None` while it is not. Bytes that outgrow a
    /// request without a newline come back as they are: they are no
    /// request. A client that closes before a line is complete is an error.
    fn read_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut chunk = [0; 64];
        loop {
            if let Some(end) = self.request.iter().position(|&byte| byte == b'\n') {
                return Ok(Some(self.request[..=end].to_vec()));
            }
            if self.request.len() > REQUEST.len() {
                return Ok(Some(self.request.clone()));
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
