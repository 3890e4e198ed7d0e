//! How a whole step folder differs from the authors' version, for `reset`,
//! `diff`, `status`, and `check` (which names what changed outside the
//! functions a participant writes before blaming one of them). An exercise
//! may change files beside the track, and all of it counts; what an editor
//! does on its own (spacing, a byte order mark, a `use` line rust-analyzer
//! adds, a backup like `lib.rs~`) cannot make a test fail, so it never stops
//! `check` from blaming a function.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use crate::authors::{self, to_lf, usual_ending, with_ending};
use crate::step::{self, Step};
use crate::track::{self, Marked, tokens};
use similar::{DiffTag, TextDiff};

/// One file of the step folder that is not as the authors wrote it.
#[derive(Debug, PartialEq, Eq)]
pub struct FileChange {
    /// Relative to the step folder, `/`-separated.
    pub file: String,
    pub what: What,
}

#[derive(Debug, PartialEq, Eq)]
pub enum What {
    /// The authors' file, changed.
    Changed {
        /// The marked functions that are neither the authors' nor the blank
        /// `start` wrote: the participant's, notes around a blank included.
        written: Vec<String>,
        /// How the lines outside the marked functions differ.
        outside: Outside,
    },
    /// Only line endings differ.
    LineEndings,
    /// The authors' file is gone.
    Deleted,
    /// A file the authors do not have.
    Added,
}

/// How the lines outside the marked functions of a changed file differ.
#[derive(Debug, PartialEq, Eq)]
pub enum Outside {
    Same,
    /// In spacing only (blank lines, indentation, a byte order mark):
    /// nobody's work, and nothing a test could fail on.
    Spacing,
    /// In comments or `use` lines only (an editor's auto-import): the
    /// participant's, but nothing a test could fail on.
    Notes,
    /// In code: the file's lines (counting from 1) that differ.
    Code(Vec<usize>),
}

impl FileChange {
    /// Whether putting the file back throws away something someone wrote.
    pub fn is_work(&self) -> bool {
        match &self.what {
            What::Changed { written, .. } => {
                !written.is_empty() || self.is_outside_track()
            }
            What::Deleted => false,
            _ => self.is_outside_track(),
        }
    }

    /// Whether it lies outside the functions a participant writes, in
    /// more than spacing: what `status` counts.
    pub fn is_outside_track(&self) -> bool {
        match &self.what {
            What::Changed { outside, .. } => {
                matches!(outside, Outside::Notes | Outside::Code(_))
            }
            What::Added | What::Deleted => true,
            What::LineEndings => false,
        }
    }

    /// Whether a failing test may come from it rather than from a marked
    /// function: code changed outside them, a file deleted, or a file added
    /// that Cargo builds without a `mod` line naming it.
    pub fn may_fail_tests(&self) -> bool {
        match &self.what {
            What::Changed { outside, .. } => matches!(outside, Outside::Code(_)),
            What::Deleted => true,
            What::Added => cargo_builds_alone(&self.file),
            What::LineEndings => false,
        }
    }

    /// What changed, in a few words ("your `push` and line 12 outside the
    /// marked functions").
    pub fn describe(&self) -> String {
        let What::Changed { written, outside } = &self.what else {
            let what = match self.what {
                What::LineEndings => "line endings only",
                What::Deleted => "deleted",
                _ => "a file the authors do not have",
            };
            return what.to_owned();
        };
        let yours =
            (!written.is_empty()).then(|| format!("your {}", written.join(", ")));
        let beside = match outside {
            Outside::Same => None,
            Outside::Spacing if yours.is_some() => {
                Some("spacing outside them".to_owned())
            }
            Outside::Spacing => {
                Some("spacing outside the marked functions".to_owned())
            }
            Outside::Notes => Some(
                "comments or `use` lines outside the marked functions".to_owned(),
            ),
            Outside::Code(lines) => Some(format!(
                "{} outside the marked functions",
                line_numbers(lines)
            )),
        };
        let parts: Vec<String> = yours.into_iter().chain(beside).collect();
        if parts.is_empty() {
            "blanked functions".to_owned()
        } else {
            parts.join(" and ")
        }
    }
}

/// Whether Cargo compiles `file`, a path in a step folder, with no `mod`
/// line naming it.
fn cargo_builds_alone(file: &str) -> bool {
    let in_own_folder = ["src/bin/", "examples/", "tests/", "benches/"]
        .iter()
        .any(|folder| file.starts_with(folder));
    ["build.rs", "Cargo.toml", "src/main.rs", "src/lib.rs"].contains(&file)
        || (in_own_folder && track::is_rust(file))
}

/// `line 12`, `lines 12 and 40`, `lines 3, 7, 9 and 4 more`.
fn line_numbers(lines: &[usize]) -> String {
    let shown: Vec<String> = lines.iter().take(3).map(usize::to_string).collect();
    match (lines.len(), shown.as_slice()) {
        (1, [one]) => format!("line {one}"),
        (2, [a, b]) => format!("lines {a} and {b}"),
        (3, [a, b, c]) => format!("lines {a}, {b} and {c}"),
        (n, _) => format!("lines {} and {} more", shown.join(", "), n - 3),
    }
}

/// Every file of the step folder that differs from the authors' version,
/// in path order. A file all CRLF (or all LF) is the authors' if its text is.
pub fn changes(step: &Step) -> Vec<FileChange> {
    let now = authors::step_files(&step.dir());
    let all: BTreeSet<&String> = now.iter().chain(step.authors.keys()).collect();
    let mut found = Vec::new();
    for file in all {
        let what = match step.authors.get(file) {
            None => What::Added,
            Some(_) if !now.contains(file) => What::Deleted,
            Some(theirs) => {
                let text = step.read(file);
                if text == with_ending(theirs, usual_ending(&text)) {
                    continue;
                }
                let lf = to_lf(&text);
                if lf == *theirs {
                    What::LineEndings
                } else {
                    changed(file, theirs, &lf)
                }
            }
        };
        let file = file.clone();
        found.push(FileChange { file, what });
    }
    found
}

/// How `after`, one of the authors' files, differs from their `before`
/// (both LF).
fn changed(file: &str, before: &str, after: &str) -> What {
    let (Ok(old), Ok(new)) = (
        track::markers_in(file, before),
        track::markers_in(file, after),
    ) else {
        return What::Changed {
            written: Vec::new(),
            outside: Outside::Code(differing_lines(before, after, &[])),
        };
    };
    let written: Vec<String> = new
        .iter()
        .filter(|now| {
            old.iter()
                .find(|theirs| theirs.function == now.function)
                .is_none_or(|theirs| {
                    step::stage_of(now, after, theirs, before).is_work()
                })
        })
        .map(|now| format!("`{}`", now.function))
        .collect();
    let (was, is) = (outside(before, &old), outside(after, &new));
    let outside = if was == is {
        Outside::Same
    } else if spacing_aside(&was) == spacing_aside(&is) {
        Outside::Spacing
    } else if code_but_imports(&was) == code_but_imports(&is) {
        Outside::Notes
    } else {
        Outside::Code(differing_lines(before, after, &new))
    };
    What::Changed { written, outside }
}

/// `text` without the marked functions (`marks`, found in it).
fn outside(text: &str, marks: &[Marked]) -> String {
    let mut rest = text.to_owned();
    for mark in marks.iter().rev() {
        rest.replace_range(mark.whole(), "");
    }
    rest
}

/// `text` without its spaces, line breaks and byte order mark.
fn spacing_aside(text: &str) -> String {
    track::without_spaces(text.trim_start_matches('\u{feff}'))
}

/// The tokens of `code` that the compiler runs, without its `use` items.
fn code_but_imports(code: &str) -> Vec<&str> {
    let mut kept = Vec::new();
    let mut in_use = false;
    for token in tokens::significant(code) {
        match token {
            "use" => in_use = true,
            ";" if in_use => in_use = false,
            _ if in_use => {}
            _ => kept.push(token),
        }
    }
    kept
}

/// The lines of `after` (counting from 1) that differ from `before`,
/// outside `marks` (found in `after`) and but for blank ones; where lines
/// were deleted, the line below them.
fn differing_lines(before: &str, after: &str, marks: &[Marked]) -> Vec<usize> {
    let inside = |line: usize| {
        marks.iter().any(|mark| {
            let first = after[..mark.whole().start].matches('\n').count();
            let last = after[..mark.whole().end].matches('\n').count();
            (first..=last).contains(&line)
        })
    };
    let after_lines: Vec<&str> = after.lines().collect();
    let mut lines = Vec::new();
    for op in TextDiff::from_lines(before, after).ops() {
        let range = op.new_range();
        let changed: Vec<usize> = match op.tag() {
            DiffTag::Equal => continue,
            DiffTag::Delete => vec![range.start],
            DiffTag::Insert | DiffTag::Replace => range.collect(),
        };
        lines.extend(changed.into_iter().filter(|line| {
            !inside(*line)
                && after_lines
                    .get(*line)
                    .is_none_or(|text| !text.trim().is_empty())
        }));
    }
    lines.dedup();
    lines.into_iter().map(|line| line + 1).collect()
}

/// What `check` says before blaming any function, when files or lines
/// outside them differ in a way that may make a test fail; `None` when none
/// do. It offers a `reset` only of a file with none of the participant's
/// functions.
pub fn before_blaming(step: &Step) -> Option<String> {
    let n = step.number;
    let mut named = String::new();
    for change in changes(step)
        .iter()
        .filter(|change| change.may_fail_tests())
    {
        let file = &change.file;
        let _ = writeln!(named, "  {}/{file}: {}", step.folder, change.describe());
        if let What::Changed {
            outside: Outside::Code(lines),
            ..
        } = &change.what
        {
            let text = to_lf(&step.read(file));
            let all: Vec<&str> = text.lines().collect();
            for line in lines.iter().take(3) {
                let shown = all.get(line - 1).map_or("", |text| text.trim());
                let _ = writeln!(named, "    {line}: {shown}");
            }
        }
        let _ = writeln!(named, "    {}", what_to_do(n, change));
    }
    if named.is_empty() {
        return None;
    }
    Some(format!(
        "Step {n} differs from the authors' version outside the functions you \
         write:\n{named}The failing tests may come from there rather than from \
         your functions, so no function is blamed yet (`cargo workshop diff \
         {n}` shows every change)."
    ))
}

/// How to put back one change without losing a function the participant
/// wrote.
fn what_to_do(n: u32, change: &FileChange) -> String {
    let file = &change.file;
    match &change.what {
        What::Changed { written, .. } if !written.is_empty() => format!(
            "Put those lines back as the authors wrote them, by hand: `cargo \
             workshop diff {n} {file}` shows theirs (a reset of the file would \
             take your {} with it).",
            written.join(", ")
        ),
        What::Added => "Cargo builds it without being told: move it out of \
                        the step folder if it is not meant to be built."
            .to_owned(),
        _ => format!(
            "`cargo workshop reset {n} {file}` puts it back as the authors wrote it."
        ),
    }
}

/// How the step folder (or the files `only`) differs from the authors'
/// version: a unified diff per file, or with `names_only`, a line per file
/// saying what changed, without the authors' text.
pub fn diff(step: &Step, only: &[String], names_only: bool) -> String {
    let mut out = String::new();
    for change in changes(step)
        .iter()
        .filter(|change| only.is_empty() || only.contains(&change.file))
    {
        let path = format!("{}/{}", step.folder, change.file);
        if names_only {
            let _ = writeln!(out, "{path}: {}", change.describe());
            continue;
        }
        if change.what == What::LineEndings {
            let _ = writeln!(out, "{path}: line endings only (CRLF and LF mixed)");
            continue;
        }
        let before = step.authors.get(&change.file).cloned().unwrap_or_default();
        let after = to_lf(&step.read(&change.file));
        let now = if change.what == What::Deleted {
            format!("{path} (deleted)")
        } else {
            path.clone()
        };
        let shown = TextDiff::from_lines(&before, &after)
            .unified_diff()
            .context_radius(3)
            .header(&format!("the authors' {path}"), &now)
            .to_string();
        out.push_str(&shown);
    }
    out
}

/// Removes `file` of the step, and the folders it leaves empty in it; a
/// symbolic link, never what it points to.
pub fn remove_added(step: &Step, file: &str) -> Result<(), String> {
    let path = step.dir().join(file);
    inside_the_step(step, &path)?;
    remove_file_or_link(&path)?;
    let mut dir = path.parent();
    while let Some(folder) = dir {
        if folder == step.dir() || fs::remove_dir(folder).is_err() {
            break;
        }
        dir = folder.parent();
    }
    Ok(())
}

/// Removes the file or the symbolic link at `path`, never what a link
/// points to (a link to a folder is a file on Unix, a folder on Windows).
pub fn remove_file_or_link(path: &Path) -> Result<(), String> {
    let is_link = fs::symlink_metadata(path).is_ok_and(|link| link.is_symlink());
    fs::remove_file(path)
        .or_else(|err| {
            if is_link {
                fs::remove_dir(path)
            } else {
                Err(err)
            }
        })
        .map_err(|err| format!("{}: {err}", path.display()))
}

/// Refuses `path` when the nearest folder of it that is there is not
/// inside the step folder once links are followed.
pub fn inside_the_step(step: &Step, path: &Path) -> Result<(), String> {
    let Some(real) = path
        .ancestors()
        .skip(1)
        .find_map(|folder| fs::canonicalize(folder).ok())
    else {
        return Ok(());
    };
    let Ok(step_dir) = fs::canonicalize(step.dir()) else {
        return Ok(());
    };
    if real.starts_with(&step_dir) {
        return Ok(());
    }
    Err(format!(
        "{} lies outside {} once its links are followed (it is in {}): \
         `cargo workshop` changes nothing outside the workshop. Remove the \
         link, or put the file back by hand.",
        path.display(),
        step.folder,
        real.display()
    ))
}

#[cfg(test)]
mod tests;
