//! Joining: a task's outcome handed to whoever waits for it.
//!
//! A spawned task and its `JoinHandle` share one small slot. When the task
//! ends, it leaves its outcome there (its value, the panic that ended it, or
//! word that it was dropped unfinished) and wakes the task awaiting the
//! handle, if one is. When the handle is awaited, it takes the outcome if it
//! is there already, or leaves its waker. Whichever comes first, nothing is
//! missed: seed 004's join race. The handle can also cancel its task.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::future::{self, Future};
use std::panic::{self, AssertUnwindSafe};
use std::pin::{Pin, pin};
use std::rc::{self, Rc};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};

use crate::trace;
use crate::waker::{TaskId, TaskWaker};

// ANCHOR: join_handle
/// Awaiting it waits for its task and gives the task's outcome: what it
/// returned, or a `JoinError`. It can cancel the task. Dropping it detaches
/// the task, which runs on.
///
/// It reaches the task's `TaskWaker` by a `Weak` reference: a handle is not
/// one of the task's wakers, so it does not hide a lost wake-up from the
/// loop's count (chapter 5, "Lost wake-ups"). The task's own `Reporter`
/// holds a strong one, which that count allows for.
#[derive(Debug)]
pub struct JoinHandle<T> {
    state: Rc<RefCell<JoinState<T>>>,
    task: Weak<TaskWaker>,
    id: TaskId,
}

/// The slot a task and its handle share.
#[derive(Debug)]
pub(crate) struct JoinState<T> {
    /// `None` until the task ends (and again once the joiner has it).
    outcome: Option<Result<T, JoinError>>,
    /// The waker of the task awaiting the handle, while it waits.
    joiner: Option<Waker>,
    /// Whether the task has ended: its outcome is, or was, in `outcome`.
    ended: bool,
}

impl<T> JoinHandle<T> {
    /// A handle for the task `task` wakes, and the task's side of the slot
    /// the handle reads.
    pub(crate) fn new(id: TaskId, task: &Arc<TaskWaker>) -> (Self, Reporter<T>) {
        let state = Rc::new(RefCell::new(JoinState {
            outcome: None,
            joiner: None,
            ended: false,
        }));
        let reporter = Reporter {
            state: Rc::clone(&state),
            task: Arc::clone(task),
        };
        let task = Arc::downgrade(task);
        (JoinHandle { state, task, id }, reporter)
    }

    /// The outcome, if the task has ended: how `block_on` checks on its
    /// main task between turns without being a task itself.
    pub(crate) fn take_outcome(&mut self) -> Option<Result<T, JoinError>> {
        self.state.borrow_mut().outcome.take()
    }
}

impl<T: 'static> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    /// The child's outcome, once it has ended. Before that, `Pending`, with
    /// this poll's waker left in the slot as the joiner, for
    /// `Reporter::report` to wake; the first time one is left there,
    /// `note_waiting_join` says where it waits, for the loop's lost wake-up
    /// check. Polled again after it gave the outcome, it panics: it would
    /// wait for ever.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(outcome) = self.take_outcome() {
            return Poll::Ready(outcome); // ended already: no waiting at all
        }
        // Its outcome was taken already: waiting would be waiting for ever.
        assert!(
            !self.state.borrow().ended,
            "JoinHandle polled after it gave its outcome"
        );
        let earlier = self.state.borrow_mut().joiner.replace(cx.waker().clone());
        if earlier.is_none() {
            // Where this waker now waits, for the loop's lost wake-up check.
            note_waiting_join(self.id, &self.state);
        }
        Poll::Pending
    }
}
// ANCHOR_END: join_handle

// ANCHOR: cancel
impl<T> JoinHandle<T> {
    // BUILD 3/5: chapter 8, "The idea"; test step08_cancel::cancelling_a_finished_task_cancels_nothing_and_keeps_its_value
    /// Cancels the task: the loop drops its future instead of polling it
    /// again. The task stops at the `.await` where it waits, its destructors
    /// run, and awaiting this handle gives `JoinError::Cancelled` (or
    /// `Panicked`, if one of those destructors panicked). Seed 004
    /// throws `CancelledError` into the task instead, and the task may catch
    /// it to clean up; in Rust the destructors are the cleanup, and there is
    /// nothing to catch.
    ///
    /// The drop waits for a safe point: the loop's next turn to the task,
    /// never the middle of a poll. So a task may cancel itself, or cancel a
    /// child in the middle of its own poll. A task already queued to run is
    /// not polled again: the gap seed 004 admits to.
    ///
    /// Says whether this call cancelled the task: `false` when the task had
    /// ended already (its outcome stays joinable) or was cancelled before.
    /// A task not ended is still in the loop's table, and is cancelled
    /// through its waker (`TaskWaker::cancel`).
    pub fn cancel(&self) -> bool {
        if self.is_finished() {
            return false;
        }
        // Not finished, so still in the loop's table, which holds it.
        self.task.upgrade().is_some_and(|task| task.cancel())
    }

    /// Whether the task has ended: returned, panicked or been cancelled.
    pub fn is_finished(&self) -> bool {
        self.state.borrow().ended
    }

    /// The handle as a future that cancels its task if it is dropped before
    /// the task ends: for waiting under `timeout`, as asyncio's `wait_for`
    /// does. A bare handle, dropped, only detaches its task.
    pub fn cancel_on_drop(self) -> CancelOnDrop<T> {
        CancelOnDrop(self)
    }
}
// ANCHOR_END: cancel

// ANCHOR: cancel_on_drop
/// What `JoinHandle::cancel_on_drop` returns. Awaiting it gives the task's
/// outcome, as the handle does; dropping it before then cancels the task.
/// So `timeout(duration, handle.cancel_on_drop())` gives the task up at the
/// deadline and stops it, where `timeout(duration, handle)` stops only
/// waiting for it. tokio-util's `AbortOnDropHandle`.
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
        self.0.cancel(); // does nothing once the task has ended
    }
}
// ANCHOR_END: cancel_on_drop

// ANCHOR: run_and_report
/// What the loop runs for a spawned `future`: the future itself, then the
/// report of its outcome to its handle.
///
/// A panic while polling `future` is caught here, so it ends this task
/// only, and becomes the outcome. `AssertUnwindSafe` is sound because a
/// future that panicked is never polled again, only dropped; its joiner
/// learns that it failed rather than seeing what it left half done.
///
/// `Contained` holds the future and the reporter: its `poll` catches a
/// panic in the future's poll, and its drop one in the future's
/// destructors (a task dropped before it ends). Poll it to the end
/// (`poll_fn`), then `report` the outcome through its reporter.
pub(crate) async fn run_and_report<T>(
    future: impl Future<Output = T>,
    reporter: Reporter<T>,
) {
    let mut task = Contained {
        future: pin!(Some(future)),
        reporter,
    };
    let outcome = future::poll_fn(|cx| task.poll(cx)).await;
    task.reporter.report(outcome);
}

/// The task's future and its reporter, so that a panic in the future's
/// destructors is caught too.
///
/// The loop drops a task it has not finished (at the end of `block_on`, or
/// with the loop), and a destructor may panic there. That panic belongs to
/// the task, as a panic in its poll does: it becomes the task's outcome,
/// and the loop, which is only tidying up, goes on.
struct Contained<'a, F: Future> {
    /// `None` once dropped: dropping in place is all a pinned future allows.
    future: Pin<&'a mut Option<F>>,
    reporter: Reporter<F::Output>,
}

impl<F: Future> Contained<'_, F> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<F::Output, JoinError>> {
        let future = self.future.as_mut().as_pin_mut().expect("not dropped yet");
        match panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => {
                trace::poll_panicked();
                Poll::Ready(Err(JoinError::Panicked(panic)))
            }
        }
    }
}

impl<F: Future> Drop for Contained<'_, F> {
    /// Drops the future before the reporter, so a panic here is reported
    /// before the reporter's own drop would report `Cancelled`.
    fn drop(&mut self) {
        let dropping = AssertUnwindSafe(|| self.future.set(None));
        if let Err(panic) = panic::catch_unwind(dropping) {
            self.reporter.report(Err(JoinError::Panicked(panic)));
        }
    }
}

/// The task's side of the slot: it leaves the outcome there, once, and
/// wakes the joiner.
///
/// A task dropped before it ends never gets to report: its future, this
/// reporter inside it, is dropped. So the reporter's destructor reports
/// `Cancelled`, whatever dropped the task: `cancel`, or the end of
/// `block_on` or of the loop.
pub(crate) struct Reporter<T> {
    state: Rc<RefCell<JoinState<T>>>,
    task: Arc<TaskWaker>,
}

impl<T> Reporter<T> {
    /// Leaves `outcome` in the slot and wakes the joiner, if one waits,
    /// once the slot's borrow has ended. Only the first report counts: the
    /// reporter's drop, after the task has reported, does nothing.
    /// A task cancelled that returned in the same poll is still cancelled:
    /// it reports `Cancelled` (a panic is reported all the same).
    fn report(&self, outcome: Result<T, JoinError>) {
        if self.state.borrow().ended {
            return; // reported already: this is the reporter's drop
        }
        // A task that cancelled itself and then returned in the same poll
        // was still cancelled: `cancel` said so. A panic is news all the same.
        let outcome = match outcome {
            Ok(_) if self.task.is_cancelled() => Err(JoinError::Cancelled),
            outcome => outcome,
        };
        let joiner = {
            let mut state = self.state.borrow_mut();
            state.ended = true;
            state.outcome = Some(outcome);
            state.joiner.take()
        };
        if let Some(joiner) = joiner {
            joiner.wake();
        }
    }
}

impl<T> Drop for Reporter<T> {
    fn drop(&mut self) {
        self.report(Err(JoinError::Cancelled));
    }
}
// ANCHOR_END: run_and_report

// ANCHOR: join_error
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

/// What a panic says: `panic!` and its friends panic with a string, either
/// a `&str` or, when the message was formatted, a `String`.
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
// ANCHOR_END: join_error

// ---------------------------------------------------------------------------
// Plumbing: not the lesson. What the loop asks of a slot when it looks for
// a lost wake-up; `JoinError`'s `Debug`, written by hand so that `unwrap()`
// on a join outcome shows the panic's message. A reader may stop here.
// ---------------------------------------------------------------------------

/// What the loop may ask of a task's slot, whatever the task returns.
pub(crate) trait JoinSlot {
    /// Where the waker of the task that awaits the handle points, while one
    /// waits: the address of that task's `TaskWaker`. A waker kept in a
    /// pending task's slot wakes only when that task ends, which is what a
    /// lost wake-up's check must know (`Tasks::lost_wake_up`).
    fn joiner_waker_data(&self) -> Option<*const ()>;
}

impl<T> JoinSlot for RefCell<JoinState<T>> {
    fn joiner_waker_data(&self) -> Option<*const ()> {
        // Borrowed elsewhere? Then say nothing: the check stays silent.
        let state = self.try_borrow().ok()?;
        state.joiner.as_ref().map(Waker::data)
    }
}

thread_local! {
    /// The join slots where a task's waker waits for another task to end,
    /// as `JoinHandle::poll` notes them: what `Tasks::lost_wake_up` counts
    /// as the loop's own. Per thread, as the running loop is.
    static WAITING_JOINS: RefCell<WaitingJoins> = RefCell::default();
}

/// Notes that a task's waker now waits in `slot` for task `child` to end:
/// a reference to the waker that only `child`'s end can use.
fn note_waiting_join<T: 'static>(child: TaskId, slot: &Rc<RefCell<JoinState<T>>>) {
    let slot: Rc<dyn JoinSlot> = slot.clone();
    WAITING_JOINS.with_borrow_mut(|joins| joins.note(child, Rc::downgrade(&slot)));
}

/// Forgets every noted slot, and the list's memory: `block_on`'s end, when
/// the running loop leaves this thread.
pub(crate) fn forget_waiting_joins() {
    WAITING_JOINS.take();
}

/// Each join slot a waker waits in, once, with the task it waits for.
pub(crate) fn waiting_joins() -> Vec<(TaskId, Rc<dyn JoinSlot>)> {
    WAITING_JOINS.with_borrow_mut(WaitingJoins::live)
}

/// The join slots where a waker waits, as `JoinHandle::poll` notes them:
/// kept out of `Task`, whose size every spawn pays for, since only the
/// rare lost wake-up check reads them. Slots no longer waited in are
/// forgotten whenever the list has doubled since it was last tidied, so it
/// never grows past twice the joins waiting at once.
#[derive(Default)]
struct WaitingJoins {
    slots: Vec<(TaskId, rc::Weak<dyn JoinSlot>)>,
    tidy_at: usize,
}

impl WaitingJoins {
    fn note(&mut self, child: TaskId, slot: rc::Weak<dyn JoinSlot>) {
        if self.slots.len() >= self.tidy_at {
            self.tidy();
        }
        self.slots.push((child, slot));
    }

    /// Forgets the slots that are gone or have no waker waiting.
    fn tidy(&mut self) {
        self.slots.retain(|(_, slot)| {
            slot.upgrade()
                .is_some_and(|slot| slot.joiner_waker_data().is_some())
        });
        self.tidy_at = (2 * self.slots.len()).max(64);
    }

    /// Each slot with a waker waiting, once, with the task it waits for.
    fn live(&mut self) -> Vec<(TaskId, Rc<dyn JoinSlot>)> {
        self.tidy();
        let mut seen = HashSet::new();
        self.slots
            .iter()
            .filter_map(|(child, slot)| Some((*child, slot.upgrade()?)))
            .filter(|(_, slot)| seen.insert(Rc::as_ptr(slot).cast::<()>()))
            .collect()
    }
}

/// Written by hand because a derived `Debug` would show the panic as
/// `Any { .. }`, and `unwrap()` on a join outcome would hide its message.
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
