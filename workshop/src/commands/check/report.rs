//! The verdict's words: what a participant reads for a step that passes,
//! a function to fix or to write next, a failure no function answers for,
//! and the tests that failed beside it or were not run. `verdict` decides
//! which; this says it.

use super::clues;
use super::verdict::changed_functions;
use super::{Blame, Checked};
use crate::commands::status::fingerprint;
use crate::commands::{indent, write};
use crate::runner::{
    HURRIED, MEMORY_LIMIT_GIB, Outcome, Ran, TEST_DEADLINE, TestRun,
};
use crate::step::Step;
use crate::test_messages;
use crate::track::{self, Marked};

pub(super) fn passes(step: &Step, marked: &[Marked], passed: usize) -> Checked {
    let n = step.number;
    let after = if step.is_started() {
        let _ = write(&step.state().join("passed"), &fingerprint(step));
        format!(
            "You wrote its {} functions. `cargo workshop diff {n}` shows \
             where yours differ from the authors' version.",
            marked.len()
        )
    } else {
        format!("(It is not started: `cargo workshop start {n}` to build it.)")
    };
    Checked {
        passed: true,
        ..failing(
            &[],
            None,
            format!("Step {n} passes: all {passed} of its tests. {after}"),
        )
    }
}

/// A verdict that the step fails, on `failures`, naming `next` when one
/// function is to blame.
pub(super) fn failing(
    failures: &[&TestRun],
    next: Option<String>,
    report: String,
) -> Checked {
    Checked {
        passed: false,
        next,
        failed: failures.iter().map(|run| run.case.id()).collect(),
        at_its_todo: false,
        report,
    }
}

/// `text` as a paragraph of its own, if there is any.
pub(super) fn paragraph(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!("\n\n{text}")
    }
}

pub(super) fn file_and_line(step: &Step, marked: &Marked) -> String {
    let line = fn_line(step, marked);
    format!("{}/{}, line {line}", step.folder, marked.file)
}

/// The line of `marked`'s signature, as it is now.
pub(super) fn fn_line(step: &Step, marked: &Marked) -> usize {
    marked.fn_line(&step.read(&marked.file))
}

/// A written function is wrong: which, the test that shows it best, and
/// how `check` knows; and, `beside`, the first turn of the step's demo
/// where the participant's loop differs from the authors' (`trace`).
pub(super) fn not_right(
    step: &Step,
    blame: &Blame,
    failures: &[&TestRun],
    ran: &Ran,
    beside: Option<&str>,
    blanks: &[&Marked],
) -> Checked {
    let m = blame.function;
    let blank_reached = |run: &TestRun| {
        blanks
            .iter()
            .find(|b| run.outcome.message().contains(&b.todo_message()))
            .copied()
    };
    // The function's own test (its marker's) says the most about it, when
    // it failed with a message rather than hung; a test that stops at the
    // `todo!()` of a function not yet written says the least.
    let shown = failures
        .iter()
        .copied()
        .min_by_key(|run| {
            let id = run.case.id();
            let blank = blank_reached(run).is_some();
            let own = id == m.test && !run.hung() && !blank;
            let answered = blame.tests.contains(&id);
            (!own, !answered, blank, clarity_rank(run), id != m.test)
        })
        .expect("a failure");
    // Where the failure shows is not always where the mistake is: when
    // only the tests that close or fill a server's stderr fail, and the
    // function prints there, the print is the likeliest trouble.
    let prints_alone = failures
        .iter()
        .all(|run| clues::closes_or_fills_stderr(&run.case.id()))
        && clues::prints_to_stderr(step, m);
    let note = clues::note(step, m, &shown.case.id(), shown.outcome.message())
        .or_else(|| {
            blank_reached(shown).map(|blank| {
                format!(
                    "This test stops at the `todo!()` of `{blank}`, which you \
                     have not written yet: `{blamed}` cannot be judged until \
                     `{blank}` is written (chapter {n}, section \"{section}\"). \
                     Write it next, then check again.",
                    blank = blank.function,
                    blamed = m.function,
                    n = step.number,
                    section = blank.section,
                )
            })
        })
        .unwrap_or_default();
    failing(
        failures,
        Some(m.function.clone()),
        format!(
            "Your `{}` ({}) {}.\nRead chapter {}, section \"{}\" \
             again.\n\n{}{}{}\n\nWhy `{}`: {}.{}{}\n\nFix `{}`, then check again \
             with `cargo workshop check {}`.",
            m.function,
            file_and_line(step, m),
            if prints_alone {
                "prints to stderr, and only the tests of a stderr nobody reads \
                 fail: the print may be all that is wrong"
            } else {
                "is not right yet"
            },
            step.number,
            m.section,
            describe(shown),
            paragraph(&note),
            paragraph(beside.unwrap_or_default()),
            m.function,
            blame.why,
            also_failing(failures, shown),
            left_out(ran, true),
            m.function,
            step.number
        ),
    )
}

/// The failures did not come back when the tests ran again as they are.
pub(super) fn passed_on_rerun(step: &Step, failures: &[&TestRun]) -> Checked {
    let n = step.number;
    let shown = failures
        .iter()
        .find(|run| !run.outcome.message().contains("not yet implemented"))
        .unwrap_or(&failures[0]);
    failing(
        failures,
        None,
        format!(
            "{}\n\nIt passed when run again as it is, so no one function can be \
             named: a test that measures time can fail on a busy machine. Run \
             `cargo workshop check {n}` again; if it fails the same way, read \
             the message above.",
            describe(shown)
        ),
    )
}

/// Which failure shows a mistake best, lowest first: a crash says the most
/// in the fewest words, a hang the least.
pub(super) fn clarity_rank(run: &TestRun) -> u8 {
    match run.outcome {
        Outcome::StackOverflow(_) => 0,
        Outcome::OutOfMemory(_) => 1,
        Outcome::Failed(_) | Outcome::EndedEarly(_) if !run.hung() => 2,
        Outcome::Crashed(_) => 3,
        _ => 4,
    }
}

/// The next blank function, and the test that stops at its `todo!()`; and
/// the written functions whose own test has not passed yet (it needs one
/// still to write, or was not run), which cannot be called right so far.
pub(super) fn write_next(
    step: &Step,
    marked: &[Marked],
    next: &Marked,
    (failures, runs): (&[&TestRun], &[TestRun]),
) -> Checked {
    let n = step.number;
    let at_todo =
        |run: &TestRun| run.outcome.message().contains(&next.todo_message());
    // The test that stops at its `todo!()`, its own (the marker's) first.
    let own = failures
        .iter()
        .copied()
        .filter(|run| at_todo(run) || run.case.id() == next.test)
        .min_by_key(|run| (!at_todo(run), run.case.id() != next.test));
    let evidence = match own {
        Some(run) => describe(run),
        None => format!("{} shows it once it compiles and runs", next.test),
    };
    let written = marked.iter().filter(|m| !step.is_unwritten(m)).count();
    let own_test_passed = |m: &Marked| {
        runs.iter()
            .any(|run| run.case.id() == m.test && run.outcome.passed())
    };
    let unchecked: Vec<String> = marked
        .iter()
        .filter(|m| !step.is_unwritten(m) && !own_test_passed(m))
        .map(|m| format!("`{}`", m.function))
        .collect();
    let unchecked = match unchecked.as_slice() {
        [] => String::new(),
        names => format!(
            " Not checked yet, as their tests need a function still to write: {}.",
            names.join(", ")
        ),
    };
    let blank = track::is_the_blank(next, &step.read(&next.file)[next.body.clone()]);
    Checked {
        at_its_todo: own.is_some_and(at_todo),
        ..failing(
            failures,
            Some(next.function.clone()),
            format!(
                "Next: {} `{}` ({}).\nRead chapter {n}, section \"{}\".\nThe test \
                 that shows it: {evidence}\n\n{written} of {} functions written so \
                 far.{unchecked} Check again with `cargo workshop check {n}`.",
                if blank {
                    "write"
                } else {
                    "finish (a `todo!()` is still in it)"
                },
                next.function,
                file_and_line(step, next),
                next.section,
                marked.len()
            ),
        )
    }
}

/// Tests fail, and no one function could be named: `untried` when the
/// probe's copy did not build, so none could be put back.
pub(super) fn not_pinned(
    step: &Step,
    marked: &[Marked],
    failures: &[&TestRun],
    ran: &Ran,
    untried: bool,
) -> Checked {
    let n = step.number;
    let shown = failures
        .iter()
        .copied()
        .min_by_key(|run| clarity_rank(run))
        .expect("a failure");
    let why = if marked.is_empty() {
        String::new()
    } else if changed_functions(step, marked).is_empty() {
        "\n\nYour functions are the authors' own, so the cause is elsewhere: \
         in lines outside them, or in the tests."
            .to_owned()
    } else if untried {
        format!(
            "\n\nYour functions with the authors' versions beside them do not \
             build (one of theirs may call a helper yours no longer has), so \
             putting theirs back could not say which of yours is wrong.{}",
            start_with(step, marked, failures)
        )
    } else {
        format!(
            "\n\nPutting back the authors' version of any one of your functions \
             does not make them pass: more than one may be wrong.{}",
            start_with(step, marked, failures)
        )
    };
    let count = failures.len();
    failing(
        failures,
        None,
        format!(
            "{count} of step {n}'s tests fail{}.{why}\n\n{}{}{}",
            if count == 1 { "s" } else { "" },
            describe(shown),
            also_failing(failures, shown),
            left_out(ran, false)
        ),
    )
}

/// Where to start when no one function is named: the first written
/// function, in track order, whose own test fails. Several functions
/// written wrong before the step could judge them is how a track goes
/// wrong, and "more than one may be wrong" alone leaves them to guess.
pub(super) fn start_with(
    step: &Step,
    marked: &[Marked],
    failures: &[&TestRun],
) -> String {
    let Some(first) = marked.iter().find(|m| {
        !step.is_unwritten(m) && failures.iter().any(|run| run.case.id() == m.test)
    }) else {
        return String::new();
    };
    format!(
        " Start with `{}` ({}): its own test, `{}`, fails.",
        first.function,
        file_and_line(step, first),
        first.test
    )
}

/// What a failed test expected and saw, or how it ended, in a participant's
/// words.
pub(super) fn describe(run: &TestRun) -> String {
    let id = run.case.id();
    let message = run.outcome.message();
    // The process aborted only because unwinding reached a function not
    // yet written: the first panic is the failure.
    let panicked = matches!(run.outcome, Outcome::Crashed(_) | Outcome::Failed(_));
    if let Some(first) = test_messages::without_cleanup_noise(message) {
        if panicked {
            let first = indent(&test_messages::shorten(&first));
            return format!("{id} fails:\n\n{first}");
        }
    }
    let said = indent(&test_messages::shorten(message));
    match &run.outcome {
        // Its own guard gave up before `check` would have stopped it: one
        // limit said, the one that ended it.
        Outcome::Failed(_) if run.hung() => format!(
            "{id} gave up after waiting {} s for the loop, within the {} s each \
             test may run:\n\n{said}\n\nA test that waits this long means a \
             loop that never ends, or a wake-up that never comes (a task or a \
             timer that nothing wakes).",
            run.took.as_secs(),
            TEST_DEADLINE.as_secs(),
        ),
        Outcome::Passed | Outcome::Failed(_) => format!("{id} fails:\n\n{said}"),
        Outcome::TimedOut(after) => format!(
            "{id} did not finish in {} s and was stopped. A test that never \
             ends means a loop that never ends, or a wake-up that never comes \
             (a task or a timer that nothing wakes).",
            after.as_secs()
        ),
        Outcome::StackOverflow(message) => format!(
            "{id} crashed: stack overflow (endless recursion?). A function \
             calls itself without end, directly or through another one (say, \
             a `cmp` that calls `partial_cmp`, which calls `cmp`):\n\n{}",
            indent(message)
        ),
        Outcome::OutOfMemory(message) => format!(
            "{id} used more memory than a test may ({MEMORY_LIMIT_GIB} GiB, \
             less beside other tests) and was stopped: a loop that never \
             ends while something grows, e.g. `front()` where `pop_front()` \
             takes the item off the queue:\n\n{}",
            indent(message)
        ),
        Outcome::Crashed(_) => {
            format!(
                "{id} crashed (its process ended abruptly). It printed:\n\n{said}"
            )
        }
        Outcome::EndedEarly(_) => format!(
            "{id} did not finish: its process ended, with success, before the \
             test did, so it asserted nothing. Something it called ended the \
             whole program (`std::process::exit`?) where it should return. \
             It printed last:\n\n{said}"
        ),
    }
}

/// The failures other than the one `shown`, named in a line.
pub(super) fn also_failing(failures: &[&TestRun], shown: &TestRun) -> String {
    let others: Vec<String> = failures
        .iter()
        .filter(|run| run.case != shown.case)
        .map(|run| format!("{} ({})", run.case.id(), run.outcome.summary()))
        .collect();
    if others.is_empty() {
        return String::new();
    }
    format!("\nAlso failing: {}.", first_few(&others, 4).join("; "))
}

/// The first `count` of `items`, and how many more there are.
pub(super) fn first_few(items: &[String], count: usize) -> Vec<String> {
    let mut shown = items[..items.len().min(count)].to_vec();
    if items.len() > count {
        shown.push(format!("and {} more", items.len() - count));
    }
    shown
}

/// The tests `ran` left out, and why; `named`: whether the verdict names
/// a function.
pub(super) fn left_out(ran: &Ran, named: bool) -> String {
    let more = match ran.not_run.len() {
        0 => return String::new(),
        1 => "1 more test was".to_owned(),
        count => format!("{count} more tests were"),
    };
    match (ran.enough, named) {
        (true, true) => format!(
            "\n({more} not run: what failed already names what to fix. Once it \
             is fixed, `check` runs them all.)"
        ),
        (true, false) => format!(
            "\n({more} not run: the failures above are enough to go on. Once they \
             pass, `check` runs them all.)"
        ),
        (false, _) => format!(
            "\n({more} stopped unfinished, after {} s or more: some tests never \
             end, and waiting for them would only delay the verdict.)",
            HURRIED.as_secs()
        ),
    }
}
