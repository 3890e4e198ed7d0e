//! Faster, not new: read after the lesson. What made step 8's loop faster
//! without teaching anything about cancellation, fenced here so the files
//! that teach it show cancellation:
//!
//! - the loop's clock in `Ticks`, so a timer on the heap is 24 bytes;
//! - `TimerHandle::has_fired`, so a `Sleep` whose timer fired does not read
//!   the clock;
//! - the socket waiters' table hashing its tokens as the task table hashes
//!   its ids;
//! - each socket's readable edges, counted, and the short-read proof the
//!   reactor's `read` keeps with them.
//!
//! Chapter 8, "Faster without a new idea", measures each one. A module of
//! the loop's own, so it may read the loop's private fields. Its small
//! functions are `#[inline]`: the reactor's `read` is generic, compiled in
//! the crate that uses it, which may then inline them, as it could when
//! they were methods of the generic `Socket`.

use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Weak;
use std::time::{Duration, Instant};

use mio::Token;
use mio::event::Event;

use super::{EventLoop, TimerHandle};
use crate::task::IdHasher;

/// A deadline in nanoseconds since the loop was made: 8 bytes where an
/// `Instant` takes 16, and one comparison.
pub(super) type Ticks = u64;

/// The loop's clock in `Ticks`.
pub(super) struct LoopClock {
    epoch: Instant,
}

impl LoopClock {
    pub(super) fn start() -> Self {
        LoopClock {
            epoch: Instant::now(),
        }
    }

    #[inline]
    pub(super) fn now(&self) -> Ticks {
        self.ticks(Instant::now())
    }

    /// `instant` in ticks. An instant before the loop was made is tick 0:
    /// such timers are due at once, and fire in the order they were set,
    /// not by how long ago their deadlines passed.
    #[inline]
    pub(super) fn ticks(&self, instant: Instant) -> Ticks {
        let since = instant.saturating_duration_since(self.epoch);
        u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
    }

    #[inline]
    pub(super) fn until(&self, deadline: Ticks) -> Duration {
        Duration::from_nanos(deadline.saturating_sub(self.now()))
    }

    #[inline]
    pub(super) fn instant(&self, deadline: Ticks) -> Instant {
        self.epoch + Duration::from_nanos(deadline)
    }
}

impl TimerHandle {
    /// Whether the timer fired: it is no longer pending, and a `Sleep`,
    /// which never keeps a handle it cancelled, asks only of a timer it did
    /// not cancel. `false` once the loop that set it is gone.
    pub(crate) fn has_fired(&self) -> bool {
        self.pending() == Some(false)
    }
}

/// How the socket waiters' table hashes its tokens: as the task table
/// hashes its ids (`SequentialIds` in `task.rs`), for the same reasons. The
/// loop counts tokens out itself, so no one picks them, and it looks a
/// socket's waiters up at each wait and each end of a read or write.
pub(super) type SequentialTokens = BuildHasherDefault<TokenHasher>;

/// The hasher `SequentialTokens` builds: a token is a `usize`.
#[derive(Default)]
pub(super) struct TokenHasher(IdHasher);

impl Hasher for TokenHasher {
    fn write(&mut self, _: &[u8]) {
        unreachable!("tokens hash as one usize");
    }

    #[inline]
    fn write_usize(&mut self, token: usize) {
        self.0.write_u64(token as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// One socket's readable edges, kept with its waiters: how many times it
/// was reported readable (or closed, or failed), waited for or not, and
/// whether it was ever reported closed for reading, or failed: then it is
/// never empty, its end of stream always there to read.
#[derive(Default)]
pub(super) struct ReadableEdges {
    count: u64,
    closed: bool,
}

impl ReadableEdges {
    /// Counts `event`, which made the socket readable, closed or failed.
    #[inline]
    pub(super) fn count(&mut self, event: &Event) {
        self.count += 1;
        self.closed |= event.is_read_closed() || event.is_error();
    }

    /// The count so far; `None` once reported closed.
    #[inline]
    fn so_far(&self) -> Option<u64> {
        (!self.closed).then_some(self.count)
    }
}

impl EventLoop {
    /// How many times the socket named `token` was reported readable: the
    /// reactor's proof that a socket a short read emptied has had nothing
    /// since. `None` once it was reported closed (or for a token unknown).
    #[inline]
    fn readable_edges(&self, token: Token) -> Option<u64> {
        let io_waiters = self.io_waiters.borrow();
        io_waiters.get(&token)?.readable_edges.so_far()
    }
}

/// What a `Socket`'s last read proved. Step 7's rule is to try first and
/// wait only after `WouldBlock`; but a read that took fewer bytes than its
/// buffer holds took all there was, so the next `read` may wait for the
/// socket's next readable edge without trying, which saves a system call
/// per message (tokio does the same).
#[derive(Default)]
pub(crate) struct ShortReads {
    /// After a short read, the count of the socket's readable edges then:
    /// until the count moves, the socket is known to be empty.
    drained_at: Option<u64>,
}

impl ShortReads {
    /// Remembers whether a read of `read` bytes into a buffer of `wanted`
    /// emptied the socket named `token`.
    #[inline]
    pub(crate) fn note_read(
        &mut self,
        event_loop: &Weak<EventLoop>,
        token: Token,
        read: usize,
        wanted: usize,
    ) {
        let short = read > 0 && read < wanted;
        self.drained_at = if short && SHORT_READ_EMPTIES {
            readable_edges(event_loop, token)
        } else {
            None
        };
    }

    /// What the last read proved, for the next one to check.
    #[inline]
    pub(crate) fn emptied(
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

/// A short read's proof that its socket was empty: the socket's count of
/// readable edges then.
pub(crate) struct Emptied {
    event_loop: Weak<EventLoop>,
    token: Token,
    edges: u64,
}

impl Emptied {
    /// Whether no readable edge has come since. A socket reported closed is
    /// never empty: its end of stream is always there to read (the loop
    /// then gives no count).
    #[inline]
    pub(crate) fn still_empty(&self) -> bool {
        readable_edges(&self.event_loop, self.token) == Some(self.edges)
    }
}

/// How many readable edges the loop has counted for the socket named
/// `token`; `None` once the socket was reported closed, or the loop is gone.
#[inline]
fn readable_edges(event_loop: &Weak<EventLoop>, token: Token) -> Option<u64> {
    event_loop.upgrade()?.readable_edges(token)
}

/// Whether a short read proves a socket empty. Not on Windows, where mio
/// emulates readiness and a short read proves nothing; tokio does the same.
/// (TCP urgent data can end a read early too; like tokio, we ignore it:
/// nothing here sends any.)
const SHORT_READ_EMPTIES: bool = cfg!(not(windows));
