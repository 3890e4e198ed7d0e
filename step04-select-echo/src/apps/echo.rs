//! The echo server: for every line `L\n` a client sends, it answers
//! `Got: L\n`, in order.
//!
//! TCP delivers a stream of bytes, not messages: one read may hold half a
//! line or ten of them. So each connection gathers bytes until it sees a
//! newline, and its two buffers have a fixed size, which bounds the memory
//! any client can make the server use.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;

use heapless::Vec;
use mio::Token;
use mio::net::{TcpListener, TcpStream};

use crate::apps::net::{Server, read_now, write_now};
use crate::event_loop::EventLoop;

/// The longest line the server answers, newline not counted.
pub const MAX_LINE: usize = 1024;

/// The answer to a line longer than `MAX_LINE`; the line itself is skipped.
pub const TOO_LONG: &[u8] = b"error: line longer than 1024 bytes\n";

const REPLY_PREFIX: &[u8] = b"Got: ";

/// One line and its newline.
const INBOX_SIZE: usize = MAX_LINE + 1;

/// Room for four of the longest replies.
const OUTBOX_SIZE: usize = 4 * (REPLY_PREFIX.len() + INBOX_SIZE);

/// How many rounds of write-answer-read one wake-up may do before it lets
/// the other connections and the timers have a turn.
const ROUNDS_PER_TURN: usize = 16;

/// Starts the echo server on `listener`.
pub fn serve(lp: &EventLoop, listener: TcpListener) -> io::Result<Server> {
    Server::start(lp, listener, start_connection)
}

// ANCHOR: connection
/// One client's connection.
///
/// Both buffers have a fixed capacity. When the client does not read its
/// replies, `outbox` fills and the server stops answering, then `inbox`
/// fills and it stops reading; the client's further bytes wait in the
/// kernel, and the server's memory stays where it was.
struct Connection {
    stream: TcpStream,
    token: Token,
    /// Bytes received and not answered yet.
    inbox: Vec<u8, INBOX_SIZE>,
    /// Replies not written yet.
    outbox: Vec<u8, OUTBOX_SIZE>,
    /// Inside a line that was too long: drop bytes up to its newline.
    skipping: bool,
    /// The client has closed its side: no more lines will come.
    client_done: bool,
    /// Closed by the server. A callback still queued for this connection
    /// (both of its sockets' sides became ready in one turn) finds it so.
    closed: bool,
}
// ANCHOR_END: connection

/// What a connection needs after doing all it could.
enum Next {
    /// Wait until the socket can be read, written, or both.
    Wait { read: bool, write: bool },
    /// There is more to do, but others get a turn first.
    Continue,
    /// The client has closed its side and has every reply: close.
    Finished,
}

fn start_connection(lp: &EventLoop, mut stream: TcpStream) {
    // Replies are small and a client waits for each: send them at once
    // rather than wait to gather a fuller packet (Nagle's algorithm).
    let _ = stream.set_nodelay(true);
    let Ok(token) = lp.register(&mut stream) else {
        return; // Dropping the stream closes it.
    };
    let connection = Rc::new(RefCell::new(Connection {
        stream,
        token,
        inbox: Vec::new(),
        outbox: Vec::new(),
        skipping: false,
        client_done: false,
        closed: false,
    }));
    // Bytes may already be waiting: try at once rather than wait.
    serve_connection(lp, &connection);
}

// ANCHOR: serve_connection
/// Every wake-up of a connection lands here: its socket became readable or
/// writable, or nothing changed at all (a spurious wake-up). It does all it
/// can without blocking, then waits for what it needs next.
fn serve_connection(lp: &EventLoop, connection: &Rc<RefCell<Connection>>) {
    let mut conn = connection.borrow_mut();
    if conn.closed {
        return;
    }
    match conn.make_progress() {
        Ok(Next::Wait { read, write }) => {
            if read {
                let connection = connection.clone();
                lp.read_wait(conn.token, move |lp| {
                    serve_connection(lp, &connection);
                });
            }
            if write {
                let connection = connection.clone();
                lp.write_wait(conn.token, move |lp| {
                    serve_connection(lp, &connection);
                });
            }
        }
        // No readiness edge will come for work that is already possible,
        // so the connection schedules itself.
        Ok(Next::Continue) => {
            let connection = connection.clone();
            lp.call_soon(move |lp| serve_connection(lp, &connection));
        }
        // A reset, a broken pipe, or simply done: free it either way.
        Ok(Next::Finished) | Err(_) => conn.close(lp),
    }
}
// ANCHOR_END: serve_connection

impl Connection {
    // ANCHOR: make_progress
    /// Writes replies, answers lines, reads requests, and goes round again
    /// while any of the three got anywhere. It stops when all three are
    /// stuck: writing and reading said `WouldBlock` (or the buffers are
    /// full or empty), which is when waiting for readiness is safe.
    ///
    /// Reading comes round again after every write. That matters: a
    /// connection that stopped reading because its buffers were full must
    /// *try* to read once there is room. The readiness edge for the bytes
    /// waiting in the kernel came while it was not listening.
    fn make_progress(&mut self) -> io::Result<Next> {
        for _ in 0..ROUNDS_PER_TURN {
            let wrote = self.send_replies()?;
            let answered = self.answer_lines();
            let read = self.receive()?;
            if !(wrote || answered || read) {
                return Ok(self.what_next());
            }
        }
        Ok(Next::Continue)
    }
    // ANCHOR_END: make_progress

    /// What to wait for, once no step can get any further.
    fn what_next(&self) -> Next {
        if self.client_done && self.outbox.is_empty() && self.inbox.is_empty() {
            return Next::Finished;
        }
        Next::Wait {
            // Reading stopped at `WouldBlock`, not at a full inbox.
            read: !self.client_done && !self.inbox.is_full(),
            // Writing stopped at `WouldBlock` with replies left.
            write: !self.outbox.is_empty(),
        }
    }

    /// Writes waiting replies until they are all out or the socket's send
    /// buffer is full. Says whether it wrote anything.
    fn send_replies(&mut self) -> io::Result<bool> {
        let written = write_now(&mut self.stream, &self.outbox)?;
        self.outbox.drain(..written);
        Ok(written > 0)
    }

    // ANCHOR: answer_lines
    /// Turns each complete line in `inbox` into a reply in `outbox`, for as
    /// long as the replies fit. Says whether it answered (or skipped)
    /// anything.
    fn answer_lines(&mut self) -> bool {
        let mut used = 0;
        loop {
            let rest = &self.inbox[used..];
            match rest.iter().position(|&byte| byte == b'\n') {
                // The end of a line that was too long: already answered.
                Some(end) if self.skipping => {
                    self.skipping = false;
                    used += end + 1;
                }
                Some(end) => {
                    if !push_reply(&mut self.outbox, &rest[..end]) {
                        break;
                    }
                    used += end + 1;
                }
                // More of a line that was too long: drop it.
                None if self.skipping => {
                    used = self.inbox.len();
                    break;
                }
                // The inbox is full and holds no newline: the line is too
                // long. Answer with an error and skip the rest of it.
                None if used == 0 && self.inbox.is_full() => {
                    if self.outbox.extend_from_slice(TOO_LONG).is_ok() {
                        self.skipping = true;
                        used = self.inbox.len();
                    }
                    break;
                }
                None => break,
            }
        }
        self.inbox.drain(..used);
        used > 0
    }
    // ANCHOR_END: answer_lines

    /// Reads what the client sent into the free part of `inbox`. Says
    /// whether anything happened: bytes came, or the client closed its side.
    fn receive(&mut self) -> io::Result<bool> {
        if self.client_done || self.inbox.is_full() {
            return Ok(false);
        }
        let mut chunk = [0; INBOX_SIZE];
        let room = INBOX_SIZE - self.inbox.len();
        match read_now(&mut self.stream, &mut chunk[..room])? {
            None => Ok(false),
            Some(0) => {
                self.client_done = true;
                // A last line without a newline still gets its answer.
                if !self.inbox.is_empty() && !self.inbox.ends_with(b"\n") {
                    self.inbox
                        .push(b'\n')
                        .expect("read only when there is room");
                }
                Ok(true)
            }
            Some(n) => {
                let bytes = &chunk[..n];
                self.inbox
                    .extend_from_slice(bytes)
                    .expect("read into the room");
                Ok(true)
            }
        }
    }

    /// Takes the socket off the loop; it closes when the last callback
    /// holding this connection is gone.
    fn close(&mut self, lp: &EventLoop) {
        self.closed = true;
        // Failing to deregister a socket that is closing anyway changes
        // nothing: the OS forgets it when it closes.
        let _ = lp.deregister(&mut self.stream, self.token);
    }
}

/// Appends `Got: line\n` to `outbox` if it fits; says whether it did.
fn push_reply(outbox: &mut Vec<u8, OUTBOX_SIZE>, line: &[u8]) -> bool {
    let reply_len = REPLY_PREFIX.len() + line.len() + 1;
    if outbox.capacity() - outbox.len() < reply_len {
        return false;
    }
    for part in [REPLY_PREFIX, line, b"\n"] {
        outbox
            .extend_from_slice(part)
            .expect("checked the room above");
    }
    true
}
