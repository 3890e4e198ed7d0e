//! The task table: a `Vec` of slots, each with its waker, reused through a
//! free list. A task is one allocation, its future pinned in a `Box`
//! (`Box<Option<F>>`: `Option::as_pin_mut` and `Pin::set` poll it and drop
//! it in place without `unsafe`). Its join slot (outcome, joiner's waker,
//! flags) lives in the table, not in a shared allocation; its value is
//! boxed as `dyn Any` for the handle, which allocates nothing when the
//! value has no size (`()`, the usual task).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker, ready};

use mio::{Registry, Token};

use crate::join::{JoinError, JoinHandle};
use crate::lost_wake_up::{LostWakeUp, SpawnedAt, Stuck, StuckTask};
use crate::waker::{SlotWaker, WokenSlots};

/// A task's future, whatever its type: polled until it gives its value,
/// boxed as `dyn Any`. It drops the future as soon as it is done.
trait Runnable {
    fn run(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Box<dyn Any>>;
}

impl<F> Runnable for Option<F>
where
    F: Future,
    F::Output: 'static,
{
    fn run(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Box<dyn Any>> {
        let future = self
            .as_mut()
            .as_pin_mut()
            .expect("a done task is not polled");
        let value = ready!(future.poll(cx));
        self.set(None);
        Poll::Ready(Box::new(value))
    }
}

type TaskFuture = Pin<Box<dyn Runnable>>;

/// Names a task: its slot, and its number, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskId {
    slot: u32,
    number: u64,
}

struct Slot {
    waker: Arc<SlotWaker>,
    task: Option<TaskEntry>,
}

struct TaskEntry {
    number: u64,
    spawned_at: SpawnedAt,
    /// `None` while it is polled, and once it has ended.
    future: Option<TaskFuture>,
    ended: bool,
    cancelled: bool,
    /// Whether a `JoinHandle` still wants the outcome.
    handle: bool,
    outcome: Option<Result<Box<dyn Any>, JoinError>>,
    joiner: Option<Waker>,
}

#[derive(Default)]
struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
    next_number: u64,
}

impl Table {
    fn entry(&mut self, id: TaskId) -> Option<&mut TaskEntry> {
        self.slots
            .get_mut(id.slot as usize)?
            .task
            .as_mut()
            .filter(|task| task.number == id.number)
    }

    /// Frees task `id`'s slot; what it held is for the caller to drop,
    /// once the table's borrow has ended.
    fn remove(&mut self, id: TaskId) -> Option<TaskEntry> {
        self.entry(id)?;
        self.free.push(id.slot);
        self.slots[id.slot as usize].task.take()
    }
}

pub(crate) struct Tasks {
    table: RefCell<Table>,
    woken: Arc<WokenSlots>,
    /// The slots `poll_woken` works through; kept for its memory.
    polling: Cell<Vec<u32>>,
}

impl Tasks {
    pub(crate) fn new(registry: &Registry, token: Token) -> io::Result<Self> {
        Ok(Tasks {
            table: RefCell::default(),
            woken: Arc::new(WokenSlots::new(registry, token)?),
            polling: Cell::new(Vec::new()),
        })
    }

    pub(crate) fn spawn<T: 'static>(
        self: &Rc<Self>,
        future: impl Future<Output = T> + 'static,
        spawned_at: SpawnedAt,
    ) -> JoinHandle<T> {
        let future: TaskFuture = Box::pin(Some(future));
        let mut table = self.table.borrow_mut();
        let number = table.next_number;
        table.next_number += 1;
        let slot = if let Some(slot) = table.free.pop() {
            slot
        } else {
            let slot =
                u32::try_from(table.slots.len()).expect("fewer than 2^32 tasks");
            let waker = Arc::new(SlotWaker::new(slot, Arc::clone(&self.woken)));
            table.slots.push(Slot { waker, task: None });
            slot
        };
        let place = &mut table.slots[slot as usize];
        place.task = Some(TaskEntry {
            number,
            spawned_at,
            future: Some(future),
            ended: false,
            cancelled: false,
            handle: true,
            outcome: None,
            joiner: None,
        });
        place.waker.wake_by_ref();
        drop(table);
        JoinHandle::new(Rc::clone(self), TaskId { slot, number })
    }

    /// Polls each slot woken since the loop last looked, once, in order,
    /// and says how many. Slots woken during these polls wait for the
    /// next call.
    pub(crate) fn poll_woken(&self) -> usize {
        let mut polling = self.polling.take();
        self.woken.take_into(&mut polling);
        for &slot in &polling {
            self.poll_slot(slot);
        }
        let polled = polling.len();
        polling.clear();
        self.polling.set(polling);
        polled
    }

    fn poll_slot(&self, slot: u32) {
        let (id, mut future, waker) = {
            let mut table = self.table.borrow_mut();
            let place = &mut table.slots[slot as usize];
            place.waker.clear_queued();
            let Some(task) = &mut place.task else {
                return; // a late wake-up for a task that has ended
            };
            let Some(future) = task.future.take() else {
                return; // ended, its outcome kept for its handle
            };
            let id = TaskId {
                slot,
                number: task.number,
            };
            if task.cancelled {
                drop(table);
                self.drop_future(id, future);
                return;
            }
            (id, future, Waker::from(Arc::clone(&place.waker)))
        };
        let mut cx = Context::from_waker(&waker);
        match panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().run(&mut cx)))
        {
            Ok(Poll::Pending) => {
                if let Some(task) = self.table.borrow_mut().entry(id) {
                    task.future = Some(future);
                }
            }
            Ok(Poll::Ready(value)) => {
                drop(future); // empty already: only its box
                self.finish(id, Ok(value));
            }
            Err(panic) => {
                // Its destructors may panic too: the first panic is the news.
                let _ = panic::catch_unwind(AssertUnwindSafe(|| drop(future)));
                self.finish(id, Err(JoinError::Panicked(panic)));
            }
        }
    }

    /// Drops a task's future unfinished (cancelled, or left at the end of
    /// `block_on`): `Cancelled`, or `Panicked` if a destructor panicked.
    fn drop_future(&self, id: TaskId, future: TaskFuture) {
        let outcome = match panic::catch_unwind(AssertUnwindSafe(|| drop(future))) {
            Ok(()) => Err(JoinError::Cancelled),
            Err(panic) => Err(JoinError::Panicked(panic)),
        };
        self.finish(id, outcome);
    }

    /// Records task `id`'s outcome for its handle, or frees its slot if no
    /// handle is left, and wakes the joiner. A task cancelled that returned
    /// in the same poll is still cancelled. Nothing of the task's is
    /// dropped, and no waker woken, while the table is borrowed.
    fn finish(&self, id: TaskId, outcome: Result<Box<dyn Any>, JoinError>) {
        let mut discarded = None;
        let joiner = {
            let mut table = self.table.borrow_mut();
            let Some(task) = table.entry(id) else { return };
            let outcome = match outcome {
                Ok(value) if task.cancelled => {
                    discarded = Some(value);
                    Err(JoinError::Cancelled)
                }
                outcome => outcome,
            };
            task.ended = true;
            if task.handle {
                task.outcome = Some(outcome);
                task.joiner.take()
            } else {
                let removed = table.remove(id);
                drop(table);
                drop((removed, outcome));
                None
            }
        };
        drop(discarded);
        if let Some(joiner) = joiner {
            joiner.wake();
        }
    }

    /// The outcome of task `id` if it has ended (freeing its slot), or
    /// `None`, leaving `waker` to be woken when it ends.
    pub(crate) fn poll_join(
        &self,
        id: TaskId,
        waker: Option<&Waker>,
    ) -> Option<Result<Box<dyn Any>, JoinError>> {
        let mut table = self.table.borrow_mut();
        let task = table
            .entry(id)
            .expect("a task with a handle stays in the table until joined");
        if task.ended {
            let outcome = task.outcome.take();
            let removed = table.remove(id);
            drop(table);
            drop(removed);
            return outcome;
        }
        if let Some(waker) = waker {
            match &mut task.joiner {
                Some(joiner) if joiner.will_wake(waker) => {}
                joiner => *joiner = Some(waker.clone()),
            }
        }
        None
    }

    /// Marks task `id` cancelled and wakes it, so the loop drops it at its
    /// next turn; `false` if it has ended or was cancelled already.
    pub(crate) fn cancel(&self, id: TaskId) -> bool {
        let mut table = self.table.borrow_mut();
        let Some(task) = table.entry(id) else {
            return false;
        };
        if task.ended || task.cancelled {
            return false;
        }
        task.cancelled = true;
        table.slots[id.slot as usize].waker.wake_by_ref();
        true
    }

    pub(crate) fn is_finished(&self, id: TaskId) -> bool {
        self.table
            .borrow_mut()
            .entry(id)
            .is_none_or(|task| task.ended)
    }

    /// The handle is gone: an ended task's slot is freed, a running task
    /// runs on and frees it when it ends.
    pub(crate) fn detach(&self, id: TaskId) {
        let Ok(mut table) = self.table.try_borrow_mut() else {
            return;
        };
        let Some(task) = table.entry(id) else { return };
        task.handle = false;
        task.joiner = None;
        if task.ended {
            let removed = table.remove(id);
            drop(table);
            drop(removed);
        }
    }

    pub(crate) fn any_woken(&self) -> bool {
        !self.woken.is_empty()
    }

    /// How many tasks have not ended (for `Debug`: it counts them).
    pub(crate) fn len(&self) -> usize {
        let table = self.table.borrow();
        let ended = table.slots.iter().filter_map(|place| place.task.as_ref());
        ended.filter(|task| !task.ended).count()
    }

    /// Drops every task not ended; their handles see `Cancelled` (or
    /// `Panicked`). Destructors may spawn: those tasks go too, unpolled.
    pub(crate) fn drop_all(&self) {
        loop {
            let unfinished: Vec<(TaskId, TaskFuture)> = {
                let mut table = self.table.borrow_mut();
                table
                    .slots
                    .iter_mut()
                    .enumerate()
                    .filter_map(|(slot, place)| {
                        let task = place.task.as_mut()?;
                        let id = TaskId {
                            slot: u32::try_from(slot)
                                .expect("fewer than 2^32 tasks"),
                            number: task.number,
                        };
                        Some((id, task.future.take()?))
                    })
                    .collect()
            };
            if unfinished.is_empty() {
                return;
            }
            for (id, future) in unfinished {
                self.drop_future(id, future);
            }
        }
    }

    /// Asked before a wait that no timer or socket can end: if no task's
    /// waker is held outside the table and the join slots, and none is
    /// woken, no task can ever run again. Looks at every task, which is
    /// why the loop asks only before a wait that nothing else would end.
    pub(crate) fn lost_wake_up(&self) -> Option<LostWakeUp> {
        let table = self.table.borrow();
        // Per pending task, by where its wakers point: its place, and the
        // references to its waker beyond the table's own.
        let mut held: HashMap<*const (), (usize, usize)> = HashMap::new();
        for (slot, place) in table.slots.iter().enumerate() {
            if place.task.as_ref().is_some_and(|task| !task.ended) {
                let beyond_the_table = Arc::strong_count(&place.waker) - 1;
                held.insert(
                    Arc::as_ptr(&place.waker).cast(),
                    (slot, beyond_the_table),
                );
            }
        }
        // A waker in a join slot wakes its task only when the child ends.
        let mut joining = HashMap::new();
        for child in table.slots.iter().filter_map(|place| place.task.as_ref()) {
            let Some(joiner) = &child.joiner else {
                continue;
            };
            if let Some((slot, count)) = held.get_mut(&joiner.data()) {
                *count = count.saturating_sub(1);
                let why = if child.ended {
                    Stuck::JoinedAChildThatEnded(child.number)
                } else {
                    Stuck::Joining(child.number)
                };
                joining.insert(*slot, why);
            }
        }
        if held.values().any(|&(_, count)| count > 0) || self.any_woken() {
            return None;
        }
        let stuck = held.values().map(|&(slot, _)| {
            let task = table.slots[slot].task.as_ref().expect("pending");
            StuckTask {
                number: task.number,
                spawned_at: task.spawned_at,
                why: joining.remove(&slot).unwrap_or(Stuck::NoWakerLeft),
            }
        });
        Some(LostWakeUp::new(stuck.collect()))
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        self.drop_all();
    }
}
