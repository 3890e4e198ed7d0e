//! Guards for tests whose bug would be a hang, and probes of a future:
//! a limit on a test's time (`within`, `patience`), a backstop on each of a
//! future's waits, a count of a future's polls, a flag its destructor sets.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use crate::PATIENCE_VAR;

/// Far more than any loop test needs: reaching it in `within` means a hang.
pub const HANG_LIMIT: Duration = Duration::from_secs(20);

/// `limit`, or the shorter patience `check` asks for (`PATIENCE_VAR`).
pub fn patience(limit: Duration) -> Duration {
    patience_given(limit, std::env::var(PATIENCE_VAR).ok().as_deref())
}

/// `limit`, or `given` seconds if fewer and a number.
fn patience_given(limit: Duration, given: Option<&str>) -> Duration {
    given
        .and_then(|secs| secs.parse().ok())
        .map_or(limit, |secs| limit.min(Duration::from_secs(secs)))
}

/// Runs `work` on a thread of its own and returns what it returned, or fails
/// the test once `limit` has passed.
///
/// For tests whose bug would be a hang: a lost wake-up leaves a loop blocked
/// in `poll` for ever, and the test should say so instead of never ending.
/// (The stuck thread is left behind; the failing test ends the process.)
pub fn within<T: Send + 'static>(
    limit: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let limit = patience(limit);
    let (done, result) = mpsc::channel();
    let worker = thread::spawn(move || {
        // The receiver is gone only if we already failed the test.
        let _ = done.send(work());
    });
    match result.recv_timeout(limit) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => {
            panic!(
                "still running after {limit:?}: a loop that never ends, or a \
                 wake-up that never comes?"
            )
        }
        // `work` panicked: fail with its own message.
        Err(RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the worker sends before it ends"),
        },
    }
}

/// How long `before_the_backstop` lets one wait last before it gives up:
/// far more than any wait in the tests takes, even on a loaded machine.
pub const BACKSTOP: Duration = Duration::from_secs(2);

/// Runs `work` until it is done, or until one of its waits has lasted
/// `BACKSTOP`: then gives up on it and says so with `None`. A wake-up that
/// never comes then fails the test with a message, rather than hanging it.
/// `set_timer` schedules a callback on the step's loop (each step has its
/// own `EventLoop` type: `|delay, wake| lp.call_later(delay, |_| wake())`).
pub async fn before_the_backstop<T>(
    set_timer: impl Fn(Duration, Box<dyn FnOnce()>),
    work: impl Future<Output = T>,
) -> Option<T> {
    let mut work = std::pin::pin!(work);
    // Counts the waits; a backstop fires only if its wait is the latest.
    let waits = Rc::new(Cell::new(0_u64));
    let fired = Rc::new(Cell::new(false));
    std::future::poll_fn(|cx| {
        // Checked first: a backstop's wake-up may well let `work` finish.
        if fired.get() {
            return Poll::Ready(None);
        }
        if let Poll::Ready(value) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(value));
        }
        let wait = waits.get() + 1;
        waits.set(wait);
        let (waits, fired, waker) =
            (Rc::clone(&waits), Rc::clone(&fired), cx.waker().clone());
        set_timer(
            BACKSTOP,
            Box::new(move || {
                if waits.get() == wait {
                    fired.set(true);
                    waker.wake();
                }
            }),
        );
        Poll::Pending
    })
    .await
}

/// A future wrapped so a test can count its polls, and fail if it is ever
/// polled again after it completed.
#[derive(Debug)]
pub struct Counted<F> {
    future: Pin<Box<F>>,
    polls: Rc<Cell<u32>>,
    completed: bool,
}

/// Wraps `future`; the counter tells how many times it has been polled.
pub fn counted<F: Future>(future: F) -> (Counted<F>, Rc<Cell<u32>>) {
    let polls = Rc::new(Cell::new(0));
    let counted = Counted {
        future: Box::pin(future),
        polls: Rc::clone(&polls),
        completed: false,
    };
    (counted, polls)
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        assert!(
            !self.completed,
            "a task was polled again after it returned Ready (poll {}): a task \
             that is done leaves the loop's table and is never polled again",
            self.polls.get() + 1
        );
        self.polls.set(self.polls.get() + 1);
        let poll = self.future.as_mut().poll(cx);
        self.completed = poll.is_ready();
        poll
    }
}

/// Sets its flag when dropped: put in a future, it shows whether the
/// future's destructor has run.
#[derive(Debug)]
pub struct DropFlag(Rc<Cell<bool>>);

impl DropFlag {
    /// A flag, and the cell that turns `true` once the flag is dropped.
    pub fn new() -> (Self, Rc<Cell<bool>>) {
        let dropped = Rc::new(Cell::new(false));
        (DropFlag(Rc::clone(&dropped)), dropped)
    }
}

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_under_check_waits_the_patience_it_is_given_if_shorter() {
        let limit = Duration::from_secs(20);
        assert_eq!(patience_given(limit, Some("1")), Duration::from_secs(1));
        assert_eq!(patience_given(limit, Some("60")), limit);
        assert_eq!(patience_given(limit, None), limit);
        assert_eq!(patience_given(limit, Some("soon")), limit);
    }
}
