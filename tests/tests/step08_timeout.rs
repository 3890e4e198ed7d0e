//! Step 8's `timeout`: a ready future wins, even past its deadline; one
//! that is not ready is given up at the deadline and dropped there.

use std::cell::Cell;
use std::future;
use std::io;
use std::rc::Rc;
use std::thread;
use std::time::{Duration, Instant};

use step08::{EventLoop, TimedOut, join_all, spawn, timeout, yield_now};
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
        assert_eq!(
            lp.timer_heap_size().0,
            0,
            "the timer of the timeout that was not needed is still on the heap \
             a turn later: it was cancelled, and a cancelled timer on top of the \
             heap is popped at the start of every turn, swept or not"
        );
    });
}

/// Waits for ever, holding `flag`: the flag says when it is dropped.
async fn hold_for_ever(flag: DropFlag) {
    let _held = flag;
    future::pending::<()>().await;
}

/// Lets every other task take a few turns: enough for a task that was
/// cancelled to be dropped, or for one that yields twice to end.
async fn a_few_turns() {
    for _ in 0..4 {
        yield_now().await;
    }
}

#[test]
fn a_timed_out_handle_only_stops_waiting_its_task_runs_on() {
    within(HANG_LIMIT, || {
        let ended = Rc::new(Cell::new(false));
        let task_ended = Rc::clone(&ended);
        let (outcome, ended_after) = new_loop()
            .block_on(async move {
                let handle = spawn(async move {
                    yield_now().await;
                    task_ended.set(true);
                });
                let outcome = timeout(Duration::ZERO, handle).await;
                let ended_at_timeout = ended.get();
                a_few_turns().await;
                assert!(!ended_at_timeout, "the test proves nothing");
                (outcome.map(|_| ()), ended.get())
            })
            .unwrap();
        assert_eq!(outcome, Err(TimedOut));
        assert!(ended_after, "dropping the handle stopped its task");
    });
}

#[test]
fn a_timed_out_cancel_on_drop_cancels_its_task() {
    within(HANG_LIMIT, || {
        let (flag, dropped) = DropFlag::new();
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let (outcome, dropped, tasks) = lp
            .block_on(async move {
                let handle = spawn(hold_for_ever(flag));
                yield_now().await; // the task runs, and waits
                let outcome = timeout(Duration::ZERO, handle.cancel_on_drop()).await;
                a_few_turns().await;
                (outcome.map(|_| ()), dropped.get(), format!("{same_loop:?}"))
            })
            .unwrap();
        assert_eq!(outcome, Err(TimedOut));
        assert!(dropped, "the task was not cancelled");
        assert!(
            tasks.contains("tasks: 1"),
            "not only block_on's task: {tasks}"
        );
    });
}

#[test]
fn a_timed_out_join_all_cancels_its_tasks() {
    within(HANG_LIMIT, || {
        let (first, first_dropped) = DropFlag::new();
        let (second, second_dropped) = DropFlag::new();
        let (outcome, dropped) = new_loop()
            .block_on(async move {
                let all = join_all([first, second].map(hold_for_ever));
                let outcome = timeout(Duration::ZERO, all).await;
                a_few_turns().await;
                let dropped = (first_dropped.get(), second_dropped.get());
                (outcome.map(|_| ()), dropped)
            })
            .unwrap();
        assert_eq!(outcome, Err(TimedOut));
        assert_eq!(dropped, (true, true), "join_all's tasks ran on");
    });
}

#[test]
fn timed_out_becomes_an_io_error_of_its_kind() {
    let err = io::Error::from(TimedOut);
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    assert_eq!(err.to_string(), "timed out");
}
