//! The exercises of chapter 2 ("Try it") that a test can check.
//!
//! Each `#[ignore]`d test fails until its exercise is done. Run them with
//!
//!     cargo test -p workshop-tests --test step02_exercises -- --ignored
//!
//! A reference solution lives in `solutions/step02.rs`, and the tests that are
//! not ignored check it, so every exercise here is known to be solvable.

use std::cell::RefCell;
use std::rc::Rc;

use step02::EventLoop;
use workshop_tests::{HANG_LIMIT, within};

#[path = "solutions/step02.rs"]
mod solutions;

type Log = Rc<RefCell<Vec<String>>>;

// ANCHOR: sum_in_chunks
/// Exercise 1: add up `numbers`, at most `chunk` of them per callback, so
/// that other callbacks get a turn between chunks. After each chunk, log
/// `added N` (N: how many numbers are added so far); at the end, `total T`.
fn sum_in_chunks(lp: &EventLoop, numbers: Vec<u64>, chunk: usize, log: Log) {
    // This already works in chunks, but all of them in one callback: the
    // loop gets the thread back only when the whole sum is done.
    lp.call_soon(move |_| {
        let (mut added, mut total) = (0, 0);
        for piece in numbers.chunks(chunk) {
            added += piece.len();
            total += piece.iter().sum::<u64>();
            log.borrow_mut().push(format!("added {added}"));
        }
        log.borrow_mut().push(format!("total {total}"));
    });
}
// ANCHOR_END: sum_in_chunks

/// Another job on the same loop: logs `tick` once per turn until the sum is
/// done (or 100 turns have passed, so a broken sum cannot hang the test).
fn tick(lp: &EventLoop, log: Log, turns: u32) {
    let done = log.borrow().iter().any(|entry| entry.starts_with("total"));
    if !done && turns < 100 {
        log.borrow_mut().push("tick".to_owned());
        lp.call_soon(move |lp| tick(lp, log, turns + 1));
    }
}

fn check_sum_in_chunks(sum: fn(&EventLoop, Vec<u64>, usize, Log)) {
    let log = Log::default();
    let lp = EventLoop::new();
    sum(&lp, (1..=10).collect(), 4, log.clone());
    let ticks = log.clone();
    lp.call_soon(move |lp| tick(lp, ticks, 0));
    lp.run();

    let log = log.borrow();
    let work: Vec<&str> = log
        .iter()
        .map(String::as_str)
        .filter(|entry| *entry != "tick")
        .collect();
    assert_eq!(work, ["added 4", "added 8", "added 10", "total 55"]);
    let chunks: Vec<usize> = (0..log.len())
        .filter(|&at| log[at].starts_with("added"))
        .collect();
    for pair in chunks.windows(2) {
        assert!(
            log[pair[0]..pair[1]].iter().any(|entry| entry == "tick"),
            "nothing else ran between two chunks: {log:?}"
        );
    }
}

#[test]
#[ignore = "exercise 1 of chapter 2: let other callbacks run between chunks"]
fn exercise_1_other_callbacks_run_between_chunks() {
    within(HANG_LIMIT, || {
        check_sum_in_chunks(sum_in_chunks);
    });
}

#[test]
fn exercise_1_has_a_solution() {
    within(HANG_LIMIT, || {
        check_sum_in_chunks(solutions::sum_in_chunks);
    });
}
