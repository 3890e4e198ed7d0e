//! `cargo workshop`: the build-it-yourself track of each step.
//!
//! `start N` blanks the functions step N's authors marked with `// BUILD`
//! (see `workshop_tests::track`), `check N` runs the step's tests and names
//! the one function to write next, `reset N` puts the step back byte for
//! byte, `status` shows where each step stands, and `verify` proves every
//! track on a copy of the repository, for CI.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use workshop_tests::runner::{self, Progress};
use workshop_tests::track::{self, Marked};

use check::check;
use step::{Authors, Stage, Step, find_root, step_folders};

mod check;
mod probe;
mod seed;
mod step;

const USAGE: &str = "\
usage: cargo workshop <command>

  start N [--force]  blank the functions of step N you will write
  check N            run step N's tests: what to write next, or that it passes
  reset N [--force]  put step N back as committed
  status             which steps are started, which are done
  verify [N...]      prove the tracks (for CI): start, check each function, reset
  help [COMMAND]     this, or what COMMAND does

Run it anywhere inside your clone of the workshop.";

/// What `help COMMAND` and `COMMAND --help` print.
fn command_help(command: &str) -> Option<&'static str> {
    Some(match command {
        "start" => {
            "usage: cargo workshop start N [--force]\n\n\
             Blanks the functions of step N that the chapter's \"Build it\" \
             section asks you\nto write: each body becomes a todo!() that \
             says where to read. It never\nblanks a function you wrote (one \
             that is neither the authors' nor blank)\nunless you add --force; \
             it names them instead."
        }
        "check" => {
            "usage: cargo workshop check N\n\n\
             Builds and runs step N's tests, each in bounded time and memory, \
             and says\nwhich function to write or fix next, with the test that \
             shows it; or that\nthe step passes. Honours CARGO_TARGET_DIR."
        }
        "reset" => {
            "usage: cargo workshop reset N [--force]\n\n\
             Puts step N's marked files back as committed, byte for byte. If \
             you wrote\nsomething there, it names it and changes nothing unless \
             you add --force."
        }
        "status" => {
            "usage: cargo workshop status\n\n\
             For each step: not started, started (how many functions written, \
             which next),\nor done (check passed on the files as they are)."
        }
        "verify" => {
            "usage: cargo workshop verify [N...]\n\n\
             For CI: on a copy of the repository, starts each step (or those \
             named),\nchecks that check names each blank function in turn and \
             that its test fails,\nwrites it back, and that reset restores the \
             step byte for byte. Refuses a\nstep you have started here."
        }
        _ => return None,
    })
}

fn main() -> ExitCode {
    exit_quietly_when_stdout_closes();
    let args: Vec<String> = env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    if let Some(help) = help_asked(&words) {
        println!("{help}");
        return Ok(ExitCode::SUCCESS);
    }
    let here =
        env::current_dir().map_err(|err| format!("no current folder: {err}"))?;
    let force = words.contains(&"--force");
    let plain: Vec<&str> =
        words.iter().copied().filter(|w| *w != "--force").collect();
    match (plain.as_slice(), force) {
        (["start", n], _) => {
            println!("{}", start(&Step::find(&find_root(&here)?, n)?, force)?);
            Ok(ExitCode::SUCCESS)
        }
        (["check", n], false) => {
            let step = Step::find(&find_root(&here)?, n)?;
            runner::end_everything_on_interrupt();
            runner::adopt_orphans();
            let checked = check(&step, None, &Progress::new(false))?;
            println!("{}", checked.report);
            Ok(if checked.passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        (["reset", n], _) => {
            let step = Step::find(&find_root(&here)?, n)?;
            println!("{}", reset(&step, force)?);
            Ok(ExitCode::SUCCESS)
        }
        (["status"], false) => {
            status(&find_root(&here)?);
            Ok(ExitCode::SUCCESS)
        }
        (["verify", numbers @ ..], false) => {
            runner::end_everything_on_interrupt();
            runner::adopt_orphans();
            verify(&find_root(&here)?, numbers)
        }
        ([], _) => Err(format!("which command?\n\n{USAGE}")),
        ([command @ ("start" | "check" | "reset")], _) => Err(format!(
            "`cargo workshop {command}` needs a step number, 1 to 8\n\n{}",
            command_help(command).unwrap_or(USAGE)
        )),
        _ => Err(format!("unknown command `{}`\n\n{USAGE}", words.join(" "))),
    }
}

/// The help asked for, if any: `--help`, `-h` or `help` alone, or with a
/// command (`help start`, `start --help`).
fn help_asked(words: &[&str]) -> Option<&'static str> {
    let is_help = |word: &&str| matches!(*word, "--help" | "-h" | "help");
    if !words.iter().any(is_help) {
        return None;
    }
    let command = words
        .iter()
        .find(|word| !is_help(word) && !word.starts_with('-'));
    Some(command.and_then(|c| command_help(c)).unwrap_or(USAGE))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .map_err(|err| format!("{}: {err}", parent.display()))?;
    }
    fs::write(path, text).map_err(|err| format!("{}: {err}", path.display()))
}

// ---------------------------------------------------------------------------
// start, reset, status

/// Blanks the step's marked functions that are the authors'; says what to
/// write. A function you wrote is blanked only with `force`.
fn start(step: &Step, force: bool) -> Result<String, String> {
    let n = step.number;
    let stages = step.stages()?;
    let written = named(&stages, Stage::Written);
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
        .filter(|(_, stage)| {
            *stage == Stage::Authors || (force && *stage == Stage::Written)
        })
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
        let text = track::blanked(&step.read(&file), &in_file);
        write(&step.dir().join(&file), &text)?;
    }
    let _ = fs::remove_dir_all(step.state()); // an old "passed" no longer holds
    // Lines as they are now: a blanked body is shorter than the original.
    let marked = step.track()?;
    let mut out = format!(
        "Step {n} started: {} functions are yours to write, in this order:\n",
        marked.len()
    );
    for marked in &marked {
        let _ = writeln!(
            out,
            "  {}. {:<36} {}/{}:{}",
            marked.order, marked.function, step.folder, marked.file, marked.line
        );
    }
    let _ = write!(
        out,
        "\nChapter {n}'s section \"Build it\" walks you through them.\n\
         `cargo workshop check {n}` says which to write next and which test \
         shows it;\n`cargo workshop reset {n}` puts the step back as committed."
    );
    Ok(out)
}

/// The functions at `stage`, as the messages name them.
fn named(stages: &[(Marked, Stage)], stage: Stage) -> Vec<String> {
    stages
        .iter()
        .filter(|(_, s)| *s == stage)
        .map(|(marked, _)| format!("`{}`", marked.function))
        .collect()
}

/// Puts the step's marked files back as committed; with work in them, only
/// if `force`. Says so only once every file is byte for byte the authors'.
fn reset(step: &Step, force: bool) -> Result<String, String> {
    let n = step.number;
    let files = Step::track_files(&step.authors_track()?);
    let mut differ = Vec::new();
    for file in &files {
        let (original, now) = (step.original(file)?, step.read(file));
        if now != original {
            differ.push((file, changes(file, &original, &now)));
        }
    }
    if differ.is_empty() {
        let _ = fs::remove_dir_all(step.state());
        return Ok(format!(
            "Step {n} is as committed already: nothing to reset."
        ));
    }
    let work: Vec<String> = differ
        .iter()
        .filter(|(_, change)| change.is_work())
        .map(|(file, change)| {
            format!("{}/{file}: {}", step.folder, change.describe())
        })
        .collect();
    if !work.is_empty() && !force {
        return Err(format!(
            "step {n} has work in it that reset would throw away:\n  {}\n\
             Keep a copy if you want it (outside the workspace's folders, or \
             `git stash`), then run `cargo workshop reset {n} --force`",
            work.join("\n  ")
        ));
    }
    for (file, _) in &differ {
        write(&step.dir().join(file), &step.original(file)?)?;
    }
    let still: Vec<String> = files
        .iter()
        .filter(|file| step.original(file).ok() != Some(step.read(file)))
        .map(|file| format!("{}/{file}", step.folder))
        .collect();
    if !still.is_empty() {
        return Err(format!(
            "step {n} is not back as committed: {} still differ{}. \
             `git diff {}` shows how; `git checkout -- {}` restores it.",
            still.join(", "),
            if still.len() == 1 { "s" } else { "" },
            step.folder,
            step.folder
        ));
    }
    let _ = fs::remove_dir_all(step.state());
    Ok(format!("Step {n} is back as committed."))
}

/// How a marked file differs from the authors' version.
struct Change {
    /// The marked functions that are neither the authors' nor blank.
    written: Vec<String>,
    /// Whether lines outside the marked functions changed too.
    other_lines: bool,
}

impl Change {
    /// Whether reset would throw away something someone wrote: blanks
    /// alone are what `start` made.
    fn is_work(&self) -> bool {
        !self.written.is_empty() || self.other_lines
    }

    fn describe(&self) -> String {
        match (self.written.is_empty(), self.other_lines) {
            (false, false) => format!("your {}", self.written.join(", ")),
            (false, true) => {
                format!("your {} and other lines", self.written.join(", "))
            }
            _ => "lines outside the marked functions".to_owned(),
        }
    }
}

/// How `after`, a marked file, differs from the authors' `before`.
fn changes(file: &str, before: &str, after: &str) -> Change {
    let (Ok(old), Ok(new)) = (
        track::markers_in(file, before),
        track::markers_in(file, after),
    ) else {
        return Change {
            written: Vec::new(),
            other_lines: true,
        };
    };
    let written: Vec<String> = new
        .iter()
        .filter(|n| {
            let body = &after[n.body.clone()];
            let theirs = old.iter().find(|o| o.function == n.function);
            !track::is_blank(body)
                && theirs.is_none_or(|o| before[o.body.clone()] != *body)
        })
        .map(|n| format!("`{}`", n.function))
        .collect();
    let outside = |text: &str, marks: &[Marked]| {
        let mut rest = text.to_owned();
        for mark in marks.iter().rev() {
            rest.replace_range(mark.body.clone(), "");
        }
        rest
    };
    Change {
        written,
        other_lines: outside(before, &old) != outside(after, &new),
    }
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

fn step_status(step: &Step) -> Result<String, String> {
    let stages = step.stages()?;
    let total = stages.len();
    let blank: Vec<&Marked> = stages
        .iter()
        .filter(|(_, stage)| *stage == Stage::Blank)
        .map(|(marked, _)| marked)
        .collect();
    Ok(
        if stages.iter().all(|(_, stage)| *stage == Stage::Authors) {
            "not started".to_owned()
        } else if passed_fingerprint(step).is_some_and(|p| p == fingerprint(step)) {
            "done: check passes".to_owned()
        } else if let Some(next) = blank.first() {
            format!(
                "started: {} of {total} written, next `{}`",
                total - blank.len(),
                next.function
            )
        } else {
            format!("started: all {total} written, run check")
        },
    )
}

/// The step's marked files as they are now, to tell whether `check` passed
/// on exactly these.
fn fingerprint(step: &Step) -> String {
    let files = step
        .authors_track()
        .map(|t| Step::track_files(&t))
        .unwrap_or_default();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325; // FNV-1a
    for file in files {
        for byte in step.read(&file).bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

fn passed_fingerprint(step: &Step) -> Option<String> {
    fs::read_to_string(step.state().join("passed")).ok()
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------
// verify: every track, proved on a copy of the repository.

/// For each step: `start` it, then for each marked function in order,
/// `check` must fail on that function's test and name it; write the
/// function back (the authors' version) and go on. With all written back,
/// `check` must pass, and `reset` must put the step back byte for byte.
/// It works on a copy under `target/workshop-verify`, built there too, so
/// an interrupted run leaves the checkout alone and nothing outside
/// `target/`; the next run replaces the copy. The authors' version is the
/// checkout's files as they are, committed or not. A step started in the
/// checkout is refused: its files are not the authors' to prove.
fn verify(root: &Path, numbers: &[&str]) -> Result<ExitCode, String> {
    let wanted: Vec<String> = if numbers.is_empty() {
        step_folders(root)
            .iter()
            .map(|(n, _)| n.to_string())
            .collect()
    } else {
        numbers.iter().map(|n| (*n).to_owned()).collect()
    };
    for n in &wanted {
        if Step::find(root, n)?.is_started() {
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
    copy_tree(root, &copy)?;
    let began = Instant::now();
    let mut problems = Vec::new();
    for n in &wanted {
        let step_began = Instant::now();
        let outcome = Step::find_with(&copy, n, Authors::Files(root.to_path_buf()))
            .and_then(|step| {
                let original = Step::find(root, n)?;
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
    match reset(step, false) {
        Err(refusal) if refusal.contains(&format!("`{}`", first.function)) => {}
        other => {
            return Err(format!(
                "reset without --force should refuse to throw away a written \
                 `{}`, but said: {other:?}",
                first.function
            ));
        }
    }
    reset(step, true)?;
    let (now, committed) = (all_files(&step.dir()), all_files(&original.dir()));
    if now != committed {
        let differ: Vec<&str> = now
            .iter()
            .chain(&committed)
            .filter(|file| !(now.contains(file) && committed.contains(file)))
            .map(|(name, _)| name.as_str())
            .collect();
        return Err(format!(
            "after reset, step {n} is not as committed: {differ:?}"
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
    let mut files: Vec<(String, Vec<u8>)> = workshop_tests::files_below(dir)
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

/// Copies the repository's sources, without build output or git's folder.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|err| format!("{}: {err}", to.display()))?;
    for entry in fs::read_dir(from)
        .map_err(|err| format!("{err}"))?
        .flatten()
    {
        let name = entry.file_name();
        let skip = [".git", "target", ".workshop", "book"];
        if skip.iter().any(|s| name == *s) {
            continue;
        }
        let path = entry.path();
        let dest = to.join(&name);
        if path.is_dir() {
            copy_tree(&path, &dest)?;
        } else {
            fs::copy(&path, &dest)
                .map_err(|err| format!("{}: {err}", path.display()))?;
        }
    }
    Ok(())
}

/// Ends the process quietly once printing to stdout fails, as the steps'
/// demos do (`cargo workshop status | head -n 1`): Rust ignores SIGPIPE, so
/// `println!` would panic with a backtrace instead. Every command prints
/// only after its work is done, so nothing is left half written.
fn exit_quietly_when_stdout_closes() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload().downcast_ref::<String>();
        if message.is_some_and(|text| text.starts_with("failed printing to stdout"))
        {
            std::process::exit(141); // 128 + SIGPIPE, as a shell reports it
        }
        default_hook(info);
    }));
}
