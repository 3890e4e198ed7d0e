//! `timeout`: giving up on a future at a deadline, by dropping it.

use std::error::Error;
use std::fmt;
use std::future::{self, Future};
use std::io;
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::Duration;

use crate::sleep::sleep;

/// Waits for `future`, but no longer than `duration` from now: gives what
/// the future gave, or `TimedOut` at the deadline.
///
/// At the deadline the future is dropped where it stands, and in Rust that
/// *is* cancelling it, exactly as `JoinHandle::cancel` does to a task: its
/// destructors run and close whatever it held (a socket, its own timers).
///
/// But a `JoinHandle` is not its task: dropping the handle detaches the
/// task, which runs on, as in tokio. So `timeout(duration, handle)` stops
/// waiting and leaves the task running, as does a future that awaits a
/// bare handle. To cancel the task at the deadline, use
/// `timeout(duration, handle.cancel_on_drop())`. `join_all` holds its
/// handles that way, so a timed-out `join_all` cancels its tasks.
///
/// Each poll tries the future before it looks at the clock, so a future
/// that is ready wins, even when the deadline passed while it waited for
/// its turn: a busy loop is no reason to throw away a finished result.
pub fn timeout<F: Future>(
    duration: Duration,
    future: F,
) -> impl Future<Output = Result<F::Output, TimedOut>> {
    let mut deadline = sleep(duration);
    async move {
        let mut future = pin!(future);
        future::poll_fn(|cx| {
            if let Poll::Ready(value) = future.as_mut().poll(cx) {
                return Poll::Ready(Ok(value));
            }
            Pin::new(&mut deadline).poll(cx).map(|()| Err(TimedOut))
        })
        .await
    }
}

/// The error `timeout` gives when the deadline comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut;

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("timed out")
    }
}

impl Error for TimedOut {}

/// So a function that returns `io::Result` can use `?` on a timeout.
impl From<TimedOut> for io::Error {
    fn from(timed_out: TimedOut) -> Self {
        io::Error::new(io::ErrorKind::TimedOut, timed_out)
    }
}
