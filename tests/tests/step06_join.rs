//! Step 6's `spawn` and `JoinHandle`: a child's value reaches its parent
//! whichever of them gets there first, and a dropped handle detaches.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use step06::{EventLoop, JoinHandle, sleep, spawn, yield_now};
use workshop_tests::{BACKSTOP, HANG_LIMIT, counted, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

/// A waker that only counts its wake-ups: a stand-in for a task that
/// polled a handle once and went away.
#[derive(Default)]
struct CountingWaker(AtomicU32);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// `workshop_tests::before_the_backstop` on this step's loop.
async fn before_the_backstop<T>(
    lp: &EventLoop,
    work: impl Future<Output = T>,
) -> Option<T> {
    let set_timer = |delay, wake: Box<dyn FnOnce()>| {
        lp.call_later(delay, move |_| wake());
    };
    workshop_tests::before_the_backstop(set_timer, work).await
}

#[test]
fn awaiting_a_handle_gives_what_the_child_returned() {
    within(HANG_LIMIT, || {
        let value = new_loop()
            .block_on(async {
                let child = spawn(async {
                    sleep(Duration::from_millis(20)).await;
                    String::from("from the child")
                });
                child.await
            })
            .unwrap();
        assert_eq!(value.unwrap(), "from the child");
    });
}

#[test]
fn children_can_spawn_children_of_their_own() {
    within(HANG_LIMIT, || {
        let total = new_loop()
            .block_on(async {
                let child = spawn(async {
                    let grandchildren: Vec<_> =
                        (1..=3).map(|n| spawn(async move { n * 10 })).collect();
                    let mut sum = 0;
                    for grandchild in grandchildren {
                        sum += grandchild.await.unwrap();
                    }
                    sum
                });
                child.await.unwrap()
            })
            .unwrap();
        assert_eq!(total, 60);
    });
}

#[test]
fn a_parent_waiting_for_a_child_is_polled_once_to_wait_and_once_to_go_on() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (parent, polls) = counted(async {
            spawn(sleep(Duration::from_millis(50))).await.unwrap();
        });
        lp.block_on(parent).unwrap();
        assert_eq!(
            polls.get(),
            2,
            "waiting on a handle must not poll in a loop"
        );
    });
}

#[test]
fn joining_a_child_that_already_ended_returns_at_once() {
    // Seed 004's join race: the child ends before its parent asks to join.
    within(HANG_LIMIT, || {
        new_loop()
            .block_on(async {
                let mut child = spawn(async { 7 });
                yield_now().await; // the child runs, and ends, in this turn
                let mut cx = Context::from_waker(Waker::noop());
                match Pin::new(&mut child).poll(&mut cx) {
                    Poll::Ready(outcome) => assert_eq!(outcome.unwrap(), 7),
                    Poll::Pending => panic!("the child had ended; the join waited"),
                }
            })
            .unwrap();
    });
}

#[test]
fn a_child_that_ends_while_its_parent_waits_wakes_the_parent() {
    within(HANG_LIMIT, || {
        let log = Rc::new(RefCell::new(Vec::new()));
        let parent_log = Rc::clone(&log);
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let joined = lp
            .block_on(async move {
                let child_log = Rc::clone(&parent_log);
                let child = spawn(async move {
                    for step in ["child 1", "child 2", "child 3"] {
                        child_log.borrow_mut().push(step);
                        yield_now().await;
                    }
                });
                parent_log.borrow_mut().push("parent joins");
                let joined = before_the_backstop(&same_loop, child).await;
                parent_log.borrow_mut().push("parent after join");
                joined
            })
            .unwrap();
        let Some(outcome) = joined else {
            panic!(
                "the child ended, but its parent, waiting on its handle, was not \
                 woken in {BACKSTOP:?}: when a task ends, its reporter wakes the \
                 task waiting on its handle"
            );
        };
        outcome.unwrap();
        assert_eq!(
            *log.borrow(),
            [
                "parent joins",
                "child 1",
                "child 2",
                "child 3",
                "parent after join"
            ]
        );
    });
}

#[test]
fn the_end_of_a_child_wakes_the_task_that_polled_its_handle_last() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let first = Arc::new(CountingWaker::default());
        let first_woken = Arc::clone(&first);
        let joined = lp
            .block_on(async move {
                let mut child = pin!(spawn(async {
                    for _ in 0..3 {
                        yield_now().await;
                    }
                    "from the child"
                }));
                // The first poll of the handle comes from elsewhere: another
                // task, say, that gave up waiting and handed the handle on.
                let first_waker = Waker::from(first);
                let mut first_cx = Context::from_waker(&first_waker);
                assert!(child.as_mut().poll(&mut first_cx).is_pending());
                // Now this task awaits it.
                before_the_backstop(&same_loop, child).await
            })
            .unwrap();
        let woke_first = first_woken.0.load(Ordering::SeqCst);
        assert_eq!(
            woke_first, 0,
            "the child's end woke the waker of the handle's first poll, not the \
             latest: a handle polled again keeps the new waker"
        );
        let Some(outcome) = joined else {
            panic!(
                "the child ended, but the task waiting on its handle was not \
                 woken in {BACKSTOP:?}: the child's end wakes the waker the \
                 handle's latest poll left"
            );
        };
        assert_eq!(outcome.unwrap(), "from the child");
    });
}

thread_local! {
    /// The handle a `PollsTheHandleWhenWoken` waker polls.
    static WATCHED: RefCell<Option<JoinHandle<u32>>> = const { RefCell::new(None) };
}

/// A waker that polls the handle in `WATCHED` the moment it is woken, as
/// a waker of another runtime may, and keeps the value it finds.
#[derive(Default)]
struct PollsTheHandleWhenWoken(AtomicU32);

impl Wake for PollsTheHandleWhenWoken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        WATCHED.with_borrow_mut(|handle| {
            let handle = handle.as_mut().expect("a handle to poll");
            let mut cx = Context::from_waker(Waker::noop());
            if let Poll::Ready(outcome) = Pin::new(handle).poll(&mut cx) {
                self.0.store(outcome.unwrap(), Ordering::SeqCst);
            }
        });
    }
}

#[test]
fn the_end_of_a_child_wakes_its_joiner_with_no_borrow_of_the_slot_held() {
    let outcome = within(HANG_LIMIT, || {
        let woken = Arc::new(PollsTheHandleWhenWoken::default());
        let found = Arc::clone(&woken);
        let ran = panic::catch_unwind(AssertUnwindSafe(|| {
            new_loop().block_on(async move {
                let mut child = spawn(async {
                    yield_now().await;
                    7
                });
                let waker = Waker::from(woken);
                let mut cx = Context::from_waker(&waker);
                assert!(Pin::new(&mut child).poll(&mut cx).is_pending());
                WATCHED.set(Some(child));
                for _ in 0..10 {
                    yield_now().await; // the child ends meanwhile
                }
                WATCHED.take();
            })
        }));
        ran.map(|_| found.0.load(Ordering::SeqCst)).map_err(|_| ())
    });
    let Ok(found) = outcome else {
        panic!(
            "waking the joiner panicked: the joiner's waker polled the handle at \
             once, and found the slot still borrowed. Report takes the joiner's \
             waker out of the slot and lets the borrow end before it wakes it"
        );
    };
    assert_eq!(
        found, 7,
        "the joiner's waker, polling the handle, found no value"
    );
}

#[test]
fn dropping_a_handle_detaches_its_task_which_runs_on() {
    within(HANG_LIMIT, || {
        let finished = Rc::new(Cell::new(false));
        let flag = Rc::clone(&finished);
        new_loop()
            .block_on(async move {
                drop(spawn(async move {
                    sleep(Duration::from_millis(30)).await;
                    flag.set(true);
                }));
                sleep(Duration::from_millis(100)).await;
            })
            .unwrap();
        assert!(finished.get(), "the detached task ran to its end");
    });
}

#[test]
fn the_loop_method_and_the_free_function_spawn_alike() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let from_outside = lp.spawn(async { "spawned before block_on" });
        let values = lp
            .block_on(async move {
                let from_inside = spawn(async { "spawned by a task" });
                (from_outside.await.unwrap(), from_inside.await.unwrap())
            })
            .unwrap();
        assert_eq!(values, ("spawned before block_on", "spawned by a task"));
    });
}

#[test]
#[should_panic(expected = "no event loop is running on this thread")]
fn spawn_outside_block_on_says_what_is_missing() {
    drop(spawn(async {}));
}

#[test]
fn a_handle_polled_again_after_its_outcome_panics_instead_of_waiting_for_ever() {
    let polled_again = within(HANG_LIMIT, || {
        new_loop()
            .block_on(async {
                let mut handle = spawn(async { 7 });
                let value = (&mut handle).await.expect("the child returns");
                assert_eq!(value, 7, "the child returned 7");
                let waker = Waker::from(Arc::new(CountingWaker::default()));
                let again = panic::catch_unwind(AssertUnwindSafe(|| {
                    Pin::new(&mut handle).poll(&mut Context::from_waker(&waker))
                }));
                again.ok().map(|poll| poll.is_pending())
            })
            .expect("the loop runs")
    });
    if let Some(pending) = polled_again {
        panic!(
            "a handle polled again after it gave its child's outcome said {}, \
             where it must panic: the outcome is gone and the child has ended, \
             so nothing will ever wake it, and the task awaiting it would wait \
             for ever (JoinHandle::poll checks `ended` once the outcome is \
             taken)",
            if pending { "Pending" } else { "Ready" }
        );
    }
}
