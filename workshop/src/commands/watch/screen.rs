//! What `watch` shows: the progress through the step's track, the verdict
//! as `check` gives it, the hint for the function at hand and the list of
//! functions. Plain text from plain values, each piece tested alone.

use std::time::Duration;

use crate::step::{Stage, Step};
use crate::track::Marked;

/// How wide the progress bar is, in characters.
const BAR: usize = 20;

/// `3 of 4 functions written, 1 not right yet  [##########----------]`:
/// "written" as `check` says it (over "does not compile yet", "done"
/// would claim too much); the bar fills with the written ones not blamed.
pub fn progress_line(written: usize, total: usize, not_right: usize) -> String {
    let right = written.saturating_sub(not_right);
    let filled = (BAR * right).checked_div(total).unwrap_or(0).min(BAR);
    let not_right = match not_right {
        0 => String::new(),
        n => format!(", {n} not right yet"),
    };
    let bar = format!("{}{}", "#".repeat(filled), "-".repeat(BAR - filled));
    format!("{written} of {total} functions written{not_right}  [{bar}]")
}

/// The progress of a track: its functions written (not blank, no `todo!()`
/// left), and whether the last verdict `blamed` one of them, so that a
/// wrong function made right moves the bar.
pub fn progress(stages: &[(Marked, Stage)], blamed: Option<&str>) -> String {
    let written = stages.iter().filter(|(_, stage)| !stage.is_unfinished());
    let not_right = written
        .clone()
        .filter(|(m, _)| Some(m.function.as_str()) == blamed)
        .count();
    progress_line(written.count(), stages.len(), not_right)
}

/// The function at hand: the one the last verdict named, else the first
/// still to write, else none.
pub fn at_hand<'a>(
    stages: &'a [(Marked, Stage)],
    named: Option<&str>,
) -> Option<&'a Marked> {
    let named = named.filter(|name| !name.is_empty());
    named
        .and_then(|name| stages.iter().find(|(m, _)| m.function == name))
        .or_else(|| stages.iter().find(|(_, stage)| stage.is_unfinished()))
        .map(|(marked, _)| marked)
}

/// What `h` shows: the function at hand, what its doc comment says it must
/// do, and the chapter's section that explains it.
pub fn hint(step: &Step, marked: Option<&Marked>) -> String {
    let Some(m) = marked else {
        return "Hint: every function is written; the verdict below says whether \
                the step passes."
            .to_owned();
    };
    let doc = if m.doc.trim().is_empty() {
        "(no doc comment: the test below names what it expects)".to_owned()
    } else {
        format!("    {}", m.doc.trim_end().replace('\n', "\n    "))
    };
    format!(
        "Hint for `{function}` ({order} of {total}), in {folder}/{file}:\n\n\
         {doc}\n\nRead chapter {chapter}, section \"{section}\". Its own test: {test} \
         (the verdict may show another test of the step, one that failed).",
        function = m.function,
        order = m.order,
        total = m.total,
        folder = step.folder,
        file = m.file,
        chapter = m.chapter,
        section = m.section,
        test = m.test,
    )
}

/// What `l` shows: each function of the track, where it stands, the one
/// at hand marked `>`.
pub fn list(stages: &[(Marked, Stage)], at_hand: Option<&Marked>) -> String {
    let width = stages
        .iter()
        .map(|(m, _)| m.function.len() + 2)
        .max()
        .unwrap_or(0);
    let mut lines = vec!["The functions of this step:".to_owned()];
    for (m, stage) in stages {
        let is_at_hand = at_hand.is_some_and(|hand| hand.order == m.order);
        let mark = if is_at_hand { '>' } else { ' ' };
        let stage = match stage {
            Stage::Authors => "done: the authors' text",
            Stage::Blank => "to write",
            Stage::InProgress => "in progress (a todo!() left)",
            // Written, and the verdict names it: not right. Written and not
            // named is no more than written: its tests may need a function
            // still to write (the verdict says which are not checked yet).
            Stage::Written if is_at_hand => "written, not right yet",
            Stage::Written => "written",
        };
        let name = format!("`{}`", m.function);
        lines.push(format!("{mark} {}. {name:<width$}  {stage}", m.order));
    }
    lines.join("\n")
}

/// What follows a passing verdict: the command of the next step.
fn passing(n: u32, last: u32) -> String {
    if n >= last {
        return format!("Step {n} passes, and it is the last: the track is done.");
    }
    let next = n + 1;
    format!(
        "Step {n} passes. Next: `cargo workshop start {next}` then \
         `cargo workshop watch`."
    )
}

/// The keys, as the help line says them.
pub fn keys(raw: bool) -> String {
    let enter = if raw { "" } else { " (then Enter)" };
    format!(
        "Keys{enter}: h hint, l list of functions, r run the demo, Space/b page, \
         q quit."
    )
}

/// The status line under a verdict: when it came, and how to check again.
pub fn checked(took: Duration, since_save: Option<Duration>) -> String {
    let took = took.as_secs_f64();
    let Some(since) = since_save else {
        return format!(
            "Checked in {took:.1} s. Save a file of the step to check again."
        );
    };
    format!(
        "Checked {:.1} s after your save (the check: {took:.1} s). Save again \
         to check again.",
        since.as_secs_f64()
    )
}

/// The verdict as the check of step `n` (of `last`) gave it: `check`'s own
/// report for a pass, with the next step's command, or a failure, its
/// advice to check again made watch's; its error for a check that could
/// not run the tests.
pub fn verdict(
    code: Option<i32>,
    stdout: &str,
    stderr: &str,
    (n, last): (u32, u32),
) -> String {
    let report = stdout.trim_end();
    let check_n = format!("`cargo workshop check {n}`.");
    match code {
        Some(0) => format!("{report}\n\n{}", passing(n, last)),
        // The last line names the function to fix (`Fix `f`, then check
        // again with ...`), so that it shows at the foot of any screen.
        Some(1) => report
            .lines()
            .map(|line| {
                let fix = line
                    .strip_suffix(&format!(", then check again with {check_n}"))
                    .filter(|fix| fix.starts_with("Fix "));
                match fix {
                    Some(fix) => format!("{fix} and save: watch checks again."),
                    None => line.replace(
                        &format!("Check again with {check_n}"),
                        "Save to check again.",
                    ),
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(code) => {
            let error = stderr.find("error:").map_or(stderr, |at| &stderr[at..]);
            format!("The check stopped (exit {code}):\n\n{}", error.trim())
        }
        None => "The check was ended before its verdict.".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track;

    #[test]
    fn the_bar_fills_with_the_functions_written() {
        assert_eq!(
            progress_line(0, 4, 0),
            "0 of 4 functions written  [--------------------]"
        );
        assert_eq!(
            progress_line(1, 4, 0),
            "1 of 4 functions written  [#####---------------]"
        );
        assert_eq!(
            progress_line(4, 4, 0),
            "4 of 4 functions written  [####################]"
        );
        assert_eq!(
            progress_line(0, 0, 0),
            "0 of 0 functions written  [--------------------]"
        );
        assert_eq!(
            progress_line(4, 4, 1),
            "4 of 4 functions written, 1 not right yet  [###############-----]"
        );
    }

    fn step_three() -> (Step, Vec<(Marked, Stage)>) {
        let step = Step::find(&crate::workspace_root(), "3").expect("step 3");
        let track = step.authors_track().expect("its track");
        let stages = track
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                let stage = [Stage::Written, Stage::Blank, Stage::InProgress]
                    .get(i)
                    .copied()
                    .unwrap_or(Stage::Blank);
                (m, stage)
            })
            .collect();
        (step, stages)
    }

    #[test]
    fn the_function_at_hand_is_the_one_named_else_the_first_to_write() {
        let (_, stages) = step_three();
        let second = stages[1].0.function.clone();
        let third = stages[2].0.function.clone();
        assert_eq!(at_hand(&stages, None).unwrap().function, second);
        assert_eq!(at_hand(&stages, Some("")).unwrap().function, second);
        assert_eq!(at_hand(&stages, Some(&third)).unwrap().function, third);
        assert_eq!(at_hand(&stages, Some("gone")).unwrap().function, second);
        let total = stages.len();
        assert!(progress(&stages, None).starts_with(&format!("1 of {total} ")));
        let first = stages[0].0.function.clone();
        let blamed = progress(&stages, Some(&first));
        assert!(
            blamed.starts_with(&format!(
                "1 of {total} functions written, 1 not right yet  [-"
            )),
            "the function the verdict blames is written, and not right: {blamed}"
        );
    }

    #[test]
    fn the_hint_has_the_duties_and_the_section_and_the_list_each_stage() {
        let (step, stages) = step_three();
        let hand = at_hand(&stages, None);
        let hint = hint(&step, hand);
        let m = hand.unwrap();
        assert!(
            hint.contains(&format!("Hint for `{}`", m.function)),
            "{hint}"
        );
        let first_duty = m.doc.lines().next().unwrap();
        assert!(hint.contains(first_duty), "{hint}");
        assert!(
            hint.contains(&format!(
                "chapter {}, section \"{}\"",
                m.chapter, m.section
            )),
            "{hint}"
        );
        assert!(
            hint.contains(&format!("Its own test: {}", m.test)),
            "{hint}"
        );
        let shown = list(&stages, hand);
        assert!(shown.contains(&format!("> 2. `{}`", m.function)), "{shown}");
        assert!(
            shown.contains("  written") && shown.contains("in progress"),
            "{shown}"
        );
        // The written function the verdict names is not done, as the bar says.
        let blamed = &stages[0].0;
        let shown = list(&stages, at_hand(&stages, Some(&blamed.function)));
        assert!(
            shown.contains(&format!("> 1. `{}`", blamed.function))
                && shown.contains("written, not right yet")
                && !shown.contains("  written\n"),
            "{shown}"
        );
        assert!(track::MARKER.starts_with("// BUILD"));
    }

    #[test]
    fn a_pass_names_the_next_step_and_an_error_is_shown_whole() {
        assert_eq!(
            passing(3, 8),
            "Step 3 passes. Next: `cargo workshop start 4` then `cargo workshop watch`."
        );
        assert!(passing(8, 8).contains("the last"));
        let failed = verdict(
            Some(1),
            "Your `f` is not right yet.\n\nFix `f`, then check again with \
             `cargo workshop check 3`.\n",
            "",
            (3, 8),
        );
        assert_eq!(
            failed,
            "Your `f` is not right yet.\n\nFix `f` and save: watch checks again."
        );
        let next = verdict(
            Some(1),
            "Next: write `g`.\n\n1 of 5 functions written so far. Check again \
             with `cargo workshop check 3`.",
            "",
            (3, 8),
        );
        assert!(next.ends_with("so far. Save to check again."), "{next}");
        let shown = verdict(Some(0), "Step 3 passes: all.\n", "", (3, 8));
        assert_eq!(shown, format!("Step 3 passes: all.\n\n{}", passing(3, 8)));
        let shown =
            verdict(Some(2), "", "[ 0 s] building\nerror: no disk\n", (3, 8));
        assert_eq!(shown, "The check stopped (exit 2):\n\nerror: no disk");
        assert!(verdict(None, "", "", (3, 8)).contains("ended"));
    }
}
