//! Building a step's tests (`cargo test --no-run --message-format=json`
//! names the executables), then the programs and examples they run. What
//! Cargo says is read as it comes: the executables, the compiler's
//! warnings, and the first compile error.

use std::collections::VecDeque;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::output::lines_in_background;
use super::{Cargo, Progress, TICK, processes, programs};

/// A test executable Cargo built: `tests/tests/<file>.rs` as `path`.
#[derive(Debug, Clone)]
pub struct TestBinary {
    pub file: String,
    pub path: PathBuf,
}

/// The first compile error, and the folder of the package it is in.
#[derive(Debug, Clone)]
pub struct CompileError {
    pub package_dir: Option<PathBuf>,
    pub message: String,
}

/// What building the tests made: their executables, and the compiler's
/// warnings.
#[derive(Debug, Clone, Default)]
pub struct Built {
    pub binaries: Vec<TestBinary>,
    pub warnings: Vec<Warning>,
}

/// A compiler warning: where (a path relative to the workspace, a line),
/// and the compiler's own text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub file: String,
    pub line: usize,
    pub rendered: String,
}

/// Builds the `workshop-tests` test files `files`: their executables and
/// the compiler's warnings, or the first compile error.
pub fn build_tests(
    cargo: &Cargo,
    files: &[String],
    progress: &Progress,
) -> Result<Result<Built, CompileError>, String> {
    // `--workspace`, as the README's `cargo test --workspace`: the same
    // features for every dependency, so what that built is reused here.
    let mut args = vec!["test", "--workspace", "--no-run"];
    for file in files {
        args.extend(["--test", file.as_str()]);
    }
    let mut built = Built::default();
    let mut first_error = None;
    let mut last_built = String::from("nothing yet");
    let (status, mut stderr) = run_cargo(cargo, &args, progress, |message| {
        if let Some(name) = message["target"]["name"].as_str() {
            name.clone_into(&mut last_built);
        }
        built.binaries.extend(test_binary(message));
        if first_error.is_none() {
            first_error = compile_error(message);
        }
        if let Some(warning) = warning(message) {
            if !built.warnings.contains(&warning) {
                built.warnings.push(warning);
            }
        }
        format!("still building (last built: {last_built})")
    })?;
    if status.success() {
        return Ok(Ok(built));
    }
    Ok(Err(first_error.unwrap_or_else(|| CompileError {
        package_dir: None,
        message: stderr.tail(15),
    })))
}

/// Builds what step `package`'s tests run besides themselves, its program
/// and its examples (`crate::example_build_args`), and returns the folder
/// where they wait for the tests (`crate::PREBUILT_PROGRAMS`): a test that
/// called Cargo itself waited, inside its deadline, for another Cargo that
/// held the build folder. The examples are named: `--examples` also built
/// the benchmarks' example, and with it tokio and divan.
pub fn build_programs(
    cargo: &Cargo,
    package: &str,
    progress: &Progress,
) -> Result<PathBuf, String> {
    let mut args = vec!["build".to_owned(), "--bin".to_owned(), package.to_owned()];
    args.extend(crate::example_build_args(package));
    for example in examples_the_tests_run(&cargo.root, package) {
        args.extend(["--example".to_owned(), example]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut built = Vec::new();
    let (status, mut stderr) = run_cargo(cargo, &args, progress, |message| {
        built.extend(program_built(message, package));
        format!("still building {package}'s program")
    })?;
    if !status.success() {
        return Err(format!(
            "`cargo {}` failed:\n{}",
            args.join(" "),
            stderr.tail(15)
        ));
    }
    programs::hand_over(package, &built).map_err(|err| {
        format!("could not keep {package}'s programs for its tests: {err}")
    })
}

/// Runs Cargo with `args` (noted, so that an interrupt ends it), handing
/// each JSON message it prints to `read` (first `Null`), which says what
/// the progress line says every `TICK` meanwhile.
fn run_cargo(
    cargo: &Cargo,
    args: &[&str],
    progress: &Progress,
    mut read: impl FnMut(&serde_json::Value) -> String,
) -> Result<(ExitStatus, CargoStderr), String> {
    let mut command = cargo.command(args);
    command
        .args(["--message-format=json", "--color", "never"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = processes::spawn_cargo(&mut command)
        .map_err(|err| format!("could not run cargo: {err}"))?;
    let mut stderr = CargoStderr {
        lines: lines_in_background(child.stderr.take()),
        kept: VecDeque::new(),
        told_of_a_lock: false,
    };
    let messages = lines_in_background(child.stdout.take());
    let mut still = read(&serde_json::Value::Null);
    let mut last_said = Instant::now();
    loop {
        match messages.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                if let Ok(message) = serde_json::from_str(&line) {
                    still = read(&message);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        stderr.tell_of_a_lock(progress);
        if last_said.elapsed() >= TICK {
            progress.say(&still);
            last_said = Instant::now();
        }
    }
    let status = child.wait();
    processes::forget_cargo(&child);
    let status = status.map_err(|err| format!("cargo did not end: {err}"))?;
    Ok((status, stderr))
}

/// The program a `compiler-artifact` message names, if it is one the
/// tests of `package` run: its place among the programs handed over
/// (`package` for its binary, `examples/package/example` for an example,
/// and `examples/workshop-tests/trace_scenes` for the traced scenes) and
/// its path.
fn program_built(
    message: &serde_json::Value,
    package: &str,
) -> Option<(String, PathBuf)> {
    if message["reason"] != "compiler-artifact" {
        return None;
    }
    let target = &message["target"];
    let name = target["name"].as_str()?;
    let place = if is_kind(target, "bin") && name == package {
        package.to_owned()
    } else if is_kind(target, "example") && name == "trace_scenes" {
        format!("examples/workshop-tests/{name}")
    } else if is_kind(target, "example") {
        format!("examples/{package}/{name}")
    } else {
        return None;
    };
    Some((place, PathBuf::from(message["executable"].as_str()?)))
}

fn is_kind(target: &serde_json::Value, kind: &str) -> bool {
    let kinds = target["kind"].as_array();
    kinds.is_some_and(|kinds| kinds.iter().any(|other| other == kind))
}

/// What Cargo says on stderr as it builds: its last lines, kept for an
/// error, and whether it waits for another Cargo's lock.
struct CargoStderr {
    lines: Receiver<String>,
    kept: VecDeque<String>,
    told_of_a_lock: bool,
}

impl CargoStderr {
    /// Takes the lines Cargo printed so far, and says once that it waits
    /// for another Cargo: a check that seems stuck for a minute is then
    /// understood, not killed.
    fn tell_of_a_lock(&mut self, progress: &Progress) {
        while let Ok(line) = self.lines.try_recv() {
            self.keep(line, progress);
        }
    }

    fn keep(&mut self, line: String, progress: &Progress) {
        if line.contains("Blocking waiting for file lock") && !self.told_of_a_lock {
            progress.say(
                "waiting for another cargo (rust-analyzer, or a second \
                 terminal?) to finish; the check goes on when it has",
            );
            self.told_of_a_lock = true;
        }
        self.kept.push_back(line);
        if self.kept.len() > 200 {
            self.kept.pop_front();
        }
    }

    /// Cargo's last `count` lines, once it has ended (or, if something it
    /// started still holds the pipe, what came within a few seconds).
    fn tail(&mut self, count: usize) -> String {
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.keep(line, &Progress::new(true));
        }
        let skip = self.kept.len().saturating_sub(count);
        let lines: Vec<&str> =
            self.kept.iter().skip(skip).map(String::as_str).collect();
        lines.join("\n")
    }
}

/// The test executable a `compiler-artifact` message names, if it is one.
fn test_binary(message: &serde_json::Value) -> Option<TestBinary> {
    let target = &message["target"];
    if message["reason"] != "compiler-artifact" || !is_kind(target, "test") {
        return None;
    }
    Some(TestBinary {
        file: target["name"].as_str()?.to_owned(),
        path: PathBuf::from(message["executable"].as_str()?),
    })
}

/// The diagnostic of `level` a `compiler-message` message carries, if any.
fn diagnostic<'m>(
    message: &'m serde_json::Value,
    level: &str,
) -> Option<&'m serde_json::Value> {
    let diagnostic = &message["message"];
    (message["reason"] == "compiler-message" && diagnostic["level"] == level)
        .then_some(diagnostic)
}

/// The warning a message carries, if any, where its main span is.
fn warning(message: &serde_json::Value) -> Option<Warning> {
    let diagnostic = diagnostic(message, "warning")?;
    let spans = diagnostic["spans"].as_array()?;
    let span = spans.iter().find(|span| span["is_primary"] == true)?;
    Some(Warning {
        file: span["file_name"].as_str()?.to_owned(),
        line: usize::try_from(span["line_start"].as_u64()?).ok()?,
        rendered: diagnostic["rendered"].as_str()?.trim_end().to_owned(),
    })
}

/// The error a message carries, if any, and its package's folder.
fn compile_error(message: &serde_json::Value) -> Option<CompileError> {
    let diagnostic = diagnostic(message, "error")?;
    let manifest = message["manifest_path"].as_str().map(Path::new);
    Some(CompileError {
        package_dir: manifest.and_then(Path::parent).map(Path::to_path_buf),
        message: diagnostic["rendered"]
            .as_str()
            .unwrap_or_default()
            .trim_end()
            .to_owned(),
    })
}

/// The examples a step's tests run: the step's own (`stepNN-*/examples/`,
/// as `cargo run -p stepNN --example NAME` runs them), and the traced
/// scenes of the tests' package (`tests/examples/trace_scenes.rs`).
fn examples_the_tests_run(root: &Path, package: &str) -> Vec<String> {
    let prefix = format!("{package}-");
    let folders = fs::read_dir(root).into_iter().flatten().flatten();
    let step = folders
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix));
    let files = step.flat_map(|folder| fs::read_dir(folder.path().join("examples")));
    let mut examples: Vec<String> = files
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .filter_map(|path| Some(path.file_stem()?.to_string_lossy().into_owned()))
        .chain(["trace_scenes".to_owned()])
        .collect();
    examples.sort();
    examples.dedup();
    examples
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_own_examples_and_the_traced_scenes_are_built_not_the_benchmarks() {
        let root = crate::workspace_root();
        assert_eq!(
            examples_the_tests_run(&root, "step05"),
            ["step05_lost_wake_up", "trace_scenes"]
        );
        assert_eq!(examples_the_tests_run(&root, "step03"), ["trace_scenes"]);
    }
}
