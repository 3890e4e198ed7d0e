//! The loop: ready callbacks, the timing wheel, the sockets on one
//! `mio::Poll`, and the task table. One turn: wait for I/O no longer than
//! until the wheel's next tick (not at all when work is ready), advance
//! the wheel, run the ready callbacks, poll the woken tasks, and those
//! they wake, up to `POLLS_PER_TURN` polls.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::io;
use std::panic;
use std::rc::{Rc, Weak};
use std::task::Waker;
use std::time::{Duration, Instant};

use mio::event::{Event, Source};
use mio::{Events, Interest, Poll, Token};

use crate::join::{JoinError, JoinHandle};
use crate::lost_wake_up::SpawnedAt;
use crate::reactor::Direction;
use crate::task::Tasks;
use crate::wheel::{Due, TICK_NS, TimerKey, Wheel};

mod id_hash;
mod running;
mod tick_timer;

use id_hash::IdentityHash;
pub(crate) use running::running_loop;
use running::{RunGuard, RunningLoop};
pub use running::{join_all, spawn};
use tick_timer::TickTimer;

/// One piece of work: a closure that runs once on the loop it is given.
pub type Callback = Box<dyn FnOnce(&EventLoop)>;

/// A single-threaded event loop: callbacks, timers, sockets and tasks.
pub struct EventLoop {
    ready: RefCell<VecDeque<Callback>>,
    timers: Rc<RefCell<Wheel<TimerAction>>>,
    /// The timers that fell due this turn, kept so its memory is reused.
    due: RefCell<Vec<Due<TimerAction>>>,
    /// The wakers of the sockets ready this turn, woken once the waiters'
    /// borrow has ended; kept for its memory too.
    io_woken: RefCell<Vec<Waker>>,
    epoch: Instant,
    running: Cell<bool>,
    poll: RefCell<Poll>,
    events: RefCell<Events>,
    io_waiters: RefCell<HashMap<Token, IoWaiters, IdentityHash>>,
    next_token: Cell<usize>,
    tasks: Rc<Tasks>,
    tick_timer: TickTimer,
}

impl EventLoop {
    pub fn new() -> io::Result<Self> {
        let poll = Poll::new()?;
        let tasks = Tasks::new(poll.registry(), WAKER_TOKEN)?;
        let tick_timer = TickTimer::new(poll.registry(), TICK_TOKEN)?;
        Ok(EventLoop {
            ready: RefCell::new(VecDeque::new()),
            timers: Rc::new(RefCell::new(Wheel::new())),
            due: RefCell::new(Vec::new()),
            io_woken: RefCell::new(Vec::new()),
            epoch: Instant::now(),
            running: Cell::new(false),
            poll: RefCell::new(poll),
            events: RefCell::new(Events::with_capacity(EVENTS_PER_POLL)),
            io_waiters: RefCell::new(HashMap::default()),
            next_token: Cell::new(0),
            tasks: Rc::new(tasks),
            tick_timer,
        })
    }

    /// Schedules `callback` to run after everything already in the queue.
    pub fn call_soon(&self, callback: impl FnOnce(&EventLoop) + 'static) {
        self.ready.borrow_mut().push_back(Box::new(callback));
    }

    /// Schedules `callback` to run once `delay` has passed: never earlier.
    /// The handle it returns cancels the timer; dropping it does not.
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

    /// Wakes `waker` at `deadline`: a `Sleep`'s timer, nothing boxed.
    pub(crate) fn wake_at(&self, deadline: Instant, waker: Waker) -> TimerHandle {
        self.set_timer(deadline, TimerAction::Wake(waker))
    }

    fn set_timer(&self, deadline: Instant, action: TimerAction) -> TimerHandle {
        let mut timers = self.timers.borrow_mut();
        if timers.is_empty() {
            // An empty wheel is left where it was (`fire_due_timers`):
            // brought to now, it places this timer from here, not from a
            // tick long past, which would cost cascades. Nothing is due.
            let now_tick = self.ns(Instant::now()) / TICK_NS;
            timers.advance(now_tick, &mut Vec::new());
        }
        let key = timers.insert(self.ns(deadline), action);
        drop(timers);
        TimerHandle {
            key,
            timers: Rc::downgrade(&self.timers),
        }
    }

    /// `instant` in ns since the loop was made; 0 for an instant before.
    fn ns(&self, instant: Instant) -> u64 {
        let since = instant.saturating_duration_since(self.epoch);
        u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
    }

    /// Hands `source` to the poller, readable and writable; its token names
    /// it to `read_wait`, `write_wait` and `deregister`. Never reused.
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

    /// Takes `source` off the poller and drops the callbacks waiting on it.
    pub fn deregister(
        &self,
        source: &mut impl Source,
        token: Token,
    ) -> io::Result<()> {
        let waiters = self.io_waiters.borrow_mut().remove(&token);
        drop(waiters); // after the borrow: a callback's drop may deregister
        self.poll.borrow().registry().deregister(source)
    }

    /// Runs `callback` once the socket `token` is readable (or closed, or
    /// failed). Call it after a read said `WouldBlock`: readiness is an edge.
    pub fn read_wait(
        &self,
        token: Token,
        callback: impl FnOnce(&EventLoop) + 'static,
    ) {
        let callback = Waiter::Run(Box::new(callback));
        let replaced =
            self.waiters_for(token, |waiters| waiters.read.replace(callback));
        drop(replaced);
    }

    /// Runs `callback` once the socket `token` has room to write.
    pub fn write_wait(
        &self,
        token: Token,
        callback: impl FnOnce(&EventLoop) + 'static,
    ) {
        let callback = Waiter::Run(Box::new(callback));
        let replaced =
            self.waiters_for(token, |waiters| waiters.write.replace(callback));
        drop(replaced);
    }

    /// Leaves `waker` to be woken when the socket `token` is ready in
    /// `direction`: a task's wait, with no callback to box. A waker that
    /// wakes the same task is left in place, not cloned again.
    pub(crate) fn wake_when_ready(
        &self,
        token: Token,
        direction: Direction,
        waker: &Waker,
    ) {
        let replaced = self.waiters_for(token, |waiters| {
            let waiter = match direction {
                Direction::Read => &mut waiters.read,
                Direction::Write => &mut waiters.write,
            };
            match waiter {
                Some(Waiter::Wake(waiting)) if waiting.will_wake(waker) => None,
                waiter => waiter.replace(Waiter::Wake(waker.clone())),
            }
        });
        drop(replaced);
    }

    /// Drops the callback waiting on `token` for `interest`, if any.
    pub fn stop_waiting(&self, token: Token, interest: Interest) {
        let removed = self.io_waiters.borrow_mut().get_mut(&token).map(|waiters| {
            let read = interest.is_readable().then(|| waiters.read.take());
            let write = interest.is_writable().then(|| waiters.write.take());
            (read, write)
        });
        drop(removed);
    }

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

    /// Runs until nothing is left: no ready callback, no timer, no socket
    /// waited on, no woken task.
    pub fn run(&self) -> io::Result<()> {
        let _run = RunGuard::enter(self, "EventLoop::run");
        while self.has_work() {
            self.run_once()?;
        }
        Ok(())
    }

    fn run_once(&self) -> io::Result<()> {
        let wait = self.wait_time();
        let timeout = match wait {
            Wait::Not => Some(Duration::ZERO),
            Wait::UntilTick { at_ns, after } => {
                self.never_wait_for_nothing()?;
                self.tick_timer.set(at_ns, after)?;
                Some(after)
            }
            Wait::ForEver => {
                self.never_wait_for_nothing()?;
                None
            }
        };
        self.wait_for_io(timeout)?;
        self.fire_due_timers();
        self.run_ready_callbacks();
        self.poll_woken_tasks();
        Ok(())
    }

    /// Polls the tasks woken before this phase, then those they woke, and
    /// so on, until none is woken, a callback is ready, or the turn has
    /// made `POLLS_PER_TURN` polls. Tasks that wake each other (`yield_now`,
    /// a join, a channel) go on without a system call and a clock reading
    /// between each poll, yet cannot keep sockets and timers waiting
    /// longer than that many polls.
    fn poll_woken_tasks(&self) {
        let mut polled = self.tasks.poll_woken();
        while polled < POLLS_PER_TURN
            && self.tasks.any_woken()
            && self.ready.borrow().is_empty()
        {
            polled += self.tasks.poll_woken();
        }
    }

    fn has_work(&self) -> bool {
        !self.ready.borrow().is_empty()
            || !self.timers.borrow().is_empty()
            || self.io_waiters.borrow().values().any(IoWaiters::is_waiting)
            || self.tasks.any_woken()
    }

    /// Not at all when work is ready; else until the wheel's next tick;
    /// else for ever. The wait never ends before the tick's instant: mio
    /// rounds its timeout up to whole milliseconds, and the tick timer
    /// (`tick_timer.rs`) goes off at the instant, not before.
    fn wait_time(&self) -> Wait {
        if !self.ready.borrow().is_empty() || self.tasks.any_woken() {
            return Wait::Not;
        }
        let Some(next) = self.timers.borrow().next_tick() else {
            return Wait::ForEver;
        };
        let at_ns = next.saturating_mul(TICK_NS);
        match at_ns.saturating_sub(self.ns(Instant::now())) {
            0 => Wait::Not,
            after => Wait::UntilTick {
                at_ns,
                after: Duration::from_nanos(after),
            },
        }
    }

    /// Before a wait that no timer will end: if no socket is waited on
    /// and no task's waker is held outside the loop, nothing can ever
    /// wake a task again. An error then, not a wait for ever.
    fn never_wait_for_nothing(&self) -> io::Result<()> {
        if !self.timers.borrow().is_empty()
            || self.io_waiters.borrow().values().any(IoWaiters::is_waiting)
        {
            return Ok(());
        }
        match self.tasks.lost_wake_up() {
            Some(lost) => Err(io::Error::other(lost)),
            None => Ok(()),
        }
    }

    fn wait_for_io(&self, timeout: Option<Duration>) -> io::Result<()> {
        let mut events = self.events.borrow_mut();
        match self.poll.borrow_mut().poll(&mut events, timeout) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(err) => return Err(err),
        }
        if events.is_empty() {
            return Ok(());
        }
        let mut woken = self.io_woken.take();
        {
            let mut io_waiters = self.io_waiters.borrow_mut();
            let mut ready = self.ready.borrow_mut();
            for event in &*events {
                if let Some(waiters) = io_waiters.get_mut(&event.token()) {
                    for waiter in waiters.take_ready(event) {
                        match waiter {
                            Waiter::Run(callback) => ready.push_back(callback),
                            Waiter::Wake(waker) => woken.push(waker),
                        }
                    }
                }
            }
        }
        // No borrow is held: a waker is anyone's code, and may use the loop.
        for waker in woken.drain(..) {
            waker.wake();
        }
        self.io_woken.replace(woken);
        Ok(())
    }

    /// Advances the wheel to now: each due timer's callback goes to the
    /// ready queue and each due sleep's waker is woken, by deadline.
    fn fire_due_timers(&self) {
        if self.timers.borrow().is_empty() {
            return; // no clock reading for a loop without timers
        }
        let mut due = self.due.take();
        let now_tick = self.ns(Instant::now()) / TICK_NS;
        self.timers.borrow_mut().advance(now_tick, &mut due);
        for (_, _, action) in due.drain(..) {
            match action {
                TimerAction::Run(callback) => {
                    self.ready.borrow_mut().push_back(callback);
                }
                TimerAction::Wake(waker) => waker.wake(),
            }
        }
        self.due.replace(due);
    }

    /// Runs the callbacks ready as this phase begins; those they schedule
    /// wait for the next turn.
    fn run_ready_callbacks(&self) {
        let ready_now = self.ready.borrow().len();
        for _ in 0..ready_now {
            let callback = self.ready.borrow_mut().pop_front().expect("counted");
            callback(self);
        }
    }

    /// Turns `future` into a task, polled first on the loop's next turn.
    #[track_caller]
    pub fn spawn<T: 'static>(
        &self,
        future: impl Future<Output = T> + 'static,
    ) -> JoinHandle<T> {
        self.tasks.spawn(future, SpawnedAt::here())
    }

    /// Runs the loop until `future` is done and returns its value; its
    /// panic carries on from here. Tasks left running are dropped.
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
                break Err(err);
            }
        };
        self.tasks.drop_all();
        match outcome? {
            Ok(value) => Ok(value),
            Err(JoinError::Panicked(panic)) => panic::resume_unwind(panic),
            Err(JoinError::Cancelled) => {
                panic!("block_on's task was dropped before it finished")
            }
        }
    }

    /// How many sockets are registered.
    pub fn registered_sockets(&self) -> usize {
        self.io_waiters.borrow().len()
    }

    /// The timers set and not yet fired nor cancelled, and the places the
    /// wheel's table has for them. Cancelled timers leave at once.
    #[doc(hidden)]
    pub fn timer_heap_size(&self) -> (usize, usize) {
        let timers = self.timers.borrow();
        (timers.len(), timers.capacity())
    }

    /// How many times the socket `token` was reported readable; `None`
    /// once reported closed, or for a token unknown.
    pub(crate) fn readable_edges(&self, token: Token) -> Option<u64> {
        let io_waiters = self.io_waiters.borrow();
        let edges = &io_waiters.get(&token)?.readable_edges;
        (!edges.closed).then_some(edges.count)
    }
}

/// The instant `delay` from now, cut to thirty years ("practically never").
pub(crate) fn deadline_after(delay: Duration) -> Instant {
    Instant::now() + delay.min(PRACTICALLY_NEVER)
}

const PRACTICALLY_NEVER: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

/// How long a turn waits for I/O.
enum Wait {
    Not,
    /// Until `at_ns` (since the loop's epoch), `after` from now.
    UntilTick {
        at_ns: u64,
        after: Duration,
    },
    ForEver,
}

/// What a timer does when it fires.
enum TimerAction {
    Run(Callback),
    Wake(Waker),
}

/// Cancels a timer before it fires. Holds the wheel weakly: a loop that is
/// gone has no timer to cancel.
pub struct TimerHandle {
    key: TimerKey,
    timers: Weak<RefCell<Wheel<TimerAction>>>,
}

impl TimerHandle {
    /// Cancels the timer, in O(1); `false` if it fired or was cancelled
    /// already, or its loop is gone. What it captured is dropped now.
    pub fn cancel(&self) -> bool {
        let Some(timers) = self.timers.upgrade() else {
            return false;
        };
        let action = timers.borrow_mut().remove(self.key);
        let cancelled = action.is_some();
        drop(action); // after the borrow: its destructors may use the loop
        cancelled
    }

    /// Whether the timer is set and wakes `waker` (or one that wakes the
    /// same task).
    pub(crate) fn wakes(&self, waker: &Waker) -> bool {
        self.timers.upgrade().is_some_and(|timers| {
            matches!(
                timers.borrow().get(self.key),
                Some(TimerAction::Wake(set_for)) if set_for.will_wake(waker)
            )
        })
    }

    /// Whether the timer fired (or was cancelled); `false` once the loop
    /// is gone.
    pub(crate) fn has_fired(&self) -> bool {
        self.pending() == Some(false)
    }

    fn pending(&self) -> Option<bool> {
        Some(self.timers.upgrade()?.borrow().contains(self.key))
    }
}

impl fmt::Debug for TimerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerHandle")
            .field("pending", &(self.pending() == Some(true)))
            .finish_non_exhaustive()
    }
}

/// A loop dropped drops its tasks, unfinished (their handles, which keep
/// the task table, see `Cancelled`), and with them what they held.
impl Drop for EventLoop {
    fn drop(&mut self) {
        self.tasks.drop_all();
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

const EVENTS_PER_POLL: usize = 1024;

/// How many polls a turn goes on making while tasks wake tasks, before it
/// looks at the sockets and the clock again: tokio's current-thread
/// runtime looks every 61 polls (its `event_interval`), so this does too.
const POLLS_PER_TURN: usize = 61;

/// The token of the loop's `mio::Waker`; `register` counts up from zero.
const WAKER_TOKEN: Token = Token(usize::MAX);

/// The token of the timer that ends a wait at the wheel's tick.
const TICK_TOKEN: Token = Token(usize::MAX - 1);

/// What waits on one socket, for reading and for writing, and its
/// readable edges.
#[derive(Default)]
struct IoWaiters {
    read: Option<Waiter>,
    write: Option<Waiter>,
    readable_edges: ReadableEdges,
}

/// A callback given to `read_wait` or `write_wait`, or a task's waker.
enum Waiter {
    Run(Callback),
    Wake(Waker),
}

/// How many times a socket was reported readable, and whether it was ever
/// reported closed or failed: the proof behind a short read (`reactor.rs`).
#[derive(Default)]
struct ReadableEdges {
    count: u64,
    closed: bool,
}

impl IoWaiters {
    fn is_waiting(&self) -> bool {
        self.read.is_some() || self.write.is_some()
    }

    fn take_ready(&mut self, event: &Event) -> impl Iterator<Item = Waiter> {
        let failed = event.is_error();
        let read = if event.is_readable() || event.is_read_closed() || failed {
            self.readable_edges.count += 1;
            self.readable_edges.closed |= event.is_read_closed() || failed;
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
