//! The first things a task can await: a deadline, and the end of its turn.
//!
//! Both are futures written by hand, as every future at the bottom of an
//! `.await` chain is: `async fn`s only await other futures, and somewhere a
//! `poll` has to say "not yet" and arrange to be woken.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::event_loop::{deadline_after, running_loop};

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
        waker: None,
    }
}

/// The future `sleep` returns: seed 001's `LoopSleepGenerator` in Rust.
///
/// Its first poll puts a timer on the running loop whose callback wakes the
/// task; polls after that look at the clock and hand the timer their waker.
/// Until the first poll, nothing happens at all: a future does nothing
/// until it is polled.
#[derive(Debug)]
#[must_use = "a future does nothing unless it is awaited"]
pub struct Sleep {
    deadline: Instant,
    /// `None` until the timer is set; then the waker its callback wakes,
    /// updated at every poll. The callback owns it and the sleep only
    /// looks, so once the timer has fired the sleeping task holds no waker
    /// of its own: if nothing else does, nothing can wake it, and the loop
    /// can say so (see "Lost wake-ups" in chapter 5).
    waker: Option<Weak<RefCell<Waker>>>,
}

impl Future for Sleep {
    type Output = ();

    // BUILD 4/4: chapter 5, "The idea"; test step05_sleep::two_sleeping_tasks_take_as_long_as_the_longer_sleep
    /// Ready once the clock has reached the deadline. Before that, `Pending`,
    /// with the timer set to wake whoever polled last: the first poll sets
    /// it (`call_at`), its callback owning the waker it wakes and the sleep
    /// keeping a `Weak` to that; every later poll puts its own waker there,
    /// not only the first (a future may be polled by another task's waker).
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        if let Some(waker) = self.waker.as_ref().and_then(Weak::upgrade) {
            waker.borrow_mut().clone_from(cx.waker());
        } else {
            let waker = Rc::new(RefCell::new(cx.waker().clone()));
            self.waker = Some(Rc::downgrade(&waker));
            running_loop().call_at(self.deadline, move |_| {
                waker.borrow().wake_by_ref();
            });
        }
        Poll::Pending
    }
}
// ANCHOR_END: sleep

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
