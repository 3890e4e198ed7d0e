//! Joining: a task's outcome, handed to whoever awaits its handle. The
//! outcome waits in the task table (`task.rs`), not in an allocation the
//! task and its handle share.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::task::{TaskId, Tasks};

/// Awaiting it gives the task's outcome: its value, or a `JoinError`. It
/// can cancel the task. Dropping it detaches the task, which runs on.
pub struct JoinHandle<T> {
    tasks: Rc<Tasks>,
    id: TaskId,
    /// Whether the outcome has been given (the table forgot the task).
    taken: bool,
    output: PhantomData<fn() -> T>,
}

impl<T: 'static> JoinHandle<T> {
    pub(crate) fn new(tasks: Rc<Tasks>, id: TaskId) -> Self {
        JoinHandle {
            tasks,
            id,
            taken: false,
            output: PhantomData,
        }
    }

    /// The outcome, if the task has ended: how `block_on` checks on its
    /// main task between turns.
    pub(crate) fn take_outcome(&mut self) -> Option<Result<T, JoinError>> {
        if self.taken {
            return None;
        }
        let outcome = self.tasks.poll_join(self.id, None)?;
        Some(self.give(outcome))
    }

    fn give(
        &mut self,
        outcome: Result<Box<dyn Any>, JoinError>,
    ) -> Result<T, JoinError> {
        self.taken = true;
        outcome.map(|value| *value.downcast().expect("a task gives its own type"))
    }
}

impl<T: 'static> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    /// Panics if polled again after it gave the outcome: it would wait for
    /// ever.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        assert!(!self.taken, "JoinHandle polled after it gave its outcome");
        match self.tasks.poll_join(self.id, Some(cx.waker())) {
            Some(outcome) => Poll::Ready(self.give(outcome)),
            None => Poll::Pending,
        }
    }
}

impl<T> JoinHandle<T> {
    /// Cancels the task: the loop drops its future at its next turn to it,
    /// never in the middle of a poll, and awaiting this handle gives
    /// `JoinError::Cancelled` (`Panicked` if a destructor panicked). Says
    /// whether this call cancelled it: `false` once it has ended (its value
    /// stays joinable) or was cancelled already.
    pub fn cancel(&self) -> bool {
        !self.taken && self.tasks.cancel(self.id)
    }

    /// Whether the task has ended: returned, panicked or been cancelled.
    pub fn is_finished(&self) -> bool {
        self.taken || self.tasks.is_finished(self.id)
    }

    /// The handle as a future that cancels its task if dropped before the
    /// task ends: for waiting under `timeout`.
    pub fn cancel_on_drop(self) -> CancelOnDrop<T> {
        CancelOnDrop(self)
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if !self.taken {
            self.tasks.detach(self.id);
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.id)
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}

/// What `JoinHandle::cancel_on_drop` returns: the handle, which cancels its
/// task if dropped before the task ends.
#[derive(Debug)]
pub struct CancelOnDrop<T>(JoinHandle<T>);

impl<T: 'static> Future for CancelOnDrop<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for CancelOnDrop<T> {
    fn drop(&mut self) {
        self.0.cancel(); // nothing once the task has ended
    }
}

/// Why a task has no value to give.
pub enum JoinError {
    /// The task panicked; this is what it panicked with.
    Panicked(Box<dyn Any + Send>),
    /// The task was dropped before it ended, by `cancel` or by the end of
    /// `block_on` or of the loop.
    Cancelled,
}

impl JoinError {
    /// The panic's message, if the task panicked.
    pub fn panic_message(&self) -> Option<&str> {
        match self {
            JoinError::Panicked(panic) => Some(panic_message(panic.as_ref())),
            JoinError::Cancelled => None,
        }
    }
}

/// What a panic says, if it is a message (`&str` or `String`).
pub fn panic_message(panic: &(dyn Any + Send)) -> &str {
    if let Some(message) = panic.downcast_ref::<&str>() {
        message
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message
    } else {
        "(a panic that is not a message)"
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::Panicked(panic) => {
                write!(f, "task panicked: {}", panic_message(panic.as_ref()))
            }
            JoinError::Cancelled => write!(f, "task was cancelled"),
        }
    }
}

impl std::error::Error for JoinError {}

/// By hand, so that `unwrap()` on an outcome shows the panic's message.
impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::Panicked(panic) => {
                let message = panic_message(panic.as_ref());
                f.debug_tuple("Panicked").field(&message).finish()
            }
            JoinError::Cancelled => f.write_str("Cancelled"),
        }
    }
}
