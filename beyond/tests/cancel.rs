//! `tests/tests/step08_cancel.rs` on `fast`, the same scenarios. Step 8's `JoinHandle::cancel`: the task is dropped at a safe point and
//! never polled again, its destructors run once, its joiners see
//! `Cancelled`; a finished task's value survives a late cancel.

use std::cell::{Cell, RefCell};
use std::future::{self, Future};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, Instant};

use fast::{
    EventLoop, JoinError, JoinHandle, TcpListener, sleep, sleep_until, spawn,
    yield_now,
};
use workshop_tests::{BACKSTOP, HANG_LIMIT, counted, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

/// Counts its drops: put in a future, it tells how many times the
/// future's destructors ran.
struct DropCount(Rc<Cell<u32>>);

impl DropCount {
    fn new() -> (Self, Rc<Cell<u32>>) {
        let drops = Rc::new(Cell::new(0));
        (DropCount(Rc::clone(&drops)), drops)
    }
}

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

/// A task that holds `guard` and waits for ever: seed 004's `suspend`.
async fn suspended(guard: DropCount) {
    let _guard = guard;
    future::pending::<()>().await;
}

fn is_cancelled<T>(outcome: &Result<T, JoinError>) -> bool {
    matches!(outcome, Err(JoinError::Cancelled))
}

/// `workshop_tests::before_the_backstop` on this step's loop.
async fn before_the_backstop<T>(
    lp: &EventLoop,
    work: impl Future<Output = T>,
) -> Option<T> {
    let set_timer = |delay, wake: Box<dyn FnOnce()>| {
        let _ = lp.call_later(delay, move |_| wake());
    };
    workshop_tests::before_the_backstop(set_timer, work).await
}

/// How many tasks are not done: the loop's `Debug` output counts them.
fn tasks_on(lp: &EventLoop) -> usize {
    let debug = format!("{lp:?}");
    let count = debug
        .split("tasks: ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap_or_else(|| panic!("no task count in {debug}"));
    count.parse().expect("a number")
}

#[test]
fn a_task_cancelled_while_it_waits_is_dropped_at_the_loops_next_turn() {
    within(HANG_LIMIT, || {
        let (guard, drops) = DropCount::new();
        let (child, polls) = counted(suspended(guard));
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let (drops_then, tasks_then) = lp
            .block_on(async move {
                let child = spawn(child);
                yield_now().await; // the child runs, and suspends
                assert!(child.cancel(), "the child had not ended");
                yield_now().await; // the loop's next turn
                // Not awaiting the child: were it never dropped, this would
                // wait for ever.
                (drops.get(), tasks_on(&same_loop))
            })
            .unwrap();
        assert_eq!(
            polls.get(),
            1,
            "a task cancelled while it waited was polled again, not dropped: \
             cancel marks the task cancelled, and the loop drops a task so \
             marked instead of polling it"
        );
        assert_eq!(
            drops_then, 1,
            "a task cancelled while it waited was not dropped by the loop's next \
             turn: cancel marks the task and wakes it, so that the loop comes \
             to it and drops it"
        );
        assert_eq!(
            tasks_then, 1,
            "the cancelled task was dropped, but {tasks_then} tasks are left in \
             the table where only the main task should be: a dropped task \
             leaves the table"
        );
    });
}

#[test]
fn a_server_cancelled_while_it_waits_in_accept_is_dropped() {
    // Chapter 8's scene: the socket holds the server's waker, and no client
    // ever comes, so only cancel's own wake-up brings the loop to the task.
    within(HANG_LIMIT, || {
        let outcome = new_loop()
            .block_on(async {
                let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
                let mut listener = TcpListener::bind(loopback)?;
                let server = spawn(async move { listener.accept().await.map(drop) });
                sleep(Duration::from_millis(50)).await;
                assert!(server.cancel(), "the server had not ended");
                io::Result::Ok(server.await)
            })
            .and_then(|inner| inner)
            .unwrap_or_else(|err| panic!("{err}"));
        assert!(is_cancelled(&outcome), "the joiner got {outcome:?}");
    });
}

#[test]
fn a_suspended_task_is_dropped_once_and_its_joiner_sees_cancelled() {
    within(HANG_LIMIT, || {
        let (guard, drops) = DropCount::new();
        let (child, polls) = counted(suspended(guard));
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let (said, outcome) = lp
            .block_on(async move {
                let child = spawn(child);
                yield_now().await; // the child runs, and suspends
                let said = child.cancel();
                (said, before_the_backstop(&same_loop, child).await)
            })
            .unwrap();
        assert!(said, "cancel said it cancelled nothing");
        let Some(outcome) = outcome else {
            panic!(
                "a task cancelled while it waited never ended: its joiner was \
                 not woken in {BACKSTOP:?}. Cancel marks the task and wakes it, \
                 so that the loop comes to it and drops it (counted once \
                 `block_on` had returned, the loop's own clean-up included: \
                 polled {}, dropped {})",
                polls.get(),
                drops.get()
            );
        };
        assert!(is_cancelled(&outcome), "the joiner got {outcome:?}");
        assert_eq!(drops.get(), 1, "the destructor ran {} times", drops.get());
        assert_eq!(polls.get(), 1, "polled again after it was cancelled");
    });
}

#[test]
fn a_task_cancelled_before_its_first_poll_is_never_polled() {
    within(HANG_LIMIT, || {
        let (guard, drops) = DropCount::new();
        let (child, polls) = counted(suspended(guard));
        let outcome = new_loop()
            .block_on(async move {
                let child = spawn(child); // its first poll is queued
                assert!(child.cancel());
                child.await
            })
            .unwrap();
        assert!(is_cancelled(&outcome));
        assert_eq!(polls.get(), 0, "a cancelled task was polled");
        assert_eq!(drops.get(), 1);
    });
}

#[test]
fn a_task_already_due_for_a_poll_is_not_polled_again() {
    // Seed 004's admitted gap: the child is due to run in this very turn,
    // right after the parent that cancels it. Timers with the same deadline
    // fire in the order they were set: the parent's first, so the parent
    // and then the child are woken together, and polled in that order.
    within(HANG_LIMIT, || {
        let after_wake = Rc::new(Cell::new(false));
        let resumed = Rc::clone(&after_wake);
        let deadline = Instant::now() + Duration::from_millis(30);
        let (child, polls) = counted(async move {
            sleep_until(deadline).await;
            resumed.set(true);
        });
        let outcome = new_loop()
            .block_on(async move {
                let child = spawn(child);
                sleep_until(deadline).await; // set before the child's timer
                assert!(child.cancel(), "the child had not ended");
                child.await
            })
            .unwrap();
        assert!(is_cancelled(&outcome), "the joiner got {outcome:?}");
        assert_eq!(polls.get(), 1, "the queued poll still ran");
        assert!(!after_wake.get(), "the child ran past its await");
    });
}

#[test]
fn cancelling_a_finished_task_cancels_nothing_and_keeps_its_value() {
    within(HANG_LIMIT, || {
        let (said, value) = new_loop()
            .block_on(async {
                let child = spawn(async { String::from("done") });
                yield_now().await; // the child runs to its end
                let said = child.cancel();
                (said, child.await)
            })
            .unwrap();
        assert!(!said, "cancel claimed to cancel a finished task");
        assert_eq!(value.unwrap(), "done");
    });
}

#[test]
fn cancelling_a_finished_task_whose_waker_lives_on_cancels_nothing() {
    // A waker outlives its task (a timer, a socket or another task may
    // hold one): the handle reaches the task's `TaskWaker` still, and
    // only the slot knows the task has ended.
    within(HANG_LIMIT, || {
        let kept = Rc::new(RefCell::new(None));
        let keeper = Rc::clone(&kept);
        let (said, value) = new_loop()
            .block_on(async move {
                let child = spawn(async move {
                    future::poll_fn(|cx| {
                        *keeper.borrow_mut() = Some(cx.waker().clone());
                        Poll::Ready(())
                    })
                    .await;
                    "done"
                });
                yield_now().await; // the child runs to its end
                let said = child.cancel();
                (said, child.await)
            })
            .unwrap();
        assert!(kept.borrow().is_some(), "the child's waker was kept");
        assert!(
            !said,
            "cancel claimed to cancel a task that had ended, whose waker lived \
             on: a task that has ended (its slot says so) is not cancelled"
        );
        assert_eq!(value.unwrap(), "done");
    });
}

#[test]
fn cancelling_twice_is_harmless() {
    within(HANG_LIMIT, || {
        let (guard, drops) = DropCount::new();
        let (first, second, outcome) = new_loop()
            .block_on(async move {
                let child = spawn(suspended(guard));
                yield_now().await;
                let first = child.cancel();
                let second = child.cancel();
                yield_now().await; // the child is dropped in this turn
                let third = child.cancel();
                assert!(!third, "cancelled a task that was gone");
                (first, second, child.await)
            })
            .unwrap();
        assert!(first);
        assert!(!second, "the second cancel said it cancelled");
        assert!(is_cancelled(&outcome));
        assert_eq!(drops.get(), 1);
    });
}

/// Where a task finds its own handle.
type HandleSlot<T> = Rc<RefCell<Option<JoinHandle<T>>>>;

/// Cancels the task whose handle is in `slot`; says what `cancel` said.
fn cancel_in(slot: &HandleSlot<impl Sized>) -> bool {
    slot.borrow()
        .as_ref()
        .expect("the handle is there")
        .cancel()
}

#[test]
fn a_task_that_cancels_itself_is_dropped_once_its_poll_returns() {
    within(HANG_LIMIT, || {
        let (guard, drops) = DropCount::new();
        let drops_seen = Rc::clone(&drops);
        let slot = HandleSlot::default();
        let own_handle = Rc::clone(&slot);
        let log = Rc::new(RefCell::new(Vec::new()));
        let task_log = Rc::clone(&log);
        let outcome = new_loop()
            .block_on(async move {
                let child = spawn(async move {
                    let _guard = guard;
                    let said = cancel_in(&own_handle);
                    task_log.borrow_mut().extend([
                        format!("cancel: {said}"),
                        format!("drops in this poll: {}", drops_seen.get()),
                    ]);
                    yield_now().await;
                    task_log.borrow_mut().push("ran on after cancel".to_owned());
                });
                *slot.borrow_mut() = Some(child);
                yield_now().await; // the child runs, and cancels itself
                yield_now().await; // the child is dropped
                let child = slot.borrow_mut().take().expect("still there");
                child.await
            })
            .unwrap();
        assert_eq!(*log.borrow(), ["cancel: true", "drops in this poll: 0"]);
        assert_eq!(drops.get(), 1);
        assert!(is_cancelled(&outcome), "the joiner got {outcome:?}");
    });
}

#[test]
fn a_task_that_cancels_itself_and_then_ends_is_still_cancelled() {
    within(HANG_LIMIT, || {
        let slot = HandleSlot::default();
        let own_handle = Rc::clone(&slot);
        let said = Rc::new(Cell::new(false));
        let told = Rc::clone(&said);
        let outcome = new_loop()
            .block_on(async move {
                let child = spawn(async move {
                    told.set(cancel_in(&own_handle));
                    7 // ends in the same poll that cancelled it
                });
                *slot.borrow_mut() = Some(child);
                yield_now().await; // the child runs to its end
                let child = slot.borrow_mut().take().expect("still there");
                child.await
            })
            .unwrap();
        assert!(said.get(), "cancel did not say it cancelled");
        assert!(
            is_cancelled(&outcome),
            "cancel said true, yet the joiner got {outcome:?}"
        );
    });
}

#[test]
fn a_child_cancelled_in_its_parents_poll_is_dropped_after_that_poll() {
    within(HANG_LIMIT, || {
        let (guard, drops) = DropCount::new();
        let drops_seen = Rc::clone(&drops);
        let (during_poll, outcome) = new_loop()
            .block_on(async move {
                let child = spawn(suspended(guard));
                yield_now().await;
                assert!(child.cancel());
                // Same poll of the parent: the child is not dropped yet.
                let during_poll = drops_seen.get();
                (during_poll, child.await)
            })
            .unwrap();
        assert_eq!(
            during_poll, 0,
            "the child was dropped inside the parent's poll"
        );
        assert!(is_cancelled(&outcome));
        assert_eq!(drops.get(), 1);
    });
}

/// A destructor that uses the loop: it spawns a task.
struct SpawnsOnDrop(Rc<Cell<bool>>);

impl Drop for SpawnsOnDrop {
    fn drop(&mut self) {
        let ran = Rc::clone(&self.0);
        drop(spawn(async move { ran.set(true) }));
    }
}

#[test]
fn a_cancelled_tasks_destructors_may_use_the_loop() {
    within(HANG_LIMIT, || {
        let ran = Rc::new(Cell::new(false));
        let cleanup = SpawnsOnDrop(Rc::clone(&ran));
        new_loop()
            .block_on(async move {
                let child = spawn(async move {
                    let _cleanup = cleanup;
                    future::pending::<()>().await;
                });
                yield_now().await;
                child.cancel();
                assert!(child.await.is_err());
                yield_now().await; // the cleanup task runs
            })
            .unwrap();
        assert!(ran.get(), "the task spawned by the destructor never ran");
    });
}

#[test]
fn a_task_cancelled_before_the_loop_runs_is_never_polled() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (guard, drops) = DropCount::new();
        let (task, polls) = counted(suspended(guard));
        let handle = lp.spawn(task);
        assert!(handle.cancel());
        let outcome = lp.block_on(handle).unwrap();
        assert!(is_cancelled(&outcome));
        assert_eq!(polls.get(), 0);
        assert_eq!(drops.get(), 1);
    });
}

#[test]
fn a_background_task_dropped_by_block_on_is_reported_cancelled() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (guard, drops) = DropCount::new();
        let background = lp.spawn(suspended(guard));
        lp.block_on(yield_now()).unwrap();
        assert_eq!(drops.get(), 1, "block_on left the background task");
        assert!(!background.cancel(), "it had ended: nothing to cancel");
        let outcome = lp.block_on(background).unwrap();
        assert!(is_cancelled(&outcome), "its joiner got {outcome:?}");
    });
}

#[test]
fn dropping_the_loop_drops_its_tasks_and_tells_their_joiners() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (guard, drops) = DropCount::new();
        let mut handle = lp.spawn(suspended(guard));
        drop(lp);
        assert_eq!(drops.get(), 1);
        assert!(!handle.cancel());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let outcome = std::pin::Pin::new(&mut handle).poll(&mut cx);
        assert!(matches!(
            outcome,
            std::task::Poll::Ready(Err(JoinError::Cancelled))
        ));
    });
}

#[test]
fn a_cancelled_error_says_so() {
    let err = JoinError::Cancelled;
    assert_eq!(err.to_string(), "task was cancelled");
    assert_eq!(err.panic_message(), None);
}
