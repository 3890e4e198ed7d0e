//! `cargo workshop check N`: runs step N's tests, each in bounded time and
//! memory (`crate::runner`), and turns what failed into one verdict: the
//! function to write or fix next, the test that shows it, and what that
//! test expected and saw. A blank function says so in its `todo!()`; a
//! written one that is wrong differs from the authors' version (kept by
//! `start`), and `probe` asks which when several differ. `trace` sets the
//! demo's trace beside the authors'.

use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::commands::{Words, indent, times};
use crate::runner::{
    self, Built, Cargo, CompileError, ENOUGH_HANGS, Outcome, Progress, Ran,
    Settings, TEST_DEADLINE, TestBinary, TestCase, TestRun, Warning,
};
use crate::step::{Step, find_root};
use crate::track::Marked;

use compile::{build_failed_for_the_machine, does_not_compile};
use meanwhile::Meanwhile;
use verdict::verdict_on;

pub use compile::machine_trouble;
pub use verdict::{authors_body, authors_function};

pub mod build_ahead;
mod clues;
mod compile;
mod lock;
mod meanwhile;
mod prints;
mod probe;
mod report;
mod trace;
mod verdict;

pub const HELP: &str = "usage: cargo workshop check N [--build-only]\n\n\
             Builds and runs step N's tests, each in bounded time and memory, \
             and says\nwhich function to write or fix next, with the test that \
             shows it; or that\nthe step passes. Honours CARGO_TARGET_DIR. \
             With --build-only, builds what the\ncheck needs and runs nothing \
             (what `start` leaves running in the background).";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &[build_ahead::BUILD_ONLY], HELP)?;
    let n = words.only_step("check", HELP)?;
    let step = Step::find(&find_root(here)?, n)?;
    if words.has(build_ahead::BUILD_ONLY) {
        return build_ahead::build_only(&step);
    }
    runner::end_everything_on_interrupt();
    runner::adopt_orphans();
    runner::end_leftovers_of_killed_checks(&step.root);
    runner::record_tests_in(&step.root);
    let before = times::files_before_check(&step);
    let checked = check(&step, None, &Progress::new(false))?;
    times::checked(&step, &before, checked.passed, checked.next.as_deref());
    if let Some(file) = std::env::var_os(NEXT_FILE_VAR) {
        // For `watch`, which runs this check: the function the verdict
        // names, for its hint. Lost, it costs only the hint's choice.
        let _ = fs::write(file, checked.next.as_deref().unwrap_or_default());
    }
    println!("{}", for_the_terminal(&checked.report));
    Ok(if checked.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `report` broken between words at the terminal's width, when stdout is
/// one (a piped report, `watch`'s, stays as it is): a terminal breaks a
/// long line mid-word.
fn for_the_terminal(report: &str) -> String {
    if !std::io::stdout().is_terminal() {
        return report.to_owned();
    }
    let (width, _) = super::terminal_size();
    let lines: Vec<String> = report
        .lines()
        .flat_map(|line| super::between_words(line, width))
        .collect();
    lines.join("\n")
}

/// Set by `cargo workshop watch` in the environment of each check it runs:
/// the file where the check writes the function its verdict names (empty
/// when it names none), for `watch`'s hint.
pub const NEXT_FILE_VAR: &str = "WORKSHOP_NEXT_FILE";

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
    let marked = if step.is_started() {
        step.track()?
    } else {
        Vec::new()
    };
    let cargo = Cargo {
        root: step.root.clone(),
        target_dir: target_dir.map(Path::to_path_buf),
    };
    build_ahead::wait_for_it(&cargo, progress);
    let files = test_files(step)?;
    let (built, programs) = match build(step, &cargo, &files, progress)? {
        Ok(built) => built,
        Err(error) if machine_trouble(&error.message).is_some() => {
            return Err(build_failed_for_the_machine(step, &error.message));
        }
        Err(error) => return Ok(does_not_compile(step, &error)),
    };
    let mut cases = test_cases(step, &files, &built.binaries)?;
    // The tests the markers name first: the ones the chapter cites, and
    // the best evidence. Then the traces': a loop that does its work in
    // other turns fails only there. Then the step's files, the snapshots.
    cases.sort_by_key(|case| {
        let place = marked.iter().position(|m| m.test == case.id());
        (place.is_none(), case.file != TRACES, place)
    });
    progress.say(&format!(
        "running {} tests, each alone and stopped after {} s",
        cases.len(),
        TEST_DEADLINE.as_secs()
    ));
    let mut settings = test_settings(&cargo, TEST_DEADLINE, programs.as_deref());
    settings.enough_hangs = Some(ENOUGH_HANGS);
    settings.left_out_when_hurried = vec![TRACES.to_owned(), SNAPSHOTS.to_owned()];
    let own_tests: Vec<&str> = marked.iter().map(|m| m.test.as_str()).collect();
    let demo = programs.as_deref();
    let (ran, early) = std::thread::scope(|scope| {
        let meanwhile =
            Meanwhile::new(scope, step, &marked, (&cargo, demo), progress);
        let ran = runner::run_tests_until(&cases, &settings, progress, |so_far| {
            meanwhile.look_at(so_far);
            let hangs = so_far.runs.iter().filter(|run| run.hung()).count();
            meanwhile.named_the_function()
                || (meanwhile.asking_about_hangs() && hangs >= ENOUGH_HANGS)
                || a_failure_to_explain(
                    so_far.runs,
                    so_far.left_out,
                    &cases,
                    &own_tests,
                )
        });
        let failed = ran.runs.iter().any(|run| !run.outcome.passed())
            || meanwhile.named_the_function();
        (ran, meanwhile.answers(failed))
    });
    let (mut ran, mut early) = (ran, early);
    stopped_while_stuck(&mut ran, std::mem::take(&mut early.stuck));
    let checked = match ran.runs.iter().find_map(|run| tool_trouble(&run.outcome)) {
        Some(trouble) => Err(tests_could_not_run(step, trouble)),
        None => verdict_on(step, &marked, &ran, (demo, &cargo), early, progress),
    };
    if let Some(programs) = &programs {
        runner::remove_programs(programs);
    }
    let mut checked = checked?;
    checked
        .report
        .push_str(&warned(step, &own_warnings(step, &marked, &built.warnings)));
    Ok(checked)
}

/// The tests the probe named a function for while they seemed stuck, then
/// stopped with the rest: they count as failures, stopped at the time they
/// had run when the probe was asked (`meanwhile::stopped_as_they_are`).
fn stopped_while_stuck(ran: &mut Ran, stuck: Vec<TestRun>) {
    for run in stuck {
        if !ran.runs.iter().any(|ended| ended.case == run.case) {
            ran.not_run.retain(|case| *case != run.case);
            ran.runs.push(run);
        }
    }
}

/// What `check` builds before it runs a test, and `build_ahead` too, so
/// that the two cannot drift apart: the step's test files `files`, then, if
/// they compile, its program and examples (a failure there is only said:
/// the tests that run them say more), whose folder it returns.
fn build(
    step: &Step,
    cargo: &Cargo,
    files: &[String],
    progress: &Progress,
) -> Result<Result<(Built, Option<PathBuf>), CompileError>, String> {
    progress.say(&format!(
        "building step {}'s tests: {}",
        step.number,
        files.join(", ")
    ));
    let built = match runner::build_tests(cargo, files, progress)? {
        Ok(built) => built,
        Err(error) => return Ok(Err(error)),
    };
    let programs = match runner::build_programs(cargo, &step.package(), progress) {
        Ok(folder) => Some(folder),
        Err(err) => {
            progress.say(&err);
            None
        }
    };
    Ok(Ok((built, programs)))
}

/// The settings of a run of the step's tests (the participant's, or the
/// probe's reruns) with `deadline`: where the programs they run wait,
/// built before them, so that they never wait for Cargo's lock inside
/// their deadline; and a pinned trace's test stops at its first difference.
pub(crate) fn test_settings(
    cargo: &Cargo,
    deadline: std::time::Duration,
    programs: Option<&Path>,
) -> Settings {
    let mut settings = Settings::new(cargo, deadline);
    settings.env.push((
        crate::pinned_trace::STOP_AT_A_DIFFERENCE.to_owned(),
        "1".to_owned(),
    ));
    if let Some(folder) = programs {
        settings.env.push((
            crate::PREBUILT_PROGRAMS.to_owned(),
            folder.display().to_string(),
        ));
    }
    settings
}

/// What a test's failure says of the tool's trouble rather than of the
/// code: a test or a program it runs gone from the build folder (another
/// terminal's `cargo clean`, a build that replaced it), or the machine's
/// means (a full disk). No function of the participant's can print these.
fn tool_trouble(outcome: &Outcome) -> Option<&'static str> {
    const GONE: [&str; 3] = [
        "could not start the test",
        // `workshop_tests::prebuilt`, when a program handed over is gone.
        "is set, but",
        "No such file or directory (os error 2)",
    ];
    let said = outcome.message();
    if GONE.iter().any(|sign| said.contains(sign)) {
        return Some("a file it had built is gone from the build folder");
    }
    machine_trouble(said)
}

/// What `check` says when the tool's trouble, not the code, stopped the
/// tests: exit 2, and no function blamed.
fn tests_could_not_run(step: &Step, trouble: &str) -> String {
    let n = step.number;
    format!(
        "Step {n}'s tests could not run: {trouble}. This is about the tool and \
         the machine, not your code: no function is blamed. (Did a second \
         terminal run `cargo clean`, or fill the disk?) Run `cargo workshop \
         check {n}` again."
    )
}

/// Whether the tests run so far are enough for a verdict: every test a
/// marker names (they run first) has ended, and one test failed with a
/// message, not by hanging, or hangs are everywhere (`ENOUGH_HANGS`, and
/// as many again stopped unfinished once hurried). The tests left would
/// only delay the answer; they all run once nothing fails.
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
    // Lines a participant's prints added to a pinned output explain
    // nothing: the tests left decide.
    let quick_failure = runs.iter().any(|run| {
        !run.outcome.passed() && !run.hung() && prints::added_lines(run).is_none()
    });
    own_ended
        && (quick_failure || (hangs >= ENOUGH_HANGS && left_out >= ENOUGH_HANGS))
}

/// The compiler's warnings about the functions the participant wrote (not
/// the blank ones), and first about a type of the step that a written
/// function was to construct and does not: the best clue to it.
fn own_warnings<'a>(
    step: &Step,
    marked: &[Marked],
    warnings: &'a [Warning],
) -> Vec<&'a Warning> {
    let written: Vec<&Marked> =
        marked.iter().filter(|m| !step.is_unwritten(m)).collect();
    let left_out_type = |warning: &Warning| {
        warning.file.starts_with(&format!("{}/", step.folder))
            && never_constructed(&warning.rendered).is_some_and(|name| {
                written.iter().any(|m| {
                    authors_body(step, m).is_some_and(|theirs| {
                        left_out(name, &theirs, &step.read(&m.file)[m.body.clone()])
                    })
                })
            })
    };
    let inside = |warning: &Warning| {
        written.iter().any(|m| {
            let text = step.read(&m.file);
            let line_of = |at: usize| text[..at.min(text.len())].lines().count();
            warning.file == format!("{}/{}", step.folder, m.file)
                && (line_of(m.body.start)..=line_of(m.body.end) + 1)
                    .contains(&warning.line)
        })
    };
    let mut own: Vec<&Warning> = warnings
        .iter()
        .filter(|warning| left_out_type(warning))
        .collect();
    own.extend(
        warnings
            .iter()
            .filter(|warning| !left_out_type(warning) && inside(warning)),
    );
    own
}

/// The type a warning says is never constructed (`struct `Contained` is
/// never constructed`), if it says so.
fn never_constructed(rendered: &str) -> Option<&str> {
    let first = rendered.lines().next()?;
    if !first.contains(" is never constructed") {
        return None;
    }
    first.split('`').nth(1)
}

/// Whether the authors' body (`theirs`) names `name` and the
/// participant's (`now`) does not, comments aside (a note may name it).
fn left_out(name: &str, theirs: &str, now: &str) -> bool {
    let names = |text: &str| {
        let code: Vec<&str> = text
            .lines()
            .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
            .collect();
        let text = code.join("\n");
        text.match_indices(name).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            [before, after]
                .into_iter()
                .flatten()
                .all(|c| !(c.is_alphanumeric() || c == '_'))
        })
    };
    names(theirs) && !names(now)
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

#[cfg(test)]
mod tests;
