//! Which loop runs on this thread: `block_on` enters it (one at a time),
//! `run` and `block_on` guard it against being entered again, and the
//! free functions `spawn` and `join_all` find it.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;

use super::EventLoop;
use crate::join::{CancelOnDrop, JoinError, JoinHandle};
use crate::lost_wake_up::SpawnedAt;
use crate::task::Tasks;

thread_local! {
    static RUNNING_LOOP: RefCell<Option<Rc<EventLoop>>> = const { RefCell::new(None) };
}

/// The loop `block_on` runs on this thread.
pub(crate) fn running_loop() -> Rc<EventLoop> {
    RUNNING_LOOP
        .with_borrow(Option::clone)
        .expect("no event loop is running on this thread: await inside block_on")
}

/// The running loop's task table, without cloning the loop's `Rc`.
fn with_running_tasks<R>(f: impl FnOnce(&Rc<Tasks>) -> R) -> R {
    RUNNING_LOOP.with_borrow(|running| {
        let lp = running.as_ref().expect(
            "no event loop is running on this thread: await inside block_on",
        );
        f(&lp.tasks)
    })
}

pub(super) struct RunningLoop;

impl RunningLoop {
    pub(super) fn enter(lp: &Rc<EventLoop>) -> Self {
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

pub(super) struct RunGuard<'a>(&'a Cell<bool>);

impl<'a> RunGuard<'a> {
    pub(super) fn enter(lp: &'a EventLoop, caller: &str) -> Self {
        assert!(
            !lp.running.replace(true),
            "{caller} called while this loop is already running: hand it the \
             work instead (call_soon or call_later from a callback, spawn or \
             .await from a task)"
        );
        RunGuard(&lp.running)
    }
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// Starts `future` as a task on the running loop.
#[track_caller]
pub fn spawn<T: 'static>(
    future: impl Future<Output = T> + 'static,
) -> JoinHandle<T> {
    let spawned_at = SpawnedAt::here();
    with_running_tasks(|tasks| tasks.spawn(future, spawned_at))
}

/// Runs each future as a task and waits for all; outcomes in the order
/// given. Dropped before it is done, it cancels the tasks still running.
pub async fn join_all<F>(
    futures: impl IntoIterator<Item = F>,
) -> Vec<Result<F::Output, JoinError>>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let handles: Vec<CancelOnDrop<F::Output>> = futures
        .into_iter()
        .map(|future| spawn(future).cancel_on_drop())
        .collect();
    let mut outcomes = Vec::with_capacity(handles.len());
    for handle in handles {
        outcomes.push(handle.await);
    }
    outcomes
}
