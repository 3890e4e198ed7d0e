//! Wakers: how a task that waits gets back on the ready queue.
//!
//! A `Waker` may be cloned, kept and woken anywhere, on any thread, long
//! after the poll that handed it out, even after its task has finished. So
//! waking cannot touch the loop itself (which lives on one thread, in
//! `RefCell`s): it writes the task's id to a thread-safe list, and the loop
//! reads that list at each turn. So task ids are defined here, first.

use std::io;
use std::mem;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Wake;
use std::thread::{self, ThreadId};

use mio::{Registry, Token};

use crate::lost_wake_up::SpawnedAt;

// ANCHOR: task_waker
/// Names a task. Ids are never reused, so a wake-up that arrives after its
/// task has finished finds no task and does nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TaskId(pub(crate) u64);

/// What every `Waker` of one task points to.
///
/// `queued` says the task is already due for a poll. Only the wake-up that
/// flips it from `false` to `true` writes the id down, so however many times
/// a task is woken before it runs, it is polled once. The loop flips it back
/// just before it polls the task.
pub(crate) struct TaskWaker {
    task: TaskId,
    /// Where `spawn` was called: how a lost wake-up names the task.
    pub(crate) spawned_at: SpawnedAt,
    queued: AtomicBool,
    woken: Arc<WokenTasks>,
}

impl TaskWaker {
    pub(crate) fn new(
        task: TaskId,
        woken: Arc<WokenTasks>,
        spawned_at: SpawnedAt,
    ) -> Self {
        TaskWaker {
            task,
            spawned_at,
            queued: AtomicBool::new(false),
            woken,
        }
    }

    /// Called by the loop just before it polls the task: from now on a
    /// wake-up queues the task again. `Acquire` pairs with the `Release` of
    /// the wake-ups it absorbed, so the poll sees what their wakers did first.
    pub(crate) fn clear_queued(&self) {
        self.queued.swap(false, Ordering::AcqRel);
    }

    /// Whether the task is due for a poll: what a lost wake-up's report
    /// looks at (a task marked queued but never written down was woken,
    /// and the wake-up went nowhere).
    pub(crate) fn is_queued(&self) -> bool {
        self.queued.load(Ordering::Acquire)
    }
}

/// `std::task::Wake` turns an `Arc<TaskWaker>` into a `Waker` in safe code.
impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    // BUILD 1/4: chapter 5, "The idea"; test step05_wakers::a_task_woken_twice_before_it_runs_is_polled_once
    /// Queues the task's id with `WokenTasks`, unless it is queued already:
    /// the `queued` flag, set here and cleared by the loop just before the
    /// task's poll, makes two wake-ups before a poll queue one poll.
    fn wake_by_ref(self: &Arc<Self>) {
        let already_queued = self.queued.swap(true, Ordering::AcqRel);
        if !already_queued {
            self.woken.push(self.task);
        }
    }
}
// ANCHOR_END: task_waker

// ANCHOR: woken_tasks
/// The ids of the tasks woken since the loop last looked, shared by every
/// waker of one loop.
///
/// A wake-up from another thread may come while the loop is blocked in
/// `poll`, waiting for a socket or a deadline that may be far off (or never
/// come). `interrupt`, a `mio::Waker` registered on that same `Poll`, makes
/// the wait end at once.
pub(crate) struct WokenTasks {
    ids: Mutex<Vec<TaskId>>,
    interrupt: mio::Waker,
    loop_thread: ThreadId,
}

impl WokenTasks {
    /// A list for a loop whose poller is `registry`, created on the loop's
    /// own thread.
    pub(crate) fn new(registry: &Registry, token: Token) -> io::Result<Self> {
        Ok(WokenTasks {
            ids: Mutex::new(Vec::new()),
            interrupt: mio::Waker::new(registry, token)?,
            loop_thread: thread::current().id(),
        })
    }

    fn push(&self, task: TaskId) {
        self.lock().push(task);
        // On the loop's own thread the loop is running, not blocked: it reads
        // this list before it next waits. An interrupt from here would only
        // end that next wait at once, for a turn with nothing to do.
        if thread::current().id() != self.loop_thread {
            // An error means the poller is gone with its loop: nothing to wake.
            let _ = self.interrupt.wake();
        }
    }

    /// Takes every id written down so far, oldest first, into `emptied`, a
    /// list the caller has emptied: the two lists swap, so the memory of
    /// both is reused turn after turn instead of allocated anew.
    pub(crate) fn take_into(&self, emptied: &mut Vec<TaskId>) {
        mem::swap(&mut *self.lock(), emptied);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}
// ANCHOR_END: woken_tasks

// ---------------------------------------------------------------------------
// Plumbing: not the lesson. The list's lock, which shrugs off poisoning so
// that no wake-up can panic. A reader may stop here.
// ---------------------------------------------------------------------------

impl WokenTasks {
    /// Whether `task` is on the list: the trace asks, after a task's poll,
    /// whether the task woke itself.
    pub(crate) fn contains(&self, task: TaskId) -> bool {
        self.lock().contains(&task)
    }

    /// Nothing can panic while holding this lock (it only pushes and takes),
    /// so a poisoned lock still holds a sound list.
    fn lock(&self) -> MutexGuard<'_, Vec<TaskId>> {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
