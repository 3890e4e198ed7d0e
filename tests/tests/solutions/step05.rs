//! A solution to chapter 5's exercise. Try it yourself before reading on.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::AnyFlag;

// ANCHOR: flag
/// The flag keeps the waker of every task waiting for it. `raise` wakes
/// them all, once; until then, nobody polls a waiting task at all.
#[derive(Clone, Default)]
pub struct Flag {
    shared: Rc<RefCell<FlagState>>,
}

#[derive(Default)]
struct FlagState {
    raised: bool,
    /// Who to wake when the flag goes up.
    waiting: Vec<Waker>,
}

impl Flag {
    pub fn raise(&self) {
        let waiting = {
            let mut state = self.shared.borrow_mut();
            state.raised = true;
            std::mem::take(&mut state.waiting)
        };
        // The borrow has ended: a woken task may use the flag again.
        for waker in waiting {
            waker.wake();
        }
    }

    pub fn wait(&self) -> WaitForFlag {
        WaitForFlag { flag: self.clone() }
    }
}

/// The future `Flag::wait` returns.
pub struct WaitForFlag {
    flag: Flag,
}

impl Future for WaitForFlag {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.flag.shared.borrow_mut();
        if state.raised {
            return Poll::Ready(());
        }
        // Leave our waker where `raise` will find it, once: a task polled
        // again before the flag is up must not be listed twice.
        if !state.waiting.iter().any(|w| w.will_wake(cx.waker())) {
            state.waiting.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
// ANCHOR_END: flag

impl AnyFlag for Flag {
    fn raise(&self) {
        Flag::raise(self);
    }

    fn wait(&self) -> impl Future<Output = ()> + 'static {
        Flag::wait(self)
    }
}
