//! `LOOP_TRACE=1`: the loop says what it does, on stderr, one line per
//! phase of each turn, such as `[+0.502 s] turn 2: ran 1 callbacks`. A
//! window onto the loop, not the lesson: the machinery is plumbing
//! (`plumbing::trace`), which also names slow callbacks and polls, and
//! folds repeated turns. In a turn's order:
//!
//! - `wait 0.500 s: the next deadline`, `wait 0 s: a callback is ready`,
//!   `wait 0 s: a task was woken` or `wait for ever: sockets only`: how long
//!   the loop may wait in `poll`, and why; then `waited 0.501 s`.
//! - `socket 3 readable: its read waiter is ready`, `socket 3 writable:
//!   its write waiter is ready` or `socket 3 readable: nobody waits`: a
//!   socket `poll` reported, and whether a waiter was there to take it.
//! - `timer due: 1 (deadline +0.500 s)`: a timer that came due.
//! - `ran 3 callbacks`: the callbacks that were ready as the run phase began.
//! - `task 2 woken: polled this turn`: the turn's last phase begins with
//!   every task woken since the loop last looked (this turn's callbacks
//!   may have woken some), in the order they were woken; each is then
//!   polled, unless it is done already.
//! - `poll task 2: pending`, `done` or `panicked`: a task's poll, and how
//!   it left it.
//! - `task 3 woke itself on 96 of 100 polls: a busy loop of yield_now?`:
//!   tokio-console's warning, once per task, when most of a task's first
//!   100 polls that left it pending woke it again before they returned.
//!
//! `run` ends with `wait: nothing to wait for`.

use std::time::{Duration, Instant};

use mio::event::Event;
use plumbing::trace::{Tracer, poll_did_panic};

/// The task being polled panicked (`join.rs` caught it): its poll's line
/// says `panicked` rather than `done`.
pub(crate) use plumbing::trace::poll_panicked;

/// What `LOOP_TRACE` turns on: made once by the loop, which holds it. Its
/// other calls, `turn_begins`, `callback_begins`, `callback_ends` (which
/// names a slow callback), `waited` and `poll_begins`, are the plumbing's
/// `Tracer`'s (reached through `Deref`).
pub(crate) struct Trace(Tracer);

/// How a task left its poll.
#[derive(Clone, Copy)]
pub(crate) enum Left {
    Pending,
    Done,
}

impl Trace {
    pub(crate) fn from_env() -> Self {
        Trace(Tracer::with_turns())
    }

    /// The wait about to begin: `timeout` from `wait_time`; the closures
    /// count the callbacks ready and say whether a task was woken (why the
    /// wait is zero), and run only when tracing.
    pub(crate) fn waits(
        &self,
        timeout: Option<Duration>,
        ready: impl FnOnce() -> usize,
        task_woken: impl FnOnce() -> bool,
    ) {
        let Some(ready) = self.wait_begins(ready) else {
            return;
        };
        if ready > 0 {
            self.say(format_args!("wait 0 s: a callback is ready"));
        } else if task_woken() {
            self.say(format_args!("wait 0 s: a task was woken"));
        } else if let Some(wait) = timeout {
            let wait = wait.as_secs_f64();
            self.sleeps(format_args!("wait {wait:.3} s: the next deadline"));
        } else {
            self.sleeps(format_args!("wait for ever: sockets only"));
        }
    }

    /// A socket `poll` reported, and whether a read and a write waiter were
    /// there to take it.
    pub(crate) fn socket_ready(
        &self,
        event: &Event,
        read_waiter: bool,
        write_waiter: bool,
    ) {
        if !self.on() {
            return;
        }
        let token = event.token().0;
        let failed = event.is_error();
        if event.is_readable() || event.is_read_closed() || failed {
            self.socket_side(token, "readable", true, read_waiter);
        }
        if event.is_writable() || event.is_write_closed() || failed {
            self.socket_side(token, "writable", false, write_waiter);
        }
    }

    fn socket_side(&self, token: usize, ready: &str, reading: bool, waiter: bool) {
        let side = if reading { "read" } else { "write" };
        if waiter {
            self.say(format_args!(
                "socket {token} {ready}: its {side} waiter is ready"
            ));
            self.queues_callback(|| format!("socket {token} {ready}"));
        } else {
            self.say(format_args!("socket {token} {ready}: nobody waits"));
        }
    }

    pub(crate) fn timer_due(&self, timer: u64, deadline: Instant) {
        let at = self.since_start(deadline);
        self.say(format_args!("timer due: {timer} (deadline +{at:.3} s)"));
        self.queues_callback(|| format!("timer {timer}"));
    }

    pub(crate) fn ran(&self, callbacks: usize) {
        self.say(format_args!("ran {callbacks} callbacks"));
    }

    /// The tasks the turn's last phase is about to poll. Unset, the ids are
    /// never looked at.
    pub(crate) fn tasks_woken(&self, tasks: impl Iterator<Item = u64>) {
        if !self.on() {
            return;
        }
        for task in tasks {
            self.say(format_args!("task {task} woken: polled this turn"));
        }
    }

    /// A task's poll has returned, and how it left the task.
    pub(crate) fn polled(&self, task: u64, left: Left) {
        let pending = matches!(left, Left::Pending);
        let Some(poll) = self.poll_ends(task, pending) else {
            return;
        };
        let how = match left {
            Left::Pending => "pending",
            Left::Done if poll_did_panic() => "panicked",
            Left::Done => "done",
        };
        self.say(format_args!("poll task {task}: {how}"));
        self.poll_held(poll);
    }

    /// The task just polled was left pending; the closure says whether it
    /// woke itself during that poll, and runs only when tracing. Most of
    /// its first 100 such polls did: said once.
    pub(crate) fn woke_itself(&self, task: u64, during_poll: impl FnOnce() -> bool) {
        if let Some((woke, polls)) = self.busy_loop(task, during_poll) {
            self.say(format_args!(
                "task {task} woke itself on {woke} of {polls} polls: \
                 a busy loop of yield_now?"
            ));
        }
    }

    /// `run` found nothing left to wait for: the turn that ends it.
    pub(crate) fn nothing_to_wait_for(&self) {
        self.turn_begins();
        self.say(format_args!("wait: nothing to wait for"));
    }
}

impl std::ops::Deref for Trace {
    type Target = Tracer;

    fn deref(&self) -> &Tracer {
        &self.0
    }
}
