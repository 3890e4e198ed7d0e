//! `cargo xtask verify [N...]`, for CI: every track proved on a copy of
//! the repository, as rustlings proves its exercises.

use std::fs;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use workshop::commands::check::check;
use workshop::commands::reset::reset;
use workshop::commands::start::start;
use workshop::commands::{Words, indent, write};
use workshop::runner::{self, Progress};
use workshop::sources_copy::{self, Times};
use workshop::step::{Step, find_root};
use workshop::track::{self, Marked};

use crate::freeze::{as_it_is, blank_function, steps_named};

pub const HELP: &str = "usage: cargo xtask verify [N...]\n\n\
             For CI: on a copy of the repository, starts each step (or those \
             named),\nchecks that check names each blank function in turn and \
             that its test fails,\nwrites it back, and that reset restores the \
             step byte for byte. Refuses a\nstep you have started here.";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &[], HELP)?;
    runner::end_everything_on_interrupt();
    runner::adopt_orphans();
    verify(&find_root(here)?, &words.plain)
}

/// For each step: `start` it, then for each marked function in order,
/// `check` must fail on that function's test and name it; write the
/// function back (the authors' version) and go on. With all written back,
/// `check` must pass, and `reset` must put the step back byte for byte.
/// It works on a copy under `target/workshop-verify`, built there too, so
/// an interrupted run leaves the checkout alone and nothing outside
/// `target/`; the next run replaces the copy. The authors' version is the
/// checkout's files as they are, frozen or not. A step started in the
/// checkout (a blank function) is refused: its files are not the authors'
/// to prove.
fn verify(root: &Path, numbers: &[&str]) -> Result<ExitCode, String> {
    let wanted = steps_named(root, numbers);
    for n in &wanted {
        if blank_function(&as_it_is(root, root, n)?)?.is_some() {
            return Err(format!(
                "step {n} is started here: verify proves the authors' tracks, so \
                 put it back first (`cargo workshop reset {n}`, with --force if \
                 you want to lose what you wrote)"
            ));
        }
    }
    let target = root.join("target").join("workshop-verify");
    let copy = target.join("copy");
    let _ = fs::remove_dir_all(&copy);
    sources_copy::sync_tree(root, &copy, Times::Kept)?;
    let began = Instant::now();
    let mut problems = Vec::new();
    for n in &wanted {
        let step_began = Instant::now();
        let outcome = as_it_is(&copy, root, n).and_then(|step| {
            let original = as_it_is(root, root, n)?;
            verify_step(&step, &original, &target)
        });
        let seconds = step_began.elapsed().as_secs();
        match outcome {
            Ok(count) => {
                println!(
                    "step {n}: track of {count} functions proved ({seconds} s)"
                );
            }
            Err(problem) => {
                println!("step {n}: FAILED ({seconds} s)\n{}", indent(&problem));
                problems.push(n.clone());
            }
        }
    }
    let _ = fs::remove_dir_all(&copy);
    println!(
        "verify: {} of {} tracks proved in {} s",
        wanted.len() - problems.len(),
        wanted.len(),
        began.elapsed().as_secs()
    );
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn verify_step(
    step: &Step,
    original: &Step,
    target: &Path,
) -> Result<usize, String> {
    let n = step.number;
    let authors = step.track()?;
    start(step, false)?;
    if start(step, false).is_ok() {
        return Err("a second `start` was not refused".to_owned());
    }
    for expected in &authors {
        let checked = check(step, Some(target), &Progress::new(true))?;
        if checked.passed || checked.next.as_deref() != Some(&expected.function) {
            return Err(format!(
                "with `{}` blank, check should name it, but said:\n{}",
                expected.function, checked.report
            ));
        }
        if !checked.failed.contains(&expected.test) {
            return Err(format!(
                "with `{}` blank, its test {} should fail but did not; failed: {:?}",
                expected.function, expected.test, checked.failed
            ));
        }
        if !checked.at_its_todo {
            return Err(format!(
                "with `{}` blank, no test stops at its `todo!()`: a later \
                 function runs first, so put that one earlier in the track:\n{}",
                expected.function, checked.report
            ));
        }
        write_back(step, expected)?;
    }
    let checked = check(step, Some(target), &Progress::new(true))?;
    if !checked.passed {
        return Err(format!(
            "with every function written, check fails:\n{}",
            checked.report
        ));
    }
    // A participant's own version of the first function, the same code
    // with a note in it: reset must not throw it away unasked.
    let first = &authors[0];
    let text = step.read(&first.file);
    let mut written = text.clone();
    written.insert_str(first.body.start + 1, " // as I wrote it\n");
    write(&step.dir().join(&first.file), &written)?;
    match reset(step, &[], false) {
        Err(refusal) if refusal.contains(&format!("`{}`", first.function)) => {}
        other => {
            return Err(format!(
                "reset without --force should refuse to throw away a written \
                 `{}`, but said: {other:?}",
                first.function
            ));
        }
    }
    reset(step, &[], true)?;
    let (now, committed) = (all_files(&step.dir()), all_files(&original.dir()));
    if now != committed {
        let differ: Vec<&str> = now
            .iter()
            .chain(&committed)
            .filter(|file| !(now.contains(file) && committed.contains(file)))
            .map(|(name, _)| name.as_str())
            .collect();
        return Err(format!(
            "after reset, step {n} is not as the authors wrote it: {differ:?}"
        ));
    }
    Ok(authors.len())
}

/// Puts the authors' body of `expected` back in place of its `todo!()`.
fn write_back(step: &Step, expected: &Marked) -> Result<(), String> {
    let original = step.original(&expected.file)?;
    let now = step.read(&expected.file);
    let current = track::markers_in(&expected.file, &now)?;
    let blank = current
        .iter()
        .find(|m| m.order == expected.order)
        .ok_or_else(|| format!("`{}` lost its marker", expected.function))?;
    let mut text = now.clone();
    text.replace_range(blank.body.clone(), &original[expected.body.clone()]);
    write(&step.dir().join(&expected.file), &text)
}

/// Every file under `dir` (no `target`), with its bytes.
fn all_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = workshop::files_below(dir)
        .into_iter()
        .filter(|file| !file.starts_with("target/"))
        .map(|file| {
            let bytes = fs::read(dir.join(&file)).unwrap_or_default();
            (file, bytes)
        })
        .collect();
    files.sort();
    files
}
