//! What a verdict on a failure needs besides the tests, started while they
//! still run: with the tests, the probe's copy, built with each suspect's
//! switch (`probe::build_ahead`); with the first failure, the demo's trace
//! (`trace`); with enough failures, or once every test running seems stuck,
//! the probe's question. One after another, after the last test, they held
//! a verdict long after the tests had said enough; most tests wait rather
//! than compute, so the work beside them costs them little.

use std::cell::{Cell, OnceCell, RefCell};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use super::probe::{self, Found};
use super::trace;
use super::verdict::{Suspects, suspects};
use crate::runner::{
    self, Cargo, Outcome, PAUSED_AT_MOST, Progress, SoFar, TestCase, TestRun,
};
use crate::step::Step;
use crate::track::Marked;

/// The answers started early, as the verdict takes them: the probe's
/// (with the tests it was asked about), and the demo's trace.
#[derive(Default)]
pub(super) struct Answers<'a> {
    pub probe: Option<(Vec<String>, Found<'a>)>,
    pub trace: Option<Beside>,
    /// The tests the probe was asked about while they seemed stuck, as
    /// stopped when asked, if it named the function: the tests still
    /// running then stopped, so these are the failures it answers for.
    pub stuck: Vec<TestRun>,
}

/// What `trace::beside` answered: the demo's first turn that differs,
/// beside the authors', or `None` when there is nothing to show.
pub(super) struct Beside(pub Option<String>);

/// The threads of the probe's copy (started with the tests), of the trace
/// (with the first failure) and of the probe (with enough failures).
pub(super) struct Meanwhile<'scope, 'env, 'a> {
    scope: &'scope Scope<'scope, 'env>,
    step: &'env Step,
    cargo: &'env Cargo,
    progress: &'env Progress,
    /// The folder of the step's programs, for the demo's trace, if a
    /// written function may be blamed (the trace is shown only beside one).
    demo: Option<&'env Path>,
    /// The functions the probe chooses among; empty when there is no
    /// question for it (one suspect, or a change outside the functions
    /// that the verdict names first).
    suspects: Vec<&'a Marked>,
    /// The tests the markers name, which run first.
    own_tests: Vec<String>,
    first_failure: Cell<Option<Instant>>,
    /// The probe's copy, being made ready, until the probe takes it.
    copy:
        Cell<Option<ScopedJoinHandle<'scope, Result<probe::WorkshopCopy, String>>>>,
    /// Whether the failures the probe was asked about were all hangs.
    asked_about_hangs: Cell<bool>,
    /// The tests the probe was asked about while they still ran, stuck.
    asked_while_stuck: RefCell<Vec<TestRun>>,
    probe: OnceCell<ScopedJoinHandle<'scope, (Vec<String>, Found<'a>)>>,
    /// The demo's thread, and when it started.
    trace: OnceCell<(Instant, ScopedJoinHandle<'scope, Option<String>>)>,
    /// Set when the verdict will wait no longer for the demo's trace.
    trace_enough: Arc<AtomicBool>,
    named: Arc<AtomicBool>,
}

impl<'scope, 'env: 'scope, 'a: 'scope> Meanwhile<'scope, 'env, 'a> {
    pub(super) fn new(
        scope: &'scope Scope<'scope, 'env>,
        step: &'env Step,
        marked: &'a [Marked],
        (cargo, demo): (&'env Cargo, Option<&'env Path>),
        progress: &'env Progress,
    ) -> Self {
        let suspected = suspects(step, marked);
        let blame_possible = !matches!(suspected, Suspects::None);
        let suspects = match suspected {
            Suspects::Several(several)
                if crate::changes::before_blaming(step).is_none() =>
            {
                several
            }
            _ => Vec::new(),
        };
        let copy = (!suspects.is_empty()).then(|| {
            let (suspects, files) = (suspects.clone(), own_test_files(marked));
            scope.spawn(move || {
                let copy = probe::prepare(step, cargo, progress)?;
                probe::build_ahead(step, &copy, &suspects, &files);
                Ok(copy)
            })
        });
        Meanwhile {
            scope,
            step,
            cargo,
            progress,
            demo: demo.filter(|_| blame_possible),
            suspects,
            own_tests: marked.iter().map(|m| m.test.clone()).collect(),
            first_failure: Cell::new(None),
            copy: Cell::new(copy),
            asked_about_hangs: Cell::new(false),
            asked_while_stuck: RefCell::new(Vec::new()),
            probe: OnceCell::new(),
            trace: OnceCell::new(),
            trace_enough: Arc::new(AtomicBool::new(false)),
            named: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Looks at the tests so far: at the first failure a function must
    /// answer for, or once the tests running seem stuck, runs the demo;
    /// once the failures are enough (`enough_to_ask`), or the tests seem
    /// stuck with none failed, asks the probe.
    pub(super) fn look_at(&self, so_far: &SoFar) {
        if self.probe.get().is_some() {
            return;
        }
        let mut failing: Vec<TestRun> = so_far
            .runs
            .iter()
            .filter(|run| to_answer_for(run))
            .cloned()
            .collect();
        if !failing.is_empty() || so_far.seem_stuck {
            self.run_the_demo();
        }
        if self.suspects.is_empty() {
            return;
        }
        let about_stuck = failing.is_empty() && so_far.seem_stuck;
        if about_stuck {
            failing = stopped_as_they_are(&so_far.running);
            if failing.is_empty() {
                return;
            }
            self.asked_while_stuck.replace(failing.clone());
        } else if !self.enough_to_ask(&failing, so_far.runs) {
            return;
        }
        self.asked_about_hangs
            .set(failing.iter().all(TestRun::hung));
        let (step, cargo, progress) = (self.step, self.cargo, self.progress);
        let suspects = self.suspects.clone();
        let named = Arc::clone(&self.named);
        let copy = self.copy.take();
        // Tests stuck in a spin take the processor from the probe.
        let paused = about_stuck.then(|| {
            let paused = runner::Paused::now();
            paused.at_most(PAUSED_AT_MOST);
            paused
        });
        let _ = self.probe.set(self.scope.spawn(move || {
            let _paused = paused;
            let asked: Vec<&TestRun> = failing.iter().collect();
            let copy = match copy {
                Some(preparing) => preparing.join().unwrap_or_else(|_| {
                    Err("making the probe's copy ready failed".to_owned())
                }),
                None => probe::prepare(step, cargo, progress),
            };
            let found = probe::find_in(step, copy, &suspects, &asked, progress);
            named.store(matches!(found, Found::Culprit(_)), Ordering::SeqCst);
            (failing.iter().map(|run| run.case.id()).collect(), found)
        }));
    }

    /// Runs the demo for its trace, once, quietly: nobody needs to hear of
    /// it unless a function is blamed. Not with the tests: a step that
    /// passes would pay for it.
    fn run_the_demo(&self) {
        let Some(demo) = self.demo else {
            return;
        };
        let (step, enough) = (self.step, Arc::clone(&self.trace_enough));
        let _ = self.trace.get_or_init(|| {
            let thread = self.scope.spawn(move || {
                trace::beside(step, demo, &Progress::new(true), &enough)
            });
            (Instant::now(), thread)
        });
    }

    /// Whether `failing` are enough for the probe's question: as many as it
    /// reruns (`probe::RERUN`) of one file; or all the markers' tests have
    /// ended; or a test hung (hangs come together, and each more costs a
    /// deadline); or the first failure has waited `LONE_FAILURE` for
    /// company. Asked about one quick failure at once, a test whose failure
    /// comes and goes could pass with the wrong suspect's switch.
    fn enough_to_ask(&self, failing: &[TestRun], runs: &[TestRun]) -> bool {
        if failing.is_empty() {
            return false;
        }
        let first = self.first_failure.get().unwrap_or_else(Instant::now);
        self.first_failure.set(Some(first));
        let of_one_file = failing.iter().any(|run| {
            failing
                .iter()
                .filter(|other| other.case.file == run.case.file)
                .count()
                >= probe::RERUN
        });
        let own_ended = self
            .own_tests
            .iter()
            .all(|id| runs.iter().any(|run| run.case.id() == *id));
        of_one_file
            || own_ended
            || failing.iter().any(TestRun::hung)
            || first.elapsed() >= LONE_FAILURE
    }

    /// Whether the probe has named the function: the tests still running
    /// can stop.
    pub(super) fn named_the_function(&self) -> bool {
        self.named.load(Ordering::SeqCst)
    }

    /// Whether the probe is asking about tests that hung: the tests left
    /// then run hurried (`HURRIED`), as many at once in a loop that spins
    /// took the cores from the probe's build.
    pub(super) fn asking_about_hangs(&self) -> bool {
        self.asked_about_hangs.get()
    }

    /// The answers, once their threads have ended: the demo's trace is
    /// waited for until `TRACE_SPAN` after the demo started when a test
    /// `failed`, else not at all (it is shown only beside a function
    /// blamed).
    pub(super) fn answers(self, failed: bool) -> Answers<'a> {
        // Made ready for a probe that was not needed: let go of it.
        if let Some(preparing) = self.copy.take() {
            let _ = preparing.join();
        }
        let probe = self.probe.into_inner().and_then(|probe| probe.join().ok());
        // Tests stuck in the loop: so is the demo, most likely, and it was
        // stopped with them while the probe asked.
        let stuck = !self.asked_while_stuck.borrow().is_empty();
        let trace = self.trace.into_inner().and_then(|(began, trace)| {
            let span = if failed && !stuck {
                TRACE_SPAN
            } else {
                Duration::ZERO
            };
            while !trace.is_finished() && began.elapsed() < span {
                thread::sleep(Duration::from_millis(20));
            }
            self.trace_enough.store(true, Ordering::SeqCst);
            trace.join().ok()
        });
        let named = matches!(probe, Some((_, Found::Culprit(_))));
        // Asked about tests only stuck, it named nothing: should they hang
        // for real, the probe after them asks with their real times.
        let probe = probe.filter(|_| named || !stuck);
        Answers {
            probe,
            trace: trace.map(Beside),
            stuck: if named {
                self.asked_while_stuck.take()
            } else {
                Vec::new()
            },
        }
    }
}

/// The tests running, all `SLOW` or more, as if stopped now: the probe is
/// asked about them before they hang to their guard (`PATIENCE`). It
/// counts a switched rerun as passing only when it took well under this
/// (`probe::Probe::quick_enough`).
fn stopped_as_they_are(stuck: &[(TestCase, Duration)]) -> Vec<TestRun> {
    stuck
        .iter()
        .map(|(case, took)| TestRun {
            case: case.clone(),
            outcome: Outcome::TimedOut(*took),
            took: *took,
        })
        .collect()
}

/// How long the first failure waits for a second before the probe is
/// asked about it alone: failures that come together come within a second.
const LONE_FAILURE: Duration = Duration::from_secs(1);

/// How long after the demo started a verdict otherwise ready waits for its
/// trace: a demo that hangs before the part the tests pin has nothing to
/// show, and one that parts from the authors' is stopped there already.
const TRACE_SPAN: Duration = Duration::from_secs(3);

/// The test files of the tests the markers name: they run first, so the
/// first failure is most often theirs, and the probe reruns it there.
fn own_test_files(marked: &[Marked]) -> Vec<String> {
    let mut files: Vec<String> = marked
        .iter()
        .filter_map(|m| m.test.split_once("::").map(|(file, _)| file.to_owned()))
        .collect();
    files.sort_unstable();
    files.dedup();
    files
}

/// A failure a written function must answer for: not a blank function's
/// `todo!()`, which names itself, nor only lines the participant's own
/// prints added to a pinned output.
fn to_answer_for(run: &TestRun) -> bool {
    !run.outcome.passed()
        && !run.only_lines_added()
        && !run.outcome.message().contains("not yet implemented")
}
