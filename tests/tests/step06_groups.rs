//! Step 6's groups and background tasks: `join_all` gives every outcome in
//! order in the time of the slowest, and `block_on` waits for no one else.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use step06::{EventLoop, join_all, sleep, spawn, yield_now};
use workshop_tests::{DropFlag, HANG_LIMIT, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

fn secs(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}

async fn nap(seconds: f64) -> f64 {
    sleep(secs(seconds)).await;
    seconds
}

#[test]
fn join_all_gives_every_value_in_the_order_given() {
    within(HANG_LIMIT, || {
        let outcomes = new_loop()
            .block_on(join_all([0.09, 0.03, 0.06, 0.0].map(nap)))
            .unwrap();
        let values: Vec<f64> = outcomes.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            values,
            [0.09, 0.03, 0.06, 0.0],
            "not the order they ended in"
        );
    });
}

#[test]
fn a_group_of_sleeps_takes_as_long_as_the_longest() {
    // The demo's claim: 1.0, 0.5 and 0.5 s together take 1.0 s, not 2.0 s.
    let took = within(HANG_LIMIT, || {
        let started = Instant::now();
        new_loop()
            .block_on(join_all([1.0, 0.5, 0.5].map(nap)))
            .unwrap();
        started.elapsed()
    });
    assert!(took >= secs(1.0), "a sleep ended early: {took:?}");
    assert!(took < secs(1.3), "the sleeps did not overlap: {took:?}");
}

#[test]
fn join_all_keeps_a_failure_in_its_place() {
    within(HANG_LIMIT, || {
        let outcomes = new_loop()
            .block_on(join_all((0..3).map(|n| async move {
                yield_now().await;
                assert!(n != 1, "task {n} failed");
                n
            })))
            .unwrap();
        assert_eq!(*outcomes[0].as_ref().unwrap(), 0);
        assert_eq!(
            outcomes[1].as_ref().unwrap_err().panic_message(),
            Some("task 1 failed")
        );
        assert_eq!(*outcomes[2].as_ref().unwrap(), 2);
    });
}

#[test]
fn join_all_of_nothing_is_empty() {
    within(HANG_LIMIT, || {
        let outcomes = new_loop()
            .block_on(join_all(Vec::<std::future::Ready<u8>>::new()))
            .unwrap();
        assert!(outcomes.is_empty());
    });
}

#[test]
fn block_on_returns_without_waiting_for_background_tasks_and_drops_them() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (flag, dropped) = DropFlag::new();
        let started = Instant::now();
        lp.block_on(async move {
            spawn(async move {
                let _flag = flag;
                sleep(Duration::from_secs(60)).await;
            });
            sleep(Duration::from_millis(20)).await;
        })
        .unwrap();
        assert!(
            started.elapsed() < secs(5.0),
            "block_on waited for the sleeper"
        );
        assert!(dropped.get(), "the background task was dropped by block_on");
        drop(lp);
    });
}

#[test]
fn a_background_task_dropped_by_block_on_never_runs_again() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let rounds = Rc::new(Cell::new(0));
        let counter = Rc::clone(&rounds);
        lp.block_on(async move {
            spawn(async move {
                loop {
                    counter.set(counter.get() + 1);
                    yield_now().await;
                }
            });
            yield_now().await;
        })
        .unwrap();
        let at_return = rounds.get();
        lp.block_on(async {
            for _ in 0..5 {
                yield_now().await;
            }
        })
        .unwrap();
        assert_eq!(rounds.get(), at_return, "the next block_on ran it");
    });
}

#[test]
fn block_on_inside_a_task_is_refused_and_the_loop_carries_on() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let refused = lp
            .block_on(async move {
                spawn(async move { same_loop.block_on(yield_now()).unwrap() }).await
            })
            .unwrap();
        let err = refused.unwrap_err();
        let message = err.panic_message().unwrap_or("(cancelled)");
        assert!(
            message.starts_with("block_on called inside block_on"),
            "{message}"
        );

        let after = lp.block_on(async {
            sleep(Duration::from_millis(10)).await;
            spawn(async { 5 }).await.unwrap()
        });
        assert_eq!(after.unwrap(), 5);
    });
}
