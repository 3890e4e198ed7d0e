//! The way before the switching copy, kept for when it does not build (an
//! authors' body may call a helper the participant's file no longer has):
//! the authors' function put back for one suspect at a time, a build each.

use std::fs;
use std::path::Path;
use std::time::Duration;

use super::super::{Blame, authors_function, test_settings};
use super::switching::{blame, build_rerun};
use super::{Found, Probe, quick_enough};
use crate::runner::{self, Cargo, PROBE_DEADLINE, Progress, TestCase};
use crate::step::Step;
use crate::track::{self, Marked};

/// The way before the switching copy, kept for when it does not build:
/// the authors' body put back for one suspect at a time, a build each.
pub(super) fn one_at_a_time<'a>(
    step: &Step,
    copy: &Path,
    copy_cargo: &Cargo,
    probe: Probe<'a>,
    progress: &Progress,
) -> Result<Found<'a>, String> {
    let (mut rerun, hung_after) = (probe.rerun, probe.hung_after);
    if probe.as_they_are {
        progress.say("rerunning the failures in a copy");
        let passing = rerun_in_copy(step, copy_cargo, &rerun, None, progress)?;
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
            rerun_in_copy(step, copy_cargo, &rerun, hung_after, progress)
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
    hung_after: Option<Duration>,
    progress: &Progress,
) -> Result<Vec<String>, String> {
    let Some((in_copy, programs)) = build_rerun(step, cargo, cases, progress)?
    else {
        return Ok(Vec::new());
    };
    let settings = test_settings(cargo, PROBE_DEADLINE, Some(&programs));
    Ok(runner::run_tests(&in_copy, &settings, &Progress::new(true))
        .runs
        .iter()
        .filter(|run| {
            (run.outcome.passed() && quick_enough(hung_after, run.took))
                || run.outcome.message().contains("not yet implemented")
        })
        .map(|run| run.case.id())
        .collect())
}
