//! How a whole step folder differs from the authors' version: for `reset`
//! (which puts every file back), `diff` (which shows how), `status` and
//! `check` (which name what changed outside the functions a participant
//! writes before blaming one of them).
//!
//! A chapter's exercises change files beside the track (`main.rs`, a
//! `drop` in `sleep.rs`), and a participant may delete or add a file: all
//! of it counts, not only the marked functions.

use std::fmt::Write as _;
use std::fs;

use crate::authors::{self, to_lf, usual_ending, with_ending};
use crate::track::{self, Marked};
use similar::TextDiff;

use crate::step::Step;

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
        /// The marked functions that are neither the authors' nor the
        /// blank `start` wrote: the participant's, finished or not.
        written: Vec<String>,
        /// Whether lines outside the marked functions changed.
        other_lines: bool,
    },
    /// Only line endings differ: some lines end otherwise than most.
    LineEndings,
    /// The authors' file is gone.
    Deleted,
    /// A file the authors do not have.
    Added,
}

impl FileChange {
    /// Whether putting the file back throws away something someone wrote:
    /// blanks are what `start` made, and a deleted file or line endings
    /// hold nothing of theirs.
    pub fn is_work(&self) -> bool {
        match &self.what {
            What::Changed {
                written,
                other_lines,
            } => !written.is_empty() || *other_lines,
            What::Added => true,
            What::LineEndings | What::Deleted => false,
        }
    }

    /// Whether it lies outside the functions a participant writes.
    pub fn is_outside_track(&self) -> bool {
        match &self.what {
            What::Changed { other_lines, .. } => *other_lines,
            What::Added | What::Deleted => true,
            What::LineEndings => false,
        }
    }

    pub fn describe(&self) -> String {
        match &self.what {
            What::Changed {
                written,
                other_lines,
            } => match (written.is_empty(), other_lines) {
                (false, false) => format!("your {}", written.join(", ")),
                (false, true) => {
                    format!("your {} and other lines", written.join(", "))
                }
                (true, true) => "lines outside the marked functions".to_owned(),
                (true, false) => "blanked functions".to_owned(),
            },
            What::LineEndings => "line endings only".to_owned(),
            What::Deleted => "deleted".to_owned(),
            What::Added => "a file the authors do not have".to_owned(),
        }
    }
}

/// Every file of the step folder that differs from the authors' version,
/// in path order. A file whose endings are all CRLF (or all LF) is as the
/// authors wrote it when its text is.
pub fn changes(step: &Step) -> Vec<FileChange> {
    let now = authors::step_files(&step.dir());
    let mut found = Vec::new();
    for (file, theirs) in &step.authors {
        let what = if now.contains(file) {
            let text = step.read(file);
            if text == with_ending(theirs, usual_ending(&text)) {
                continue;
            }
            if to_lf(&text) == *theirs {
                What::LineEndings
            } else {
                changed(file, theirs, &to_lf(&text))
            }
        } else {
            What::Deleted
        };
        found.push(FileChange {
            file: file.clone(),
            what,
        });
    }
    for file in now.iter().filter(|file| !step.authors.contains_key(*file)) {
        found.push(FileChange {
            file: file.clone(),
            what: What::Added,
        });
    }
    found.sort_by(|a, b| a.file.cmp(&b.file));
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
            other_lines: true,
        };
    };
    let written: Vec<String> = new
        .iter()
        .filter(|n| {
            let body = &after[n.body.clone()];
            let theirs = old.iter().find(|o| o.function == n.function);
            !track::is_the_blank(n, body)
                && theirs.is_none_or(|o| before[o.whole()] != after[n.whole()])
        })
        .map(|n| format!("`{}`", n.function))
        .collect();
    let outside = |text: &str, marks: &[Marked]| {
        let mut rest = text.to_owned();
        for mark in marks.iter().rev() {
            rest.replace_range(mark.whole(), "");
        }
        rest
    };
    What::Changed {
        written,
        other_lines: outside(before, &old) != outside(after, &new),
    }
}

/// The changes outside the functions a participant writes, one line each
/// (`step01-while-loop/src/main.rs: lines outside …`).
pub fn outside_track(step: &Step) -> Vec<String> {
    outside_changes(step)
        .iter()
        .map(|change| {
            format!("{}/{}: {}", step.folder, change.file, change.describe())
        })
        .collect()
}

fn outside_changes(step: &Step) -> Vec<FileChange> {
    changes(step)
        .into_iter()
        .filter(FileChange::is_outside_track)
        .collect()
}

/// What `check` says before blaming any function, when files or lines
/// outside them differ from the authors' version; `None` when none do.
pub fn before_blaming(step: &Step) -> Option<String> {
    let outside = outside_changes(step);
    let n = step.number;
    let (file, it) = match outside.as_slice() {
        [] => return None,
        [one] => (one.file.as_str(), "it"),
        _ => ("FILE", "one file"),
    };
    Some(format!(
        "Step {n} differs from the authors' version outside the functions you \
         write:\n  {}\nThe failing tests may come from there rather than from \
         your functions, so no function is blamed yet. `cargo workshop diff \
         {n}` shows the changes; `cargo workshop reset {n} {file}` puts {it} \
         back as the authors wrote it (add --force if it holds work of yours: \
         that goes too).",
        outside_track(step).join("\n  "),
    ))
}

/// Each changed file of the step folder (or of `only`) and what changed in
/// it, a line each, without the text: for a participant who wants to know
/// where they differ without reading the authors' bodies.
pub fn changed_files(step: &Step, only: &[String]) -> Vec<String> {
    changes(step)
        .iter()
        .filter(|change| only.is_empty() || only.contains(&change.file))
        .map(|change| {
            format!("{}/{}: {}", step.folder, change.file, change.describe())
        })
        .collect()
}

/// A unified diff of every change in the step folder, from the authors'
/// version to the files as they are.
pub fn diff(step: &Step, only: &[String]) -> String {
    let mut out = String::new();
    for change in changes(step)
        .iter()
        .filter(|change| only.is_empty() || only.contains(&change.file))
    {
        let path = format!("{}/{}", step.folder, change.file);
        let before = step.authors.get(&change.file).cloned().unwrap_or_default();
        let after = to_lf(&step.read(&change.file));
        if change.what == What::LineEndings {
            let _ = writeln!(out, "{path}: line endings only (CRLF and LF mixed)");
            continue;
        }
        let shown = TextDiff::from_lines(&before, &after)
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("the authors' {path}"),
                &if change.what == What::Deleted {
                    format!("{path} (deleted)")
                } else {
                    path.clone()
                },
            )
            .to_string();
        out.push_str(&shown);
    }
    out
}

/// Removes `file` of the step, and the folders it leaves empty in it.
pub fn remove_added(step: &Step, file: &str) -> Result<(), String> {
    let path = step.dir().join(file);
    fs::remove_file(&path).map_err(|err| format!("{}: {err}", path.display()))?;
    let mut dir = path.parent();
    while let Some(folder) = dir {
        if folder == step.dir() || fs::remove_dir(folder).is_err() {
            break;
        }
        dir = folder.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::commands::start::start;
    use crate::commands::status::{fingerprint, step_status};
    use crate::commands::write;

    /// A workshop of one step, step 1, copied from this one with its stored
    /// authors' version, in a folder of its own.
    struct Scratch {
        root: PathBuf,
    }

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let from = crate::workspace_root();
            let root = std::env::temp_dir()
                .join(format!("workshop-unit-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&root);
            let folder = "step01-while-loop";
            let stored = authors::read_stored(&from, folder).expect("step 1's copy");
            for (file, text) in &stored {
                write(&root.join(folder).join(file), text).unwrap();
            }
            write(
                &authors::stored_copy(&root, folder),
                &authors::encode(folder, &stored),
            )
            .unwrap();
            fs::copy(from.join("Cargo.toml"), root.join("Cargo.toml")).unwrap();
            Scratch { root }
        }

        fn step(&self) -> Step {
            Step::find(&self.root, "1").expect("step 1")
        }

        fn edit(&self, file: &Path, from: &str, to: &str) {
            let path = self.step().dir().join(file);
            let text = fs::read_to_string(&path).unwrap();
            assert!(text.contains(from), "{from:?} is not in {}", path.display());
            fs::write(&path, text.replacen(from, to, 1)).unwrap();
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.root);
        }
    }

    #[test]
    fn an_edit_beside_the_track_is_named_before_any_function_is_blamed() {
        let scratch = Scratch::new("beside");
        assert_eq!(before_blaming(&scratch.step()), None);
        scratch.edit(
            Path::new("src/main.rs"),
            "println!(",
            "println!(\"mine\");\n    println!(",
        );
        let said = before_blaming(&scratch.step()).expect("main.rs is named");
        assert!(
            said.contains(
                "step01-while-loop/src/main.rs: lines outside the marked functions"
            ),
            "{said}"
        );
        assert!(said.contains("`cargo workshop diff 1`"), "{said}");
        assert!(
            said.contains("`cargo workshop reset 1 src/main.rs` puts it back"),
            "{said}"
        );
    }

    #[test]
    fn a_signature_written_otherwise_is_the_functions_not_a_line_beside_it() {
        let scratch = Scratch::new("signature");
        let lib = Path::new("src/lib.rs");
        // A participant's own name for the argument, and the body to suit.
        scratch.edit(
            lib,
            "pub fn push(&mut self, callback: Callback)",
            "pub fn push(&mut self, job: Callback)",
        );
        let text = scratch.step().read("src/lib.rs");
        let at = text.find("pub fn push").expect("push");
        let body = at + text[at..].find('{').expect("its body");
        let renamed = text[body..].replacen("callback", "job", 1);
        fs::write(
            scratch.step().dir().join(lib),
            format!("{}{renamed}", &text[..body]),
        )
        .unwrap();
        assert_eq!(before_blaming(&scratch.step()), None);
        let change = changes(&scratch.step())
            .into_iter()
            .find(|change| change.file == "src/lib.rs")
            .expect("lib.rs changed");
        assert_eq!(
            change.what,
            What::Changed {
                written: vec!["`EventLoop::push`".to_owned()],
                other_lines: false,
            }
        );
    }

    #[test]
    fn the_names_of_changed_files_say_what_changed_but_not_how() {
        let scratch = Scratch::new("names");
        let step = scratch.step();
        assert!(changed_files(&step, &[]).is_empty());
        scratch.edit(Path::new("src/lib.rs"), "self.ready", "self.ready ");
        let names = changed_files(&step, &[]);
        assert_eq!(
            names,
            ["step01-while-loop/src/lib.rs: your `EventLoop::push`"],
            "{names:?}"
        );
        assert!(changed_files(&step, &["src/main.rs".to_owned()]).is_empty());
    }

    #[test]
    fn done_holds_only_while_nothing_in_the_step_changes() {
        let scratch = Scratch::new("done");
        let step = scratch.step();
        start(&step, false).expect("step 1 starts");
        // What `check` notes when the step passes.
        write(&step.state().join("passed"), &fingerprint(&step)).unwrap();
        assert_eq!(step_status(&step).unwrap(), "done: check passes");
        scratch.edit(
            Path::new("src/main.rs"),
            "println!(",
            "println!(\"mine\");\n    println!(",
        );
        let status = step_status(&step).unwrap();
        assert!(status.starts_with("started: 0 of"), "{status}");
    }
}
