//! `cargo workshop` when the participant does what participants do:
//! cleans the folder with `git clean -fdx` halfway through a step, copies a
//! step folder to keep a version, deletes a marker line, asks for `--help`,
//! commits their work, edits a file beside the track, deletes or adds one;
//! and wherever the workshop lands: a ZIP download without `.git`, a folder
//! of a course's repository, a shallow clone, a Windows checkout's CRLF.
//! Each test works in a fresh clone of the repository, so nothing here can
//! touch the checkout the tests run in.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use workshop::authors::{self, FREEZE_COMMAND};
use workshop_tests::{workshop_program, workspace_root, xtask_program};

/// A clone of the repository in a folder of its own, removed when dropped.
struct Clone {
    dir: PathBuf,
    /// What to remove: `dir`, or the course repository around it.
    scratch: PathBuf,
}

impl Clone {
    fn new(name: &str) -> Clone {
        let scratch = std::env::temp_dir()
            .join(format!("workshop-test-{name}-{}", std::process::id()));
        Self::at(scratch.clone(), scratch, &[])
    }

    /// A clone made with `git clone ARGS`, in `dir`.
    fn at(dir: PathBuf, scratch: PathBuf, args: &[&str]) -> Clone {
        let _ = fs::remove_dir_all(&scratch);
        // A plain path copies git's files; --depth needs a file:// address.
        let from = if args.contains(&"--depth") {
            format!("file://{}", workspace_root().display())
        } else {
            workspace_root().display().to_string()
        };
        let dir_name = dir.to_string_lossy().into_owned();
        let mut clone = vec!["clone", "--quiet", "--no-hardlinks"];
        clone.extend_from_slice(args);
        clone.extend_from_slice(&[&from, &dir_name]);
        git(&workspace_root(), &clone);
        Clone { dir, scratch }
    }

    /// The workshop as a "Download ZIP" unpacks it: the files, no `.git`.
    fn zip(name: &str) -> Clone {
        let clone = Self::new(name);
        fs::remove_dir_all(clone.dir.join(".git")).expect("the clone's .git");
        clone
    }

    /// The workshop's files in `course/workshop/` of a course's own
    /// repository, committed there.
    fn in_course_repository(name: &str) -> Clone {
        let scratch = std::env::temp_dir()
            .join(format!("workshop-test-{name}-{}", std::process::id()));
        let clone = Self::at(scratch.join("course").join("workshop"), scratch, &[]);
        fs::remove_dir_all(clone.dir.join(".git")).expect("the clone's .git");
        let course = clone.scratch.join("course");
        git(&course, &["init", "--quiet"]);
        git(&course, &["add", "."]);
        commit(&course, "the course, with the workshop in a folder");
        clone
    }

    /// A clone of the last commit only (`git clone --depth 1`).
    fn shallow(name: &str) -> Clone {
        let scratch = std::env::temp_dir()
            .join(format!("workshop-test-{name}-{}", std::process::id()));
        Self::at(scratch.clone(), scratch, &["--depth", "1"])
    }

    /// `cargo workshop ARGS`, run in the clone with this checkout's build of
    /// the program.
    fn workshop(&self, args: &[&str]) -> Output {
        Command::new(workshop_program())
            .args(args)
            .current_dir(&self.dir)
            .output()
            .expect("the workshop program runs")
    }

    /// `cargo xtask ARGS`, the authors' and the teacher's commands, run in
    /// the clone with this checkout's build of the program.
    fn xtask(&self, args: &[&str]) -> Output {
        Command::new(xtask_program())
            .args(args)
            .current_dir(&self.dir)
            .output()
            .expect("the xtask program runs")
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    fn read(&self, file: &str) -> String {
        fs::read_to_string(self.path(file)).expect("a file of the clone")
    }

    fn write(&self, file: &str, text: &str) {
        fs::write(self.path(file), text).expect("the clone is writable");
    }
}

impl Drop for Clone {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.scratch);
    }
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?} failed");
}

/// `git commit -a`, as a participant saves their work.
fn commit(dir: &Path, message: &str) {
    git(
        dir,
        &[
            "-c",
            "user.name=participant",
            "-c",
            "user.email=participant@example.com",
            "commit",
            "--quiet",
            "--all",
            "--message",
            message,
        ],
    );
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const STEP3: &str = "step03-sleep/src/lib.rs";

/// What a participant wrote for `EventLoop::call_at` in step 3: not the
/// authors' body, and not blank.
const MY_CALL_AT: &str = "// my own call_at, written by hand";

/// Starts step 3 and writes `EventLoop::call_at`, the first function.
fn start_and_write_call_at(clone: &Clone) {
    let started = clone.workshop(&["start", "3"]);
    assert!(started.status.success(), "{}", stderr(&started));
    let text = clone.read(STEP3);
    let todo = "todo!(\"write `EventLoop::call_at`";
    let at = text.find(todo).expect("call_at is blank");
    let end = at + text[at..].find('\n').expect("a line end");
    let mine = format!(
        "{MY_CALL_AT}\n        let _ = (deadline, callback);\n        unimplemented!()"
    );
    clone.write(STEP3, &format!("{}{mine}{}", &text[..at], &text[end..]));
}

#[test]
fn written_work_survives_git_clean_and_is_never_blanked_or_reset_unasked() {
    let clone = Clone::new("clean");
    start_and_write_call_at(&clone);
    git(&clone.dir, &["clean", "-fdxq"]);

    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains(
            "step03-sleep         started: 1 of 5 written, next `Timer::cmp`"
        ),
        "after git clean, status said:\n{status}"
    );
    for args in [&["start", "3"][..], &["reset", "3"]] {
        let refused = clone.workshop(args);
        assert_eq!(refused.status.code(), Some(2), "{args:?} was not refused");
        assert!(
            stderr(&refused).contains("`EventLoop::call_at`"),
            "{}",
            stderr(&refused)
        );
        assert!(
            clone.read(STEP3).contains(MY_CALL_AT),
            "{args:?} lost the work"
        );
    }
}

/// Step 3's `function`, blanked by `start`, with `lines` in place of the
/// line of its `todo!()`.
fn write_in_place_of_todo(clone: &Clone, function: &str, lines: &str) {
    let text = clone.read(STEP3);
    let todo = format!("todo!(\"write `{function}`");
    let at = text.find(&todo).expect("the function is blank");
    let end = at + text[at..].find('\n').expect("a line end");
    clone.write(STEP3, &format!("{}{lines}{}", &text[..at], &text[end..]));
}

#[test]
fn half_written_work_and_a_comment_about_its_todo_are_work_reset_keeps() {
    let clone = Clone::new("half");
    let started = clone.workshop(&["start", "3"]);
    assert!(started.status.success(), "{}", stderr(&started));
    // A match arm left for later, and a finished function whose comment
    // remembers the todo!() it replaced: both the participant's work.
    write_in_place_of_todo(
        &clone,
        "EventLoop::call_at",
        "let _ = callback;\n        match deadline {\n            _ => \
         todo!(\"later\"),\n        }",
    );
    write_in_place_of_todo(
        &clone,
        "Timer::cmp",
        "// I replaced the todo!() here with my own comparison\n        \
         other.deadline.cmp(&self.deadline)",
    );
    let written = clone.read(STEP3);

    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains(
            "step03-sleep         started: 1 of 5 written, 1 in progress, \
             next `EventLoop::call_at`"
        ),
        "status said:\n{status}"
    );
    let names = stdout(&clone.workshop(&["diff", "3", "--names"]));
    assert!(
        names.contains("your `EventLoop::call_at`, `Timer::cmp`")
            && !names.contains("blanked functions"),
        "diff --names said:\n{names}"
    );
    let refused = clone.workshop(&["reset", "3"]);
    assert_eq!(refused.status.code(), Some(2), "reset was not refused");
    for function in ["`EventLoop::call_at`", "`Timer::cmp`"] {
        assert!(stderr(&refused).contains(function), "{}", stderr(&refused));
    }
    assert_eq!(clone.read(STEP3), written, "reset threw work away");

    // Put back to the blank, a function is no one's work again.
    let blank_again = clone.read(STEP3).replace(
        "// I replaced the todo!() here with my own comparison\n        \
         other.deadline.cmp(&self.deadline)",
        "todo!(\"write `Timer::cmp`: see chapter 3, section \\\"The idea\\\"\")",
    );
    clone.write(STEP3, &blank_again);
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains("started: 0 of 5 written, 1 in progress"),
        "status said:\n{status}"
    );
}

#[test]
fn reset_puts_back_the_committed_files_even_with_its_notes_gone() {
    let clone = Clone::new("reset");
    start_and_write_call_at(&clone);
    let _ = fs::remove_dir_all(clone.path(".workshop"));
    let reset = clone.workshop(&["reset", "3", "--force"]);
    assert!(
        stdout(&reset).contains("Step 3 is back as the authors wrote it."),
        "{}",
        stderr(&reset)
    );
    git(&clone.dir, &["diff", "--quiet", "--", "step03-sleep"]);
    let again = clone.workshop(&["reset", "3"]);
    assert!(
        stdout(&again).contains("as the authors wrote it already"),
        "{}",
        stdout(&again)
    );
}

#[test]
fn start_with_force_blanks_written_functions_too() {
    let clone = Clone::new("force");
    start_and_write_call_at(&clone);
    let started = clone.workshop(&["start", "3", "--force"]);
    assert!(started.status.success(), "{}", stderr(&started));
    assert!(!clone.read(STEP3).contains(MY_CALL_AT));
    let status = stdout(&clone.workshop(&["status"]));
    assert!(status.contains("started: 0 of 5 written"), "{status}");
}

#[test]
fn a_copy_of_a_step_folder_changes_nothing() {
    let clone = Clone::new("copy");
    let copied = Command::new("cp")
        .args(["-r", "step03-sleep", "step03-sleep-mine"])
        .current_dir(&clone.dir)
        .status();
    if !copied.is_ok_and(|status| status.success()) {
        return; // no `cp` (Windows): the scenario is a shell's
    }
    let status = clone.workshop(&["status"]);
    assert!(status.status.success(), "{}", stderr(&status));
    assert_eq!(
        stdout(&status).matches("step 3 ").count(),
        1,
        "{}",
        stdout(&status)
    );
    assert!(clone.workshop(&["start", "3"]).status.success());
}

#[test]
fn two_members_for_one_step_are_named() {
    let clone = Clone::new("members");
    let manifest = clone.read("Cargo.toml");
    clone.write(
        "Cargo.toml",
        &manifest.replace(
            "\"step03-sleep\",",
            "\"step03-sleep\",\n    \"step03-mine\",",
        ),
    );
    fs::create_dir_all(clone.path("step03-mine")).unwrap();
    clone.write("step03-mine/Cargo.toml", "[package]\nname = \"step03\"\n");
    let refused = clone.workshop(&["start", "3"]);
    assert_eq!(refused.status.code(), Some(2));
    let said = stderr(&refused);
    assert!(
        said.contains("step03-sleep") && said.contains("step03-mine"),
        "{said}"
    );
}

#[test]
fn a_deleted_marker_is_named_with_the_line_to_put_back_and_other_steps_go_on() {
    let clone = Clone::new("marker");
    assert!(clone.workshop(&["start", "3"]).status.success());
    let text = clone.read(STEP3);
    let marker = text
        .lines()
        .find(|line| line.contains("// BUILD 2/5"))
        .expect("a second marker")
        .to_owned();
    clone.write(STEP3, &text.replace(&format!("{marker}\n"), ""));

    let status = clone.workshop(&["status"]);
    assert!(status.status.success(), "{}", stderr(&status));
    let listed = stdout(&status);
    assert!(
        listed.contains("`// BUILD 2/5` line above `Timer::cmp`"),
        "{listed}"
    );
    assert!(
        listed.contains("step 4  step04-select-echo   not started"),
        "{listed}"
    );
    let start = stderr(&clone.workshop(&["start", "3"]));
    assert!(
        start.contains(marker.trim()),
        "the message lacks the line:\n{start}"
    );
    assert!(
        !start.contains("number them"),
        "an authors' message:\n{start}"
    );
}

#[test]
fn help_prints_the_usage_and_succeeds() {
    let clone = Clone::new("help");
    for args in [
        &["--help"][..],
        &["-h"],
        &["help"],
        &["help", "start"],
        &["start", "--help"],
    ] {
        let help = clone.workshop(args);
        assert!(help.status.success(), "{args:?}: {}", stderr(&help));
        assert!(
            stdout(&help).starts_with("usage: cargo workshop"),
            "{args:?}: {}",
            stdout(&help)
        );
    }
    assert!(stdout(&clone.workshop(&["start", "--help"])).contains("--force"));
}

/// The authors' and the teacher's commands are `cargo xtask`'s: the
/// participant's usage leaves them out, and a teacher who types the old
/// name is told the new one, with nothing done.
#[test]
fn the_authors_and_teachers_commands_are_cargo_xtask() {
    let clone = Clone::new("xtask");
    let usage = stdout(&clone.workshop(&["help"]));
    for moved in ["freeze", "verify", "pack"] {
        assert!(
            !usage.contains(&format!("  {moved} ")),
            "the participant's usage lists {moved}:\n{usage}"
        );
        let told = clone.workshop(&[moved, "out"]);
        assert_eq!(told.status.code(), Some(2), "{moved}: {}", stdout(&told));
        assert!(
            stderr(&told).contains(&format!("is `cargo xtask {moved}` now")),
            "{moved}: {}",
            stderr(&told)
        );
        let pointed = stdout(&clone.workshop(&["help", moved]));
        assert!(pointed.contains("`cargo xtask help`"), "{pointed}");
        let help = stdout(&clone.xtask(&["help", moved]));
        assert!(
            help.starts_with(&format!("usage: cargo xtask {moved}")),
            "{help}"
        );
    }
    assert!(!clone.path("out").exists(), "cargo workshop pack packed");
    let told = clone.workshop(&["times", "times-ada.csv"]);
    assert_eq!(told.status.code(), Some(2), "{}", stdout(&told));
    assert!(
        stderr(&told).contains("`cargo xtask pilot FILE...`"),
        "{}",
        stderr(&told)
    );
    let usage = stdout(&clone.xtask(&["--help"]));
    for command in [
        "freeze [N...]",
        "verify [N...]",
        "pack DIR",
        "pilot FILE...",
    ] {
        assert!(usage.contains(command), "no {command}:\n{usage}");
    }
    let unknown = clone.xtask(&["start", "3"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).starts_with("error: unknown command `start 3`"));
}

#[test]
fn verify_refuses_a_step_started_here() {
    let clone = Clone::new("verify");
    assert!(clone.workshop(&["start", "3"]).status.success());
    let refused = clone.xtask(&["verify", "3"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("step 3 is started here"),
        "{}",
        stderr(&refused)
    );
}

// ---------------------------------------------------------------------------
// Wherever the workshop lands, the authors' version travels with it.

/// Step 3 worked through as a participant would, where `clone` is: every
/// command answers as in a clone, the book still shows the authors' code,
/// and `reset` puts the file back byte for byte. With `save_work`, the
/// participant commits their work halfway, as git users do.
fn participant_round(clone: &Clone, save_work: bool) {
    let authors = fs::read_to_string(clone.path(STEP3)).expect("step 3");
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains("step 3  step03-sleep         not started"),
        "{status}"
    );
    check_asks_cargo_to_build(clone);
    start_and_write_call_at(clone);
    if save_work {
        commit(&clone.dir, "wip");
    }
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains(
            "step03-sleep         started: 1 of 5 written, next `Timer::cmp`"
        ),
        "{status}"
    );
    // What the book shows (`book_tools::book::AuthorsVersion`): the
    // stored copy, which travels with the files wherever they are.
    let stored = authors::read_stored(&clone.dir, "step03-sleep").expect("stored");
    assert_eq!(
        stored.get("src/lib.rs").map(String::as_str),
        Some(authors.replace("\r\n", "\n").as_str()),
        "the book would not show the authors' step 3"
    );
    for args in [&["start", "3"][..], &["reset", "3"]] {
        let refused = clone.workshop(args);
        assert_eq!(refused.status.code(), Some(2), "{args:?} was not refused");
        assert!(
            stderr(&refused).contains("`EventLoop::call_at`"),
            "{args:?}: {}",
            stderr(&refused)
        );
    }
    let reset = clone.workshop(&["reset", "3", "--force"]);
    assert!(
        stdout(&reset).contains("Step 3 is back as the authors wrote it."),
        "{}",
        stderr(&reset)
    );
    assert_eq!(clone.read(STEP3), authors, "reset did not restore step 3");
}

/// `check 3` gets as far as asking Cargo to build step 3's tests: it found
/// the step's track. (A stand-in for Cargo notes that it was asked, and
/// fails, so that nothing is built.)
#[cfg(unix)]
fn check_asks_cargo_to_build(clone: &Clone) {
    let stand_in = clone.scratch.join("cargo-stand-in");
    let asked = clone.scratch.join("cargo-was-asked");
    fs::write(
        &stand_in,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", asked.display()),
    )
    .unwrap();
    let made_executable = Command::new("chmod").arg("+x").arg(&stand_in).status();
    assert!(made_executable.is_ok_and(|status| status.success()));
    let checked = Command::new(workshop_program())
        .args(["check", "3"])
        .current_dir(&clone.dir)
        .env("CARGO", &stand_in)
        .output()
        .expect("the workshop program runs");
    let asked = fs::read_to_string(&asked).unwrap_or_default();
    assert!(
        asked.contains("test"),
        "check 3 did not ask Cargo to build the tests; it said:\n{}{}",
        stdout(&checked),
        stderr(&checked)
    );
    let _ = fs::remove_file(clone.scratch.join("cargo-was-asked"));
}

#[cfg(not(unix))]
fn check_asks_cargo_to_build(_clone: &Clone) {}

/// Polls `file` (up to 60 s) until its text satisfies `done`; the text.
#[cfg(unix)]
fn wait_for(file: &Path, done: impl Fn(&str) -> bool) -> String {
    for _ in 0..600 {
        let text = fs::read_to_string(file).unwrap_or_default();
        if done(&text) {
            return text;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    fs::read_to_string(file).unwrap_or_default()
}

/// `start` at a terminal leaves the build of what `check` needs running in
/// the background and returns at once, with the log's path; a `check`
/// started meanwhile says it waits for it, and then asks Cargo for the
/// same build. (Told to build ahead, as its output here is not a terminal;
/// a stand-in for Cargo names a target folder, notes what it is asked to
/// build, and holds that build until the test lets it go, then fails, so
/// that nothing is built.)
#[cfg(unix)]
#[test]
fn start_leaves_checks_build_running_in_the_background() {
    use std::process::Stdio;
    let clone = Clone::new("ahead");
    let target = clone.scratch.join("stand-in-target");
    let asked = clone.scratch.join("cargo-was-asked");
    let go = clone.scratch.join("go");
    let stand_in = clone.scratch.join("cargo-stand-in");
    fs::write(
        &stand_in,
        format!(
            "#!/bin/sh\n\
             if [ \"$1\" = metadata ]; then\n\
             echo '{{\"target_directory\":\"{}\"}}'; exit 0\nfi\n\
             echo \"$@\" >> '{}'\n\
             i=0\n\
             while [ ! -e '{}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n\
             exit 1\n",
            target.display(),
            asked.display(),
            go.display()
        ),
    )
    .unwrap();
    let made_executable = Command::new("chmod").arg("+x").arg(&stand_in).status();
    assert!(made_executable.is_ok_and(|status| status.success()));
    let workshop = |args: &[&str]| {
        let mut command = Command::new(workshop_program());
        command
            .args(args)
            .current_dir(&clone.dir)
            .env("CARGO", &stand_in)
            .env("WORKSHOP_BUILD_AHEAD", "1");
        command
    };

    let started = workshop(&["start", "3"])
        .output()
        .expect("the program runs");
    assert!(started.status.success(), "{}", stderr(&started));
    assert!(
        stdout(&started).contains(
            "Building step 3's tests in the background while you read \
             (log: stand-in-target/workshop-ahead/step03.log)"
        ),
        "{}",
        stdout(&started)
    );
    let ahead = wait_for(&asked, |text| text.contains("--no-run"));
    assert!(ahead.contains("--no-run"), "no build in the background");
    let log = target.join("workshop-ahead").join("step03.log");
    assert!(
        !fs::read_to_string(&log).unwrap().contains("check 3"),
        "the build ended before the stand-in let it go"
    );

    let said = clone.scratch.join("check-said");
    let mut check = workshop(&["check", "3"])
        .stdout(Stdio::null())
        .stderr(fs::File::create(&said).unwrap())
        .spawn()
        .expect("the program runs");
    let waits = wait_for(&said, |text| text.contains("still running"));
    fs::write(&go, "").unwrap();
    let checked = check.wait();
    assert!(checked.is_ok_and(|status| !status.success()));
    assert!(
        waits.contains("still running"),
        "check did not say it waits"
    );
    assert!(
        wait_for(&log, |text| text.contains("check 3")).contains("does not compile"),
        "{}",
        fs::read_to_string(&log).unwrap_or_default()
    );
    let builds: Vec<String> = fs::read_to_string(&asked)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(builds.len(), 2, "{builds:?}");
    assert_eq!(
        builds[0], builds[1],
        "the background built other than check"
    );
    assert!(builds[0].contains("--test step03_timers"), "{builds:?}");
}

#[test]
fn a_zip_download_without_git_works_as_a_clone_does() {
    participant_round(&Clone::zip("zip"), false);
}

#[test]
fn a_folder_of_a_course_repository_works_as_a_clone_does() {
    participant_round(&Clone::in_course_repository("course"), true);
}

#[test]
fn a_shallow_clone_works_as_a_clone_does() {
    participant_round(&Clone::shallow("shallow"), false);
}

#[test]
fn work_the_participant_committed_is_theirs_not_the_authors() {
    participant_round(&Clone::new("committed"), true);
}

#[test]
fn a_missing_stored_copy_is_named_with_how_to_get_it_back() {
    let clone = Clone::zip("missing");
    fs::remove_file(authors::stored_copy(&clone.dir, "step03-sleep")).unwrap();
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains(
            "step 3  step03-sleep         cannot tell: tests/authors/step03-sleep.txt \
             cannot be read"
        ),
        "{status}"
    );
    assert!(
        status.contains("step 4  step04-select-echo   not started"),
        "{status}"
    );
    let start = stderr(&clone.workshop(&["start", "3"]));
    assert!(
        start.contains("git checkout -- tests/authors/step03-sleep.txt"),
        "{start}"
    );
}

/// What differs between the step in `folder` and its stored copy, one line
/// a file; empty when they match.
fn mismatches(root: &Path, folder: &str) -> Vec<String> {
    let now = match authors::read_folder(&root.join(folder)) {
        Ok(files) => files,
        Err(err) => return vec![err],
    };
    let stored = match authors::read_stored(root, folder) {
        Ok(files) => files,
        Err(err) => return vec![err],
    };
    let mut differ = Vec::new();
    for (file, text) in &now {
        match stored.get(file) {
            None => differ.push(format!("{folder}/{file}: not in the stored copy")),
            Some(kept) if kept != text => {
                differ.push(format!("{folder}/{file}: differs"));
            }
            Some(_) => {}
        }
    }
    for file in stored.keys().filter(|file| !now.contains_key(*file)) {
        differ.push(format!("{folder}/{file}: stored, but not in the step"));
    }
    differ
}

/// The stored authors' version is what the steps are: an author who
/// changed a step and forgot to store it is told the command.
#[test]
fn the_stored_authors_version_matches_the_steps() {
    let root = workspace_root();
    let steps = workshop_tests::step_folders();
    let mut differ: Vec<String> = steps
        .iter()
        .flat_map(|folder| mismatches(&root, folder))
        .collect();
    let stored = workshop_tests::files_below(&root.join(authors::FOLDER));
    differ.extend(
        stored
            .iter()
            .filter(|file| !steps.iter().any(|step| **file == format!("{step}.txt")))
            .map(|file| format!("{}/{file}: no such step", authors::FOLDER)),
    );
    assert!(
        differ.is_empty(),
        "the authors' version stored in {folder}/ no longer matches the \
         steps:\n  {}\nAfter changing a step, run `{FREEZE_COMMAND}` and commit \
         {folder}/. (Working through a step you started with `cargo workshop \
         start`? Then this is expected until `cargo workshop reset`.)",
        differ.join("\n  "),
        folder = authors::FOLDER,
    );
}

// ---------------------------------------------------------------------------
// Line endings are the participant's.

/// Step 3's `lib.rs` as the clone has it (LF), and with CRLF line endings.
fn lf_and_crlf(clone: &Clone) -> (String, String) {
    let lf = clone.read(STEP3);
    assert!(!lf.contains('\r'), "the clone's step 3 is not LF");
    let crlf = lf.replace('\n', "\r\n");
    (lf, crlf)
}

#[test]
fn a_crlf_checkout_is_the_authors_and_keeps_its_endings_through_start_and_reset() {
    let clone = Clone::new("crlf");
    let (_, crlf) = lf_and_crlf(&clone);
    clone.write(STEP3, &crlf);
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains("step03-sleep         not started"),
        "{status}"
    );

    assert!(clone.workshop(&["start", "3"]).status.success());
    let started = clone.read(STEP3);
    assert!(started.contains("todo!(\"write `EventLoop::call_at`"));
    assert!(
        !started.replace("\r\n", "").contains('\n'),
        "start wrote LF lines into a CRLF file"
    );
    let reset = clone.workshop(&["reset", "3"]);
    assert!(reset.status.success(), "{}", stderr(&reset));
    assert_eq!(
        clone.read(STEP3),
        crlf,
        "reset did not restore the CRLF file"
    );

    start_and_write_call_at(&clone);
    let status = stdout(&clone.workshop(&["status"]));
    assert!(status.contains("started: 1 of 5 written"), "{status}");
    assert!(clone.workshop(&["reset", "3", "--force"]).status.success());
    assert_eq!(clone.read(STEP3), crlf, "reset --force changed the endings");
}

#[test]
fn one_crlf_line_in_an_lf_file_changes_nothing_and_reset_restores_the_lf_file() {
    let clone = Clone::new("mixed");
    let (lf, _) = lf_and_crlf(&clone);
    // An editor that wrote one line its own way: the marker of 2/5.
    let at = lf.find("// BUILD 2/5").expect("a second marker");
    let end = at + lf[at..].find('\n').unwrap();
    let mixed = format!("{}\r{}", &lf[..end], &lf[end..]);
    clone.write(STEP3, &mixed);

    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains("step03-sleep         not started"),
        "{status}"
    );
    let started = clone.workshop(&["start", "3"]);
    assert!(started.status.success(), "{}", stderr(&started));
    let text = clone.read(STEP3);
    assert_eq!(text.matches("\r\n").count(), 1, "start changed the endings");
    assert!(text.contains("// BUILD 2/5"), "{text}");
    let status = stdout(&clone.workshop(&["status"]));
    assert!(status.contains("started: 0 of 5 written"), "{status}");

    let reset = clone.workshop(&["reset", "3", "--force"]);
    assert!(reset.status.success(), "{}", stderr(&reset));
    assert_eq!(clone.read(STEP3), lf, "reset did not restore the LF file");
}

// ---------------------------------------------------------------------------
// The whole step folder, not only the marked files.

#[test]
fn reset_names_and_restores_a_changed_file_beside_the_track() {
    let clone = Clone::new("beside");
    let main = "step01-while-loop/src/main.rs";
    let authors = clone.read(main);
    // Chapter 1's exercises change main.rs.
    clone.write(
        main,
        &authors.replacen("println!(", "println!(\"mine \"); println!(", 1),
    );
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains(
            "step01-while-loop    not started; 1 file differs outside the track \
             (`cargo workshop diff 1`)"
        ),
        "{status}"
    );
    let diff = stdout(&clone.workshop(&["diff", "1"]));
    assert!(diff.contains("+++ step01-while-loop/src/main.rs"), "{diff}");
    assert!(diff.contains("println!(\"mine \")"), "{diff}");

    let refused = clone.workshop(&["reset", "1"]);
    assert_eq!(refused.status.code(), Some(2));
    let changed_line = 1 + authors
        .lines()
        .position(|line| line.contains("println!("))
        .expect("main.rs prints");
    assert!(
        stderr(&refused).contains(&format!(
            "step01-while-loop/src/main.rs: line {changed_line} outside the marked functions"
        )),
        "{}",
        stderr(&refused)
    );
    let reset = clone.workshop(&["reset", "1", "src/main.rs", "--force"]);
    assert!(
        stdout(&reset).contains("src/main.rs is back as the authors wrote it."),
        "{}",
        stderr(&reset)
    );
    assert_eq!(clone.read(main), authors);
}

#[test]
fn reset_puts_back_a_deleted_file_and_status_says_how() {
    let clone = Clone::new("deleted");
    let sleep = "step05-coroutines/src/sleep.rs";
    let authors = clone.read(sleep);
    fs::remove_file(clone.path(sleep)).unwrap();
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains("step05-coroutines/src/sleep.rs, which holds")
            && status.contains("is gone"),
        "{status}"
    );
    assert!(
        !status.contains("number them"),
        "an authors' message:\n{status}"
    );
    let reset = clone.workshop(&["reset", "5"]);
    assert!(
        stdout(&reset).contains(
            "Step 5 is back as the authors wrote it. (put back src/sleep.rs, deleted)"
        ),
        "{}{}",
        stdout(&reset),
        stderr(&reset)
    );
    assert_eq!(clone.read(sleep), authors);
}

#[test]
fn reset_names_an_added_file_and_removes_it_only_with_force() {
    let clone = Clone::new("added");
    let mine = "step08-cancel/src/notes/mine.rs";
    fs::create_dir_all(clone.path("step08-cancel/src/notes")).unwrap();
    clone.write(mine, "// my notes\n");
    let refused = clone.workshop(&["reset", "8"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains(
            "step08-cancel/src/notes/mine.rs: a file the authors do not have"
        ),
        "{}",
        stderr(&refused)
    );
    assert!(clone.path(mine).is_file(), "reset removed it unasked");
    let reset = clone.workshop(&["reset", "8", "--force"]);
    assert!(
        stdout(&reset).contains("(removed src/notes/mine.rs, added)"),
        "{}",
        stderr(&reset)
    );
    assert!(!clone.path("step08-cancel/src/notes").exists());
    git(&clone.dir, &["diff", "--quiet", "--", "step08-cancel"]);
}

/// `times` shows when step 3 was started; `reset` keeps the record and says
/// so; a teacher's collected `--csv` files become the pilot table's rows
/// (`cargo xtask pilot`).
#[test]
fn times_shows_a_started_step_and_reset_keeps_it() {
    let clone = Clone::new("times");
    let before = stdout(&clone.workshop(&["times"]));
    assert!(before.starts_with("No step started yet"), "{before}");
    start_and_write_call_at(&clone);
    let started_line = |table: &str| {
        let line = table.lines().find(|line| line.starts_with("3 "))?;
        let date = line.split_whitespace().nth(1)?;
        let is_date =
            date.len() == 10 && date.chars().filter(|c| *c == '-').count() == 2;
        is_date.then(|| line.to_owned())
    };
    let table = stdout(&clone.workshop(&["times"]));
    let line = started_line(&table).unwrap_or_else(|| panic!("no step 3:\n{table}"));
    assert!(line.contains(" -  "), "step 3 is not done, yet: {line}");
    let reset = stdout(&clone.workshop(&["reset", "3", "--force"]));
    assert!(
        reset.contains("Your times for step 3 are kept"),
        "reset does not say what became of the times: {reset}"
    );
    let table = stdout(&clone.workshop(&["times"]));
    assert_eq!(
        started_line(&table).as_deref(),
        Some(line.as_str()),
        "{table}"
    );

    // Four participants' files, in a folder: three finished step 3.
    let collected = clone.scratch.join("collected");
    fs::create_dir_all(&collected).expect("a scratch folder");
    for (i, minutes) in [Some(30), Some(40), Some(41), None].iter().enumerate() {
        let done = minutes
            .map(|minutes| format!("3,2026-11-27 09:40,done,{minutes}\n"))
            .unwrap_or_default();
        let csv = format!(
            "step,started_utc,passed,minutes\n\
             3,2026-11-27 09:40,EventLoop::call_at,6\n{done}"
        );
        fs::write(collected.join(format!("times-{i}.csv")), csv)
            .expect("a scratch file");
    }
    let rows = stdout(&clone.xtask(&["pilot", &collected.to_string_lossy()]));
    let row = rows.lines().find(|line| line.starts_with("| `start 3` |"));
    assert!(
        row.is_some_and(|row| {
            row.ends_with("| 40 min | 41 min | 2026-11-27, 3 of 4 participants |")
        }),
        "{rows}"
    );
}

// ---------------------------------------------------------------------------
// The room's own tools: an editor's habits, rust-analyzer, a second terminal.

/// The authors' body of step 3's `EventLoop::call_at`, its inner lines.
const CALL_AT_BODY: &str = "let sequence = self.next_sequence.get();\n        \
    self.next_sequence.set(sequence + 1);\n        \
    self.timers.borrow_mut().push(Timer {\n            deadline,\n            \
    sequence,\n            callback: Box::new(callback),\n        });";

/// `cargo workshop ARGS` run in `dir`, a folder of the clone.
fn workshop_in(clone: &Clone, dir: &str, args: &[&str]) -> Output {
    Command::new(workshop_program())
        .args(args)
        .current_dir(clone.path(dir))
        .output()
        .expect("the workshop program runs")
}

#[test]
fn a_block_comment_with_a_brace_in_a_written_function_is_only_a_comment() {
    let clone = Clone::new("block-comment");
    assert!(clone.workshop(&["start", "3"]).status.success());
    write_in_place_of_todo(
        &clone,
        "EventLoop::call_at",
        &format!(
            "/* first try: if x {{ */\n        let s = r#\"}}\"#;\n        \
             let _ = (s, '{{', b'}}');\n        {CALL_AT_BODY}"
        ),
    );
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains("started: 1 of 5 written, next `Timer::cmp`"),
        "status said:\n{status}"
    );
}

#[test]
fn start_force_on_a_half_typed_function_names_it_and_cuts_nothing() {
    let clone = Clone::new("half-typed");
    assert!(clone.workshop(&["start", "3"]).status.success());
    write_in_place_of_todo(
        &clone,
        "EventLoop::call_at",
        "let sequence = self.next_sequence.get();\n        if sequence > 0 {",
    );
    let typed = clone.read(STEP3);
    for args in [&["start", "3", "--force"][..], &["status"]] {
        let said = clone.workshop(args);
        let all = format!("{}{}", stdout(&said), stderr(&said));
        assert!(
            all.contains("`EventLoop::call_at` (src/lib.rs:")
                && all.contains("do not pair up"),
            "{args:?} said:\n{all}"
        );
    }
    assert_eq!(clone.read(STEP3), typed, "start --force changed the file");
}

#[test]
fn backups_a_bom_and_a_latin1_byte_are_named_for_what_they_are() {
    let clone = Clone::new("editor-files");
    start_and_write_call_at(&clone);
    let written = clone.read(STEP3);
    // An editor's backups, and a copy with the authors' markers in it.
    for backup in ["lib.rs~", "#lib.rs#", "lib.rs.bak", "lib_old.rs"] {
        clone.write(&format!("step03-sleep/src/{backup}"), &written);
    }
    clone.write(STEP3, &format!("\u{feff}{written}\n"));
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains("started: 1 of 5 written, next `Timer::cmp`")
            && !status.contains("number them"),
        "status said:\n{status}"
    );
    let mut latin1 = written
        .replacen("// my own", "// caf\u{e9}", 1)
        .into_bytes();
    let at = latin1
        .windows(2)
        .position(|pair| pair == "\u{e9}".as_bytes())
        .expect("the é");
    latin1.splice(at..at + 2, [0xE9]);
    fs::write(clone.path(STEP3), latin1).expect("the clone is writable");
    let line = written
        .lines()
        .position(|line| line.contains(MY_CALL_AT))
        .expect("my line")
        + 1;
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.contains(&format!("src/lib.rs is not UTF-8 text: line {line} ")),
        "status said:\n{status}"
    );
}

#[test]
fn a_plan_a_doc_or_a_parameter_around_a_blank_function_is_work() {
    let clone = Clone::new("notes");
    assert!(clone.workshop(&["start", "3"]).status.success());
    let blank = clone.read(STEP3);
    for (from, to) in [
        (
            "    pub fn call_at(",
            "    // MY PLAN: push a Timer\n    pub fn call_at(",
        ),
        (
            "/// Schedules `callback` to run once the clock",
            "/// Mine: schedules `callback` to run once the clock",
        ),
        ("        deadline: Instant,\n", "        at: Instant,\n"),
    ] {
        assert!(blank.contains(from), "{from}");
        clone.write(STEP3, &blank.replacen(from, to, 1));
        let status = stdout(&clone.workshop(&["status"]));
        assert!(
            status.contains("1 in progress"),
            "{to}: status said:\n{status}"
        );
        for args in [&["reset", "3"][..], &["start", "3"]] {
            let refused = clone.workshop(args);
            assert_eq!(refused.status.code(), Some(2), "{args:?} after {to}");
            assert!(
                stderr(&refused).contains("`EventLoop::call_at`"),
                "{}",
                stderr(&refused)
            );
            assert!(clone.read(STEP3).contains(to), "{args:?} lost {to}");
        }
    }
}

#[cfg(unix)]
#[test]
fn reset_force_removes_a_link_never_what_it_points_to() {
    let clone = Clone::new("link");
    let outside = clone.dir.with_extension("outside");
    fs::create_dir_all(&outside).expect("a folder outside the workshop");
    fs::write(outside.join("precious.txt"), "mine").expect("a file there");
    std::os::unix::fs::symlink(&outside, clone.path("step03-sleep/notes"))
        .expect("a link");
    let reset = clone.workshop(&["reset", "3", "--force"]);
    let kept = fs::read_to_string(outside.join("precious.txt"));
    let _ = fs::remove_dir_all(&outside);
    assert!(reset.status.success(), "{}", stderr(&reset));
    assert_eq!(
        kept.ok().as_deref(),
        Some("mine"),
        "reset emptied the folder"
    );
    assert!(
        fs::symlink_metadata(clone.path("step03-sleep/notes")).is_err(),
        "the link is still there"
    );
}

/// Step 3 as a participant who wrote all five functions leaves it, with
/// one of them wrong: `Timer::cmp` orders by deadline alone.
fn write_step3_with_a_wrong_cmp(clone: &Clone) {
    let right =
        "(other.deadline, other.sequence).cmp(&(self.deadline, self.sequence))";
    let authors = clone.read(STEP3);
    assert!(authors.contains(right), "the authors' Timer::cmp");
    clone.write(
        STEP3,
        &authors.replacen(right, "other.deadline.cmp(&self.deadline)", 1),
    );
}

#[test]
fn freeze_refuses_a_zip_download_and_a_step_started_here() {
    let stored = "tests/authors/step03-sleep.txt";
    let zip = Clone::zip("freeze-zip");
    let before = zip.read(stored);
    write_step3_with_a_wrong_cmp(&zip);
    let refused = zip.xtask(&["freeze", "3"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stdout(&refused));
    assert!(
        stderr(&refused).contains("not a git repository of its own"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(zip.read(stored), before, "freeze stored the participant's");

    let clone = Clone::new("freeze-started");
    let authors = clone.read(STEP3);
    assert!(clone.workshop(&["start", "3"]).status.success());
    clone.write(STEP3, &authors);
    write_step3_with_a_wrong_cmp(&clone);
    let refused = clone.xtask(&["freeze", "3"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stdout(&refused));
    assert!(
        stderr(&refused).contains("Step 3 was started here"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(clone.read(stored), before);
}

#[test]
fn diff_takes_a_path_from_the_root_or_from_the_step_folder() {
    let clone = Clone::new("diff-path");
    start_and_write_call_at(&clone);
    for (dir, path) in [
        (".", "step03-sleep/src/lib.rs"),
        (".", "src/lib.rs"),
        ("step03-sleep", "src/lib.rs"),
        ("step03-sleep/src", "lib.rs"),
    ] {
        let diff = workshop_in(&clone, dir, &["diff", "3", path]);
        assert!(diff.status.success(), "{dir} {path}: {}", stderr(&diff));
        assert!(
            stdout(&diff).contains(MY_CALL_AT),
            "diff 3 {path} in {dir} said:\n{}",
            stdout(&diff)
        );
    }
    let nobody = clone.workshop(&["diff", "3", "src/nothing.rs"]);
    assert_eq!(nobody.status.code(), Some(2), "{}", stdout(&nobody));
}

/// The authors' copies in `tests/authors/` are the steps as committed. A
/// change to a step's file outside its track (each `main.rs`, when the
/// stdout hook moved to `plumbing`) that is not stored again with `cargo
/// xtask freeze` makes `status` tell every participant that the step
/// "differs outside the track". Left out of the README's command, where a
/// participant's own committed work would fail it; `.ci/run` runs it.
#[test]
#[ignore = "a check of the authors' copies: .ci/run runs it"]
fn the_stored_authors_copies_are_the_committed_steps() {
    let clone = Clone::new("stored");
    let status = stdout(&clone.workshop(&["status"]));
    assert!(
        status.lines().count() == 8 && !status.contains("differ"),
        "a step's stored copy is stale: run `{FREEZE_COMMAND}` and \
         commit tests/authors/\n{status}"
    );
}

/// The tool's size is counted as its files' lines up to their first
/// `#[cfg(test)]` (the count in CONTRIBUTING.md). A test module declared above
/// production code hid 440 of check's lines from that count once; so in
/// every file of the tool, nothing but tests follows the first one.
#[test]
fn in_the_tools_files_tests_come_after_all_the_code() {
    let src = workspace_root().join("workshop/src");
    let items = [
        "pub ", "fn ", "impl ", "struct ", "enum ", "const ", "static ", "use ",
        "mod ",
    ];
    for file in workshop_tests::files_below(&src) {
        let rust = Path::new(&file).extension().is_some_and(|ext| ext == "rs");
        if !rust || file.ends_with("tests.rs") || file.contains("tests/") {
            continue;
        }
        let text = fs::read_to_string(src.join(&file)).expect("a source file");
        let Some(start) = text.find("\n#[cfg(test)]\n") else {
            continue;
        };
        let after_tests: Vec<&str> = text[start..]
            .lines()
            .filter(|line| items.iter().any(|item| line.starts_with(item)))
            .filter(|line| !line.starts_with("mod tests"))
            .collect();
        assert!(
            after_tests.is_empty(),
            "workshop/src/{file}: code after its first #[cfg(test)]: {after_tests:?}"
        );
    }
}
