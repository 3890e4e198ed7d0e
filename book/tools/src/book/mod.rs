//! What the book's tests need: its chapters, the includes and links in them,
//! and the pinned diffs between neighbouring steps.
//!
//! mdBook's own checks are weak: a missing include file is logged and the
//! build still succeeds, and a missing anchor renders as an empty code block.
//! The functions here read `book/src` the way mdBook 0.5 does, so the tests in
//! `tests/book.rs` can fail where mdBook would stay quiet.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

pub use crate::workspace::{read_text, step_folders, step_number, workspace_root};

/// The command that rewrites the pinned diffs, for failure messages and docs.
pub const UPDATE_DIFFS_COMMAND: &str =
    "UPDATE_BOOK_DIFFS=1 cargo test -p book-tools --test book pinned_diffs";

/// The folder holding the book's Markdown sources.
pub fn book_src() -> PathBuf {
    workspace_root().join("book").join("src")
}

/// The chapters listed in `SUMMARY.md`, as paths relative to `book/src`, in
/// the order the book shows them.
pub fn chapters() -> Vec<String> {
    let summary = read_text(&book_src().join("SUMMARY.md"));
    links(&summary)
        .into_iter()
        .map(|link| link.target)
        .filter(|target| !target.is_empty())
        .collect()
}

/// The step chapters (`step03-sleep.md`), with the step folder each mirrors.
pub fn step_chapters() -> Vec<(String, String)> {
    chapters()
        .into_iter()
        .filter_map(|chapter| {
            let folder = chapter.strip_suffix(".md")?.to_owned();
            step_number(&folder).map(|_| (chapter, folder))
        })
        .collect()
}

/// A `{{#include …}}` (or `rustdoc_include`, `playground`) in a chapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Include {
    /// The chapter it appears in, relative to `book/src`.
    pub chapter: String,
    /// The line of the chapter it is on, counting from 1.
    pub line: usize,
    /// The directive as written, for error messages.
    pub text: String,
    /// The file, as written: relative to the chapter's folder.
    pub path: String,
    pub part: Part,
}

/// Which part of the file an include shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Lines `start..end` (0-based, end exclusive), as mdBook reads `:4:`,
    /// `:2:10` or `:7`; `None` is open-ended. A whole file is `None..None`.
    Lines {
        start: Option<usize>,
        end: Option<usize>,
    },
    /// The lines between `ANCHOR: name` and `ANCHOR_END: name`.
    Anchor(String),
}

/// Finds the includes in one chapter's Markdown, or describes a directive
/// that mdBook would not understand (it would print it as text).
pub fn includes(chapter: &str, markdown: &str) -> Result<Vec<Include>, String> {
    let mut found = Vec::new();
    for (index, line) in markdown.lines().enumerate() {
        let mut rest = line;
        while let Some(open) = rest.find("{{#") {
            let escaped = rest[..open].ends_with('\\');
            let after = &rest[open..];
            let close = after.find("}}").ok_or_else(|| {
                format!("{chapter}:{}: unclosed `{{{{#`", index + 1)
            })?;
            let text = &after[..close + 2];
            rest = &after[close + 2..];
            if escaped {
                continue;
            }
            let directive = parse_directive(text).ok_or_else(|| {
                format!("{chapter}:{}: mdBook does not know `{text}`", index + 1)
            })?;
            if let Directive::Show(path, part) = directive {
                found.push(Include {
                    chapter: chapter.to_owned(),
                    line: index + 1,
                    text: text.to_owned(),
                    path,
                    part,
                });
            }
        }
    }
    Ok(found)
}

/// What a `{{#…}}` directive asks mdBook to do.
enum Directive {
    /// Show (part of) a file: `include`, `rustdoc_include`, `playground`.
    Show(String, Part),
    /// Something that reads no file: `title`.
    Other,
}

/// Parses `{{#kind path[:selection] props}}`; `None` for a directive mdBook
/// does not know.
fn parse_directive(text: &str) -> Option<Directive> {
    let inner = text.strip_prefix("{{#")?.strip_suffix("}}")?;
    let (kind, argument) = inner.split_once(char::is_whitespace)?;
    let argument = argument.split_whitespace().next()?;
    match kind {
        "title" => Some(Directive::Other),
        "playground" => Some(Directive::Show(argument.to_owned(), Part::whole())),
        "include" | "rustdoc_include" => {
            let (path, selection) = match argument.split_once(':') {
                Some((path, selection)) => (path, Some(selection)),
                None => (argument, None),
            };
            Some(Directive::Show(path.to_owned(), Part::parse(selection)))
        }
        _ => None,
    }
}

impl Part {
    fn whole() -> Part {
        Part::Lines {
            start: None,
            end: None,
        }
    }

    /// mdBook's reading of what follows the first `:` (see its `links.rs`).
    fn parse(selection: Option<&str>) -> Part {
        let Some(selection) = selection else {
            return Part::whole();
        };
        let mut pieces = selection.splitn(2, ':');
        let first = pieces.next().unwrap_or("");
        let second = pieces.next();
        let start = if first.is_empty() {
            None
        } else if let Ok(line) = first.parse::<usize>() {
            Some(line.saturating_sub(1))
        } else {
            return Part::Anchor(first.to_owned());
        };
        let end = match second.map(str::parse::<usize>) {
            Some(Ok(end)) => Some(end),
            Some(Err(_)) => None,
            // `:7` alone means line 7 only.
            None => start.map(|start| start + 1),
        };
        Part::Lines { start, end }
    }
}

impl Include {
    /// The file it shows, as a path from the chapter's folder joined on.
    pub fn file_from(&self, book_src: &Path) -> PathBuf {
        let chapter_dir = book_src
            .join(&self.chapter)
            .parent()
            .expect("a chapter sits in a folder")
            .to_path_buf();
        chapter_dir.join(&self.path)
    }
}

impl Part {
    /// The lines of `content` this part shows, joined with `\n`, as mdBook's
    /// `{{#include}}` would show them, but with no marker line in any part:
    /// neither `// ANCHOR:` nor `// ANCHOR_END:` nor `// BUILD`. Those lines
    /// are how the book includes code and how `cargo workshop` finds a
    /// track, not code a reader should scroll past.
    pub fn select(&self, content: &str) -> String {
        let lines: Vec<&str> = content.lines().collect();
        let selected: &[&str] = match self {
            Part::Lines { start, end } => {
                let end = end.unwrap_or(lines.len()).min(lines.len());
                let start = start.unwrap_or(0).min(end);
                &lines[start..end]
            }
            Part::Anchor(name) => {
                let start = marker_lines(content, "ANCHOR:", name).first().copied();
                let end =
                    marker_lines(content, "ANCHOR_END:", name).first().copied();
                match (start, end) {
                    (Some(start), Some(end)) if end > start => {
                        &lines[start + 1..end]
                    }
                    // check_include reports it; mdBook shows nothing either.
                    _ => &[],
                }
            }
        };
        let kept: Vec<&str> = selected
            .iter()
            .copied()
            .filter(|line| !is_marker_line(line))
            .collect();
        kept.join("\n")
    }
}

/// Steps' files as the authors wrote them, from the stored copy in
/// `tests/authors/` (`workshop::authors`): `cargo workshop start` blanks
/// functions on disk, and the book (and the plans measured from it) must
/// still show the authors' bodies, in a clone, a ZIP download or a course's
/// repository alike, whatever the participant committed since.
#[derive(Debug)]
pub struct AuthorsVersion {
    /// The workshop's root: the nearest folder holding `tests/authors/`.
    root: Option<PathBuf>,
    /// Each step's stored files, read once (`None`: no stored copy).
    steps: RefCell<HashMap<String, Option<workshop::authors::Files>>>,
}

impl AuthorsVersion {
    /// The authors' version of the workshop that holds `dir`.
    pub fn around(dir: &Path) -> AuthorsVersion {
        let root = dir
            .ancestors()
            .find(|folder| folder.join(workshop::authors::FOLDER).is_dir())
            .map(Path::to_path_buf);
        AuthorsVersion {
            root,
            steps: RefCell::new(HashMap::new()),
        }
    }

    /// `file` (an absolute path, `..` resolved) as the authors wrote it,
    /// when it lies in a `stepNN-…` folder; `None` for any other file, or
    /// one the stored copy lacks.
    pub fn read(&self, file: &Path) -> Option<String> {
        let root = self.root.as_ref()?;
        let relative = file.strip_prefix(root).ok()?;
        let mut parts = relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned());
        let folder = parts.next()?;
        step_number(&folder)?;
        let path: Vec<String> = parts.collect();
        let mut steps = self.steps.borrow_mut();
        let files = steps
            .entry(folder.clone())
            .or_insert_with(|| workshop::authors::read_stored(root, &folder).ok());
        files.as_ref()?.get(&path.join("/")).cloned()
    }

    /// `file` as the authors wrote it, or as it is on disk.
    pub fn read_or_disk(&self, file: &Path) -> std::io::Result<String> {
        match self.read(file) {
            Some(text) => Ok(text),
            None => Ok(fs::read_to_string(file)?.replace("\r\n", "\n")),
        }
    }
}

/// `a/b/../c` as `a/c`, without asking the file system (a file the
/// authors have may be missing from the disk).
pub fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// A line that is only a marker for the book or for `cargo workshop`.
pub fn is_marker_line(line: &str) -> bool {
    let line = line.trim_start();
    ["// ANCHOR:", "// ANCHOR_END:", workshop::track::MARKER]
        .iter()
        .any(|marker| line.starts_with(marker))
}

/// Checks that an include shows what its author meant: the file exists, the
/// anchor is there once with its end after it and something between, and
/// the line range lies inside the file. Returns what is wrong, if anything.
pub fn check_include(include: &Include) -> Result<(), String> {
    let chapter_dir = book_src()
        .join(&include.chapter)
        .parent()
        .expect("a chapter sits in a folder")
        .to_path_buf();
    let file = chapter_dir.join(&include.path);
    let place = format!("{}:{}: {}", include.chapter, include.line, include.text);
    if !file.is_file() {
        return Err(format!("{place}: no such file {}", file.display()));
    }
    let content = read_text(&file);
    match &include.part {
        Part::Anchor(name) => check_anchor(&content, name),
        Part::Lines { start, end } => check_lines(&content, *start, *end),
    }
    .map_err(|problem| format!("{place}: {problem}"))
}

/// An anchor exists once, as `ANCHOR: name` then `ANCHOR_END: name`, with at
/// least one line between (mdBook would show an empty block otherwise).
fn check_anchor(content: &str, name: &str) -> Result<(), String> {
    let starts = marker_lines(content, "ANCHOR:", name);
    let ends = marker_lines(content, "ANCHOR_END:", name);
    match (starts.as_slice(), ends.as_slice()) {
        ([], _) => Err(format!("no `ANCHOR: {name}` in the file")),
        (_, []) => Err(format!("no `ANCHOR_END: {name}` in the file")),
        ([start], [end]) if end > start => {
            let between = content
                .lines()
                .skip(start + 1)
                .take(end - start - 1)
                .filter(|line| !line.contains("ANCHOR"))
                .count();
            if between == 0 {
                Err(format!("anchor `{name}` holds no lines"))
            } else {
                Ok(())
            }
        }
        ([_], [_]) => Err(format!("`ANCHOR_END: {name}` comes before its start")),
        _ => Err(format!("anchor `{name}` appears more than once")),
    }
}

/// The 0-based lines holding `marker` (`ANCHOR:`) followed by exactly `name`.
fn marker_lines(content: &str, marker: &str, name: &str) -> Vec<usize> {
    content
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            line.match_indices(marker).any(|(at, _)| {
                let after = line[at + marker.len()..].trim_start();
                let word_end = after
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
                    .unwrap_or(after.len());
                &after[..word_end] == name
            })
        })
        .map(|(index, _)| index)
        .collect()
}

/// A line range selects at least one line, and no line past the end.
fn check_lines(
    content: &str,
    start: Option<usize>,
    end: Option<usize>,
) -> Result<(), String> {
    let count = content.lines().count();
    let first = start.unwrap_or(0);
    let last = end.unwrap_or(count);
    if first >= count {
        return Err(format!(
            "starts at line {} of a {count}-line file",
            first + 1
        ));
    }
    if last > count {
        return Err(format!("ends at line {last} of a {count}-line file"));
    }
    if last <= first {
        return Err(format!("selects no lines ({}..{last})", first + 1));
    }
    Ok(())
}

/// How many lines the header of an insta snapshot takes (`---`, metadata,
/// `---`), so a chapter can include the output that follows it.
pub fn snapshot_header_lines(snapshot: &str) -> Option<usize> {
    let mut lines = snapshot.lines();
    if lines.next()? != "---" {
        return None;
    }
    lines.position(|line| line == "---").map(|at| at + 2)
}

/// A Markdown link in a chapter: `[text](target)` or `[label]: target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub line: usize,
    pub target: String,
}

/// The links in `markdown`, outside code blocks and code spans.
pub fn links(markdown: &str) -> Vec<Link> {
    let mut found = Vec::new();
    let mut in_fence = false;
    for (index, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let prose = without_code_spans(line);
        let mut push = |target: &str| {
            found.push(Link {
                line: index + 1,
                target: target.trim().to_owned(),
            });
        };
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            push(&after[..end]);
            rest = &after[end..];
        }
        // A reference definition: `[label]: target` at the start of a line.
        let definition = prose.trim_start().strip_prefix('[');
        if let Some((_, target)) = definition.and_then(|d| d.split_once("]:")) {
            push(target.split_whitespace().next().unwrap_or(""));
        }
    }
    found
}

fn without_code_spans(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// The `id`s mdBook 0.5 gives the headings of a chapter (its
/// `id_from_content`, with `-1`, `-2` … added to repeats).
pub fn heading_ids(markdown: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    let mut in_fence = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence || !line.starts_with('#') {
            continue;
        }
        let text = line.trim_start_matches('#').replace(['`', '*'], "");
        let id: String = text
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| {
                if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c)
                } else if c.is_whitespace() {
                    Some('-')
                } else {
                    None
                }
            })
            .collect();
        let mut unique = id.clone();
        let mut counter = 1;
        while !ids.insert(unique.clone()) {
            unique = format!("{id}-{counter}");
            counter += 1;
        }
    }
    ids
}

/// A diff the book pins: what changed from one step's crate to the next, or
/// one part of it.
mod diffs;
#[cfg(test)]
mod tests;

pub use diffs::*;
