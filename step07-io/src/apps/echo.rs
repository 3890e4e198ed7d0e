//! The echo server: for every line `L\n` a client sends, it answers
//! `Got: L\n`, in order. Step 4's server, now one task per client.
//!
//! TCP delivers a stream of bytes, not messages: one read may hold half a
//! line or ten of them. So each connection gathers bytes until it sees a
//! newline, and its two buffers have a fixed size, which bounds the memory
//! any client can make the server use.

use std::io;

use heapless::Vec;

use crate::net::{TcpListener, TcpStream, accept_clients};
use crate::sleep::yield_now;

/// The longest line the server answers, newline not counted.
pub const MAX_LINE: usize = 1024;

/// The answer to a line longer than `MAX_LINE`; the line itself is skipped.
pub const TOO_LONG: &[u8] = b"error: line longer than 1024 bytes\n";

const REPLY_PREFIX: &[u8] = b"Got: ";

/// One line and its newline.
const INBOX_SIZE: usize = MAX_LINE + 1;

/// Room for four of the longest replies.
const OUTBOX_SIZE: usize = 4 * (REPLY_PREFIX.len() + INBOX_SIZE);

/// How many rounds of read-answer-write a connection may do before it lets
/// the other tasks and the timers have a turn.
const ROUNDS_PER_TURN: usize = 16;

/// Serves the echo protocol on `listener` for as long as its task runs.
pub async fn serve(listener: TcpListener) {
    accept_clients(listener, serve_connection).await;
}

// ANCHOR: connection
/// One client's connection: what it sent and has no answer yet, and the
/// answers not written yet.
///
/// Both buffers have a fixed capacity, and the server reads only once it
/// has written every answer. When the client does not read its replies,
/// the server waits in `write_all` and reads no more; the client's further
/// bytes wait in the kernel, and the server's memory stays where it was.
#[derive(Default)]
struct Connection {
    /// Bytes received and not answered yet.
    inbox: Vec<u8, INBOX_SIZE>,
    /// Replies not written yet.
    outbox: Vec<u8, OUTBOX_SIZE>,
    /// Inside a line that was too long: drop bytes up to its newline.
    skipping: bool,
}
// ANCHOR_END: connection

// ANCHOR: serve_connection
/// One client, from its connect to its close.
async fn serve_connection(mut stream: TcpStream) {
    // Replies are small and a client waits for each: send them at once
    // rather than wait to gather a fuller packet (Nagle's algorithm).
    let _ = stream.set_nodelay(true);
    // A reset or a broken pipe ends the connection as a close does: either
    // way the stream is dropped here, which closes it.
    let _ = Connection::default().serve(&mut stream).await;
}

impl Connection {
    /// The whole conversation, as straight-line code: read what came,
    /// answer the lines it completed, write the answers, and again, until
    /// the client has closed its side and has every answer.
    async fn serve(&mut self, stream: &mut TcpStream) -> io::Result<()> {
        for round in 1_usize.. {
            let client_open = self.receive(stream).await?;
            self.answer(stream).await?;
            if !client_open {
                break;
            }
            // Bytes that are already there make `read` ready at once, so a
            // busy client would never let this task give up the loop.
            if round % ROUNDS_PER_TURN == 0 {
                yield_now().await;
            }
        }
        Ok(())
    }
    // ANCHOR_END: serve_connection

    /// Waits for bytes from the client and adds them to `inbox`. Says
    /// whether the client is still sending: `false` once it has closed its
    /// side, and then a last line without a newline gets one.
    async fn receive(&mut self, stream: &mut TcpStream) -> io::Result<bool> {
        let mut chunk = [0; INBOX_SIZE];
        // `answer` leaves no line for which the inbox is full: there is room.
        let room = INBOX_SIZE - self.inbox.len();
        let read = stream.read(&mut chunk[..room]).await?;
        if read == 0 {
            if !self.inbox.is_empty() && !self.inbox.ends_with(b"\n") {
                self.inbox.push(b'\n').expect("there is room");
            }
            return Ok(false);
        }
        let bytes = &chunk[..read];
        self.inbox
            .extend_from_slice(bytes)
            .expect("read into the room");
        Ok(true)
    }

    /// Answers every complete line in `inbox`, writing the replies out each
    /// time `outbox` is full and once at the end. While the client does not
    /// read, `write_all` waits, and so does everything else here.
    async fn answer(&mut self, stream: &mut TcpStream) -> io::Result<()> {
        loop {
            self.answer_lines();
            if self.outbox.is_empty() {
                return Ok(());
            }
            stream.write_all(&self.outbox).await?;
            self.outbox.clear();
        }
    }

    // ANCHOR: answer_lines
    /// Turns each complete line in `inbox` into a reply in `outbox`, for as
    /// long as the replies fit.
    fn answer_lines(&mut self) {
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
    }
    // ANCHOR_END: answer_lines
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
