//! Wakers: one per slot of the task table, made when the slot is first
//! used and kept for every task that uses the slot after. A wake-up writes
//! the slot's number to a list the loop reads each turn; it allocates
//! nothing (the list's memory is reused turn after turn).
//!
//! A waker kept after its task ended may wake the slot's next task: a
//! spurious poll, which every future must take (it finds itself not ready
//! and waits again). That is the price of not allocating a waker per task.

use std::io;
use std::mem;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Wake;
use std::thread::{self, ThreadId};

use mio::{Registry, Token};

/// What every `Waker` of one slot points to.
#[derive(Debug)]
pub(crate) struct SlotWaker {
    slot: u32,
    /// Set by the wake-up that writes the slot down, cleared just before
    /// the slot's task is polled: wake-ups before a poll queue one poll.
    queued: AtomicBool,
    woken: Arc<WokenSlots>,
}

impl SlotWaker {
    pub(crate) fn new(slot: u32, woken: Arc<WokenSlots>) -> Self {
        SlotWaker {
            slot,
            queued: AtomicBool::new(false),
            woken,
        }
    }

    /// `Acquire` pairs with the `Release` of the wake-ups it absorbs.
    pub(crate) fn clear_queued(&self) {
        self.queued.swap(false, Ordering::AcqRel);
    }
}

impl Wake for SlotWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.woken.push(self.slot);
        }
    }
}

/// The slots woken since the loop last looked. A wake-up from another
/// thread also interrupts the loop's wait, through a `mio::Waker`.
#[derive(Debug)]
pub(crate) struct WokenSlots {
    slots: Mutex<Vec<u32>>,
    interrupt: mio::Waker,
    loop_thread: ThreadId,
}

impl WokenSlots {
    pub(crate) fn new(registry: &Registry, token: Token) -> io::Result<Self> {
        Ok(WokenSlots {
            slots: Mutex::new(Vec::new()),
            interrupt: mio::Waker::new(registry, token)?,
            loop_thread: thread::current().id(),
        })
    }

    fn push(&self, slot: u32) {
        self.lock().push(slot);
        // On the loop's own thread the loop is not blocked: no system call.
        if this_thread() != Some(self.loop_thread) {
            let _ = self.interrupt.wake(); // an error: the poller is gone
        }
    }

    /// Swaps the list with `emptied`, so both lists' memory is reused.
    pub(crate) fn take_into(&self, emptied: &mut Vec<u32>) {
        mem::swap(&mut *self.lock(), emptied);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Nothing panics while holding the lock, so a poisoned one is sound.
    fn lock(&self) -> MutexGuard<'_, Vec<u32>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The calling thread's id, without touching its handle's reference count;
/// `None` while its locals are being destroyed (then: another thread).
fn this_thread() -> Option<ThreadId> {
    thread_local! {
        static THIS_THREAD: ThreadId = thread::current().id();
    }
    THIS_THREAD.try_with(|id| *id).ok()
}
