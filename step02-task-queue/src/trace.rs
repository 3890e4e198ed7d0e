//! `LOOP_TRACE=1`: the loop says what it does, one line per callback it
//! runs, on stderr. Not the lesson: a window onto it. The loop makes one
//! call here per callback; unset, the call is one branch that returns.
//!
//! # The lines (a stable format: tests and the book's figures parse it)
//!
//! Every line is `[+S.SSS s] run: <what>`, `S.SSS` the seconds since the
//! loop was made. This loop has no turns yet, so the one line is
//! `run: callback 4 (2 more ready)`: the loop takes the 4th callback off the
//! queue and runs it, with 2 more waiting behind it.

use std::cell::Cell;
use std::io::{self, Write};
use std::time::Instant;

/// What `LOOP_TRACE` turns on: made once by the loop, which holds it.
pub(crate) struct Trace {
    on: bool,
    start: Instant,
    callbacks: Cell<u64>,
}

impl Trace {
    /// On when `LOOP_TRACE` is set to anything but empty or `0`.
    pub(crate) fn from_env() -> Self {
        let on = std::env::var_os("LOOP_TRACE")
            .is_some_and(|v| !v.is_empty() && v != "0");
        Trace {
            on,
            start: Instant::now(),
            callbacks: Cell::new(0),
        }
    }

    /// A callback is about to run; the closure counts those still queued,
    /// and runs only when tracing.
    pub(crate) fn runs(&self, still_ready: impl FnOnce() -> usize) {
        if !self.on {
            return;
        }
        let callback = self.callbacks.get() + 1;
        self.callbacks.set(callback);
        let since_start = self.start.elapsed().as_secs_f64();
        let more = still_ready();
        // A closed stderr is no reason to stop the loop.
        let _ = writeln!(
            io::stderr().lock(),
            "[+{since_start:.3} s] run: callback {callback} ({more} more ready)"
        );
    }
}
