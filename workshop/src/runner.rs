//! Runs a step's tests for `cargo workshop check`, so that whatever a
//! participant wrote gets a verdict in bounded time and memory: Cargo
//! builds the test executables (`build`), and every test runs as a process
//! of its own, a few at a time, each with a deadline and a memory limit
//! (`schedule`, `memory`, `processes`); a verdict rests on its exit status
//! and on signs looked for in all it printed (`verdict`, `output`). Plain
//! `cargo test` cannot stop one test, nor bound its memory; cargo-nextest
//! would have to be installed. Every clock and count is in `limits`.

use std::env;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod build;
mod limits;
mod memory;
mod output;
mod processes;
mod program;
mod programs;
mod schedule;
mod verdict;

pub use build::{
    Built, CompileError, TestBinary, Warning, build_programs, build_tests,
};

pub use limits::{
    AT_ONCE, AT_ONCE_WHEN_HURRIED, ENOUGH_HANGS, HUNG_AFTER, HURRIED,
    MEMORY_LIMIT_GIB, PATIENCE, PAUSED_AT_MOST, PROBE_DEADLINE, RERUNS_AT_ONCE,
    SLOW, TEST_DEADLINE, TICK,
};

pub use memory::TOGETHER_GIB;

#[cfg(unix)]
pub use processes::interrupts;
pub use processes::{
    Paused, adopt_orphans, end_everything_and_exit, end_everything_on_interrupt,
    end_leftovers_of_killed_checks, record_tests_in,
};

pub use program::{Printed, merged_output_within};
pub use programs::remove as remove_programs;

pub use schedule::{
    Ran, Settings, SoFar, TestCase, list_tests, run_tests, run_tests_until,
};

pub use verdict::{Outcome, TestRun};

/// Says on stderr what `check` is doing, with the seconds since it began.
#[derive(Debug, Clone)]
pub struct Progress {
    began: Instant,
    quiet: bool,
}

impl Progress {
    /// `quiet` for callers that run `check` many times (`verify`).
    pub fn new(quiet: bool) -> Self {
        Progress {
            began: Instant::now(),
            quiet,
        }
    }

    /// A stderr closed (`check 3 2>&1 | head -4`) ends the check quietly,
    /// with the tests it started, as a closed pipe ends `cat`: `eprintln!`
    /// panicked there, and left the tests running with no parent.
    pub fn say(&self, what: &str) {
        if self.quiet {
            return;
        }
        let line = format!("[{:>3} s] {what}", self.began.elapsed().as_secs());
        if writeln!(io::stderr(), "{line}").is_err() {
            processes::end_everything_and_exit(plumbing::console::STDOUT_CLOSED);
        }
    }
}

/// Cargo, run on the workspace at `root` with colour off (its output is
/// parsed), and in `target_dir` when one is given, else where Cargo would
/// build anyway (`CARGO_TARGET_DIR`, the config, or `target/`).
#[derive(Debug, Clone)]
pub struct Cargo {
    pub root: PathBuf,
    pub target_dir: Option<PathBuf>,
}

impl Cargo {
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command =
            Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
        command
            .current_dir(&self.root)
            .args(args)
            .env("CARGO_TERM_COLOR", "never");
        if let Some(dir) = self.chosen_target_dir() {
            command.env("CARGO_TARGET_DIR", dir);
        }
        command
    }

    /// The target folder given (`verify`), else the participant's own
    /// `CARGO_TARGET_DIR` made absolute as Cargo reads it: against the
    /// folder they ran `cargo workshop` in. Passed on as it is, a relative
    /// one named another folder for every Cargo started elsewhere (a
    /// test's, in `tests/`), which built the whole workspace again there.
    fn chosen_target_dir(&self) -> Option<PathBuf> {
        if let Some(dir) = &self.target_dir {
            return Some(dir.clone());
        }
        let here = env::current_dir().ok()?;
        Some(as_cargo_reads_it(
            &PathBuf::from(env::var_os("CARGO_TARGET_DIR")?),
            &here,
        ))
    }

    /// The folder Cargo builds in, as `cargo metadata` says.
    pub fn target_dir(&self) -> Result<PathBuf, String> {
        if let Some(dir) = &self.target_dir {
            return Ok(dir.clone());
        }
        let output = self
            .command(&["metadata", "--format-version", "1", "--no-deps"])
            .output()
            .map_err(|err| format!("could not run cargo: {err}"))?;
        let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
            .map_err(|err| format!("cargo metadata: {err}"))?;
        metadata["target_directory"]
            .as_str()
            .map(PathBuf::from)
            .ok_or_else(|| "cargo metadata names no target folder".to_owned())
    }

    /// The environment of a test process: what `cargo test` would give it,
    /// plus settings that keep its output plain and its snapshots unwritten.
    fn test_env(&self) -> Vec<(String, String)> {
        let mut vars = vec![
            // Colour codes would garble the messages `check` shows, whatever
            // the participant's settings (insta's diffs obey these).
            ("CARGO_TERM_COLOR".to_owned(), "never".to_owned()),
            ("NO_COLOR".to_owned(), "1".to_owned()),
            ("CLICOLOR_FORCE".to_owned(), "0".to_owned()),
            ("INSTA_UPDATE".to_owned(), "no".to_owned()),
            ("RUST_BACKTRACE".to_owned(), "0".to_owned()),
            (
                crate::PATIENCE_VAR.to_owned(),
                PATIENCE.as_secs().to_string(),
            ),
            // As `cargo test` does: a test finds the workspace by it
            // (`workspace_root`), and one run in a copy must find the copy.
            (
                "CARGO_MANIFEST_DIR".to_owned(),
                self.root.join("tests").display().to_string(),
            ),
        ];
        if let Some(dir) = self.chosen_target_dir() {
            vars.push(("CARGO_TARGET_DIR".to_owned(), dir.display().to_string()));
        }
        vars
    }
}

/// A `CARGO_TARGET_DIR` as Cargo reads it when run in `here`: a relative
/// one (even `~/target`, which no shell expanded once quoted) is below
/// `here`.
fn as_cargo_reads_it(dir: &Path, here: &Path) -> PathBuf {
    if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        here.join(dir)
    }
}

#[cfg(test)]
mod tests;
