//! `tests/tests/step06_panics.rs` on `fast` (step 8 keeps step 6's panics): a panicking task ends alone, its joiner learns why, and
//! the loop and every other task carry on.

use std::cell::RefCell;
use std::future;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Duration;

use fast::{EventLoop, JoinError, sleep, spawn, yield_now};
use workshop_tests::{HANG_LIMIT, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

#[test]
fn a_joiner_gets_the_panic_message_of_its_child() {
    within(HANG_LIMIT, || {
        let outcomes = new_loop()
            .block_on(async {
                let plain = spawn(async {
                    yield_now().await;
                    panic!("out of coffee");
                });
                let formatted = spawn(async {
                    sleep(Duration::from_millis(10)).await;
                    let cups = 0;
                    assert!(cups > 0, "{cups} cups left");
                });
                (plain.await, formatted.await)
            })
            .unwrap();
        let (plain, formatted): (Result<(), JoinError>, Result<(), JoinError>) =
            outcomes;
        let plain = plain.unwrap_err();
        assert_eq!(plain.panic_message(), Some("out of coffee"));
        assert_eq!(plain.to_string(), "task panicked: out of coffee");
        assert!(matches!(plain, JoinError::Panicked(_)));
        // What `unwrap()` on the outcome would print: the message, not `Any`.
        assert_eq!(format!("{plain:?}"), r#"Panicked("out of coffee")"#);
        assert_eq!(formatted.unwrap_err().panic_message(), Some("0 cups left"));
    });
}

#[test]
fn other_tasks_and_the_parent_carry_on_after_a_child_panics() {
    within(HANG_LIMIT, || {
        let log = Rc::new(RefCell::new(Vec::new()));
        let parent_log = Rc::clone(&log);
        new_loop()
            .block_on(async move {
                let sibling_log = Rc::clone(&parent_log);
                let sibling = spawn(async move {
                    for round in 0..3 {
                        sibling_log.borrow_mut().push(format!("sibling {round}"));
                        yield_now().await;
                    }
                });
                let failing = spawn(async {
                    yield_now().await;
                    panic!("boom");
                });
                // A detached task that panics disturbs nobody either.
                drop(spawn(async { panic!("unwatched") }));
                let failed = failing.await.is_err();
                parent_log
                    .borrow_mut()
                    .push(format!("child failed: {failed}"));
                sibling.await.unwrap();
                parent_log.borrow_mut().push("parent done".to_owned());
            })
            .unwrap();
        assert_eq!(
            *log.borrow(),
            [
                "sibling 0",
                "sibling 1",
                "sibling 2",
                "child failed: true",
                "parent done"
            ]
        );
    });
}

#[test]
fn the_loop_runs_more_tasks_after_a_panic() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let failed = lp
            .block_on(async { spawn(async { panic!("first") }).await })
            .unwrap();
        assert!(failed.is_err());
        let value = lp
            .block_on(async {
                sleep(Duration::from_millis(10)).await;
                spawn(async { 42 }).await.unwrap()
            })
            .unwrap();
        assert_eq!(value, 42);
    });
}

#[test]
#[should_panic(expected = "the main task gave up")]
fn a_panic_in_the_main_task_comes_out_of_block_on() {
    within(HANG_LIMIT, || {
        let _ = new_loop().block_on(async {
            yield_now().await;
            panic!("the main task gave up");
        });
    });
}

/// Panics when dropped, as a careless destructor might.
struct PanicsWhenDropped;

impl Drop for PanicsWhenDropped {
    fn drop(&mut self) {
        panic!("the cleanup failed");
    }
}

#[test]
fn a_destructor_that_panics_as_block_on_drops_its_task_is_that_tasks_panic() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let teardown = panic::catch_unwind(AssertUnwindSafe(|| {
            lp.block_on(async {
                let child = spawn(async {
                    let _guard = PanicsWhenDropped;
                    future::pending::<()>().await;
                });
                yield_now().await; // the child takes its guard, and waits
                Some(child) // block_on's end drops the child, unfinished
            })
        }));
        let Ok(child) = teardown else {
            panic!(
                "a destructor's panic, as block_on dropped the task that owned \
                 it, came out of block_on: it belongs to that task, as a panic \
                 in its poll does, and goes to its joiner"
            );
        };
        let child = child.unwrap().expect("the handle was returned");
        let outcome = lp.block_on(child).unwrap();
        let message = outcome.as_ref().err().and_then(JoinError::panic_message);
        assert_eq!(
            message,
            Some("the cleanup failed"),
            "the joiner of a task whose destructor panicked got {outcome:?}"
        );
        assert_eq!(lp.block_on(async { 5 }).unwrap(), 5, "the loop goes on");
    });
}
