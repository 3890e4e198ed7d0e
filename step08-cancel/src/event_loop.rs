//! The loop: a queue of ready callbacks, a heap of timers and the sockets on
//! one `mio::Poll`, as in step 4, and the tasks: `spawn` hands the loop a
//! future and returns its handle, and `block_on` turns the loop until one is
//! done. The free `spawn` and `join_all` do the same from inside a task.
//! Timers can be cancelled: `call_later` and `call_at` return a
//! `TimerHandle`.
//!
//! mio reports readiness *edges*: it says "this socket became readable" once,
//! not "this socket is readable" on every poll. So the rule for every
//! callback is: try the operation first, keep going until the OS answers
//! `WouldBlock`, and only then wait again.

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::io;
use std::panic;
use std::rc::{Rc, Weak};
use std::task::Waker;
use std::time::{Duration, Instant};

use mio::event::{Event, Source};
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use crate::join::{CancelOnDrop, JoinError, JoinHandle, forget_waiting_joins};
use crate::task::Tasks;
use crate::trace::Trace;
use crate::waker::WokenTasks;

// ANCHOR: callback
/// One piece of work: a closure that runs once and may schedule more work on
/// the loop it is given.
pub type Callback = Box<dyn FnOnce(&EventLoop)>;
// ANCHOR_END: callback

// ANCHOR: event_loop
/// A queue of callbacks ready to run, a heap of timers waiting for their
/// deadline (what each will do kept among the pending timers), callbacks
/// waiting for a socket to become ready, and the tasks, with the list of
/// those woken since the loop last looked.
///
/// Callbacks schedule more callbacks *while the loop is running them*, so
/// they receive a shared `&EventLoop`, and the queues sit in `RefCell`s that
/// let a shared reference change them.
pub struct EventLoop {
    ready: RefCell<VecDeque<Callback>>,
    timers: RefCell<BinaryHeap<Timer>>,
    pending_timers: Rc<RefCell<PendingTimers>>,
    running: Cell<bool>,
    poll: RefCell<Poll>,
    events: RefCell<Events>,
    io_waiters: RefCell<HashMap<Token, IoWaiters>>,
    next_token: Cell<usize>,
    pub(crate) trace: Trace,
    tasks: Tasks,
}

impl EventLoop {
    pub fn new() -> io::Result<Self> {
        let poll = Poll::new()?;
        let tasks = Tasks::new(WokenTasks::new(poll.registry(), WAKER_TOKEN)?);
        Ok(EventLoop {
            ready: RefCell::new(VecDeque::new()),
            timers: RefCell::new(BinaryHeap::new()),
            pending_timers: Rc::default(),
            running: Cell::new(false),
            poll: RefCell::new(poll),
            events: RefCell::new(Events::with_capacity(EVENTS_PER_POLL)),
            io_waiters: RefCell::new(HashMap::new()),
            next_token: Cell::new(0),
            trace: Trace::from_env(),
            tasks,
        })
    }

    /// Schedules `callback` to run after everything already in the queue.
    pub fn call_soon(&self, callback: impl FnOnce(&EventLoop) + 'static) {
        self.ready.borrow_mut().push_back(Box::new(callback));
    }
    // ANCHOR_END: event_loop

    // ANCHOR: call_later
    /// Schedules `callback` to run once `delay` has passed: never earlier,
    /// and as soon after as the loop gets to it. The handle it returns can
    /// cancel the timer; dropping the handle leaves the timer be.
    pub fn call_later(
        &self,
        delay: Duration,
        callback: impl FnOnce(&EventLoop) + 'static,
    ) -> TimerHandle {
        self.call_at(deadline_after(delay), callback)
    }

    /// Schedules `callback` to run once the clock reaches `deadline`.
    /// Callbacks given the same deadline run in the order they were given.
    pub fn call_at(
        &self,
        deadline: Instant,
        callback: impl FnOnce(&EventLoop) + 'static,
    ) -> TimerHandle {
        self.set_timer(deadline, TimerAction::Run(Box::new(callback)))
    }

    /// Wakes `waker` once the clock reaches `deadline`: a timer for a
    /// `Sleep`, with no callback to box.
    pub(crate) fn wake_at(&self, deadline: Instant, waker: Waker) -> TimerHandle {
        self.set_timer(deadline, TimerAction::Wake(waker))
    }

    fn set_timer(&self, deadline: Instant, action: TimerAction) -> TimerHandle {
        let id = self.pending_timers.borrow_mut().insert(action);
        self.timers.borrow_mut().push(Timer { deadline, id });
        TimerHandle {
            id,
            pending_timers: Rc::downgrade(&self.pending_timers),
        }
    }
    // ANCHOR_END: call_later

    // ANCHOR: register
    /// Hands `source` (a socket) to the OS poller, readable and writable, and
    /// returns the token that names it in `read_wait`, `write_wait` and
    /// `deregister`; the token gets its `IoWaiters`, empty.
    ///
    /// Tokens are never reused, so an event still in flight for a socket that
    /// was closed can never be taken for one that was opened later.
    pub fn register(&self, source: &mut impl Source) -> io::Result<Token> {
        let token = Token(self.next_token.get());
        self.next_token.set(token.0 + 1);
        let interest = Interest::READABLE | Interest::WRITABLE;
        self.poll
            .borrow()
            .registry()
            .register(source, token, interest)?;
        self.io_waiters
            .borrow_mut()
            .insert(token, IoWaiters::default());
        Ok(token)
    }

    /// Takes `source` away from the poller and drops any callbacks still
    /// waiting on it. Call it before the socket is closed.
    pub fn deregister(
        &self,
        source: &mut impl Source,
        token: Token,
    ) -> io::Result<()> {
        let waiters = self.io_waiters.borrow_mut().remove(&token);
        // Dropped only once the borrow has ended: a waiting callback may own
        // a socket whose own drop deregisters it, which borrows again.
        drop(waiters);
        self.poll.borrow().registry().deregister(source)
    }
    // ANCHOR_END: register

    // ANCHOR: read_wait
    /// Runs `callback` once the socket named `token` becomes readable (or
    /// closed, or failed: reading is how the callback finds out which).
    ///
    /// Readiness is an edge: call this only after a read said `WouldBlock`,
    /// or the data already waiting would never announce itself again.
    ///
    /// A callback already waiting to read is replaced, and dropped only
    /// once the borrow of the waiters has ended (as in `deregister`).
    pub fn read_wait(
        &self,
        token: Token,
        callback: impl FnOnce(&EventLoop) + 'static,
    ) {
        let replaced = self
            .waiters_for(token, |waiters| waiters.read.replace(Box::new(callback)));
        drop(replaced); // after the borrow, as in `deregister`
    }

    /// Runs `callback` once the socket named `token` has room to write. Call
    /// it only after a write said `WouldBlock`.
    pub fn write_wait(
        &self,
        token: Token,
        callback: impl FnOnce(&EventLoop) + 'static,
    ) {
        let replaced = self
            .waiters_for(token, |waiters| waiters.write.replace(Box::new(callback)));
        drop(replaced); // after the borrow, as in `deregister`
    }

    /// Drops the callback waiting for the socket named `token` to be ready
    /// for `interest` (readable, writable, or both), if one is: whoever left
    /// it has stopped waiting. A socket already deregistered has none.
    pub fn stop_waiting(&self, token: Token, interest: Interest) {
        let removed = self.io_waiters.borrow_mut().get_mut(&token).map(|waiters| {
            let read = interest.is_readable().then(|| waiters.read.take());
            let write = interest.is_writable().then(|| waiters.write.take());
            (read, write)
        });
        drop(removed); // after the borrow, as in `deregister`
    }
    // ANCHOR_END: read_wait

    fn waiters_for<R>(
        &self,
        token: Token,
        update: impl FnOnce(&mut IoWaiters) -> R,
    ) -> R {
        let mut io_waiters = self.io_waiters.borrow_mut();
        let waiters = io_waiters
            .get_mut(&token)
            .expect("read_wait and write_wait need a registered token");
        update(waiters)
    }

    // ANCHOR: run
    /// Runs until no callback is ready, no timer is waiting, no callback
    /// waits for a socket and no task has been woken. Tasks run under
    /// `block_on`, which turns the same loop until its task is done.
    pub fn run(&self) -> io::Result<()> {
        let _run = RunGuard::enter(self, "EventLoop::run");
        while self.has_work() {
            self.run_once()?;
        }
        self.trace.nothing_to_wait_for();
        Ok(())
    }

    /// One turn of the loop: takes cancelled timers off the heap, waits for
    /// I/O, but no longer than until the next deadline (and not at all when
    /// a callback is ready or a task was woken), moves the callbacks whose
    /// socket or deadline is ready onto the ready queue and runs them, then
    /// polls each woken task, those the callbacks just woke included.
    fn run_once(&self) -> io::Result<()> {
        self.trace.turn_begins();
        self.remove_cancelled_timers();
        let timeout = self.wait_time();
        if timeout != Some(Duration::ZERO) {
            self.never_wait_for_nothing()?;
        }
        self.wait_for_io(timeout)?;
        self.move_due_timers_to_ready();
        self.run_ready_callbacks();
        self.tasks.poll_woken(&self.trace);
        Ok(())
    }
    // ANCHOR_END: run

    /// Cancelled timers do not count: nothing would ever come of them.
    fn has_work(&self) -> bool {
        !self.ready.borrow().is_empty()
            || !self.pending_timers.borrow().is_empty()
            || self.io_waiters.borrow().values().any(IoWaiters::is_waiting)
            || self.tasks.any_woken()
    }

    // BUILD 1/5: chapter 8, "The idea"; test step08_timers::the_sweep_follows_asyncios_rule_more_than_100_and_more_than_half
    // ANCHOR: compaction
    /// Takes cancelled timers off the heap before the loop looks at it, as
    /// asyncio's `_run_once` does. Usually only those on top are popped: a
    /// cancelled timer further down costs nothing until it comes up. But
    /// when more than half of a heap of more than 100 timers are cancelled,
    /// the whole heap is swept and its spare memory given back, so timers
    /// set and cancelled by the thousand (timeouts that rarely fire) do not
    /// pile up until their far-off deadlines. A timer is cancelled when
    /// `pending_timers` no longer holds it.
    ///
    /// For `LOOP_TRACE`: `self.trace.swept(cancelled)` after a sweep, and
    /// `self.trace.timer_skipped()` for each cancelled timer popped.
    fn remove_cancelled_timers(&self) {
        let mut timers = self.timers.borrow_mut();
        let pending = self.pending_timers.borrow();
        let is_pending = |timer: &Timer| pending.contains(timer.id);
        let cancelled = timers.len() - pending.len();
        if timers.len() > SWEEP_ABOVE_TIMERS && cancelled * 2 > timers.len() {
            timers.retain(is_pending);
            timers.shrink_to_fit();
            self.trace.swept(cancelled);
        } else {
            while timers.peek().is_some_and(|timer| !is_pending(timer)) {
                timers.pop();
                self.trace.timer_skipped();
            }
        }
    }
    // ANCHOR_END: compaction

    // ANCHOR: wait_time
    /// How long the loop may wait for something to happen: not at all when a
    /// callback is ready or a task was woken, until the earliest deadline
    /// when a timer waits, and `None`, for ever, when there is neither.
    ///
    /// A task woken from another thread while the loop waits interrupts the
    /// wait through the `mio::Waker` of the tasks' `woken` list.
    fn wait_time(&self) -> Option<Duration> {
        if !self.ready.borrow().is_empty() || self.tasks.any_woken() {
            return Some(Duration::ZERO);
        }
        let timers = self.timers.borrow();
        let earliest = timers.peek()?;
        // A deadline already passed (a late turn) gives zero: its timer is due now.
        Some(earliest.deadline.saturating_duration_since(Instant::now()))
    }
    // ANCHOR_END: wait_time

    // ANCHOR: never_wait_for_nothing
    /// Called before a wait that nothing ready cuts short. While a timer
    /// is pending, it will end the wait; while a callback waits for a
    /// socket, the socket may still become ready; while some task's waker
    /// is held outside the loop, another thread may still wake it. With
    /// none of them, the wait would last for ever (or until a cancelled
    /// timer's deadline, for nothing): a lost wake-up, returned as an error
    /// instead (`block_on` passes it on). So is a task cancelled but never
    /// woken, once no timer is left: the loop might never come to drop it.
    fn never_wait_for_nothing(&self) -> io::Result<()> {
        if !self.pending_timers.borrow().is_empty() {
            return Ok(());
        }
        // Before the sockets: one may hold the waker of a task cancelled but
        // never woken, and never become ready.
        if let Some(lost) = self.tasks.cancelled_but_never_woken() {
            return Err(io::Error::other(lost));
        }
        if self.io_waiters.borrow().values().any(IoWaiters::is_waiting) {
            return Ok(());
        }
        match self.tasks.lost_wake_up() {
            Some(lost) => Err(io::Error::other(lost)),
            None => Ok(()),
        }
    }
    // ANCHOR_END: never_wait_for_nothing

    // ANCHOR: wait_for_io
    /// Blocks in the OS until a registered socket is ready or `timeout` runs
    /// out, then moves the callbacks waiting on each ready socket to the
    /// ready queue (`IoWaiters::take_ready`). A socket that is ready but has
    /// no callback waiting is skipped: its owner is busy and will try it
    /// again before waiting. So is the `WAKER_TOKEN` event: its only job was
    /// to end the wait. A wait that a signal cut short (`Interrupted`) just
    /// ends the turn.
    ///
    /// For `LOOP_TRACE`: `self.trace.waits(timeout, || …, || …)` before the
    /// wait, the closures counting the callbacks ready and saying whether a
    /// task was woken; `self.trace.waited()` after it; and
    /// `self.trace.socket_ready(event, …)` for each event of a registered
    /// socket, with whether a read and a write callback wait.
    fn wait_for_io(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.trace.waits(
            timeout,
            || self.ready.borrow().len(),
            || self.tasks.any_woken(),
        );
        let mut events = self.events.borrow_mut();
        match self.poll.borrow_mut().poll(&mut events, timeout) {
            Ok(()) => {}
            // A signal arrived while we slept: just start the next turn.
            Err(err) if err.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(err) => return Err(err),
        }
        self.trace.waited();
        let mut io_waiters = self.io_waiters.borrow_mut();
        let mut ready = self.ready.borrow_mut();
        for event in events.iter() {
            if let Some(waiters) = io_waiters.get_mut(&event.token()) {
                self.trace.socket_ready(
                    event,
                    waiters.read.is_some(),
                    waiters.write.is_some(),
                );
                ready.extend(waiters.take_ready(event));
            }
        }
        Ok(())
    }
    // ANCHOR_END: wait_for_io

    // ANCHOR: due_timers
    /// Moves the callback of every timer whose deadline has passed to the
    /// ready queue, earliest first, and wakes the task of every due `Sleep`;
    /// timers with equal deadlines keep the order they were scheduled in.
    fn move_due_timers_to_ready(&self) {
        let now = Instant::now();
        while let Some(action) = self.pop_due_timer(now) {
            match action {
                TimerAction::Run(callback) => {
                    self.ready.borrow_mut().push_back(callback);
                }
                // No borrow is held: a waker is anyone's code, and may use
                // the loop.
                TimerAction::Wake(waker) => waker.wake(),
            }
        }
    }

    /// Takes the earliest timer off the heap if its deadline has passed, and
    /// its action out of the pending timers. A cancelled one met on the way
    /// is simply dropped.
    fn pop_due_timer(&self, now: Instant) -> Option<TimerAction> {
        let mut timers = self.timers.borrow_mut();
        while timers.peek().is_some_and(|timer| timer.deadline <= now) {
            let timer = timers.pop().expect("peek just saw this timer");
            if let Some(action) = self.pending_timers.borrow_mut().take(timer.id) {
                let runs_callback = matches!(action, TimerAction::Run(_));
                self.trace.timer_due(
                    timer.id.sequence,
                    timer.deadline,
                    runs_callback,
                );
                return Some(action);
            }
            self.trace.timer_skipped();
        }
        None
    }
    // ANCHOR_END: due_timers

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

// ANCHOR: loop_spawn
impl EventLoop {
    /// Turns `future` into a task on this loop: the loop polls it for the
    /// first time on its next turn. asyncio's `loop.create_task`. Returns the
    /// handle that joins the task; dropping the handle lets the task run on.
    ///
    /// From inside a task, the free function `spawn` does the same on the
    /// running loop.
    #[track_caller]
    pub fn spawn<T: 'static>(
        &self,
        future: impl Future<Output = T> + 'static,
    ) -> JoinHandle<T> {
        self.tasks.spawn(future)
    }
    // ANCHOR_END: loop_spawn

    // ANCHOR: block_on
    /// Runs the loop until `future` is done and returns what it returned;
    /// if it panicked, the panic carries on from here. asyncio's
    /// `asyncio.run`.
    ///
    /// `future` runs as a task beside any others, and only it decides when
    /// this returns. Tasks still running then are background work: they are
    /// dropped (asyncio cancels them), so their destructors run, and nothing
    /// they were waiting for keeps the loop turning. Their handles give
    /// `JoinError::Cancelled`, or `Panicked` if a destructor panicked.
    ///
    /// While it runs, this loop is the thread's running loop, which is how
    /// `sleep` and `spawn` find it; that is why the loop must be shared as
    /// an `Rc` here.
    #[track_caller]
    pub fn block_on<T: 'static>(
        self: &Rc<Self>,
        future: impl Future<Output = T> + 'static,
    ) -> io::Result<T> {
        let _running = RunningLoop::enter(self);
        let _run = RunGuard::enter(self, "EventLoop::block_on");
        let mut main = self.spawn(future);
        let outcome = loop {
            if let Some(outcome) = main.take_outcome() {
                break Ok(outcome);
            }
            if let Err(err) = self.run_once() {
                break Err(err); // a lost wake-up, or the OS's poll failed
            }
        };
        // While this is still the running loop, for the tasks' destructors.
        self.tasks.drop_all();
        match outcome? {
            Ok(value) => Ok(value),
            Err(JoinError::Panicked(panic)) => panic::resume_unwind(panic),
            // Only block_on holds its task's handle, and it never cancels:
            // the task was dropped unfinished, which the loop must not do.
            Err(JoinError::Cancelled) => panic!(
                "block_on's task was dropped before it finished: is a pending \
                 task kept for its next poll?"
            ),
        }
    }
    // ANCHOR_END: block_on
}

// ANCHOR: running_loop
thread_local! {
    /// The loop `block_on` is running on this thread, if any.
    static RUNNING_LOOP: RefCell<Option<Rc<EventLoop>>> =
        const { RefCell::new(None) };
}

/// The loop `block_on` is running on this thread: how a future such as
/// `sleep`, or a task calling `spawn`, reaches the loop without being
/// handed it. asyncio's `get_running_loop`.
///
/// Futures ask for it when they are polled and do not keep it, so the loop
/// never owns a future that owns the loop: dropping the loop drops every
/// task it holds.
pub(crate) fn running_loop() -> Rc<EventLoop> {
    RUNNING_LOOP
        .with_borrow(Option::clone)
        .expect("no event loop is running on this thread: await inside block_on")
}

/// Makes a loop the running loop until it is dropped.
///
/// One at a time: a `block_on` inside a task would turn the loop under the
/// task that called it, which cannot be polled (it is being polled), so its
/// wake-ups would be used up and lost. A task awaits instead.
struct RunningLoop;

impl RunningLoop {
    fn enter(lp: &Rc<EventLoop>) -> Self {
        RUNNING_LOOP.with_borrow_mut(|running| {
            assert!(
                running.is_none(),
                "block_on called inside block_on: a task must .await instead"
            );
            *running = Some(Rc::clone(lp));
        });
        RunningLoop
    }
}

impl Drop for RunningLoop {
    fn drop(&mut self) {
        RUNNING_LOOP.take();
        forget_waiting_joins(); // they were this loop's
    }
}
// ANCHOR_END: running_loop

// ANCHOR: spawn_fn
/// Starts `future` as a task on the running loop and returns its handle:
/// how a task starts a child. asyncio's `asyncio.create_task`.
#[track_caller]
pub fn spawn<T: 'static>(
    future: impl Future<Output = T> + 'static,
) -> JoinHandle<T> {
    running_loop().spawn(future)
}
// ANCHOR_END: spawn_fn

// ANCHOR: join_all
/// Runs each of `futures` as a task of its own and waits for them all;
/// returns their outcomes in the order given, whichever order they ended
/// in. asyncio's `gather`, seed 002's `TaskGroup`.
///
/// The handles are awaited one after another, yet the whole takes only as
/// long as the slowest task: every task runs from the start, and a handle
/// whose task has ended already returns at once.
///
/// Dropped before it is done (under a timeout, say), it cancels the tasks
/// still running, as asyncio's `gather` does when it is cancelled: the
/// handles it holds are `CancelOnDrop`.
pub async fn join_all<F>(
    futures: impl IntoIterator<Item = F>,
) -> Vec<Result<F::Output, JoinError>>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let handles: Vec<CancelOnDrop<F::Output>> = futures
        .into_iter()
        .map(|future| spawn(future).cancel_on_drop())
        .collect();
    let mut outcomes = Vec::with_capacity(handles.len());
    for handle in handles {
        outcomes.push(handle.await);
    }
    outcomes
}
// ANCHOR_END: join_all

// ANCHOR: timer
/// When a timer is due, and which timer it is; what it does waits in the
/// pending timers, under its id.
///
/// `BinaryHeap` keeps its *largest* element on top, so the ordering is
/// reversed: the earliest deadline compares as the largest. The sequence
/// number breaks ties, so timers with equal deadlines fire in the order they
/// were scheduled.
struct Timer {
    deadline: Instant,
    id: TimerId,
}

impl Ord for Timer {
    /// Orders timers for `BinaryHeap`, which keeps its *largest* element on
    /// top: the earlier deadline is the greater, and of two equal deadlines
    /// the smaller sequence number (the timer scheduled first).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.deadline, other.id.sequence).cmp(&(self.deadline, self.id.sequence))
    }
}

/// What a timer does at its deadline: run a callback, or wake the task
/// of a `Sleep`.
enum TimerAction {
    Run(Callback),
    Wake(Waker),
}

/// The timers that have neither fired nor been cancelled: what each will
/// do, by id. Firing or cancelling a timer takes its action out, so a timer
/// in the heap that is not pending here is a cancelled one.
///
/// A `Slab` is a `Vec` that reuses the places freed in it, so a timer is
/// found by its index at once, and timers set and cancelled by the million
/// take no more room than the most that were ever pending at one time. A
/// freed place is reused, its index with it, so an id also holds the
/// timer's sequence number, which is never reused: an id whose place holds
/// another number names a timer that is gone.
#[derive(Default)]
struct PendingTimers {
    actions: Slab<(u64, TimerAction)>,
    next_sequence: u64,
}

/// Which timer: its place among the pending timers, and its sequence number.
#[derive(Clone, Copy)]
struct TimerId {
    sequence: u64,
    index: usize,
}

impl PendingTimers {
    fn insert(&mut self, action: TimerAction) -> TimerId {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        let index = self.actions.insert((sequence, action));
        TimerId { sequence, index }
    }

    fn contains(&self, id: TimerId) -> bool {
        self.actions
            .get(id.index)
            .is_some_and(|&(sequence, _)| sequence == id.sequence)
    }

    /// Takes out what timer `id` would do, if it is still pending.
    fn take(&mut self, id: TimerId) -> Option<TimerAction> {
        self.contains(id).then(|| self.actions.remove(id.index).1)
    }
}
// ANCHOR_END: timer

// ANCHOR: timer_cancel
/// What `call_later` and `call_at` return: the way to cancel a timer before
/// it fires. asyncio's `TimerHandle`.
///
/// Cancelling takes the timer's callback (or waker) out of the pending
/// timers and drops it at once, so whatever it captured is freed now, and
/// leaves the heap alone: the timer is skipped when it reaches the top, or
/// swept away with the others. A handle never touches the heap, so a timer
/// can be cancelled from anywhere, even from a destructor that runs while
/// the loop is busy. It holds the pending timers weakly: a callback may
/// hold a handle, and a loop that is gone has no timer left to cancel.
pub struct TimerHandle {
    id: TimerId,
    pending_timers: Weak<RefCell<PendingTimers>>,
}

impl TimerHandle {
    // BUILD 2/5: chapter 8, "The idea"; test step08_timers::a_cancelled_timer_never_fires_and_the_loop_does_not_wait_for_it
    /// Cancels the timer. Says whether it did: `false` when the timer has
    /// fired or been cancelled already, or its loop is gone.
    ///
    /// Its action comes out of the pending timers, and is dropped only once
    /// that borrow has ended: a callback's destructors may use the loop.
    pub fn cancel(&self) -> bool {
        let Some(pending_timers) = self.pending_timers.upgrade() else {
            return false;
        };
        let action = pending_timers.borrow_mut().take(self.id);
        let cancelled = action.is_some();
        drop(action); // no borrow is held: its destructors may use the loop
        cancelled
    }
}
// ANCHOR_END: timer_cancel

/// When to sweep the heap: when it holds more than 100 timers and more than
/// half of them are cancelled. These are asyncio's numbers
/// (`_MIN_SCHEDULED_TIMER_HANDLES` and `_MIN_CANCELLED_TIMER_HANDLES_FRACTION`
/// in the Python standard library's `asyncio/base_events.py`). A sweep looks
/// at every timer, but as more than half are cancelled it removes at least
/// one for every two it looks at; under 100 timers, popping the cancelled
/// ones as they come up is cheap enough.
const SWEEP_ABOVE_TIMERS: usize = 100;

/// How many readiness events one call to `poll` can return. More than this
/// simply wait for the next turn.
const EVENTS_PER_POLL: usize = 1024;

/// The token of the loop's `mio::Waker`. `register` counts up from zero, so
/// no socket ever gets this one.
const WAKER_TOKEN: Token = Token(usize::MAX);

// ANCHOR: io_waiters
/// The callbacks waiting on one socket: at most one for reading and one for
/// writing, like the seeds' `read_waiting` and `write_waiting` dictionaries.
#[derive(Default)]
struct IoWaiters {
    read: Option<Callback>,
    write: Option<Callback>,
}

impl IoWaiters {
    fn is_waiting(&self) -> bool {
        self.read.is_some() || self.write.is_some()
    }

    /// Takes the callbacks that `event` makes ready. A closed or failed
    /// socket wakes both sides, so each finds out when it tries.
    fn take_ready(&mut self, event: &Event) -> impl Iterator<Item = Callback> {
        let failed = event.is_error();
        let read = if event.is_readable() || event.is_read_closed() || failed {
            self.read.take()
        } else {
            None
        };
        let write = if event.is_writable() || event.is_write_closed() || failed {
            self.write.take()
        } else {
            None
        };
        read.into_iter().chain(write)
    }
}
// ANCHOR_END: io_waiters

// ---------------------------------------------------------------------------
// Plumbing: not the lesson. The rest of `Timer`'s ordering, which `Ord`
// requires; the hooks that let tests and the demo count sockets and
// timers; and the `Debug` impls, for printing. A reader may stop here.
// ---------------------------------------------------------------------------

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

impl PendingTimers {
    fn len(&self) -> usize {
        self.actions.len()
    }

    fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }
}

impl EventLoop {
    /// How many sockets are registered: each one open, and watched by the
    /// poller. A socket leaves when it is dropped, so this is how a test or
    /// a demo sees that a cancelled task closed what it held.
    pub fn registered_sockets(&self) -> usize {
        self.io_waiters.borrow().len()
    }

    /// The timer heap's length and capacity, cancelled timers included: how
    /// the tests check that cancelled timers do not pile up. Not part of
    /// the lesson.
    #[doc(hidden)]
    pub fn timer_heap_size(&self) -> (usize, usize) {
        let timers = self.timers.borrow();
        (timers.len(), timers.capacity())
    }
}

impl TimerHandle {
    /// Whether the timer is pending and wakes `waker` (or one that wakes
    /// the same task): a `Sleep` polled again asks this instead of keeping
    /// a waker of its own.
    pub(crate) fn wakes(&self, waker: &Waker) -> bool {
        self.pending_timers.upgrade().is_some_and(|pending| {
            let pending = pending.borrow();
            pending.contains(self.id)
                && matches!(
                    &pending.actions[self.id.index].1,
                    TimerAction::Wake(set_for) if set_for.will_wake(waker)
                )
        })
    }

    fn is_pending(&self) -> bool {
        self.pending_timers
            .upgrade()
            .is_some_and(|pending| pending.borrow().contains(self.id))
    }
}

impl fmt::Debug for TimerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerHandle")
            .field("pending", &self.is_pending())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for EventLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventLoop")
            .field("ready", &self.ready.borrow().len())
            .field("timers", &self.timers.borrow().len())
            .field("sockets", &self.io_waiters.borrow().len())
            .field("tasks", &self.tasks.len())
            .finish_non_exhaustive()
    }
}
