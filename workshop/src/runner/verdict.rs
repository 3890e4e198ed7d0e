//! How one test ended, judged from its exit status and the signs looked
//! for in all it printed (`output`), and what of its output is shown: the
//! test's own panic lines, and the first changed lines of a snapshot.

use std::process::ExitStatus;
use std::time::Duration;

use super::output::{Output, tail};
use super::{HUNG_AFTER, TestCase};

/// How one test ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// It panicked: the panic's own lines.
    Failed(String),
    /// It ran past its deadline and was stopped.
    TimedOut(Duration),
    /// It crashed: its stack overflowed (what it printed).
    StackOverflow(String),
    /// It hit the memory limit (what it printed).
    OutOfMemory(String),
    /// It ended some other way: aborted, or killed by a signal.
    Crashed(String),
    /// Its process ended with success before the test did: libtest never
    /// said it passed (what it printed).
    EndedEarly(String),
}

impl Outcome {
    pub fn passed(&self) -> bool {
        *self == Outcome::Passed
    }

    /// What the test printed about its end, if anything.
    pub fn message(&self) -> &str {
        match self {
            Outcome::Passed | Outcome::TimedOut(_) => "",
            Outcome::Failed(text)
            | Outcome::StackOverflow(text)
            | Outcome::OutOfMemory(text)
            | Outcome::Crashed(text)
            | Outcome::EndedEarly(text) => text,
        }
    }

    /// One line for the progress: how it ended.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Passed => "passed".to_owned(),
            Outcome::Failed(_) => "failed".to_owned(),
            Outcome::TimedOut(after) => {
                format!("did not finish in {} s: stopped", after.as_secs())
            }
            Outcome::StackOverflow(_) => "stack overflow".to_owned(),
            Outcome::OutOfMemory(_) => "used too much memory: stopped".to_owned(),
            Outcome::Crashed(_) => "crashed".to_owned(),
            Outcome::EndedEarly(_) => {
                "ended its process before it finished".to_owned()
            }
        }
    }
}

/// A test and how it ended.
#[derive(Debug, Clone)]
pub struct TestRun {
    pub case: TestCase,
    pub outcome: Outcome,
    pub took: Duration,
}

impl TestRun {
    /// Whether it failed only for lines added to the output it pins,
    /// every pinned line still there (`crate::test_messages::ONLY_ADDED_LINES`):
    /// a participant's own prints, no failure that names a mistake.
    pub fn only_lines_added(&self) -> bool {
        matches!(&self.outcome, Outcome::Failed(message)
            if message.contains(crate::test_messages::ONLY_ADDED_LINES))
    }

    /// Whether it looks like a loop that never ends: stopped at the
    /// deadline or the memory limit, or failed only after `HUNG_AFTER` (a
    /// test's own guard, `within`, gave up).
    pub fn hung(&self) -> bool {
        match self.outcome {
            Outcome::TimedOut(_) | Outcome::OutOfMemory(_) => true,
            Outcome::Passed => false,
            _ => self.took >= HUNG_AFTER,
        }
    }
}

/// How a test ended, from its exit status and the signs in all it printed
/// (what is kept of that only shows it).
pub(super) fn classify(
    status: ExitStatus,
    stdout: &Output,
    stderr: &Output,
    name: &str,
) -> Outcome {
    let (printed, errors) = (&stdout.text, &stderr.text);
    if status.success() {
        // The test may have ended the whole process (`process::exit(0)`).
        return if stdout.held(PASSED) {
            Outcome::Passed
        } else {
            Outcome::EndedEarly(tail(format!("{printed}{errors}").trim(), 15))
        };
    }
    if stderr.held(OVERFLOWED) {
        return Outcome::StackOverflow(panic_lines(errors, name));
    }
    if STDERR_SIGNS[1..].iter().any(|sign| stderr.held(sign)) {
        return Outcome::OutOfMemory(panic_lines(errors, name));
    }
    if status.code() == Some(101) {
        let mut message = panic_lines(errors, name);
        if let Some(difference) = snapshot_difference(stdout) {
            message = format!("{message}\n{difference}");
        }
        return Outcome::Failed(message);
    }
    Outcome::Crashed(panic_lines(errors, name))
}

/// What libtest prints once the one test it ran has passed.
const PASSED: &str = "test result: ok. 1 passed;";

/// What Rust prints when a thread's stack overflows.
const OVERFLOWED: &str = "has overflowed its stack";

/// How insta's table marks a line of the snapshot that the new output no
/// longer has (after the line numbers). Looked for in all of stdout, as a
/// table may be longer than what is kept of it.
const REMOVED_LINE: &str = "│-";

/// Every sign `classify` looks for on stdout.
pub(super) const STDOUT_SIGNS: &[&str] = &[PASSED, REMOVED_LINE];

/// Every sign `classify` looks for on stderr: a stack overflow, then those
/// of the memory limit reached (Rust aborts when an allocation fails; a
/// thread or a demo that cannot get memory says so in its own words).
pub(super) const STDERR_SIGNS: &[&str] = &[
    OVERFLOWED,
    "memory allocation of",
    "Cannot allocate memory",
    "out of memory",
];

/// The first changed lines of a snapshot that no longer matches, from the
/// table insta prints on stdout; its panic message alone says only that
/// the snapshot failed.
fn snapshot_difference(stdout: &Output) -> Option<String> {
    const SHOWN: usize = 8;
    let table: Vec<&str> = table_lines(&stdout.text).collect();
    let is_change = |text: &str| text.starts_with(['+', '-']);
    let changes: Vec<usize> = (0..table.len())
        .filter(|&at| is_change(table[at]))
        .collect();
    let mut shown: Vec<usize> = changes.iter().take(SHOWN).copied().collect();
    // The first of each kind is always shown (`trace::story` reads them):
    // a trace stopped at its first difference is followed by every line of
    // the authors' after it, removed, which hid its own.
    for sign in ['+', '-'] {
        if !shown.iter().any(|&at| table[at].starts_with(sign)) {
            shown.extend(changes.iter().find(|&&at| table[at].starts_with(sign)));
        }
    }
    shown.sort_unstable();
    let lines_shown = with_context(&table, &shown);
    // Lines only added (perhaps the participant's own prints) count against
    // no function: judged on the whole table, as the part shown may be cut
    // (a `dbg!` in a function that runs each turn adds 200,000 lines to
    // step 3's demo), and the cut part may hold a removed line.
    let only_added = !stdout.held(REMOVED_LINE);
    (!shown.is_empty()).then(|| {
        let heading = if only_added {
            crate::test_messages::ONLY_ADDED_LINES
        } else {
            crate::test_messages::OTHER_LINES
        };
        format!("{heading}\n{}", lines_shown.join("\n"))
    })
}

/// The table's lines at `shown` (changed lines, in order), with the
/// unchanged line before the first and those between two that are close,
/// so that a line moved reads as moved (`+pour the tea`, ` brew the tea`,
/// `-pour the tea`), not as the same line taken out and put back; a longer
/// gap is one `…`.
fn with_context<'a>(table: &[&'a str], shown: &[usize]) -> Vec<&'a str> {
    const CLOSE: usize = 2;
    let mut lines = Vec::new();
    if let Some(before) = shown.first().and_then(|first| first.checked_sub(1)) {
        lines.push(table[before]);
    }
    for (n, &at) in shown.iter().enumerate() {
        if let Some(&previous) = n.checked_sub(1).map(|p| &shown[p]) {
            match at - previous - 1 {
                0 => {}
                gap if gap <= CLOSE => lines.extend(&table[previous + 1..at]),
                _ => lines.push(" …"),
            }
        }
        lines.push(table[at]);
    }
    lines
}

/// The lines of the table insta prints, each without its line numbers.
fn table_lines(stdout: &str) -> impl Iterator<Item = &str> {
    stdout
        .lines()
        .filter_map(|line| line.split_once('│').map(|(_, text)| text))
}

/// The panics in the stderr of test `name`: each `panicked at` line and
/// the message after it, up to libtest's note about backtraces; only the
/// test's own when it has one (a test may make other threads panic on
/// purpose). Else the last lines.
fn panic_lines(stderr: &str, name: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut panics: Vec<Vec<&str>> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let starts_a_panic = line.starts_with("thread '")
            && (line.contains(" panicked at ")
                || line.contains(" overflowed its stack"));
        if starts_a_panic {
            let message = lines[index + 1..]
                .iter()
                .take_while(|line| !ends_a_panic(line))
                .take(40);
            panics.push(std::iter::once(*line).chain(message.copied()).collect());
        }
    }
    let own = format!("thread '{name}'");
    if panics.iter().any(|panic| panic[0].starts_with(&own)) {
        panics.retain(|panic| panic[0].starts_with(&own));
    }
    if panics.is_empty() {
        let printed: Vec<&str> = lines
            .into_iter()
            .filter(|line| !ends_a_panic(line))
            .collect();
        return tail(&printed.join("\n"), 15);
    }
    let all: Vec<&str> = panics.concat();
    all.join("\n").trim_end().to_owned()
}

fn ends_a_panic(line: &str) -> bool {
    line.starts_with("note: run with `RUST_BACKTRACE")
        || line.starts_with("stack backtrace:")
        || line.starts_with("thread '")
        || line.starts_with("fatal runtime error")
        || line.starts_with("test result:")
}

#[cfg(test)]
mod tests {
    use super::super::output::{self, Output};
    use super::{STDOUT_SIGNS, panic_lines};

    /// `super::snapshot_difference` of `stdout` read as a test's is.
    fn snapshot_difference(stdout: &str) -> Option<String> {
        super::snapshot_difference(&read(stdout))
    }

    fn read(stdout: &str) -> Output {
        output::read(stdout.as_bytes(), STDOUT_SIGNS)
    }

    #[test]
    fn a_tests_own_panic_is_shown_not_those_it_caused_on_purpose() {
        let stderr = "thread '<unnamed>' (7) panicked at a.rs:1:1:\n\
                      out of coffee\n\
                      thread 'joins' (6) panicked at b.rs:2:2:\n\
                      still running after 20s\n\
                      note: run with `RUST_BACKTRACE=1` to see a backtrace";
        assert_eq!(
            panic_lines(stderr, "joins"),
            "thread 'joins' (6) panicked at b.rs:2:2:\nstill running after 20s"
        );
    }

    #[test]
    fn a_failed_snapshot_shows_its_first_changed_lines() {
        let stdout = "-old snapshot\n+new results\n─────┬─────\n    \
                      3     3 │ boil the water\n          4 │+ran one\n    \
                      4       │-brew the tea\n─────┴─────\n";
        let difference = snapshot_difference(stdout).expect("a difference");
        let changed: Vec<&str> = difference.lines().skip(1).collect();
        assert_eq!(changed, [" boil the water", "+ran one", "-brew the tea"]);
        assert_eq!(snapshot_difference("running 1 test\n"), None);
    }

    #[test]
    fn a_failed_snapshot_shows_its_first_line_of_each_kind() {
        let removed = "          │-theirs\n".repeat(12);
        let stdout = format!(
            "─────┬─────\n    3     3 │ boil the water\n{removed}    4       │+yours\n─────┴─────\n"
        );
        let difference = snapshot_difference(&stdout).expect("a difference");
        let changed: Vec<&str> = difference
            .lines()
            .skip(1)
            .filter(|line| line.starts_with(['+', '-']))
            .collect();
        assert_eq!(changed.len(), 9, "{difference}");
        assert_eq!(changed[8], "+yours", "{difference}");
        assert!(difference.contains("\n …\n+yours"), "{difference}");
    }

    #[test]
    fn a_moved_line_is_shown_with_the_line_it_moved_past() {
        let stdout = "─────┬─────\n    0     0 │ boil the water\n          1 │+pour the tea\n    \
                      1     2 │ brew the tea\n    2       │-pour the tea\n─────┴─────\n";
        let difference = snapshot_difference(stdout).expect("a difference");
        let changed: Vec<&str> = difference.lines().skip(1).collect();
        assert_eq!(
            changed,
            [
                " boil the water",
                "+pour the tea",
                " brew the tea",
                "-pour the tea"
            ]
        );
    }

    #[test]
    fn a_snapshot_with_lines_only_added_says_so() {
        let added = "─────┬─────\n    3     3 │ boil the water\n          4 │+[src/lib.rs:8:9] x = 1\n    \
                     4     5 │ brew the tea\n─────┴─────\n";
        let difference = snapshot_difference(added).expect("a difference");
        assert!(
            difference.starts_with(crate::test_messages::ONLY_ADDED_LINES),
            "{difference}"
        );
        // A table longer than what is kept of a test's output, as the
        // runner keeps it: its middle is cut, with or without a removed line.
        let more = "          9 │+more\n".repeat(20_000);
        let long = format!("{added}{more}   11       │-gone\n{more}");
        let cut = read(&long);
        assert!(cut.text.contains(" KiB of output cut here"), "not cut");
        let difference = super::snapshot_difference(&cut).expect("a difference");
        assert!(
            !difference.starts_with(crate::test_messages::ONLY_ADDED_LINES),
            "a removed line in the part cut: {difference}"
        );
        let only_more = read(&format!("{added}{more}{more}"));
        assert!(
            only_more.text.contains(" KiB of output cut here"),
            "not cut"
        );
        let difference =
            super::snapshot_difference(&only_more).expect("a difference");
        assert!(
            difference.starts_with(crate::test_messages::ONLY_ADDED_LINES),
            "lines only added, the table cut: {difference}"
        );
        let removed_further =
            format!("{added}          9 │+more\n   11       │-gone\n");
        let difference =
            snapshot_difference(&removed_further).expect("a difference");
        assert!(
            !difference.starts_with(crate::test_messages::ONLY_ADDED_LINES),
            "{difference}"
        );
    }
}
