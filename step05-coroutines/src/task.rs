//! Tasks: futures the loop polls, one at a time, when they are woken.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::lost_wake_up::{LostWakeUp, SpawnedAt, Stuck, StuckTask};
use crate::trace::{Left, Trace};
use crate::waker::{TaskId, TaskWaker, WokenTasks};

// ANCHOR: task
/// A spawned future and the waker that queues it.
///
/// `future` is `None` while the loop is polling it: the future is taken out
/// of the task table for the poll, so the task may spawn or wake tasks (and
/// so borrow the table) while it runs.
pub(crate) struct Task {
    future: Option<TaskFuture>,
    waker: Arc<TaskWaker>,
}

/// What a task runs: any future with nothing to return, boxed so tasks of
/// different types fit in one table, and pinned because a future may hold
/// references into itself once it has been polled.
type TaskFuture = Pin<Box<dyn Future<Output = ()>>>;

/// The loop's tasks: every future not yet done, by id, and the list their
/// wakers write to.
pub(crate) struct Tasks {
    table: RefCell<HashMap<TaskId, Task>>,
    next_id: Cell<u64>,
    woken: Arc<WokenTasks>,
    /// The ids `poll_woken` is working through; empty between turns, and
    /// kept only so its memory is reused.
    polling: Cell<Vec<TaskId>>,
}
// ANCHOR_END: task

impl Tasks {
    pub(crate) fn new(woken: WokenTasks) -> Self {
        Tasks {
            table: RefCell::new(HashMap::new()),
            next_id: Cell::new(0),
            woken: Arc::new(woken),
            polling: Cell::new(Vec::new()),
        }
    }

    // ANCHOR: spawn
    /// Turns `future` into a task and wakes it, so the loop polls it for the
    /// first time on its next turn.
    #[track_caller]
    pub(crate) fn spawn(&self, future: impl Future<Output = ()> + 'static) {
        let id = TaskId(self.next_id.get());
        self.next_id.set(id.0 + 1);
        let waker = Arc::new(TaskWaker::new(
            id,
            Arc::clone(&self.woken),
            SpawnedAt::here(),
        ));
        let task = Task {
            future: Some(Box::pin(future)),
            waker: Arc::clone(&waker),
        };
        self.table.borrow_mut().insert(id, task);
        Waker::from(waker).wake();
    }
    // ANCHOR_END: spawn

    // BUILD 2/4: chapter 5, "The idea"; test step05_tasks::block_on_returns_what_its_future_returns
    // ANCHOR: poll_woken
    /// Polls each task woken since the loop last looked, once, in the order
    /// they were woken: the last phase of a turn of the loop. A task woken
    /// during these polls (by itself, as `yield_now` does, or by another
    /// task) is polled on the next turn, after the loop has looked at its
    /// timers and sockets again.
    ///
    /// The ids go into the kept `polling` list (`WokenTasks::take_into`),
    /// which is given back empty for the next turn: no allocation per turn.
    /// For `LOOP_TRACE`: `trace.tasks_woken(…)` with the ids, before the
    /// polls; each poll's trace is `poll_task`'s.
    pub(crate) fn poll_woken(&self, trace: &Trace) {
        let mut polling = self.polling.take();
        self.woken.take_into(&mut polling);
        trace.tasks_woken(polling.iter().map(|id| id.0));
        for &id in &polling {
            self.poll_task(id, trace);
        }
        polling.clear();
        self.polling.set(polling);
    }
    // ANCHOR_END: poll_woken

    // BUILD 3/4: chapter 5, "The idea"; test step05_tasks::tasks_take_turns_in_the_order_they_were_spawned
    // ANCHOR: poll_task
    /// Polls the task `id` once.
    ///
    /// The waker's `queued` flag is cleared *before* the poll, so a wake-up
    /// that comes while the task runs (even from the task itself) queues one
    /// more poll instead of being lost. A task that completes leaves the
    /// table, so it is never polled again, whoever still holds its waker;
    /// one still pending gets its future back. A task no longer in the
    /// table (it finished) is not polled at all.
    ///
    /// For `LOOP_TRACE`: `trace.poll_begins()` just before the poll, then
    /// `trace.polled(id, Left::Done)` or `Left::Pending`; when pending, also
    /// `trace.woke_itself(id, || …)`, the closure saying whether the task
    /// is in the woken list again (it woke itself during the poll).
    fn poll_task(&self, id: TaskId, trace: &Trace) {
        let Some((mut future, waker)) = self.take_future(id) else {
            return; // finished already: this wake-up came too late
        };
        waker.clear_queued();
        let waker = Waker::from(waker);
        let mut context = Context::from_waker(&waker);
        trace.poll_begins();
        match future.as_mut().poll(&mut context) {
            Poll::Ready(()) => {
                self.table.borrow_mut().remove(&id);
                trace.polled(id.0, Left::Done);
            }
            Poll::Pending => {
                trace.polled(id.0, Left::Pending);
                trace.woke_itself(id.0, || self.woken.contains(id));
                if let Some(task) = self.table.borrow_mut().get_mut(&id) {
                    task.future = Some(future);
                }
            }
        }
    }
    // ANCHOR_END: poll_task

    /// Takes task `id`'s future out of the table for a poll, with its waker.
    fn take_future(&self, id: TaskId) -> Option<(TaskFuture, Arc<TaskWaker>)> {
        let mut table = self.table.borrow_mut();
        let task = table.get_mut(&id)?;
        Some((task.future.take()?, Arc::clone(&task.waker)))
    }

    /// Whether a task has been woken since the loop last looked.
    pub(crate) fn any_woken(&self) -> bool {
        !self.woken.is_empty()
    }

    // ANCHOR: lost_wake_up
    /// Asked when the loop has nothing left to wait for, no callback, timer
    /// or socket, while tasks are still pending: can anything still wake
    /// one of them? A `Waker` is a counted reference to its task's
    /// `TaskWaker`, and the table holds one. If that is the only one left
    /// for every task, no thread, timer or socket holds a waker, and no
    /// task can ever be woken again: a lost wake-up, named here. If any
    /// other reference is alive (another thread may wake with it), or a
    /// wake-up came in meanwhile, it returns `None` and the loop waits.
    pub(crate) fn lost_wake_up(&self) -> Option<LostWakeUp> {
        let table = self.table.borrow();
        let held_elsewhere = table
            .values()
            .any(|task| Arc::strong_count(&task.waker) > 1);
        // Counted before the woken list is looked at: a waker is woken
        // before it is dropped, so a wake-up whose waker was just dropped
        // is in the list by now.
        if held_elsewhere || self.any_woken() {
            return None;
        }
        let stuck = table.iter().map(|(id, task)| StuckTask {
            id: id.0,
            spawned_at: task.waker.spawned_at,
            why: if task.waker.is_queued() {
                Stuck::WokenButNeverQueued
            } else {
                Stuck::NoWakerLeft
            },
        });
        Some(LostWakeUp::new(stuck.collect()))
    }
    // ANCHOR_END: lost_wake_up
}

// ---------------------------------------------------------------------------
// Plumbing: not the lesson. The count the loop's `Debug` shows. A reader
// may stop here.
// ---------------------------------------------------------------------------

impl Tasks {
    /// How many tasks are not done yet.
    pub(crate) fn len(&self) -> usize {
        self.table.borrow().len()
    }
}
