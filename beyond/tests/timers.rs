//! Step 8's timer tests on `fast`: those that hold for any runtime with
//! step 8's API are `tests/tests/shared/timers.rs`, the file step 8's
//! `step08_timers.rs` includes too; below, what `fast` does with a
//! cancelled timer where step 8's heap keeps it until a turn or a sweep.
//! The wheel unlinks it at once: these ask for that stronger rule (gone
//! before any turn, whatever the numbers), in step 8's scenarios.

use fast as step;

include!("../../tests/tests/shared/timers.rs");

/// Cancels a timer when dropped: what a callback may own, say a timeout
/// guard of its own.
struct CancelsWhenDropped(TimerHandle);

impl Drop for CancelsWhenDropped {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[test]
fn a_cancelled_callbacks_destructors_may_use_the_loop() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let other = lp.call_later(AN_HOUR, |_| {});
        let guard = CancelsWhenDropped(other);
        let handle = lp.call_later(AN_HOUR, move |_| drop(guard));
        let Ok(cancelled) =
            panic::catch_unwind(AssertUnwindSafe(|| handle.cancel()))
        else {
            panic!(
                "cancelling a timer panicked in its callback's destructor, which \
                 cancels another timer: take the callback out of the pending \
                 timers, end that borrow, and only then drop it"
            );
        };
        assert!(cancelled);
        assert_eq!(heap_len(&lp), 0, "both cancelled timers left at once");
        one_turn(&lp);
        assert_eq!(heap_len(&lp), 0, "and stay gone");
    });
}

#[test]
fn cancelling_frees_what_the_callback_captured_at_once() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (flag, dropped) = DropFlag::new();
        let handle = lp.call_later(AN_HOUR, move |_| drop(flag));
        assert!(!dropped.get());
        handle.cancel();
        assert!(dropped.get(), "the callback outlived its cancelled timer");
        assert_eq!(heap_len(&lp), 0, "the cancelled timer left at once");
        one_turn(&lp);
        assert_eq!(heap_len(&lp), 0);
    });
}

/// `live` timers that stay and `cancelled` ones that are cancelled, behind
/// a live one due first, so none can be popped from the top.
fn heap_with(lp: &EventLoop, live: usize, cancelled: usize) {
    lp.call_later(Duration::from_secs(60), |_| {});
    for _ in 0..live {
        lp.call_later(AN_HOUR, |_| {});
    }
    for _ in 0..cancelled {
        lp.call_later(AN_HOUR, |_| {}).cancel();
    }
}

#[test]
fn only_live_timers_stay_whatever_the_numbers() {
    within(HANG_LIMIT, || {
        // Step 8's cases for asyncio's rule; on the wheel the one live
        // timer due first and the live ones stay, and no cancelled one.
        let cases = [
            (0, 99, 1),
            (0, 100, 1),
            (50, 50, 51),
            (49, 51, 50),
            (50, 51, 51),
            (49, 52, 50),
            (500, 500, 501),
            (499, 501, 500),
        ];
        for (live, cancelled, expected) in cases {
            let lp = new_loop();
            heap_with(&lp, live, cancelled);
            one_turn(&lp);
            let total = 1 + live + cancelled;
            let held = heap_len(&lp);
            assert_eq!(
                held, expected,
                "{total} timers set, {cancelled} of them cancelled behind a \
                 live one: {held} held after one turn, where only the live \
                 ones should be"
            );
        }
    });
}

#[test]
fn a_sleep_polled_by_another_task_wakes_that_task() {
    // The timer's callback owns the waker of the task that set it: a poll
    // from another task must replace the timer, and the first one must not
    // fire.
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        lp.block_on(async move {
            let mut nap = Box::pin(sleep(Duration::from_millis(20)));
            let first_poll =
                future::poll_fn(|cx| Poll::Ready(nap.as_mut().poll(cx))).await;
            assert!(first_poll.is_pending(), "the timer is set for this task");
            let handle = spawn(nap);
            yield_now().await; // the new task polls the sleep: a new timer
            assert_eq!(heap_len(&same_loop), 1, "one live; the replaced one left");
            handle.await.expect("the other task wakes and ends");
        })
        .unwrap();
    });
}

/// A turn goes on polling the tasks its polls wake (`fast` polls up to 61
/// in a row without looking at the clock), but not for ever: two tasks
/// that yield to each other without end still let a sleep's timer fire,
/// and its task run, soon after the deadline.
#[test]
fn tasks_that_never_stop_yielding_do_not_hold_up_a_timer() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let yields = Rc::new(Cell::new(0u64));
        let (slept, yielded) = lp
            .block_on({
                let yields = Rc::clone(&yields);
                async move {
                    for _ in 0..2 {
                        let yields = Rc::clone(&yields);
                        spawn(async move {
                            loop {
                                yields.set(yields.get() + 1);
                                yield_now().await;
                            }
                        });
                    }
                    let start = Instant::now();
                    sleep(Duration::from_millis(5)).await;
                    (start.elapsed(), yields.get())
                }
            })
            .unwrap();
        assert!(slept >= Duration::from_millis(5), "woke early: {slept:?}");
        assert!(
            slept < Duration::from_millis(500),
            "the yielding tasks kept the timer waiting {slept:?}"
        );
        assert!(yielded > 100, "the yielding tasks ran {yielded} times only");
    });
}
