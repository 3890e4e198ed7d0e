//! What a verdict on a failure needs besides the tests, started while the
//! tests still run. With the tests, when more than one written function
//! differs from the authors': the probe's copy of the workshop, made
//! ready and built with each suspect's switch (`probe::build_ahead`).
//! With the first failure (or once the tests seem stuck): what the loop
//! did (`trace`, the demo run with `LOOP_TRACE=1`). With enough failures:
//! the probe's question, which function; with none, once every test
//! running seems stuck (`SLOW`), the same question about those, the tests
//! stopped a moment (`runner::Paused`) so that it has the processor.
//!
//! One after another, after the last test, the three made a participant
//! wait 15 to 23 s after a save for a verdict on step 5 (measured in
//! `watch`): 12 s of tests, most of them spent on tests that hang once a
//! wake-up is lost, then 3 to 4 s of probe (its build, mostly) and 2 s of
//! trace, 8 s when the demo hangs too. The probe's build needs no
//! failure, the demo one, and the probe's question one or two; once the
//! probe has named the function, the tests still running add nothing the
//! verdict needs, so they stop.
//!
//! Most tests wait rather than compute (on timers, on sockets, on a loop
//! that hangs), so the build and the demo beside them cost them little on
//! two cores: a step that passes pays about a second for the copy's build,
//! and nothing for the demo.

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

/// The thread that makes the probe's copy ready and builds it.
type Preparing<'scope> =
    ScopedJoinHandle<'scope, Result<probe::WorkshopCopy, String>>;

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
    started: Cell<bool>,
    /// When the first failure to answer for came.
    first_failure: Cell<Option<Instant>>,
    /// The probe's copy, being made ready and built ahead, until the probe
    /// takes it.
    copy: Cell<Option<Preparing<'scope>>>,
    /// Whether the failures the probe was started by were all hangs.
    asked_about_hangs: Cell<bool>,
    /// The tests the probe was asked about while they still ran, stuck.
    asked_while_stuck: RefCell<Vec<TestRun>>,
    probe: OnceCell<ScopedJoinHandle<'scope, (Vec<String>, Found<'a>)>>,
    trace: OnceCell<ScopedJoinHandle<'scope, Option<String>>>,
    /// When the demo for the trace started.
    trace_began: Cell<Option<Instant>>,
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
        // The trace is shown only beside a written function blamed.
        let blame_possible = !matches!(suspected, Suspects::None);
        let suspects = match suspected {
            Suspects::Several(several)
                if crate::changes::before_blaming(step).is_none() =>
            {
                several
            }
            _ => Vec::new(),
        };
        // Made ready and built with the tests: after the first failure, it
        // made a verdict on step 4 or 7 wait 2 to 5 s more; a step that
        // passes pays about a second for it.
        let copy = (!suspects.is_empty()).then(|| {
            let (suspects, files) = (suspects.clone(), own_test_files(marked));
            scope.spawn(move || {
                let copy = probe::prepare(step, cargo, progress)?;
                probe::build_ahead(step, &copy, &suspects, &files);
                Ok(copy)
            })
        });
        Meanwhile {
            copy: Cell::new(copy),
            demo: demo.filter(|_| blame_possible),
            scope,
            step,
            cargo,
            progress,
            suspects,
            own_tests: marked.iter().map(|m| m.test.clone()).collect(),
            started: Cell::new(false),
            first_failure: Cell::new(None),
            asked_about_hangs: Cell::new(false),
            asked_while_stuck: RefCell::new(Vec::new()),
            probe: OnceCell::new(),
            trace: OnceCell::new(),
            trace_began: Cell::new(None),
            trace_enough: Arc::new(AtomicBool::new(false)),
            named: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Looks at the tests so far: at the first failure a function must
    /// answer for, or once the tests running seem stuck, makes the probe's
    /// copy ready and builds it; once the failures are enough to ask the
    /// probe (`enough_to_ask`), starts it.
    pub(super) fn look_at(&self, so_far: &SoFar) {
        if self.started.get() {
            return;
        }
        let failing: Vec<TestRun> = so_far
            .runs
            .iter()
            .filter(|run| to_answer_for(run))
            .cloned()
            .collect();
        if !failing.is_empty() || so_far.seem_stuck {
            self.run_the_demo();
        }
        // Tests that seem stuck, with nothing else failed: the probe is
        // asked about them as they are (`stopped_as_they_are`).
        let about_stuck =
            failing.is_empty() && so_far.seem_stuck && !self.suspects.is_empty();
        let failing = if about_stuck {
            // All running have run `SLOW` or more (`seem_stuck`).
            let stuck = stopped_as_they_are(&so_far.running);
            self.asked_while_stuck.replace(stuck.clone());
            stuck
        } else {
            failing
        };
        let to_ask = if about_stuck {
            !failing.is_empty()
        } else {
            self.enough_to_ask(&failing, so_far.runs)
        };
        if !to_ask {
            return;
        }
        self.started.set(true);
        self.asked_about_hangs
            .set(failing.iter().all(TestRun::hung));
        if !self.suspects.is_empty() {
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
                    Some(preparing) => ready(preparing),
                    None => probe::prepare(step, cargo, progress),
                };
                let found = probe::find_in(step, copy, &suspects, &asked, progress);
                named.store(matches!(found, Found::Culprit(_)), Ordering::SeqCst);
                (failing.iter().map(|run| run.case.id()).collect(), found)
            }));
        }
    }

    /// Runs the demo for its trace, once, quietly: nobody needs to hear of
    /// it unless a function is blamed. Not with the tests: a step that
    /// passes would pay for it (step 3's demo spins half a second of its
    /// 3 s, by design: 1.2 s more to a pass on two cores).
    fn run_the_demo(&self) {
        let Some(demo) = self.demo else {
            return;
        };
        if self.trace.get().is_some() {
            return;
        }
        self.trace_began.set(Some(Instant::now()));
        let (step, enough) = (self.step, Arc::clone(&self.trace_enough));
        let _ = self.trace.set(self.scope.spawn(move || {
            trace::beside(step, demo, &Progress::new(true), &enough)
        }));
    }

    /// Whether `failing` are enough for the probe's question: as many as it
    /// reruns (`probe::RERUN`) of one file, as it asks after the tests; or
    /// all the markers' tests have ended; or a test hung (hangs come
    /// together, and each more costs a deadline); or the first failure has
    /// waited `LONE_FAILURE` for company. Asked about one quick failure at
    /// once, a test whose failure comes and goes (a socket's data there
    /// before the read, or not) could pass with the wrong suspect's switch,
    /// and the wrong function was named; but failures that come together
    /// come within a second, and waiting for a marker's test that hangs
    /// held step 7's verdict 10 s.
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

    /// Whether the probe is asking about tests that hung. The tests left
    /// would then run hurried, looking for a quick failure (`HURRIED`):
    /// many at once, in a step whose loop spins, they took the cores from
    /// the probe's build, and its answer came 6 s after the hangs instead
    /// of 3.
    pub(super) fn asking_about_hangs(&self) -> bool {
        self.asked_about_hangs.get() && self.probe.get().is_some()
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
        let trace = self.trace.into_inner().and_then(|trace| {
            let span = if failed && !stuck {
                TRACE_SPAN
            } else {
                Duration::ZERO
            };
            let began = self.trace_began.get().unwrap_or_else(Instant::now);
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

/// The tests running `SLOW` or more, as if stopped now: the probe is asked
/// about them before they hang to their guard (`PATIENCE`, 12 s from their
/// start, 15 to 17 s from the save): with the copy built ahead, the switch
/// that makes them pass names the function seconds earlier. The probe
/// counts a switched rerun as passing only when it took well under this
/// (`probe::Probe::quick_enough`), so a test that is only slow on a busy
/// machine is not taken for one that never ends.
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
/// asked about it alone (`Meanwhile::enough_to_ask`). Failures that come
/// together come within a second; 2 s held every lone failure's verdict
/// (step 7's slow reader, steps 4 and 8) a second more for nothing.
const LONE_FAILURE: Duration = Duration::from_secs(1);

/// How long after the demo started (with the first failure) a verdict
/// otherwise ready waits for its trace: a demo that hangs before the part
/// the tests pin (step 4's `read_wait` filing its callback as a writer's)
/// has nothing to show, and kept the verdict waiting for
/// `trace::DEMO_LIMIT` (8 s); one that parts from the authors' in a turn
/// it finished is stopped there already. Counted from the probe's answer
/// (2 s then), it held step 4's verdicts 2 s for a part of the demo that
/// most mistakes do not change.
const TRACE_SPAN: Duration = Duration::from_secs(3);

/// The probe's copy, once its thread has made it ready.
fn ready(preparing: Preparing) -> Result<probe::WorkshopCopy, String> {
    preparing
        .join()
        .unwrap_or_else(|_| Err("making the probe's copy ready failed".to_owned()))
}

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
