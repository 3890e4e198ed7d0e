//! The build `start` leaves running in the background, detached, as
//! `check N --build-only`: what the step's first `check` builds, then the
//! probe's copy, while the participant reads the chapter (without it, a
//! first `check` spent most of a minute compiling). It holds a lock while
//! it builds, so a `check` started meanwhile says it waits (Cargo would
//! make it wait silently). Only at a terminal, unless `WORKSHOP_BUILD_AHEAD`
//! says `1` or `0`.

use std::env;
use std::fs::{self, File};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use super::{build, lock, probe, test_files};
use crate::runner::{Cargo, Progress};
use crate::step::Step;

/// The flag of `check` that builds and runs nothing.
pub const BUILD_ONLY: &str = "--build-only";

/// `1` builds ahead, `0` does not; unset, only at a terminal.
pub const VAR: &str = "WORKSHOP_BUILD_AHEAD";

/// The folder of the lock and the logs, in Cargo's target folder.
fn dir(target: &Path) -> PathBuf {
    target.join("workshop-ahead")
}

/// Whether `start` builds ahead: as `VAR` says (`setting`), else only
/// at a terminal.
fn wanted(setting: Option<&str>, at_a_terminal: bool) -> bool {
    match setting {
        Some("1") => true,
        Some("0") => false,
        _ => at_a_terminal,
    }
}

/// For `start`, once the step is blanked: starts `check N --build-only`
/// in the background and returns the line that says so. Not at a
/// terminal, says why nothing is built ahead: the chapters promise it.
/// `None` when nothing was started and nothing is to say.
pub fn start_in_background(step: &Step) -> Option<String> {
    let setting = env::var(VAR).ok();
    if !wanted(setting.as_deref(), std::io::stdout().is_terminal()) {
        return declined(setting.as_deref(), step.number);
    }
    let cargo = Cargo {
        root: step.root.clone(),
        target_dir: None,
    };
    let target = cargo.target_dir().ok()?;
    fs::create_dir_all(dir(&target)).ok()?;
    let log = dir(&target).join(format!("step{:02}.log", step.number));
    let out = File::create(&log).ok()?;
    let mut command = Command::new(env::current_exe().ok()?);
    command
        .args(["check", &step.number.to_string(), BUILD_ONLY])
        .current_dir(&step.root)
        .stdin(Stdio::null())
        .stdout(out.try_clone().ok()?)
        .stderr(out);
    detached(&mut command);
    // Not waited on: it ends when the build does, and `start` returns now.
    drop(command.spawn().ok()?);
    let shown = log.strip_prefix(&step.root).unwrap_or(&log);
    Some(format!(
        "Building step {}'s tests in the background while you read \
         (log: {}); your first check will be quicker.",
        step.number,
        shown.display()
    ))
}

/// What `start` says when it builds nothing ahead for want of a terminal;
/// nothing when `VAR` turned it off.
fn declined(setting: Option<&str>, step: u32) -> Option<String> {
    setting.is_none().then(|| {
        format!(
            "Not building step {step}'s tests in the background: this is not a \
             terminal (a pipe, a script). The first check builds them; \
             {VAR}=1 builds them ahead anyway."
        )
    })
}

/// Out of the participant's terminal: on Unix, a process group of its
/// own, out of reach of Ctrl-C and hang-up; on Windows, no console window.
#[cfg(unix)]
fn detached(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(windows)]
fn detached(command: &mut Command) {
    use std::os::windows::process::CommandExt;
    /// Windows' `CREATE_NO_WINDOW`.
    const NO_WINDOW: u32 = 0x0800_0000;
    command.creation_flags(NO_WINDOW);
}

/// `check N --build-only`: what `check N` builds, holding the lock while
/// it does; then, the lock let go, the probe's copy, which Cargo builds
/// from nothing the first time. What happened, on stderr (the log).
pub fn build_only(step: &Step) -> Result<ExitCode, String> {
    let n = step.number;
    let progress = Progress::new(false);
    let cargo = Cargo {
        root: step.root.clone(),
        target_dir: None,
    };
    let files = test_files(step)?;
    let held = cargo.target_dir().ok().and_then(|target| {
        fs::create_dir_all(dir(&target)).ok()?;
        lock::hold(&dir(&target).join("lock"), || {
            progress.say("another build ahead is running: waiting for it");
        })
        .ok()
    });
    let said = match build(step, &cargo, &files, &progress) {
        Ok(Ok(_)) => {
            format!("built: `cargo workshop check {n}` runs the tests at once")
        }
        Ok(Err(_)) => format!(
            "the step does not compile as it is: `cargo workshop check {n}` says where"
        ),
        Err(err) => format!("{err}: `cargo workshop check {n}` will build it all"),
    };
    progress.say(&said);
    drop(held);
    progress.say("building the copy `check` tries the authors' functions in");
    match probe::prepare(step, &cargo, &progress) {
        Ok(copy) => {
            probe::build_ahead(step, &copy, &[], &files);
            progress.say("the copy is built");
        }
        Err(err) => progress.say(&format!("the copy: {err}")),
    }
    Ok(ExitCode::SUCCESS)
}

/// For `check`: if a build ahead is still running, says so and waits for
/// it to end.
pub(super) fn wait_for_it(cargo: &Cargo, progress: &Progress) {
    let Ok(target) = cargo.target_dir() else {
        return;
    };
    let lock = dir(&target).join("lock");
    if !lock.exists() {
        return;
    }
    let _ = lock::hold(&lock, || {
        let dir = dir(&target);
        progress.say(&format!(
            "the build `start` began in the background is still running \
             (its log is in {}): waiting for it",
            dir.strip_prefix(&cargo.root).unwrap_or(&dir).display()
        ));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_terminal_start_says_why_it_builds_nothing_ahead() {
        let said = declined(None, 3).expect("a line");
        assert!(said.contains("step 3's tests"), "{said}");
        assert!(said.contains("WORKSHOP_BUILD_AHEAD=1"), "{said}");
        assert_eq!(declined(Some("0"), 3), None, "turned off: nothing to say");
    }

    #[test]
    fn only_a_participant_at_a_terminal_gets_a_build_ahead_unless_told() {
        assert!(wanted(None, true));
        assert!(!wanted(None, false), "a script or a test would get one");
        assert!(wanted(Some("1"), false));
        assert!(!wanted(Some("0"), true));
        assert!(wanted(Some("yes"), true), "an unknown setting: as unset");
    }
}
