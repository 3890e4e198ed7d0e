//! Tasks: futures the loop polls, one callback at a time, when they are woken.

use std::cell::RefCell;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::panic;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::EventLoop;
use crate::join::{JoinError, JoinHandle, run_and_report};
use crate::waker::TaskWaker;

// ANCHOR: task
/// Names a task. Ids are never reused, so a wake-up that arrives after its
/// task has finished finds no task and does nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TaskId(pub(crate) u64);

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
// ANCHOR_END: task

/// How the task table hashes its ids. `HashMap`'s default hasher is built
/// to resist keys an attacker picks, and costs tens of nanoseconds a
/// lookup; the loop looks a task up two or three times a poll. Task ids
/// are counted out by the loop itself, so no one picks them: multiplying
/// by a large odd constant (Fibonacci hashing) spreads consecutive ids
/// over the whole table in a nanosecond.
pub(crate) type SequentialIds = BuildHasherDefault<IdHasher>;

/// The hasher `SequentialIds` builds, holding the hash of one id.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, _: &[u8]) {
        unreachable!("task ids hash as one u64");
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl EventLoop {
    // ANCHOR: spawn
    /// Turns `future` into a task and wakes it, so the loop polls it for the
    /// first time on its next turn. asyncio's `loop.create_task`. Returns the
    /// handle that joins the task; dropping the handle lets the task run on.
    ///
    /// From inside a task, the free function `spawn` does the same on the
    /// running loop.
    pub fn spawn<T: 'static>(
        &self,
        future: impl Future<Output = T> + 'static,
    ) -> JoinHandle<T> {
        let (handle, outcome) = JoinHandle::new();
        let id = TaskId(self.next_task_id.get());
        self.next_task_id.set(id.0 + 1);
        let waker = Arc::new(TaskWaker::new(id, Arc::clone(&self.woken)));
        let task = Task {
            future: Some(Box::pin(run_and_report(future, outcome))),
            waker: Arc::clone(&waker),
        };
        self.tasks.borrow_mut().insert(id, task);
        Waker::from(waker).wake();
        handle
    }
    // ANCHOR_END: spawn

    // ANCHOR: block_on
    /// Runs the loop until `future` is done and returns what it returned;
    /// if it panicked, the panic carries on from here. asyncio's
    /// `asyncio.run`.
    ///
    /// `future` runs as a task beside any others, and only it decides when
    /// this returns. Tasks still running then are background work: they are
    /// dropped (asyncio cancels them), so their destructors run, and nothing
    /// they were waiting for keeps the loop turning.
    ///
    /// While it runs, this loop is the thread's running loop, which is how
    /// `sleep` and `spawn` find it; that is why the loop must be shared as
    /// an `Rc` here.
    pub fn block_on<T: 'static>(
        self: &Rc<Self>,
        future: impl Future<Output = T> + 'static,
    ) -> io::Result<T> {
        let _running = RunningLoop::enter(self);
        let mut main = self.spawn(future);
        let outcome = loop {
            if let Some(outcome) = main.take_outcome() {
                break outcome;
            }
            self.run_once()?;
        };
        self.drop_remaining_tasks();
        match outcome {
            Ok(value) => Ok(value),
            Err(JoinError::Panicked(panic)) => panic::resume_unwind(panic),
        }
    }

    /// Drops every task still on the loop, while it is still the running
    /// loop. The table is taken out first, so a destructor may spawn or
    /// wake without finding it borrowed.
    fn drop_remaining_tasks(&self) {
        let remaining = self.tasks.take();
        drop(remaining);
    }
    // ANCHOR_END: block_on

    // ANCHOR: poll_task
    /// Polls the task `id` once: the callback a wake-up queues.
    ///
    /// The waker's `queued` flag is cleared *before* the poll, so a wake-up
    /// that comes while the task runs (even from the task itself) queues one
    /// more poll instead of being lost. A task that completes leaves the
    /// table, so it is never polled again, whoever still holds its waker.
    pub(crate) fn poll_task(&self, id: TaskId) {
        let Some((mut future, waker)) = self.take_future(id) else {
            return; // finished already: this wake-up came too late
        };
        waker.clear_queued();
        let waker = Waker::from(waker);
        let mut context = Context::from_waker(&waker);
        match future.as_mut().poll(&mut context) {
            Poll::Ready(()) => {
                self.tasks.borrow_mut().remove(&id);
            }
            Poll::Pending => {
                if let Some(task) = self.tasks.borrow_mut().get_mut(&id) {
                    task.future = Some(future);
                }
            }
        }
    }
    // ANCHOR_END: poll_task

    /// Takes task `id`'s future out of the table for a poll, with its waker.
    fn take_future(&self, id: TaskId) -> Option<(TaskFuture, Arc<TaskWaker>)> {
        let mut tasks = self.tasks.borrow_mut();
        let task = tasks.get_mut(&id)?;
        Some((task.future.take()?, Arc::clone(&task.waker)))
    }
}

// ANCHOR: running_loop
thread_local! {
    /// The loop `block_on` is running on this thread, if any.
    static RUNNING_LOOP: RefCell<Option<Rc<EventLoop>>> =
        const { RefCell::new(None) };
}

/// The loop `block_on` is running on this thread: how a future such as
/// `sleep`, or a task calling `spawn`, reaches the loop without being
/// handed it. asyncio's `get_running_loop`.
///
/// Futures ask for it when they are polled and do not keep it, so the loop
/// never owns a future that owns the loop: dropping the loop drops every
/// task it holds.
pub(crate) fn running_loop() -> Rc<EventLoop> {
    RUNNING_LOOP
        .with_borrow(Option::clone)
        .expect("no event loop is running on this thread: await inside block_on")
}

/// Makes a loop the running loop until it is dropped.
///
/// One at a time: a `block_on` inside a task would turn the loop under the
/// task that called it, which cannot be polled (it is being polled), so its
/// wake-ups would be used up and lost. A task awaits instead.
struct RunningLoop;

impl RunningLoop {
    fn enter(lp: &Rc<EventLoop>) -> Self {
        RUNNING_LOOP.with_borrow_mut(|running| {
            assert!(
                running.is_none(),
                "block_on called inside block_on: a task must .await instead"
            );
            *running = Some(Rc::clone(lp));
        });
        RunningLoop
    }
}

impl Drop for RunningLoop {
    fn drop(&mut self) {
        RUNNING_LOOP.take();
    }
}
// ANCHOR_END: running_loop
