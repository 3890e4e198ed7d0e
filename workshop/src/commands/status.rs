//! `cargo workshop status`: where each step stands, a line each.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use crate::authors;
use crate::changes;
use crate::commands::Words;
use crate::step::{Stage, Step, find_root, step_folders};

pub const HELP: &str = "usage: cargo workshop status\n\n\
             For each step: not started, started (how many functions written, \
             which next),\nor done (check passed, and nothing in the step \
             folder changed since), and\nwhich files differ from the authors' \
             outside the functions you write.";

/// Every step, one line each; a step whose markers are damaged says what to
/// mend, and the others are shown all the same.
pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    Words::parse(args, &[], HELP)?.none("status", HELP)?;
    let root = find_root(here)?;
    for (number, folder) in step_folders(&root) {
        let line = Step::find(&root, &number.to_string())
            .and_then(|step| step_status(&step))
            .unwrap_or_else(|problem| {
                let first = problem.lines().next().unwrap_or_default().to_owned();
                format!("cannot tell: {first} (`cargo workshop check {number}` says more)")
            });
        println!("step {number}  {folder:<20} {line}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn step_status(step: &Step) -> Result<String, String> {
    let stages = step.stages()?;
    let (total, n) = (stages.len(), step.number);
    let count = |wanted: fn(&Stage) -> bool| {
        stages.iter().filter(|(_, stage)| wanted(stage)).count()
    };
    let next = stages.iter().find(|(_, stage)| stage.is_unfinished());
    let outside = match changes::changes(step)
        .iter()
        .filter(|change| change.is_outside_track())
        .count()
    {
        0 => String::new(),
        1 => {
            format!("; 1 file differs outside the track (`cargo workshop diff {n}`)")
        }
        k => format!(
            "; {k} files differ outside the track (`cargo workshop diff {n}`)"
        ),
    };
    let stage = if count(|stage| *stage == Stage::Authors) == total {
        "not started".to_owned()
    } else if passes_as_is(step) {
        "done: check passes".to_owned()
    } else if let Some((next, _)) = next {
        let in_progress = match count(|stage| *stage == Stage::InProgress) {
            0 => String::new(),
            k => format!(", {k} in progress"),
        };
        format!(
            "started: {} of {total} written{in_progress}, next `{}`",
            total - count(|stage| stage.is_unfinished()),
            next.function
        )
    } else {
        format!("started: all {total} written, run check")
    };
    Ok(format!("{stage}{outside}"))
}

/// A hash of every file's name and bytes in the step folder: "done" holds
/// only while `check` passed on exactly these files.
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
    fs::read_to_string(step.state().join("passed"))
        .is_ok_and(|passed| passed == fingerprint(step))
}
