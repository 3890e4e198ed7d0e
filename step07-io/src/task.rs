//! Tasks: futures the loop polls, one at a time, when they are woken.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::join::{JoinHandle, run_and_report, waiting_joins};
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

/// What a task runs: any future with nothing to return (a spawned future's
/// value goes to its `JoinHandle` instead), boxed so tasks of different
/// types fit in one table, and pinned because a future may hold references
/// into itself once it has been polled.
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
    /// first time on its next turn. Returns the handle that joins the task;
    /// dropping the handle lets the task run on.
    #[track_caller]
    pub(crate) fn spawn<T: 'static>(
        &self,
        future: impl Future<Output = T> + 'static,
    ) -> JoinHandle<T> {
        let id = TaskId(self.next_id.get());
        self.next_id.set(id.0 + 1);
        let (handle, reporter) = JoinHandle::new(id);
        let waker = Arc::new(TaskWaker::new(
            id,
            Arc::clone(&self.woken),
            SpawnedAt::here(),
        ));
        let task = Task {
            future: Some(Box::pin(run_and_report(future, reporter))),
            waker: Arc::clone(&waker),
        };
        self.table.borrow_mut().insert(id, task);
        Waker::from(waker).wake();
        handle
    }
    // ANCHOR_END: spawn

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
    /// `TaskWaker`. The table holds one, and so does the slot of each child
    /// the task waits to join; those can only wake it once a pending task
    /// runs (and never, once the child has ended without waking it). If
    /// every reference is one of those, no thread, timer or socket
    /// holds a waker, and no task can ever be woken again: a lost wake-up,
    /// named here. If any other reference is alive (another thread may
    /// wake with it), or a wake-up came in meanwhile, it returns `None` and
    /// the loop waits.
    pub(crate) fn lost_wake_up(&self) -> Option<LostWakeUp> {
        let table = self.table.borrow();
        // Per task, by the address its wakers point to: its id, and the
        // references to its waker beyond the table's own.
        let mut references: HashMap<*const TaskWaker, (TaskId, usize)> = table
            .iter()
            .map(|(id, task)| {
                let beyond_the_table = Arc::strong_count(&task.waker) - 1;
                (Arc::as_ptr(&task.waker), (*id, beyond_the_table))
            })
            .collect();
        // A waker waiting in a child's join slot is the loop's own: a
        // pending child wakes it only when the child ends, and a child that
        // has ended without waking it never will.
        let mut joining = HashMap::new();
        for (child, slot) in waiting_joins() {
            let Some(data) = slot.joiner_waker_data() else {
                continue;
            };
            if let Some((joiner, count)) = references.get_mut(&data.cast()) {
                *count -= 1;
                let why = if table.contains_key(&child) {
                    Stuck::Joining(child.0)
                } else {
                    Stuck::JoinedAChildThatEnded(child.0)
                };
                joining.insert(*joiner, why);
            }
        }
        let held_elsewhere = references.values().any(|&(_, count)| count > 0);
        // Counted before the woken list is looked at: a waker is woken
        // before it is dropped, so a wake-up whose waker was just dropped
        // is in the list by now.
        if held_elsewhere || self.any_woken() {
            return None;
        }
        let stuck = table.iter().map(|(id, task)| StuckTask {
            id: id.0,
            spawned_at: task.waker.spawned_at,
            why: match joining.remove(id) {
                Some(joining) => joining,
                None if task.waker.is_queued() => Stuck::WokenButNeverQueued,
                None => Stuck::NoWakerLeft,
            },
        });
        Some(LostWakeUp::new(stuck.collect()))
    }
    // ANCHOR_END: lost_wake_up

    // ANCHOR: drop_all
    /// Drops every task still in the table; their joiners see them
    /// cancelled. The table is taken out first, so a destructor may spawn
    /// or wake without finding it borrowed. A task a destructor spawns here
    /// is dropped in turn, unpolled, until the table stays empty: nothing
    /// outlives the `block_on` that ends here.
    pub(crate) fn drop_all(&self) {
        loop {
            let remaining = self.table.take();
            if remaining.is_empty() {
                return;
            }
            drop(remaining);
        }
    }
    // ANCHOR_END: drop_all
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
