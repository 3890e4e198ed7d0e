//! What a verdict on a failure needs besides the tests, started as soon as
//! the first failure comes, while the other tests still run: which function
//! (`probe`, when more than one differs from the authors') and what the
//! loop did (`trace`, the demo run with `LOOP_TRACE=1`).
//!
//! One after another, after the last test, the three made a participant
//! wait 15 to 23 s after a save for a verdict on step 5 (measured in
//! `watch`): 12 s of tests, most of them spent on tests that hang once a
//! wake-up is lost, then 3 s of probe and 2 s of trace. The probe needs
//! only one failure to ask its question, and the demo none, so both start
//! with the first failure; and once the probe has named the function, the
//! tests still running add nothing the verdict needs, so they stop.
//!
//! Most tests wait rather than compute (on timers, on a loop that hangs),
//! so the probe's build beside them costs them little on two cores.

use std::cell::{Cell, OnceCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{Scope, ScopedJoinHandle};

use super::probe::{self, Found};
use super::trace;
use super::verdict::{Suspects, suspects};
use crate::runner::{Cargo, Progress, TestRun};
use crate::step::Step;
use crate::track::Marked;

/// The answers started early, as the verdict takes them: the probe's
/// (with the tests it was asked about), and the demo's trace.
#[derive(Default)]
pub(super) struct Answers<'a> {
    pub probe: Option<(Vec<String>, Found<'a>)>,
    pub trace: Option<Beside>,
}

/// What `trace::beside` answered: the demo's first turn that differs,
/// beside the authors', or `None` when there is nothing to show.
pub(super) struct Beside(pub Option<String>);

/// The probe's and the trace's threads, started by the first failure that
/// a function must answer for.
pub(super) struct Meanwhile<'scope, 'env, 'a> {
    scope: &'scope Scope<'scope, 'env>,
    step: &'env Step,
    cargo: &'env Cargo,
    demo: Option<&'env Cargo>,
    progress: &'env Progress,
    /// The functions the probe chooses among; empty when there is no
    /// question for it (one suspect, or a change outside the functions
    /// that the verdict names first).
    suspects: Vec<&'a Marked>,
    started: Cell<bool>,
    probe: OnceCell<ScopedJoinHandle<'scope, (Vec<String>, Found<'a>)>>,
    trace: OnceCell<ScopedJoinHandle<'scope, Option<String>>>,
    named: Arc<AtomicBool>,
}

impl<'scope, 'env: 'scope, 'a: 'scope> Meanwhile<'scope, 'env, 'a> {
    pub(super) fn new(
        scope: &'scope Scope<'scope, 'env>,
        step: &'env Step,
        marked: &'a [Marked],
        (cargo, demo): (&'env Cargo, Option<&'env Cargo>),
        progress: &'env Progress,
    ) -> Self {
        let suspects = match suspects(step, marked) {
            Suspects::Several(several)
                if crate::changes::before_blaming(step).is_none() =>
            {
                several
            }
            _ => Vec::new(),
        };
        Meanwhile {
            scope,
            step,
            cargo,
            demo,
            progress,
            suspects,
            started: Cell::new(false),
            probe: OnceCell::new(),
            trace: OnceCell::new(),
            named: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Looks at the tests ended so far: at the first failure a function
    /// must answer for, starts the probe and the demo's trace.
    pub(super) fn look_at(&self, runs: &[TestRun]) {
        if self.started.get() {
            return;
        }
        let failing: Vec<TestRun> = runs
            .iter()
            .filter(|run| to_answer_for(run))
            .cloned()
            .collect();
        if failing.is_empty() {
            return;
        }
        self.started.set(true);
        if let Some(demo) = self.demo {
            let (step, progress) = (self.step, self.progress);
            let _ = self.trace.set(
                self.scope
                    .spawn(move || trace::beside(step, demo, progress)),
            );
        }
        if !self.suspects.is_empty() {
            let (step, cargo, progress) = (self.step, self.cargo, self.progress);
            let suspects = self.suspects.clone();
            let named = Arc::clone(&self.named);
            let _ = self.probe.set(self.scope.spawn(move || {
                let asked: Vec<&TestRun> = failing.iter().collect();
                let found = probe::find(step, cargo, &suspects, &asked, progress);
                named.store(matches!(found, Found::Culprit(_)), Ordering::SeqCst);
                (failing.iter().map(|run| run.case.id()).collect(), found)
            }));
        }
    }

    /// Whether the probe has named the function: the tests still running
    /// can stop.
    pub(super) fn named_the_function(&self) -> bool {
        self.named.load(Ordering::SeqCst)
    }

    /// The answers, once their threads have ended.
    pub(super) fn answers(self) -> Answers<'a> {
        Answers {
            probe: self.probe.into_inner().and_then(|probe| probe.join().ok()),
            trace: self
                .trace
                .into_inner()
                .and_then(|trace| trace.join().ok())
                .map(Beside),
        }
    }
}

/// A failure a written function must answer for: not a blank function's
/// `todo!()`, which names itself, nor only lines the participant's own
/// prints added to a pinned output.
fn to_answer_for(run: &TestRun) -> bool {
    !run.outcome.passed()
        && !run.only_lines_added()
        && !run.outcome.message().contains("not yet implemented")
}
