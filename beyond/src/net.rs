//! Async sockets on the reactor: a TCP listener that accepts, a TCP stream
//! that connects, and a pair of connected sockets for one process; and the
//! accept loop the servers share, which survives running out of file
//! descriptors and takes its connections with it when it is cancelled.

use std::future::Future;
use std::io;
use std::mem;
use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use plumbing::warn;
use rustix::event::{PollFd, PollFlags, Timespec};
use socket2::{Domain, Protocol, SockRef, Type};

use crate::event_loop::spawn;
use crate::join::JoinHandle;
use crate::reactor::{Direction, Socket};
use crate::sleep::sleep;

/// A listening TCP socket on the loop.
pub type TcpListener = Socket<mio::net::TcpListener>;

/// A TCP connection on the loop.
pub type TcpStream = Socket<mio::net::TcpStream>;

/// One end of a `socket_pair`: a Unix domain socket where there are some.
#[cfg(unix)]
pub type LocalStream = Socket<mio::net::UnixStream>;

/// One end of a `socket_pair`: a loopback TCP connection.
#[cfg(not(unix))]
pub type LocalStream = TcpStream;

/// How many connections the kernel may hold, handshake done, until we accept
/// them. Clients beyond that wait in the kernel or are refused.
const BACKLOG: i32 = 1024;

/// How long to wait before accepting again after the OS said it had no file
/// descriptor (or memory) left for a new connection.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

impl TcpListener {
    /// Listens on `addr` (see `listen`), on the running loop.
    pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
        Socket::new(listen(addr)?)
    }

    /// Adopts a listening socket opened elsewhere (by a harness that picked
    /// its options, or a parent process), on the running loop.
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        Socket::new(mio::net::TcpListener::from_std(listener))
    }

    /// Waits for the next client; returns its connection, on the loop too,
    /// and its address.
    pub async fn accept(&mut self) -> io::Result<(TcpStream, SocketAddr)> {
        let (stream, peer) = self.async_io(Direction::Read, accept_waiting).await?;
        Ok((Socket::new(stream)?, peer))
    }

    /// The address clients connect to (with the real port when the listener
    /// was asked for port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().local_addr()
    }
}

impl TcpStream {
    /// Connects to `addr`, waiting, without blocking the loop, until the
    /// handshake is over; a failed connect is the error it failed with
    /// (`ConnectionRefused` when no one listens there).
    ///
    /// A non-blocking `connect` only starts the handshake (the OS answers
    /// `EINPROGRESS`, which mio takes as success); the socket becomes
    /// writable once the handshake ends, however it ended.
    pub async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
        let mut stream = Socket::new(mio::net::TcpStream::connect(addr)?)?;
        stream.async_io(Direction::Write, finish_connecting).await?;
        Ok(stream)
    }

    /// Closes the writing side (`Shutdown::Write`: the peer reads the end of
    /// the stream), the reading side, or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.get_ref().shutdown(how)
    }

    /// Sends small writes at once rather than wait to gather a fuller packet
    /// (turns off Nagle's algorithm).
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.get_ref().set_nodelay(nodelay)
    }

    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().peer_addr()
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().local_addr()
    }

    /// A second handle on the same connection, on the loop too, so one task
    /// can read while another writes: each handle has its own token and
    /// its own waiters. std's `TcpStream::try_clone`, and like it a new
    /// file descriptor. Two tasks reading at once would share the bytes
    /// unpredictably; one reader and one writer is the use.
    pub fn try_clone(&self) -> io::Result<TcpStream> {
        let clone = SockRef::from(self.get_ref()).try_clone()?;
        clone.set_nonblocking(true)?;
        Socket::new(mio::net::TcpStream::from_std(clone.into()))
    }
}

/// Takes the next client from the backlog, as the reactor expects:
/// `WouldBlock` while there is none.
///
/// The OS may say "none" with an error too: Linux gives a new connection
/// its descriptor before it looks in the backlog, so with none left
/// `accept` fails (`EMFILE`) though no client waits. Only when one waits
/// is that a failure to accept it.
fn accept_waiting(
    listener: &mio::net::TcpListener,
) -> io::Result<(mio::net::TcpStream, SocketAddr)> {
    match listener.accept() {
        Err(err) if failed(&err) && !client_waiting(listener) => {
            Err(io::ErrorKind::WouldBlock.into())
        }
        accepted => accepted,
    }
}

/// Whether a client waits in `listener`'s backlog. mio cannot say (its
/// readiness is an edge, gone once reported), so this asks the OS with
/// `poll(2)`, level-triggered and without waiting: a listener is readable
/// while its backlog holds a client.
fn client_waiting(listener: &mio::net::TcpListener) -> bool {
    let mut asked = [PollFd::new(listener, PollFlags::IN)];
    // If even asking fails, suppose one waits: the server pauses and says
    // so, as it would without this question.
    rustix::event::poll(&mut asked, Some(&Timespec::default()))
        .map_or(true, |ready| ready > 0)
}

/// Says whether the handshake is over, as the reactor expects: `WouldBlock`
/// while it is not. A writable socket says only that the handshake ended,
/// not how: the socket's pending error (`SO_ERROR`) tells, and `peer_addr`
/// succeeds only once connected (a spurious wake-up finds `NotConnected`).
fn finish_connecting(stream: &mio::net::TcpStream) -> io::Result<()> {
    if let Some(err) = stream.take_error()? {
        return Err(err);
    }
    match stream.peer_addr() {
        Ok(_) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotConnected => {
            Err(io::ErrorKind::WouldBlock.into())
        }
        Err(err) => Err(err),
    }
}

/// Two sockets connected to each other, both on the running loop: what one
/// end writes, the other reads (`socketpair`).
#[cfg(unix)]
pub fn socket_pair() -> io::Result<(LocalStream, LocalStream)> {
    let (one, other) = mio::net::UnixStream::pair()?;
    Ok((Socket::new(one)?, Socket::new(other)?))
}

/// Two sockets connected to each other, both on the running loop: the two
/// ends of a loopback TCP connection, where there is no `socketpair`. The
/// connect blocks, but on loopback the kernel finishes the handshake at once.
#[cfg(not(unix))]
pub fn socket_pair() -> io::Result<(LocalStream, LocalStream)> {
    let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
    let one = std::net::TcpStream::connect(listener.local_addr()?)?;
    let (other, _) = listener.accept()?;
    one.set_nonblocking(true)?;
    other.set_nonblocking(true)?;
    Ok((
        Socket::new(mio::net::TcpStream::from_std(one))?,
        Socket::new(mio::net::TcpStream::from_std(other))?,
    ))
}

/// Opens a listening socket on `addr`, ready to hand to the loop.
///
/// std's `TcpListener::bind` picks the socket's options for us; socket2 lets
/// us state them. Non-blocking: `accept` must answer `WouldBlock` rather
/// than stop the whole loop. Address reuse: a restarted server may bind the
/// port while the old one's closed connections linger in `TIME_WAIT`. An
/// explicit backlog: how many finished handshakes the kernel queues for us.
pub fn listen(addr: SocketAddr) -> io::Result<mio::net::TcpListener> {
    let socket = socket2::Socket::new(
        Domain::for_address(addr),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    // On Windows this option would let a second server take a port that is
    // in use, so it is set where it means "reuse after TIME_WAIT" only.
    if cfg!(unix) {
        socket.set_reuse_address(true)?;
    }
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(mio::net::TcpListener::from_std(socket.into()))
}

/// Accepts clients on `listener` for as long as its task runs, and serves
/// each in a task of its own, running `serve_client`. Cancelling its task
/// shuts the server down: the listener closes, and every connection's task
/// is cancelled too.
pub async fn accept_clients<F>(
    mut listener: TcpListener,
    mut serve_client: impl FnMut(TcpStream) -> F,
) where
    F: Future<Output = ()> + 'static,
{
    let mut connections = ConnectionTasks::default();
    let mut paused = false;
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                if mem::replace(&mut paused, false) {
                    warn!("accepting clients again");
                }
                connections.push(spawn(serve_client(stream)));
            }
            // A client that gave up while it waited in the backlog: that
            // says nothing about the next one. (A signal is retried inside.)
            Err(err) if aborted(&err) => {}
            // A client waits, and the OS has no descriptor (EMFILE for this
            // process, ENFILE for the system) or no memory left for it. The
            // client stays in the backlog, so no new readiness edge will come
            // for it, and a level-triggered loop would wake at once, forever,
            // burning a core. Descriptors come back only when connections
            // close, so pause, accept again in a while, and let the clients
            // wait in the backlog meanwhile.
            Err(err) => {
                if !mem::replace(&mut paused, true) {
                    warn!("not accepting clients for now: {err}");
                }
                sleep(ACCEPT_RETRY).await;
            }
        }
    }
}

/// The tasks serving a server's clients. They belong to the server's task:
/// when it is cancelled, or dropped with its loop, this list is dropped
/// with it and cancels each of them, which closes their connections.
#[derive(Default)]
struct ConnectionTasks(Vec<JoinHandle<()>>);

impl ConnectionTasks {
    /// Keeps `task`'s handle. Whenever the list is full, the handles of
    /// tasks that have ended are let go before it grows, so a server that
    /// runs for days holds about as many handles as it has clients.
    fn push(&mut self, task: JoinHandle<()>) {
        if self.0.len() == self.0.capacity() {
            self.0.retain(|task| !task.is_finished());
        }
        self.0.push(task);
    }
}

impl Drop for ConnectionTasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.cancel();
        }
    }
}

fn aborted(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::ConnectionAborted
}

/// An error that is neither "nothing yet" nor "interrupted, try again".
fn failed(err: &io::Error) -> bool {
    !matches!(
        err.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}
