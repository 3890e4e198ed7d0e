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
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use workshop_tests::runner::Progress;
use workshop_tests::track::{self, Marked};

use check::check;

mod check;
mod probe;

const USAGE: &str = "\
usage: cargo workshop <command>

  start N          blank the functions of step N you will write
  check N          run step N's tests: what to write next, or that it passes
  reset N [--force] put step N back as it was before `start`
  status           which steps are started, which are done
  verify [N...]    prove the tracks (for CI): start, check each function, reset";

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
    let here =
        env::current_dir().map_err(|err| format!("no current folder: {err}"))?;
    match words.as_slice() {
        ["start", n] => {
            println!("{}", start(&Step::find(&find_root(&here)?, n)?)?);
            Ok(ExitCode::SUCCESS)
        }
        ["check", n] => {
            let step = Step::find(&find_root(&here)?, n)?;
            let checked = check(&step, None, &Progress::new(false))?;
            println!("{}", checked.report);
            Ok(if checked.passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        ["reset", n] | ["reset", n, "--force"] | ["reset", "--force", n] => {
            let force = words.contains(&"--force");
            let step = Step::find(&find_root(&here)?, n)?;
            println!("{}", reset(&step, force)?);
            Ok(ExitCode::SUCCESS)
        }
        ["status"] => status(&find_root(&here)?).map(|()| ExitCode::SUCCESS),
        ["verify", numbers @ ..] => verify(&find_root(&here)?, numbers),
        [] => Err(format!("which command?\n\n{USAGE}")),
        [command @ ("start" | "check" | "reset")] => Err(format!(
            "`cargo workshop {command}` needs a step number, 1 to 8\n\n{USAGE}"
        )),
        _ => Err(format!("unknown command `{}`\n\n{USAGE}", words.join(" "))),
    }
}

// ---------------------------------------------------------------------------
// Where things are: the repository, a step, what `start` kept.

/// The workshop's root: the nearest folder, from `from` upward, whose
/// `Cargo.toml` is a workspace with the `workshop-tests` package in `tests/`.
fn find_root(from: &Path) -> Result<PathBuf, String> {
    for dir in from.ancestors() {
        let Ok(manifest) = fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        if !manifest.contains("[workspace]") {
            continue;
        }
        let tests = fs::read_to_string(dir.join("tests").join("Cargo.toml"))
            .unwrap_or_default();
        if tests.contains("name = \"workshop-tests\"") {
            return Ok(dir.to_path_buf());
        }
        return Err(format!(
            "{} is a Cargo workspace, but not the workshop's (it has no \
             tests/ package `workshop-tests`); run this inside your clone \
             of the workshop",
            dir.display()
        ));
    }
    Err(format!(
        "not inside the workshop's repository: no workspace Cargo.toml in {} \
         or above it; `cd` into your clone of the workshop first",
        from.display()
    ))
}

/// One step of the workshop, as `cargo workshop` sees it.
struct Step {
    root: PathBuf,
    number: u32,
    /// `step03-sleep`
    folder: String,
}

impl Step {
    /// Step `n` of the workshop at `root`, checked to be the workshop's own.
    fn find(root: &Path, n: &str) -> Result<Step, String> {
        let folders = step_folders(root);
        let range = match (folders.first(), folders.last()) {
            (Some(first), Some(last)) => format!("{} to {}", first.0, last.0),
            _ => "none".to_owned(),
        };
        let number: u32 = n.trim_start_matches("step").parse().map_err(|_| {
            format!("`{n}` is not a step number: the steps are {range}")
        })?;
        let matching: Vec<_> =
            folders.iter().filter(|(k, _)| *k == number).collect();
        let folder = match matching.as_slice() {
            [] => {
                return Err(format!(
                    "there is no step {number}: the steps are {range}"
                ));
            }
            [(_, folder)] => folder.clone(),
            _ => return Err(format!("more than one folder is step {number}")),
        };
        let manifest = fs::read_to_string(root.join(&folder).join("Cargo.toml"))
            .unwrap_or_default();
        let package = format!("name = \"step{number:02}\"");
        if !manifest.contains(&package) {
            return Err(format!(
                "{folder}/ is not the workshop's step {number}: its Cargo.toml \
                 does not say `{package}`"
            ));
        }
        Ok(Step {
            root: root.to_path_buf(),
            number,
            folder,
        })
    }

    fn dir(&self) -> PathBuf {
        self.root.join(&self.folder)
    }

    /// Where `start` keeps the step's files: as they were (`original`) and
    /// as `start` left them (`started`). Ignored by git.
    fn state(&self) -> PathBuf {
        self.root
            .join(".workshop")
            .join(format!("step{:02}", self.number))
    }

    fn is_started(&self) -> bool {
        self.state().join("started").is_dir()
    }

    fn track(&self) -> Result<Vec<Marked>, String> {
        let marked = track::track(&self.dir(), self.number)
            .map_err(|err| format!("{}/{err}", self.folder))?;
        if marked.is_empty() {
            return Err(format!(
                "{}/ has no `// BUILD` markers: no track",
                self.folder
            ));
        }
        Ok(marked)
    }

    /// The files holding marked functions, relative to the step folder.
    fn track_files(marked: &[Marked]) -> Vec<String> {
        let mut files: Vec<String> = marked.iter().map(|m| m.file.clone()).collect();
        files.sort();
        files.dedup();
        files
    }

    fn read(&self, file: &str) -> String {
        fs::read_to_string(self.dir().join(file)).unwrap_or_default()
    }

    fn kept(&self, which: &str, file: &str) -> Result<String, String> {
        let path = self.state().join(which).join(file);
        fs::read_to_string(&path).map_err(|err| format!("{}: {err}", path.display()))
    }
}

/// `(number, folder)` of every `stepNN-name` folder at `root`, in order.
fn step_folders(root: &Path) -> Vec<(u32, String)> {
    let mut found: Vec<(u32, String)> = fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|entry| entry.file_name().into_string().ok())
                .filter_map(|name| {
                    let digits = name.strip_prefix("step")?.get(..2)?;
                    name[6..].starts_with('-').then_some(())?;
                    Some((digits.parse().ok()?, name))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
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

/// Blanks the step's marked functions, keeping what was there; says what
/// to write.
fn start(step: &Step) -> Result<String, String> {
    let n = step.number;
    if step.is_started() {
        return Err(format!(
            "step {n} is started already. See what to write next with \
             `cargo workshop check {n}`, or start over with `cargo workshop \
             reset {n}` and then `start {n}`"
        ));
    }
    let marked = step.track()?;
    let files = Step::track_files(&marked);
    // Keep the originals before touching anything, so reset always can.
    for file in &files {
        write(&step.state().join("original").join(file), &step.read(file))?;
    }
    for file in &files {
        let in_file: Vec<&Marked> =
            marked.iter().filter(|m| &m.file == file).collect();
        let text = track::blanked(&step.read(file), &in_file);
        write(&step.state().join("started").join(file), &text)?;
        write(&step.dir().join(file), &text)?;
    }
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
         shows it;\n`cargo workshop reset {n}` puts the step back as it was."
    );
    Ok(out)
}

/// Puts the step back as `start` found it; with work in it, only if `force`.
fn reset(step: &Step, force: bool) -> Result<String, String> {
    let n = step.number;
    if !step.is_started() {
        return Err(format!(
            "step {n} is not started: there is nothing to reset"
        ));
    }
    let files = kept_files(&step.state().join("original"));
    let mut lost = Vec::new();
    for file in &files {
        let started = step.kept("started", file)?;
        let now = step.read(file);
        if now != started {
            lost.push(format!(
                "{}/{file}: {}",
                step.folder,
                changes(file, &started, &now)
            ));
        }
    }
    if !lost.is_empty() && !force {
        return Err(format!(
            "step {n} has work in it that reset would throw away:\n  {}\n\
             Keep a copy if you want it, then run `cargo workshop reset {n} --force`",
            lost.join("\n  ")
        ));
    }
    for file in &files {
        let original = step.kept("original", file)?;
        write(&step.dir().join(file), &original)?;
        if step.read(file) != original {
            return Err(format!("{}/{file} could not be restored", step.folder));
        }
    }
    fs::remove_dir_all(step.state()).map_err(|err| format!("{err}"))?;
    Ok(format!("Step {n} is back as it was before `start {n}`."))
}

/// Which marked functions differ between two versions of a file.
fn changes(file: &str, before: &str, after: &str) -> String {
    let (Ok(old), Ok(new)) = (
        track::markers_in(file, before),
        track::markers_in(file, after),
    ) else {
        return "changed".to_owned();
    };
    let changed: Vec<String> = old
        .iter()
        .filter(|o| {
            !new.iter().any(|n| {
                n.function == o.function
                    && after[n.body.clone()] == before[o.body.clone()]
            })
        })
        .map(|o| format!("`{}`", o.function))
        .collect();
    let outside = |text: &str, marks: &[Marked]| {
        let mut rest = text.to_owned();
        for mark in marks.iter().rev() {
            rest.replace_range(mark.body.clone(), "");
        }
        rest
    };
    let other = outside(before, &old) != outside(after, &new);
    match (changed.is_empty(), other) {
        (false, false) => format!("your {}", changed.join(", ")),
        (false, true) => format!("your {} and other lines", changed.join(", ")),
        _ => "lines outside the marked functions".to_owned(),
    }
}

/// The files kept under `dir`, relative to it, `/`-separated.
fn kept_files(dir: &Path) -> Vec<String> {
    workshop_tests::files_below(dir)
}

fn status(root: &Path) -> Result<(), String> {
    for (number, _) in step_folders(root) {
        let step = Step::find(root, &number.to_string())?;
        let line = if !step.is_started() {
            "not started".to_owned()
        } else if passed_fingerprint(&step).is_some_and(|p| p == fingerprint(&step))
        {
            "done: check passes".to_owned()
        } else {
            let marked = step.track()?;
            let todo: Vec<&Marked> = marked
                .iter()
                .filter(|m| track::is_blank(&step.read(&m.file)[m.body.clone()]))
                .collect();
            match todo.first() {
                Some(next) => format!(
                    "started: {} of {} written, next `{}`",
                    marked.len() - todo.len(),
                    marked.len(),
                    next.function
                ),
                None => format!("started: all {} written, run check", marked.len()),
            }
        };
        println!("step {number}  {:<20} {line}", step.folder);
    }
    Ok(())
}

/// The step's marked files as they are now, to tell whether `check` passed
/// on exactly these.
fn fingerprint(step: &Step) -> String {
    let files = kept_files(&step.state().join("original"));
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
/// It works on a copy in the temp folder, so an interrupted run leaves the
/// checkout alone; the copy builds in `target/workshop-verify`.
fn verify(root: &Path, numbers: &[&str]) -> Result<ExitCode, String> {
    let copy =
        env::temp_dir().join(format!("workshop-verify-{}", std::process::id()));
    let _ = fs::remove_dir_all(&copy);
    copy_tree(root, &copy)?;
    let target = root.join("target").join("workshop-verify");
    let wanted: Vec<String> = if numbers.is_empty() {
        step_folders(root)
            .iter()
            .map(|(n, _)| n.to_string())
            .collect()
    } else {
        numbers.iter().map(|n| (*n).to_owned()).collect()
    };
    let began = Instant::now();
    let mut problems = Vec::new();
    for n in &wanted {
        let step_began = Instant::now();
        let outcome = Step::find(&copy, n).and_then(|step| {
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
    start(step)?;
    if start(step).is_ok() {
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
    if reset(step, false).is_ok() {
        return Err(
            "reset without --force did not protect the written functions".to_owned(),
        );
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
    let original = step.kept("original", &expected.file)?;
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
    let mut files: Vec<(String, Vec<u8>)> = kept_files(dir)
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
