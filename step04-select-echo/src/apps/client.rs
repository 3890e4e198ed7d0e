//! A client on the loop: it connects without blocking, sends what it is
//! given, and hands each line it receives to a callback. The demo's
//! scripted clients and its requests to the slow server are built on it.

use std::cell::RefCell;
use std::fmt;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::rc::Rc;

use mio::Token;
use mio::net::TcpStream;

use crate::apps::net::{read_now, write_now};
use crate::event_loop::EventLoop;

/// What to call with each line received, newline included.
type OnLine = Box<dyn FnMut(&[u8])>;

/// What to call once the connection is over: `Ok` when the server closed it,
/// the error when it failed.
type OnClosed = Box<dyn FnOnce(&EventLoop, io::Result<()>)>;

/// A handle to a client connection; clones are handles to the same one.
#[derive(Clone)]
pub struct Client {
    state: Rc<RefCell<ClientState>>,
}

struct ClientState {
    stream: TcpStream,
    token: Token,
    connected: bool,
    unsent: Vec<u8>,
    /// Close our sending side once `unsent` is out.
    close_when_sent: bool,
    /// The start of a line whose newline has not come yet.
    partial_line: Vec<u8>,
    on_line: OnLine,
    on_closed: Option<OnClosed>,
    closed: bool,
}

/// What the client waits for next; `None` from a step means it is over.
struct Wait {
    write: bool,
}

impl Client {
    // ANCHOR: connect
    /// Starts connecting to `addr` and returns at once: the handshake
    /// finishes while the loop runs. Bytes sent before then wait in the
    /// client until the socket is writable.
    pub fn connect(
        lp: &EventLoop,
        addr: SocketAddr,
        on_line: impl FnMut(&[u8]) + 'static,
        on_closed: impl FnOnce(&EventLoop, io::Result<()>) + 'static,
    ) -> io::Result<Client> {
        let mut stream = TcpStream::connect(addr)?;
        let token = lp.register(&mut stream)?;
        let state = Rc::new(RefCell::new(ClientState {
            stream,
            token,
            connected: false,
            unsent: Vec::new(),
            close_when_sent: false,
            partial_line: Vec::new(),
            on_line: Box::new(on_line),
            on_closed: Some(Box::new(on_closed)),
            closed: false,
        }));
        // The socket becomes writable when the handshake is over.
        let waiting = state.clone();
        lp.write_wait(token, move |lp| drive(lp, &waiting));
        Ok(Client { state })
    }
    // ANCHOR_END: connect

    /// Sends `bytes` (now, or once the socket can take them).
    pub fn send(&self, lp: &EventLoop, bytes: &[u8]) {
        self.state.borrow_mut().unsent.extend_from_slice(bytes);
        drive(lp, &self.state);
    }

    /// Closes the sending side once everything sent so far is out, and
    /// keeps receiving until the server closes its side too.
    pub fn close_writing(&self, lp: &EventLoop) {
        self.state.borrow_mut().close_when_sent = true;
        drive(lp, &self.state);
    }
}

/// Every wake-up lands here: it finishes connecting, sends, receives, then
/// waits for what it needs next.
fn drive(lp: &EventLoop, state: &Rc<RefCell<ClientState>>) {
    let mut client = state.borrow_mut();
    if client.closed {
        return;
    }
    let outcome = client.make_progress();
    let token = client.token;
    let closing = match outcome {
        Ok(Some(wait)) => {
            let reader = state.clone();
            lp.read_wait(token, move |lp| drive(lp, &reader));
            if wait.write {
                let writer = state.clone();
                lp.write_wait(token, move |lp| drive(lp, &writer));
            }
            return;
        }
        Ok(None) => Ok(()),
        Err(err) => Err(err),
    };
    client.closed = true;
    let _ = lp.deregister(&mut client.stream, token);
    let on_closed = client.on_closed.take();
    // The callback may use the loop freely: this client's borrow ends here.
    drop(client);
    if let Some(on_closed) = on_closed {
        on_closed(lp, closing);
    }
}

impl ClientState {
    /// Does all it can without blocking. `Ok(None)`: the server closed the
    /// connection.
    fn make_progress(&mut self) -> io::Result<Option<Wait>> {
        if !self.connected && !self.finish_connecting()? {
            return Ok(Some(Wait { write: true }));
        }
        let written = write_now(&mut self.stream, &self.unsent)?;
        self.unsent.drain(..written);
        if self.unsent.is_empty() && self.close_when_sent {
            self.stream.shutdown(Shutdown::Write)?;
            self.close_when_sent = false;
        }
        if self.receive_lines()? {
            return Ok(None);
        }
        Ok(Some(Wait {
            write: !self.unsent.is_empty(),
        }))
    }

    // ANCHOR: finish_connecting
    /// Says whether the non-blocking connect is over, and fails if it failed.
    /// A writable socket says only that the handshake ended, not how: the
    /// socket's pending error tells, and `peer_addr` succeeds only once
    /// connected (a spurious wake-up finds it still connecting).
    fn finish_connecting(&mut self) -> io::Result<bool> {
        if let Some(err) = self.stream.take_error()? {
            return Err(err);
        }
        match self.stream.peer_addr() {
            Ok(_) => {
                self.connected = true;
                Ok(true)
            }
            Err(err) if err.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(err) => Err(err),
        }
    }
    // ANCHOR_END: finish_connecting

    /// Reads until `WouldBlock`, handing over each complete line. Says
    /// whether the server has closed its side.
    fn receive_lines(&mut self) -> io::Result<bool> {
        let mut chunk = [0; 4096];
        loop {
            match read_now(&mut self.stream, &mut chunk)? {
                None => return Ok(false),
                Some(0) => {
                    if !self.partial_line.is_empty() {
                        (self.on_line)(&self.partial_line);
                    }
                    return Ok(true);
                }
                Some(n) => self.split_lines(&chunk[..n]),
            }
        }
    }

    fn split_lines(&mut self, mut bytes: &[u8]) {
        while let Some(end) = bytes.iter().position(|&byte| byte == b'\n') {
            self.partial_line.extend_from_slice(&bytes[..=end]);
            (self.on_line)(&self.partial_line);
            self.partial_line.clear();
            bytes = &bytes[end + 1..];
        }
        self.partial_line.extend_from_slice(bytes);
    }
}

// ---------------------------------------------------------------------------
// Plumbing: not the lesson. A `Debug` for `Client` that shows its state
// without borrowing it twice. A reader may stop here.
// ---------------------------------------------------------------------------

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Client");
        // A callback of this very client may be the one printing it.
        if let Ok(state) = self.state.try_borrow() {
            out.field("connected", &state.connected)
                .field("unsent", &state.unsent.len())
                .field("closed", &state.closed);
        }
        out.finish_non_exhaustive()
    }
}
