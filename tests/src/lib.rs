//! Plumbing shared by the workshop's tests: build and run a step's real
//! binary, and turn what it printed into a transcript a snapshot can pin;
//! read the book's sources (`book`) so its checks can find what mdBook misses.

pub mod book;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds `package`'s binary from the current source and runs it with `args`.
///
/// The build goes through Cargo every time. Running a binary left in
/// `target/` by some earlier build could test stale code and pass; Cargo's
/// own freshness check is what guarantees the binary matches the source.
pub fn run_step(package: &str, args: &[&str]) -> Transcript {
    let output = step_command(package)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("could not run {package}: {err}"));
    Transcript {
        command: command_line(package, args),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        exit_code: output.status.code(),
    }
}

/// A `Command` for `package`'s freshly built binary, for tests that talk to
/// it while it runs (servers) rather than wait for it to finish.
pub fn step_command(package: &str) -> Command {
    let binary = escargot::CargoBuild::new()
        .manifest_path(workspace_root().join("Cargo.toml"))
        .package(package)
        .bin(package)
        .run()
        .unwrap_or_else(|err| panic!("could not build {package}: {err}"));
    binary.command()
}

/// The repository's root folder, where the workspace `Cargo.toml` is.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package sits one folder below the root")
        .to_path_buf()
}

/// Everything a participant sees when running a step: the command, what it
/// printed on each stream, and how it exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    pub command: String,
    pub stdout: String,
    pub stderr: String,
    pub exit_code: Option<i32>,
}

impl fmt::Display for Transcript {
    /// The form the snapshots and the book show: a shell session.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "$ {}", self.command)?;
        f.write_str(&self.stdout)?;
        if !self.stderr.is_empty() {
            writeln!(f, "[stderr]")?;
            f.write_str(&self.stderr)?;
        }
        match self.exit_code {
            Some(code) => writeln!(f, "[exit code: {code}]"),
            None => writeln!(f, "[killed by a signal]"),
        }
    }
}

fn command_line(package: &str, args: &[&str]) -> String {
    let mut line = format!("cargo run -p {package}");
    if !args.is_empty() {
        line.push_str(" --");
        for arg in args {
            line.push(' ');
            line.push_str(arg);
        }
    }
    line
}

/// Snapshot settings that hide the numbers that change from run to run.
///
/// Measured durations are printed with two decimals (`0.70 s`) and become
/// `#.## s`; fixed durations in labels use one decimal (`sleep 0.5 s`) and
/// stay. The claims behind the hidden numbers are tested on their own.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\b\d+\.\d{2} s\b", "#.## s");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}
