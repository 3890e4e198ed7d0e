//! The authors' version of every step, stored with the files.
//!
//! `cargo workshop` and the book compare a step folder with the authors'
//! version of it: what `start` blanks, what `reset` puts back, what the
//! book shows after a participant started a step. That version must be
//! there however the workshop arrived (a clone, a ZIP without `.git`, a
//! folder inside a course's repository, a shallow clone) and must not
//! change when a participant commits their own work. So it is not read
//! from git: `cargo xtask freeze` writes one file per step,
//! `tests/authors/stepNN-name.txt`, which the authors commit beside the
//! steps. A test (`tests/tests/workshop.rs`) fails when a step and its
//! stored copy no longer match.
//!
//! The stored copy is text with LF line endings, one step folder's files
//! one after the other, each behind a header that says how many lines
//! follow, so that no line of code can be taken for a header:
//!
//! ```text
//! === src/main.rs: 40 lines
//! ```
//!
//! `.txt`, so Cargo, rustfmt and the duplicates finder leave it alone.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// A step folder's files: path (relative, `/`-separated) to text, with LF
/// line endings.
pub type Files = BTreeMap<String, String>;

/// The command that brings the stored copies up to date with the steps.
pub const FREEZE_COMMAND: &str = "cargo xtask freeze";

/// Where the stored copies live, relative to the workshop's root.
pub const FOLDER: &str = "tests/authors";

const HEADER: &str = "=== ";
const NO_NEWLINE: &str = ", no newline at the end";

/// The stored copy of the step in `folder` (`step03-sleep`).
pub fn stored_copy(root: &Path, folder: &str) -> PathBuf {
    root.join(FOLDER).join(format!("{folder}.txt"))
}

/// The files of a step folder that belong to the step, relative and
/// sorted: everything but build output (`target/`) and hidden files (an
/// editor's swap file, `.DS_Store`). A symbolic link is one entry of its
/// own, never followed: what it points to may lie outside the workshop,
/// and `reset` removes the link, not that.
pub fn step_files(step_dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![step_dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(relative) = path.strip_prefix(step_dir) else {
                continue;
            };
            let file = crate::with_slashes(relative);
            if file == "target" || file.split('/').any(|part| part.starts_with('.'))
            {
                continue;
            }
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path);
            } else {
                files.push(file);
            }
        }
    }
    files.sort();
    files
}

/// The step folder's files as they are, line endings made LF.
pub fn read_folder(step_dir: &Path) -> Result<Files, String> {
    let mut files = Files::new();
    for file in step_files(step_dir) {
        let text = fs::read_to_string(step_dir.join(&file))
            .map_err(|err| format!("{}/{file}: {err}", step_dir.display()))?;
        files.insert(file, to_lf(&text));
    }
    Ok(files)
}

/// The stored copy of the step in `folder`, or what is missing and how to
/// get it back.
pub fn read_stored(root: &Path, folder: &str) -> Result<Files, String> {
    let path = stored_copy(root, folder);
    let shown = format!("{FOLDER}/{folder}.txt");
    let text = fs::read_to_string(&path).map_err(|err| {
        format!(
            "{shown} cannot be read ({err}). It holds the authors' version of \
             {folder}/, which `cargo workshop` compares your files with. Take \
             it from the workshop as you downloaded it (in a git clone: `git \
             checkout -- {shown}`)"
        )
    })?;
    decode(&text).map_err(|err| {
        format!(
            "{shown} is damaged ({err}). Take it from the workshop as you \
             downloaded it (in a git clone: `git checkout -- {shown}`)"
        )
    })
}

/// The stored copy's text for a step folder's files.
pub fn encode(folder: &str, files: &Files) -> String {
    let mut out = format!(
        "# The authors' version of {folder}/: what `cargo workshop` and the\n\
         # book compare the step with. Made by `{FREEZE_COMMAND}` from the\n\
         # step's files: change the step and run it again; never edit this.\n"
    );
    for (file, text) in files {
        let lines = text.lines().count();
        let ending = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            NO_NEWLINE
        };
        let _ = writeln!(out, "{HEADER}{file}: {lines} lines{ending}");
        out.push_str(text);
        if !ending.is_empty() {
            out.push('\n');
        }
    }
    out
}

/// A step folder's files from a stored copy's text (LF or CRLF).
pub fn decode(text: &str) -> Result<Files, String> {
    let text = to_lf(text);
    let mut lines = text.split_inclusive('\n');
    let mut files = Files::new();
    while let Some(line) = lines.next() {
        if line.starts_with('#') && files.is_empty() {
            continue;
        }
        let (file, count, newline_at_end) = parse_header(line).ok_or_else(|| {
            format!("`{}` is not a file's header", line.trim_end())
        })?;
        let mut body = String::new();
        for _ in 0..count {
            body.push_str(lines.next().ok_or_else(|| {
                format!("{file} has fewer lines than its header says")
            })?);
        }
        if !newline_at_end {
            body.pop();
        }
        files.insert(file, body);
    }
    Ok(files)
}

/// `=== src/main.rs: 40 lines` as `("src/main.rs", 40, true)`.
fn parse_header(line: &str) -> Option<(String, usize, bool)> {
    let rest = line.strip_prefix(HEADER)?.trim_end_matches('\n');
    let (rest, newline_at_end) = match rest.strip_suffix(NO_NEWLINE) {
        Some(rest) => (rest, false),
        None => (rest, true),
    };
    let (file, count) = rest.rsplit_once(": ")?;
    let count = count.strip_suffix(" lines")?.parse().ok()?;
    Some((file.to_owned(), count, newline_at_end))
}

/// What differs between the step in `folder` and its stored copy, one line
/// a file; empty when they match.
pub fn mismatches(root: &Path, folder: &str) -> Vec<String> {
    let now = match read_folder(&root.join(folder)) {
        Ok(files) => files,
        Err(err) => return vec![err],
    };
    let stored = match read_stored(root, folder) {
        Ok(files) => files,
        Err(err) => return vec![err],
    };
    let mut differ = Vec::new();
    for (file, text) in &now {
        match stored.get(file) {
            None => differ.push(format!("{folder}/{file}: not in the stored copy")),
            Some(kept) if kept != text => {
                differ.push(format!("{folder}/{file}: differs"));
            }
            Some(_) => {}
        }
    }
    for file in stored.keys().filter(|file| !now.contains_key(*file)) {
        differ.push(format!("{folder}/{file}: stored, but not in the step"));
    }
    differ
}

// ---------------------------------------------------------------------------
// Line endings: the participant's.
//
// A checkout may hold CRLF files (Git for Windows by default), LF files, or
// a file with both (an editor that wrote one line its own way). The stored
// copy is LF. Files are compared with their endings made LF, and what is
// written into a file takes the endings most of its lines already have.

/// `text` with every CRLF made LF.
pub fn to_lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// The line ending most of `text`'s lines end with: `"\r\n"` or `"\n"`
/// (LF on a tie, and for a text of one line).
pub fn usual_ending(text: &str) -> &'static str {
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count() - crlf;
    if crlf > lf { "\r\n" } else { "\n" }
}

/// LF `text` with `ending` at the end of each line.
pub fn with_ending(text: &str, ending: &str) -> String {
    if ending == "\n" {
        text.to_owned()
    } else {
        text.replace('\n', ending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(pairs: &[(&str, &str)]) -> Files {
        pairs
            .iter()
            .map(|(file, text)| ((*file).to_owned(), (*text).to_owned()))
            .collect()
    }

    #[test]
    fn a_stored_copy_reads_back_every_file_as_it_was() {
        let step = files(&[
            ("Cargo.toml", "[package]\nname = \"step09\"\n"),
            // A line that looks like a header is only a line of the file.
            ("src/lib.rs", "=== src/main.rs: 1 lines\n\nfn f() {}\n"),
            ("src/empty.rs", ""),
            ("src/main.rs", "fn main() {}"),
        ]);
        let text = encode("step09-test", &step);
        assert_eq!(decode(&text).unwrap(), step);
        assert_eq!(decode(&text.replace('\n', "\r\n")).unwrap(), step);
    }

    #[test]
    fn a_cut_stored_copy_is_refused() {
        let text = encode("s", &files(&[("src/lib.rs", "a\nb\nc\n")]));
        let cut = text.strip_suffix("c\n").unwrap();
        assert!(
            decode(cut)
                .unwrap_err()
                .contains("src/lib.rs has fewer lines")
        );
    }

    #[test]
    fn the_usual_ending_is_what_most_lines_have() {
        assert_eq!(usual_ending("a\r\nb\r\nc\n"), "\r\n");
        assert_eq!(usual_ending("a\nb\r\nc\n"), "\n");
        assert_eq!(usual_ending("a"), "\n");
        assert_eq!(with_ending("a\nb\n", "\r\n"), "a\r\nb\r\n");
    }
}
