//! Runs a step's tests for `cargo workshop check`, so that whatever a
//! participant wrote gets a verdict in bounded time and memory.
//!
//! Plain `cargo test` cannot promise that: one test that never ends holds
//! its whole test binary, libtest's "running for over 60 seconds" note is
//! captured, and a test that allocates without end takes the machine with
//! it. cargo-nextest solves the first two, but a participant would have to
//! install it, and `check` needs more anyway (a memory limit, one test's
//! own message after an abort, reruns of a few tests in a copy). So this
//! module does it itself: Cargo builds the test executables and names them
//! (`cargo test --no-run --message-format=json`), each executable lists its
//! tests, and every test runs as a process of its own, two at a time, each
//! with a deadline and, on Linux, a memory limit, and the memory of those
//! at once bounded too (`memory`). A verdict rests on the exit status and
//! on signs looked for in all a test printed, however much (`output`).
//! Lines on stderr say what is being built or run, so no minute passes in
//! silence.

use std::collections::VecDeque;
use std::env;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

mod limits;
mod memory;
mod output;
mod processes;

pub use limits::{
    AT_MOST, AT_MOST_HURRIED, AT_ONCE, ENOUGH_HANGS, HANG_SIGN, HURRIED,
    MEMORY_LIMIT_GIB, PATIENCE, PROBE_DEADLINE, RERUNS_AT_ONCE, SLOW, TEST_DEADLINE,
    TICK,
};

pub use memory::TOGETHER_GIB;

use output::Output;

pub use processes::{
    adopt_orphans, end_everything_on_interrupt, end_what_killed_checks_left,
    record_tests_in,
};

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

    pub fn say(&self, what: &str) {
        if !self.quiet {
            eprintln!("[{:>3} s] {what}", self.began.elapsed().as_secs());
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
        if let Some(dir) = &self.target_dir {
            command.env("CARGO_TARGET_DIR", dir);
        }
        command
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
        if let Some(dir) = &self.target_dir {
            vars.push(("CARGO_TARGET_DIR".to_owned(), dir.display().to_string()));
        }
        vars
    }
}

// ---------------------------------------------------------------------------
// Building the test executables.

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
    // features for every dependency, so what that built is reused here
    // (`-p workshop-tests` alone compiled a second rustix, serde, syn and
    // every step).
    let mut args = vec![
        "test",
        "--workspace",
        "--no-run",
        "--message-format=json",
        "--color",
        "never",
    ];
    for file in files {
        args.extend(["--test", file.as_str()]);
    }
    let (mut child, stderr) = spawn_cargo(cargo, &args, Stdio::piped())?;
    let messages = lines_in_background(child.stdout.take());
    let mut binaries = Vec::new();
    let mut warnings = Vec::new();
    let mut first_error = None;
    let mut last_built = String::from("nothing yet");
    let mut last_said = Instant::now();
    loop {
        match messages.recv_timeout(Duration::from_secs(1)) {
            Ok(line) => {
                let Ok(message) = serde_json::from_str::<serde_json::Value>(&line)
                else {
                    continue;
                };
                if let Some(name) = message["target"]["name"].as_str() {
                    name.clone_into(&mut last_built);
                }
                if let Some(binary) = test_binary(&message) {
                    binaries.push(binary);
                }
                if first_error.is_none() {
                    first_error = compile_error(&message);
                }
                if let Some(warning) = warning(&message) {
                    if !warnings.contains(&warning) {
                        warnings.push(warning);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if last_said.elapsed() >= TICK {
            progress.say(&format!("still building (last built: {last_built})"));
            last_said = Instant::now();
        }
    }
    let status = child.wait();
    processes::forget_cargo(&child);
    let status = status.map_err(|err| format!("cargo did not end: {err}"))?;
    if status.success() {
        return Ok(Ok(Built { binaries, warnings }));
    }
    Ok(Err(first_error.unwrap_or_else(|| CompileError {
        package_dir: None,
        message: tail(&collect(&stderr).text, 15),
    })))
}

/// Builds what step `package`'s tests run besides themselves, its program
/// and its examples, as the tests build them (`crate::PROGRAM_BUILD_ARGS`,
/// `crate::example_build_args`): built here, before any test starts, and
/// not by the first test that runs one, inside that test's deadline, which
/// on a busy machine that build alone overran, failing a correct step.
pub fn build_programs(
    cargo: &Cargo,
    package: &str,
    progress: &Progress,
) -> Result<(), String> {
    let mut args = vec!["build".to_owned(), "--bin".to_owned(), package.to_owned()];
    args.extend(crate::example_build_args(package));
    args.push("--examples".to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut child, stderr) = spawn_cargo(cargo, &args, Stdio::null())?;
    let mut last_said = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => thread::sleep(Duration::from_millis(50)),
            Err(err) => break Err(err),
        }
        if last_said.elapsed() >= TICK {
            progress.say(&format!("still building {package}'s program"));
            last_said = Instant::now();
        }
    };
    processes::forget_cargo(&child);
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(_) => Err(format!(
            "`cargo {}` failed:\n{}",
            args.join(" "),
            tail(&collect(&stderr).text, 15)
        )),
        Err(err) => Err(format!("cargo did not end: {err}")),
    }
}

/// Cargo run with `args` (noted, so that an interrupt ends it), its
/// stdout to `stdout`, and its stderr read in the background.
fn spawn_cargo(
    cargo: &Cargo,
    args: &[&str],
    stdout: Stdio,
) -> Result<(Child, Receiver<Output>), String> {
    let mut child = processes::spawn_cargo(
        cargo
            .command(args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped()),
    )
    .map_err(|err| format!("could not run cargo: {err}"))?;
    let stderr = read_in_background(child.stderr.take(), &[]);
    Ok((child, stderr))
}

/// The test executable a `compiler-artifact` message names, if it is one.
fn test_binary(message: &serde_json::Value) -> Option<TestBinary> {
    let target = &message["target"];
    let is_test = target["kind"]
        .as_array()
        .is_some_and(|kinds| kinds.iter().any(|kind| kind == "test"));
    if message["reason"] != "compiler-artifact" || !is_test {
        return None;
    }
    Some(TestBinary {
        file: target["name"].as_str()?.to_owned(),
        path: PathBuf::from(message["executable"].as_str()?),
    })
}

/// The warning a `compiler-message` message carries, if it is one, where
/// its main span is.
fn warning(message: &serde_json::Value) -> Option<Warning> {
    let diagnostic = &message["message"];
    if message["reason"] != "compiler-message" || diagnostic["level"] != "warning" {
        return None;
    }
    let span = diagnostic["spans"]
        .as_array()?
        .iter()
        .find(|span| span["is_primary"] == true)?;
    Some(Warning {
        file: span["file_name"].as_str()?.to_owned(),
        line: usize::try_from(span["line_start"].as_u64()?).ok()?,
        rendered: diagnostic["rendered"].as_str()?.trim_end().to_owned(),
    })
}

/// The error a `compiler-message` message carries, if it is an error.
fn compile_error(message: &serde_json::Value) -> Option<CompileError> {
    let diagnostic = &message["message"];
    if message["reason"] != "compiler-message" || diagnostic["level"] != "error" {
        return None;
    }
    Some(CompileError {
        package_dir: message["manifest_path"]
            .as_str()
            .and_then(|manifest| Path::new(manifest).parent())
            .map(Path::to_path_buf),
        message: diagnostic["rendered"]
            .as_str()
            .unwrap_or_default()
            .trim_end()
            .to_owned(),
    })
}

// ---------------------------------------------------------------------------
// Listing and running tests.

/// One test: `file::name`, in the executable that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    pub file: String,
    pub name: String,
    pub binary: PathBuf,
    /// Set for this run of the test only (beside `Settings::env`): the
    /// probe runs one test several times, each with a different function
    /// of the authors' switched on.
    pub env: Vec<(String, String)>,
}

impl TestCase {
    /// `file::name`, as the `// BUILD` markers name tests.
    pub fn id(&self) -> String {
        format!("{}::{}", self.file, self.name)
    }

    /// `id`, and this run's own environment if it has one: what tells two
    /// runs of one test apart.
    fn label(&self) -> String {
        let env: Vec<String> = self
            .env
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        if env.is_empty() {
            self.id()
        } else {
            format!("{} ({})", self.id(), env.join(" "))
        }
    }
}

/// The tests of `binary` that run (ignored ones left out) whose names start
/// with `prefix`.
pub fn list_tests(
    binary: &TestBinary,
    prefix: &str,
) -> Result<Vec<TestCase>, String> {
    let all = listed(binary, false)?;
    let ignored = listed(binary, true)?;
    Ok(all
        .into_iter()
        .filter(|name| name.starts_with(prefix) && !ignored.contains(name))
        .map(|name| TestCase {
            file: binary.file.clone(),
            name,
            binary: binary.path.clone(),
            env: Vec::new(),
        })
        .collect())
}

fn listed(binary: &TestBinary, ignored: bool) -> Result<Vec<String>, String> {
    let mut command = Command::new(&binary.path);
    command.args(["--list", "--format", "terse"]);
    if ignored {
        command.arg("--ignored");
    }
    let output = command.output().map_err(|err| {
        format!("could not list the tests of {}: {err}", binary.file)
    })?;
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect())
}

/// How one test ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// It panicked: the panic's own lines.
    Failed(String),
    /// It ran past its deadline and was stopped.
    TimedOut(Duration),
    /// It crashed: its stack overflowed (what it printed).
    StackOverflow(String),
    /// It hit the memory limit (what it printed).
    OutOfMemory(String),
    /// It ended some other way: aborted, or killed by a signal.
    Crashed(String),
    /// Its process ended with success before the test did: libtest never
    /// said it passed (what it printed).
    EndedEarly(String),
}

impl Outcome {
    pub fn passed(&self) -> bool {
        *self == Outcome::Passed
    }

    /// What the test printed about its end, if anything.
    pub fn message(&self) -> &str {
        match self {
            Outcome::Passed | Outcome::TimedOut(_) => "",
            Outcome::Failed(text)
            | Outcome::StackOverflow(text)
            | Outcome::OutOfMemory(text)
            | Outcome::Crashed(text)
            | Outcome::EndedEarly(text) => text,
        }
    }

    /// One line for the progress: how it ended.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Passed => "passed".to_owned(),
            Outcome::Failed(_) => "failed".to_owned(),
            Outcome::TimedOut(after) => {
                format!("did not finish in {} s: stopped", after.as_secs())
            }
            Outcome::StackOverflow(_) => "stack overflow".to_owned(),
            Outcome::OutOfMemory(_) => "used too much memory: stopped".to_owned(),
            Outcome::Crashed(_) => "crashed".to_owned(),
            Outcome::EndedEarly(_) => {
                "ended its process before it finished".to_owned()
            }
        }
    }
}

/// A test and how it ended.
#[derive(Debug, Clone)]
pub struct TestRun {
    pub case: TestCase,
    pub outcome: Outcome,
    pub took: Duration,
}

impl TestRun {
    /// Whether it looks like a loop that never ends: stopped at the
    /// deadline or the memory limit, or failed only after `HANG_SIGN` (a
    /// test's own guard, `within`, gave up).
    pub fn hung(&self) -> bool {
        match self.outcome {
            Outcome::TimedOut(_) | Outcome::OutOfMemory(_) => true,
            Outcome::Passed => false,
            _ => self.took >= HANG_SIGN,
        }
    }
}

/// Where and how the tests run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The folder `cargo test` runs a test in: the package's (`tests/`).
    pub package_dir: PathBuf,
    pub deadline: Duration,
    pub env: Vec<(String, String)>,
    /// Once this many tests hung, each test left may run only `HURRIED`,
    /// and is left out if it runs longer: the step surely hangs, and each
    /// more hang would cost a deadline, but a quick failure may still name
    /// the function. So too, when set, once every test has started, those
    /// running all seem stuck, and one failed with a message.
    pub enough_hangs: Option<usize>,
    /// `SLOW` and `HURRIED`, but for this module's own tests, which wait
    /// them out and need not wait 5 s to see what happens after.
    pub slow: Duration,
    pub hurried: Duration,
    /// How many run at once from the start (`AT_ONCE`; the probe's reruns,
    /// which mostly wait on a hang, all at once).
    pub at_once: usize,
    /// The test files not run at all once enough tests hung (`check`: the
    /// demos' traces and snapshots, which take seconds when right, and
    /// hang with the rest when the loop does).
    pub left_out_when_hurried: Vec<String>,
}

impl Settings {
    pub fn new(cargo: &Cargo, deadline: Duration) -> Self {
        Settings {
            package_dir: cargo.root.join("tests"),
            deadline,
            env: cargo.test_env(),
            enough_hangs: None,
            slow: SLOW,
            hurried: HURRIED,
            at_once: AT_ONCE,
            left_out_when_hurried: Vec::new(),
        }
    }
}

/// The tests that ran, in the order asked, and those left out after
/// `enough_hangs` (stopped after `HURRIED`).
#[derive(Debug, Clone)]
pub struct Ran {
    pub runs: Vec<TestRun>,
    pub not_run: Vec<TestCase>,
    /// Whether the caller's `enough` ended the run (`run_tests_until`):
    /// those not run were left out for that, not for hanging.
    pub enough: bool,
}

/// What a worker tells the thread that reports progress.
enum Event {
    Started(String),
    Finished(TestRun),
    /// Stopped after `HURRIED`, because enough tests hung.
    LeftOut(String),
}

/// What the thread that reports progress tells the workers.
#[derive(Default)]
struct Orders {
    /// Enough tests hung, or the rest seem stuck after a quick failure:
    /// each left may run only `Settings::hurried`.
    hurry: AtomicBool,
    /// The caller has what it asked for: every test still running stops.
    stop: AtomicBool,
    /// How many tests hung so far, and whether that is enough
    /// (`Settings::enough_hangs`).
    hangs: AtomicUsize,
    hung_enough: AtomicBool,
    /// What the tests running hold together; the biggest stops past a sum.
    memory: Arc<memory::Watch>,
}

impl Orders {
    /// Counts a hang; at the one that makes enough, hurries the rest and
    /// takes the files `Settings::left_out_when_hurried` names out of the
    /// queue. Done by the worker itself, before it takes its next test, so
    /// that no test of those files starts after the hang that made enough.
    fn note_hang(&self, settings: &Settings, queue: &Mutex<VecDeque<TestCase>>) {
        let hangs = self.hangs.fetch_add(1, Ordering::SeqCst) + 1;
        if settings.enough_hangs.is_some_and(|enough| hangs >= enough)
            && !self.hung_enough.swap(true, Ordering::SeqCst)
        {
            leave_out_once_hurried(queue, &settings.left_out_when_hurried);
            self.hurry.store(true, Ordering::SeqCst);
        }
    }
}

/// Runs every test in `cases`, `AT_ONCE` at a time (more while those
/// running seem stuck), each in a process of its own.
pub fn run_tests(
    cases: &[TestCase],
    settings: &Settings,
    progress: &Progress,
) -> Ran {
    run_tests_until(cases, settings, progress, |_, _| false)
}

/// `run_tests`, but once `enough` says the runs so far (and how many were
/// left out, stopped after `HURRIED`) answer the caller's question, the
/// tests left are not started and those running are stopped (and left
/// out, as `Ran::not_run`).
pub fn run_tests_until(
    cases: &[TestCase],
    settings: &Settings,
    progress: &Progress,
    enough: impl Fn(&[TestRun], usize) -> bool,
) -> Ran {
    let _capped = MemoryCap::new();
    let queue = Arc::new(Mutex::new(cases.iter().cloned().collect::<VecDeque<_>>()));
    let orders = Arc::new(Orders::default());
    let _watching = memory::Watch::start(&orders.memory);
    let hurry = &orders.hurry;
    let (sender, received) = mpsc::channel();
    for _ in 0..settings.at_once {
        start_worker(&queue, &orders, settings, sender.clone());
    }
    let (mut workers, mut more_workers) = (settings.at_once, Some(sender));
    let mut runs: Vec<TestRun> = Vec::new();
    let mut running: Vec<(String, Instant)> = Vec::new();
    let mut last_said = Instant::now();
    let mut said_hurried = false;
    let mut left_out = 0;
    loop {
        if is_empty(&queue) {
            // None needed: the workers' own senders keep the channel open
            // until the last one ends.
            more_workers = None;
        }
        let all_slow = !running.is_empty()
            && running
                .iter()
                .all(|(_, since)| since.elapsed() >= settings.slow);
        // All quick tests done, one failed with a message: that names the
        // mistake better than the slow ones left would, so they are hurried.
        let failed_quickly =
            runs.iter().any(|run| !run.outcome.passed() && !run.hung());
        if settings.enough_hangs.is_some()
            && all_slow
            && failed_quickly
            && is_empty(&queue)
            && !hurry.swap(true, Ordering::SeqCst)
        {
            progress.say(&format!(
                "a test failed, and those still running may be stuck: they may run {} s more",
                settings.hurried.as_secs()
            ));
        }
        if let Some(sender) = more_workers.as_ref().filter(|_| {
            let hurried = hurry.load(Ordering::SeqCst);
            (hurried && workers < AT_MOST_HURRIED) || (all_slow && workers < AT_MOST)
        }) {
            start_worker(&queue, &orders, settings, sender.clone());
            workers += 1;
        }
        match received.recv_timeout(Duration::from_secs(1)) {
            Ok(Event::Started(label)) => running.push((label, Instant::now())),
            Ok(Event::LeftOut(label)) => {
                running.retain(|(other, _)| *other != label);
                left_out += 1;
            }
            Ok(Event::Finished(run)) => {
                let label = run.case.label();
                running.retain(|(other, _)| *other != label);
                if !run.outcome.passed() {
                    progress.say(&format!("{label}: {}", run.outcome.summary()));
                }
                runs.push(run);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if !orders.stop.load(Ordering::SeqCst) && enough(&runs, left_out) {
            orders.stop.store(true, Ordering::SeqCst);
            if let Ok(mut queue) = queue.lock() {
                queue.clear();
            }
        }
        // Raised by the worker whose test was the last hang it took.
        if orders.hung_enough.load(Ordering::SeqCst) && !said_hurried {
            say_hurried(&queue, settings.hurried, progress);
            said_hurried = true;
        }
        if last_said.elapsed() >= TICK {
            progress.say(&still_running(&running, runs.len(), cases.len()));
            last_said = Instant::now();
        }
    }
    runs.sort_by_key(|run| cases.iter().position(|case| *case == run.case));
    let not_run = cases
        .iter()
        .filter(|case| !runs.iter().any(|run| run.case == **case))
        .cloned()
        .collect();
    let enough = orders.stop.load(Ordering::SeqCst);
    Ran {
        runs,
        not_run,
        enough,
    }
}

/// A thread that runs the queued tests one by one until the queue is
/// empty, telling what it starts and how that ended.
fn start_worker(
    queue: &Arc<Mutex<VecDeque<TestCase>>>,
    orders: &Arc<Orders>,
    settings: &Settings,
    events: mpsc::Sender<Event>,
) {
    let (queue, orders) = (Arc::clone(queue), Arc::clone(orders));
    let settings = settings.clone();
    thread::spawn(move || {
        while let Some(case) = next_case(&queue) {
            let _ = events.send(Event::Started(case.label()));
            let _ = events.send(match run_one(&case, &settings, &orders) {
                Some(run) => {
                    if run.hung() {
                        orders.note_hang(&settings, &queue);
                    }
                    Event::Finished(run)
                }
                None => Event::LeftOut(case.label()),
            });
        }
    });
}

fn next_case(queue: &Mutex<VecDeque<TestCase>>) -> Option<TestCase> {
    queue.lock().ok()?.pop_front()
}

fn is_empty(queue: &Mutex<VecDeque<TestCase>>) -> bool {
    queue.lock().map_or(true, |queue| queue.is_empty())
}

/// Takes the tests of `files` out of the queue: they will not run.
fn leave_out_once_hurried(queue: &Mutex<VecDeque<TestCase>>, files: &[String]) {
    if let Ok(mut queue) = queue.lock() {
        queue.retain(|case| !files.contains(&case.file));
    }
}

fn say_hurried(
    queue: &Mutex<VecDeque<TestCase>>,
    hurried: Duration,
    progress: &Progress,
) {
    let left = queue.lock().map_or(0, |queue| queue.len());
    progress.say(&format!(
        "tests never end: each of the {left} left, and those running, may run {} s more",
        hurried.as_secs()
    ));
}

fn still_running(running: &[(String, Instant)], done: usize, all: usize) -> String {
    let now: Vec<String> = running
        .iter()
        .map(|(id, since)| format!("{id} ({} s)", since.elapsed().as_secs()))
        .collect();
    format!("{done} of {all} tests done; running {}", now.join(", "))
}

/// Runs one test alone, stopped at the deadline, memory limited.
/// `None` if it was stopped after `HURRIED`, once told to hurry, or when
/// told to stop.
fn run_one(
    case: &TestCase,
    settings: &Settings,
    orders: &Orders,
) -> Option<TestRun> {
    let began = Instant::now();
    let mut command = Command::new(&case.binary);
    // `--nocapture`: a test that aborts its process (a stack overflow, a
    // panic in a destructor) loses what libtest captured; straight to
    // stderr, its panic message survives.
    command
        .args([&case.name, "--exact", "--nocapture", "--test-threads", "1"])
        .args(["--color", "never"])
        .current_dir(&settings.package_dir)
        .envs(settings.env.iter().map(|(key, value)| (key, value)))
        .envs(case.env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let outcome = match processes::spawn_test(&mut command) {
        Ok(mut child) => {
            orders.memory.add(child.id());
            let stdout = read_in_background(child.stdout.take(), &[PASSED]);
            let stderr = read_in_background(child.stderr.take(), STDERR_SIGNS);
            let status = wait_until(&mut child, settings, orders);
            let stopped_for_memory = orders.memory.remove(child.id());
            // Also ends what the test started (a demo, a server) and left.
            let escaped = processes::end_test(&mut child);
            if !escaped.is_empty() {
                eprintln!(
                    "{}: ended what it left running outside its process group: {}",
                    case.label(),
                    escaped.join(", ")
                );
            }
            let (stdout, stderr) = (collect(&stdout), collect(&stderr));
            match status {
                Waited::Stopped => return None,
                Waited::Deadline => Outcome::TimedOut(settings.deadline),
                Waited::Exited(status) => match stopped_for_memory {
                    Some(why) => Outcome::OutOfMemory(why),
                    None => classify(status, &stdout, &stderr, &case.name),
                },
            }
        }
        Err(err) => Outcome::Crashed(format!("could not start the test: {err}")),
    };
    Some(TestRun {
        case: case.clone(),
        outcome,
        took: began.elapsed(),
    })
}

/// How waiting for a test ended.
enum Waited {
    Exited(ExitStatus),
    Deadline,
    Stopped,
}

/// Waits for the child to end, at most until the deadline, or `HURRIED` once
/// told to hurry (counted from then, for a test already running), or
/// until told to stop.
fn wait_until(child: &mut Child, settings: &Settings, orders: &Orders) -> Waited {
    let (deadline, hurried_for) = (settings.deadline, settings.hurried);
    let began = Instant::now();
    let mut hurried: Option<Instant> = None;
    loop {
        if hurried.is_none() && orders.hurry.load(Ordering::SeqCst) {
            hurried = Some(Instant::now());
        }
        if orders.stop.load(Ordering::SeqCst) {
            return Waited::Stopped;
        }
        match child.try_wait() {
            Ok(Some(status)) => return Waited::Exited(status),
            _ if hurried.is_some_and(|since| since.elapsed() >= hurried_for) => {
                return Waited::Stopped;
            }
            Ok(None) if began.elapsed() < deadline => {
                thread::sleep(Duration::from_millis(20));
            }
            _ => return Waited::Deadline,
        }
    }
}

/// How a test ended, from its exit status and the signs in all it printed
/// (what is kept of that only shows it).
fn classify(
    status: ExitStatus,
    stdout: &Output,
    stderr: &Output,
    name: &str,
) -> Outcome {
    let (printed, errors) = (&stdout.text, &stderr.text);
    if status.success() {
        // Something the test called may have ended the whole process
        // (`std::process::exit(0)`) before the test could fail.
        return if stdout.held(PASSED) {
            Outcome::Passed
        } else {
            Outcome::EndedEarly(tail(format!("{printed}{errors}").trim(), 15))
        };
    }
    if stderr.held(OVERFLOWED) {
        return Outcome::StackOverflow(panic_lines(errors, name));
    }
    if OUT_OF_MEMORY.iter().any(|sign| stderr.held(sign)) {
        return Outcome::OutOfMemory(panic_lines(errors, name));
    }
    if status.code() == Some(101) {
        let mut message = panic_lines(errors, name);
        if let Some(difference) = snapshot_difference(printed) {
            message = format!("{message}\n{difference}");
        }
        return Outcome::Failed(message);
    }
    Outcome::Crashed(panic_lines(errors, name))
}

/// What libtest prints once the one test it ran has passed.
const PASSED: &str = "test result: ok. 1 passed;";

/// What Rust prints when a thread's stack overflows.
const OVERFLOWED: &str = "has overflowed its stack";

/// Signs on a test's stderr that it reached the memory limit: Rust aborts
/// when an allocation fails, and a thread or a demo that cannot get memory
/// says so in its own words.
const OUT_OF_MEMORY: [&str; 3] = [
    "memory allocation of",
    "Cannot allocate memory",
    "out of memory",
];

/// Every sign `classify` looks for on stderr.
const STDERR_SIGNS: &[&str] = &[
    OVERFLOWED,
    OUT_OF_MEMORY[0],
    OUT_OF_MEMORY[1],
    OUT_OF_MEMORY[2],
];

/// The first changed lines of a snapshot that no longer matches, from the
/// table insta prints on stdout; its panic message alone says only that
/// the snapshot failed.
fn snapshot_difference(stdout: &str) -> Option<String> {
    const SHOWN: usize = 8;
    let changed: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.split_once('│').map(|(_, text)| text))
        .filter(|text| text.starts_with('+') || text.starts_with('-'))
        .take(SHOWN)
        .collect();
    (!changed.is_empty()).then(|| {
        format!(
            "The step printed something else than the chapter shows \
             (first changed lines; - the chapter, + now):\n{}",
            changed.join("\n")
        )
    })
}

/// The panics in the stderr of test `name`: each `panicked at` line and
/// the message after it, up to libtest's note about backtraces; only the
/// test's own when it has one (a test may make other threads panic on
/// purpose). Else the last lines.
fn panic_lines(stderr: &str, name: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut panics: Vec<Vec<&str>> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let starts_a_panic = line.starts_with("thread '")
            && (line.contains(" panicked at ")
                || line.contains(" overflowed its stack"));
        if starts_a_panic {
            let message = lines[index + 1..]
                .iter()
                .take_while(|line| !ends_a_panic(line))
                .take(40);
            panics.push(std::iter::once(*line).chain(message.copied()).collect());
        }
    }
    let own = format!("thread '{name}'");
    if panics.iter().any(|panic| panic[0].starts_with(&own)) {
        panics.retain(|panic| panic[0].starts_with(&own));
    }
    if panics.is_empty() {
        let printed: Vec<&str> = lines
            .into_iter()
            .filter(|line| !ends_a_panic(line))
            .collect();
        return tail(&printed.join("\n"), 15);
    }
    let all: Vec<&str> = panics.concat();
    all.join("\n").trim_end().to_owned()
}

fn ends_a_panic(line: &str) -> bool {
    line.starts_with("note: run with `RUST_BACKTRACE")
        || line.starts_with("stack backtrace:")
        || line.starts_with("thread '")
        || line.starts_with("fatal runtime error")
        || line.starts_with("test result:")
}

/// The last `count` lines of `text`.
fn tail(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

// ---------------------------------------------------------------------------
// Processes: reading their output, bounding their memory, ending them.

/// Reads `pipe` to its end on a thread of its own (so the writer never
/// blocks on a full pipe), looking for `signs`: what it kept arrives on
/// the receiver.
fn read_in_background(
    pipe: Option<impl Read + Send + 'static>,
    signs: &'static [&'static str],
) -> Receiver<Output> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let kept = pipe.map(|pipe| output::read(pipe, signs));
        let _ = sender.send(kept.unwrap_or_default());
    });
    receiver
}

/// Sends each line of `pipe` as it comes.
fn lines_in_background(
    pipe: Option<impl Read + Send + 'static>,
) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let Some(pipe) = pipe else { return };
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// What a reader thread read; nothing if the pipe is still held open a
/// while after the process ended (by something that escaped it).
fn collect(text: &Receiver<Output>) -> Output {
    text.recv_timeout(Duration::from_secs(5))
        .unwrap_or_default()
}

/// While one lives, each process this one starts may use
/// `MEMORY_LIMIT_GIB` of data (its heap), on Linux: the limit is set on this
/// process, and a child inherits it the moment it exists. (Set on a child
/// once it runs, a quick runaway could outrun it.) Elsewhere the deadline
/// alone bounds a runaway test. Counted, as tests run their own tests
/// at once.
struct MemoryCap;

#[cfg(target_os = "linux")]
static MEMORY_CAPS: Mutex<(usize, Option<rustix::process::Rlimit>)> =
    Mutex::new((0, None));

impl MemoryCap {
    fn new() -> Self {
        #[cfg(target_os = "linux")]
        if let Ok(mut caps) = MEMORY_CAPS.lock() {
            use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
            if caps.0 == 0 {
                let before = getrlimit(Resource::Data);
                let capped = Rlimit {
                    current: Some(MEMORY_LIMIT_GIB << 30),
                    maximum: before.maximum,
                };
                if setrlimit(Resource::Data, capped).is_ok() {
                    caps.1 = Some(before);
                }
            }
            caps.0 += 1;
        }
        MemoryCap
    }
}

impl Drop for MemoryCap {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Ok(mut caps) = MEMORY_CAPS.lock() {
            caps.0 -= 1;
            if let (0, Some(before)) = (caps.0, caps.1.take()) {
                let _ = rustix::process::setrlimit(
                    rustix::process::Resource::Data,
                    before,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    /// Tells `misbehaves_when_asked` what to do, in the process the tests
    /// below start from this very test executable.
    const ASK: &str = "WORKSHOP_RUNNER_SELF_TEST";

    /// Does nothing in a normal run; run by the tests below, it does the
    /// wrong thing they ask for.
    #[test]
    fn misbehaves_when_asked() {
        fn deeper(depth: u64) -> u64 {
            if depth == u64::MAX {
                0
            } else {
                deeper(depth + 1) + 1
            }
        }
        match env::var(ASK).as_deref() {
            Ok("hang") => loop {
                thread::sleep(Duration::from_secs(1));
            },
            Ok("recurse") => assert_eq!(deeper(0), 0),
            Ok("allocate") => {
                let limit = usize::try_from(MEMORY_LIMIT_GIB << 30).expect("64-bit");
                let huge: Vec<u8> = Vec::with_capacity(2 * limit);
                assert!(huge.capacity() > 0);
            }
            Ok("panic") => panic!("the timer fired 3 ms early"),
            Ok("run-away") => run_away(),
            Ok("print-then-pass") => print_a_lot(Print::Out),
            Ok("print-then-panic") => {
                print_a_lot(Print::Err);
                panic!("the timer fired 3 ms early");
            }
            Ok("print-then-recurse") => {
                print_a_lot(Print::Err);
                assert_eq!(deeper(0), 0);
            }
            Ok("wait-within") => {
                // A test's own guard, as `workshop_tests::within` is: it
                // waits the patience `check` gives it, else 20 s.
                let patience: u64 = env::var(crate::PATIENCE_VAR)
                    .ok()
                    .and_then(|secs| secs.parse().ok())
                    .unwrap_or(20);
                thread::sleep(Duration::from_secs(patience));
                panic!("still running after {patience}s");
            }
            Ok("exit") => std::process::exit(0),
            Ok(order @ ("two-hang-then-one-fails" | "one-fails-then-one-hangs")) => {
                // The first two processes to ask hang, the third fails; or
                // the first fails, the second hangs.
                let dir = PathBuf::from(env::var(PID_FILE).expect("a folder"));
                let place = (1..100)
                    .find(|n| fs::create_dir(dir.join(format!("{n}"))).is_ok());
                let fails = if order.starts_with("two") { 3 } else { 1 };
                if place != Some(fails) {
                    loop {
                        thread::sleep(Duration::from_secs(1));
                    }
                }
                panic!("the timer fired 3 ms early");
            }
            Ok("note-pid-and-hang") => {
                let file = env::var(PID_FILE).expect("where to note the pid");
                fs::write(file, std::process::id().to_string()).expect("a pid file");
                loop {
                    thread::sleep(Duration::from_secs(1));
                }
            }
            Ok("escape") => {
                // A grandchild in a group of its own, left running.
                let mut escapee = Command::new(env::current_exe().expect("myself"));
                escapee
                    .args(["runner::tests::misbehaves_when_asked", "--exact"])
                    .env(ASK, "note-pid-and-hang")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                processes::in_a_process_group_of_its_own(&mut escapee);
                // Left running on purpose: `check` must end it.
                #[allow(clippy::zombie_processes)]
                let _ = escapee.spawn().expect("the escapee starts");
                let file = env::var(PID_FILE).expect("where the pid is noted");
                while fs::read_to_string(&file).map_or(true, |pid| pid.is_empty()) {
                    thread::sleep(Duration::from_millis(20));
                }
            }
            Ok("check-with-escape") => {
                // `check` in small: a test that leaves a process behind.
                adopt_orphans();
                let _ = run_tests(
                    &[myself()],
                    &check_settings("escape"),
                    &Progress::new(true),
                );
            }
            Ok("check-and-hang") => {
                // `check` in small: a test that never ends, and an interrupt.
                end_everything_on_interrupt();
                let settings = check_settings("note-pid-and-hang");
                let _ = run_tests(&[myself()], &settings, &Progress::new(true));
            }
            Ok("where") => {
                // As `workshop_tests::workspace_root` finds it.
                let package =
                    env::var("CARGO_MANIFEST_DIR").expect("set by the runner");
                let root = Path::new(&package).parent().expect("the root");
                panic!("the workspace: {}", root.display())
            }
            _ => {}
        }
    }

    #[derive(Clone, Copy)]
    enum Print {
        Out,
        Err,
    }

    /// What a participant debugging with `println!` prints: a megabyte,
    /// far more than the runner keeps to show.
    fn print_a_lot(to: Print) {
        let line = "call_at: pushed a timer, the queue holds 1234 timers now";
        for n in 0..((1 << 20) / line.len()) {
            match to {
                Print::Out => println!("{n:>6} {line}"),
                Print::Err => eprintln!("{n:>6} {line}"),
            }
        }
    }

    /// A loop that never ends while something grows, as fast as it can:
    /// the pid noted first, in `PID_FILE`'s folder, for the tests to watch.
    fn run_away() {
        let dir = PathBuf::from(env::var(PID_FILE).expect("a folder"));
        let pid = std::process::id();
        fs::write(dir.join(pid.to_string()), "").expect("a pid file");
        let mut grown: Vec<Vec<u8>> = Vec::new();
        loop {
            // Filled, so each page is touched and resident.
            grown.push(vec![1; 1 << 20]);
        }
    }

    /// Where a misbehaving test notes its process id.
    const PID_FILE: &str = "WORKSHOP_RUNNER_PID_FILE";

    fn myself() -> TestCase {
        TestCase {
            file: "lib".to_owned(),
            name: "runner::tests::misbehaves_when_asked".to_owned(),
            binary: env::current_exe().expect("the test executable"),
            env: Vec::new(),
        }
    }

    fn run_asking(what: &str, deadline: Duration) -> Outcome {
        let case = myself();
        let settings = Settings {
            package_dir: env::current_dir().expect("a current folder"),
            deadline,
            env: vec![(ASK.to_owned(), what.to_owned())],
            enough_hangs: None,
            slow: SLOW,
            hurried: HURRIED,
            at_once: AT_ONCE,
            left_out_when_hurried: Vec::new(),
        };
        let ran = run_tests(&[case], &settings, &Progress::new(true));
        ran.runs[0].outcome.clone()
    }

    #[test]
    fn a_test_past_its_deadline_is_stopped() {
        let began = Instant::now();
        let deadline = Duration::from_secs(1);
        assert_eq!(run_asking("hang", deadline), Outcome::TimedOut(deadline));
        assert!(began.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_stack_overflow_is_named_with_its_test() {
        let outcome = run_asking("recurse", TEST_DEADLINE);
        let Outcome::StackOverflow(message) = outcome else {
            panic!("expected a stack overflow, got {outcome:?}");
        };
        assert!(message.contains("misbehaves_when_asked'"), "{message}");
        assert!(message.contains("has overflowed its stack"), "{message}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_test_past_the_memory_limit_is_stopped() {
        let outcome = run_asking("allocate", TEST_DEADLINE);
        assert!(matches!(outcome, Outcome::OutOfMemory(_)), "{outcome:?}");
    }

    #[test]
    fn a_failed_test_shows_its_own_panic_message() {
        let outcome = run_asking("panic", TEST_DEADLINE);
        let Outcome::Failed(message) = outcome else {
            panic!("expected a failure, got {outcome:?}");
        };
        assert!(message.contains("the timer fired 3 ms early"), "{message}");
        assert!(!message.contains("RUST_BACKTRACE"), "{message}");
    }

    #[test]
    fn a_tests_own_panic_is_shown_not_those_it_caused_on_purpose() {
        let stderr = "thread '<unnamed>' (7) panicked at a.rs:1:1:\n\
                      out of coffee\n\
                      thread 'joins' (6) panicked at b.rs:2:2:\n\
                      still running after 20s\n\
                      note: run with `RUST_BACKTRACE=1` to see a backtrace";
        assert_eq!(
            panic_lines(stderr, "joins"),
            "thread 'joins' (6) panicked at b.rs:2:2:\nstill running after 20s"
        );
    }

    #[test]
    fn a_failed_snapshot_shows_its_first_changed_lines() {
        let stdout = "-old snapshot\n+new results\n─────┬─────\n    \
                      3     3 │ boil the water\n          4 │+ran one\n    \
                      4       │-brew the tea\n─────┴─────\n";
        let difference = snapshot_difference(stdout).expect("a difference");
        let changed: Vec<&str> = difference.lines().skip(1).collect();
        assert_eq!(changed, ["+ran one", "-brew the tea"]);
        assert_eq!(snapshot_difference("running 1 test\n"), None);
    }

    #[test]
    fn a_test_finds_the_workspace_it_runs_in_not_the_one_it_was_built_in() {
        // `check`'s probe runs tests built for the participant's folder in
        // a copy elsewhere: they must find the copy.
        let copy = env::temp_dir().join("a-copy-of-the-workshop");
        let case = TestCase {
            file: "lib".to_owned(),
            name: "runner::tests::misbehaves_when_asked".to_owned(),
            binary: env::current_exe().expect("the test executable"),
            env: Vec::new(),
        };
        let cargo = Cargo {
            root: copy.clone(),
            target_dir: None,
        };
        let mut settings = Settings::new(&cargo, TEST_DEADLINE);
        settings.package_dir = env::current_dir().expect("a current folder");
        settings.env.push((ASK.to_owned(), "where".to_owned()));
        let ran = run_tests(&[case], &settings, &Progress::new(true));
        let message = ran.runs[0].outcome.message().to_owned();
        assert!(
            message.contains(&format!("the workspace: {}", copy.display())),
            "{message}"
        );
    }

    /// How `check` in small runs this test, asking `what` of it.
    fn check_settings(what: &str) -> Settings {
        let file = env::var(PID_FILE).expect("where to note the pid");
        Settings {
            package_dir: env::current_dir().expect("a current folder"),
            deadline: TEST_DEADLINE,
            env: vec![
                (ASK.to_owned(), what.to_owned()),
                (PID_FILE.to_owned(), file),
            ],
            enough_hangs: None,
            slow: SLOW,
            hurried: HURRIED,
            at_once: AT_ONCE,
            left_out_when_hurried: Vec::new(),
        }
    }

    /// Runs this test as `check` in small, asking `what` of it.
    #[cfg(target_os = "linux")]
    fn check_in_small(what: &str, file: &Path) -> Child {
        Command::new(env::current_exe().expect("myself"))
            .args(["runner::tests::misbehaves_when_asked", "--exact"])
            .env(ASK, what)
            .env(PID_FILE, file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("check in small starts")
    }

    /// Ends `pid` if it still runs: a failed test leaves nothing behind.
    #[cfg(target_os = "linux")]
    fn kill(pid: u32) {
        if let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ =
                rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }

    /// A file for a test's process id, empty.
    #[cfg(target_os = "linux")]
    fn pid_file(name: &str) -> PathBuf {
        let file =
            env::temp_dir().join(format!("runner-{name}-{}", std::process::id()));
        fs::write(&file, "").expect("a pid file");
        file
    }

    /// Waits until the pid file says the test runs, at most a minute.
    #[cfg(target_os = "linux")]
    fn noted_pid(file: &Path) -> u32 {
        for _ in 0..3000 {
            if let Ok(pid) = fs::read_to_string(file).unwrap_or_default().parse() {
                return pid;
            }
            thread::sleep(Duration::from_millis(20));
        }
        panic!("the test never noted its pid in {}", file.display());
    }

    #[cfg(target_os = "linux")]
    fn is_alive(pid: u32) -> bool {
        // A zombie has ended: only its parent has yet to hear of it.
        fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        })
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_interrupt_ends_the_tests_it_started() {
        let file = pid_file("interrupt");
        let mut check = check_in_small("check-and-hang", &file);
        let test = noted_pid(&file);
        let check_pid = rustix::process::Pid::from_child(&check);
        rustix::process::kill_process(check_pid, rustix::process::Signal::INT)
            .expect("the interrupt is sent");
        let status = check.wait().expect("check ends");
        let _ = fs::remove_file(&file);
        let ended = (0..250).any(|_| {
            thread::sleep(Duration::from_millis(20));
            !is_alive(test)
        });
        kill(test);
        assert!(
            ended,
            "the test {test} outlived the interrupted check ({status})"
        );
        assert_eq!(
            status.code(),
            Some(130),
            "check exits as Ctrl-C would have it"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_that_left_its_tests_group_is_ended() {
        let file = pid_file("escape");
        let status = check_in_small("check-with-escape", &file)
            .wait()
            .expect("check ends");
        let escapee = noted_pid(&file);
        let _ = fs::remove_file(&file);
        let ended = (0..250).any(|_| {
            thread::sleep(Duration::from_millis(20));
            !is_alive(escapee)
        });
        kill(escapee);
        assert!(
            ended,
            "the escaped process {escapee} outlived check ({status})"
        );
    }

    #[test]
    fn tests_that_never_end_do_not_keep_a_quick_one_from_running() {
        let places =
            env::temp_dir().join(format!("runner-places-{}", std::process::id()));
        fs::create_dir_all(&places).expect("a folder");
        let settings = Settings {
            package_dir: env::current_dir().expect("a current folder"),
            deadline: Duration::from_secs(4),
            env: vec![
                (ASK.to_owned(), "two-hang-then-one-fails".to_owned()),
                (PID_FILE.to_owned(), places.display().to_string()),
            ],
            enough_hangs: Some(2),
            slow: Duration::from_secs(1),
            hurried: HURRIED,
            at_once: AT_ONCE,
            left_out_when_hurried: Vec::new(),
        };
        let ran = run_tests(
            &[myself(), myself(), myself()],
            &settings,
            &Progress::new(true),
        );
        let _ = fs::remove_dir_all(&places);
        let quick = ran
            .runs
            .iter()
            .any(|run| run.outcome.message().contains("3 ms early"));
        assert!(quick, "the quick test did not run: {ran:?}");
    }

    #[test]
    fn once_one_failed_and_all_have_started_a_test_that_never_ends_is_not_waited_for()
     {
        let places =
            env::temp_dir().join(format!("runner-order-{}", std::process::id()));
        fs::create_dir_all(&places).expect("a folder");
        let settings = Settings {
            package_dir: env::current_dir().expect("a current folder"),
            deadline: Duration::from_secs(60),
            env: vec![
                (ASK.to_owned(), "one-fails-then-one-hangs".to_owned()),
                (PID_FILE.to_owned(), places.display().to_string()),
            ],
            enough_hangs: Some(2),
            slow: Duration::from_secs(1),
            hurried: Duration::from_secs(1),
            at_once: AT_ONCE,
            left_out_when_hurried: Vec::new(),
        };
        let began = Instant::now();
        // Two names for the same test, as `check` never runs one twice.
        let mut other = myself();
        other.file = "lib-again".to_owned();
        let ran = run_tests(&[myself(), other], &settings, &Progress::new(true));
        let _ = fs::remove_dir_all(&places);
        assert_eq!(ran.runs.len(), 1, "{ran:?}");
        // Unhurried, the hanging test would run to its 60 s deadline.
        assert!(began.elapsed() < Duration::from_secs(30), "{ran:?}");
    }

    #[test]
    fn once_the_caller_has_enough_the_tests_left_stop_and_are_not_run() {
        // Each run asks its own misbehaviour: what the probe relies on to
        // run one test with each suspect's switch.
        let asking = |what: &str| TestCase {
            env: vec![(ASK.to_owned(), what.to_owned())],
            ..myself()
        };
        let cases = [
            asking("panic"),
            asking("hang"),
            asking("hang"),
            asking("hang"),
        ];
        let settings = Settings {
            package_dir: env::current_dir().expect("a current folder"),
            deadline: Duration::from_secs(60),
            env: Vec::new(),
            enough_hangs: None,
            slow: SLOW,
            hurried: HURRIED,
            at_once: AT_ONCE,
            left_out_when_hurried: Vec::new(),
        };
        let began = Instant::now();
        let ran =
            run_tests_until(&cases, &settings, &Progress::new(true), |runs, _| {
                runs.iter().any(|run| !run.outcome.passed())
            });
        assert_eq!(ran.runs.len(), 1, "{ran:?}");
        assert!(
            ran.runs[0].outcome.message().contains("3 ms early"),
            "{ran:?}"
        );
        assert_eq!(ran.not_run.len(), 3, "{ran:?}");
        // Unstopped, the hanging tests would run to their 60 s deadline.
        assert!(began.elapsed() < Duration::from_secs(30), "{ran:?}");
    }

    #[test]
    fn a_test_run_by_check_waits_for_what_never_comes_only_its_patience() {
        let case = TestCase {
            env: vec![
                (ASK.to_owned(), "wait-within".to_owned()),
                (crate::PATIENCE_VAR.to_owned(), "1".to_owned()),
            ],
            ..myself()
        };
        let settings = Settings {
            package_dir: env::current_dir().expect("a current folder"),
            deadline: TEST_DEADLINE,
            env: Vec::new(),
            enough_hangs: None,
            slow: SLOW,
            hurried: HURRIED,
            at_once: AT_ONCE,
            left_out_when_hurried: Vec::new(),
        };
        let ran = run_tests(&[case], &settings, &Progress::new(true));
        let run = &ran.runs[0];
        assert!(
            run.outcome.message().contains("still running after 1s"),
            "{ran:?}"
        );
        // Without the patience, the guard would wait 20 s.
        assert!(run.took < Duration::from_secs(15), "{ran:?}");
    }

    #[test]
    fn once_hurried_the_files_left_out_then_do_not_run() {
        let asking = |what: &str| TestCase {
            env: vec![(ASK.to_owned(), what.to_owned())],
            ..myself()
        };
        let demo = TestCase {
            file: "demos".to_owned(),
            ..asking("panic")
        };
        let settings = Settings {
            package_dir: env::current_dir().expect("a current folder"),
            deadline: Duration::from_secs(3),
            env: Vec::new(),
            enough_hangs: Some(2),
            // One at a time, no third beside those that hang: the demo
            // waits its turn, after both.
            slow: Duration::from_secs(600),
            hurried: HURRIED,
            at_once: 1,
            left_out_when_hurried: vec!["demos".to_owned()],
        };
        let cases = [asking("hang"), asking("hang"), demo.clone()];
        let ran = run_tests(&cases, &settings, &Progress::new(true));
        assert_eq!(ran.runs.len(), 2, "{ran:?}");
        assert_eq!(ran.not_run, [demo], "{ran:?}");
    }

    #[test]
    fn a_test_that_ends_its_process_with_success_has_not_passed() {
        let outcome = run_asking("exit", TEST_DEADLINE);
        assert!(matches!(outcome, Outcome::EndedEarly(_)), "{outcome:?}");
    }

    #[test]
    fn a_test_that_prints_megabytes_before_it_passes_passes() {
        assert_eq!(
            run_asking("print-then-pass", TEST_DEADLINE),
            Outcome::Passed
        );
    }

    #[test]
    fn a_test_that_prints_megabytes_before_its_panic_shows_the_panic() {
        let outcome = run_asking("print-then-panic", TEST_DEADLINE);
        let Outcome::Failed(message) = outcome else {
            panic!("expected a failure, got {outcome:?}");
        };
        assert!(message.contains("the timer fired 3 ms early"), "{message}");
    }

    #[test]
    fn a_stack_overflow_after_megabytes_of_output_is_named() {
        let outcome = run_asking("print-then-recurse", TEST_DEADLINE);
        assert!(matches!(outcome, Outcome::StackOverflow(_)), "{outcome:?}");
    }

    /// The most the processes whose pids are noted in `dir` held resident
    /// together, looked at every millisecond until `done`.
    #[cfg(target_os = "linux")]
    fn most_resident_together(dir: &Path, done: &AtomicBool) -> u64 {
        let mut most = 0;
        while !done.load(Ordering::SeqCst) {
            let together_kib: u64 = fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|entry| {
                    let pid = entry.file_name().to_string_lossy().into_owned();
                    let status =
                        fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
                    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
                    line.split_whitespace().nth(1)?.parse::<u64>().ok()
                })
                .sum();
            most = most.max(together_kib << 10);
            thread::sleep(Duration::from_millis(1));
        }
        most
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn six_runaway_tests_at_once_stay_under_the_stated_total() {
        let places =
            env::temp_dir().join(format!("runner-runaways-{}", std::process::id()));
        fs::create_dir_all(&places).expect("a folder");
        let settings = Settings {
            package_dir: env::current_dir().expect("a current folder"),
            deadline: TEST_DEADLINE,
            env: vec![
                (ASK.to_owned(), "run-away".to_owned()),
                (PID_FILE.to_owned(), places.display().to_string()),
            ],
            enough_hangs: None,
            slow: SLOW,
            hurried: HURRIED,
            at_once: 6,
            left_out_when_hurried: Vec::new(),
        };
        // Six names for one test, as `check` never runs one twice.
        let cases: Vec<TestCase> = (1..=6)
            .map(|n| TestCase {
                file: format!("lib-{n}"),
                ..myself()
            })
            .collect();
        let done = AtomicBool::new(false);
        let (most, ran) = thread::scope(|scope| {
            let most = scope.spawn(|| most_resident_together(&places, &done));
            let ran = run_tests(&cases, &settings, &Progress::new(true));
            done.store(true, Ordering::SeqCst);
            (most.join().expect("the watcher"), ran)
        });
        let _ = fs::remove_dir_all(&places);
        let mib = most >> 20;
        eprintln!("six runaway tests held {mib} MiB resident together at most");
        assert!(most < TOGETHER_GIB << 30, "{mib} MiB together");
        for run in &ran.runs {
            assert!(matches!(run.outcome, Outcome::OutOfMemory(_)), "{run:?}");
        }
    }

    #[test]
    fn a_passing_test_passes() {
        assert_eq!(run_asking("nothing", TEST_DEADLINE), Outcome::Passed);
    }
}
