//! The error `block_on` returns when no task can ever be woken again: a
//! lost wake-up, named where it happens instead of waited on for ever.
//! `Tasks::lost_wake_up` decides; this file only says it.

use std::error::Error;
use std::fmt;
use std::panic::Location;

/// No task on the loop can ever be woken again, `block_on`'s own among
/// them (or no task is left at all, though `block_on`'s never finished),
/// and the loop has nothing else to wait for. `block_on` returns it,
/// inside an `io::Error`, instead of waiting for ever.
pub struct LostWakeUp {
    tasks: Vec<StuckTask>,
}

/// One task that can never be woken again, and why.
#[derive(Debug)]
pub(crate) struct StuckTask {
    pub(crate) id: u64,
    pub(crate) spawned_at: SpawnedAt,
    pub(crate) why: Stuck,
}

/// What the loop can tell about a stuck task from its waker.
#[derive(Debug)]
pub(crate) enum Stuck {
    /// Not queued, and nothing but the task table holds its waker.
    NoWakerLeft,
    /// Its `queued` flag is set, yet its id was never written down.
    WokenButNeverQueued,
    /// Only the slot of the task it joins, itself stuck, holds its waker.
    Joining(u64),
    /// Only the slot of the task it joins holds its waker, and that task
    /// has ended without waking it.
    JoinedAChildThatEnded(u64),
}

impl LostWakeUp {
    pub(crate) fn new(mut tasks: Vec<StuckTask>) -> Self {
        tasks.sort_by_key(|task| task.id);
        LostWakeUp { tasks }
    }

    /// The ids of the tasks that can never be woken again, in order.
    pub fn task_ids(&self) -> Vec<u64> {
        self.tasks.iter().map(|task| task.id).collect()
    }
}

impl fmt::Display for LostWakeUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tasks.is_empty() {
            return f.write_str(
                "block_on's task is gone: no task is left in the task table, yet \
                 block_on's\nfuture never finished. Was a pending task dropped \
                 instead of kept for its\nnext poll?",
            );
        }
        f.write_str(
            "a lost wake-up: no task can ever be woken again, so block_on \
             returns\ninstead of waiting for ever.",
        )?;
        for task in &self.tasks {
            let why = task.why.to_string().replace('\n', "\n    ");
            write!(f, "\n  task {}{}:\n    {why}", task.id, task.spawned_at)?;
        }
        f.write_str(
            "\nThe loop has no callback, timer or socket left to wait for, and \
             nothing\noutside it holds a waker of these tasks. Chapter 5, \
             section\n\"Lost wake-ups\", says how it happens.",
        )
    }
}

/// Line by line: `LostWakeUp` indents each line under its task.
impl fmt::Display for Stuck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stuck::NoWakerLeft => f.write_str(
                "pending, and nothing holds its waker: its last poll said Pending\n\
                 without leaving cx.waker() with whatever will make it ready, or\n\
                 the waker was dropped unwoken, or a wake-up never reached the\n\
                 woken list (a wake during its own poll is lost if `queued`,\n\
                 still set then, is cleared only after the poll).",
            ),
            Stuck::WokenButNeverQueued => f.write_str(
                "woken, but never queued: its waker's `queued` flag is set, yet\n\
                 its id is not in the woken list, so the loop will never poll it.\n\
                 (Does each poll clear the flag first? Does a wake that sets it\n\
                 write the id down?)",
            ),
            Stuck::Joining(child) => {
                write!(f, "pending, waiting to join task {child}.")
            }
            Stuck::JoinedAChildThatEnded(child) => write!(
                f,
                "pending, waiting to join task {child}, which has ended without\n\
                 waking it: the waker it left in the join slot is still there,\n\
                 unwoken, so it never comes back for the outcome. (Does the\n\
                 report of a task's outcome take the joiner's waker and wake it?)"
            ),
        }
    }
}

impl Error for LostWakeUp {}

/// As its message: `unwrap()` and `expect()` show an error by `Debug`, and
/// a test that unwraps `block_on`'s result should say what this one says.
impl fmt::Debug for LostWakeUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Where a task was spawned: the error can point at the line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpawnedAt {
    location: &'static Location<'static>,
}

impl SpawnedAt {
    /// Where the function that calls this was called from.
    #[track_caller]
    pub(crate) fn here() -> Self {
        SpawnedAt {
            location: Location::caller(),
        }
    }
}

/// `, spawned at file:line:column`.
impl fmt::Display for SpawnedAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ", spawned at {}", self.location)
    }
}
