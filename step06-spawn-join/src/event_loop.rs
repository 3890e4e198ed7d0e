//! The loop: a queue of ready callbacks, a heap of timers and the sockets on
//! one `mio::Poll`, as in step 4, and the tasks: `spawn` hands the loop a
//! future and returns its handle, and `block_on` turns the loop until one is
//! done. The free `spawn` and `join_all` do the same from inside a task.
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
use std::rc::Rc;
use std::time::{Duration, Instant};

use mio::event::{Event, Source};
use mio::{Events, Interest, Poll, Token};

use crate::join::{JoinError, JoinHandle, forget_waiting_joins};
use crate::task::Tasks;
use crate::trace::Trace;
use crate::waker::WokenTasks;

// ANCHOR: callback
/// One piece of work: a closure that runs once and may schedule more work on
/// the loop it is given.
pub type Callback = Box<dyn FnOnce(&EventLoop)>;
// ANCHOR_END: callback

// ANCHOR: event_loop
/// A queue of callbacks ready to run, a heap of callbacks waiting for their
/// deadline, callbacks waiting for a socket to become ready, and the tasks,
/// with the list of those woken since the loop last looked.
///
/// Callbacks schedule more callbacks *while the loop is running them*, so
/// they receive a shared `&EventLoop`, and the queues sit in `RefCell`s that
/// let a shared reference change them.
pub struct EventLoop {
    ready: RefCell<VecDeque<Callback>>,
    timers: RefCell<BinaryHeap<Timer>>,
    next_sequence: Cell<u64>,
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
            next_sequence: Cell::new(0),
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
    /// and as soon after as the loop gets to it.
    pub fn call_later(
        &self,
        delay: Duration,
        callback: impl FnOnce(&EventLoop) + 'static,
    ) {
        self.call_at(deadline_after(delay), callback);
    }

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

    /// One turn of the loop: waits for I/O, but no longer than until the
    /// next deadline (and not at all when a callback is ready or a task was
    /// woken), moves the callbacks whose socket or deadline is ready onto the
    /// ready queue and runs them, then polls each woken task, those the
    /// callbacks just woke included.
    fn run_once(&self) -> io::Result<()> {
        self.trace.turn_begins();
        let timeout = self.wait_time();
        if timeout.is_none() {
            self.never_wait_for_nothing()?;
        }
        self.wait_for_io(timeout)?;
        self.move_due_timers_to_ready();
        self.run_ready_callbacks();
        self.tasks.poll_woken(&self.trace);
        Ok(())
    }
    // ANCHOR_END: run

    fn has_work(&self) -> bool {
        !self.ready.borrow().is_empty()
            || !self.timers.borrow().is_empty()
            || self.io_waiters.borrow().values().any(IoWaiters::is_waiting)
            || self.tasks.any_woken()
    }

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
    /// Called before a wait with no deadline. While a callback waits for a
    /// socket, the socket may still become ready; while some task's waker
    /// is held outside the loop, another thread may still wake it. With
    /// neither, the wait would last for ever: a lost wake-up, returned as
    /// an error instead (`block_on` passes it on).
    fn never_wait_for_nothing(&self) -> io::Result<()> {
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
/// Dropped before it is done (under a timeout, say), it drops the handles
/// it holds, and that detaches their tasks: they run on, as tokio's do.
/// asyncio's `gather` would cancel them; this step cannot cancel yet.
pub async fn join_all<F>(
    futures: impl IntoIterator<Item = F>,
) -> Vec<Result<F::Output, JoinError>>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let handles: Vec<JoinHandle<F::Output>> =
        futures.into_iter().map(spawn).collect();
    let mut outcomes = Vec::with_capacity(handles.len());
    for handle in handles {
        outcomes.push(handle.await);
    }
    outcomes
}
// ANCHOR_END: join_all

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
    /// Orders timers for `BinaryHeap`, which keeps its *largest* element on
    /// top: the earlier deadline is the greater, and of two equal deadlines
    /// the smaller sequence number (the timer scheduled first).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.deadline, other.sequence).cmp(&(self.deadline, self.sequence))
    }
}
// ANCHOR_END: timer

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
// requires, and the loop's `Debug`, for printing it. A reader may stop here.
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
