//! The authors' version of every step, stored with the files: what `start`
//! blanks, `reset` puts back and the book shows. Not read from git, so that
//! a ZIP, a course's repository or a shallow clone has it too and the
//! participant's commits leave it alone: `cargo xtask freeze` writes
//! `tests/authors/stepNN-name.txt`, the step folder's files with LF endings,
//! each behind a header saying how many lines follow (`=== src/main.rs: 40
//! lines`), so that no line of code can be taken for a header. `.txt`, so
//! Cargo and rustfmt leave it alone.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// A step folder's files: path (relative, `/`-separated) to LF text.
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

/// The files of a step folder that belong to the step, relative and sorted:
/// not build output (`target/`), hidden files, nor an editor's own.
pub fn step_files(step_dir: &Path) -> Vec<String> {
    crate::files_below(step_dir)
        .into_iter()
        .filter(|file| {
            !file.starts_with("target/")
                && !file.split('/').any(|part| part.starts_with('.'))
                && !file.rsplit('/').next().is_some_and(is_an_editors)
        })
        .collect()
}

/// Whether a file named `name` is an editor's swap, backup or lock file
/// (`.x.swp`, `x~`, `#x#`, `.#x`, vim's `4913`), not the participant's.
pub fn is_an_editors(name: &str) -> bool {
    name.starts_with(['.', '#'])
        || name.ends_with('~')
        || name == "4913"
        || [".swp", ".swo", ".swx", ".tmp", ".bak"]
            .iter()
            .any(|end| name.ends_with(end))
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
    let shown = format!("{FOLDER}/{folder}.txt");
    let get_it_back = format!(
        "Take it from the workshop as you downloaded it (in a git clone: `git \
         checkout -- {shown}`)"
    );
    let text = fs::read_to_string(stored_copy(root, folder)).map_err(|err| {
        format!(
            "{shown} cannot be read ({err}). It holds the authors' version of \
             {folder}/, which `cargo workshop` compares your files with. \
             {get_it_back}"
        )
    })?;
    decode(&text).map_err(|err| format!("{shown} is damaged ({err}). {get_it_back}"))
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
        let cut = !text.is_empty() && !text.ends_with('\n');
        let ending = if cut { NO_NEWLINE } else { "" };
        let _ = writeln!(out, "{HEADER}{file}: {lines} lines{ending}");
        out.push_str(text);
        if cut {
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
    let cut = rest.strip_suffix(NO_NEWLINE);
    let (file, count) = cut.unwrap_or(rest).rsplit_once(": ")?;
    let count = count.strip_suffix(" lines")?.parse().ok()?;
    Some((file.to_owned(), count, cut.is_none()))
}

// Line endings are the participant's: a checkout may hold CRLF files (Git
// for Windows), LF files, or both in one file. Files are compared with
// their endings made LF, and what is written takes the endings most of the
// file's lines already have.

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
    text.replace('\n', ending)
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
