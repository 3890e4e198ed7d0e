//! What the book's tests need: its chapters, the includes and links in them,
//! and the pinned diffs between neighbouring steps.
//!
//! mdBook's own checks are weak: a missing include file is logged and the
//! build still succeeds, and a missing anchor renders as an empty code block.
//! The functions here read `book/src` the way mdBook 0.5 does, so the tests in
//! `tests/book.rs` can fail where mdBook would stay quiet.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use similar::{Algorithm, TextDiff};

use workshop_tests::workspace_root;
pub use workshop_tests::{read_text, step_folders, step_number};

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedDiff {
    pub old_step: String,
    pub new_step: String,
    /// The part's name, when the step's diff is shown in parts.
    pub part: Option<&'static str>,
}

impl PinnedDiff {
    /// Where the diff is pinned, relative to `book/src`:
    /// `diffs/step02-to-step03.diff`, or `diffs/step07-to-step08-tasks.diff`
    /// for a part.
    pub fn file(&self) -> String {
        let short = |step: &str| step[.."stepNN".len()].to_owned();
        let part = self.part.map(|part| format!("-{part}")).unwrap_or_default();
        format!(
            "diffs/{}-to-{}{part}.diff",
            short(&self.old_step),
            short(&self.new_step)
        )
    }

    /// The diff as it should be pinned: the files of this part only.
    pub fn fresh(&self) -> String {
        let number = step_number(&self.new_step).expect("a step folder");
        step_diff(&self.old_step, &self.new_step)
            .into_iter()
            .filter(|file| self.part.is_none() || part_of(number, file) == self.part)
            .map(|file| file.diff)
            .collect()
    }
}

/// A part of a step's diff: its name, and the files it shows.
type DiffPart = (&'static str, &'static [&'static str]);

/// Everything but the apps and the demo: what a step teaches.
const RUNTIME: &[&str] = &["*"];
/// What runs on the runtime: servers, clients, the demo, `main`, and the
/// examples (from step 5 on, a lost wake-up made on purpose).
const APPS: &[&str] = &["src/apps/", "src/main.rs", "examples/"];

/// The steps whose diff the book shows in parts, in the order the chapter
/// shows them. A part names its files (a path, or a folder ending in `/`);
/// `*` takes every changed file that no other part names. A changed file no
/// part takes fails `every_changed_file_is_in_a_part`.
const DIFF_PARTS: &[(u32, &[DiffPart])] = &[
    (4, &[("loop", RUNTIME), ("apps", APPS)]),
    (5, &[("runtime", RUNTIME), ("apps", APPS)]),
    (6, &[("runtime", RUNTIME), ("apps", APPS)]),
    (7, &[("runtime", RUNTIME), ("apps", APPS)]),
    (
        8,
        &[
            ("map", &["src/lib.rs", "Cargo.toml"]),
            (
                "tasks",
                &[
                    "src/waker.rs",
                    "src/lost_wake_up.rs",
                    "src/join.rs",
                    "src/task.rs",
                ],
            ),
            (
                "timers",
                &["src/event_loop.rs", "src/sleep.rs", "src/trace.rs"],
            ),
            ("timeout", &["src/timeout.rs"]),
            ("servers", &["src/net.rs", "src/reactor.rs"]),
            ("faster", &["src/event_loop/faster.rs"]),
            ("apps", APPS),
        ],
    ),
];

/// Parts of a step's diff the book does not pin, because the chapter lists
/// their files whole: each is a new file, so its diff would show the same
/// lines again, each with a `+`. (Step 8's "faster" is the loop's
/// performance machinery, fenced in a file of its own.)
const LISTED_WHOLE: &[(u32, &str)] = &[(8, "timeout"), (8, "faster")];

/// The files of step `number` that its chapter lists whole instead of
/// pinning their diff (paths in the step's folder).
pub fn listed_whole(number: u32) -> Vec<&'static str> {
    DIFF_PARTS
        .iter()
        .filter(|(step, _)| *step == number)
        .flat_map(|(_, parts)| parts.iter())
        .filter(|(name, _)| LISTED_WHOLE.contains(&(number, *name)))
        .flat_map(|(_, files)| files.iter().copied())
        .collect()
}

/// Files a step moved: `(step, old path, new path)`. Step 4's `lib.rs`
/// becomes the reading map, and the loop step 3 kept there moves to
/// `event_loop.rs`; the diff shows that move as one file changing.
const RENAMES: &[(u32, &str, &str)] = &[(4, "src/lib.rs", "src/event_loop.rs")];

/// The parts of step `number`'s diff, or none when it is shown whole.
pub fn diff_parts(number: u32) -> Vec<&'static str> {
    DIFF_PARTS
        .iter()
        .find(|(step, _)| *step == number)
        .map(|(_, parts)| parts.iter().map(|(name, _)| *name).collect())
        .unwrap_or_default()
}

/// Which part of step `number`'s diff shows `file`, by its path in the new
/// step (or in the old one, for a file the step deleted).
pub fn part_of(number: u32, file: &FileDiff) -> Option<&'static str> {
    let (_, parts) = DIFF_PARTS.iter().find(|(step, _)| *step == number)?;
    let matches = |pattern: &str, path: &str| {
        pattern.strip_suffix('/').map_or(path == pattern, |folder| {
            path.starts_with(&format!("{folder}/"))
        })
    };
    let named = parts.iter().find(|(_, patterns)| {
        patterns.iter().any(|pattern| matches(pattern, &file.path))
    });
    let rest = || parts.iter().find(|(_, patterns)| patterns.contains(&"*"));
    named.or_else(rest).map(|(name, _)| *name)
}

/// The diffs the book should pin: for every step chapter whose step has an
/// earlier step to compare with, its diff, or each of its parts. Adding a
/// chapter to `SUMMARY.md` is all it takes to ask for its diff.
pub fn expected_diffs() -> Vec<PinnedDiff> {
    let folders = step_folders();
    let mut diffs = Vec::new();
    for (_, new_step) in step_chapters() {
        let Some(position) = folders.iter().position(|folder| *folder == new_step)
        else {
            continue;
        };
        let Some(old_step) = position.checked_sub(1).map(|at| folders[at].clone())
        else {
            continue;
        };
        let number = step_number(&new_step).expect("a step folder");
        let parts = diff_parts(number);
        let parts = if parts.is_empty() {
            vec![None]
        } else {
            parts
                .into_iter()
                .filter(|part| !LISTED_WHOLE.contains(&(number, *part)))
                .map(Some)
                .collect()
        };
        for part in parts {
            diffs.push(PinnedDiff {
                old_step: old_step.clone(),
                new_step: new_step.clone(),
                part,
            });
        }
    }
    diffs
}

/// One file's unified diff between two steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The file's path in the new step, relative to its folder (in the old
    /// one for a deleted file).
    pub path: String,
    pub diff: String,
}

/// The unified diff from one step crate to another, a file at a time: every
/// file of either crate, in sorted order, with three lines of context,
/// `/`-separated paths relative to the workspace root and `\n` line
/// endings, so it comes out the same on every platform. The `ANCHOR`
/// marker lines the book uses to include code, and the `BUILD` lines that
/// mark the workshop's track, are left out: they are not the code.
pub fn step_diff(old_step: &str, new_step: &str) -> Vec<FileDiff> {
    let root = workspace_root();
    let number = step_number(new_step).expect("a step folder");
    let renames: Vec<(&str, &str)> = RENAMES
        .iter()
        .filter(|(step, _, _)| *step == number)
        .map(|(_, old, new)| (*old, *new))
        .collect();
    let old_for = |new_path: &str| {
        renames
            .iter()
            .find(|(_, new)| *new == new_path)
            .map(|(old, _)| (*old).to_owned())
    };
    let renamed_away =
        |old_path: &str| renames.iter().any(|(old, _)| *old == old_path);

    // Pairs of (old path, new path), each side absent when the file is.
    let old_files = crate_files(&root.join(old_step));
    let new_files = crate_files(&root.join(new_step));
    let mut pairs: Vec<(Option<String>, Option<String>)> = Vec::new();
    for new_path in &new_files {
        let old_path = old_for(new_path).or_else(|| {
            (old_files.contains(new_path) && !renamed_away(new_path))
                .then(|| new_path.clone())
        });
        pairs.push((old_path, Some(new_path.clone())));
    }
    for old_path in &old_files {
        let paired = pairs.iter().any(|(old, _)| old.as_ref() == Some(old_path));
        if !paired {
            pairs.push((Some(old_path.clone()), None));
        }
    }
    pairs.sort_by(|a, b| {
        a.1.as_ref()
            .or(a.0.as_ref())
            .cmp(&b.1.as_ref().or(b.0.as_ref()))
    });

    let mut diffs = Vec::new();
    for (old_path, new_path) in pairs {
        let read = |step: &str, path: &Option<String>| {
            path.as_ref()
                .and_then(|path| read_if_present(&root.join(step).join(path)))
                .map(|text| without_marker_lines(&text))
        };
        let old = read(old_step, &old_path);
        let new = read(new_step, &new_path);
        if old == new {
            continue;
        }
        let name = |step: &str, path: &Option<String>| match path {
            Some(path) => format!("{step}/{path}"),
            None => "/dev/null".to_owned(),
        };
        let header_old = name(old_step, &old_path);
        let header_new = name(new_step, &new_path);
        let old = old.unwrap_or_default();
        let new = new.unwrap_or_default();
        let text_diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .diff_lines(&old, &new);
        let diff = text_diff
            .unified_diff()
            .context_radius(3)
            .header(&header_old, &header_new)
            .to_string();
        let path = new_path.or(old_path).expect("one side exists");
        diffs.push(FileDiff { path, diff });
    }
    diffs
}

/// `text` without the marker lines: the book's `// ANCHOR: name` and
/// `// ANCHOR_END: name`, and the workshop track's `// BUILD k/n: …`.
fn without_marker_lines(text: &str) -> String {
    text.split_inclusive('\n')
        .filter(|line| {
            let line = line.trim_start();
            !(line.starts_with("// ANCHOR:")
                || line.starts_with("// ANCHOR_END:")
                || line.starts_with(workshop::track::MARKER))
        })
        .collect()
}

/// The files of a crate folder, relative to it and `/`-separated, leaving
/// out hidden files and build output.
fn crate_files(folder: &Path) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a folder entry can be read").path();
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("");
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(folder).expect("found inside");
                let parts: Vec<_> = relative
                    .components()
                    .map(|part| part.as_os_str().to_string_lossy().into_owned())
                    .collect();
                files.insert(parts.join("/"));
            }
        }
    }
    files
}

fn read_if_present(path: &Path) -> Option<String> {
    path.is_file().then(|| read_text(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(start: Option<usize>, end: Option<usize>) -> Part {
        Part::Lines { start, end }
    }

    #[test]
    fn includes_are_read_the_way_mdbook_reads_them() {
        let chapter = "x {{#include ../a.rs:timer_heap}} y {{#include b.snap:4:}}\n\
                       {{#rustdoc_include c.rs:2:10}} \\{{#include escaped.rs}}\n\
                       {{#include d.rs:7}} {{#include e.rs::3}} {{#include f.diff}}";
        let found = includes("ch.md", chapter).unwrap();
        let parts: Vec<_> = found
            .iter()
            .map(|include| (include.path.as_str(), include.part.clone()))
            .collect();
        assert_eq!(
            parts,
            [
                ("../a.rs", Part::Anchor("timer_heap".into())),
                ("b.snap", lines(Some(3), None)),
                ("c.rs", lines(Some(1), Some(10))),
                ("d.rs", lines(Some(6), Some(7))),
                ("e.rs", lines(None, Some(3))),
                ("f.diff", lines(None, None)),
            ]
        );
        assert_eq!(found[2].line, 2);
    }

    #[test]
    fn a_misspelt_directive_is_an_error() {
        let error = includes("ch.md", "{{#inclde a.rs}}").unwrap_err();
        assert!(error.contains("ch.md:1"), "{error}");
    }

    #[test]
    fn anchors_must_open_close_and_hold_something() {
        let file = "// ANCHOR: run\nfn run() {}\n// ANCHOR_END: run\n\
                    // ANCHOR: run_ready\n// ANCHOR_END: run_ready\n";
        assert_eq!(check_anchor(file, "run"), Ok(()));
        assert!(check_anchor(file, "run_ready").is_err(), "empty anchor");
        assert!(check_anchor(file, "ru").is_err(), "prefix of a name");
        assert!(check_anchor("// ANCHOR: a\nx\n", "a").is_err(), "no end");
        assert!(check_anchor("// ANCHOR_END: a\nx\n// ANCHOR: a\n", "a").is_err());
        let twice =
            "// ANCHOR: a\nx\n// ANCHOR_END: a\n// ANCHOR: a\ny\n// ANCHOR_END: a\n";
        assert!(check_anchor(twice, "a").is_err(), "appears twice");
    }

    #[test]
    fn line_ranges_must_lie_inside_the_file() {
        let file = "1\n2\n3\n4\n";
        assert_eq!(check_lines(file, Some(3), None), Ok(()));
        assert!(check_lines(file, Some(4), None).is_err());
        assert!(check_lines(file, None, Some(5)).is_err());
        assert!(check_lines(file, Some(2), Some(2)).is_err());
    }

    #[test]
    fn snapshot_headers_end_at_the_second_rule() {
        let snap = "---\nsource: tests/tests/snapshots.rs\n---\n$ cargo run\n";
        assert_eq!(snapshot_header_lines(snap), Some(3));
        assert_eq!(snapshot_header_lines("$ cargo run\n"), None);
    }

    #[test]
    fn links_outside_code_are_found() {
        let page = "See [one](a.md#x) and `[not](code.md)`.\n\
                    ```\n[no](fence.md)\n```\n[label]: b.md\n";
        let targets: Vec<_> = links(page).into_iter().map(|l| l.target).collect();
        assert_eq!(targets, ["a.md#x", "b.md"]);
    }

    #[test]
    fn heading_ids_follow_mdbook() {
        let ids = heading_ids("# Step 3: `call_later`\n## Try it\n## Try it\n");
        for id in ["step-3-call_later", "try-it", "try-it-1"] {
            assert!(ids.contains(id), "{id} missing from {ids:?}");
        }
    }

    #[test]
    fn step_names_carry_their_number() {
        assert_eq!(step_number("step03-sleep"), Some(3));
        assert_eq!(step_number("step03"), None);
        assert_eq!(step_number("introduction"), None);
    }

    const MARKED: &str = "// ANCHOR: all\nuse x;\n// BUILD 1/1: chapter 3, \"The idea\"; \
        test a::b\n// ANCHOR: run\nfn run() {}\n// ANCHOR_END: run\n// ANCHOR_END: all\n";

    #[test]
    fn an_anchor_shows_its_lines_without_any_marker() {
        assert_eq!(
            Part::Anchor("all".into()).select(MARKED),
            "use x;\nfn run() {}"
        );
        assert_eq!(Part::Anchor("run".into()).select(MARKED), "fn run() {}");
        assert_eq!(Part::Anchor("none".into()).select(MARKED), "");
    }

    #[test]
    fn a_line_range_shows_its_lines_without_any_marker() {
        assert_eq!(Part::parse(None).select(MARKED), "use x;\nfn run() {}");
        assert_eq!(
            Part::parse(Some("2:5")).select(MARKED),
            "use x;\nfn run() {}"
        );
        assert_eq!(Part::parse(Some("2")).select(MARKED), "use x;");
    }
}
