// The tests of `step08_timers.rs` that hold for any runtime with step 8's
// API, one copy: `step08_timers.rs` and `fast`'s `beyond/tests/timers.rs`
// name their crate `step`, include this file, and add what their pending
// timers do with a cancelled one (step 8 keeps it until a turn or a sweep,
// `fast` removes it at once).

use std::cell::{Cell, RefCell};
use std::future::{self, Future};
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, Instant};

use step::{EventLoop, TimerHandle, sleep, spawn, timeout, yield_now};
use workshop_tests::{DropFlag, HANG_LIMIT, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

const AN_HOUR: Duration = Duration::from_secs(3600);

/// Turns the loop exactly once: at the start of each turn it takes
/// cancelled timers off the heap.
fn one_turn(lp: &Rc<EventLoop>) {
    lp.block_on(async {}).unwrap();
}

fn heap_len(lp: &EventLoop) -> usize {
    lp.timer_heap_size().0
}

#[test]
fn a_cancelled_timer_never_fires_and_the_loop_does_not_wait_for_it() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let fired = Rc::new(Cell::new(false));
        let flag = Rc::clone(&fired);
        let handle = lp.call_later(Duration::from_secs(60), move |_| flag.set(true));
        assert!(handle.cancel());
        let started = Instant::now();
        lp.run().unwrap();
        assert!(!fired.get());
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "run waited for a cancelled timer: {:?}",
            started.elapsed()
        );
    });
}

#[test]
fn cancel_says_whether_there_was_anything_to_cancel() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let early = lp.call_later(Duration::ZERO, |_| {});
        let late = lp.call_later(AN_HOUR, |_| {});
        lp.block_on(sleep(Duration::from_millis(10))).unwrap();
        assert!(!early.cancel(), "the timer had fired already");
        assert!(late.cancel());
        assert!(!late.cancel(), "the second cancel of one timer");
    });
}

#[test]
fn a_handle_to_a_fired_timer_leaves_the_timer_that_reuses_its_place_alone() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let fired = lp.call_later(Duration::ZERO, |_| {});
        lp.block_on(sleep(Duration::from_millis(10))).unwrap();
        // The fired timer's place in the pending timers is free: the next
        // timer takes it.
        let newer = lp.call_later(AN_HOUR, |_| {});
        assert!(
            !fired.cancel(),
            "the handle of a timer that had fired said it cancelled something: \
             cancel says true only when it took a timer out, and the place this \
             handle names now holds a newer timer, which a stale handle must not \
             touch (compare the id's sequence too, not its index alone)"
        );
        assert!(
            newer.cancel(),
            "cancelling a fired timer's handle cancelled the newer timer that \
             reused its place"
        );
    });
}

#[test]
fn a_handle_that_outlives_its_loop_cancels_nothing() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let handle = lp.call_later(AN_HOUR, |_| {});
        drop(lp);
        assert!(
            !handle.cancel(),
            "cancel said true for a timer whose loop is gone: nothing was \
             cancelled, the timer went with its loop"
        );
    });
}

#[test]
fn a_dropped_sleep_cancels_its_timer() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let outcome = lp.block_on(async {
            let mut nap = std::pin::pin!(sleep(AN_HOUR));
            // Poll it once, so it sets its timer, then drop it.
            std::future::poll_fn(|cx| {
                let _ = nap.as_mut().poll(cx);
                std::task::Poll::Ready(())
            })
            .await;
        });
        outcome.unwrap();
        one_turn(&lp);
        assert_eq!(heap_len(&lp), 0, "the hour-long timer is still there");
    });
}

#[test]
fn timers_cancelled_in_bulk_leave_the_heap_as_it_started() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let before = lp.timer_heap_size();
        let on_loop = Rc::clone(&lp);
        let peak = lp
            .block_on(async move {
                let handles: Vec<_> = (0..100_000)
                    .map(|_| on_loop.call_later(AN_HOUR, |_| {}))
                    .collect();
                let peak = on_loop.timer_heap_size();
                for handle in handles {
                    assert!(handle.cancel());
                }
                yield_now().await; // the next turn sweeps the heap
                peak
            })
            .unwrap();
        assert_eq!(peak.0, 100_000);
        assert_eq!(
            lp.timer_heap_size(),
            before,
            "length and capacity, before {before:?}, after 100,000 cancelled"
        );
    });
}

#[test]
fn a_live_timer_on_top_does_not_let_cancelled_ones_pile_up_behind_it() {
    // Cancelled timers are popped only from the top of the heap; with a
    // live timer due first, 100,000 timeouts that all won their race leave
    // their timers behind it, until the sweep clears them.
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let first_due = lp.call_later(Duration::from_secs(60), |_| {});
        let on_loop = Rc::clone(&lp);
        let largest = lp
            .block_on(async move {
                let mut largest = (0, 0);
                for _ in 0..100_000 {
                    timeout(AN_HOUR, yield_now()).await.unwrap();
                    largest = largest.max(on_loop.timer_heap_size());
                }
                largest
            })
            .unwrap();
        // A sweep comes once the heap passes 100 timers: the live one on
        // top, and more than half of the rest cancelled.
        assert!(largest.0 <= 102, "the heap grew to {} timers", largest.0);
        assert!(
            largest.1 <= 256,
            "the heap's capacity grew to {}",
            largest.1
        );
        first_due.cancel();
        one_turn(&lp);
        assert_eq!(heap_len(&lp), 0);
    });
}

#[test]
fn a_sweep_keeps_the_live_timers_in_their_order() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let fired = Rc::new(RefCell::new(Vec::new()));
        let deadline = Instant::now() + Duration::from_millis(30);
        for n in 0..300 {
            let log = Rc::clone(&fired);
            let handle = lp.call_at(deadline, move |_| log.borrow_mut().push(n));
            if n % 3 != 0 {
                handle.cancel(); // two in three: enough to sweep
            }
        }
        one_turn(&lp);
        assert_eq!(heap_len(&lp), 100, "the sweep did not run");
        lp.run().unwrap();
        let expected: Vec<i32> = (0..300).step_by(3).collect();
        assert_eq!(*fired.borrow(), expected);
    });
}

/// Counts the polls of the future it wraps.
struct CountPolls<F> {
    inner: std::pin::Pin<Box<F>>,
    polls: Rc<Cell<u32>>,
}

impl<F: Future> Future for CountPolls<F> {
    type Output = F::Output;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<F::Output> {
        self.polls.set(self.polls.get() + 1);
        self.inner.as_mut().poll(cx)
    }
}

/// A sleep polled once its deadline has passed, before the loop has fired
/// its timer, is done by the clock; its timer is still pending, and its
/// drop must cancel it, or it fires later and wakes the task for nothing.
#[test]
fn a_sleep_done_by_the_clock_before_its_timer_fired_cancels_the_timer() {
    within(HANG_LIMIT, || {
        let polls = Rc::new(Cell::new(0));
        let counted = Rc::clone(&polls);
        new_loop()
            .block_on(async move {
                let task = CountPolls {
                    inner: Box::pin(async {
                        let mut early = Box::pin(sleep(Duration::from_millis(20)));
                        // One poll sets its timer.
                        future::poll_fn(|cx| {
                            assert!(early.as_mut().poll(cx).is_pending());
                            Poll::Ready(())
                        })
                        .await;
                        // The deadline passes while the loop is not looking.
                        std::thread::sleep(Duration::from_millis(40));
                        early.await;
                        sleep(Duration::from_millis(100)).await;
                    }),
                    polls: counted,
                };
                spawn(task).await.unwrap();
            })
            .unwrap();
        assert_eq!(
            polls.get(),
            2,
            "polls: one to start, one when the sleep ends"
        );
    });
}
