//! `cargo workshop`: the build-it-yourself track of each step.
//!
//! `start N` blanks the functions step N's authors marked with `// BUILD`
//! (see `workshop_tests::track`), `check N` runs the step's tests and names
//! the one function to write next, `reset N` puts the step folder back byte
//! for byte, `diff N` shows how it differs from the authors' version,
//! `status` shows where each step stands, `times` how long each took (for
//! the teacher's pilot); for the authors, `freeze` stores
//! the authors' version of every step (`workshop_tests::authors`) and
//! `verify` proves every track on a copy of the repository, for CI.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use workshop_tests::runner::{self, Progress};
use workshop_tests::track::{self, Marked};

use changes::{FileChange, What};
use check::check;
use step::{Authors, Stage, Step, find_root, step_folders};
use workshop_tests::authors;

mod changes;
mod check;
mod lock;
mod pack;
mod probe;
mod step;
mod times;

const USAGE: &str = "\
usage: cargo workshop <command>

  start N [--force]  blank the functions of step N you will write
  check N            run step N's tests: what to write next, or that it passes
  reset N [FILE...] [--force]
                     put step N (or these files of it) back as the authors wrote it
  diff N [FILE...] [--names]
                     how step N differs from the authors' version
  status             which steps are started, which are done
  times [--csv]      when you started each step, minutes to each function
  freeze [N...]      store the authors' version of the steps (for authors)
  verify [N...]      prove the tracks (for CI): start, check each function, reset
  pack DIR           the workshop to build offline, in DIR and DIR.zip (teachers)
  help [COMMAND]     this, or what COMMAND does

Run it anywhere inside your copy of the workshop (a clone or a download).";

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
            "usage: cargo workshop reset N [FILE...] [--force]\n\n\
             Puts step N's folder back as the authors wrote it, byte for byte \
             in your\nfiles' own line endings: every changed or deleted file, \
             and a file you added\nis removed. Name FILEs (src/main.rs) to put \
             back only those. If you wrote\nsomething there, it names it and \
             changes nothing unless you add --force."
        }
        "diff" => {
            "usage: cargo workshop diff N [FILE...] [--names]\n\n\
             Shows how step N's folder (or these files of it) differs from \
             the authors'\nversion: a unified diff per changed, deleted or \
             added file. With --names,\nonly which files differ and what \
             changed in each (your functions, other\nlines), without the \
             authors' text."
        }
        "freeze" => {
            "usage: cargo workshop freeze [N...]\n\n\
             For the workshop's authors: stores the steps' files as they are \
             (or those of\nthe steps named) in tests/authors/, as the authors' \
             version that start,\ncheck, reset, status and the book compare \
             with. Run it after changing a\nstep, and commit tests/authors/. \
             Refuses a step with a blank function."
        }
        "status" => {
            "usage: cargo workshop status\n\n\
             For each step: not started, started (how many functions written, \
             which next),\nor done (check passed, and nothing in the step \
             folder changed since), and\nwhich files differ from the authors' \
             outside the functions you write."
        }
        "times" => {
            "usage: cargo workshop times [--csv | FILE...]\n\n\
             For each step you started: when (UTC), and the minutes from then \
             to each\nfunction's first pass of `check` and to the step's. \
             Kept in .workshop/times.csv\nof this checkout only; nothing is \
             sent anywhere. --csv prints them for your\nteacher; a teacher \
             gives the collected files, or a folder of them (FILE...),\nto \
             get the rows of the teacher's page's pilot table."
        }
        "verify" => {
            "usage: cargo workshop verify [N...]\n\n\
             For CI: on a copy of the repository, starts each step (or those \
             named),\nchecks that check names each blank function in turn and \
             that its test fails,\nwrites it back, and that reset restores the \
             step byte for byte. Refuses a\nstep you have started here."
        }
        "pack" => {
            "usage: cargo workshop pack DIR\n\n\
             For the teacher's plan B: writes the folder DIR, and DIR.zip \
             beside it, that\nbuilds with no network on any system as it is: \
             the workshop, vendor/ with\nevery crate it needs, its \
             .cargo/config.toml pointing crates.io there (nothing\nis \
             written to the participant's ~/.cargo), and the book built into \
             book-html/\nif mdbook is on PATH. Needs the network, or the \
             crates in Cargo's cache.\nDIR must be new, empty or an earlier \
             pack. A participant copies the folder\n(or unzips the ZIP) and \
             runs `cargo run -p step01` in it."
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
            let step = Step::find(&find_root(&here)?, n)?;
            println!("{}", start(&step, force)?);
            times::started(&step.root, step.number);
            Ok(ExitCode::SUCCESS)
        }
        (["check", n], false) => {
            let step = Step::find(&find_root(&here)?, n)?;
            runner::end_everything_on_interrupt();
            runner::adopt_orphans();
            runner::end_what_killed_checks_left(&step.root);
            runner::record_tests_in(&step.root);
            let checked = check(&step, None, &Progress::new(false))?;
            times::checked(&step, &checked);
            println!("{}", checked.report);
            Ok(if checked.passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        (["reset", n, files @ ..], _) => {
            let step = Step::find(&find_root(&here)?, n)?;
            println!("{}", reset(&step, files, force)?);
            if files.is_empty() {
                if let Some(kept) = times::reset(&step.root, step.number) {
                    println!("{kept}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        (["diff", n, rest @ ..], false) => {
            let step = Step::find(&find_root(&here)?, n)?;
            let names_only = rest.contains(&"--names");
            let files: Vec<String> = rest
                .iter()
                .filter(|word| **word != "--names")
                .map(|f| normal_file(f))
                .collect();
            let shown = if names_only {
                changes::changed_files(&step, &files)
                    .iter()
                    .fold(String::new(), |shown, line| shown + line + "\n")
            } else {
                changes::diff(&step, &files)
            };
            if shown.is_empty() {
                println!("Step {} is as the authors wrote it.", step.number);
            } else {
                print!("{shown}");
            }
            Ok(ExitCode::SUCCESS)
        }
        (["freeze", numbers @ ..], false) => {
            println!("{}", freeze(&find_root(&here)?, numbers)?);
            Ok(ExitCode::SUCCESS)
        }
        (["status"], false) => {
            status(&find_root(&here)?);
            Ok(ExitCode::SUCCESS)
        }
        (["times"], false) => {
            println!("{}", times::table(&find_root(&here)?));
            Ok(ExitCode::SUCCESS)
        }
        (["times", "--csv"], false) => {
            print!("{}", times::csv(&find_root(&here)?));
            Ok(ExitCode::SUCCESS)
        }
        (["times", files @ ..], false)
            if !files.iter().any(|file| file.starts_with('-')) =>
        {
            print!("{}", times::pilot_rows(&find_root(&here)?, files)?);
            Ok(ExitCode::SUCCESS)
        }
        (["verify", numbers @ ..], false) => {
            runner::end_everything_on_interrupt();
            runner::adopt_orphans();
            verify(&find_root(&here)?, numbers)
        }
        (["pack", words @ ..], false) => pack::run(&find_root(&here)?, &here, words),
        ([], _) => Err(format!("which command?\n\n{USAGE}")),
        ([command @ ("start" | "check" | "reset" | "diff")], _) => Err(format!(
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
    let written = named(&stages, Stage::is_work);
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
         shows it;\n`cargo workshop reset {n}` puts the step back as the authors \
         wrote it."
    );
    Ok(out)
}

/// The functions at `stage`, as the messages name them.
fn named(stages: &[(Marked, Stage)], wanted: fn(Stage) -> bool) -> Vec<String> {
    stages
        .iter()
        .filter(|(_, stage)| wanted(*stage))
        .map(|(marked, _)| format!("`{}`", marked.function))
        .collect()
}

/// Puts the step folder (or `files` of it) back as the authors wrote it:
/// changed and deleted files rewritten in their own line endings, added
/// ones removed; with work in them, only if `force`. Says so only once
/// every file is byte for byte the authors'.
fn reset(step: &Step, files: &[&str], force: bool) -> Result<String, String> {
    let n = step.number;
    let only: Vec<String> = files.iter().map(|file| normal_file(file)).collect();
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
    let what = if only.is_empty() {
        format!("Step {n}")
    } else {
        only.join(", ")
    };
    let differ: Vec<FileChange> =
        changes::changes(step).into_iter().filter(wanted).collect();
    if differ.is_empty() {
        if only.is_empty() {
            let _ = fs::remove_dir_all(step.state());
        }
        return Ok(format!(
            "{what} is as the authors wrote it already: nothing to reset."
        ));
    }
    let work: Vec<String> = differ
        .iter()
        .filter(|change| change.is_work())
        .map(|change| {
            format!("{}/{}: {}", step.folder, change.file, change.describe())
        })
        .collect();
    if !work.is_empty() && !force {
        return Err(format!(
            "step {n} has work in it that reset would throw away:\n  {}\n\
             Keep a copy if you want it (outside the workspace's folders), \
             then run `cargo workshop reset {n}{} --force`",
            work.join("\n  "),
            if only.is_empty() {
                String::new()
            } else {
                format!(" {}", only.join(" "))
            }
        ));
    }
    let mut done = Vec::new();
    for change in &differ {
        if change.what == What::Added {
            changes::remove_added(step, &change.file)?;
            done.push(format!("removed {}, added", change.file));
        } else {
            write(
                &step.dir().join(&change.file),
                &step.original(&change.file)?,
            )?;
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
        let _ = fs::remove_dir_all(step.state());
    }
    let done = if done.is_empty() {
        String::new()
    } else {
        format!(" ({})", done.join("; "))
    };
    Ok(format!("{what} is back as the authors wrote it.{done}"))
}

/// A file named on the command line as the step's files are named:
/// relative to the step folder, `/`-separated.
fn normal_file(file: &str) -> String {
    file.replace('\\', "/").trim_start_matches("./").to_owned()
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
        for stale in workshop_tests::files_below(&folder)
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
fn steps_named(root: &Path, numbers: &[&str]) -> Vec<String> {
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
fn blank_function(step: &Step) -> Result<Option<String>, String> {
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
    } else if passed_fingerprint(step).is_some_and(|p| p == fingerprint(step)) {
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
fn fingerprint(step: &Step) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325; // FNV-1a
    for file in authors::step_files(&step.dir()) {
        let bytes = fs::read(step.dir().join(&file)).unwrap_or_default();
        for byte in file.bytes().chain([0]).chain(bytes) {
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
/// checkout's files as they are, frozen or not. A step started in the
/// checkout (a blank function) is refused: its files are not the authors'
/// to prove.
fn verify(root: &Path, numbers: &[&str]) -> Result<ExitCode, String> {
    let wanted = steps_named(root, numbers);
    let authors_here = Authors::Files(root.to_path_buf());
    for n in &wanted {
        if blank_function(&Step::find_with(root, n, &authors_here)?)?.is_some() {
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
        let outcome = Step::find_with(&copy, n, &authors_here).and_then(|step| {
            let original = Step::find_with(root, n, &authors_here)?;
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
