//! `cargo workshop reset N [FILE...]`: puts step N's folder (or these
//! files of it) back as the authors wrote it, byte for byte in the files'
//! own line endings; never throws work away unless told `--force`.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use crate::changes::{self, FileChange, What};
use crate::commands::{Words, step_file, times, write_in_step};
use crate::step::{Step, find_root};

pub const HELP: &str = "usage: cargo workshop reset N [FILE...] [--force]\n\n\
             Puts step N's folder back as the authors wrote it, byte for byte \
             in your\nfiles' own line endings: every changed or deleted file, \
             and a file you added\nis removed. Name FILEs (src/main.rs) to put \
             back only those. If you wrote\nsomething there, it names it and \
             changes nothing unless you add --force.";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &["--force"], HELP)?;
    let (n, files) = words.step_and_rest("reset", HELP)?;
    let step = Step::find(&find_root(here)?, n)?;
    let only: Vec<String> = files
        .iter()
        .map(|file| step_file(&step, here, file))
        .collect();
    println!("{}", reset(&step, &only, words.has("--force"))?);
    if only.is_empty() {
        if let Some(kept) = times::reset(&step.root, step.number) {
            println!("{kept}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Puts the step folder (or the files `only`) back as the authors wrote it:
/// changed and deleted files rewritten, added ones removed; with work in
/// them, only if `force`. Says so only once every file is the authors'.
pub fn reset(step: &Step, only: &[String], force: bool) -> Result<String, String> {
    let n = step.number;
    if let Some(unknown) = only.iter().find(|file| {
        !step.authors.contains_key(*file) && !step.dir().join(file).is_file()
    }) {
        return Err(format!(
            "{}/{unknown} is neither the authors' nor yours: name files \
             relative to the step folder (src/main.rs)",
            step.folder
        ));
    }
    let wanted =
        |change: &FileChange| only.is_empty() || only.contains(&change.file);
    let differ: Vec<FileChange> =
        changes::changes(step).into_iter().filter(wanted).collect();
    let work: Vec<String> = differ
        .iter()
        .filter(|change| change.is_work())
        .map(|change| {
            format!("{}/{}: {}", step.folder, change.file, change.describe())
        })
        .collect();
    if !work.is_empty() && !force {
        let files: Vec<String> =
            only.iter().map(|file| format!(" {file}")).collect();
        return Err(format!(
            "step {n} has work in it that reset would throw away:\n  {}\n\
             Keep a copy if you want it (outside the workspace's folders), \
             then run `cargo workshop reset {n}{} --force`.",
            work.join("\n  "),
            files.concat(),
        ));
    }
    let mut done = Vec::new();
    for change in &differ {
        if change.what == What::Added {
            changes::remove_added(step, &change.file)?;
            done.push(format!("removed {}, added", change.file));
        } else {
            write_in_step(step, &change.file, &step.original(&change.file)?)?;
            if change.what == What::Deleted {
                done.push(format!("put back {}, deleted", change.file));
            }
        }
    }
    let still: Vec<String> = changes::changes(step)
        .into_iter()
        .filter(wanted)
        .map(|change| format!("{}/{}", step.folder, change.file))
        .collect();
    if !still.is_empty() {
        return Err(format!(
            "step {n} is not back as the authors wrote it: {} still differ{}. \
             `cargo workshop diff {n}` shows how.",
            still.join(", "),
            if still.len() == 1 { "s" } else { "" },
        ));
    }
    if only.is_empty() {
        let _ = fs::remove_dir_all(step.state()); // an old "passed" no longer holds
    }
    let what = if only.is_empty() {
        format!("Step {n}")
    } else {
        only.join(", ")
    };
    Ok(if differ.is_empty() {
        format!("{what} is as the authors wrote it already: nothing to reset.")
    } else if done.is_empty() {
        format!("{what} is back as the authors wrote it.")
    } else {
        format!(
            "{what} is back as the authors wrote it. ({})",
            done.join("; ")
        )
    })
}
