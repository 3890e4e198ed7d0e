//! The timing wheel seen from the loop: its ticks and the loop's waits
//! agree, so no sleep or timer ever ends before its deadline, and timers
//! fire in deadline order even within one tick. How late they are depends
//! on the machine's load, so only "never early" is asserted.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use fast::{EventLoop, sleep_until, spawn};
use workshop_tests::{HANG_LIMIT, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

#[test]
fn no_sleep_ends_before_its_deadline() {
    within(HANG_LIMIT, || {
        let early = new_loop()
            .block_on(async {
                let start = Instant::now();
                // Deadlines every 37 µs over 75 ms: some within one tick,
                // some across level-0 slots, some a cascade away.
                let sleepers: Vec<_> = (0..2_000u32)
                    .map(|i| {
                        let deadline =
                            start + Duration::from_micros(u64::from(i) * 37);
                        spawn(async move {
                            sleep_until(deadline).await;
                            Instant::now() < deadline
                        })
                    })
                    .collect();
                let mut early = 0;
                for sleeper in sleepers {
                    early += u32::from(sleeper.await.unwrap());
                }
                early
            })
            .unwrap();
        assert_eq!(early, 0, "sleeps that ended before their deadline");
    });
}

#[test]
fn timers_fire_in_deadline_order_within_a_tick_and_never_early() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let fired = Rc::new(RefCell::new(Vec::new()));
        let base = Instant::now() + Duration::from_millis(20);
        // Set out of order, 100 µs apart: all ten within two ticks.
        for n in [7u64, 3, 9, 0, 5, 1, 8, 2, 6, 4] {
            let deadline = base + Duration::from_micros(n * 100);
            let log = Rc::clone(&fired);
            lp.call_at(deadline, move |_| {
                log.borrow_mut().push((n, Instant::now() >= deadline));
            });
        }
        lp.run().unwrap();
        let fired = fired.borrow();
        let order: Vec<u64> = fired.iter().map(|&(n, _)| n).collect();
        assert_eq!(order, (0..10).collect::<Vec<_>>());
        assert!(fired.iter().all(|&(_, on_time)| on_time), "one fired early");
    });
}

#[test]
fn a_far_timer_cascades_down_and_fires_after_a_near_one() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let fired = Rc::new(RefCell::new(Vec::new()));
        // 300 ms is a level-1 slot (64 ms each) away: it must move down
        // to level 0 before it fires, and not before its deadline.
        for (name, delay) in [("far", 300), ("near", 5)] {
            let log = Rc::clone(&fired);
            let deadline = Instant::now() + Duration::from_millis(delay);
            lp.call_at(deadline, move |_| {
                log.borrow_mut().push((name, Instant::now() >= deadline));
            });
        }
        lp.run().unwrap();
        assert_eq!(*fired.borrow(), [("near", true), ("far", true)]);
    });
}

/// The loop's wait is set to end at the next tick (on Linux, by a timer
/// of its own on the poller). When the sleep it was set for is cancelled,
/// that timer may still go off: the turn it causes finds nothing due, and
/// the next sleep still ends on its deadline, not before.
#[test]
fn a_wait_set_for_a_cancelled_sleep_ends_no_other_sleep_early() {
    within(HANG_LIMIT, || {
        let slept = new_loop()
            .block_on(async {
                let start = Instant::now();
                let cancelled =
                    spawn(sleep_until(start + Duration::from_millis(10)));
                sleep_until(start + Duration::from_millis(2)).await;
                cancelled.cancel();
                let deadline = start + Duration::from_millis(30);
                sleep_until(deadline).await;
                (Instant::now() >= deadline, cancelled.await.is_err())
            })
            .unwrap();
        assert_eq!(slept, (true, true), "(not early, cancelled)");
    });
}

/// A loop without timers does not read the clock each turn, so its wheel
/// stays where it was; the first timer set after a long while is placed
/// from the present, and its sleep ends on its deadline, not before.
#[test]
fn a_sleep_set_after_a_long_time_without_timers_ends_on_its_deadline() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        lp.block_on(async {
            sleep_until(Instant::now() + Duration::from_millis(1)).await;
        })
        .unwrap();
        std::thread::sleep(Duration::from_millis(150)); // the loop turns no more
        let (early, slept) = lp
            .block_on(async {
                let start = Instant::now();
                let deadline = start + Duration::from_millis(5);
                sleep_until(deadline).await;
                (Instant::now() < deadline, start.elapsed())
            })
            .unwrap();
        assert!(!early, "woke before its deadline");
        assert!(slept < Duration::from_secs(2), "slept {slept:?}");
    });
}
