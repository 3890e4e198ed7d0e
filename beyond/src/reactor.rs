//! How a task waits for a socket. A `Socket` is a non-blocking mio socket
//! registered with the loop: each operation is tried first, and only a
//! `WouldBlock` leaves the task's waker with the loop, in the socket's
//! waiters, where an event wakes it directly: no callback to box, no turn
//! through the ready queue. A short read proves the socket
//! empty, so the next read waits for a new readable edge without trying
//! (`ShortReads`), one system call saved per message.

use std::fmt;
use std::future;
use std::io::{self, Read, Write};
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};

use mio::event::Source;
use mio::{Interest, Token};

use crate::event_loop::{EventLoop, running_loop};

/// A non-blocking socket `S` (a mio `TcpStream`, `TcpListener` or
/// `UnixStream`) registered with the loop it was made on. `TcpStream`,
/// `TcpListener` and `LocalStream` in `net` are its kinds.
///
/// It holds its loop by a `Weak` reference: enough to deregister when it is
/// dropped, without keeping alive the loop that owns the task that owns it.
pub struct Socket<S: Source> {
    source: S,
    token: Token,
    event_loop: Weak<EventLoop>,
    /// What its last read proved (`ShortReads`).
    short_reads: ShortReads,
}

/// Which readiness a task waits for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl<S: Source> Socket<S> {
    /// Registers `source`, already non-blocking, with the running loop.
    pub(crate) fn new(mut source: S) -> io::Result<Self> {
        let event_loop = running_loop();
        let token = event_loop.register(&mut source)?;
        Ok(Socket {
            source,
            token,
            event_loop: Rc::downgrade(&event_loop),
            short_reads: ShortReads::default(),
        })
    }

    /// The mio socket inside, for the calls that never wait (addresses,
    /// options, `shutdown`).
    pub(crate) fn get_ref(&self) -> &S {
        &self.source
    }

    /// Tries `operation` on the socket. If the OS answers `WouldBlock`, the
    /// socket is not ready in `direction`: the task's waker is left with the
    /// loop and the answer is `Pending`. The loop wakes the task once the
    /// socket is ready, and the next poll tries `operation` again.
    ///
    /// Readiness that comes between the `WouldBlock` and leaving the waker
    /// is not lost. The OS keeps the new edge until someone asks, and only
    /// the loop's `poll` asks, on this same thread, which is busy here: the
    /// next `poll` reports the edge and finds the waker waiting. Readiness
    /// that came *before* the `WouldBlock` (reported while no one waited,
    /// and skipped) is not lost either: `operation` is always tried before
    /// waiting, and it would have succeeded. A wake-up with nothing behind
    /// it (spurious) costs one more try and one more `WouldBlock`. And a
    /// future dropped while it waits takes its waker back (`async_io`): the
    /// next future on the socket tries before it waits, and finds whatever
    /// the dropped one would have.
    ///
    /// An `Interrupted` answer (a signal cut the call short) is tried again
    /// at once; any other answer is the poll's.
    fn poll_io<T>(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        mut operation: impl FnMut(&S) -> io::Result<T>,
    ) -> Poll<io::Result<T>> {
        loop {
            match operation(&self.source) {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    return match self.wake_when_ready(direction, cx.waker()) {
                        Ok(()) => Poll::Pending,
                        Err(err) => Poll::Ready(Err(err)),
                    };
                }
                // A signal interrupted the call: it did nothing, try again.
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                outcome => return Poll::Ready(outcome),
            }
        }
    }

    /// Leaves `waker` with the loop, to be woken once the socket is ready
    /// in `direction`. It replaces the waker of an earlier poll of the same
    /// future: one future at a time uses a socket (`async_io` takes
    /// `&mut self`). An error if the loop the socket was made on is gone.
    fn wake_when_ready(
        &self,
        direction: Direction,
        waker: &Waker,
    ) -> io::Result<()> {
        let Some(event_loop) = self.event_loop.upgrade() else {
            return Err(io::Error::other(
                "the loop this socket was made on is gone",
            ));
        };
        event_loop.wake_when_ready(self.token, direction, waker);
        Ok(())
    }

    /// Tries `operation` until the OS answers anything but `WouldBlock`,
    /// waiting between tries for the socket to be ready in `direction`:
    /// `poll_io` at each poll of the future.
    ///
    /// When the future is dropped, done or still waiting (a `timeout` ran
    /// out, or another branch of a select won), `_waiting` takes its waker
    /// back from the loop. Left there, it would wake a task that no longer
    /// waits, and keep `run` turning for a waiter that is gone. The waker
    /// it takes is always its own: `&mut self` makes this future the only
    /// one waiting on the socket while it lives, and a socket made by
    /// `try_clone` has a token, and slots, of its own.
    pub(crate) async fn async_io<T>(
        &mut self,
        direction: Direction,
        mut operation: impl FnMut(&S) -> io::Result<T>,
    ) -> io::Result<T> {
        let _waiting = Waiting {
            socket: self,
            direction,
        };
        future::poll_fn(|cx| self.poll_io(cx, direction, &mut operation)).await
    }
}

/// Lives as long as a future that may leave its waker with the loop, and
/// takes that waker back when the future is dropped.
struct Waiting<'a, S: Source> {
    socket: &'a Socket<S>,
    direction: Direction,
}

impl<S: Source> Drop for Waiting<'_, S> {
    fn drop(&mut self) {
        // No loop, no slot: it went with the loop (as in `Socket`'s drop).
        if let Some(event_loop) = self.socket.event_loop.upgrade() {
            let interest = match self.direction {
                Direction::Read => Interest::READABLE,
                Direction::Write => Interest::WRITABLE,
            };
            event_loop.stop_waiting(self.socket.token, interest);
        }
    }
}

/// Reading and writing, for the sockets that are streams of bytes.
impl<S: Source> Socket<S>
where
    for<'a> &'a S: Read + Write,
{
    /// Waits until bytes have come, then reads what fits in `buf` and says
    /// how much that was; `0` means the peer has closed its sending side.
    ///
    /// One read takes what the socket holds now, up to `buf`'s size. Bytes
    /// left over need no new readiness edge: the next `read` tries first,
    /// and gets them at once. But a short read, fewer bytes than `buf`
    /// holds, took all there was: the next `read` waits for the socket's
    /// next readable edge without trying, which saves a system call per
    /// message (tokio does the same).
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let wanted = buf.len();
        let emptied = self.short_reads.emptied(&self.event_loop, self.token);
        let read = self
            .async_io(Direction::Read, |mut source| {
                if emptied.as_ref().is_some_and(Emptied::still_empty) {
                    return Err(io::ErrorKind::WouldBlock.into()); // no use asking
                }
                source.read(buf)
            })
            .await?;
        self.short_reads
            .note_read(&self.event_loop, self.token, read, wanted);
        Ok(read)
    }

    /// Waits until the socket's send buffer has room, then writes what fits
    /// of `bytes` and says how much that was.
    pub async fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.async_io(Direction::Write, |mut source| source.write(bytes))
            .await
    }

    /// Writes all of `bytes`. A write takes what fits in the send buffer now,
    /// which may be only part: the rest waits for room, and goes next.
    pub async fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            match self.write(bytes).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                written => bytes = &bytes[written..],
            }
        }
        Ok(())
    }

    /// Reads until the peer closes its sending side, appending to `buf`;
    /// says how many bytes that was.
    pub async fn read_to_end(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let mut chunk = [0; 4096];
        let start = buf.len();
        loop {
            match self.read(&mut chunk).await? {
                0 => return Ok(buf.len() - start),
                n => buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

/// A socket leaves the loop when it is dropped, before it closes.
///
/// A wake-up it has already caused may still be on its way: its callback
/// may sit on this turn's ready queue, where `deregister` cannot reach it.
/// That is harmless. The callback holds a waker, not the socket: it wakes a
/// task that tries again and finds nothing to do, or a task that is gone
/// (task ids are never reused, so it wakes no one). And a socket opened
/// later gets a new token, even when the OS gives it the same descriptor,
/// so no event meant for this one can reach it.
impl<S: Source> Drop for Socket<S> {
    fn drop(&mut self) {
        // The loop is gone (it is being dropped, with the task that held
        // this socket): its poller is closed, and there is nothing to undo.
        if let Some(event_loop) = self.event_loop.upgrade() {
            // Failing to deregister a socket that is closing anyway changes
            // nothing: the OS forgets it when it closes.
            let _ = event_loop.deregister(&mut self.source, self.token);
        }
    }
}

/// What a socket's last read proved: a read that took fewer bytes than
/// its buffer holds took all there was, so the next `read` waits for the
/// socket's next readable edge without trying, one system call saved per
/// message (tokio does the same). Not on Windows, where mio emulates
/// readiness and a short read proves nothing.
#[derive(Default)]
struct ShortReads {
    /// After a short read, the socket's count of readable edges then.
    drained_at: Option<u64>,
}

impl ShortReads {
    fn note_read(
        &mut self,
        event_loop: &Weak<EventLoop>,
        token: Token,
        read: usize,
        wanted: usize,
    ) {
        let short = read > 0 && read < wanted;
        self.drained_at = if short && cfg!(not(windows)) {
            readable_edges(event_loop, token)
        } else {
            None
        };
    }

    fn emptied(
        &self,
        event_loop: &Weak<EventLoop>,
        token: Token,
    ) -> Option<Emptied> {
        Some(Emptied {
            event_loop: event_loop.clone(),
            token,
            edges: self.drained_at?,
        })
    }
}

/// A short read's proof: the socket's count of readable edges then.
struct Emptied {
    event_loop: Weak<EventLoop>,
    token: Token,
    edges: u64,
}

impl Emptied {
    /// Whether no readable edge has come since (a closed socket is never
    /// empty: its end of stream is always there to read).
    fn still_empty(&self) -> bool {
        readable_edges(&self.event_loop, self.token) == Some(self.edges)
    }
}

fn readable_edges(event_loop: &Weak<EventLoop>, token: Token) -> Option<u64> {
    event_loop.upgrade()?.readable_edges(token)
}

/// By hand: the loop a socket holds has no use in a printout.
impl<S: Source + fmt::Debug> fmt::Debug for Socket<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Socket")
            .field("source", &self.source)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}
