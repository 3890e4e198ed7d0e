//! Step 8's timer cancellation: a cancelled timer never fires and never
//! keeps the loop waiting, a dropped `Sleep` cancels its own, and cancelled
//! timers are swept by asyncio's rule, so they do not pile up.
//!
//! The tests that hold for any runtime with step 8's API are in
//! `shared/timers.rs`, which `fast` (`beyond/`) runs too; those below are
//! about step 8's heap, which keeps a cancelled timer until a turn or a sweep.

use step08 as step;

include!("shared/timers.rs");

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
        assert_eq!(lp.timer_heap_size().0, 2, "the heap is left alone");
        one_turn(&lp);
        assert_eq!(heap_len(&lp), 0, "both cancelled timers were popped");
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
        assert_eq!(heap_len(&lp), 1, "the heap is left alone until a turn");
        one_turn(&lp);
        assert_eq!(
            heap_len(&lp),
            0,
            "the cancelled timer came up and was popped"
        );
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
fn the_sweep_follows_asyncios_rule_more_than_100_and_more_than_half() {
    within(HANG_LIMIT, || {
        // (live timers, cancelled timers, heap length after one turn)
        let cases = [
            (0, 99, 100),  // 100 timers: not more than 100, no sweep
            (0, 100, 1),   // 101 timers, 100 cancelled: swept
            (50, 50, 101), // 101 timers, 50 cancelled: not more than half
            (49, 51, 50),  // 101 timers, 51 cancelled: swept
            (50, 51, 102), // 102 timers, 51 cancelled: half, not more than half
            (49, 52, 50),  // 102 timers, 52 cancelled: swept
            (500, 500, 1001),
            (499, 501, 500),
        ];
        for (live, cancelled, expected) in cases {
            let lp = new_loop();
            heap_with(&lp, live, cancelled);
            one_turn(&lp);
            let total = 1 + live + cancelled;
            let held = heap_len(&lp);
            let what = if held == expected {
                "as it should"
            } else if expected == total {
                "swept, but asyncio's rule says not yet"
            } else {
                "not swept, but asyncio's rule says sweep"
            };
            assert_eq!(
                held, expected,
                "a heap of {total} timers, {cancelled} of them cancelled behind \
                 a live one, held {held} after one turn ({what}): sweep when \
                 there are more than 100 timers and more than half of them are \
                 cancelled; otherwise pop cancelled timers from the top only"
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
            assert_eq!(heap_len(&same_loop), 2, "one live, one cancelled");
            handle.await.expect("the other task wakes and ends");
        })
        .unwrap();
    });
}

#[test]
fn a_turn_costs_the_same_however_many_timers_wait() {
    // A cancelled timer further down the heap costs nothing until it comes
    // up: a turn looks at the heap's top, and counts the cancelled ones
    // without looking at each. So 2,000 turns take about as long beside
    // 100,000 pending timers as beside none; a turn that walked the heap
    // would take 100,000 steps each, seconds in all.
    const TURNS: u32 = 2_000;
    const WAITING: usize = 100_000;
    let turns_beside = |timers: usize| {
        let lp = new_loop();
        let handles: Vec<_> = (0..timers)
            .map(|_| lp.call_later(AN_HOUR, |_| {}))
            .collect();
        let started = Instant::now();
        lp.block_on(async {
            for _ in 0..TURNS {
                yield_now().await;
            }
        })
        .unwrap();
        let took = started.elapsed();
        drop(handles);
        took
    };
    let (alone, beside) =
        within(HANG_LIMIT, move || (turns_beside(0), turns_beside(WAITING)));
    // Generous: a cache that no longer holds the heap, a busy machine.
    let limit = alone * 20 + Duration::from_millis(500);
    assert!(
        beside < limit,
        "{TURNS} turns took {beside:?} beside {WAITING} pending timers and \
         {alone:?} beside none: a turn must not look at every timer (count the \
         cancelled ones as the heap's size less the pending ones')"
    );
}
