//! step01: a fixed-capacity queue of plain functions, run in order.
//!
//! These tests are also the build-it track's checks, so each failure says
//! what chapter 1 expected and what happened instead.

use std::cell::RefCell;

use step01::{CAPACITY, EventLoop, QueueFull};
use workshop_tests::{HANG_LIMIT, within};

thread_local! {
    // A `fn()` cannot capture anything, so callbacks report to a per-thread log
    // (tests run on separate threads, so they cannot see each other's).
    static LOG: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

/// Far more entries than any test here writes: a log this long means a
/// callback runs again and again.
const RUNAWAY: usize = 1_000;

fn log(entry: &'static str) {
    LOG.with_borrow_mut(|log| log.push(entry));
    let runs = LOG.with_borrow(Vec::len);
    // Fail here, not after filling the memory: the loop never ends by itself.
    assert!(
        runs < RUNAWAY,
        "callbacks ran {RUNAWAY} times, though a test here pushes at most \
         {CAPACITY}: `run` must take each callback off the queue \
         (`pop_front`), not only look at the front one, so that the queue \
         empties and `run` returns"
    );
}

fn take_log() -> Vec<&'static str> {
    LOG.with_borrow_mut(std::mem::take)
}

/// Runs `test` on a thread of its own (where its callbacks log), failing
/// instead of hanging if `run` never returns.
fn bounded<T: Send + 'static>(test: impl FnOnce() -> T + Send + 'static) -> T {
    within(HANG_LIMIT, test)
}

#[test]
fn callbacks_run_in_the_order_they_were_pushed() {
    let ran = bounded(|| {
        let mut lp = EventLoop::new();
        lp.push(|| log("a")).expect("an empty queue has room");
        lp.push(|| log("b")).expect("the queue has room");
        lp.push(|| log("c")).expect("the queue has room");
        lp.run();
        take_log()
    });
    assert_eq!(
        ran,
        ["a", "b", "c"],
        "callbacks pushed as a, b, c must run once each, first in first out \
         (`push` at the back, `run` from the front); they ran as {ran:?}"
    );
}

#[test]
fn plain_loops_run_one_after_the_other() {
    fn three_ups() {
        for _ in 0..3 {
            log("up");
        }
    }
    fn three_downs() {
        for _ in 0..3 {
            log("down");
        }
    }
    let ran = bounded(|| {
        let mut lp = EventLoop::new();
        lp.push(three_ups).expect("an empty queue has room");
        lp.push(three_downs).expect("the queue has room");
        lp.run();
        take_log()
    });
    assert_eq!(ran, ["up", "up", "up", "down", "down", "down"]);
}

#[test]
fn a_full_queue_rejects_the_next_callback_and_runs_only_what_it_accepted() {
    let (refused, ran) = bounded(|| {
        let mut lp = EventLoop::new();
        for place in 1..=CAPACITY {
            assert!(
                lp.push(|| log("accepted")).is_ok(),
                "`push` refused callback {place} of {CAPACITY}: a queue of \
                 capacity {CAPACITY} takes {CAPACITY} callbacks"
            );
        }
        let refused = lp.push(|| log("rejected"));
        lp.run();
        (refused, take_log())
    });
    assert_eq!(
        refused,
        Err(QueueFull),
        "with all {CAPACITY} places taken, `push` must say `Err(QueueFull)`, \
         so the caller knows its callback will not run"
    );
    let accepted = ran.iter().filter(|entry| **entry == "accepted").count();
    assert_eq!(
        (accepted, ran.len()),
        (CAPACITY, CAPACITY),
        "`run` must run the {CAPACITY} accepted callbacks once each and \
         nothing else; it ran {accepted} accepted and {} others",
        ran.len() - accepted
    );
}

#[test]
fn running_the_queue_makes_room_again() {
    let (first_run, second_run) = bounded(|| {
        let mut lp = EventLoop::new();
        for _ in 0..CAPACITY {
            lp.push(|| log("first batch")).expect("the queue has room");
        }
        assert!(lp.push(|| log("too many")).is_err(), "the queue is full");
        lp.run();
        let first_run = take_log().len();
        lp.push(|| log("after the run")).expect(
            "`run` returns once the queue is empty, so there is room again; \
             the queue was still full after `run`",
        );
        lp.run();
        (first_run, take_log())
    });
    assert_eq!(
        first_run, CAPACITY,
        "the first `run` should run the {CAPACITY} callbacks it was given"
    );
    assert_eq!(
        second_run,
        ["after the run"],
        "the second `run` should run only the one callback pushed since the \
         first: a callback runs once, and leaves the queue when it does"
    );
}

#[test]
fn a_callback_that_panics_has_left_the_queue_already() {
    // Taken off before it is called: whatever the callback does, even
    // panic, it is no longer in the queue, and the next `run` goes on from
    // the callback after it.
    let second_run = bounded(|| {
        let mut lp = EventLoop::new();
        lp.push(|| {
            log("panics");
            panic!("a callback that panics, on purpose");
        })
        .expect("room");
        lp.push(|| log("after it")).expect("room");
        let ran =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lp.run()));
        assert!(ran.is_err(), "the callback's panic ends `run`");
        take_log();
        lp.run();
        take_log()
    });
    assert_eq!(
        second_run,
        ["after it"],
        "the callback that panicked was still in the queue and ran again: \
         `run` takes each callback off the queue (`pop_front`) before it \
         calls it, not after"
    );
}

#[test]
fn the_full_queue_error_says_what_happened() {
    let message = QueueFull.to_string();
    assert!(message.contains("full"), "{message}");
    assert!(message.contains(&CAPACITY.to_string()), "{message}");
}
