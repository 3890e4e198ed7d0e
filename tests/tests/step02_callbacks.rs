//! step02: callbacks that carry state and reschedule themselves.
//!
//! These tests are also the build-it track's checks, so each failure says
//! what chapter 2 expected and what happened instead. Each runs its loop
//! under `within`, so a `run` that never returns fails instead of hanging.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use step02::EventLoop;
use workshop_tests::{HANG_LIMIT, within};

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

/// Runs a fresh loop with what `schedule` puts on it, on a thread of its own
/// and bounded by `HANG_LIMIT`; returns the log the callbacks wrote.
fn run_logged(
    schedule: impl FnOnce(&EventLoop, &Log) + Send + 'static,
) -> Vec<String> {
    within(HANG_LIMIT, move || {
        let log = Log::default();
        let lp = EventLoop::new();
        schedule(&lp, &log);
        lp.run();
        log.take()
    })
}

#[test]
fn self_rescheduling_callbacks_take_turns() {
    let ran = run_logged(|lp, log| {
        let (up, down) = (log.clone(), log.clone());
        lp.call_soon(move |lp| countup(lp, up, 0, 3));
        lp.call_soon(move |lp| countdown(lp, down, 3));
    });
    assert_eq!(
        ran,
        ["Up 0", "Down 3", "Up 1", "Down 2", "Up 2", "Down 1"],
        "two callbacks that each reschedule themselves with `call_soon` must \
         take turns: `call_soon` puts a callback at the back of the queue, \
         `run` takes the oldest first and keeps going until none is left; \
         they ran as {ran:?}"
    );
}

#[test]
fn a_callback_scheduled_by_a_callback_runs_after_those_already_queued() {
    let ran = run_logged(|lp, log| {
        let first = log.clone();
        lp.call_soon(move |lp| {
            first.borrow_mut().push("first".into());
            let nested = first.clone();
            lp.call_soon(move |_| {
                nested.borrow_mut().push("scheduled by first".into());
            });
            first.borrow_mut().push("first returns".into());
        });
        let second = log.clone();
        lp.call_soon(move |_| second.borrow_mut().push("second".into()));
    });
    assert_eq!(
        ran,
        ["first", "first returns", "second", "scheduled by first"],
        "`call_soon` from a callback must queue the new callback behind those \
         already waiting, to run after the current one returns (never at \
         once, never at the front); they ran as {ran:?}"
    );
}

#[test]
fn a_long_chain_of_callbacks_does_not_grow_the_stack() {
    // Each step returns to the loop before the next runs, so a chain of a
    // million callbacks is a loop, not a million nested calls.
    const CHAIN: u32 = 1_000_000;
    fn step(
        lp: &EventLoop,
        remaining: u32,
        done: Rc<Cell<u32>>,
        depth: &Rc<Cell<u32>>,
    ) {
        // Fail at the first nested call, before a deep chain overflows the
        // stack and takes every other test of this file down with it.
        depth.set(depth.get() + 1);
        assert_eq!(
            depth.get(),
            1,
            "a callback ran inside the callback that scheduled it: \
             `call_soon` must only queue the callback, and `run` run it once \
             the current one has returned"
        );
        done.set(done.get() + 1);
        if remaining > 0 {
            let depth = depth.clone();
            lp.call_soon(move |lp| step(lp, remaining - 1, done, &depth));
        }
        depth.set(depth.get() - 1);
    }
    let done = within(HANG_LIMIT, || {
        let done = Rc::new(Cell::new(0));
        let lp = EventLoop::new();
        let (counter, depth) = (done.clone(), Rc::new(Cell::new(0)));
        lp.call_soon(move |lp| step(lp, CHAIN - 1, counter, &depth));
        lp.run();
        done.get()
    });
    assert_eq!(
        done, CHAIN,
        "`run` must keep taking callbacks until the queue is empty: of a \
         chain of {CHAIN} callbacks, each scheduling the next, {done} ran"
    );
}

#[test]
fn run_returns_once_the_queue_is_empty() {
    let ran = within(HANG_LIMIT, || {
        let lp = EventLoop::new();
        // Nothing to run: `run` must return at once, not wait for work.
        lp.run();
        let ran = Rc::new(Cell::new(0));
        let count = ran.clone();
        lp.call_soon(move |_| count.set(count.get() + 1));
        lp.run();
        lp.run();
        ran.get()
    });
    assert_eq!(
        ran, 1,
        "a callback given to `call_soon` must run exactly once, in the next \
         `run`; it ran {ran} times"
    );
}
