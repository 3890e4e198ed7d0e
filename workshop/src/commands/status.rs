//! `cargo workshop status`: where each step stands, a line each.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use crate::authors;
use crate::changes;
use crate::commands::Words;
use crate::step::{Stage, Step, find_root, step_folders};
use crate::track::Marked;

pub const HELP: &str = "usage: cargo workshop status\n\n\
             For each step: not started, started (how many functions written, \
             which next),\nor done (check passed, and nothing in the step \
             folder changed since), and\nwhich files differ from the authors' \
             outside the functions you write.";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    Words::parse(args, &[], HELP)?.none("status", HELP)?;
    status(&find_root(here)?);
    Ok(ExitCode::SUCCESS)
}

/// Every step, one line each; a step whose markers are damaged says what to
/// mend, and the others are shown all the same.
fn status(root: &Path) {
    for (number, folder) in step_folders(root) {
        let line = Step::find(root, &number.to_string())
            .and_then(|step| step_status(&step))
            .unwrap_or_else(|problem| {
                let first = problem.lines().next().unwrap_or_default().to_owned();
                format!("cannot tell: {first} (`cargo workshop check {number}` says more)")
            });
        println!("step {number}  {folder:<20} {line}");
    }
}

pub fn step_status(step: &Step) -> Result<String, String> {
    let stages = step.stages()?;
    let total = stages.len();
    let unfinished: Vec<&Marked> = stages
        .iter()
        .filter(|(_, stage)| stage.is_unfinished())
        .map(|(marked, _)| marked)
        .collect();
    let in_progress = stages
        .iter()
        .filter(|(_, stage)| *stage == Stage::InProgress)
        .count();
    let n = step.number;
    let outside = match changes::outside_track(step).len() {
        0 => String::new(),
        1 => {
            format!("; 1 file differs outside the track (`cargo workshop diff {n}`)")
        }
        k => format!(
            "; {k} files differ outside the track (`cargo workshop diff {n}`)"
        ),
    };
    let stage = if stages.iter().all(|(_, stage)| *stage == Stage::Authors) {
        "not started".to_owned()
    } else if passes_as_is(step) {
        "done: check passes".to_owned()
    } else if let Some(next) = unfinished.first() {
        let in_progress = match in_progress {
            0 => String::new(),
            k => format!(", {k} in progress"),
        };
        format!(
            "started: {} of {total} written{in_progress}, next `{}`",
            total - unfinished.len(),
            next.function
        )
    } else {
        format!("started: all {total} written, run check")
    };
    Ok(format!("{stage}{outside}"))
}

/// The whole step folder as it is now, every file's name and bytes, to
/// tell whether `check` passed on exactly these: a change anywhere in the
/// step (an exercise's edit to `main.rs`, a file deleted or added) undoes
/// "done".
pub fn fingerprint(step: &Step) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325; // FNV-1a
    for file in authors::step_files(&step.dir()) {
        let bytes = fs::read(step.dir().join(&file)).unwrap_or_default();
        for byte in file.bytes().chain([0]).chain(bytes) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// Whether `check` passed on the step folder exactly as it is now.
pub fn passes_as_is(step: &Step) -> bool {
    passed_fingerprint(step).is_some_and(|p| p == fingerprint(step))
}

fn passed_fingerprint(step: &Step) -> Option<String> {
    fs::read_to_string(step.state().join("passed")).ok()
}
