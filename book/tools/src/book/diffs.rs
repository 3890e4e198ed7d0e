//! The step-to-step diffs the chapters show, pinned in files beside the
//! book: which parts each diff is cut into, and what each should hold now.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use super::{read_text, step_chapters, step_folders, step_number, workspace_root};
use similar::{Algorithm, TextDiff};

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
            ("apps", APPS),
        ],
    ),
];

/// Parts of a step's diff the book does not pin, because the chapter lists
/// their files whole: each is a new file, so its diff would show the same
/// lines again, each with a `+`.
const LISTED_WHOLE: &[(u32, &str)] = &[(8, "timeout")];

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
/// `event_loop.rs`; the diff shows that move as one file changing. Steps 6
/// to 8 keep step 5's lost-wake-up example under their own step's name
/// (Cargo puts every example of the workspace in one folder).
const RENAMES: &[(u32, &str, &str)] = &[
    (4, "src/lib.rs", "src/event_loop.rs"),
    (
        6,
        "examples/step05_lost_wake_up.rs",
        "examples/step06_lost_wake_up.rs",
    ),
    (
        7,
        "examples/step06_lost_wake_up.rs",
        "examples/step07_lost_wake_up.rs",
    ),
    (
        8,
        "examples/step07_lost_wake_up.rs",
        "examples/step08_lost_wake_up.rs",
    ),
];

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
