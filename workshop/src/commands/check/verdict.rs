//! The verdict: from the tests that failed, the one function to write or
//! fix next and the test that shows it best, or that no one function can
//! be named and why.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::meanwhile::{Answers, Beside};
use super::prints;
use super::probe::{self, Found};
use super::report::{
    describe, failing, left_out, not_pinned, not_right, paragraph, passed_on_rerun,
    passes, write_next,
};
use super::trace;
use super::{Blame, Checked, TRACES};
use crate::runner::{Cargo, Progress, Ran, TestRun};
use crate::step::Step;
use crate::track::{self, Marked};

/// All passed; or a written function is wrong (named from what failed);
/// or the next blank function, in track order, is to be written; or tests
/// fail that no one function answers for. `demo`: the folder of the
/// step's programs, if they built, for the demo's trace. `early`: what the probe and
/// the trace answered while the tests ran (`meanwhile`).
pub(super) fn verdict_on<'a>(
    step: &Step,
    marked: &'a [Marked],
    ran: &Ran,
    (demo, cargo): (Option<&Path>, &Cargo),
    early: Answers<'a>,
    progress: &Progress,
) -> Result<Checked, String> {
    let n = step.number;
    // A pinned output with only the participant's prints added passed.
    let (with_prints, failures): (Vec<&TestRun>, Vec<&TestRun>) = ran
        .runs
        .iter()
        .filter(|run| !run.outcome.passed())
        .partition(|run| prints::added_lines(run).is_some());
    let own_prints = paragraph(&prints::note(&with_prints));
    if failures.is_empty() && !ran.not_run.is_empty() {
        // Nothing failed, but not everything ran: no pass to record.
        return Ok(failing(
            &[],
            None,
            format!(
                "Step {n}'s tests that ran pass, but not all of them ran.{}{own_prints}\
                 \n\nCheck again with `cargo workshop check {n}`.",
                left_out(ran, true),
            ),
        ));
    }
    let mut checked = if failures.is_empty() {
        passes(step, marked, ran.runs.len())
    } else {
        verdict_on_failures(
            step,
            marked,
            (&failures, ran),
            (demo, cargo),
            early,
            progress,
        )?
    };
    checked.report.push_str(&own_prints);
    // "Other tests pass" only when they ran: a trace test that fails at
    // once can name the function before the others end.
    let others_ran = ran.not_run.iter().all(|case| case.file == TRACES);
    let only_traces = failures.iter().all(|run| run.case.file == TRACES);
    if !failures.is_empty() && others_ran && only_traces {
        checked.report = format!(
            "The loop no longer says what it does: step {n}'s other tests \
             pass, but its trace tests fail (the lines `LOOP_TRACE=1` \
             prints, chapter {n}): {}\n\n{}",
            trace::story(&failures),
            checked.report,
        );
    }
    Ok(checked)
}

/// The verdict on `failures`, some of `ran`; `Err` when the tool's own
/// machinery failed on the way to one (the probe's copy).
fn verdict_on_failures<'a>(
    step: &Step,
    marked: &'a [Marked],
    (failures, ran): (&[&TestRun], &Ran),
    (demo, cargo): (Option<&Path>, &Cargo),
    early: Answers<'a>,
    progress: &Progress,
) -> Result<Checked, String> {
    let blanks: Vec<&Marked> =
        marked.iter().filter(|m| step.is_unwritten(m)).collect();
    // A test stopped at a `todo!()` is explained by that blank function.
    let unexplained: Vec<&TestRun> = failures
        .iter()
        .copied()
        .filter(|run| !run.outcome.message().contains("not yet implemented"))
        .collect();
    let mut untried = false;
    if !unexplained.is_empty() {
        // Before blaming a function: what changed beside the track may be
        // the cause (an exercise's edit to `main.rs`, a deleted file).
        if let Some(outside) = crate::changes::before_blaming(step) {
            let report = format!("{outside}\n\n{}", describe(unexplained[0]));
            return Ok(failing(failures, None, report));
        }
        let asked_of_these = |asked: &[String]| {
            asked
                .iter()
                .all(|id| unexplained.iter().any(|run| run.case.id() == *id))
        };
        let probed = early
            .probe
            .filter(|(asked, _)| asked_of_these(asked))
            .map(|(_, found)| found);
        let blamed =
            blame(step, marked, &unexplained, probed).unwrap_or_else(|suspects| {
                probe::find(step, cargo, &suspects, &unexplained, progress)
            });
        untried = matches!(blamed, Found::Untried);
        match blamed {
            Found::Culprit(blame) => {
                let beside = match early.trace {
                    Some(Beside(beside)) => beside,
                    None => demo.and_then(|demo| {
                        trace::beside(step, demo, progress, &AtomicBool::new(false))
                    }),
                };
                let beside = beside.as_deref();
                return Ok(not_right(step, &blame, failures, ran, beside, &blanks));
            }
            Found::PassedOnRerun => return Ok(passed_on_rerun(step, failures)),
            Found::ToolFailed(failure) => return Err(failure),
            Found::Nothing | Found::Untried => {}
        }
    }
    Ok(match blanks.first() {
        Some(first) => write_next(step, marked, first, (failures, &ran.runs)),
        None => not_pinned(step, marked, failures, ran, untried),
    })
}

/// The written functions that may be to blame for failures.
pub(super) enum Suspects<'a> {
    /// None differs from the authors' version.
    None,
    /// Only this one does, and no function is blank.
    Lone(&'a Marked),
    /// Several do (or one, beside a blank function whose `todo!()` may be
    /// the cause): the probe asks the copy.
    Several(Vec<&'a Marked>),
}

/// Who may be to blame, before any test has run: the functions written
/// differently from the authors'.
pub(super) fn suspects<'a>(step: &Step, marked: &'a [Marked]) -> Suspects<'a> {
    let blanks = marked.iter().any(|m| step.is_unwritten(m));
    let mut changed = changed_functions(step, marked);
    match changed.len() {
        0 => Suspects::None,
        1 if !blanks => Suspects::Lone(changed.remove(0)),
        _ => Suspects::Several(changed),
    }
}

/// The written function the `failing` tests come from: the only one that
/// differs from the authors' version, or what the probe answered
/// (`probed`); else `Err` with the suspects to ask it about.
fn blame<'a>(
    step: &Step,
    marked: &'a [Marked],
    failing: &[&TestRun],
    probed: Option<Found<'a>>,
) -> Result<Found<'a>, Vec<&'a Marked>> {
    match suspects(step, marked) {
        Suspects::None => Ok(Found::Nothing),
        Suspects::Lone(only) => Ok(Found::Culprit(Blame {
            function: only,
            tests: failing.iter().map(|run| run.case.id()).collect(),
            why: format!(
                "it is the only function of the track that differs from the \
                 authors' version, so the failures come from `{}`",
                only.function
            ),
        })),
        Suspects::Several(suspects) => probed.ok_or(suspects),
    }
}

/// The written functions whose signature or body differs from the
/// authors' (spaces and line breaks aside), in track order.
pub(super) fn changed_functions<'a>(
    step: &Step,
    marked: &'a [Marked],
) -> Vec<&'a Marked> {
    let changed = |m: &Marked| {
        let now = &step.read(&m.file)[m.whole()];
        authors_function(step, m).is_none_or(|original| {
            track::without_spaces(&original) != track::without_spaces(now)
        })
    };
    marked
        .iter()
        .filter(|m| !step.is_unwritten(m) && changed(m))
        .collect()
}

/// The authors' body of `marked`, as `start` kept it.
pub fn authors_body(step: &Step, marked: &Marked) -> Option<String> {
    authors_part(step, marked, |m| m.body.clone())
}

/// The authors' `marked`, signature and body (`Marked::whole`).
pub fn authors_function(step: &Step, marked: &Marked) -> Option<String> {
    authors_part(step, marked, Marked::whole)
}

fn authors_part(
    step: &Step,
    marked: &Marked,
    part: impl Fn(&Marked) -> std::ops::Range<usize>,
) -> Option<String> {
    let original = step.original(&marked.file).ok()?;
    let found = track::markers_in(&marked.file, &original).ok()?;
    let theirs = found.iter().find(|m| m.order == marked.order)?;
    Some(original[part(theirs)].to_owned())
}
