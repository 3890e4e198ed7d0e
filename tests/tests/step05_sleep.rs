//! Step 5's `sleep` and `yield_now`: timers under tasks, with the timing
//! claims of the demo, and a loop that waits without burning CPU.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;
use step05::{EventLoop, sleep, sleep_until, yield_now};
use workshop_tests::{HANG_LIMIT, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

fn secs(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}

#[test]
fn two_sleeping_tasks_take_as_long_as_the_longer_sleep() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let started = Instant::now();
        lp.spawn(sleep(secs(0.5)));
        lp.block_on(sleep(secs(0.7))).unwrap();
        let took = started.elapsed();
        assert!(took >= secs(0.7), "woke early: {took:?}");
        // Serially they would take 1.2 s; the margin is for a loaded machine.
        assert!(took < secs(1.0), "not concurrent: {took:?}");
    });
}

#[test]
fn sleep_never_returns_early() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        for millis in [0, 1, 20, 75] {
            let nap = Duration::from_millis(millis);
            let took = lp
                .block_on(async move {
                    let started = Instant::now();
                    sleep(nap).await;
                    started.elapsed()
                })
                .unwrap();
            assert!(took >= nap, "sleep({nap:?}) returned after {took:?}");
        }
    });
}

#[test]
fn tasks_sleeping_until_the_same_deadline_wake_in_the_order_they_slept() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let log = Rc::new(RefCell::new(Vec::new()));
        let deadline = Instant::now() + secs(0.05);
        for name in ["first", "second", "third"] {
            let log = Rc::clone(&log);
            lp.spawn(async move {
                sleep_until(deadline).await;
                log.borrow_mut().push(name);
            });
        }
        lp.block_on(sleep_until(deadline + secs(0.05))).unwrap();
        assert_eq!(*log.borrow(), ["first", "second", "third"]);
    });
}

#[test]
fn a_sleeping_loop_uses_almost_no_cpu() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let cpu = ThreadTime::now();
        lp.block_on(sleep(secs(0.3))).unwrap();
        let used = cpu.elapsed();
        // Spinning would use about 0.3 s; blocking in poll uses next to none.
        assert!(used < secs(0.05), "used {used:?} of CPU to sleep 0.3 s");
    });
}

#[test]
fn a_task_that_yields_lets_a_sleeper_wake_on_time() {
    within(HANG_LIMIT, || {
        // A task that only ever yields keeps the loop busy; the loop must still
        // look at its timers every turn.
        let lp = new_loop();
        lp.spawn(async {
            loop {
                yield_now().await;
            }
        });
        let started = Instant::now();
        lp.block_on(sleep(secs(0.1))).unwrap();
        let took = started.elapsed();
        assert!(took < secs(0.4), "the sleeper woke after {took:?}");
    });
}

#[test]
fn yield_now_says_not_yet_exactly_once() {
    within(HANG_LIMIT, || {
        let mut future = yield_now();
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut future).poll(&mut cx).is_pending());
        assert!(Pin::new(&mut future).poll(&mut cx).is_ready());
    });
}
