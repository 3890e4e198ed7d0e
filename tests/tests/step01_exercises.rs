//! The exercises of chapter 1 ("Try it") that a test can check.
//!
//! Each `#[ignore]`d test fails until its exercise is done. Run them with
//!
//!     cargo test -p workshop-tests --test step01_exercises -- --ignored
//!
//! A reference solution lives in `solutions/step01.rs`, and the tests that are
//! not ignored check it, so every exercise here is known to be solvable.

use std::cell::RefCell;

use step01::EventLoop;
use workshop_tests::{HANG_LIMIT, within};

#[path = "solutions/step01.rs"]
mod solutions;

thread_local! {
    // A `fn()` callback cannot capture a log, so callbacks write to this one.
    static LOG: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

fn log(entry: &'static str) {
    LOG.with_borrow_mut(|log| log.push(entry));
    // A `run` that never takes a callback off the queue runs it for ever:
    // fail here rather than fill the memory.
    assert!(
        LOG.with_borrow(Vec::len) < 1_000,
        "callbacks ran 1,000 times for a log of 6 lines: `run` must take each \
         callback off the queue (`pop_front`), not only look at the front one"
    );
}

fn take_log() -> Vec<&'static str> {
    LOG.with_borrow_mut(std::mem::take)
}

// ANCHOR: take_turns
/// Exercise 1: change this function so that the log reads
/// `Up 0, Down 3, Up 1, Down 2, Up 2, Down 1`.
/// Only push callbacks onto `lp`; do not change step01.
fn queue_taking_turns(lp: &mut EventLoop) {
    lp.push(count_up).expect("the queue is empty");
    lp.push(count_down).expect("the queue has room");
}

fn count_up() {
    for entry in ["Up 0", "Up 1", "Up 2"] {
        log(entry);
    }
}

fn count_down() {
    for entry in ["Down 3", "Down 2", "Down 1"] {
        log(entry);
    }
}
// ANCHOR_END: take_turns

fn check_taking_turns(queue: fn(&mut EventLoop)) {
    let mut lp = EventLoop::new();
    queue(&mut lp);
    lp.run();
    assert_eq!(
        take_log(),
        ["Up 0", "Down 3", "Up 1", "Down 2", "Up 2", "Down 1"]
    );
}

#[test]
#[ignore = "exercise 1 of chapter 1: make countup and countdown take turns"]
fn exercise_1_countup_and_countdown_take_turns() {
    within(HANG_LIMIT, || {
        check_taking_turns(queue_taking_turns);
    });
}

#[test]
fn exercise_1_has_a_solution() {
    within(HANG_LIMIT, || {
        check_taking_turns(solutions::queue_taking_turns);
    });
}
