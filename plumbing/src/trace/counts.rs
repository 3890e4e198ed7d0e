//! What the trace counts to name things: where each callback came from,
//! how often a task wakes itself, which task waits on which socket.

use std::collections::HashMap;
use std::time::Instant;

/// How many of a task's polls are counted before saying whether it woke
/// itself on most of them.
const SELF_WAKE_POLLS: u32 = 100;

/// Where this turn's ready callbacks came from, in the order they run:
/// first those queued before the turn's wait (by `call_soon`), then those
/// the turn's phases queued (sockets' waiters, then timers).
#[derive(Default)]
pub(super) struct Callbacks {
    pub(super) queued_before: usize,
    pub(super) from_phases: Vec<String>,
    /// How many have run, and when the one running began.
    pub(super) ended: usize,
    pub(super) began: Option<Instant>,
}

impl Callbacks {
    pub(super) fn len(&self) -> usize {
        self.queued_before + self.from_phases.len()
    }

    /// Where the callback that just ended came from.
    pub(super) fn from(&self) -> &str {
        match self.ended.checked_sub(self.queued_before + 1) {
            None => "a ready callback",
            Some(i) => self.from_phases.get(i).map_or("a ready callback", |s| s),
        }
    }
}

/// What the trace keeps of tasks between their polls.
#[derive(Default)]
pub(super) struct Tasks {
    pub(super) poll_began: Option<Instant>,
    /// Each pending task's polls so far, and how many woke it.
    self_wakes: HashMap<u64, SelfWakes>,
    /// Socket waits left during the poll under way, as (token, reading):
    /// the poll's end says whose they are.
    pub(super) unclaimed_waits: Vec<(usize, bool)>,
    /// Which task waits on each (token, reading).
    pub(super) waiting: HashMap<(usize, bool), u64>,
}

/// A task's polls that left it pending, and how many of them woke it.
#[derive(Default, Clone, Copy)]
struct SelfWakes {
    polls: u32,
    woke: u32,
}

impl Tasks {
    /// The socket waits left during the poll that ended are `task`'s.
    pub(super) fn claim_waits(&mut self, task: u64) {
        for wait in self.unclaimed_waits.drain(..) {
            self.waiting.insert(wait, task);
        }
    }

    /// Counts one poll that left `task` pending; `(woke, polls)` once, at
    /// its 100th such poll, if most of them woke it.
    pub(super) fn count_self_wake(
        &mut self,
        task: u64,
        during_poll: impl FnOnce() -> bool,
    ) -> Option<(u32, u32)> {
        let counted = self.self_wakes.entry(task).or_default();
        if counted.polls == SELF_WAKE_POLLS {
            return None; // counted already, and said if it was worth saying
        }
        counted.polls += 1;
        counted.woke += u32::from(during_poll());
        let SelfWakes { polls, woke } = *counted;
        (polls == SELF_WAKE_POLLS && woke * 2 > polls).then_some((woke, polls))
    }

    /// A task that ended is counted no more.
    pub(super) fn forget(&mut self, task: u64) {
        self.self_wakes.remove(&task);
    }
}
