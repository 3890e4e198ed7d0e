//! step03: timers on a deadline heap, and a loop that sleeps between them.
//!
//! Timing claims are checked with tolerances that hold on a loaded machine:
//! a timer may fire late (the OS decides when a sleeping thread runs again)
//! but never early, and waiting must not cost CPU.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;
use step03::{EventLoop, naive_call_later};

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// Runs a fresh loop with what `schedule` puts on it; returns the time taken.
fn time_run(schedule: impl FnOnce(&EventLoop)) -> Duration {
    let start = Instant::now();
    let lp = EventLoop::new();
    schedule(&lp);
    lp.run();
    start.elapsed()
}

#[test]
fn concurrent_sleeps_take_the_longest_not_the_sum() {
    let serial = time_run(|lp| {
        lp.call_later(ms(500), |lp| lp.call_later(ms(700), |_| {}));
    });
    let concurrent = time_run(|lp| {
        lp.call_later(ms(500), |_| {});
        lp.call_later(ms(700), |_| {});
    });
    assert!(serial >= ms(1200), "serial sleeps ended early: {serial:?}");
    assert!(
        concurrent >= ms(700),
        "concurrent sleeps ended early: {concurrent:?}"
    );
    // Well under the serial total: the 0.5 s wait overlapped the 0.7 s one.
    assert!(
        concurrent < ms(1050),
        "sleeps did not overlap: {concurrent:?}"
    );
}

#[test]
fn waiting_for_a_timer_costs_no_cpu_but_polling_the_clock_does() {
    let wait = ms(300);

    let cpu = ThreadTime::now();
    let wall = time_run(|lp| lp.call_later(wait, |_| {}));
    let sleeping_cpu = cpu.elapsed();

    let cpu = ThreadTime::now();
    let naive_wall = time_run(|lp| naive_call_later(lp, wait, |_| {}));
    let polling_cpu = cpu.elapsed();

    assert!(wall >= wait && naive_wall >= wait);
    // Sleeping in the OS: microseconds of CPU. 5% of the wait is generous.
    assert!(
        sleeping_cpu < wait / 20,
        "the loop used {sleeping_cpu:?} of CPU to wait {wall:?}"
    );
    // Polling the clock keeps a core busy. Even when other processes take
    // most of it, this thread gets a tenth; on an idle machine it is ~100%.
    assert!(
        polling_cpu > naive_wall / 10,
        "polling used only {polling_cpu:?} of CPU in {naive_wall:?}"
    );
    assert!(polling_cpu > sleeping_cpu * 10);
}

/// A small deterministic generator, so the test is the same every run.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

#[test]
fn many_timers_fire_in_deadline_order_with_ties_in_scheduling_order() {
    const TIMERS: usize = 2_000;
    let lp = EventLoop::new();
    let start = Instant::now() + ms(20);
    let mut random = XorShift(0x2545_f491_4f6c_dd1d);
    // Deadlines on a 1 ms grid over 50 ms: with 2,000 timers, most share
    // their deadline with dozens of others, so ties are the common case.
    let deadlines: Vec<Instant> =
        (0..TIMERS).map(|_| start + ms(random.below(50))).collect();

    let fired = Rc::new(RefCell::new(Vec::with_capacity(TIMERS)));
    let early = Rc::new(Cell::new(0));
    for (index, &deadline) in deadlines.iter().enumerate() {
        let (fired, early) = (fired.clone(), early.clone());
        lp.call_at(deadline, move |_| {
            if Instant::now() < deadline {
                early.set(early.get() + 1);
            }
            fired.borrow_mut().push(index);
        });
    }
    lp.run();

    let mut expected: Vec<usize> = (0..TIMERS).collect();
    // A stable sort keeps scheduling order among equal deadlines.
    expected.sort_by_key(|&index| deadlines[index]);
    assert_eq!(*fired.borrow(), expected);
    assert_eq!(early.get(), 0, "timers fired before their deadline");
}

#[test]
fn a_timer_scheduled_from_a_callback_counts_its_delay_from_then() {
    let lp = EventLoop::new();
    let fired_after = Rc::new(Cell::new(None));
    let fired = fired_after.clone();
    lp.call_later(ms(100), move |lp| {
        let scheduled_at = Instant::now();
        lp.call_later(ms(100), move |_| fired.set(Some(scheduled_at.elapsed())));
    });
    let start = Instant::now();
    lp.run();
    let total = start.elapsed();

    let inner = fired_after.get().expect("the inner timer fired");
    assert!(inner >= ms(100), "inner timer fired early: {inner:?}");
    assert!(total >= ms(200), "the two delays overlapped: {total:?}");
}

#[test]
fn a_deadline_already_passed_fires_at_once_and_before_later_ones() {
    let lp = EventLoop::new();
    let order = Rc::new(RefCell::new(Vec::new()));
    let (late, past) = (order.clone(), order.clone());
    lp.call_later(ms(50), move |_| late.borrow_mut().push("in 50 ms"));
    let deadline = Instant::now();
    std::thread::sleep(ms(10));
    lp.call_at(deadline, move |_| past.borrow_mut().push("10 ms ago"));
    let start = Instant::now();
    lp.run();
    assert_eq!(*order.borrow(), ["10 ms ago", "in 50 ms"]);
    // It did not wait a full extra turn or more for the past deadline.
    assert!(start.elapsed() < ms(500), "took {:?}", start.elapsed());
}

#[test]
fn a_timer_delayed_by_a_slow_callback_fires_late_but_fires() {
    let lp = EventLoop::new();
    let fired_at = Rc::new(Cell::new(None));
    let fired = fired_at.clone();
    let start = Instant::now();
    lp.call_later(ms(10), move |_| fired.set(Some(start.elapsed())));
    // This callback hogs the thread past the timer's deadline: nothing can
    // preempt it, so the timer runs on the first turn after it returns.
    lp.call_soon(|_| std::thread::sleep(ms(60)));
    lp.run();
    let fired_after = fired_at.get().expect("the timer fired");
    assert!(fired_after >= ms(60), "timer ran during the slow callback");
}

#[test]
fn a_callback_that_keeps_rescheduling_itself_does_not_starve_timers() {
    // Bounded, so a starving loop fails the test instead of hanging it.
    const GIVE_UP_AFTER: u64 = 50_000_000;
    fn spin(lp: &EventLoop, timer_fired: Rc<Cell<bool>>, turns: Rc<Cell<u64>>) {
        turns.set(turns.get() + 1);
        if !timer_fired.get() && turns.get() < GIVE_UP_AFTER {
            lp.call_soon(move |lp| spin(lp, timer_fired, turns));
        }
    }
    let lp = EventLoop::new();
    let timer_fired = Rc::new(Cell::new(false));
    let turns = Rc::new(Cell::new(0));
    let fired = timer_fired.clone();
    lp.call_later(ms(20), move |_| fired.set(true));
    let (flag, count) = (timer_fired.clone(), turns.clone());
    lp.call_soon(move |lp| spin(lp, flag, count));
    lp.run();
    // Once the spinner gives up, the timer fires even in a loop that starves
    // it; only a timer that fired while the spinner was still going counts.
    assert!(
        timer_fired.get() && turns.get() < GIVE_UP_AFTER,
        "the timer did not fire while a callback kept rescheduling itself \
         ({} turns)",
        turns.get()
    );
}
