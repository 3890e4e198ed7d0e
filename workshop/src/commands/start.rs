//! `cargo workshop start N`: blanks the functions of step N's track, each
//! body a `todo!()` that says where to read; never one the participant
//! wrote, unless told `--force`.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use crate::commands::{Words, check, times, write_in_step};
use crate::step::{Stage, Step, find_root};
use crate::track::{self, Marked};

pub const HELP: &str = "usage: cargo workshop start N [--force]\n\n\
             Blanks the functions of step N that the chapter's \"Build it\" \
             section asks you\nto write: each body becomes a todo!() that \
             says where to read. It never\nblanks a function you wrote (one \
             that is neither the authors' nor blank)\nunless you add --force; \
             it names them instead.\nAt a terminal, it then starts in the \
             background the build that the step's\nfirst check needs (its log \
             in target/workshop-ahead/; WORKSHOP_BUILD_AHEAD=0\nturns that \
             off, =1 on).";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &["--force"], HELP)?;
    let n = words.only_step("start", HELP)?;
    let step = Step::find(&find_root(here)?, n)?;
    println!("{}", start(&step, words.has("--force"))?);
    times::started(&step.root, step.number);
    if let Some(said) = check::build_ahead::start_in_background(&step) {
        println!("\n{said}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Blanks the step's marked functions that are the authors' (and, with
/// `force`, those you wrote); says what to write.
pub fn start(step: &Step, force: bool) -> Result<String, String> {
    let n = step.number;
    let stages = step.stages()?;
    let written: Vec<String> = stages
        .iter()
        .filter(|(_, stage)| stage.is_work())
        .map(|(marked, _)| format!("`{}`", marked.function))
        .collect();
    if !written.is_empty() && !force {
        return Err(format!(
            "step {n} has functions you wrote: {}. `start` would blank them. \
             `cargo workshop check {n}` carries on from where you are; \
             `cargo workshop start {n} --force` blanks them all the same.",
            written.join(", ")
        ));
    }
    let to_blank: Vec<&Marked> = stages
        .iter()
        .filter(|(_, stage)| *stage == Stage::Authors || (force && stage.is_work()))
        .map(|(marked, _)| marked)
        .collect();
    if to_blank.is_empty() {
        return Err(format!(
            "step {n} is started already. See what to write next with \
             `cargo workshop check {n}`, or start over with `cargo workshop \
             reset {n}` and then `start {n}`"
        ));
    }
    for file in Step::track_files(&step.track()?) {
        let in_file: Vec<&Marked> = to_blank
            .iter()
            .copied()
            .filter(|m| m.file == file)
            .collect();
        let text = track::blanked(&step.read_text(&file)?, &in_file);
        write_in_step(step, &file, &text)?;
    }
    let _ = fs::remove_dir_all(step.state()); // an old "passed" no longer holds
    let marked = step.track()?; // lines as they are now, bodies blanked
    let mut out = format!(
        "Step {n} started: {} functions are yours to write, in this order:\n",
        marked.len()
    );
    for marked in &marked {
        let _ = writeln!(out, "{}", listed(step, marked));
    }
    let _ = write!(
        out,
        "\nChapter {n}'s section \"Build it\" walks you through them.\n\
         `cargo workshop watch` checks again on every save and says which to \
         write next\nand which test shows it (`cargo workshop check {n}`: once);\n\
         `cargo workshop diff {n}` shows where yours differ from the authors'."
    );
    Ok(out)
}

/// One function of the list `start` prints, at its `fn` line.
fn listed(step: &Step, marked: &Marked) -> String {
    format!(
        "  {}. {:<36} {}/{}:{}",
        marked.order,
        marked.function,
        step.folder,
        marked.file,
        marked.fn_line(&step.read(&marked.file))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `start` and `check` name a function by the same line, its `fn`
    /// line: a participant told "line 70" by one and "line 66" by the
    /// other (the marker's) wonders which is meant.
    #[test]
    fn start_lists_each_function_at_its_fn_line() {
        let step = Step::find(&crate::workspace_root(), "3").expect("step 3");
        for marked in step.track().expect("its track") {
            let shown = listed(&step, &marked);
            let line: usize = shown
                .rsplit(':')
                .next()
                .and_then(|line| line.parse().ok())
                .expect("a line number");
            let text = step.read(&marked.file);
            let name = marked.function.rsplit("::").next().unwrap_or_default();
            assert!(
                text.lines()
                    .nth(line - 1)
                    .is_some_and(|at| at.contains(&format!("fn {name}"))),
                "{shown}"
            );
        }
    }
}
