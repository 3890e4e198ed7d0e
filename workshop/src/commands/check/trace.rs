//! Your loop's turn beside the authors'. When the verdict blames a written
//! function, `check` runs the step's demo with `LOOP_TRACE=1`, brings its
//! trace to the form the tests pin (`crate::pinned_trace`), and shows the
//! first turn where it differs from the authors' pinned one, side by side.
//! The participant's own prints and a panic's backtrace are no part of it.

use std::cell::Cell;
use std::env::consts::EXE_SUFFIX;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::prints;
use crate::pinned_trace;
use crate::runner::{self, Progress, TestRun};
use crate::step::Step;

/// How long the demo may run. It is stopped as soon as its last pinned
/// part is whole (4 s at most, in step 4), or as soon as a turn it has
/// finished differs from the authors' (`parted_already`).
const DEMO_LIMIT: Duration = Duration::from_secs(8);

/// How often a demo's trace so far is set beside the authors': a loop
/// that spins prints fast.
const LOOK_AGAIN: Duration = Duration::from_millis(200);

/// Each column's width, in characters: two columns, a mark and a bar in
/// 80.
const COLUMN: usize = 36;

/// At most this many lines of the turn are shown.
const SHOWN: usize = 20;

/// Step `step`'s demo run with `LOOP_TRACE=1` (built by `check`, in
/// `programs`), its
/// first turn that differs from the authors' pinned trace beside theirs;
/// or that the demo stopped at a `todo!()`; `None` where the step pins no
/// trace, its program is not there, or the traces do not differ. Once
/// `enough` is set, the demo is stopped where it is: the verdict is ready
/// without it (`meanwhile`).
pub(super) fn beside(
    step: &Step,
    programs: &Path,
    progress: &Progress,
    enough: &AtomicBool,
) -> Option<String> {
    let n = step.number;
    let pinned =
        fs::read_to_string(pinned_trace::snapshot_path(&step.root, n)).ok()?;
    let theirs = pinned_trace::snapshot_contents(&pinned);
    let titles = pinned_trace::titles(&theirs);
    if titles.is_empty() {
        return None;
    }
    let program = format!("{}{EXE_SUFFIX}", step.package());
    let mut command = Command::new(programs.join(program));
    progress.say(&format!(
        "running step {n}'s demo with LOOP_TRACE=1, to set its trace beside \
         the authors'"
    ));
    // A panic's backtrace is no part of a trace: the panic is said apart.
    command
        .current_dir(&step.root)
        .env("LOOP_TRACE", "1")
        .env("RUST_BACKTRACE", "0");
    let looked = Cell::new((Instant::now(), 0));
    let cut_short = Cell::new(false);
    let printed = runner::merged_output_within(command, DEMO_LIMIT, |so_far| {
        if enough.load(Ordering::SeqCst) {
            cut_short.set(true);
            return true;
        }
        let whole = |title: &&str| pinned_trace::section_complete(so_far, title);
        if titles.iter().all(whole) {
            return true;
        }
        let (when, length) = looked.get();
        if so_far.len() == length || when.elapsed() < LOOK_AGAIN {
            return false;
        }
        looked.set((Instant::now(), so_far.len()));
        parted_already(so_far, &titles, &theirs)
    })
    .ok()?;
    // Cut short because the rest of the verdict was ready, the demo's last
    // turn differs from the authors' only by being cut: no evidence.
    if cut_short.get() && !parted_already(&printed.text, &titles, &theirs) {
        return None;
    }
    let (yours, whole) = pinned_form(&printed.text, &titles, &theirs);
    let shown = first_difference(&yours, &theirs).filter(|_| whole)?;
    let stopped = if printed.stopped {
        format!(
            " Your demo did not end within {} s and was stopped: its trace \
             ends where it stopped.",
            DEMO_LIMIT.as_secs()
        )
    } else if cut_short.get() {
        " Your demo had not ended when the rest of the verdict was ready, and \
         was stopped: its trace ends where it stopped."
            .to_owned()
    } else {
        String::new()
    };
    let panicked = match panic_in(&printed.text) {
        // The trace differs from there on for the function not written,
        // which says nothing of the function named.
        Some((_, todo)) if at_a_todo(todo) => {
            return Some(format!(
                "Step {n}'s demo stops at a `todo!()` ({todo}), so its trace \
                 cannot be set beside the authors' until that function is written."
            ));
        }
        Some((place, message)) => {
            let end = if message.ends_with(['.', '!', '?']) {
                ""
            } else {
                "."
            };
            format!(" Your demo panicked at {place}: {message}{end}")
        }
        None => String::new(),
    };
    Some(format!(
        "Step {n}'s demo under `LOOP_TRACE=1`, your loop beside the \
         authors': the first turn that differs is {} (`>` marks its first \
         line that differs; times hidden).{stopped}{panicked} `LOOP_TRACE=1 cargo \
         run -p step{n:02}` shows your whole trace.\n\n{}",
        shown.which, shown.table
    ))
}

/// The parts of `printed` that the tests pin, in their form, without the
/// participant's own prints; and whether every part is there.
fn pinned_form(printed: &str, titles: &[&str], theirs: &str) -> (String, bool) {
    let parts: Vec<String> = titles
        .iter()
        .map_while(|title| pinned_trace::section(printed, title))
        .collect();
    let yours = pinned_trace::redacted(&parts.join("\n"));
    (
        without_own_prints(&yours, theirs),
        parts.len() == titles.len(),
    )
}

/// Whether the demo's trace so far already parts from the authors' in a
/// turn it has finished (once the next has begun): what it prints next
/// cannot change that turn, so a demo that hangs after it need not be
/// waited for.
fn parted_already(so_far: &str, titles: &[&str], theirs: &str) -> bool {
    let whole_lines = &so_far[..so_far.rfind('\n').map_or(0, |end| end + 1)];
    let (yours, _) = pinned_form(whole_lines, titles, theirs);
    let (yours, theirs) = (turns(&yours), turns(theirs));
    let finished = yours.len().saturating_sub(1);
    (0..finished)
        .any(|at| theirs.get(at).map(|turn| &turn.lines) != Some(&yours[at].lines))
}

/// What the failing trace tests' changed lines say: a line of the
/// authors' trace missing (only trace lines taken away: a `trace` call
/// left out), or the loop doing something else, at the turn where the first
/// changed line is.
pub(super) fn story(failures: &[&TestRun]) -> String {
    // How the runner begins the changed lines of a pinned output that
    // differs, more than by lines added.
    use crate::test_messages::OTHER_LINES as SOMETHING_ELSE;
    let changed: Vec<&str> = failures
        .iter()
        .filter_map(|run| {
            let (_, after) = run.outcome.message().split_once(SOMETHING_ELSE)?;
            Some(after.lines().filter(|line| line.starts_with(['+', '-'])))
        })
        .flatten()
        .collect();
    // Of the trace's own lines: a print of the participant's, added
    // among them, does not make a line left out something else.
    let removed = changed.iter().any(|line| line.starts_with("-[+"));
    let added = changed.iter().any(|line| line.starts_with("+[+"));
    if removed && !added {
        return "a line of the authors' trace is missing from yours: a `trace` \
                call left out?"
            .to_owned();
    }
    match changed.iter().find_map(|line| turn_of(&line[1..])) {
        Some(turn) => {
            format!("your loop did something else than the authors' at turn {turn}.")
        }
        None => "your loop did something else than the authors'.".to_owned(),
    }
}

/// The first panic in a demo's output, its place and message: the table
/// leaves it out, as it is no line of the trace.
fn panic_in(printed: &str) -> Option<(&str, &str)> {
    let mut lines = printed.lines();
    let at = lines.find(|line| line.contains(" panicked at "))?;
    let place = at.split_once(" panicked at ")?.1.trim_end_matches(':');
    Some((place, lines.next().unwrap_or_default().trim()))
}

/// Whether a panic's `message` is the `todo!()` of a function not written.
fn at_a_todo(message: &str) -> bool {
    message.starts_with("not yet implemented")
}

/// `yours` without the participant's own prints and a panic's lines: a
/// `dbg!`'s (`[src/lib.rs:83:9] …`), and any line that is not the loop's
/// trace and starts with a word no line of `theirs` starts with (`my
/// timer 0`, `stack backtrace:`). A line of the demo's own that changed
/// starts as one of theirs does, and stays.
fn without_own_prints(yours: &str, theirs: &str) -> String {
    let first_word = |line: &str| line.split_whitespace().next().map(str::to_owned);
    let their_words: std::collections::HashSet<String> =
        theirs.lines().filter_map(first_word).collect();
    let theirs_too = |line: &str| {
        prints::dbg_place(line).is_none()
            && first_word(line).is_none_or(|word| their_words.contains(&word))
    };
    yours
        .lines()
        .filter(|line| line.starts_with("[+") || theirs_too(line))
        .flat_map(|line| [line, "\n"])
        .collect()
}

/// The lines of one turn of the loop, with the lines the program printed
/// in it; the first turn of a part also has the part's heading.
#[derive(Debug, PartialEq)]
struct Turn<'a> {
    part: Option<&'a str>,
    number: Option<u64>,
    lines: Vec<&'a str>,
}

/// The number of the turn a trace line is of (`[+S.SSS s] turn N: …`).
fn turn_of(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("[+")?.split_once(" s] ")?.1;
    rest.strip_prefix("turn ")?.split_once(": ")?.0.parse().ok()
}

/// `trace` cut into turns. A turn starts at the trace's first line with its
/// number, or at a heading (`== title ==`): the loop of each part starts
/// at turn 1 again. Blank lines are left out.
fn turns(trace: &str) -> Vec<Turn<'_>> {
    let mut turns: Vec<Turn> = Vec::new();
    for line in trace.lines().filter(|line| !line.trim().is_empty()) {
        let heading = line.strip_prefix("== ").and_then(|l| l.strip_suffix(" =="));
        let number = turn_of(line);
        match turns.last_mut() {
            Some(turn)
                if heading.is_none()
                    && turn.number.zip(number).is_none_or(|(m, n)| m == n) =>
            {
                turn.number = turn.number.or(number);
                turn.lines.push(line);
            }
            current => {
                let part = heading.or_else(|| current.and_then(|turn| turn.part));
                turns.push(Turn {
                    part,
                    number,
                    lines: vec![line],
                });
            }
        }
    }
    turns
}

/// The first turn that differs, said and shown.
#[derive(Debug)]
struct Shown {
    /// Which turn: `turn 2 of the part "…"`.
    which: String,
    /// The turn's lines side by side.
    table: String,
}

/// The first turn of `yours` that differs from `theirs`, or `None` if they
/// are the same.
fn first_difference(yours: &str, theirs: &str) -> Option<Shown> {
    let (yours, theirs) = (turns(yours), turns(theirs));
    let at = (0..yours.len().max(theirs.len()))
        .find(|&at| lines(&yours, at) != lines(&theirs, at))?;
    let named = theirs.get(at).or(yours.get(at))?;
    let which = match (named.number, named.part) {
        (Some(n), Some(part)) => format!("turn {n} of the part \"{part}\""),
        (Some(n), None) => format!("turn {n}"),
        (None, Some(part)) => format!("the part \"{part}\" (a loop without turns)"),
        (None, None) => "its first lines (a loop without turns)".to_owned(),
    };
    let table = table(lines(&yours, at), lines(&theirs, at));
    Some(Shown { which, table })
}

/// A turn's lines; none for a turn that is not there.
fn lines<'t, 'a>(turns: &'t [Turn<'a>], at: usize) -> &'t [&'a str] {
    turns.get(at).map_or(&[], |turn| &turn.lines)
}

/// The two turns' lines side by side, line for line, as they ran (a line
/// one loop left out or added shifts the lines after it, which shows it),
/// in two columns, "yours" and "the authors'", the first row that differs
/// marked `>`; at most `SHOWN` rows, around that one.
fn table(yours: &[&str], theirs: &[&str]) -> String {
    let rows: Vec<(Option<&str>, Option<&str>)> = (0..yours.len().max(theirs.len()))
        .map(|at| (yours.get(at).copied(), theirs.get(at).copied()))
        .collect();
    let first = rows.iter().position(|(y, t)| y != t).unwrap_or(0);
    let start = first
        .saturating_sub(SHOWN / 4)
        .min(rows.len().saturating_sub(SHOWN));
    let end = (start + SHOWN).min(rows.len());
    let mut lines = vec![format!("  {} | the authors'", cell(Some("yours")))];
    if start > 0 {
        lines.push(format!("  … {start} lines above"));
    }
    for (at, (mine, their)) in rows.iter().enumerate().take(end).skip(start) {
        let mark = if at == first { '>' } else { ' ' };
        let line =
            format!("{mark} {} | {}", cell(*mine), shown(their.unwrap_or("")));
        lines.push(line.trim_end().to_owned());
    }
    if end < rows.len() {
        lines.push(format!("  … {} lines below", rows.len() - end));
    }
    // The row marked `>`, each side whole, when a column cut it: the words
    // cut are often those that matter ("error: a lost wake-up: no task…").
    let cut =
        |line: Option<&str>| line.is_some_and(|line| shown(line).ends_with('…'));
    if let Some(&(mine, their)) = rows.get(first).filter(|(y, t)| cut(*y) || cut(*t))
    {
        let whole =
            |line: Option<&str>| untimed(line.unwrap_or("(nothing)")).to_owned();
        lines.extend([
            String::new(),
            "  The line marked `>`, whole:".to_owned(),
            format!("    yours:        {}", whole(mine)),
            format!("    the authors': {}", whole(their)),
        ]);
    }
    lines.join("\n")
}

/// A line as a column shows it: without its time, cut to the column's
/// width.
fn shown(line: &str) -> String {
    let line = untimed(line);
    if line.chars().count() <= COLUMN {
        return line.to_owned();
    }
    let cut: String = line.chars().take(COLUMN - 1).collect();
    format!("{cut}…")
}

/// A line without its time (hidden anyway).
fn untimed(line: &str) -> &str {
    line.strip_prefix("[+")
        .and_then(|rest| Some(rest.split_once(" s] ")?.1))
        .unwrap_or(line)
}

/// `line` in the left column, padded to its width.
fn cell(line: Option<&str>) -> String {
    format!("{:<COLUMN$}", shown(line.unwrap_or("")))
}

#[cfg(test)]
mod tests;
