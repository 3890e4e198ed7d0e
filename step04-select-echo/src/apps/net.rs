//! What the servers and clients share: a listening socket built with
//! socket2, an accept loop that survives running out of file descriptors,
//! and reads and writes that turn `WouldBlock` into "nothing more for now".

use std::cell::{Cell, RefCell};
use std::fmt;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use mio::Token;
use mio::net::{TcpListener, TcpStream};
use plumbing::warn;
use rustix::event::{PollFd, PollFlags, Timespec};
use socket2::{Domain, Protocol, Socket, Type};

use crate::event_loop::EventLoop;

/// How many connections the kernel may hold, handshake done, until we accept
/// them. Clients beyond that wait in the kernel or are refused.
const BACKLOG: i32 = 1024;

/// How long to wait before accepting again after the OS said it had no file
/// descriptor (or memory) left for a new connection.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

// ANCHOR: listen
/// Opens a listening socket on `addr`, ready to hand to the loop.
///
/// std's `TcpListener::bind` picks the socket's options for us; socket2 lets
/// us state them. Non-blocking: `accept` must answer `WouldBlock` rather
/// than stop the whole loop. Address reuse: a restarted server may bind the
/// port while the old one's closed connections linger in `TIME_WAIT`. An
/// explicit backlog: how many finished handshakes the kernel queues for us.
pub fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket =
        Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // On Windows this option would let a second server take a port that is
    // in use, so it is set where it means "reuse after TIME_WAIT" only.
    if cfg!(unix) {
        socket.set_reuse_address(true)?;
    }
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(TcpListener::from_std(socket.into()))
}
// ANCHOR_END: listen

/// A listening socket on the loop, handing each new connection to its
/// server. Clones are handles to the same listener.
#[derive(Clone)]
pub struct Server {
    acceptor: Rc<Acceptor>,
}

/// What a server does with each client it accepts.
type OnClient = Box<dyn Fn(&EventLoop, TcpStream)>;

/// What the accept callbacks share: the listener and what to do with each
/// client it accepts.
struct Acceptor {
    listener: RefCell<TcpListener>,
    token: Token,
    on_client: OnClient,
    /// Set by `stop`, so a retry timer still pending does nothing.
    stopped: Cell<bool>,
    /// Accepting is paused because the OS ran out of descriptors.
    paused: Cell<bool>,
}

impl Server {
    /// Puts `listener` on the loop and starts accepting: every client is
    /// handed, as a non-blocking stream, to `on_client`.
    pub fn start(
        lp: &EventLoop,
        mut listener: TcpListener,
        on_client: impl Fn(&EventLoop, TcpStream) + 'static,
    ) -> io::Result<Server> {
        let token = lp.register(&mut listener)?;
        let acceptor = Rc::new(Acceptor {
            listener: RefCell::new(listener),
            token,
            on_client: Box::new(on_client),
            stopped: Cell::new(false),
            paused: Cell::new(false),
        });
        accept_clients(lp, acceptor.clone());
        Ok(Server { acceptor })
    }

    /// The address clients connect to (with the real port when the server
    /// was asked for port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.acceptor.listener.borrow().local_addr()
    }

    /// Stops accepting new clients; the ones already connected carry on.
    /// The loop then has one socket less to wait for, so `run` can return.
    pub fn stop(&self, lp: &EventLoop) -> io::Result<()> {
        let acceptor = &self.acceptor;
        if acceptor.stopped.replace(true) {
            return Ok(());
        }
        lp.deregister(&mut *acceptor.listener.borrow_mut(), acceptor.token)
    }
}

// ANCHOR: accept_clients
/// Accepts every client waiting in the backlog, then waits for the
/// listener to become readable again.
fn accept_clients(lp: &EventLoop, acceptor: Rc<Acceptor>) {
    if acceptor.stopped.get() {
        return;
    }
    loop {
        let accepted = acceptor.listener.borrow().accept();
        match accepted {
            Ok((stream, _peer)) => {
                if acceptor.paused.replace(false) {
                    warn!("accepting clients again");
                }
                (acceptor.on_client)(lp, stream);
            }
            // The backlog is empty: wait for the next client. `WouldBlock`
            // says so, but so may an error: Linux gives a new connection
            // its descriptor before it looks in the backlog, so with none
            // left `accept` fails (`EMFILE`) though no client waits.
            Err(err) if would_block(&err) || !client_waiting(&acceptor) => {
                let token = acceptor.token;
                lp.read_wait(token, move |lp| accept_clients(lp, acceptor));
                return;
            }
            // A signal, or a client that gave up while it waited in the
            // backlog: neither says anything about the next client.
            Err(err) if interrupted(&err) || aborted(&err) => {}
            // A client waits, and the OS has no descriptor (EMFILE for this
            // process, ENFILE for the system) or no memory left for it. The
            // client stays in the backlog, so no new readiness edge will come
            // for it, and a level-triggered loop would wake at once, forever,
            // burning a core. Descriptors come back only when connections
            // close, so pause, accept again in a while, and let the clients
            // wait in the backlog meanwhile.
            Err(err) => {
                if !acceptor.paused.replace(true) {
                    warn!("not accepting clients for now: {err}");
                }
                lp.call_later(ACCEPT_RETRY, move |lp| accept_clients(lp, acceptor));
                return;
            }
        }
    }
}

/// Whether a client waits in the listener's backlog. mio cannot say (its
/// readiness is an edge, gone once reported), so this asks the OS with
/// `poll(2)`, level-triggered and without waiting: a listener is readable
/// while its backlog holds a client.
fn client_waiting(acceptor: &Acceptor) -> bool {
    let listener = acceptor.listener.borrow();
    let mut asked = [PollFd::new(&*listener, PollFlags::IN)];
    // If even asking fails, suppose one waits: the server pauses and says
    // so, as it would without this question.
    rustix::event::poll(&mut asked, Some(&Timespec::default()))
        .map_or(true, |ready| ready > 0)
}
// ANCHOR_END: accept_clients

// ANCHOR: read_write_now
/// Reads what the socket holds now into `buf`: `Some(0)` means the peer has
/// closed its side, `None` that nothing is waiting (`WouldBlock`).
pub fn read_now(
    stream: &mut TcpStream,
    buf: &mut [u8],
) -> io::Result<Option<usize>> {
    loop {
        match stream.read(buf) {
            Ok(n) => return Ok(Some(n)),
            Err(err) if would_block(&err) => return Ok(None),
            Err(err) if interrupted(&err) => {}
            Err(err) => return Err(err),
        }
    }
}

/// Writes as much of `bytes` as the socket takes now and says how much that
/// was. It stops short only when the socket's send buffer is full.
pub fn write_now(stream: &mut TcpStream, bytes: &[u8]) -> io::Result<usize> {
    let mut written = 0;
    while written < bytes.len() {
        match stream.write(&bytes[written..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(err) if would_block(&err) => break,
            Err(err) if interrupted(&err) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(written)
}
// ANCHOR_END: read_write_now

fn would_block(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::WouldBlock
}

fn interrupted(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::Interrupted
}

fn aborted(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::ConnectionAborted
}

// ---------------------------------------------------------------------------
// Plumbing: not the lesson. A `Debug` for `Server` that shows its token and
// whether it stopped. A reader may stop here.
// ---------------------------------------------------------------------------

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("token", &self.acceptor.token)
            .field("stopped", &self.acceptor.stopped.get())
            .finish_non_exhaustive()
    }
}
