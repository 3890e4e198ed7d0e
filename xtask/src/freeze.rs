//! `cargo xtask freeze [N...]`, for the authors: stores the steps' files
//! as they are in `tests/authors/`, the authors' version that every other
//! command and the book compare with.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use workshop::authors;
use workshop::commands::times::{self, Event};
use workshop::commands::{Words, write};
use workshop::step::{Step, find_folder, find_root, step_folders};
use workshop::track;

pub const HELP: &str = "usage: cargo xtask freeze [N...]\n\n\
             For the workshop's authors: stores the steps' files as they are \
             (or those of\nthe steps named) in tests/authors/, as the authors' \
             version that start,\ncheck, reset, status and the book compare \
             with. Run it after changing a\nstep, and commit tests/authors/. \
             Refuses a step with a blank function,\na step started here with \
             `cargo workshop start`, and any copy that is not a git\n\
             repository of its own (a ZIP, a pack, a folder of a course's \
             repository).";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &[], HELP)?;
    println!("{}", freeze(&find_root(here)?, &words.plain)?);
    Ok(ExitCode::SUCCESS)
}

/// Stores the authors' version of the steps named (all, if none), each as
/// its files are now; a step with a blank function is refused, so that a
/// started step never becomes the authors'. With every step, a stored copy
/// whose step is gone is removed.
fn freeze(root: &Path, numbers: &[&str]) -> Result<String, String> {
    let all = numbers.is_empty();
    let wanted = steps_named(root, numbers);
    authors_repository(root, &wanted)?;
    let mut steps = Vec::new();
    for n in &wanted {
        let step = as_it_is(root, root, n)?;
        if let Some(blank) = blank_function(&step)? {
            return Err(format!(
                "step {n} has a blank function, `{blank}`: freezing it would \
                 make its todo!() the authors' version. Write it back, or `cargo \
                 workshop reset {n}` if this checkout's tests/authors/ is right"
            ));
        }
        steps.push(step);
    }
    let mut said = Vec::new();
    for step in &steps {
        let path = authors::stored_copy(root, &step.folder);
        let text = authors::encode(&step.folder, &step.authors);
        let shown = format!("{}/{}.txt", authors::FOLDER, step.folder);
        if fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            said.push(format!("{shown}: up to date"));
        } else {
            write(&path, &text)?;
            said.push(format!("{shown}: written"));
        }
    }
    if all {
        let kept: Vec<String> = steps
            .iter()
            .map(|step| format!("{}.txt", step.folder))
            .collect();
        let folder = root.join(authors::FOLDER);
        for stale in workshop::files_below(&folder)
            .into_iter()
            .filter(|file| !kept.contains(file))
        {
            fs::remove_file(folder.join(&stale))
                .map_err(|err| format!("{stale}: {err}"))?;
            said.push(format!(
                "{}/{stale}: removed, no such step",
                authors::FOLDER
            ));
        }
    }
    Ok(said.join("\n"))
}

/// Refuses a copy that is not the authors' own repository. What sets the
/// authors apart is not the files (a participant's `Timer::cmp` looks like
/// an author's fix) but where they work and how the files came there:
/// the authors change steps in the workshop's own git repository, where
/// tests/authors/ is committed and a wrong freeze is undone with `git
/// checkout`; a participant works in a copy without git of its own (a
/// ZIP, a pack, a course's repository, where tests/authors/ is the only
/// copy of the authors' version) or writes functions after `cargo
/// workshop start`, which `.workshop/times.csv` records.
fn authors_repository(root: &Path, wanted: &[String]) -> Result<(), String> {
    const WHAT: &str = "`freeze` stores the steps as the authors' version, \
        which start, check, reset, status and the book compare your files \
        with; it is for the workshop's authors, in its own git repository";
    let top = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "--show-toplevel"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    let same = |a: &Path, b: &Path| {
        fs::canonicalize(a)
            .ok()
            .is_some_and(|a| fs::canonicalize(b).ok() == Some(a))
    };
    if !top.is_some_and(|top| same(&top, root)) {
        return Err(format!(
            "{WHAT}. This copy is not a git repository of its own (a ZIP \
             download, a pack, or a folder of a course's repository), so \
             tests/authors/ here is the only copy of the authors' version, \
             and nothing was stored. To change a step for everyone, change it \
             in a clone of the workshop's repository (CONTRIBUTING.md)."
        ));
    }
    let started: Vec<String> = times::read(root)
        .iter()
        .filter(|note| matches!(note.event, Event::Started))
        .map(|note| note.step.to_string())
        .filter(|step| wanted.contains(step))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !started.is_empty() {
        return Err(format!(
            "{WHAT}. Step {} was started here with `cargo workshop start` \
             (.workshop/times.csv records it): the functions in it are a \
             participant's, and nothing was stored. `cargo workshop reset N` \
             puts a step back. An author who only tried the track here \
             removes .workshop/ and runs freeze again.",
            started.join(", ")
        ));
    }
    Ok(())
}

/// Step `n` of the workshop at `root`, with the files of the same step at
/// `authors` as the authors' version: the code in front of the authors as
/// it is, frozen or not.
pub fn as_it_is(root: &Path, authors: &Path, n: &str) -> Result<Step, String> {
    let (number, folder) = find_folder(root, n)?;
    let authors = authors::read_folder(&authors.join(&folder))?;
    let root = root.to_path_buf();
    Ok(Step {
        root,
        number,
        folder,
        authors,
    })
}

/// The steps a command names, or every step if it names none.
pub fn steps_named(root: &Path, numbers: &[&str]) -> Vec<String> {
    if numbers.is_empty() {
        step_folders(root)
            .iter()
            .map(|(n, _)| n.to_string())
            .collect()
    } else {
        numbers.iter().map(|n| (*n).to_owned()).collect()
    }
}

/// The first marked function of the step whose body is a `todo!()`.
pub fn blank_function(step: &Step) -> Result<Option<String>, String> {
    Ok(track::track(&step.dir(), step.number)
        .map_err(|err| format!("{}/{err}", step.folder))?
        .into_iter()
        .find(|marked| {
            track::is_unfinished(
                marked,
                &step.read(&marked.file)[marked.body.clone()],
            )
        })
        .map(|marked| marked.function))
}
