//! `LOOP_TRACE=1`: the loop says what it does, one line per phase of each
//! turn, on stderr. Not the lesson: a window onto it. The loop makes one
//! call here per phase; unset, each call is one branch that returns.
//!
//! # The lines (a stable format: tests and the book's figures parse it)
//!
//! Every line is `[+S.SSS s] turn N: <what>`, `S.SSS` the seconds since the
//! loop was made and `N` the turn's number. In a turn's order:
//!
//! - `wait 0.500 s: the next deadline` or `wait 0 s: a callback is
//!   ready`: how long the loop sleeps, and why; then `waited 0.501 s`.
//! - `timer due: 1 (deadline +0.500 s)`: a timer that came due, by its
//!   number, with its deadline since the start.
//! - `ran 3 callbacks`: the turn ran the callbacks that were ready at its
//!   start.
//!
//! `run`, when nothing is left to wait for, ends with `turn N: wait: nothing
//! to wait for`.

use std::cell::Cell;
use std::fmt;
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// What `LOOP_TRACE` turns on: made once by the loop, which holds it.
pub(crate) struct Trace {
    on: bool,
    start: Instant,
    turn: Cell<u64>,
    wait_began: Cell<Option<Instant>>,
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

    /// The sleep about to begin: `wait` from `wait_time`; the closure says
    /// why it is zero, and runs only when tracing.
    pub(crate) fn waits(
        &self,
        wait: Duration,
        callback_ready: impl FnOnce() -> bool,
    ) {
        if !self.on {
            return;
        }
        self.wait_began.set(Some(Instant::now()));
        if callback_ready() {
            self.line(format_args!("wait 0 s: a callback is ready"));
        } else {
            self.line(format_args!(
                "wait {:.3} s: the next deadline",
                wait.as_secs_f64()
            ));
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

    pub(crate) fn timer_due(&self, timer: u64, deadline: Instant) {
        if !self.on {
            return;
        }
        let at = deadline.saturating_duration_since(self.start).as_secs_f64();
        self.line(format_args!("timer due: {timer} (deadline +{at:.3} s)"));
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
