//! Which written function the failing tests come from, when more than one
//! differs from the authors' version: put the authors' body back for one
//! function and rerun only the failing tests; the function whose original
//! makes them pass is the one to fix.
//!
//! A test cannot say it alone: every timer test runs `call_at`, `Timer::cmp`
//! and the turn together, and a mistake in any of them fails it. Putting
//! one back at a time asks the code itself. It happens in a copy of the
//! repository (never in the participant's files), in the target folder
//! (`workshop-probe/stepNN/`, one per step, so that checks of two steps
//! at once never meet, and held by one check at a time: `lock`), built in
//! a target folder of its own: the copy's paths differ, so sharing
//! Cargo's would overwrite the participant's binaries. The copy's build
//! starts from the participant's (`seed`).
//!
//! When the probe's own machinery fails (the copy cannot be written, the
//! disk is full, Cargo cannot run), that is the verdict: a failure of the
//! tool, with the path and what to do, never a word about the
//! participant's code.
//!
//! One build answers for every suspect: each holds both bodies, the
//! authors' and the participant's, behind a switch the rerun test's
//! environment sets, so the reruns of all suspects run side by side and
//! stop once one suspect's switch makes them all pass. Only when that copy
//! does not build (an authors' body may call a helper the participant's
//! file no longer has) is each suspect built and rerun alone.

use std::fs;
use std::path::Path;

use crate::runner::{
    self, Cargo, PROBE_DEADLINE, Progress, RERUNS_AT_ONCE, Settings, TestCase,
    TestRun,
};
use crate::track::{self, Marked};
use crate::warm_copy;

use super::lock;
use super::{Blame, authors_body, authors_function, machine_trouble};
use crate::step::Step;

/// How many failing tests are rerun for each suspect (and as they are).
const RERUN: usize = 2;

/// What putting the authors' functions back found.
pub enum Found<'a> {
    /// The suspect whose original makes the most failing tests pass (all,
    /// if any does).
    Culprit(Blame<'a>),
    /// The failing tests pass when rerun as they are.
    PassedOnRerun,
    /// No one suspect's original makes any pass.
    Nothing,
    /// The probe itself could not work: what to tell the participant.
    ToolFailed(String),
}

/// Which of `suspects` the `failing` tests come from.
pub fn find<'a>(
    step: &Step,
    cargo: &Cargo,
    suspects: &[&'a Marked],
    failing: &[&TestRun],
    progress: &Progress,
) -> Found<'a> {
    match find_in_copy(step, cargo, suspects, failing, progress) {
        Ok(found) => found,
        Err(failure) => Found::ToolFailed(failure),
    }
}

/// `find`, with the failures of the probe's own machinery as `Err`: what
/// to tell the participant.
fn find_in_copy<'a>(
    step: &Step,
    cargo: &Cargo,
    suspects: &[&'a Marked],
    failing: &[&TestRun],
    progress: &Progress,
) -> Result<Found<'a>, String> {
    let target = cargo.target_dir().map_err(|err| {
        tool_failed(step, "find the folder Cargo builds in", None, &err)
    })?;
    let probes = target.join("workshop-probe");
    let probe = probes.join(step.package());
    let copy = probe.join("workspace");
    let _held = hold_the_copy(step, &probes, progress)?;
    prepare_copy(step, &target, &probe).map_err(|err| {
        tool_failed(
            step,
            "copy your workshop to try the authors' functions in",
            Some(&probe),
            &err,
        )
    })?;
    let copy_cargo = Cargo {
        root: copy.clone(),
        target_dir: Some(probe.join("target")),
    };
    let rerun = tests_to_rerun(failing);
    // A quick failure that passes when rerun as it is (a timing test on a
    // busy machine) cannot tell one function from another. A hang does not
    // come and go, so it is spared the extra run.
    let as_they_are = !failing
        .iter()
        .any(|run| run.hung() && rerun.contains(&run.case));
    let suspects = in_likely_order(suspects, failing);
    let probe = Probe {
        rerun,
        as_they_are,
        suspects,
    };
    progress.say(&format!(
        "which function? a copy of your code that can switch each of the {} \
         that differ from the authors' to their version",
        probe.suspects.len()
    ));
    let in_copy = |err: String| {
        tool_failed(step, "build the copy of your workshop", Some(&copy), &err)
    };
    if let Some(found) =
        all_at_once(step, &copy, &copy_cargo, &probe, progress).map_err(in_copy)?
    {
        return Ok(found);
    }
    progress.say("the switching copy did not build: one function at a time");
    one_at_a_time(step, &copy, &copy_cargo, probe, progress).map_err(in_copy)
}

/// Holds the step's copy for this check alone: another check of the same
/// step (a second terminal) waits here, and says so.
fn hold_the_copy(
    step: &Step,
    probes: &Path,
    progress: &Progress,
) -> Result<lock::Held, String> {
    let lock_file = probes.join(format!("{}.lock", step.package()));
    fs::create_dir_all(probes)
        .and_then(|()| {
            lock::hold(&lock_file, || {
                progress.say(&format!(
                    "waiting for another check of step {} in this workshop to \
                     finish with its copy ({})",
                    step.number,
                    lock_file.display()
                ));
            })
        })
        .map_err(|err| {
            tool_failed(
                step,
                "take its turn at the copy",
                Some(&lock_file),
                &err.to_string(),
            )
        })
}

/// What the participant reads when the probe's own machinery fails: what
/// the tool tried, where, what the system said, and what to do; never a
/// word about their code.
fn tool_failed(step: &Step, tried: &str, at: Option<&Path>, error: &str) -> String {
    let n = step.number;
    let place = at
        .map(|path| format!(" ({})", path.display()))
        .unwrap_or_default();
    let advice = match (machine_trouble(error), at) {
        (Some(trouble), _) => format!(
            "{trouble}: make room, then run `cargo workshop check {n}` again"
        ),
        (None, Some(path)) => format!(
            "remove {} and run `cargo workshop check {n}` again",
            path.display()
        ),
        (None, None) => format!("run `cargo workshop check {n}` again"),
    };
    format!(
        "Some tests of step {n} fail, and more than one of your functions \
         differs from the authors', so `cargo workshop` tries the authors' \
         version of each in a copy to tell which is wrong. It could not: it \
         could not {tried}{place}:\n\n    {}\n\nThis is about the tool's \
         own files, not your code: no function is blamed. To go on, {advice}.",
        error.trim().replace('\n', "\n    ")
    )
}

/// What the probe reruns: the failing tests, once as they are (unless one
/// hung) and once with each suspect's authors' body, likeliest first.
struct Probe<'a> {
    rerun: Vec<TestCase>,
    as_they_are: bool,
    suspects: Vec<&'a Marked>,
}

/// Set in a rerun test's environment: the place in the track of the
/// suspect whose authors' body the switching copy runs; unset, it runs
/// the participant's own.
const AUTHORS_BODY: &str = "WORKSHOP_AUTHORS_BODY";

/// One build of a copy in which every suspect holds both bodies, the
/// authors' and the participant's, and a switch (`AUTHORS_BODY`) between
/// them; then every rerun at once, stopped as soon as one suspect's
/// switch makes them all pass. A build per suspect, one after another,
/// took 9-15 s each. `None` if the switching copy does not build (the
/// authors' body may call what the participant's file no longer has).
fn all_at_once<'a>(
    step: &Step,
    copy: &Path,
    copy_cargo: &Cargo,
    probe: &Probe<'a>,
    progress: &Progress,
) -> Result<Option<Found<'a>>, String> {
    let Some(switched) = write_switches(step, copy, &probe.suspects)? else {
        return Ok(None);
    };
    let built = build_rerun(step, copy_cargo, &probe.rerun, progress);
    let Ok(Some(rerun)) = built else {
        put_back(step, copy, &switched);
        return built.map(|_| None);
    };
    let mut cases = Vec::new();
    if probe.as_they_are {
        cases.extend(rerun.iter().cloned());
    }
    for suspect in &probe.suspects {
        cases.extend(rerun.iter().map(|case| TestCase {
            env: vec![(AUTHORS_BODY.to_owned(), suspect.order.to_string())],
            ..case.clone()
        }));
    }
    let mut settings = Settings::new(copy_cargo, PROBE_DEADLINE);
    // A wrong suspect's reruns hang as the participant's did, to the
    // deadline: all at once, the culprit's are not queued behind them.
    settings.at_once = cases.len().min(RERUNS_AT_ONCE);
    let ran = runner::run_tests_until(
        &cases,
        &settings,
        &Progress::new(true),
        |runs, _| Reruns::of(probe, runs).decided(),
    );
    Ok(Some(Reruns::of(probe, &ran.runs).verdict()))
}

/// What the reruns so far say, suspect by suspect.
struct Reruns<'p, 'a> {
    probe: &'p Probe<'a>,
    /// The failing tests that also fail rerun as they are (all of them, if
    /// not rerun so), or `None` while those reruns are not all done.
    still_failing: Option<Vec<String>>,
    /// For each suspect, in order: the tests still failing that its
    /// authors' body makes pass, and whether all its reruns are done.
    fixed: Vec<(Vec<String>, bool)>,
}

impl<'p, 'a> Reruns<'p, 'a> {
    fn of(probe: &'p Probe<'a>, runs: &[TestRun]) -> Self {
        let outcome = |case: &TestCase, switch: Option<&Marked>| {
            runs.iter()
                .find(|run| {
                    run.case.id() == case.id()
                        && switched_to(&run.case) == switch.map(|m| m.order)
                })
                .map(|run| {
                    run.outcome.passed()
                        || run.outcome.message().contains("not yet implemented")
                })
        };
        let still_failing = if probe.as_they_are {
            probe
                .rerun
                .iter()
                .map(|case| Some((case.id(), outcome(case, None)?)))
                .collect::<Option<Vec<_>>>()
                .map(|all| {
                    all.into_iter()
                        .filter(|(_, passed)| !passed)
                        .map(|(id, _)| id)
                        .collect()
                })
        } else {
            Some(probe.rerun.iter().map(TestCase::id).collect())
        };
        let fixed = probe
            .suspects
            .iter()
            .map(|suspect| {
                let outcomes: Vec<(String, Option<bool>)> = probe
                    .rerun
                    .iter()
                    .map(|case| (case.id(), outcome(case, Some(suspect))))
                    .collect();
                let done = outcomes.iter().all(|(_, passed)| passed.is_some());
                let passing = outcomes
                    .into_iter()
                    .filter(|(_, passed)| *passed == Some(true))
                    .map(|(id, _)| id)
                    .collect();
                (passing, done)
            })
            .collect();
        Reruns {
            probe,
            still_failing,
            fixed,
        }
    }

    /// Whether nothing left to run could change the verdict: the failures
    /// passed as they are, or one suspect's body makes them all pass.
    fn decided(&self) -> bool {
        let Some(failing) = &self.still_failing else {
            return false;
        };
        failing.is_empty()
            || self
                .fixed
                .iter()
                .any(|(passing, _)| failing.iter().all(|id| passing.contains(id)))
    }

    /// The suspect whose body makes the most of the tests still failing
    /// pass (the likeliest of equals).
    fn verdict(&self) -> Found<'a> {
        let Some(failing) = &self.still_failing else {
            return Found::Nothing;
        };
        if failing.is_empty() {
            return Found::PassedOnRerun;
        }
        let mut best: Option<(&Marked, Vec<String>)> = None;
        for (suspect, (passing, _)) in self.probe.suspects.iter().zip(&self.fixed) {
            let passing: Vec<String> = passing
                .iter()
                .filter(|id| failing.contains(id))
                .cloned()
                .collect();
            if !passing.is_empty()
                && best
                    .as_ref()
                    .is_none_or(|(_, most)| passing.len() > most.len())
            {
                best = Some((suspect, passing));
            }
        }
        match best {
            Some((suspect, passing)) => {
                let all = passing.len() == failing.len();
                Found::Culprit(blame(suspect, passing, all, failing.len()))
            }
            None => Found::Nothing,
        }
    }
}

/// Which suspect's switch a rerun had on, if any.
fn switched_to(case: &TestCase) -> Option<usize> {
    case.env
        .iter()
        .find(|(key, _)| key == AUTHORS_BODY)
        .and_then(|(_, order)| order.parse().ok())
}

/// The blame for `suspect`, whose authors' body made `passing` pass, of
/// `rerun` failing tests.
fn blame(
    suspect: &Marked,
    passing: Vec<String>,
    all: bool,
    rerun: usize,
) -> Blame<'_> {
    Blame {
        function: suspect,
        why: format!(
            "with the authors' `{}` put back in a copy of your code, {} \
             failing test{} rerun there no longer fail{} this way",
            suspect.function,
            if all { "the" } else { "some" },
            if rerun == 1 { "" } else { "s" },
            if rerun == 1 { "s" } else { "" },
        ),
        tests: passing,
    }
}

/// Writes each suspect into the copy with both bodies and the switch
/// between them. The files written, with the participant's text of each;
/// `None` if a body cannot be found (nothing is written then); `Err` if
/// the copy cannot be written.
fn write_switches(
    step: &Step,
    copy: &Path,
    suspects: &[&Marked],
) -> Result<Option<Vec<(String, String)>>, String> {
    let mut files: Vec<&str> = suspects.iter().map(|m| m.file.as_str()).collect();
    files.sort_unstable();
    files.dedup();
    let mut switched = Vec::new();
    for file in files {
        let theirs = step.read(file);
        let Ok(mut found) = track::markers_in(file, &theirs) else {
            return Ok(None);
        };
        found.retain(|m| {
            suspects
                .iter()
                .any(|s| s.file == file && s.order == m.order)
        });
        // From the end of the file: each body's place stays as found.
        found.sort_by_key(|m| std::cmp::Reverse(m.body.start));
        let mut text = theirs.clone();
        for marked in &found {
            let Some(authors) = authors_body(step, marked) else {
                return Ok(None);
            };
            let own = &theirs[marked.body.clone()];
            text.replace_range(
                marked.body.clone(),
                &switch(marked.order, &authors, own),
            );
        }
        switched.push((file.to_owned(), text));
    }
    for (file, text) in &mut switched {
        let theirs = step.read(file);
        let path = copy.join(&step.folder).join(&*file);
        fs::write(&path, &*text)
            .map_err(|err| format!("{}: {err}", path.display()))?;
        *text = theirs;
    }
    Ok(Some(switched))
}

/// A body that runs the authors' `authors` when `AUTHORS_BODY` is `order`
/// and the participant's `theirs` otherwise. The answer is kept in a
/// static: a function the tests call a million times reads the
/// environment once.
fn switch(order: usize, authors: &str, theirs: &str) -> String {
    format!(
        "{{\n    static AUTHORS: ::std::sync::OnceLock<bool> = \
         ::std::sync::OnceLock::new();\n    \
         if *AUTHORS.get_or_init(|| ::std::env::var(\"{AUTHORS_BODY}\")\
         .is_ok_and(|n| n == \"{order}\")) {authors} else {theirs}\n}}"
    )
}

/// Writes the participant's text back over the switched files, as new
/// files (so Cargo rebuilds what was built from the switches).
fn put_back(step: &Step, copy: &Path, switched: &[(String, String)]) {
    for (file, theirs) in switched {
        let _ = fs::write(copy.join(&step.folder).join(file), theirs);
    }
}

/// Builds the copy's tests of `cases`; the same cases, in the copy's
/// executables. `None` if the code does not compile (an authors' body may
/// call what the participant's file no longer has); `Err` if the build
/// failed for want of the machine's means (no space left, Cargo gone).
fn build_rerun(
    step: &Step,
    cargo: &Cargo,
    cases: &[TestCase],
    progress: &Progress,
) -> Result<Option<Vec<TestCase>>, String> {
    let mut files: Vec<String> =
        cases.iter().map(|case| case.file.clone()).collect();
    files.dedup();
    let built = match runner::build_tests(cargo, &files, progress)? {
        Ok(built) => built,
        Err(error) if machine_trouble(&error.message).is_some() => {
            return Err(error.message);
        }
        Err(_) => return Ok(None),
    };
    // The reruns run the step's program too: built now, not in their time.
    match runner::build_programs(cargo, &step.package(), progress) {
        Ok(()) => {}
        Err(error) if machine_trouble(&error).is_some() => return Err(error),
        Err(_) => return Ok(None),
    }
    Ok(cases
        .iter()
        .map(|case| {
            let binary = built.binaries.iter().find(|b| b.file == case.file)?;
            Some(TestCase {
                binary: binary.path.clone(),
                ..case.clone()
            })
        })
        .collect())
}

/// The way before the switching copy, kept for when it does not build:
/// the authors' body put back for one suspect at a time, a build each.
fn one_at_a_time<'a>(
    step: &Step,
    copy: &Path,
    copy_cargo: &Cargo,
    probe: Probe<'a>,
    progress: &Progress,
) -> Result<Found<'a>, String> {
    let mut rerun = probe.rerun;
    if probe.as_they_are {
        progress.say("rerunning the failures in a copy");
        let passing = rerun_in_copy(step, copy_cargo, &rerun, progress)?;
        rerun.retain(|case| !passing.contains(&case.id()));
        if rerun.is_empty() {
            return Ok(Found::PassedOnRerun);
        }
    }
    let mut best: Option<Blame<'a>> = None;
    let count = probe.suspects.len();
    for (index, suspect) in probe.suspects.into_iter().enumerate() {
        progress.say(&format!(
            "which function? the authors' `{}` in a copy ({} of {count})",
            suspect.function,
            index + 1,
        ));
        let passing = with_authors(step, copy, suspect, || {
            rerun_in_copy(step, copy_cargo, &rerun, progress)
        })?;
        if passing.is_empty()
            || best
                .as_ref()
                .is_some_and(|b| b.tests.len() >= passing.len())
        {
            continue;
        }
        let all = passing.len() == rerun.len();
        best = Some(blame(suspect, passing, all, rerun.len()));
        if all {
            break;
        }
    }
    Ok(best.map_or(Found::Nothing, Found::Culprit))
}

/// Says the probe folder was seeded from the participant's build.
const SEEDED: &str = "seeded";

/// Brings the copy of the repository up to date, and its build folder
/// from the participant's (an older probe folder, built from nothing, is
/// replaced whole).
fn prepare_copy(step: &Step, target: &Path, probe: &Path) -> Result<(), String> {
    forget_the_shared_copy(probe);
    if !probe.join(SEEDED).is_file() {
        let _ = fs::remove_dir_all(probe);
    }
    warm_copy::sync_tree(&step.root, &probe.join("workspace"))?;
    warm_copy::seed(target, &probe.join("target"))?;
    fs::write(probe.join(SEEDED), "").map_err(|err| format!("{err}"))
}

/// Removes the one copy that every step's probe shared before each had its
/// own (`workshop-probe/workspace`, `target` and `seeded`): it would only
/// take room.
fn forget_the_shared_copy(probe: &Path) {
    let Some(probes) = probe.parent() else {
        return;
    };
    if probes.join(SEEDED).is_file() {
        let _ = fs::remove_dir_all(probes.join("workspace"));
        let _ = fs::remove_dir_all(probes.join("target"));
        let _ = fs::remove_file(probes.join(SEEDED));
    }
}

/// The failing tests to rerun: the quickest first, hangs last, and of one
/// file: the copy's build makes the executable of every file rerun, and
/// a second file cost more build than its rerun told.
fn tests_to_rerun(failing: &[&TestRun]) -> Vec<TestCase> {
    let mut sorted = failing.to_vec();
    sorted.sort_by_key(|run| (run.hung(), run.took));
    let Some(first) = sorted.first() else {
        return Vec::new();
    };
    let file = first.case.file.clone();
    sorted
        .iter()
        .filter(|run| run.case.file == file)
        .take(RERUN)
        .map(|run| run.case.clone())
        .collect()
}

/// Suspects whose own test (the marker's) fails first: the likeliest.
fn in_likely_order<'a>(
    suspects: &[&'a Marked],
    failing: &[&TestRun],
) -> Vec<&'a Marked> {
    let mut ordered = suspects.to_vec();
    ordered.sort_by_key(|m| !failing.iter().any(|run| run.case.id() == m.test));
    ordered
}

/// Runs `work` with the authors' body of `suspect` in the copy, then puts
/// the participant's back there.
fn with_authors(
    step: &Step,
    copy: &Path,
    suspect: &Marked,
    work: impl FnOnce() -> Result<Vec<String>, String>,
) -> Result<Vec<String>, String> {
    let path = copy.join(&step.folder).join(&suspect.file);
    let theirs = step.read(&suspect.file);
    // Signature and body: the participant's signature (`self` where the
    // authors' body needs `mut self`) may not fit the authors' body.
    let Some(original) = authors_function(step, suspect) else {
        return Ok(Vec::new());
    };
    let Some(whole) = track::markers_in(&suspect.file, &theirs)
        .ok()
        .and_then(|found| found.into_iter().find(|m| m.order == suspect.order))
        .map(|m| m.whole())
    else {
        return Ok(Vec::new());
    };
    let mut substituted = theirs.clone();
    substituted.replace_range(whole, &original);
    fs::write(&path, substituted)
        .map_err(|err| format!("{}: {err}", path.display()))?;
    let passing = work();
    let _ = fs::write(&path, theirs);
    passing
}

/// Builds the copy's tests and reruns `cases` there: the ones whose
/// failure is gone. A test that now stops at a blank function's `todo!()`
/// counts: what is left is a function not written yet.
fn rerun_in_copy(
    step: &Step,
    cargo: &Cargo,
    cases: &[TestCase],
    progress: &Progress,
) -> Result<Vec<String>, String> {
    let Some(in_copy) = build_rerun(step, cargo, cases, progress)? else {
        return Ok(Vec::new());
    };
    let settings = Settings::new(cargo, PROBE_DEADLINE);
    Ok(runner::run_tests(&in_copy, &settings, &Progress::new(true))
        .runs
        .iter()
        .filter(|run| {
            run.outcome.passed()
                || run.outcome.message().contains("not yet implemented")
        })
        .map(|run| run.case.id())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Outcome;
    use std::path::PathBuf;
    use std::time::Duration;

    fn suspect(order: usize, function: &str) -> Marked {
        Marked {
            file: "src/lib.rs".to_owned(),
            line: order * 10,
            order,
            total: 3,
            chapter: 3,
            section: "The idea".to_owned(),
            test: format!("step03_timers::own_test_of_{order}"),
            function: function.to_owned(),
            doc: String::new(),
            signature: 0..0,
            body: 0..0,
        }
    }

    fn case(name: &str) -> TestCase {
        TestCase {
            file: "step03_timers".to_owned(),
            name: name.to_owned(),
            binary: PathBuf::new(),
            env: Vec::new(),
        }
    }

    /// A rerun of `name`, with suspect `order`'s switch on (or none), that
    /// passed or failed.
    fn rerun(name: &str, order: Option<usize>, passed: bool) -> TestRun {
        let mut case = case(name);
        if let Some(order) = order {
            case.env = vec![(AUTHORS_BODY.to_owned(), order.to_string())];
        }
        TestRun {
            case,
            outcome: if passed {
                Outcome::Passed
            } else {
                Outcome::Failed("assertion failed".to_owned())
            },
            took: Duration::from_millis(100),
        }
    }

    fn culprit(found: Found) -> (String, Vec<String>) {
        match found {
            Found::Culprit(blame) => (blame.function.function.clone(), blame.tests),
            Found::PassedOnRerun => panic!("passed on rerun"),
            Found::Nothing => panic!("nothing found"),
            Found::ToolFailed(failure) => panic!("the tool failed: {failure}"),
        }
    }

    #[test]
    fn a_suspect_whose_switch_makes_every_rerun_pass_decides() {
        let (first, second) = (suspect(1, "call_at"), suspect(2, "Timer::cmp"));
        let probe = Probe {
            rerun: vec![case("a"), case("b")],
            as_they_are: true,
            suspects: vec![&first, &second],
        };
        let mut runs = vec![rerun("a", None, false), rerun("b", None, false)];
        runs.push(rerun("a", Some(2), true));
        assert!(!Reruns::of(&probe, &runs).decided(), "b is still to come");
        runs.push(rerun("b", Some(2), true));
        let reruns = Reruns::of(&probe, &runs);
        assert!(reruns.decided());
        let (function, tests) = culprit(reruns.verdict());
        assert_eq!(function, "Timer::cmp");
        assert_eq!(tests, ["step03_timers::a", "step03_timers::b"]);
    }

    #[test]
    fn nothing_is_decided_before_the_reruns_as_they_are_end() {
        let first = suspect(1, "call_at");
        let probe = Probe {
            rerun: vec![case("a")],
            as_they_are: true,
            suspects: vec![&first],
        };
        // The suspect's run came first: the test may pass as it is too.
        let runs = vec![rerun("a", Some(1), true)];
        assert!(!Reruns::of(&probe, &runs).decided());
        let runs = [runs, vec![rerun("a", None, true)]].concat();
        let reruns = Reruns::of(&probe, &runs);
        assert!(reruns.decided());
        assert!(matches!(reruns.verdict(), Found::PassedOnRerun));
    }

    #[test]
    fn a_test_that_passes_as_it_is_counts_for_no_suspect() {
        let (first, second) = (suspect(1, "call_at"), suspect(2, "Timer::cmp"));
        let probe = Probe {
            rerun: vec![case("a"), case("b")],
            as_they_are: true,
            suspects: vec![&first, &second],
        };
        let runs = vec![
            rerun("a", None, true),
            rerun("b", None, false),
            rerun("a", Some(1), true),
            rerun("b", Some(1), false),
            rerun("a", Some(2), true),
            rerun("b", Some(2), true),
        ];
        let (function, tests) = culprit(Reruns::of(&probe, &runs).verdict());
        assert_eq!(function, "Timer::cmp");
        assert_eq!(tests, ["step03_timers::b"]);
    }

    #[test]
    fn of_suspects_that_fix_as_much_the_likeliest_is_blamed() {
        let (first, second) = (suspect(1, "call_at"), suspect(2, "Timer::cmp"));
        let probe = Probe {
            rerun: vec![case("a"), case("b")],
            as_they_are: false,
            suspects: vec![&second, &first],
        };
        let runs = vec![
            rerun("a", Some(1), true),
            rerun("b", Some(1), false),
            rerun("a", Some(2), true),
            rerun("b", Some(2), false),
        ];
        let reruns = Reruns::of(&probe, &runs);
        assert!(!reruns.decided(), "no suspect fixes both");
        let (function, _) = culprit(reruns.verdict());
        assert_eq!(function, "Timer::cmp", "listed first, so likelier");
    }

    #[test]
    fn without_a_rerun_as_they_are_a_hang_is_judged_by_the_switches_alone() {
        let first = suspect(1, "call_at");
        let probe = Probe {
            rerun: vec![case("a")],
            as_they_are: false,
            suspects: vec![&first],
        };
        let reruns = Reruns::of(&probe, &[rerun("a", Some(1), false)]);
        assert!(!reruns.decided());
        assert!(matches!(reruns.verdict(), Found::Nothing));
    }

    #[test]
    fn the_switch_holds_both_bodies_and_reads_its_own_place() {
        let body = switch(4, "{ 1 }", "{ 2 }");
        assert!(body.starts_with('{') && body.ends_with('}'), "{body}");
        assert!(body.contains(r#"n == "4""#), "{body}");
        let authors = body.find("{ 1 }").expect("the authors' body");
        let theirs = body.find("{ 2 }").expect("the participant's body");
        assert!(
            authors < body.find("else").expect("else")
                && body.find("else") < Some(theirs)
        );
    }
}
