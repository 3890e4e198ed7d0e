//! The trace's machinery: what `LOOP_TRACE` means, the line format, timing
//! the waits, callbacks and polls, folding repeated turns, and writing the
//! lines without holding up the loop. Each step's `trace.rs` says what its
//! loop does, in its own lines; this is how those lines get to stderr.
//!
//! # Turning it on
//!
//! `LOOP_TRACE` unset, empty, `0`, `false`, `off` or `no` (in any case) is
//! off; `1`, `true`, `on` or `yes` is on. Any other value turns it on too,
//! and the trace says once that it did not know the value, in a line of
//! its own: `[trace: LOOP_TRACE="verbose" is not a value it knows (…):
//! tracing]`. The lines go to stderr only: to keep them, redirect it
//! (`2>trace.txt`). Unset, every call here is one branch that returns.
//!
//! # The lines (a stable format: tests and the book's figures parse it)
//!
//! Every line is `[+S.SSS s] turn N: <what>`, `S.SSS` the seconds since the
//! loop was made and `N` the turn's number (`[+S.SSS s] run: <what>` in a
//! loop without turns, step 2's). Besides each step's own lines, this
//! module says three, the same in every step:
//!
//! - `waited 0.501 s`: how long the wait the step named really took.
//! - `callback 2 of 3 (timer 1) held the loop 0.150 s (over 0.100 s: a
//!   blocking call inside a callback?)`: a callback that ran longer than
//!   asyncio's 100 ms, which every other callback waited for; in brackets
//!   where it came from, the phase that queued it (a timer, a socket's
//!   waiter) or `a ready callback` (one `call_soon` queued). Step 2's loop
//!   has no turns, and says `callback 4 held the loop …`.
//! - `poll task 2 held the loop 0.150 s (over 0.100 s: a blocking call
//!   inside a task?)`: the same of a task's poll, after its line.
//!
//! Repeated turns are folded. A turn is a repeat when its lines say what
//! the turn before said, turn numbers and times aside, and it did not
//! sleep (its wait is `0 s`). The first repeat is shown, so two turns in a
//! row show what repeats; the ones after it are not, and where they end
//! one line stands for them all, with the number and time of the last:
//! `turn 57002: … 57,000 more turns like this`.
//!
//! The trace never holds up the loop. A thread of its own writes the lines,
//! and the loop waits for each line to be written, so the lines come in
//! order with what the program prints on stdout; but for 0.25 s at most. A
//! stderr that takes longer is not being read (a full pipe nobody empties),
//! and the loop goes on without waiting while up to 1,000 lines queue up
//! and the rest are dropped, until the writer catches up; where lines went
//! missing, a line `[trace: 1,234 lines dropped here: stderr was not read]`
//! says how many.

mod counts;
mod fold;
mod output;

use std::cell::{Cell, RefCell};
use std::fmt;
use std::time::{Duration, Instant};

use counts::{Callbacks, Tasks};
use fold::Fold;

/// A callback or a poll that runs longer than this holds up every other
/// one: asyncio's debug mode names callbacks slower than 100 ms.
const SLOW: Duration = Duration::from_millis(100);

/// One loop's trace: made once by the loop, which holds it (through its
/// step's `Trace`). With `LOOP_TRACE` off, each method that says or counts
/// something is one branch that returns (`None`, where it returns one).
pub struct Tracer {
    on: bool,
    start: Instant,
    /// The turn under way; `None` in a loop without turns.
    turn: Option<Cell<u64>>,
    wait_began: Cell<Option<Instant>>,
    callbacks: RefCell<Callbacks>,
    tasks: RefCell<Tasks>,
    fold: RefCell<Fold>,
}

/// A poll that ended, measured before its line was written: writing is not
/// the task's.
#[derive(Debug, Clone, Copy)]
pub struct PollEnded {
    task: u64,
    held: Option<Duration>,
}

impl Tracer {
    /// The trace of a loop that turns (steps 3 on): `turn N:` lines.
    pub fn with_turns() -> Self {
        Self::new(Some(Cell::new(0)))
    }

    /// The trace of a loop without turns (step 2): `run:` lines.
    pub fn without_turns() -> Self {
        Self::new(None)
    }

    fn new(turn: Option<Cell<u64>>) -> Self {
        Tracer {
            on: output::wanted(),
            start: Instant::now(),
            turn,
            wait_began: Cell::new(None),
            callbacks: RefCell::new(Callbacks::default()),
            tasks: RefCell::new(Tasks::default()),
            fold: RefCell::new(Fold::default()),
        }
    }

    /// Whether `LOOP_TRACE` is on.
    #[inline]
    pub fn on(&self) -> bool {
        self.on
    }

    /// Says `what`, in a line of its own.
    #[inline]
    pub fn say(&self, what: fmt::Arguments<'_>) {
        if self.on {
            self.line(what);
        }
    }

    /// Says `what`, the wait that makes this turn sleep: a turn that sleeps
    /// is never folded, so a loop that waits says why while it waits.
    #[inline]
    pub fn sleeps(&self, what: fmt::Arguments<'_>) {
        if self.on {
            self.fold.borrow_mut().sleeps();
            self.line(what);
        }
    }

    /// A new turn begins: the one before is over.
    #[inline]
    pub fn turn_begins(&self) {
        if let (true, Some(turn)) = (self.on, &self.turn) {
            self.fold.borrow_mut().turn_ends(turn.get());
            turn.set(turn.get() + 1);
            *self.callbacks.borrow_mut() = Callbacks::default();
        }
    }

    /// `at` in seconds since the loop was made.
    #[inline]
    pub fn since_start(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64()
    }

    /// The turn's wait begins; the closure counts the callbacks ready, and
    /// runs only when tracing. Their number, when tracing.
    #[inline]
    pub fn wait_begins(
        &self,
        callbacks_ready: impl FnOnce() -> usize,
    ) -> Option<usize> {
        if !self.on {
            return None;
        }
        self.wait_began.set(Some(Instant::now()));
        let ready = callbacks_ready();
        self.callbacks.borrow_mut().queued_before = ready;
        Some(ready)
    }

    /// The wait is over: says how long it took.
    #[inline]
    pub fn waited(&self) {
        if let Some(began) = self.wait_began.take() {
            let waited = began.elapsed().as_secs_f64();
            self.say(format_args!("waited {waited:.3} s"));
        }
    }

    /// A phase queued a callback; the closure names where it came from
    /// (`timer 1`), and runs only when tracing.
    #[inline]
    pub fn queues_callback(&self, from: impl FnOnce() -> String) {
        if self.on {
            self.callbacks.borrow_mut().from_phases.push(from());
        }
    }

    /// How many callbacks have run this turn (in the whole run, without
    /// turns).
    #[inline]
    pub fn callbacks_ran(&self) -> usize {
        self.callbacks.borrow().ended
    }

    /// A ready callback is about to run.
    #[inline]
    pub fn callback_begins(&self) {
        if self.on {
            self.callbacks.borrow_mut().began = Some(Instant::now());
        }
    }

    /// The callback that began has returned: named if it held the loop.
    #[inline]
    pub fn callback_ends(&self) {
        if self.on {
            self.name_slow_callback();
        }
    }

    fn name_slow_callback(&self) {
        let mut callbacks = self.callbacks.borrow_mut();
        callbacks.ended += 1;
        let held = callbacks.began.take().map(|began| began.elapsed());
        let Some(held) = held.filter(|held| *held > SLOW) else {
            return;
        };
        let which = if self.turn.is_some() {
            let (ended, of) = (callbacks.ended, callbacks.len());
            format!("{ended} of {of} ({})", callbacks.from())
        } else {
            callbacks.ended.to_string()
        };
        drop(callbacks);
        self.say(format_args!(
            "callback {which} held the loop {} (over {}: a blocking call \
             inside a callback?)",
            Seconds(held),
            Seconds(SLOW)
        ));
    }

    /// A task's poll is about to begin.
    #[inline]
    pub fn poll_begins(&self) {
        if self.on {
            self.tasks.borrow_mut().poll_began = Some(Instant::now());
        }
    }

    /// `task`'s poll has returned, `pending` or not: the socket waits it
    /// left are its own, and a task that ended is counted no more. Give
    /// what this returns to `poll_held` after the poll's line.
    #[inline]
    pub fn poll_ends(&self, task: u64, pending: bool) -> Option<PollEnded> {
        if !self.on {
            return None;
        }
        let mut tasks = self.tasks.borrow_mut();
        let held = tasks.poll_began.take().map(|began| began.elapsed());
        tasks.claim_waits(task);
        if !pending {
            tasks.forget(task);
        }
        Some(PollEnded { task, held })
    }

    /// Names the poll that just ended if it held the loop.
    #[inline]
    pub fn poll_held(&self, poll: PollEnded) {
        if let Some(held) = poll.held.filter(|held| *held > SLOW) {
            self.say(format_args!(
                "poll task {} held the loop {} (over {}: a blocking call \
                 inside a task?)",
                poll.task,
                Seconds(held),
                Seconds(SLOW)
            ));
        }
    }

    /// Counts a poll that left `task` pending; the closure says whether it
    /// woke itself during that poll, and runs only when tracing. Once, when
    /// most of the task's first 100 such polls did: how many of how many.
    #[inline]
    pub fn busy_loop(
        &self,
        task: u64,
        during_poll: impl FnOnce() -> bool,
    ) -> Option<(u32, u32)> {
        if !self.on {
            return None;
        }
        self.tasks.borrow_mut().count_self_wake(task, during_poll)
    }

    /// The task being polled left its waker on socket `token`, to read or
    /// to write.
    #[inline]
    pub fn task_waits(&self, token: usize, reading: bool) {
        if self.on {
            self.tasks
                .borrow_mut()
                .unclaimed_waits
                .push((token, reading));
        }
    }

    /// The task that waits on socket `token` (to read or to write), which
    /// waits no more.
    #[inline]
    pub fn waiting_task(&self, token: usize, reading: bool) -> Option<u64> {
        self.tasks.borrow_mut().waiting.remove(&(token, reading))
    }

    /// One line, to the folding of repeated turns and on to stderr.
    fn line(&self, what: fmt::Arguments<'_>) {
        let what = what.to_string();
        let since_start = self.start.elapsed().as_secs_f64();
        let Some(turn) = &self.turn else {
            output::send(format!("[+{since_start:.3} s] run: {what}\n"));
            return;
        };
        let text = format!("[+{since_start:.3} s] turn {}: {what}\n", turn.get());
        self.fold.borrow_mut().line(&what, text, since_start);
    }
}

impl Drop for Tracer {
    /// Shows what the last turn held back, and the repeats not yet counted.
    fn drop(&mut self) {
        if let (true, Some(turn)) = (self.on, &self.turn) {
            let fold = self.fold.get_mut();
            fold.turn_ends(turn.get());
            fold.show_held();
        }
    }
}

impl fmt::Debug for Tracer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracer")
            .field("on", &self.on)
            .field("turn", &self.turn)
            .finish_non_exhaustive()
    }
}

/// A duration as the trace writes it: `0.150 s`.
struct Seconds(Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} s", self.0.as_secs_f64())
    }
}

thread_local! {
    /// Set when the poll under way panicked: the task ends, and its line
    /// says `panicked` rather than `done`.
    static POLL_PANICKED: Cell<bool> = const { Cell::new(false) };
}

/// The task being polled panicked (its step's `join.rs` caught it).
pub fn poll_panicked() {
    POLL_PANICKED.set(true);
}

/// Whether the poll that just ended panicked; asked once.
pub fn poll_did_panic() -> bool {
    POLL_PANICKED.take()
}
