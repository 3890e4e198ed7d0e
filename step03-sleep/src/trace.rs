//! `LOOP_TRACE=1`: the loop says what it does, on stderr, one line per
//! phase of each turn, such as `[+0.502 s] turn 2: ran 1 callbacks`. A
//! window onto the loop, not the lesson: the machinery is plumbing
//! (`plumbing::trace`), which also names slow callbacks and folds repeated
//! turns. In a turn's order:
//!
//! - `wait 0.500 s: the next deadline` or `wait 0 s: a callback is ready`:
//!   how long the loop sleeps, and why; then `waited 0.501 s`.
//! - `timer due: 1 (deadline +0.500 s)`: a timer that came due.
//! - `ran 3 callbacks`: the callbacks that were ready as the run phase began.
//!
//! `run` ends with `wait: nothing to wait for`.

use std::time::{Duration, Instant};

use plumbing::trace::Tracer;

/// What `LOOP_TRACE` turns on: made once by the loop, which holds it. Its
/// other calls, `turn_begins`, `callback_begins`, `callback_ends` (which
/// names a slow callback) and `waited`, are the plumbing's `Tracer`'s
/// (reached through `Deref`).
pub(crate) struct Trace(Tracer);

impl Trace {
    pub(crate) fn from_env() -> Self {
        Trace(Tracer::with_turns())
    }

    /// The sleep about to begin: `wait` from `wait_time`; the closure counts
    /// the callbacks ready (why the wait is zero), and runs only when
    /// tracing.
    pub(crate) fn waits(&self, wait: Duration, ready: impl FnOnce() -> usize) {
        let Some(ready) = self.wait_begins(ready) else {
            return;
        };
        if ready > 0 {
            self.say(format_args!("wait 0 s: a callback is ready"));
        } else {
            let wait = wait.as_secs_f64();
            self.sleeps(format_args!("wait {wait:.3} s: the next deadline"));
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
