//! `LOOP_TRACE=1`: the loop says what it does, one line per phase of each
//! turn, on stderr. Not the lesson: a window onto it. The loop makes one
//! call here per phase; unset, each call is one branch that returns.
//!
//! # Turning it on
//!
//! `LOOP_TRACE` unset, empty, `0`, `false`, `off` or `no` (in any case) is
//! off; `1`, `true`, `on` or `yes` is on. Any other value turns it on too,
//! and the trace says once that it did not know the value, in a line of
//! its own: `[trace: LOOP_TRACE="verbose" is not a value it knows (…):
//! tracing]`. The lines go to stderr only: to keep them, redirect it
//! (`2>trace.txt`).
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
//! - `callback 2 of 3 (timer 1) held the loop 0.150 s (over 0.100 s: a
//!   blocking call inside a callback?)`: a callback that ran longer than
//!   asyncio's 100 ms, which every other callback waited for; in brackets
//!   where it came from, a timer (`timer 1`), a socket's waiter
//!   (`socket 3 readable`) or `a ready callback` (one `call_soon` queued).
//! - `ran 3 callbacks`: the turn ran the callbacks that were ready at its
//!   start.
//! - `task 2 woken: polled this turn`: the turn's last phase begins with
//!   every task woken since the loop last looked (this turn's callbacks
//!   may have woken some), in the order they were woken; each is then
//!   polled, unless it is done already.
//! - `poll task 2: pending`, `done` or `panicked`: a task's poll, and how
//!   it left it; then, if the poll ran longer than 100 ms, `poll task 2
//!   held the loop 0.150 s (over 0.100 s: a blocking call inside a task?)`.
//! - `task 3 woke itself on 96 of 100 polls: a busy loop of yield_now?`:
//!   tokio-console's warning, once per task, when most of a task's first
//!   100 polls that left it pending woke it again before they returned.
//!
//! `run`, when nothing is left to wait for, ends with `turn N: wait: nothing
//! to wait for`.
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

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{self, Write};
use std::sync::{Condvar, Mutex, MutexGuard, Once, PoisonError};
use std::time::{Duration, Instant};

use mio::event::Event;

/// How many of a task's polls are counted before saying whether it woke
/// itself on most of them.
const SELF_WAKE_POLLS: u32 = 100;

/// A callback or a poll that runs longer than this holds up every other
/// one: asyncio's debug mode names callbacks slower than 100 ms.
const SLOW: Duration = Duration::from_millis(100);

/// What `LOOP_TRACE` turns on: made once by the loop, which holds it.
pub(crate) struct Trace {
    on: bool,
    start: Instant,
    turn: Cell<u64>,
    wait_began: Cell<Option<Instant>>,
    poll_began: Cell<Option<Instant>>,
    /// Each pending task's polls so far, and how many woke it.
    self_wakes: RefCell<HashMap<u64, SelfWakes>>,
    callbacks: RefCell<Callbacks>,
    fold: RefCell<Fold>,
}

/// How a task left its poll.
#[derive(Clone, Copy)]
pub(crate) enum Left {
    Pending,
    Done,
}

impl Trace {
    /// On or off as `LOOP_TRACE` says (see the module's doc).
    pub(crate) fn from_env() -> Self {
        Trace {
            on: wanted(),
            start: Instant::now(),
            turn: Cell::new(0),
            wait_began: Cell::new(None),
            poll_began: Cell::new(None),
            self_wakes: RefCell::new(HashMap::new()),
            callbacks: RefCell::new(Callbacks::default()),
            fold: RefCell::new(Fold::default()),
        }
    }

    pub(crate) fn turn_begins(&self) {
        if !self.on {
            return;
        }
        self.fold.borrow_mut().turn_ends(self.turn.get());
        self.turn.set(self.turn.get() + 1);
        *self.callbacks.borrow_mut() = Callbacks::default();
    }

    /// The wait about to begin: `timeout` from `wait_time`; the closures
    /// count the callbacks ready and say whether a task was woken (why the
    /// wait is zero), and run only when tracing.
    pub(crate) fn waits(
        &self,
        timeout: Option<Duration>,
        callbacks_ready: impl FnOnce() -> usize,
        task_woken: impl FnOnce() -> bool,
    ) {
        if !self.on {
            return;
        }
        self.wait_began.set(Some(Instant::now()));
        let ready = callbacks_ready();
        self.callbacks.borrow_mut().queued_before = ready;
        if ready > 0 {
            self.line(format_args!("wait 0 s: a callback is ready"));
            return;
        }
        if task_woken() {
            self.line(format_args!("wait 0 s: a task was woken"));
            return;
        }
        self.fold.borrow_mut().sleeps();
        match timeout {
            None => self.line(format_args!("wait for ever: sockets only")),
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
            let from = format!("socket {token} {ready}");
            self.callbacks.borrow_mut().from_phases.push(from);
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
        self.callbacks
            .borrow_mut()
            .from_phases
            .push(format!("timer {timer}"));
    }

    /// A ready callback is about to run.
    pub(crate) fn callback_begins(&self) {
        if !self.on {
            return;
        }
        self.callbacks.borrow_mut().began = Some(Instant::now());
    }

    /// The callback that began has returned: named if it held the loop.
    pub(crate) fn callback_ends(&self) {
        if !self.on {
            return;
        }
        let mut callbacks = self.callbacks.borrow_mut();
        callbacks.ended += 1;
        let Some(held) = callbacks.began.take().map(|began| began.elapsed()) else {
            return;
        };
        if held > SLOW {
            let (which, of) = (callbacks.ended, callbacks.len());
            let from = callbacks.from().to_owned();
            drop(callbacks);
            self.line(format_args!(
                "callback {which} of {of} ({from}) held the loop {:.3} s \
                 (over {:.3} s: a blocking call inside a callback?)",
                held.as_secs_f64(),
                SLOW.as_secs_f64()
            ));
        }
    }

    pub(crate) fn ran(&self, callbacks: usize) {
        if !self.on {
            return;
        }
        self.line(format_args!("ran {callbacks} callbacks"));
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

    /// A task's poll is about to begin.
    pub(crate) fn poll_begins(&self) {
        if !self.on {
            return;
        }
        self.poll_began.set(Some(Instant::now()));
    }

    pub(crate) fn polled(&self, task: u64, left: Left) {
        if !self.on {
            return;
        }
        // Measured before any line is written: writing is not the task's.
        let held = self.poll_began.take().map(|began| began.elapsed());
        let how = match left {
            Left::Pending => "pending",
            Left::Done if POLL_PANICKED.take() => "panicked",
            Left::Done => "done",
        };
        self.line(format_args!("poll task {task}: {how}"));
        self.poll_held(task, held);
        if !matches!(left, Left::Pending) {
            self.self_wakes.borrow_mut().remove(&task);
        }
    }

    /// The task just polled was left pending; the closure says whether it
    /// woke itself during that poll, and runs only when tracing. Most of
    /// its first 100 such polls did: said once.
    pub(crate) fn woke_itself(&self, task: u64, during_poll: impl FnOnce() -> bool) {
        if !self.on {
            return;
        }
        let mut self_wakes = self.self_wakes.borrow_mut();
        let counted = self_wakes.entry(task).or_default();
        if counted.polls == SELF_WAKE_POLLS {
            return; // counted already, and said if it was worth saying
        }
        counted.polls += 1;
        counted.woke += u32::from(during_poll());
        let SelfWakes { polls, woke } = *counted;
        drop(self_wakes);
        if polls == SELF_WAKE_POLLS && woke * 2 > polls {
            self.line(format_args!(
                "task {task} woke itself on {woke} of {polls} polls: \
                 a busy loop of yield_now?"
            ));
        }
    }

    /// Names the poll that just ended if it held the loop.
    fn poll_held(&self, task: u64, held: Option<Duration>) {
        if let Some(held) = held.filter(|held| *held > SLOW) {
            self.line(format_args!(
                "poll task {task} held the loop {:.3} s \
                 (over {:.3} s: a blocking call inside a task?)",
                held.as_secs_f64(),
                SLOW.as_secs_f64()
            ));
        }
    }

    /// `run` found nothing left to wait for: the turn that ends it.
    pub(crate) fn nothing_to_wait_for(&self) {
        if !self.on {
            return;
        }
        self.turn_begins();
        self.line(format_args!("wait: nothing to wait for"));
    }

    /// One line, to the folding of repeated turns and on to stderr.
    fn line(&self, what: fmt::Arguments<'_>) {
        let what = what.to_string();
        let since_start = self.start.elapsed().as_secs_f64();
        let turn = self.turn.get();
        let text = format!("[+{since_start:.3} s] turn {turn}: {what}\n");
        self.fold
            .borrow_mut()
            .line(without_times(&what), text, since_start);
    }
}

impl Drop for Trace {
    /// Shows what the last turn held back, and the repeats not yet counted.
    fn drop(&mut self) {
        if self.on {
            let fold = self.fold.get_mut();
            fold.turn_ends(self.turn.get());
            fold.show_held();
        }
    }
}

// ---------------------------------------------------------------------------
// Plumbing: naming a slow callback, folding repeated turns, and writing the
// lines. Not the lesson; a reader may stop here.
// ---------------------------------------------------------------------------

/// Where this turn's ready callbacks came from, in the order they run:
/// first those queued before the turn's wait (by `call_soon`), then those
/// the turn's phases queued (sockets' waiters, then timers).
#[derive(Default)]
struct Callbacks {
    queued_before: usize,
    from_phases: Vec<String>,
    /// How many have run, and when the one running began.
    ended: usize,
    began: Option<Instant>,
}

impl Callbacks {
    fn len(&self) -> usize {
        self.queued_before + self.from_phases.len()
    }

    /// Where the callback that just ended came from.
    fn from(&self) -> &str {
        match self.ended.checked_sub(self.queued_before + 1) {
            None => "a ready callback",
            Some(i) => self.from_phases.get(i).map_or("a ready callback", |s| s),
        }
    }
}

/// A task's polls that left it pending, and how many of them woke it.
#[derive(Default, Clone, Copy)]
struct SelfWakes {
    polls: u32,
    woke: u32,
}

/// Folds repeated turns (see the module's doc).
#[derive(Default)]
struct Fold {
    /// What the last whole turn said, and this turn so far, times hidden.
    last_turn: Vec<String>,
    this_turn: Vec<String>,
    /// Whether this turn may be a repeat to fold: the turn before was a
    /// repeat, and this one has said the same so far and not slept. Its
    /// lines wait in `held` until it is over or says something new.
    holding: bool,
    held: Vec<String>,
    slept: bool,
    /// Repeats not shown, and the number and time of the last one.
    folded: u64,
    last_folded: (u64, f64),
    /// The time of the last line.
    last_time: f64,
}

impl Fold {
    fn line(&mut self, what: String, text: String, time: f64) {
        self.last_time = time;
        self.this_turn.push(what);
        if self.holding && self.last_turn.starts_with(&self.this_turn) {
            self.held.push(text);
            return;
        }
        self.show_held();
        send(text);
    }

    /// A turn that sleeps is never folded: a loop that waits says why while
    /// it waits.
    fn sleeps(&mut self) {
        self.slept = true;
        self.show_held();
    }

    /// Turn `turn` is over: a repeat to fold, or one to show.
    fn turn_ends(&mut self, turn: u64) {
        let repeat = !self.slept
            && !self.this_turn.is_empty()
            && self.this_turn == self.last_turn;
        if self.holding && repeat {
            self.folded += 1;
            self.last_folded = (turn, self.last_time);
            self.held.clear();
        } else {
            self.show_held();
        }
        self.holding = repeat;
        self.slept = false;
        std::mem::swap(&mut self.last_turn, &mut self.this_turn);
        self.this_turn.clear();
    }

    /// Shows the repeats folded so far, then the lines held back.
    fn show_held(&mut self) {
        self.holding = false;
        if self.folded > 0 {
            let (turn, time) = self.last_folded;
            send(format!(
                "[+{time:.3} s] turn {turn}: … {} more turns like this\n",
                thousands(self.folded)
            ));
            self.folded = 0;
        }
        for text in self.held.drain(..) {
            send(text);
        }
    }
}

/// `what` with its times (numbers with a decimal point) as `#`: what two
/// repeats of a turn have in common.
fn without_times(what: &str) -> String {
    let mut hidden = String::with_capacity(what.len());
    let mut number = String::new();
    for c in what.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !number.is_empty()) {
            number.push(c);
            continue;
        }
        hidden.push_str(if number.contains('.') { "#" } else { &number });
        number.clear();
        hidden.push(c);
    }
    hidden.pop();
    hidden
}

/// `57000` as `57,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Whether `LOOP_TRACE` asks for a trace; an unknown value does, and says
/// so once.
fn wanted() -> bool {
    let Some(value) = std::env::var_os("LOOP_TRACE") else {
        return false;
    };
    let value = value.to_string_lossy();
    match value.to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "off" | "no" => false,
        "1" | "true" | "on" | "yes" => true,
        _ => {
            static SAID: Once = Once::new();
            SAID.call_once(|| {
                send(format!(
                    "[trace: LOOP_TRACE={value:?} is not a value it knows \
                     (1, true, on, yes; 0, false, off, no): tracing]\n"
                ));
            });
            true
        }
    }
}

/// The lines on their way to stderr, from every loop of the process.
static OUTPUT: Output = Output {
    queue: Mutex::new(Queue {
        entries: VecDeque::new(),
        queued: 0,
        written: 0,
        stalled: false,
    }),
    changed: Condvar::new(),
};

/// At most this many lines wait for a writer that is stuck; more are
/// dropped.
const BACKLOG: usize = 1_000;

/// How long the loop waits for a line to be written before it takes stderr
/// for unread: far longer than a busy machine keeps a thread waiting.
const PATIENCE: Duration = Duration::from_millis(250);

struct Output {
    queue: Mutex<Queue>,
    /// Notified when lines are queued, and when they are written.
    changed: Condvar,
}

struct Queue {
    entries: VecDeque<Entry>,
    /// Entries ever queued, and ever written.
    queued: u64,
    written: u64,
    /// The writer kept the loop waiting too long: the loop stops waiting
    /// until it has caught up.
    stalled: bool,
}

enum Entry {
    Line(String),
    Dropped(u64),
}

impl Output {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Hands `line` to the writer thread and waits until it is written, unless
/// the writer is stalled.
fn send(line: String) {
    static WRITER: Once = Once::new();
    WRITER.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("loop-trace".into())
            .spawn(write_lines);
        // No thread, no trace: the loop never waits for one.
        OUTPUT.lock().stalled = spawned.is_err();
    });
    let mut queue = OUTPUT.lock();
    if queue.entries.len() >= BACKLOG {
        if let Some(Entry::Dropped(lines)) = queue.entries.back_mut() {
            *lines += 1;
        } else {
            queue.entries.push_back(Entry::Dropped(1));
            queue.queued += 1;
        }
        return;
    }
    queue.entries.push_back(Entry::Line(line));
    queue.queued += 1;
    let mine = queue.queued;
    OUTPUT.changed.notify_all();
    if queue.stalled {
        return;
    }
    let (mut queue, waited) = OUTPUT
        .changed
        .wait_timeout_while(queue, PATIENCE, |queue| queue.written < mine)
        .unwrap_or_else(PoisonError::into_inner);
    if waited.timed_out() {
        queue.stalled = true;
    }
}

/// The writer thread: writes what is queued, for ever. A closed stderr is
/// no reason to stop the loop: its errors are ignored.
fn write_lines() {
    let mut batch = VecDeque::new();
    loop {
        let mut queue = OUTPUT.lock();
        while queue.entries.is_empty() {
            queue = OUTPUT
                .changed
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
        std::mem::swap(&mut batch, &mut queue.entries);
        drop(queue);
        let written = batch.len() as u64;
        let mut stderr = io::stderr().lock();
        for entry in batch.drain(..) {
            let _ = match entry {
                Entry::Line(line) => stderr.write_all(line.as_bytes()),
                Entry::Dropped(lines) => writeln!(
                    stderr,
                    "[trace: {} lines dropped here: stderr was not read]",
                    thousands(lines)
                ),
            };
        }
        drop(stderr);
        let mut queue = OUTPUT.lock();
        queue.written += written;
        if queue.entries.is_empty() {
            queue.stalled = false;
        }
        OUTPUT.changed.notify_all();
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
