//! Step 3: timers.
//!
//! A callback can now ask to run *later*: `call_later(delay, callback)`. The
//! loop keeps those timers in a min-heap ordered by deadline, so the earliest
//! one is always on top. When no callback is ready, the loop asks the OS to
//! put the thread to sleep until that earliest deadline: waiting costs no CPU,
//! and any number of timers wait at once, which is why two sleeps scheduled
//! together take as long as the longer one, not the sum.
//!
//! `LOOP_TRACE=1 cargo run -p step03` makes the loop say, on stderr, what
//! each turn does. That code is in `trace.rs`, one call per phase of a
//! turn: a window onto the loop, not the lesson.

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use crate::trace::Trace;

mod trace;

// ANCHOR: callback
/// One piece of work: a closure that runs once and may schedule more work on
/// the loop it is given.
pub type Callback = Box<dyn FnOnce(&EventLoop)>;
// ANCHOR_END: callback

// ANCHOR: event_loop
/// A queue of callbacks ready to run, and a heap of callbacks waiting for
/// their deadline.
///
/// Callbacks schedule more callbacks *while the loop is running them*, so
/// they receive a shared `&EventLoop`, and the queues sit in `RefCell`s that
/// let a shared reference change them.
pub struct EventLoop {
    ready: RefCell<VecDeque<Callback>>,
    timers: RefCell<BinaryHeap<Timer>>,
    next_sequence: Cell<u64>,
    running: Cell<bool>,
    trace: Trace,
}

impl EventLoop {
    pub fn new() -> Self {
        EventLoop {
            ready: RefCell::new(VecDeque::new()),
            timers: RefCell::new(BinaryHeap::new()),
            next_sequence: Cell::new(0),
            running: Cell::new(false),
            trace: Trace::from_env(),
        }
    }

    /// Schedules `callback` to run after everything already in the queue.
    pub fn call_soon(&self, callback: impl FnOnce(&EventLoop) + 'static) {
        self.ready.borrow_mut().push_back(Box::new(callback));
    }
    // ANCHOR_END: event_loop

    // ANCHOR: call_later
    /// Schedules `callback` to run once `delay` has passed: never earlier,
    /// and as soon after as the loop gets to it.
    pub fn call_later(
        &self,
        delay: Duration,
        callback: impl FnOnce(&EventLoop) + 'static,
    ) {
        self.call_at(deadline_after(delay), callback);
    }

    // BUILD 1/5: chapter 3, "The idea"; test step03_timers::a_timer_scheduled_from_a_callback_counts_its_delay_from_then
    /// Schedules `callback` to run once the clock reaches `deadline`.
    /// Callbacks given the same deadline run in the order they were given.
    pub fn call_at(
        &self,
        deadline: Instant,
        callback: impl FnOnce(&EventLoop) + 'static,
    ) {
        let sequence = self.next_sequence.get();
        self.next_sequence.set(sequence + 1);
        self.timers.borrow_mut().push(Timer {
            deadline,
            sequence,
            callback: Box::new(callback),
        });
    }
    // ANCHOR_END: call_later

    // ANCHOR: run
    /// Runs until no callback is ready and no timer is waiting.
    ///
    /// Each turn sleeps (only when nothing is ready), moves every timer that
    /// is due onto the ready queue, then runs the callbacks that were ready.
    pub fn run(&self) {
        let _run = RunGuard::enter(self, "EventLoop::run");
        while self.has_work() {
            self.trace.turn_begins();
            if let Some(wait) = self.wait_time() {
                self.trace.waits(wait, || self.ready.borrow().len());
                std::thread::sleep(wait);
                self.trace.waited();
            }
            self.move_due_timers_to_ready();
            self.run_ready_callbacks();
        }
        self.trace.nothing_to_wait_for();
    }
    // ANCHOR_END: run

    fn has_work(&self) -> bool {
        !self.ready.borrow().is_empty() || !self.timers.borrow().is_empty()
    }

    // BUILD 3/5: chapter 3, "The idea"; test step03_timers::concurrent_sleeps_take_the_longest_not_the_sum
    // ANCHOR: wait_time
    /// How long the loop may wait for something to happen: not at all when a
    /// callback is ready, until the earliest deadline when a timer waits, and
    /// `None`, for ever, when there is neither.
    fn wait_time(&self) -> Option<Duration> {
        if !self.ready.borrow().is_empty() {
            return Some(Duration::ZERO);
        }
        let timers = self.timers.borrow();
        let earliest = timers.peek()?;
        // A deadline already passed (a late turn) gives zero: its timer is due now.
        Some(earliest.deadline.saturating_duration_since(Instant::now()))
    }
    // ANCHOR_END: wait_time

    // BUILD 4/5: chapter 3, "The idea"; test step03_timers::a_deadline_already_passed_fires_at_once_and_before_later_ones
    // ANCHOR: due_timers
    /// Moves every timer whose deadline has passed to the ready queue, earliest
    /// first; timers with equal deadlines keep the order they were scheduled in.
    /// A timer is due *at* its deadline: `deadline <= now`, one `now` for all.
    ///
    /// For `LOOP_TRACE`: `self.trace.timer_due(sequence, deadline)` for each
    /// timer moved.
    fn move_due_timers_to_ready(&self) {
        let now = Instant::now();
        let mut timers = self.timers.borrow_mut();
        let mut ready = self.ready.borrow_mut();
        while timers.peek().is_some_and(|timer| timer.deadline <= now) {
            let timer = timers.pop().expect("peek just saw this timer");
            self.trace.timer_due(timer.sequence, timer.deadline);
            ready.push_back(timer.callback);
        }
    }
    // ANCHOR_END: due_timers

    // BUILD 5/5: chapter 3, "The idea"; test step03_timers::a_callback_that_keeps_rescheduling_itself_does_not_starve_timers
    // ANCHOR: run_ready
    /// Runs the callbacks that are ready as this phase begins (timers that
    /// fell due this turn included). Callbacks they schedule wait for the
    /// next turn, so a callback that keeps rescheduling itself cannot keep
    /// timers from firing. Each comes off the queue before it runs: it may
    /// schedule more, which borrows the queue.
    ///
    /// For `LOOP_TRACE`: `self.trace.callback_begins()` and
    /// `self.trace.callback_ends()` around each callback, then
    /// `self.trace.ran(n)` with the number run.
    fn run_ready_callbacks(&self) {
        let ready_now = self.ready.borrow().len();
        for _ in 0..ready_now {
            let callback = self.ready.borrow_mut().pop_front().expect("counted");
            // The queue's borrow has ended: the callback may schedule more.
            self.trace.callback_begins();
            callback(self);
            self.trace.callback_ends();
        }
        self.trace.ran(ready_now);
    }
    // ANCHOR_END: run_ready
}

// ANCHOR: run_guard
/// Marks the loop as running for as long as it lives, and refuses to mark it
/// twice: a loop runs once at a time, as asyncio's does.
///
/// A `run` inside a callback would turn the loop in the middle of its own
/// turn, and run callbacks the outer turn has counted as its own; inside a
/// task (from step 5 on) it would take the task's wake-ups while the task
/// cannot be polled, and hang. So the second `run` is refused at once, with
/// a message that says why. Dropping the guard clears the mark, even when a
/// panic unwinds out of `run`, so the loop can be run again.
struct RunGuard<'a>(&'a Cell<bool>);

impl<'a> RunGuard<'a> {
    fn enter(lp: &'a EventLoop, caller: &str) -> Self {
        assert!(
            !lp.running.replace(true),
            "{caller} called while this loop is already running: hand it the \
             work instead (call_soon or call_later from a callback, spawn or \
             .await from a task)"
        );
        RunGuard(&lp.running)
    }
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}
// ANCHOR_END: run_guard

// ANCHOR: deadline_after
/// The instant `delay` from now. A delay longer than thirty years means
/// "practically never", as it does in tokio: it is cut to thirty years, so
/// even `Duration::MAX`, which no clock can add, makes a deadline, one that
/// sorts after every nearer deadline and never comes while anyone waits.
pub(crate) fn deadline_after(delay: Duration) -> Instant {
    Instant::now() + delay.min(PRACTICALLY_NEVER)
}

/// Thirty years, tokio's "far future".
const PRACTICALLY_NEVER: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);
// ANCHOR_END: deadline_after

// ANCHOR: timer
/// A callback waiting for its deadline.
///
/// `BinaryHeap` keeps its *largest* element on top, so the ordering is
/// reversed: the earliest deadline compares as the largest. The sequence
/// number breaks ties, so timers with equal deadlines fire in the order they
/// were scheduled.
struct Timer {
    deadline: Instant,
    sequence: u64,
    callback: Callback,
}

impl Ord for Timer {
    // BUILD 2/5: chapter 3, "The idea"; test step03_timers::many_timers_fire_in_deadline_order_with_ties_in_scheduling_order
    /// Orders timers for `BinaryHeap`, which keeps its *largest* element on
    /// top: the earlier deadline is the greater, and of two equal deadlines
    /// the smaller sequence number (the timer scheduled first).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.deadline, other.sequence).cmp(&(self.deadline, self.sequence))
    }
}
// ANCHOR_END: timer

impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Timer {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Timer {}

// ANCHOR: naive_sleep
/// The seeds' first sleep, kept for contrast: it schedules a callback that
/// checks the clock and, if the deadline has not come, schedules itself again.
/// The ready queue is never empty, so the loop never sleeps: it burns a whole
/// CPU core to wait. Use `call_later` instead.
pub fn naive_call_later(
    lp: &EventLoop,
    delay: Duration,
    callback: impl FnOnce(&EventLoop) + 'static,
) {
    check_clock(lp, deadline_after(delay), Box::new(callback));
}

fn check_clock(lp: &EventLoop, deadline: Instant, callback: Callback) {
    if Instant::now() >= deadline {
        callback(lp);
    } else {
        lp.call_soon(move |lp| check_clock(lp, deadline, callback));
    }
}
// ANCHOR_END: naive_sleep

impl fmt::Debug for EventLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventLoop")
            .field("ready", &self.ready.borrow().len())
            .field("timers", &self.timers.borrow().len())
            .finish_non_exhaustive()
    }
}
