//! The error `block_on` gives when no task can ever be woken again, naming
//! each stuck task, where it was spawned (in debug builds), and why.

use std::error::Error;
use std::fmt;
#[cfg(debug_assertions)]
use std::panic::Location;

/// No task on the loop can be woken again and nothing is left to wait for:
/// `block_on` returns this, inside an `io::Error`, instead of hanging.
pub struct LostWakeUp {
    tasks: Vec<StuckTask>,
}

pub(crate) struct StuckTask {
    pub(crate) number: u64,
    pub(crate) spawned_at: SpawnedAt,
    pub(crate) why: Stuck,
}

pub(crate) enum Stuck {
    /// Nothing but the task table holds its waker.
    NoWakerLeft,
    /// Only the join slot of this task, itself stuck, holds its waker.
    Joining(u64),
    /// Only the join slot of this task, which has ended, holds its waker.
    JoinedAChildThatEnded(u64),
}

impl LostWakeUp {
    pub(crate) fn new(mut tasks: Vec<StuckTask>) -> Self {
        tasks.sort_unstable_by_key(|task| task.number);
        LostWakeUp { tasks }
    }

    /// The numbers of the stuck tasks (in spawn order, from 0), ascending.
    pub fn task_ids(&self) -> Vec<u64> {
        self.tasks.iter().map(|task| task.number).collect()
    }
}

impl fmt::Display for LostWakeUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a lost wake-up: no task can ever be woken again, so block_on \
             returns\ninstead of waiting for ever.",
        )?;
        for task in &self.tasks {
            let why = match task.why {
                Stuck::NoWakerLeft => {
                    "pending, and nothing holds its waker".to_owned()
                }
                Stuck::Joining(child) => {
                    format!("pending, waiting to join task {child}")
                }
                Stuck::JoinedAChildThatEnded(child) => format!(
                    "pending, waiting to join task {child}, which has ended \
                     without waking it"
                ),
            };
            write!(f, "\n  task {}{}:\n    {why}", task.number, task.spawned_at)?;
        }
        f.write_str(
            "\nThe loop has no callback, timer or socket left to wait for, and \
             nothing\noutside it holds a waker of these tasks (the book's \
             chapter 5,\n\"Lost wake-ups\").",
        )
    }
}

/// As its message, so `unwrap()` on `block_on`'s result says the same.
impl fmt::Debug for LostWakeUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Error for LostWakeUp {}

/// Where a task was spawned, in debug builds only: release builds keep
/// nothing, and a task's entry stays 8 bytes smaller.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpawnedAt {
    #[cfg(debug_assertions)]
    location: &'static Location<'static>,
}

impl SpawnedAt {
    #[track_caller]
    pub(crate) fn here() -> Self {
        SpawnedAt {
            #[cfg(debug_assertions)]
            location: Location::caller(),
        }
    }
}

impl fmt::Display for SpawnedAt {
    #[cfg(debug_assertions)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ", spawned at {}", self.location)
    }

    #[cfg(not(debug_assertions))]
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}
