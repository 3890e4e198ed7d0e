//! Writing the lines: a thread of its own writes them to stderr, so that a
//! stderr nobody reads costs trace lines, never the loop's time.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Condvar, Mutex, MutexGuard, Once, PoisonError};
use std::time::Duration;

/// At most this many lines wait for a writer that is stuck; more are
/// dropped.
const BACKLOG: usize = 1_000;

/// How long the loop waits for a line to be written before it takes stderr
/// for unread: far longer than a busy machine keeps a thread waiting.
const PATIENCE: Duration = Duration::from_millis(250);

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
pub(super) fn send(line: String) {
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

/// Whether `LOOP_TRACE` asks for a trace; an unknown value does, and says
/// so once.
pub(super) fn wanted() -> bool {
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

pub(super) use crate::digits::thousands;
