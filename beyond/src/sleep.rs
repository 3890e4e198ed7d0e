//! `sleep` and `yield_now`: the futures at the bottom of a task's awaits.
//!
//! A `Sleep` sets its timer at its first poll and keeps only the timer's
//! handle; the timer owns the waker it wakes, so a poll from another task
//! replaces the timer rather than keeping a second waker. A sleep whose
//! timer fired is done without reading the clock; one dropped early
//! cancels its timer, which leaves the wheel at once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::event_loop::{TimerHandle, deadline_after, running_loop};

/// Waits until `duration` has passed, without holding up other tasks.
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

/// The future `sleep` returns. Nothing happens until its first poll.
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
        if self.timer.as_ref().is_some_and(TimerHandle::has_fired) {
            self.timer = None; // fired: the deadline has passed
            return Poll::Ready(());
        }
        if Instant::now() >= self.deadline {
            return Poll::Ready(()); // the drop cancels a timer still set
        }
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
    /// Sets a timer that wakes `waker` at the deadline, cancelling the one
    /// it replaces.
    fn set_timer(&mut self, waker: Waker) {
        let timer = running_loop().wake_at(self.deadline, waker);
        if let Some(replaced) = self.timer.replace(timer) {
            replaced.cancel();
        }
    }
}

/// A sleep dropped before its deadline cancels its timer: the loop neither
/// keeps it nor waits for it.
impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(timer) = &self.timer {
            timer.cancel();
        }
    }
}

/// Lets every other ready task run before this one goes on: the task wakes
/// itself and says `Pending` once.
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
