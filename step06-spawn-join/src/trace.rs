//! `LOOP_TRACE=1`: the loop says what it does, one line per phase of each
//! turn, on stderr. Not the lesson: a window onto it. The loop makes one
//! call here per phase; unset, each call is one branch that returns.
//!
//! # The lines (a stable format: tests and the book's figures parse it)
//!
//! Every line is `[+S.SSS s] turn N: <what>`, `S.SSS` the seconds since the
//! loop was made and `N` the turn's number. In a turn's order:
//!
//! - `wait 0.500 s: the next deadline`, `wait 0 s: a callback is ready`,
//!   `wait 0 s: a task was woken` or `wait for ever: sockets only`: how long
//!   the loop may wait in `poll`, and why; then `waited 0.501 s`.
//! - `socket 3 readable: its read waiter is ready`, `socket 3 writable:
//!   its write waiter is ready` or `socket 3 readable: nobody waits`: a
//!   socket `poll` reported, and whether a waiter was there to take it.
//! - `timer due: 1 (deadline +0.500 s)`: a timer that came due, by its
//!   number, with its deadline since the start.
//! - `ran 3 callbacks`: the turn ran the callbacks that were ready at its
//!   start.
//! - `task 2 woken: polled this turn`: the turn's last phase begins with
//!   every task woken since the loop last looked (this turn's callbacks
//!   may have woken some), in the order they were woken; each is then
//!   polled, unless it is done already.
//! - `poll task 2: pending`, `done` or `panicked`: a task's poll, and how
//!   it left it.
//!
//! `run`, when nothing is left to wait for, ends with `turn N: wait: nothing
//! to wait for`.

use std::cell::Cell;
use std::fmt;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use mio::event::Event;

/// What `LOOP_TRACE` turns on: made once by the loop, which holds it.
pub(crate) struct Trace {
    on: bool,
    start: Instant,
    turn: Cell<u64>,
    wait_began: Cell<Option<Instant>>,
}

/// How a task left its poll.
#[derive(Clone, Copy)]
pub(crate) enum Left {
    Pending,
    Done,
}

impl Trace {
    /// On when `LOOP_TRACE` is set to anything but empty or `0`.
    pub(crate) fn from_env() -> Self {
        let on = std::env::var_os("LOOP_TRACE")
            .is_some_and(|v| !v.is_empty() && v != "0");
        Trace {
            on,
            start: Instant::now(),
            turn: Cell::new(0),
            wait_began: Cell::new(None),
        }
    }

    pub(crate) fn turn_begins(&self) {
        if !self.on {
            return;
        }
        self.turn.set(self.turn.get() + 1);
    }

    /// The wait about to begin: `timeout` from `wait_time`; the closures
    /// say why it is zero, and run only when tracing.
    pub(crate) fn waits(
        &self,
        timeout: Option<Duration>,
        callback_ready: impl FnOnce() -> bool,
        task_woken: impl FnOnce() -> bool,
    ) {
        if !self.on {
            return;
        }
        self.wait_began.set(Some(Instant::now()));
        match timeout {
            None => self.line(format_args!("wait for ever: sockets only")),
            Some(_) if callback_ready() => {
                self.line(format_args!("wait 0 s: a callback is ready"));
            }
            Some(_) if task_woken() => {
                self.line(format_args!("wait 0 s: a task was woken"));
            }
            Some(wait) => self.line(format_args!(
                "wait {:.3} s: the next deadline",
                wait.as_secs_f64()
            )),
        }
    }

    pub(crate) fn waited(&self) {
        if !self.on {
            return;
        }
        if let Some(began) = self.wait_began.take() {
            self.line(format_args!(
                "waited {:.3} s",
                began.elapsed().as_secs_f64()
            ));
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
        if !self.on {
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
            self.line(format_args!(
                "socket {token} {ready}: its {side} waiter is ready"
            ));
        } else {
            self.line(format_args!("socket {token} {ready}: nobody waits"));
        }
    }

    pub(crate) fn timer_due(&self, timer: u64, deadline: Instant) {
        if !self.on {
            return;
        }
        let at = deadline.saturating_duration_since(self.start).as_secs_f64();
        self.line(format_args!("timer due: {timer} (deadline +{at:.3} s)"));
    }

    /// The tasks the turn's last phase is about to poll. Unset, the ids are
    /// never looked at.
    pub(crate) fn tasks_woken(&self, tasks: impl Iterator<Item = u64>) {
        if !self.on {
            return;
        }
        for task in tasks {
            self.line(format_args!("task {task} woken: polled this turn"));
        }
    }

    pub(crate) fn polled(&self, task: u64, left: Left) {
        if !self.on {
            return;
        }
        let how = match left {
            Left::Pending => "pending",
            Left::Done if POLL_PANICKED.take() => "panicked",
            Left::Done => "done",
        };
        self.line(format_args!("poll task {task}: {how}"));
    }

    pub(crate) fn ran(&self, callbacks: usize) {
        if !self.on {
            return;
        }
        self.line(format_args!("ran {callbacks} callbacks"));
    }

    /// `run` found nothing left to wait for: the turn that ends it.
    pub(crate) fn nothing_to_wait_for(&self) {
        if !self.on {
            return;
        }
        self.turn_begins();
        self.line(format_args!("wait: nothing to wait for"));
    }

    /// One line on stderr. A closed stderr is no reason to stop the loop.
    fn line(&self, what: fmt::Arguments<'_>) {
        let since_start = self.start.elapsed().as_secs_f64();
        let turn = self.turn.get();
        let _ = writeln!(
            io::stderr().lock(),
            "[+{since_start:.3} s] turn {turn}: {what}"
        );
    }
}

thread_local! {
    /// Set when the poll under way panicked: the task ends, and `polled`
    /// says `panicked` rather than `done`.
    static POLL_PANICKED: Cell<bool> = const { Cell::new(false) };
}

/// The task being polled panicked (`join.rs` caught it).
pub(crate) fn poll_panicked() {
    POLL_PANICKED.set(true);
}
