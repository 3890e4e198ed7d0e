//! `cargo workshop check N`: runs step N's tests, each in bounded time and
//! memory (`crate::runner`), and turns what failed into one
//! verdict: the function to write or fix next, the test that shows it, and
//! what that test expected and saw, in words a participant can act on.
//!
//! Which function: a blank one (`todo!()`) announces itself in its panic.
//! A written one that is wrong does not, and a test exercises several
//! functions at once, so the verdict compares with the authors' version
//! (kept by `start`): if one written function differs from it, that one is
//! to blame; if more do, `probe` puts the authors' version back for one at
//! a time, in a copy, and sees whose return makes the failing tests pass.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use crate::readable;
use crate::runner::{
    self, Cargo, CompileError, ENOUGH_HANGS, HURRIED, MEMORY_LIMIT_GIB, Outcome,
    Progress, Ran, Settings, TEST_DEADLINE, TestBinary, TestCase, TestRun, Warning,
};
use crate::track::{self, Marked};

use crate::commands::status::fingerprint;
use crate::commands::{Words, indent, times, write};
use crate::step::{Step, find_root, step_folders};

use probe::Found;

mod lock;
mod probe;

pub const HELP: &str = "usage: cargo workshop check N\n\n\
             Builds and runs step N's tests, each in bounded time and memory, \
             and says\nwhich function to write or fix next, with the test that \
             shows it; or that\nthe step passes. Honours CARGO_TARGET_DIR.";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let n = Words::parse(args, &[], HELP)?.only_step("check", HELP)?;
    let step = Step::find(&find_root(here)?, n)?;
    runner::end_everything_on_interrupt();
    runner::adopt_orphans();
    runner::end_what_killed_checks_left(&step.root);
    runner::record_tests_in(&step.root);
    let checked = check(&step, None, &Progress::new(false))?;
    times::checked(&step, &checked);
    println!("{}", checked.report);
    Ok(if checked.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What `check` found.
#[derive(Debug)]
pub struct Checked {
    pub passed: bool,
    /// The function `check` says to write or fix next.
    pub next: Option<String>,
    /// `file::name` of every test that failed.
    pub failed: Vec<String>,
    /// Whether a failed test panicked at the `todo!()` of `next`.
    pub at_its_todo: bool,
    pub report: String,
}

/// A written function blamed for failing tests, and how `check` knows.
#[derive(Debug)]
pub struct Blame<'a> {
    pub function: &'a Marked,
    /// The failing tests it answers for.
    pub tests: Vec<String>,
    pub why: String,
}

/// Runs step N's tests: its `tests/stepNN_*.rs` files and its snapshots.
/// `target_dir` overrides Cargo's, for `verify`.
pub fn check(
    step: &Step,
    target_dir: Option<&Path>,
    progress: &Progress,
) -> Result<Checked, String> {
    let n = step.number;
    let marked = if step.is_started() {
        step.track()?
    } else {
        Vec::new()
    };
    let cargo = Cargo {
        root: step.root.clone(),
        target_dir: target_dir.map(Path::to_path_buf),
    };
    let files = test_files(step)?;
    progress.say(&format!("building step {n}'s tests: {}", files.join(", ")));
    let built = match runner::build_tests(&cargo, &files, progress)? {
        Ok(built) => built,
        Err(error) if machine_trouble(&error.message).is_some() => {
            return Err(build_failed_for_want_of_means(step, &error.message));
        }
        Err(error) => return Ok(does_not_compile(step, &error)),
    };
    if let Err(err) = runner::build_programs(&cargo, &step.package(), progress) {
        progress.say(&err);
    }
    let mut cases = test_cases(step, &files, &built.binaries)?;
    // The tests the markers name first: the ones the chapter cites, and
    // the best evidence should tests that never end leave little time for
    // the rest. Then the step's own files, the trace, the snapshots.
    cases.sort_by_key(|case| {
        marked
            .iter()
            .position(|m| m.test == case.id())
            .unwrap_or(usize::MAX)
    });
    progress.say(&format!(
        "running {} tests, each alone and stopped after {} s",
        cases.len(),
        TEST_DEADLINE.as_secs()
    ));
    let mut settings = Settings::new(&cargo, TEST_DEADLINE);
    settings.enough_hangs = Some(ENOUGH_HANGS);
    settings.left_out_when_hurried = vec![TRACES.to_owned(), SNAPSHOTS.to_owned()];
    let own_tests: Vec<&str> = marked.iter().map(|m| m.test.as_str()).collect();
    let ran =
        runner::run_tests_until(&cases, &settings, progress, |runs, left_out| {
            a_failure_to_explain(runs, left_out, &cases, &own_tests)
        });
    let mut checked = verdict_on(step, &marked, &ran, &cargo, progress)?;
    checked
        .report
        .push_str(&warned(step, &own_warnings(step, &marked, &built.warnings)));
    Ok(checked)
}

/// Whether the tests run so far are enough for a verdict: every test a
/// marker names (they run first) has ended, and one test failed with a
/// message, not by hanging, or hangs are everywhere (`ENOUGH_HANGS`, and
/// as many again stopped unfinished once hurried). The tests left would
/// add only to "also failing" and delay the answer the participant waits
/// for (an echo server's tests took 30 s more); they all run once nothing
/// fails.
fn a_failure_to_explain(
    runs: &[TestRun],
    left_out: usize,
    cases: &[TestCase],
    own_tests: &[&str],
) -> bool {
    let ended = |id: &str| runs.iter().any(|run| run.case.id() == id);
    let own_ended = cases
        .iter()
        .filter(|case| own_tests.contains(&case.id().as_str()))
        .all(|case| ended(&case.id()));
    let hangs = runs.iter().filter(|run| run.hung()).count();
    let quick_failure = runs.iter().any(|run| !run.outcome.passed() && !run.hung());
    own_ended
        && (quick_failure || (hangs >= ENOUGH_HANGS && left_out >= ENOUGH_HANGS))
}

/// The compiler's warnings about the functions the participant wrote
/// (a blank one warns of what its `todo!()` leaves unused: not theirs).
fn own_warnings<'a>(
    step: &Step,
    marked: &[Marked],
    warnings: &'a [Warning],
) -> Vec<&'a Warning> {
    warnings
        .iter()
        .filter(|warning| {
            marked.iter().filter(|m| !is_blank(step, m)).any(|m| {
                let text = step.read(&m.file);
                let line_of = |at: usize| text[..at.min(text.len())].lines().count();
                warning.file == format!("{}/{}", step.folder, m.file)
                    && (line_of(m.body.start)..=line_of(m.body.end) + 1)
                        .contains(&warning.line)
            })
        })
        .collect()
}

/// What the compiler says of the participant's functions, to follow the
/// verdict: an unused variable is often a step of the function left out
/// (a `trace` never called, a `waker` never stored).
fn warned(step: &Step, warnings: &[&Warning]) -> String {
    const SHOWN: usize = 3;
    if warnings.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = warnings
        .iter()
        .take(SHOWN)
        .map(|warning| indent(&warning.rendered))
        .collect();
    format!(
        "\n\nThe compiler warns about your code{}:\n\n{}{}",
        if warnings.len() > SHOWN {
            format!(" ({} warnings; the first {SHOWN})", warnings.len())
        } else {
            String::new()
        },
        shown.join("\n\n"),
        format_args!(
            "\n\n(`cargo build -p step{:02}` shows them all.)",
            step.number
        )
    )
}

/// The file of the tests that pin what each step's trace says
/// (`LOOP_TRACE=1`).
const TRACES: &str = "traces";

/// The file of the tests that pin each demo's output.
const SNAPSHOTS: &str = "snapshots";

/// Step N's test files: its own (`tests/stepNN_*.rs`), the loop's first,
/// the echo server's next and the chapter's exercises after, then the
/// traces and the snapshots.
fn test_files(step: &Step) -> Result<Vec<String>, String> {
    let prefix = format!("step{:02}_", step.number);
    let mut files: Vec<String> = fs::read_dir(step.root.join("tests").join("tests"))
        .map_err(|err| format!("tests/tests: {err}"))?
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter_map(|name| Some(name.strip_suffix(".rs")?.to_owned()))
        .filter(|name| name.starts_with(&prefix))
        .collect();
    // The echo servers' tests run a whole program with clients, and wait
    // longest when it is wrong: after the tests of the loop itself.
    files.sort_by_key(|name| {
        (
            name.ends_with("_exercises"),
            name.ends_with("_echo_server"),
            name.clone(),
        )
    });
    files.push(TRACES.to_owned());
    files.push(SNAPSHOTS.to_owned());
    Ok(files)
}

/// Every test of the step's files, and of the traces and snapshots those
/// named for the step, in the order of `files`.
fn test_cases(
    step: &Step,
    files: &[String],
    binaries: &[TestBinary],
) -> Result<Vec<TestCase>, String> {
    let prefix = format!("step{:02}_", step.number);
    let mut cases = Vec::new();
    for file in files {
        let Some(binary) = binaries.iter().find(|binary| binary.file == *file)
        else {
            continue;
        };
        // Of the traces and snapshots, those named for the step.
        let wanted = if binary.file == SNAPSHOTS || binary.file == TRACES {
            prefix.as_str()
        } else {
            ""
        };
        cases.extend(runner::list_tests(binary, wanted)?);
    }
    Ok(cases)
}

// ---------------------------------------------------------------------------
// The verdict.

/// All passed; or a written function is wrong (named from what failed);
/// or the next blank function, in track order, is to be written; or tests
/// fail that no one function answers for.
fn verdict_on(
    step: &Step,
    marked: &[Marked],
    ran: &Ran,
    cargo: &Cargo,
    progress: &Progress,
) -> Result<Checked, String> {
    let failures: Vec<&TestRun> = ran
        .runs
        .iter()
        .filter(|run| !run.outcome.passed())
        .collect();
    if failures.is_empty() {
        return Ok(passes(step, marked, ran.runs.len()));
    }
    let mut checked =
        verdict_on_failures(step, marked, &failures, ran, cargo, progress)?;
    if failures.iter().all(|run| run.case.file == TRACES) {
        checked.report = format!(
            "The loop no longer says what it does: step {n}'s other tests \
             pass, but its trace tests fail (the lines `LOOP_TRACE=1` \
             prints, chapter {n}: a `trace` call left out or moved?).\n\n{}",
            checked.report,
            n = step.number
        );
    }
    Ok(checked)
}

/// The verdict on `failures`, some of `ran`; `Err` when the tool's own
/// machinery failed on the way to one (the probe's copy).
fn verdict_on_failures(
    step: &Step,
    marked: &[Marked],
    failures: &[&TestRun],
    ran: &Ran,
    cargo: &Cargo,
    progress: &Progress,
) -> Result<Checked, String> {
    let blanks: Vec<&Marked> = marked.iter().filter(|m| is_blank(step, m)).collect();
    // A test stopped at a `todo!()` is explained by that blank function.
    let unexplained: Vec<&TestRun> = failures
        .iter()
        .copied()
        .filter(|run| !run.outcome.message().contains("not yet implemented"))
        .collect();
    if !unexplained.is_empty() {
        // Before blaming a function: what changed beside the track may be
        // the cause (an exercise's edit to `main.rs`, a deleted file).
        if let Some(outside) = crate::changes::before_blaming(step) {
            return Ok(Checked {
                passed: false,
                next: None,
                failed: ids(failures),
                at_its_todo: false,
                report: format!("{outside}\n\n{}", describe(unexplained[0])),
            });
        }
        match blame_written(step, marked, &blanks, &unexplained, cargo, progress) {
            Found::Culprit(blame) => {
                return Ok(not_right(step, &blame, failures, ran));
            }
            Found::PassedOnRerun => return Ok(passed_on_rerun(step, failures)),
            Found::ToolFailed(failure) => return Err(failure),
            Found::Nothing => {}
        }
    }
    Ok(match blanks.first() {
        Some(first) => write_next(step, marked, first, failures),
        None => not_pinned(step, marked, failures, ran),
    })
}

/// The written function the `failing` tests come from: the only one that
/// differs from the authors' version, or the one whose original, put back
/// in a copy, makes them pass (`probe`).
fn blame_written<'a>(
    step: &Step,
    marked: &'a [Marked],
    blanks: &[&Marked],
    failing: &[&TestRun],
    cargo: &Cargo,
    progress: &Progress,
) -> Found<'a> {
    let suspects = changed_functions(step, marked);
    match suspects.as_slice() {
        [] => Found::Nothing,
        // With a blank function, its `todo!()` may be the cause: ask the
        // copy even about a lone suspect.
        [only] if blanks.is_empty() => Found::Culprit(Blame {
            function: only,
            tests: failing.iter().map(|run| run.case.id()).collect(),
            why: format!(
                "it is the only function of the track that differs from the \
                 authors' version, so the failures come from `{}`",
                only.function
            ),
        }),
        _ => probe::find(step, cargo, &suspects, failing, progress),
    }
}

/// Whether `marked` is still to be written or finished (a `todo!()` left
/// in it): such a function is named next, before any written one is
/// blamed.
fn is_blank(step: &Step, marked: &Marked) -> bool {
    track::is_unfinished(marked, &step.read(&marked.file)[marked.body.clone()])
}

/// The written functions whose signature or body differs from the
/// authors' (spaces and line breaks aside), in track order.
fn changed_functions<'a>(step: &Step, marked: &'a [Marked]) -> Vec<&'a Marked> {
    marked
        .iter()
        .filter(|m| !is_blank(step, m))
        .filter(|m| {
            let now = &step.read(&m.file)[m.whole()];
            authors_function(step, m).is_none_or(|original| {
                track::without_spaces(&original) != track::without_spaces(now)
            })
        })
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

fn passes(step: &Step, marked: &[Marked], passed: usize) -> Checked {
    let n = step.number;
    if step.is_started() {
        let _ = write(&step.state().join("passed"), &fingerprint(step));
    }
    let after = if step.is_started() {
        format!(
            "You wrote its {} functions. `cargo workshop reset {n}` puts back \
             the authors' version when you want to compare.",
            marked.len()
        )
    } else {
        format!("(It is not started: `cargo workshop start {n}` to build it.)")
    };
    Checked {
        passed: true,
        next: None,
        failed: Vec::new(),
        at_its_todo: false,
        report: format!("Step {n} passes: all {passed} of its tests. {after}"),
    }
}

fn ids(runs: &[&TestRun]) -> Vec<String> {
    runs.iter().map(|run| run.case.id()).collect()
}

fn file_and_line(step: &Step, marked: &Marked) -> String {
    format!(
        "{}/{}, line {}",
        step.folder,
        marked.file,
        fn_line(step, marked)
    )
}

/// The line of `marked`'s signature: the first below its marker that is
/// neither a comment nor an attribute (a doc comment may say "fn").
fn fn_line(step: &Step, marked: &Marked) -> usize {
    let text = step.read(&marked.file);
    let below = text.get(marked.signature.clone()).unwrap_or_default();
    let skipped = below
        .lines()
        .take_while(|line| {
            let line = line.trim_start();
            line.is_empty() || line.starts_with("//") || line.starts_with("#[")
        })
        .count();
    marked.line + 1 + skipped
}

/// A written function is wrong: which, the test that shows it best, and
/// how `check` knows.
fn not_right(
    step: &Step,
    blame: &Blame,
    failures: &[&TestRun],
    ran: &Ran,
) -> Checked {
    let m = blame.function;
    let mut answered: Vec<&TestRun> = failures
        .iter()
        .copied()
        .filter(|run| blame.tests.contains(&run.case.id()))
        .collect();
    answered.sort_by_key(|run| (clarity_rank(run), run.case.id() != m.test));
    // The function's own test, the one its marker names, says the most
    // about it, when it failed with a message rather than hung.
    let own = failures
        .iter()
        .copied()
        .find(|run| run.case.id() == m.test && !run.hung());
    let shown = own
        .or_else(|| answered.first().copied())
        .unwrap_or(failures[0]);
    let others: Vec<&TestRun> = failures
        .iter()
        .copied()
        .filter(|run| run.case != shown.case)
        .collect();
    Checked {
        passed: false,
        next: Some(m.function.clone()),
        failed: ids(failures),
        at_its_todo: false,
        report: format!(
            "Your `{}` ({}) is not right yet.\nRead chapter {}, section \"{}\" \
             again.\n\n{}\n\nWhy `{}`: {}.{}{}\n\nFix it, then check again with \
             `cargo workshop check {}`.",
            m.function,
            file_and_line(step, m),
            step.number,
            m.section,
            describe(shown),
            m.function,
            blame.why,
            also_failing(&others),
            left_out(ran),
            step.number
        ),
    }
}

/// The failures did not come back when the tests ran again as they are.
fn passed_on_rerun(step: &Step, failures: &[&TestRun]) -> Checked {
    let n = step.number;
    Checked {
        passed: false,
        next: None,
        failed: ids(failures),
        at_its_todo: false,
        report: format!(
            "{}\n\nIt passed when run again as it is, so no one function can be \
             named: a test that measures time can fail on a busy machine. Run \
             `cargo workshop check {n}` again; if it fails the same way, read \
             the message above.",
            describe(
                failures
                    .iter()
                    .find(|run| !run
                        .outcome
                        .message()
                        .contains("not yet implemented"))
                    .unwrap_or(&failures[0])
            )
        ),
    }
}

/// Which failure shows a mistake best, lowest first: a crash says the most
/// in the fewest words, a hang the least.
fn clarity_rank(run: &TestRun) -> u8 {
    match run.outcome {
        Outcome::StackOverflow(_) => 0,
        Outcome::OutOfMemory(_) => 1,
        Outcome::Failed(_) | Outcome::EndedEarly(_) if !run.hung() => 2,
        Outcome::Crashed(_) => 3,
        _ => 4,
    }
}

/// The next blank function, and the test that stops at its `todo!()`.
fn write_next(
    step: &Step,
    marked: &[Marked],
    next: &Marked,
    failures: &[&TestRun],
) -> Checked {
    let n = step.number;
    let at_todo =
        |run: &&&TestRun| run.outcome.message().contains(&next.todo_message());
    let own = failures
        .iter()
        .filter(at_todo)
        .find(|run| run.case.id() == next.test)
        .or_else(|| failures.iter().find(at_todo))
        .or_else(|| failures.iter().find(|run| run.case.id() == next.test));
    let evidence = match own {
        Some(run) => describe(run),
        None => format!("{} shows it once it compiles and runs", next.test),
    };
    let written = marked.iter().filter(|m| !is_blank(step, m)).count();
    Checked {
        passed: false,
        next: Some(next.function.clone()),
        failed: ids(failures),
        at_its_todo: own.is_some_and(|run| at_todo(&run)),
        report: format!(
            "Next: {} `{}` ({}).\nRead chapter {n}, section \"{}\".\nThe test \
             that shows it: {evidence}\n\n{written} of {} functions written so \
             far. Check again with `cargo workshop check {n}`.",
            if track::is_the_blank(next, &step.read(&next.file)[next.body.clone()]) {
                "write"
            } else {
                "finish (a `todo!()` is still in it)"
            },
            next.function,
            file_and_line(step, next),
            next.section,
            marked.len()
        ),
    }
}

/// Tests fail, and no one function could be named.
fn not_pinned(
    step: &Step,
    marked: &[Marked],
    failures: &[&TestRun],
    ran: &Ran,
) -> Checked {
    let n = step.number;
    let mut sorted = failures.to_vec();
    sorted.sort_by_key(|run| clarity_rank(run));
    let shown = sorted[0];
    let why = if marked.is_empty() {
        String::new()
    } else if changed_functions(step, marked).is_empty() {
        "\n\nYour functions are the authors' own, so the cause is elsewhere: \
         in lines outside them, or in the tests."
            .to_owned()
    } else {
        "\n\nPutting back the authors' version of any one of your functions \
         does not make them pass: more than one may be wrong."
            .to_owned()
    };
    let count = failures.len();
    Checked {
        passed: false,
        next: None,
        failed: ids(failures),
        at_its_todo: false,
        report: format!(
            "{count} of step {n}'s tests fail{}.{why}\n\n{}{}{}",
            if count == 1 { "s" } else { "" },
            describe(shown),
            also_failing(
                &failures
                    .iter()
                    .copied()
                    .filter(|r| r.case != shown.case)
                    .collect::<Vec<_>>()
            ),
            left_out(ran)
        ),
    }
}

/// What a failed test expected and saw, or how it ended, in a participant's
/// words.
fn describe(run: &TestRun) -> String {
    let id = run.case.id();
    match &run.outcome {
        Outcome::Passed => format!("{id} passes"),
        Outcome::Failed(message) if run.hung() => format!(
            "{id} fails after {} s:\n\n{}\n\nA test that runs this long means a \
             loop that never ends, or a wake-up that never comes (a task or a \
             timer that nothing wakes).",
            run.took.as_secs(),
            indent(&readable::shorten(message))
        ),
        Outcome::Failed(message) => {
            format!("{id} fails:\n\n{}", indent(&readable::shorten(message)))
        }
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
        Outcome::Crashed(message) => format!(
            "{id} crashed (its process ended abruptly). It printed:\n\n{}",
            indent(&readable::shorten(message))
        ),
        Outcome::EndedEarly(message) => format!(
            "{id} did not finish: its process ended, with success, before the \
             test did, so it asserted nothing. Something it called ended the \
             whole program (`std::process::exit`?) where it should return. \
             It printed last:\n\n{}",
            indent(&readable::shorten(message))
        ),
    }
}

fn also_failing(others: &[&TestRun]) -> String {
    const NAMED: usize = 4;
    if others.is_empty() {
        return String::new();
    }
    let mut names: Vec<String> = others
        .iter()
        .take(NAMED)
        .map(|run| format!("{} ({})", run.case.id(), run.outcome.summary()))
        .collect();
    if others.len() > NAMED {
        names.push(format!("and {} more", others.len() - NAMED));
    }
    format!("\nAlso failing: {}.", names.join("; "))
}

fn left_out(ran: &Ran) -> String {
    if ran.not_run.is_empty() {
        return String::new();
    }
    if ran.enough {
        return format!(
            "\n({} more tests were not run: what failed already names what \
             to fix. Once it is fixed, `check` runs them all.)",
            ran.not_run.len()
        );
    }
    format!(
        "\n({} more tests were stopped unfinished, after {} s: some tests \
         never end, and waiting for them would only delay the verdict.)",
        ran.not_run.len(),
        HURRIED.as_secs()
    )
}

/// The tests do not compile: says whose code the first error is in.
/// What the system said when a build or a copy failed for want of the
/// machine's means rather than because of the code, in the participant's
/// words; `None` for anything else (a compile error is the code's).
pub fn machine_trouble(said: &str) -> Option<&'static str> {
    const TROUBLES: [(&[&str], &str); 4] = [
        (
            &[
                "No space left on device",
                "os error 28)",
                "not enough space on the disk",
                "os error 112)",
            ],
            "the disk is full",
        ),
        (
            &["Disk quota exceeded", "os error 122)"],
            "your disk quota is used up",
        ),
        (
            &["Read-only file system", "os error 30)"],
            "the folder cannot be written (a read-only file system)",
        ),
        (
            &[
                "Permission denied (os error 13)",
                "Access is denied. (os error 5)",
            ],
            "a file cannot be written (permission denied)",
        ),
    ];
    TROUBLES
        .iter()
        .find(|(signs, _)| signs.iter().any(|sign| said.contains(sign)))
        .map(|(_, trouble)| *trouble)
}

/// What `check` says when building step N's tests failed for want of the
/// machine's means: not "does not compile", which would send the
/// participant to look for a mistake that is not there.
fn build_failed_for_want_of_means(step: &Step, said: &str) -> String {
    let n = step.number;
    let trouble = machine_trouble(said).unwrap_or("the build failed");
    format!(
        "Cargo could not build step {n}'s tests: {trouble}. This is about the \
         machine, not your code: nothing was tested and no function is \
         blamed. What Cargo said:\n\n{}\n\nMake room (`cargo clean` in \
         another project frees the most), then run `cargo workshop check {n}` \
         again.",
        indent(said.trim())
    )
}

fn does_not_compile(step: &Step, error: &CompileError) -> Checked {
    let n = step.number;
    let folder = error
        .package_dir
        .as_ref()
        .and_then(|dir| dir.file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let owner = step_folders(&step.root)
        .into_iter()
        .find(|(_, name)| *name == folder);
    let message = indent(&error.message);
    let report = match owner {
        Some((m, _)) if m == n => format!(
            "Step {n} does not compile yet. The first error:\n\n{message}\n\n\
             (`cargo build -p step{n:02}` shows them all.)"
        ),
        Some((m, name)) => format!(
            "Step {m} ({name}/) does not compile, and checking step {n} builds \
             every step's tests, so step {m} must compile first. Its first \
             error:\n\n{message}\n\n(`cargo build -p step{m:02}` shows them \
             all{}.)",
            if step
                .root
                .join(".workshop")
                .join(format!("step{m:02}"))
                .is_dir()
            {
                format!("; `cargo workshop reset {m}` puts step {m} back")
            } else {
                String::new()
            }
        ),
        None if folder == "tests" => format!(
            "The tests do not compile against step {n}: did the signature of \
             a function, or a public name, change? The first error:\n\n\
             {message}\n\n(`cargo test -p workshop-tests --no-run` shows them all.)"
        ),
        None => {
            format!("The workspace does not compile. The first error:\n\n{message}")
        }
    };
    Checked {
        passed: false,
        next: None,
        failed: Vec::new(),
        at_its_todo: false,
        report,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_disk_full_or_read_only_is_the_machine_and_a_compile_error_is_not() {
        let disk_full = "error: failed to write /t/deps/libstep04-1.rmeta: \
                         No space left on device (os error 28)";
        assert_eq!(machine_trouble(disk_full), Some("the disk is full"));
        let linker = "error: linking with `cc` failed\n  = note: /usr/bin/ld: \
                      final link failed: No space left on device";
        assert_eq!(machine_trouble(linker), Some("the disk is full"));
        let read_only = "could not write x: Read-only file system (os error 30)";
        assert!(machine_trouble(read_only).is_some());
        let compile_error = "error[E0308]: mismatched types\n --> \
                             step04-select-echo/src/event_loop.rs:12:5";
        assert_eq!(machine_trouble(compile_error), None);
    }
    use super::*;

    fn step(n: &str) -> Step {
        Step::find(&crate::workspace_root(), n).expect("the step")
    }

    fn error_in(folder: &str) -> CompileError {
        CompileError {
            package_dir: Some(crate::workspace_root().join(folder)),
            message: "error[E0308]: mismatched types".to_owned(),
        }
    }

    #[test]
    fn a_compile_error_in_another_step_is_named_as_that_steps() {
        let report =
            does_not_compile(&step("3"), &error_in("step05-coroutines")).report;
        assert!(
            report.starts_with("Step 5 (step05-coroutines/) does not compile"),
            "{report}"
        );
        assert!(
            report.contains("`cargo build -p step05` shows them"),
            "{report}"
        );
        assert!(report.contains("error[E0308]"), "{report}");
    }

    fn failed(id: &str, message: &str) -> TestRun {
        let (file, name) = id.split_once("::").expect("file::name");
        TestRun {
            case: TestCase {
                file: file.to_owned(),
                name: name.to_owned(),
                binary: std::path::PathBuf::new(),
                env: Vec::new(),
            },
            outcome: Outcome::Failed(message.to_owned()),
            took: std::time::Duration::from_millis(300),
        }
    }

    #[test]
    fn a_quick_failure_ends_the_run_once_the_functions_own_tests_have_ended() {
        let own = failed("step04_loop::own", "the reader ran at once");
        let other = failed("step04_loop::other", "no reply");
        let passed = TestRun {
            outcome: Outcome::Passed,
            ..failed("step04_loop::own", "")
        };
        let hung = TestRun {
            outcome: Outcome::TimedOut(TEST_DEADLINE),
            took: TEST_DEADLINE,
            ..failed("step04_echo_server::slow", "")
        };
        let cases: Vec<TestCase> = [&own, &other, &hung]
            .iter()
            .map(|run| run.case.clone())
            .collect();
        let own_tests = ["step04_loop::own"];
        let enough =
            |runs: &[TestRun]| a_failure_to_explain(runs, 0, &cases, &own_tests);
        assert!(enough(std::slice::from_ref(&own)), "its own test failed");
        assert!(enough(&[passed.clone(), other.clone()]));
        assert!(
            !enough(std::slice::from_ref(&other)),
            "its own test is still running"
        );
        assert!(!enough(std::slice::from_ref(&passed)), "nothing failed");
        assert!(
            !enough(&[passed.clone(), hung.clone()]),
            "a hang is no explanation"
        );
        let hangs = [passed, hung.clone(), hung];
        assert!(!a_failure_to_explain(&hangs, 1, &cases, &own_tests));
        assert!(
            a_failure_to_explain(&hangs, 2, &cases, &own_tests),
            "two hangs, and two more stopped unfinished: hangs everywhere"
        );
    }

    #[test]
    fn a_verdict_points_at_the_functions_own_line() {
        for n in 1..=8 {
            let step = step(&n.to_string());
            for marked in step.authors_track().expect("a track") {
                let text = step.read(&marked.file);
                let line = fn_line(&step, &marked);
                let shown = text.lines().nth(line - 1).unwrap_or_default();
                assert!(
                    shown.contains(&format!(
                        "fn {}",
                        marked.function.rsplit("::").next().unwrap_or_default()
                    )),
                    "step {n}, {}: line {line} is {shown:?}",
                    marked.function
                );
            }
        }
    }

    #[test]
    fn a_functions_own_test_is_shown_when_it_fails() {
        let step = step("5");
        let marked = step.track().expect("step 5's track");
        let wake = marked
            .iter()
            .find(|m| m.function == "TaskWaker::wake_by_ref")
            .expect("wake_by_ref is marked");
        let other =
            failed("step05_tasks::block_on_inside_a_task_is_refused", "unwrap");
        let own = failed(&wake.test, "polled twice, not once");
        let blame = Blame {
            function: wake,
            tests: vec![other.case.id()],
            why: "the probe says so".to_owned(),
        };
        let ran = Ran {
            runs: vec![other.clone(), own.clone()],
            not_run: Vec::new(),
            enough: false,
        };
        let report = not_right(&step, &blame, &[&other, &own], &ran).report;
        assert!(
            report.contains(&format!("{} fails:\n\n    polled twice", wake.test)),
            "{report}"
        );
    }

    #[test]
    fn failing_trace_tests_alone_say_the_loop_no_longer_says_what_it_does() {
        let step = step("5");
        let trace = failed(
            "traces::step05_traces_woken_tasks_and_polls",
            "no poll line",
        );
        let ran = Ran {
            runs: vec![trace],
            not_run: Vec::new(),
            enough: false,
        };
        let cargo = Cargo {
            root: step.root.clone(),
            target_dir: None,
        };
        let report = verdict_on(&step, &[], &ran, &cargo, &Progress::new(true))
            .expect("a verdict")
            .report;
        assert!(
            report.starts_with("The loop no longer says what it does"),
            "{report}"
        );
        assert!(report.contains("no poll line"), "{report}");
        assert!(
            test_files(&step)
                .expect("files")
                .contains(&TRACES.to_owned())
        );
    }

    #[test]
    fn warnings_about_a_written_function_are_its_own_and_others_are_not() {
        let step = step("5");
        let marked = step.track().expect("step 5's track");
        let poll = &marked[0];
        let text = step.read(&poll.file);
        let body_line = text[..poll.body.start].lines().count() + 1;
        let warning = |line: usize| Warning {
            file: format!("{}/{}", step.folder, poll.file),
            line,
            rendered: format!("warning: unused variable at {line}"),
        };
        let warnings = [warning(body_line), warning(1)];
        let own = own_warnings(&step, &marked, &warnings);
        assert_eq!(own, [&warnings[0]]);
        let report = warned(&step, &own);
        assert!(
            report.contains("The compiler warns about your code"),
            "{report}"
        );
        assert!(report.contains(&warnings[0].rendered), "{report}");
    }

    /// What a test that unwraps `block_on`'s lost wake-up shows, as
    /// `check` shows it, for each step that has one.
    macro_rules! an_unwrapped_lost_wake_up {
        ($($step:ident),*) => {[$({
            let event_loop = std::rc::Rc::new($step::EventLoop::new().expect("a loop"));
            // Nothing will ever wake it: a lost wake-up.
            let error = event_loop.block_on(std::future::pending::<()>()).unwrap_err();
            readable::shorten(&format!(
                "called `Result::unwrap()` on an `Err` value: {error:?}"
            ))
        }),*]};
    }

    #[test]
    fn an_unwrapped_lost_wake_up_shows_its_explanation_whole() {
        for shown in an_unwrapped_lost_wake_up!(step05, step06, step07, step08) {
            assert!(shown.contains("no task can ever be woken again"), "{shown}");
            assert!(shown.contains("nothing holds its waker"), "{shown}");
            assert!(!shown.contains("more characters"), "{shown}");
        }
    }

    #[test]
    fn a_compile_error_in_the_step_itself_is_the_steps() {
        let report = does_not_compile(&step("3"), &error_in("step03-sleep")).report;
        assert!(
            report.starts_with("Step 3 does not compile yet"),
            "{report}"
        );
        assert!(report.contains("`cargo build -p step03`"), "{report}");
    }

    #[test]
    fn a_compile_error_in_the_tests_says_a_signature_may_have_changed() {
        let report = does_not_compile(&step("3"), &error_in("tests")).report;
        assert!(
            report.contains("did the signature of a function"),
            "{report}"
        );
    }
}
