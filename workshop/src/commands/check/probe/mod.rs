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
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::runner::{Cargo, Progress, TestCase, TestRun};
use crate::sources_copy::{self, Times};
use crate::track::Marked;

use super::lock;
use one_at_a_time::one_at_a_time;
use switching::all_at_once;

mod one_at_a_time;
mod switching;
#[cfg(test)]
mod tests;
use super::{Blame, machine_trouble};
use crate::step::Step;

/// How many failing tests are rerun for each suspect (and as they are).
pub(super) const RERUN: usize = 2;

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
    find_in(
        step,
        prepare(step, cargo, progress),
        suspects,
        failing,
        progress,
    )
}

/// `find` in a copy made ready before (`prepare`), while the tests ran.
pub fn find_in<'a>(
    step: &Step,
    copy: Result<WorkshopCopy, String>,
    suspects: &[&'a Marked],
    failing: &[&TestRun],
    progress: &Progress,
) -> Found<'a> {
    match copy
        .and_then(|copy| find_in_copy(step, &copy, suspects, failing, progress))
    {
        Ok(found) => found,
        Err(failure) => Found::ToolFailed(failure),
    }
}

/// The copy of the participant's workshop the probe works in, held for
/// this check alone while it lives.
pub struct WorkshopCopy {
    _held: lock::Held,
    root: PathBuf,
    cargo: Cargo,
}

/// Makes the copy ready, its sources the participant's: `Err` with what to tell the participant if the tool's own machinery
/// fails. Nothing in it depends on what failed, so it can be done while
/// the tests still run.
pub fn prepare(
    step: &Step,
    cargo: &Cargo,
    progress: &Progress,
) -> Result<WorkshopCopy, String> {
    let target = cargo.target_dir().map_err(|err| {
        tool_failed(step, "find the folder Cargo builds in", None, &err)
    })?;
    let probe = target.join("workshop-probe");
    let held = hold_the_copy(step, &probe, progress)?;
    let root = probe.join("workspace");
    sources_copy::sync_tree(&step.root, &root, Times::New).map_err(|err| {
        tool_failed(
            step,
            "copy your workshop to try the authors' functions in",
            Some(&root),
            &err,
        )
    })?;
    let cargo = Cargo {
        root: root.clone(),
        target_dir: Some(probe.join("target")),
    };
    Ok(WorkshopCopy {
        _held: held,
        root,
        cargo,
    })
}

/// Builds in `copy`, ahead of any failure, what the probe would build to
/// ask about `suspects` with the tests of `files`: started with the tests,
/// it is mostly done when the probe is asked, which then only reruns.
/// Built after the failure, it cost 3 to 4 s of every verdict (step 4:
/// 4.4 s of the 6.4 s from the tests' start).
pub fn build_ahead(
    step: &Step,
    copy: &WorkshopCopy,
    suspects: &[&Marked],
    files: &[String],
) {
    switching::build_ahead(step, &copy.root, &copy.cargo, suspects, files);
}

/// For `start`'s build ahead: the copy made and built as the step is now,
/// no function switched, so that the first probe finds the copy's build
/// folder made and builds only what differs.
pub fn build_the_copy(
    step: &Step,
    cargo: &Cargo,
    files: &[String],
    progress: &Progress,
) -> Result<(), String> {
    let copy = prepare(step, cargo, progress)?;
    build_ahead(step, &copy, &[], files);
    Ok(())
}

/// `find_in`, with the failures of the probe's own machinery as `Err`:
/// what to tell the participant.
fn find_in_copy<'a>(
    step: &Step,
    prepared: &WorkshopCopy,
    suspects: &[&'a Marked],
    failing: &[&TestRun],
    progress: &Progress,
) -> Result<Found<'a>, String> {
    let (copy, copy_cargo) = (&prepared.root, &prepared.cargo);
    let rerun = tests_to_rerun(failing, suspects);
    // A quick failure that passes when rerun as it is (a timing test on a
    // busy machine) cannot tell one function from another. A hang does not
    // come and go, so it is spared the extra run.
    let as_they_are = !failing
        .iter()
        .any(|run| run.hung() && rerun.contains(&run.case));
    let hung_after = failing
        .iter()
        .filter(|run| run.hung() && rerun.contains(&run.case))
        .map(|run| run.took)
        .min();
    let suspects = in_likely_order(suspects, failing);
    let marked = step.track().unwrap_or_default();
    let written = marked.iter().filter(|m| !step.is_unwritten(m)).count();
    let probe = Probe {
        rerun,
        as_they_are,
        hung_after,
        alone_too: written == marked.len(),
        suspects,
    };
    let written = if marked.is_empty() {
        probe.suspects.len()
    } else {
        written
    };
    progress.say(&which_function(probe.suspects.len(), written));
    let in_copy = |err: String| {
        tool_failed(step, "build the copy of your workshop", Some(copy), &err)
    };
    if let Some(found) =
        all_at_once(step, copy, copy_cargo, &probe, progress).map_err(in_copy)?
    {
        return Ok(found);
    }
    progress.say("the switching copy did not build: one function at a time");
    one_at_a_time(step, copy, copy_cargo, probe, progress).map_err(in_copy)
}

/// What the probe is about to do, counting the participant's functions
/// as they do: "the 3 that differ" from someone who wrote 5 (two as the
/// authors did) reads as a miscount.
fn which_function(differ: usize, written: usize) -> String {
    let verb = if differ == 1 { "differs" } else { "differ" };
    let yours = match (differ, written) {
        (1, ..=1) => "the function you wrote differs".to_owned(),
        _ if differ >= written => format!("the {differ} functions you wrote differ"),
        _ => format!("{differ} of the {written} functions you wrote {verb}"),
    };
    let place = if differ == 1 {
        "its place"
    } else {
        "place of each"
    };
    format!(
        "which function? {yours} from the authors' version: trying theirs in \
         {place}, in a copy of your code"
    )
}

/// Holds the copy for this check alone: another check (a second
/// terminal), or `start`'s build ahead, has it first, this one waits here,
/// and says so.
fn hold_the_copy(
    step: &Step,
    probe: &Path,
    progress: &Progress,
) -> Result<lock::Held, String> {
    let lock_file = probe.join("copy.lock");
    fs::create_dir_all(probe)
        .and_then(|()| {
            lock::hold(&lock_file, || {
                progress.say(&format!(
                    "waiting for another check, or the build `start` began, \
                     to finish with the copy of your workshop ({})",
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
    /// The shortest time a rerun test ran in the participant's code
    /// without ending, if one hung (or seemed stuck and was asked about).
    hung_after: Option<Duration>,
    /// Whether each suspect is also rerun as the only one of the
    /// participant's (`switching::switch_sets`): only when no function is
    /// blank. A blank one's `todo!()` fails a test whatever the others
    /// are, and not always in words that say so (a demo's panic, seen by
    /// the trace's test as a trace cut short), so a right function left
    /// alone among the authors' was called wrong on its own.
    alone_too: bool,
}

impl Probe<'_> {
    /// Whether a switched rerun that passed in `took` shows the test
    /// ending where the participant's did not: in well under the time the
    /// participant's ran without ending. A test only slow on a busy
    /// machine is as slow with the switch, and is not taken for a hang.
    fn quick_enough(&self, took: Duration) -> bool {
        quick_enough(self.hung_after, took)
    }
}

/// `Probe::quick_enough`, for a probe already taken apart.
fn quick_enough(hung_after: Option<Duration>, took: Duration) -> bool {
    hung_after.is_none_or(|hung| took * 2 < hung)
}

/// The failing tests to rerun: the quickest first, hangs last, and of one
/// file: the copy's build makes the executable of every file rerun, and
/// a second file cost more build than its rerun told. Among hangs, the
/// markers' own tests first: they are quick when right, where a demo's
/// trace takes 3 s (step 7), too long beside a test stopped at 5 s to
/// tell a fix from a slow machine (`Probe::quick_enough`).
fn tests_to_rerun(failing: &[&TestRun], suspects: &[&Marked]) -> Vec<TestCase> {
    let own_file = |run: &TestRun| {
        suspects.iter().any(|m| {
            m.test
                .split_once("::")
                .is_some_and(|(file, _)| file == run.case.file)
        })
    };
    let mut sorted = failing.to_vec();
    sorted.sort_by_key(|run| (run.hung(), !own_file(run), run.took));
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
