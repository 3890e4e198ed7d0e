//! One build answers for every suspect: each holds both bodies, the
//! authors' and the participant's, behind a switch the rerun test's
//! environment sets, so the reruns of all suspects run side by side and
//! stop once one suspect's switch makes them all pass.

use std::fs;
use std::path::{Path, PathBuf};

use super::super::{Blame, authors_body, hand_programs_to, machine_trouble};
use super::{Found, Probe};
use crate::runner::{
    self, Cargo, PROBE_DEADLINE, Progress, RERUNS_AT_ONCE, Settings, TestCase,
    TestRun,
};
use crate::step::Step;
use crate::track::{self, Marked};

/// Set in a rerun test's environment: the place in the track of the
/// suspect whose authors' body the switching copy runs; unset, it runs
/// the participant's own.
pub(super) const AUTHORS_BODY: &str = "WORKSHOP_AUTHORS_BODY";

/// One build of a copy in which every suspect holds both bodies, the
/// authors' and the participant's, and a switch (`AUTHORS_BODY`) between
/// them; then every rerun at once, stopped as soon as one suspect's
/// switch makes them all pass. A build per suspect, one after another,
/// took 9-15 s each. `None` if the switching copy does not build (the
/// authors' body may call what the participant's file no longer has).
pub(super) fn all_at_once<'a>(
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
    let Ok(Some((rerun, programs))) = built else {
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
    hand_programs_to(&mut settings, Some(&programs));
    // A wrong suspect's reruns hang as the participant's did, to the
    // deadline: all at once, the culprit's are not queued behind them.
    settings.at_once = cases.len().min(RERUNS_AT_ONCE);
    let ran =
        runner::run_tests_until(&cases, &settings, &Progress::new(true), |so_far| {
            Reruns::of(probe, so_far.runs).decided()
        });
    Ok(Some(Reruns::of(probe, &ran.runs).verdict()))
}

/// What the reruns so far say, suspect by suspect.
pub(super) struct Reruns<'p, 'a> {
    probe: &'p Probe<'a>,
    /// The failing tests that also fail rerun as they are (all of them, if
    /// not rerun so), or `None` while those reruns are not all done.
    still_failing: Option<Vec<String>>,
    /// For each suspect, in order: the tests still failing that its
    /// authors' body makes pass, and whether all its reruns are done.
    fixed: Vec<(Vec<String>, bool)>,
}

impl<'p, 'a> Reruns<'p, 'a> {
    pub(super) fn of(probe: &'p Probe<'a>, runs: &[TestRun]) -> Self {
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
    pub(super) fn decided(&self) -> bool {
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
    pub(super) fn verdict(&self) -> Found<'a> {
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
pub(super) fn blame(
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
        // Written again the same (by `build_ahead`, then by the probe of
        // the same check), it would look newer to Cargo than its build, and
        // be built again. (Not across checks: each check makes the copy's
        // sources and build the participant's again, `prepare_copy`, and
        // Cargo must then see the switches as new.)
        if fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            fs::write(&path, &*text)
                .map_err(|err| format!("{}: {err}", path.display()))?;
        }
        *text = theirs;
    }
    Ok(Some(switched))
}

/// A body that runs the authors' `authors` when `AUTHORS_BODY` is `order`
/// and the participant's `theirs` otherwise. The answer is kept in a
/// static: a function the tests call a million times reads the
/// environment once.
pub(super) fn switch(order: usize, authors: &str, theirs: &str) -> String {
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

/// Builds the switching copy and the test files `files` in it, before any
/// test has failed, so that the probe that follows finds them built and
/// only reruns (see `probe::build_ahead`). Whatever fails here, the probe
/// meets again and says.
pub(super) fn build_ahead(
    step: &Step,
    copy: &Path,
    copy_cargo: &Cargo,
    suspects: &[&Marked],
    files: &[String],
) {
    let quiet = Progress::new(true);
    if !matches!(write_switches(step, copy, suspects), Ok(Some(_))) {
        return;
    }
    if matches!(runner::build_tests(copy_cargo, files, &quiet), Ok(Ok(_))) {
        if let Ok(programs) =
            runner::build_programs(copy_cargo, &step.package(), &quiet)
        {
            runner::remove_programs(&programs);
        }
    }
}

/// Builds the copy's tests of `cases`; the same cases, in the copy's
/// executables. `None` if the code does not compile (an authors' body may
/// call what the participant's file no longer has); `Err` if the build
/// failed for want of the machine's means (no space left, Cargo gone).
pub(super) fn build_rerun(
    step: &Step,
    cargo: &Cargo,
    cases: &[TestCase],
    progress: &Progress,
) -> Result<Option<(Vec<TestCase>, PathBuf)>, String> {
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
    let programs = match runner::build_programs(cargo, &step.package(), progress) {
        Ok(folder) => folder,
        Err(error) if machine_trouble(&error).is_some() => return Err(error),
        Err(_) => return Ok(None),
    };
    let cases = cases
        .iter()
        .map(|case| {
            let binary = built.binaries.iter().find(|b| b.file == case.file)?;
            Some(TestCase {
                binary: binary.path.clone(),
                ..case.clone()
            })
        })
        .collect::<Option<Vec<_>>>();
    Ok(cases.map(|cases| (cases, programs)))
}
