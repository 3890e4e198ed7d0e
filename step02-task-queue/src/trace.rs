//! `LOOP_TRACE=1`: the loop says what it does, one line per callback it
//! runs, on stderr. Not the lesson: a window onto it. The loop makes two
//! calls here per callback; unset, each call is one branch that returns.
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
//! Every line is `[+S.SSS s] run: <what>`, `S.SSS` the seconds since the
//! loop was made. This loop has no turns yet, so the lines are
//! `run: callback 4 (2 more ready)`: the loop takes the 4th callback off the
//! queue and runs it, with 2 more waiting behind it; and, when it ran
//! longer than asyncio's 100 ms, which every other callback waited for,
//! `run: callback 4 held the loop 0.150 s (over 0.100 s: a blocking call
//! inside a callback?)`.
//!
//! The trace never holds up the loop. A thread of its own writes the lines,
//! and the loop waits for each line to be written, so the lines come in
//! order with what the program prints on stdout; but for 0.25 s at most. A
//! stderr that takes longer is not being read (a full pipe nobody empties),
//! and the loop goes on without waiting while up to 1,000 lines queue up
//! and the rest are dropped, until the writer catches up; where lines went
//! missing, a line `[trace: 1,234 lines dropped here: stderr was not read]`
//! says how many.

use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Write};
use std::sync::{Condvar, Mutex, MutexGuard, Once, PoisonError};
use std::time::{Duration, Instant};

/// A callback that runs longer than this holds up every other one:
/// asyncio's debug mode names callbacks slower than 100 ms.
const SLOW: Duration = Duration::from_millis(100);

/// What `LOOP_TRACE` turns on: made once by the loop, which holds it.
pub(crate) struct Trace {
    on: bool,
    start: Instant,
    callbacks: Cell<u64>,
    callback_began: Cell<Option<Instant>>,
}

impl Trace {
    /// On or off as `LOOP_TRACE` says (see the module's doc).
    pub(crate) fn from_env() -> Self {
        Trace {
            on: wanted(),
            start: Instant::now(),
            callbacks: Cell::new(0),
            callback_began: Cell::new(None),
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
        let more = still_ready();
        self.line(format_args!("callback {callback} ({more} more ready)"));
        self.callback_began.set(Some(Instant::now()));
    }

    /// The callback that began has returned: named if it held the loop.
    pub(crate) fn callback_ends(&self) {
        if !self.on {
            return;
        }
        let Some(held) = self.callback_began.take().map(|began| began.elapsed())
        else {
            return;
        };
        if held > SLOW {
            self.line(format_args!(
                "callback {} held the loop {:.3} s \
                 (over {:.3} s: a blocking call inside a callback?)",
                self.callbacks.get(),
                held.as_secs_f64(),
                SLOW.as_secs_f64()
            ));
        }
    }

    /// One line, on to stderr.
    fn line(&self, what: fmt::Arguments<'_>) {
        let since_start = self.start.elapsed().as_secs_f64();
        send(format!("[+{since_start:.3} s] run: {what}\n"));
    }
}

// ---------------------------------------------------------------------------
// Plumbing: writing the lines. Not the lesson; a reader may stop here.
// ---------------------------------------------------------------------------

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
