//! The participant's own prints. A `dbg!` or an `eprintln!` left in a right
//! function adds lines to the demo's output, and the tests that pin it
//! (the snapshots, the traces) fail. When every pinned line is still
//! there, in order, and lines were only added, the test counts as passed,
//! the added lines are named beside the verdict, and the other tests decide.

use super::report::first_few;
use super::{SNAPSHOTS, TRACES};
use crate::commands::indent;
use crate::runner::{Outcome, TestRun};
use crate::test_messages::ONLY_ADDED_LINES;

/// The lines a pinned output's test found added to the authors', when
/// that is all it found; `None` for any other failure.
pub(super) fn added_lines(run: &TestRun) -> Option<Vec<&str>> {
    if run.case.file != TRACES && run.case.file != SNAPSHOTS {
        return None;
    }
    let Outcome::Failed(message) = &run.outcome else {
        return None;
    };
    let (_, after) = message.split_once(ONLY_ADDED_LINES)?;
    let added: Vec<&str> = after
        .lines()
        .filter_map(|line| line.strip_prefix('+'))
        // The heading of a transcript's stderr, which the prints brought.
        .filter(|line| *line != "[stderr]")
        .collect();
    Some(added)
}

/// What to say beside the verdict of the tests `passed_with_prints`,
/// which passed but for the lines the participant's prints added.
pub(super) fn note(passed_with_prints: &[&TestRun]) -> String {
    let ids: Vec<String> =
        passed_with_prints.iter().map(|run| run.case.id()).collect();
    let tests = match ids.split_last() {
        Some((last, [])) => format!("its test {last}"),
        Some((last, first)) => format!("its tests {} and {last}", first.join(", ")),
        None => return String::new(),
    };
    // One line for each print: a `dbg!` prints from one place, each time
    // with another value; an `eprintln!` of a value the same words.
    let mut places: Vec<String> = Vec::new();
    let mut prints: Vec<String> = Vec::new();
    // A `dbg!` of a struct or a list prints it over several lines, `{:#?}`,
    // up to the closing bracket alone on its line.
    let mut in_a_dbg = false;
    for line in passed_with_prints
        .iter()
        .filter_map(|run| added_lines(run))
        .flatten()
    {
        if in_a_dbg {
            in_a_dbg = ![")", "]", "}"].contains(&line);
            continue;
        }
        let dbg = dbg_place(line);
        in_a_dbg = dbg.is_some() && line.ends_with(['(', '[', '{']);
        let (place, said) = match dbg {
            Some((file, number)) => (
                format!("{file}:{number}"),
                format!("`{line}`: a `dbg!` at {file}, line {number}"),
            ),
            None => (numbers_hidden(line), format!("`{line}`")),
        };
        if !places.contains(&place) {
            places.push(place);
            prints.push(said);
        }
    }
    format!(
        "Your own prints: the demo printed every line the chapter shows, and \
         these besides, so {tests} counted as passed:\n\n{}\n\nThey are yours, \
         not the loop's; take them out once you no longer need them.",
        indent(&first_few(&prints, 4).join("\n"))
    )
}

/// The file and line of a `dbg!`'s output line, from its prefix
/// `[file:line:column]`.
pub(super) fn dbg_place(line: &str) -> Option<(&str, u32)> {
    let (place, _) = line.strip_prefix('[')?.split_once("] ")?;
    let mut parts = place.rsplitn(3, ':');
    let _column: u32 = parts.next()?.parse().ok()?;
    let line_number: u32 = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    let rust = std::path::Path::new(file)
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("rs"));
    rust.then_some((file, line_number))
}

/// `line` with each run of digits made one `#`.
fn numbers_hidden(line: &str) -> String {
    let mut hidden = String::with_capacity(line.len());
    for c in line.chars() {
        if !c.is_ascii_digit() {
            hidden.push(c);
        } else if !hidden.ends_with('#') {
            hidden.push('#');
        }
    }
    hidden
}
