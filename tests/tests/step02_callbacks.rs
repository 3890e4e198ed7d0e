//! step02: callbacks that carry state and reschedule themselves.

use std::cell::RefCell;
use std::rc::Rc;

use step02::EventLoop;

type Log = Rc<RefCell<Vec<String>>>;

fn countup(lp: &EventLoop, log: Log, i: u32, n: u32) {
    if i < n {
        log.borrow_mut().push(format!("Up {i}"));
        lp.call_soon(move |lp| countup(lp, log, i + 1, n));
    }
}

fn countdown(lp: &EventLoop, log: Log, n: u32) {
    if n > 0 {
        log.borrow_mut().push(format!("Down {n}"));
        lp.call_soon(move |lp| countdown(lp, log, n - 1));
    }
}

#[test]
fn self_rescheduling_callbacks_take_turns() {
    let log = Log::default();
    let lp = EventLoop::new();
    let (up, down) = (log.clone(), log.clone());
    lp.call_soon(move |lp| countup(lp, up, 0, 3));
    lp.call_soon(move |lp| countdown(lp, down, 3));
    lp.run();
    assert_eq!(
        *log.borrow(),
        ["Up 0", "Down 3", "Up 1", "Down 2", "Up 2", "Down 1"]
    );
}

#[test]
fn a_callback_scheduled_by_a_callback_runs_after_those_already_queued() {
    let log = Log::default();
    let lp = EventLoop::new();
    let first = log.clone();
    lp.call_soon(move |lp| {
        first.borrow_mut().push("first".into());
        let nested = first.clone();
        lp.call_soon(move |_| nested.borrow_mut().push("scheduled by first".into()));
    });
    let second = log.clone();
    lp.call_soon(move |_| second.borrow_mut().push("second".into()));
    lp.run();
    assert_eq!(*log.borrow(), ["first", "second", "scheduled by first"]);
}

#[test]
fn a_long_chain_of_callbacks_does_not_grow_the_stack() {
    // Each step returns to the loop before the next runs, so a chain of a
    // million callbacks is a loop, not a million nested calls.
    fn step(lp: &EventLoop, remaining: u32, done: Rc<RefCell<u32>>) {
        *done.borrow_mut() += 1;
        if remaining > 0 {
            lp.call_soon(move |lp| step(lp, remaining - 1, done));
        }
    }
    let done = Rc::new(RefCell::new(0));
    let lp = EventLoop::new();
    let counter = done.clone();
    lp.call_soon(move |lp| step(lp, 999_999, counter));
    lp.run();
    assert_eq!(*done.borrow(), 1_000_000);
}

#[test]
fn run_returns_once_the_queue_is_empty() {
    let lp = EventLoop::new();
    lp.run();
    let ran = Rc::new(RefCell::new(false));
    let flag = ran.clone();
    lp.call_soon(move |_| *flag.borrow_mut() = true);
    lp.run();
    assert!(*ran.borrow());
}
