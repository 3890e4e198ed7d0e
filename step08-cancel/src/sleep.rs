//! The first things a task can await: a deadline, and the end of its turn.
//!
//! Both are futures written by hand, as every future at the bottom of an
//! `.await` chain is: `async fn`s only await other futures, and somewhere a
//! `poll` has to say "not yet" and arrange to be woken.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::event_loop::{TimerHandle, deadline_after, running_loop};

// ANCHOR: sleep
/// Waits until `duration` has passed, without holding up other tasks.
/// asyncio's `asyncio.sleep`.
pub fn sleep(duration: Duration) -> Sleep {
    sleep_until(deadline_after(duration))
}

/// Waits until the clock reaches `deadline`.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        timer: None,
    }
}

/// The future `sleep` returns: seed 001's `LoopSleepGenerator` in Rust.
///
/// Its first poll puts a timer on the running loop that wakes the task;
/// polls after that look at the clock. Until the first poll, nothing
/// happens at all: a future does nothing until it is polled. Dropped, it
/// cancels its timer; and since timers can be cancelled, its timer owns
/// the waker it wakes (`wake_at`: no callback, and no `Rc<RefCell<Waker>>`
/// to share, as in step 7): a poll from another task replaces the timer.
/// The sleep keeps no waker of its own, so once its timer is gone, nothing
/// of the sleep's can wake the task (chapter 5, "Lost wake-ups").
#[derive(Debug)]
#[must_use = "a future does nothing unless it is awaited"]
pub struct Sleep {
    deadline: Instant,
    /// `None` until the timer is set; then the handle that cancels it.
    timer: Option<TimerHandle>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // Done by the clock, the timer may still be pending: the drop
        // cancels it.
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        // Polled again before the deadline, the timer must wake whoever
        // polled last: usually the same task, whose timer is set already.
        if !self
            .timer
            .as_ref()
            .is_some_and(|timer| timer.wakes(cx.waker()))
        {
            self.set_timer(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl Sleep {
    /// Sets a timer that wakes `waker` at the deadline, and cancels the one
    /// it replaces, if any.
    fn set_timer(&mut self, waker: Waker) {
        let timer = running_loop().wake_at(self.deadline, waker);
        if let Some(replaced) = self.timer.replace(timer) {
            replaced.cancel();
        }
    }
}
// ANCHOR_END: sleep

// ANCHOR: sleep_drop
/// A `Sleep` dropped before its deadline (its task was cancelled, or a
/// `timeout` gave up on it, or it lost a race) has no one left to wake:
/// its timer is cancelled, so the loop neither keeps nor waits for it.
impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(timer) = &self.timer {
            timer.cancel();
        }
    }
}
// ANCHOR_END: sleep_drop

// ANCHOR: yield_now
/// Lets every other ready task run before this one goes on. The seeds'
/// `_async_yield`.
///
/// The task wakes itself and says "not yet" once, so the loop polls it
/// again on its next turn, after everything that was ready before it.
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future `yield_now` returns.
#[derive(Debug)]
#[must_use = "a future does nothing unless it is awaited"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
// ANCHOR_END: yield_now
