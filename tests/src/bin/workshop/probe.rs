//! Which written function the failing tests come from, when more than one
//! differs from the authors' version: put the authors' body back for one
//! function at a time and rerun only the failing tests; the function whose
//! original makes them pass is the one to fix.
//!
//! A test cannot say it alone: every timer test runs `call_at`, `Timer::cmp`
//! and the turn together, and a mistake in any of them fails it. Putting
//! one back at a time asks the code itself. It happens in a copy of the
//! repository (never in the participant's files), in the target folder
//! (`workshop-probe/`), built in a target folder of its own: the copy's
//! paths differ, so sharing Cargo's would overwrite the participant's
//! binaries; kept between checks, it builds incrementally.

use std::fs;
use std::path::Path;
use std::time::Duration;

use workshop_tests::runner::{self, Cargo, Progress, Settings, TestCase, TestRun};
use workshop_tests::track::{self, Marked};

use crate::check::{Blame, authors_body};
use crate::{Step, seed};

/// How long a rerun test may take: with the authors' function back, a test
/// that hung ends in about a second; this much is plenty under load too.
const PROBE_DEADLINE: Duration = Duration::from_secs(10);

/// How many failing tests each substitution reruns: two run at once, so a
/// substitution that fixes nothing costs one deadline at most.
const RERUN: usize = 2;

/// What putting the authors' functions back found.
pub enum Found<'a> {
    /// The suspect whose original makes the most failing tests pass (all,
    /// if any does).
    Culprit(Blame<'a>),
    /// The failing tests pass when rerun as they are.
    PassedOnRerun,
    /// No one suspect's original makes any pass (or the copy failed).
    Nothing,
}

/// Which of `suspects` the `failing` tests come from.
pub fn find<'a>(
    step: &Step,
    cargo: &Cargo,
    suspects: &[&'a Marked],
    failing: &[&TestRun],
    progress: &Progress,
) -> Found<'a> {
    let Ok(target) = cargo.target_dir() else {
        return Found::Nothing;
    };
    let probe = target.join("workshop-probe");
    let copy = probe.join("workspace");
    if let Err(err) = prepare_copy(step, &target, &probe) {
        progress.say(&format!("could not copy the repository: {err}"));
        return Found::Nothing;
    }
    let copy_cargo = Cargo {
        root: copy.clone(),
        target_dir: Some(probe.join("target")),
    };
    let mut rerun = tests_to_rerun(failing);
    // A quick failure that passes when rerun as it is (a timing test on a
    // busy machine) cannot tell one function from another. A hang does not
    // come and go, so it is spared the extra run.
    if !failing
        .iter()
        .any(|run| run.hung() && rerun.contains(&run.case))
    {
        progress.say("rerunning the failures in a copy");
        let passing = rerun_in_copy(&copy_cargo, &rerun, progress);
        rerun.retain(|case| !passing.contains(&case.id()));
        if rerun.is_empty() {
            return Found::PassedOnRerun;
        }
    }
    let mut best: Option<Blame<'a>> = None;
    for (index, suspect) in
        in_likely_order(suspects, failing).into_iter().enumerate()
    {
        progress.say(&format!(
            "which function? the authors' `{}` in a copy ({} of {})",
            suspect.function,
            index + 1,
            suspects.len(),
        ));
        let passing = with_authors(step, &copy, suspect, || {
            rerun_in_copy(&copy_cargo, &rerun, progress)
        });
        if passing.is_empty()
            || best
                .as_ref()
                .is_some_and(|b| b.tests.len() >= passing.len())
        {
            continue;
        }
        let all = passing.len() == rerun.len();
        best = Some(Blame {
            function: suspect,
            why: format!(
                "with the authors' `{}` put back in a copy of your code, {} \
                 failing test{} rerun there no longer fail{} this way",
                suspect.function,
                if all { "the" } else { "some" },
                if rerun.len() == 1 { "" } else { "s" },
                if rerun.len() == 1 { "s" } else { "" },
            ),
            tests: passing,
        });
        if all {
            break;
        }
    }
    best.map_or(Found::Nothing, Found::Culprit)
}

/// Says the probe folder was seeded from the participant's build.
const SEEDED: &str = "seeded";

/// Brings the copy of the repository up to date, and its build folder
/// from the participant's (an older probe folder, built from nothing, is
/// replaced whole).
fn prepare_copy(step: &Step, target: &Path, probe: &Path) -> Result<(), String> {
    if !probe.join(SEEDED).is_file() {
        let _ = fs::remove_dir_all(probe);
    }
    sync_tree(&step.root, &probe.join("workspace"))?;
    seed::seed(target, &probe.join("target"))?;
    fs::write(probe.join(SEEDED), "").map_err(|err| format!("{err}"))
}

/// The failing tests to rerun: the quickest first, hangs last, and of one
/// file where it can be: each substitution rebuilds the executable of
/// every file rerun.
fn tests_to_rerun(failing: &[&TestRun]) -> Vec<TestCase> {
    let mut sorted = failing.to_vec();
    sorted.sort_by_key(|run| (run.hung(), run.took));
    let Some(first) = sorted.first() else {
        return Vec::new();
    };
    let file = first.case.file.clone();
    sorted.sort_by_key(|run| (run.case.file != file, run.hung(), run.took));
    sorted
        .iter()
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
    work: impl FnOnce() -> Vec<String>,
) -> Vec<String> {
    let path = copy.join(&step.folder).join(&suspect.file);
    let theirs = step.read(&suspect.file);
    let Some(original) = authors_body(step, suspect) else {
        return Vec::new();
    };
    let Some(body) = track::markers_in(&suspect.file, &theirs)
        .ok()
        .and_then(|found| found.into_iter().find(|m| m.order == suspect.order))
        .map(|m| m.body)
    else {
        return Vec::new();
    };
    let mut substituted = theirs.clone();
    substituted.replace_range(body, &original);
    if fs::write(&path, substituted).is_err() {
        return Vec::new();
    }
    let passing = work();
    let _ = fs::write(&path, theirs);
    passing
}

/// Builds the copy's tests and reruns `cases` there: the ones whose
/// failure is gone. A test that now stops at a blank function's `todo!()`
/// counts: what is left is a function not written yet.
fn rerun_in_copy(
    cargo: &Cargo,
    cases: &[TestCase],
    progress: &Progress,
) -> Vec<String> {
    let mut files: Vec<String> =
        cases.iter().map(|case| case.file.clone()).collect();
    files.dedup();
    let Ok(Ok(built)) = runner::build_tests(cargo, &files, progress) else {
        return Vec::new();
    };
    let binaries = built.binaries;
    let in_copy: Vec<TestCase> = cases
        .iter()
        .filter_map(|case| {
            let binary = binaries.iter().find(|b| b.file == case.file)?;
            Some(TestCase {
                binary: binary.path.clone(),
                ..case.clone()
            })
        })
        .collect();
    let settings = Settings::new(cargo, PROBE_DEADLINE);
    runner::run_tests(&in_copy, &settings, &Progress::new(true))
        .runs
        .iter()
        .filter(|run| {
            run.outcome.passed()
                || run.outcome.message().contains("not yet implemented")
        })
        .map(|run| run.case.id())
        .collect()
}

/// Makes `to` a copy of the repository's sources at `from`, writing only
/// the files that differ, each with the time it has at `from`: the
/// participant's build output, seeded into the copy's, is then fresh for
/// it exactly where it is in the participant's. Build output, git's folder
/// and the book are left out.
fn sync_tree(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|err| format!("{}: {err}", to.display()))?;
    for entry in fs::read_dir(from)
        .map_err(|err| format!("{err}"))?
        .flatten()
    {
        let name = entry.file_name();
        let path = entry.path();
        let skip = [".git", "target", ".workshop", "book"];
        // A target folder by another name (CARGO_TARGET_DIR) has this tag.
        if skip.iter().any(|s| name == *s) || path.join("CACHEDIR.TAG").exists() {
            continue;
        }
        let dest = to.join(&name);
        let failed = |err: std::io::Error| format!("{}: {err}", path.display());
        if path.is_dir() {
            sync_tree(&path, &dest)?;
        } else if !dest.exists() || fs::read(&path).ok() != fs::read(&dest).ok() {
            seed::copy_with_times(&path, &dest).map_err(failed)?;
        } else {
            seed::same_time(&path, &dest).map_err(failed)?;
        }
    }
    Ok(())
}
