//! step01: a fixed-capacity queue of plain functions, run in order.

use std::cell::RefCell;

use step01::{CAPACITY, EventLoop, QueueFull};

thread_local! {
    // A `fn()` cannot capture anything, so callbacks report to a per-thread log
    // (tests run on separate threads, so they cannot see each other's).
    static LOG: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

fn log(entry: &'static str) {
    LOG.with_borrow_mut(|log| log.push(entry));
}

fn take_log() -> Vec<&'static str> {
    LOG.with_borrow_mut(std::mem::take)
}

#[test]
fn callbacks_run_in_the_order_they_were_pushed() {
    let mut lp = EventLoop::new();
    lp.push(|| log("a")).unwrap();
    lp.push(|| log("b")).unwrap();
    lp.push(|| log("c")).unwrap();
    lp.run();
    assert_eq!(take_log(), ["a", "b", "c"]);
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
    let mut lp = EventLoop::new();
    lp.push(three_ups).unwrap();
    lp.push(three_downs).unwrap();
    lp.run();
    assert_eq!(take_log(), ["up", "up", "up", "down", "down", "down"]);
}

#[test]
fn a_full_queue_rejects_the_next_callback_and_runs_only_what_it_accepted() {
    let mut lp = EventLoop::new();
    for _ in 0..CAPACITY {
        lp.push(|| log("accepted")).unwrap();
    }
    assert_eq!(lp.push(|| log("rejected")), Err(QueueFull));
    lp.run();
    assert_eq!(take_log(), vec!["accepted"; CAPACITY]);
}

#[test]
fn running_the_queue_makes_room_again() {
    let mut lp = EventLoop::new();
    for _ in 0..CAPACITY {
        lp.push(|| log("first batch")).unwrap();
    }
    assert!(lp.push(|| log("too many")).is_err());
    lp.run();
    lp.push(|| log("after the run")).unwrap();
    lp.run();
    assert_eq!(take_log().last(), Some(&"after the run"));
}

#[test]
fn the_full_queue_error_says_what_happened() {
    let message = QueueFull.to_string();
    assert!(message.contains("full"), "{message}");
    assert!(message.contains(&CAPACITY.to_string()), "{message}");
}
