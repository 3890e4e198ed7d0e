//! The reactor: how a task waits for a socket.
//!
//! A `Socket` is a non-blocking mio socket registered with the loop. Every
//! operation on it is tried first. Only when the OS answers `WouldBlock`
//! does the task leave its waker with the loop, in a `read_wait` or
//! `write_wait` callback whose one job is to wake it, and return `Pending`.
//! When the loop's `poll` reports the socket ready, the callback runs, the
//! task is polled again, and it tries again: seed 001's "call me when this
//! file descriptor is readable", with a task in place of the callback.

use std::fmt;
use std::future;
use std::io::{self, Read, Write};
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};

use mio::event::Source;
use mio::{Interest, Token};

use crate::event_loop::{EventLoop, running_loop};

// ANCHOR: socket
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
        })
    }
    // ANCHOR_END: socket

    /// The mio socket inside, for the calls that never wait (addresses,
    /// options, `shutdown`).
    pub(crate) fn get_ref(&self) -> &S {
        &self.source
    }

    // ANCHOR: reactor
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
                // ANCHOR: would_block
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    return match self.wake_when_ready(direction, cx.waker()) {
                        Ok(()) => Poll::Pending,
                        Err(err) => Poll::Ready(Err(err)),
                    };
                }
                // ANCHOR_END: would_block
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
    ///
    /// For `LOOP_TRACE`: `event_loop.trace.task_waits(token, reading)` once
    /// the waker is left, so the trace can say which task a socket wakes.
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
        let waker = waker.clone();
        let wake = move |_: &EventLoop| waker.wake();
        match direction {
            Direction::Read => event_loop.read_wait(self.token, wake),
            Direction::Write => event_loop.write_wait(self.token, wake),
        }
        event_loop
            .trace
            .task_waits(self.token.0, matches!(direction, Direction::Read));
        Ok(())
    }
    // ANCHOR_END: reactor

    // ANCHOR: async_io
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
    // ANCHOR_END: async_io
}

// ANCHOR: waiting
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
// ANCHOR_END: waiting

// ANCHOR: read_write
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
    /// and gets them at once. It awaits `async_io`, reading, with the read
    /// into `buf` as the operation.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.async_io(Direction::Read, |mut source| source.read(buf))
            .await
    }

    /// Waits until the socket's send buffer has room, then writes what fits
    /// of `bytes` and says how much that was.
    pub async fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.async_io(Direction::Write, |mut source| source.write(bytes))
            .await
    }
    // ANCHOR_END: read_write

    // ANCHOR: write_all
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
    // ANCHOR_END: write_all

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

// ANCHOR: deregister_on_drop
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
// ANCHOR_END: deregister_on_drop

// ---------------------------------------------------------------------------
// Plumbing: not the lesson. `Socket`'s `Debug`, written by hand because the
// loop it holds has no use in a printout. A reader may stop here.
// ---------------------------------------------------------------------------

impl<S: Source + fmt::Debug> fmt::Debug for Socket<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Socket")
            .field("source", &self.source)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}
