//! `cargo workshop freeze [N...]`, for the authors: stores the steps' files
//! as they are in `tests/authors/`, the authors' version that every other
//! command and the book compare with.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use crate::authors;
use crate::commands::{Words, write};
use crate::step::{Authors, Step, find_root, step_folders};
use crate::track;

pub const HELP: &str = "usage: cargo workshop freeze [N...]\n\n\
             For the workshop's authors: stores the steps' files as they are \
             (or those of\nthe steps named) in tests/authors/, as the authors' \
             version that start,\ncheck, reset, status and the book compare \
             with. Run it after changing a\nstep, and commit tests/authors/. \
             Refuses a step with a blank function.";

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
    let mut steps = Vec::new();
    for n in &wanted {
        let step = Step::find_with(root, n, &Authors::Files(root.to_path_buf()))?;
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
        for stale in crate::files_below(&folder)
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
