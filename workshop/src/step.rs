//! Where things are: the workshop's root, its steps (the workspace's
//! members, so a copy of a step folder beside them changes nothing), and
//! where each marked function of a step stands, read from the files each
//! time by comparing them with the authors' stored copy, line endings aside.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::authors::{self, Files, to_lf, usual_ending, with_ending};
use crate::track::{self, Marked, Problem};

/// The workshop's root: the nearest folder, from `from` upward, whose
/// `Cargo.toml` is a workspace with the package `workshop` in `workshop/`.
pub fn find_root(from: &Path) -> Result<PathBuf, String> {
    for dir in from.ancestors() {
        let Ok(manifest) = fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        if !manifest.contains("[workspace]") {
            continue;
        }
        let tool = fs::read_to_string(dir.join("workshop").join("Cargo.toml"))
            .unwrap_or_default();
        if tool.contains("name = \"workshop\"") {
            return Ok(dir.to_path_buf());
        }
        return Err(format!(
            "{} is a Cargo workspace, but not the workshop's (it has no \
             workshop/ package `workshop`); run this inside your copy \
             of the workshop",
            dir.display()
        ));
    }
    Err(format!(
        "not inside the workshop: no workspace Cargo.toml in {} \
         or above it; `cd` into your copy of the workshop first",
        from.display()
    ))
}

/// `(number, folder)` of every step: each folder in the workspace's
/// `members = [...]` whose package is named `stepNN`, in order.
pub fn step_folders(root: &Path) -> Vec<(u32, String)> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let members = manifest
        .split_once("members = [")
        .map_or("", |(_, list)| list.split(']').next().unwrap_or_default());
    let mut found: Vec<(u32, String)> = members
        .split(',')
        .map(|item| item.trim().trim_matches('"'))
        .filter(|folder| !folder.is_empty())
        .filter_map(|folder| {
            Some((step_package(&root.join(folder))?, folder.to_owned()))
        })
        .collect();
    found.sort();
    found
}

/// The number and the folder of step `n` (`3`, or `step3`).
pub fn find_folder(root: &Path, n: &str) -> Result<(u32, String), String> {
    let folders = step_folders(root);
    let range = match (folders.first(), folders.last()) {
        (Some(first), Some(last)) => format!("{} to {}", first.0, last.0),
        _ => "none".to_owned(),
    };
    let number: u32 = n
        .trim_start_matches("step")
        .parse()
        .map_err(|_| format!("`{n}` is not a step number: the steps are {range}"))?;
    let matching: Vec<&str> = folders
        .iter()
        .filter(|(k, _)| *k == number)
        .map(|(_, folder)| folder.as_str())
        .collect();
    match matching[..] {
        [folder] => Ok((number, folder.to_owned())),
        [] => Err(format!("there is no step {number}: the steps are {range}")),
        _ => Err(format!(
            "step {number} is more than one workspace member: {}; keep one of \
             them in Cargo.toml's `members`",
            matching.join(", ")
        )),
    }
}

/// `NN` if the package in `folder` is named `stepNN`.
fn step_package(folder: &Path) -> Option<u32> {
    let manifest = fs::read_to_string(folder.join("Cargo.toml")).ok()?;
    let name = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("name = \"step"))?;
    name.strip_suffix('"')?.parse().ok()
}

/// One step of the workshop, as `cargo workshop` sees it.
#[derive(Debug)]
pub struct Step {
    pub root: PathBuf,
    pub number: u32,
    /// `step03-sleep`
    pub folder: String,
    /// The authors' version of every file of the step folder, LF endings.
    pub authors: Files,
}

/// Where one marked function stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Its body is the authors' own.
    Authors,
    /// Exactly the `todo!()` that `start` wrote: yours to write.
    Blank,
    /// Written by you, with a `todo!()` still in its code.
    InProgress,
    /// Something else: written by you.
    Written,
}

impl Stage {
    /// Whether the participant wrote something there, which `start` and
    /// `reset` keep unless told `--force`.
    pub fn is_work(self) -> bool {
        matches!(self, Stage::InProgress | Stage::Written)
    }

    /// Whether it is still to be written or finished.
    pub fn is_unfinished(self) -> bool {
        matches!(self, Stage::Blank | Stage::InProgress)
    }
}

impl Step {
    /// Step `n` of the workshop at `root`, with the authors' stored version.
    pub fn find(root: &Path, n: &str) -> Result<Step, String> {
        let (number, folder) = find_folder(root, n)?;
        let authors = authors::read_stored(root, &folder)?;
        let root = root.to_path_buf();
        Ok(Step {
            root,
            number,
            folder,
            authors,
        })
    }

    pub fn dir(&self) -> PathBuf {
        self.root.join(&self.folder)
    }

    /// The step's package: `step03`, as `cargo run -p step03` names it.
    pub fn package(&self) -> String {
        format!("step{:02}", self.number)
    }

    /// Where `check` notes that it passed (ignored by git).
    pub fn state(&self) -> PathBuf {
        self.root.join(".workshop").join(self.package())
    }

    /// Whether `marked` is the blank, or has a `todo!()` left in it.
    pub fn is_unwritten(&self, marked: &Marked) -> bool {
        track::is_unfinished(marked, &self.read(&marked.file)[marked.body.clone()])
    }

    /// The file as it is now: empty if it cannot be read, and a byte that
    /// is not UTF-8 shown as the replacement character.
    pub fn read(&self, file: &str) -> String {
        fs::read(self.dir().join(file))
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }

    /// The authors' version of `file`, in the line endings most of its
    /// lines have now (of the step's other files, if it is gone).
    pub fn original(&self, file: &str) -> Result<String, String> {
        let text = self.authors.get(file).ok_or_else(|| {
            format!("{}/{file} is not one of the authors' files", self.folder)
        })?;
        let now = match fs::read_to_string(self.dir().join(file)) {
            Ok(now) if now.contains('\n') => now,
            _ => authors::step_files(&self.dir())
                .iter()
                .map(|file| self.read(file))
                .collect(),
        };
        Ok(with_ending(text, usual_ending(&now)))
    }

    /// The authors' track: the markers in their version of the step, each
    /// body a range of the authors' LF text.
    pub fn authors_track(&self) -> Result<Vec<Marked>, String> {
        let mut all = Vec::new();
        for (file, text) in &self.authors {
            if file.starts_with("src/") && track::is_rust(file) {
                all.extend(track::markers_in(file, text)?);
            }
        }
        all.sort_by_key(|marked| marked.order);
        if all.is_empty() {
            return Err(format!(
                "{}/ has no `// BUILD` markers in the authors' version: no track",
                self.folder
            ));
        }
        Ok(all)
    }

    /// The track as the files are now; a file gone, not UTF-8, a marker
    /// deleted or changed, or a function whose braces do not pair up is
    /// named, with how to mend it. Markers count only in the authors' files
    /// (a copy, `lib_old.rs`, holds none of the track).
    pub fn track(&self) -> Result<Vec<Marked>, String> {
        let authors = self.authors_track()?;
        if let Some(gone) = authors
            .iter()
            .find(|theirs| !self.dir().join(&theirs.file).is_file())
        {
            return Err(format!(
                "{}/{file}, which holds `{}`, is gone. `cargo workshop reset \
                 {} {file}` puts the authors' version back.",
                self.folder,
                gone.function,
                self.number,
                file = gone.file,
            ));
        }
        let mut found = Vec::new();
        for file in Self::track_files(&authors) {
            match track::scan(&file, &self.read_text(&file)?) {
                Ok(in_file) => found.extend(in_file),
                Err(Problem::Unbalanced(said)) => {
                    return Err(format!("{}/{said}", self.folder));
                }
                // A marker so mangled it no longer parses is as good as gone.
                Err(Problem::Marker(_)) => {}
            }
        }
        if let Some(theirs) = authors.iter().find(|theirs| {
            !found
                .iter()
                .any(|m| m.order == theirs.order && m.function == theirs.function)
        }) {
            return Err(self.marker_lost(theirs));
        }
        let now = track::numbered(found, self.number)
            .map_err(|err| format!("{}/{err}", self.folder))?;
        if now.len() != authors.len() {
            return Err(format!(
                "{}/ has more `// BUILD` markers than the authors' step: \
                 `cargo workshop diff {}` shows which line is new",
                self.folder, self.number
            ));
        }
        Ok(now)
    }

    /// The file's text, or, when it is not UTF-8, which line holds the
    /// first byte that is not.
    pub fn read_text(&self, file: &str) -> Result<String, String> {
        let path = self.dir().join(file);
        let bytes = fs::read(&path).map_err(|err| {
            format!("{}/{file} cannot be read: {err}", self.folder)
        })?;
        String::from_utf8(bytes).map_err(|err| {
            let good = err.utf8_error().valid_up_to();
            let bytes = err.as_bytes();
            let line = bytes[..good].split(|byte| *byte == b'\n').count();
            format!(
                "{}/{file} is not UTF-8 text: line {line} holds a byte that \
                 UTF-8 does not allow (0x{:02X}: an editor that saves in \
                 Latin-1 or Windows-1252 writes `é` so). Rust reads source \
                 files as UTF-8: save the file as UTF-8 (your editor's \
                 encoding setting), or retype that line.",
                self.folder, bytes[good]
            )
        })
    }

    /// What to say when the marker above `theirs` is gone or changed.
    fn marker_lost(&self, theirs: &Marked) -> String {
        let line = self.authors[&theirs.file]
            .lines()
            .nth(theirs.line - 1)
            .map(str::trim)
            .unwrap_or_default();
        format!(
            "the `// BUILD {k}/{n}` line above `{function}` in {folder}/{file} is \
             gone or changed.\n`cargo workshop` finds your functions by it: put \
             it back, right above the function,\nas the authors wrote it:\n\n    \
             {line}\n\n(`cargo workshop diff {number} {file}` shows what changed.)",
            k = theirs.order,
            n = theirs.total,
            function = theirs.function,
            folder = self.folder,
            file = theirs.file,
            number = self.number,
        )
    }

    /// Each marked function of the track as it is now, and where it stands.
    pub fn stages(&self) -> Result<Vec<(Marked, Stage)>, String> {
        // `track` matched each of the authors' markers, in the same order.
        let authors = self.authors_track()?;
        let stages = self
            .track()?
            .into_iter()
            .zip(&authors)
            .map(|(now, theirs)| {
                let text = self.read(&now.file);
                let stage =
                    stage_of(&now, &text, theirs, &self.authors[&theirs.file]);
                (now, stage)
            });
        Ok(stages.collect())
    }

    /// Whether any marked function is not the authors'. A step whose
    /// markers are damaged counts as started, so that what comes next says
    /// what to mend.
    pub fn is_started(&self) -> bool {
        self.stages().map_or(true, |stages| {
            stages.iter().any(|(_, stage)| *stage != Stage::Authors)
        })
    }

    /// The files holding marked functions, relative to the step folder.
    pub fn track_files(marked: &[Marked]) -> BTreeSet<String> {
        marked.iter().map(|m| m.file.clone()).collect()
    }
}

/// Where `marked`, found in `text`, stands against `theirs`, the same
/// function in the authors' `their_text` (LF). The doc comment, attributes
/// and signature count as much as the body: a plan written above a blank
/// body or a parameter renamed is the participant's work.
pub fn stage_of(
    marked: &Marked,
    text: &str,
    theirs: &Marked,
    their_text: &str,
) -> Stage {
    let body = to_lf(&text[marked.body.clone()]);
    let own_signature = track::without_spaces(&text[marked.signature.clone()])
        == track::without_spaces(&their_text[theirs.signature.clone()]);
    if body == their_text[theirs.body.clone()] && own_signature {
        Stage::Authors
    } else if track::is_the_blank(marked, &body) && own_signature {
        Stage::Blank
    } else if track::is_unfinished(marked, &body) {
        Stage::InProgress
    } else {
        Stage::Written
    }
}
