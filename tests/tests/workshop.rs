//! `cargo workshop` when the participant does what participants do:
//! cleans the folder with `git clean -fdx` halfway through a step, copies a
//! step folder to keep a version, deletes a marker line, asks for `--help`.
//! Each test works in a fresh clone of the repository, so nothing here can
//! touch the checkout the tests run in.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use workshop_tests::workspace_root;

/// A clone of the repository in a folder of its own, removed when dropped.
struct Clone {
    dir: PathBuf,
}

impl Clone {
    fn new(name: &str) -> Clone {
        let dir = std::env::temp_dir()
            .join(format!("workshop-test-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        git(
            &workspace_root(),
            &[
                "clone",
                "--quiet",
                "--no-hardlinks",
                ".",
                &dir.to_string_lossy(),
            ],
        );
        Clone { dir }
    }

    /// `cargo workshop ARGS`, run in the clone with this checkout's build of
    /// the program.
    fn workshop(&self, args: &[&str]) -> Output {
        Command::new(workshop_binary())
            .args(args)
            .current_dir(&self.dir)
            .output()
            .expect("the workshop program runs")
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
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn workshop_binary() -> PathBuf {
    escargot::CargoBuild::new()
        .manifest_path(workspace_root().join("Cargo.toml"))
        .package("workshop-tests")
        .bin("workshop")
        .run()
        .expect("the workshop program builds")
        .path()
        .to_path_buf()
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?} failed");
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

#[test]
fn reset_puts_back_the_committed_files_even_with_its_notes_gone() {
    let clone = Clone::new("reset");
    start_and_write_call_at(&clone);
    let _ = fs::remove_dir_all(clone.path(".workshop"));
    let reset = clone.workshop(&["reset", "3", "--force"]);
    assert!(
        stdout(&reset).contains("Step 3 is back as committed."),
        "{}",
        stderr(&reset)
    );
    git(&clone.dir, &["diff", "--quiet", "--", "step03-sleep"]);
    let again = clone.workshop(&["reset", "3"]);
    assert!(
        stdout(&again).contains("as committed already"),
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

#[test]
fn verify_refuses_a_step_started_here() {
    let clone = Clone::new("verify");
    assert!(clone.workshop(&["start", "3"]).status.success());
    let refused = clone.workshop(&["verify", "3"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("step 3 is started here"),
        "{}",
        stderr(&refused)
    );
}
