//! `LOOP_TRACE=1`: the loop says what it does, on stderr, one line per
//! callback it runs: `[+0.002 s] run: callback 4 (2 more ready)`, the 4th
//! callback taken off the queue, with 2 more behind it. A window onto the
//! loop, not the lesson: the machinery is plumbing (`plumbing::trace`).

use plumbing::trace::Tracer;

/// What `LOOP_TRACE` turns on: made once by the loop, which holds it. Its
/// other call, `callback_ends`, which names a slow callback, is the
/// plumbing's `Tracer`'s (reached through `Deref`).
pub(crate) struct Trace(Tracer);

impl Trace {
    pub(crate) fn from_env() -> Self {
        Trace(Tracer::without_turns())
    }

    /// A callback is about to run; the closure counts those still queued,
    /// and runs only when tracing.
    pub(crate) fn runs(&self, still_ready: impl FnOnce() -> usize) {
        if self.on() {
            let (callback, more) = (self.callbacks_ran() + 1, still_ready());
            self.say(format_args!("callback {callback} ({more} more ready)"));
            self.callback_begins();
        }
    }
}

impl std::ops::Deref for Trace {
    type Target = Tracer;

    fn deref(&self) -> &Tracer {
        &self.0
    }
}
