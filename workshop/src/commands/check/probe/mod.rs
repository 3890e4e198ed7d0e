//! Which written function the failing tests come from, when more than one
//! differs from the authors' version: a test cannot say it alone (every
//! timer test runs `call_at`, `Timer::cmp` and the turn together), so the
//! authors' body is put back for each suspect in a copy of the workspace,
//! and the failing tests rerun there (`switching`). The copy is never the
//! participant's files: it is `<target>/workshop-probe/`, held by one check
//! at a time (`lock`), built in a target folder of its own, since its paths
//! differ and sharing Cargo's would overwrite the participant's binaries.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Blame, authors_body, authors_function, lock, machine_trouble};
use crate::runner::{Cargo, Progress, TestCase, TestRun};
use crate::sources_copy::{self, Times};
use crate::step::Step;
use crate::track::{self, Marked, tokens};

pub use switching::build_ahead;

mod switching;

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
    /// The copy with the authors' functions beside the participant's does
    /// not build, so no suspect could be tried.
    Untried,
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
    let copy = prepare(step, cargo, progress);
    find_in(step, copy, suspects, failing, progress)
}

/// `find` in a copy made ready before (`prepare`), while the tests ran.
pub fn find_in<'a>(
    step: &Step,
    copy: Result<WorkshopCopy, String>,
    suspects: &[&'a Marked],
    failing: &[&TestRun],
    progress: &Progress,
) -> Found<'a> {
    let copy = match copy {
        Ok(copy) => copy,
        Err(failure) => return Found::ToolFailed(failure),
    };
    let marked = step.track().unwrap_or_default();
    let written = marked.iter().filter(|m| !step.is_unwritten(m)).count();
    let probe = Probe::new(suspects, failing, written == marked.len());
    let written = if marked.is_empty() {
        suspects.len()
    } else {
        written
    };
    progress.say(&which_function(suspects.len(), written));
    match with_switches(step, &copy, probe, progress) {
        Ok(Some(found)) => found,
        Ok(None) => {
            progress.say(
                "your code with the authors' functions beside yours does not \
                 build (theirs may call a helper yours lacks): none is named",
            );
            Found::Untried
        }
        Err(err) => Found::ToolFailed(tool_failed(
            step,
            "build the copy of your workshop",
            Some(&copy.root),
            &err,
        )),
    }
}

/// `switching::all_at_once`, tried again if the copy does not build
/// without the suspects whose signature the participant changed, which an
/// authors' body may not fit (a parameter renamed): those keep theirs, and
/// none is judged alone, since one of theirs stays beside it.
fn with_switches<'a>(
    step: &Step,
    copy: &WorkshopCopy,
    probe: Probe<'a>,
    progress: &Progress,
) -> Result<Option<Found<'a>>, String> {
    if let Some(found) = switching::all_at_once(step, copy, &probe, progress)? {
        return Ok(Some(found));
    }
    let fits: Vec<&Marked> = (probe.suspects.iter().copied())
        .filter(|m| same_signature(step, m))
        .collect();
    if fits.is_empty() || fits.len() == probe.suspects.len() {
        return Ok(None);
    }
    let probe = Probe {
        suspects: fits,
        alone_too: false,
        ..probe
    };
    sources_copy::sync_tree(&step.root, &copy.root, Times::New)?;
    switching::all_at_once(step, copy, &probe, progress)
}

/// Whether `marked`'s signature is the authors', comments and spaces aside.
fn same_signature(step: &Step, marked: &Marked) -> bool {
    let code = |text: &str| track::without_spaces(&tokens::code_only(text));
    let now = step.read(&marked.file);
    let Some(signature) = now.get(marked.signature.clone()).map(code) else {
        return false;
    };
    let authors = authors_function(step, marked).zip(authors_body(step, marked));
    authors.is_some_and(|(whole, body)| {
        whole
            .strip_suffix(&body)
            .is_some_and(|theirs| code(theirs) == signature)
    })
}

/// The copy of the participant's workshop the probe works in, held for
/// this check alone while it lives.
pub struct WorkshopCopy {
    _held: lock::Held,
    root: PathBuf,
    cargo: Cargo,
}

/// Makes the copy ready, its sources the participant's: `Err` with what to
/// tell the participant if the tool's own machinery fails. Nothing in it
/// depends on what failed, so it can be done while the tests still run.
pub fn prepare(
    step: &Step,
    cargo: &Cargo,
    progress: &Progress,
) -> Result<WorkshopCopy, String> {
    let target = cargo.target_dir().map_err(|err| {
        tool_failed(step, "find the folder Cargo builds in", None, &err)
    })?;
    let probe = target.join("workshop-probe");
    // While another check, or `start`'s build ahead, has the copy, this one
    // waits, and says so.
    let lock_file = probe.join("copy.lock");
    let held = fs::create_dir_all(&probe)
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
            let err = err.to_string();
            tool_failed(step, "take its turn at the copy", Some(&lock_file), &err)
        })?;
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
    /// blank, as a blank one's `todo!()` fails tests whatever the others
    /// are, not always in words that say so.
    alone_too: bool,
}

impl<'a> Probe<'a> {
    fn new(suspects: &[&'a Marked], failing: &[&TestRun], alone_too: bool) -> Self {
        let rerun = tests_to_rerun(failing, suspects);
        // A hang does not come and go: it is spared the rerun as it is.
        let hung_after = failing
            .iter()
            .filter(|run| run.hung() && rerun.contains(&run.case))
            .map(|run| run.took)
            .min();
        Probe {
            rerun,
            as_they_are: hung_after.is_none(),
            suspects: in_likely_order(suspects, failing),
            hung_after,
            alone_too,
        }
    }

    /// Whether a switched rerun that passed in `took` ended where the
    /// participant's did not: in well under the time theirs ran without
    /// ending. A test only slow on a busy machine is as slow switched.
    fn quick_enough(&self, took: Duration) -> bool {
        self.hung_after.is_none_or(|hung| took * 2 < hung)
    }
}

/// The failing tests to rerun: the quickest first, hangs last, and of one
/// file, since the copy's build makes the executable of every file rerun.
/// Among hangs, the markers' own tests first: they are quick when right,
/// where a demo's trace takes seconds, too long to tell a fix from a slow
/// machine (`Probe::quick_enough`).
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
    sorted
        .iter()
        .filter(|run| run.case.file == first.case.file)
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

#[cfg(test)]
mod tests;
