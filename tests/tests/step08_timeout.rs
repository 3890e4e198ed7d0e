//! Step 8's `timeout`: a ready future wins, even past its deadline; one
//! that is not ready is given up at the deadline and dropped there.

use std::io;
use std::rc::Rc;
use std::thread;
use std::time::{Duration, Instant};

use step08::{EventLoop, TimedOut, spawn, timeout, yield_now};
use workshop_tests::{DropFlag, HANG_LIMIT, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

#[test]
fn a_future_ready_at_once_wins_even_a_zero_timeout() {
    within(HANG_LIMIT, || {
        let outcome = new_loop()
            .block_on(timeout(Duration::ZERO, async { 7 }))
            .unwrap();
        assert_eq!(outcome, Ok(7));
    });
}

#[test]
fn a_future_ready_when_polled_wins_though_its_deadline_has_passed() {
    within(HANG_LIMIT, || {
        let limit = Duration::from_millis(10);
        let (outcome, late) = new_loop()
            .block_on(async move {
                // Runs between the two polls of the timed future, and holds
                // the loop well past the deadline.
                spawn(async { thread::sleep(Duration::from_millis(50)) });
                let started = Instant::now();
                let outcome = timeout(limit, async {
                    yield_now().await;
                    "finished"
                })
                .await;
                (outcome, started.elapsed() > limit)
            })
            .unwrap();
        assert!(late, "the deadline had not passed: the test proves nothing");
        assert_eq!(outcome, Ok("finished"));
    });
}

#[test]
fn a_future_not_ready_times_out_at_the_deadline_and_is_dropped_there() {
    within(HANG_LIMIT, || {
        let (flag, dropped) = DropFlag::new();
        let (outcome, dropped_at_return, took) = new_loop()
            .block_on(async move {
                let started = Instant::now();
                let outcome = timeout(Duration::from_millis(100), async move {
                    let _held = flag;
                    std::future::pending::<()>().await;
                })
                .await;
                (outcome, dropped.get(), started.elapsed())
            })
            .unwrap();
        assert_eq!(outcome, Err(TimedOut));
        assert!(dropped_at_return, "the abandoned future was not dropped");
        assert!(
            took >= Duration::from_millis(100),
            "gave up early: {took:?}"
        );
        // Generous: both cores may be busy.
        assert!(took < Duration::from_secs(2), "gave up late: {took:?}");
    });
}

#[test]
fn a_timeout_that_is_not_needed_leaves_no_timer_behind() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let outcome = lp
            .block_on(timeout(Duration::from_secs(3600), yield_now()))
            .unwrap();
        assert_eq!(outcome, Ok(()));
        let started = Instant::now();
        lp.run().unwrap(); // returns at once: no timer is left to wait for
        assert!(started.elapsed() < Duration::from_secs(5));
        lp.block_on(async {}).unwrap();
        assert_eq!(lp.timer_heap_size().0, 0);
    });
}

#[test]
fn timed_out_becomes_an_io_error_of_its_kind() {
    let err = io::Error::from(TimedOut);
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    assert_eq!(err.to_string(), "timed out");
}
