//! Plumbing shared by the workshop's tests: build and run a step's real
//! binary, stopped if it runs too long, and turn what it printed into a
//! transcript a snapshot can pin;
//! read the book's sources (`book`) so its checks can find what mdBook misses;
//! bound a test that could hang, and count a future's polls (`guards`); run a step's
//! server for a test to talk to (`server`), and put any step's echo server
//! through the same scenarios (`echo_server`). The participant's tool,
//! `cargo workshop`, is a crate of its own (`workshop/`); the tests run it
//! as a participant would (`workshop_program`), and the authors' and the
//! teacher's `cargo xtask` (`xtask/`) as they would (`xtask_program`).

pub mod built;
pub mod echo_server;
mod guards;
pub mod seed;
pub mod server;

pub use guards::{
    BACKSTOP, Counted, DropFlag, HANG_LIMIT, before_the_backstop, counted, patience,
    within,
};

/// What the tests share with `cargo workshop`, which sets them for the
/// tests it runs, or builds what they build: one definition, in the tool.
pub use workshop::{
    PATIENCE_VAR, PROGRAM_BUILD_ARGS, example_build_args, files_below,
};

use std::collections::BTreeMap;
use std::env::consts::EXE_SUFFIX;
use std::fmt;
use std::fs;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// Builds `package`'s binary from the current source and runs it with `args`.
///
/// The build goes through Cargo once in each test process (`step_binary`).
/// Running a binary left in `target/` by some earlier build could test stale
/// code and pass; Cargo's own freshness check is what guarantees the binary
/// matches the source. (Under `cargo workshop check` and under Wine, the
/// build ran just before the tests: see `PREBUILT_STEPS`.)
pub fn run_step(package: &str, args: &[&str]) -> Transcript {
    let mut command = step_command(package);
    command.args(args);
    let output = output_within(DEMO_LIMIT, command);
    Transcript {
        command: command_line(package, args),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        exit_code: output.status.code(),
    }
}

/// The participant's tool, `cargo workshop`, built once in each test
/// process from this workshop's sources, for the tests that run it as a
/// participant would.
pub fn workshop_program() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            built::executable(
                &workspace_root().join("Cargo.toml"),
                &["-p", "workshop", "--bin", "workshop"],
                "workshop",
            )
        })
        .clone()
}

/// The authors' and the teacher's commands, `cargo xtask`, built once in
/// each test process from this workshop's sources, as `workshop_program`.
pub fn xtask_program() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            built::executable(
                &workspace_root().join("Cargo.toml"),
                &["-p", "xtask", "--bin", "xtask"],
                "xtask",
            )
        })
        .clone()
}

/// How long a demo may run: every demo ends in a few seconds, so reaching
/// this, even with both cores busy, means the loop never ends.
pub const DEMO_LIMIT: Duration = Duration::from_secs(60);

/// Runs `command` to its end and returns what it printed, like
/// `command.spawn()`, tried again when Wine, busy, answers
/// `ERROR_INTERNAL_ERROR` (1359) for a start that a second try makes: seen
/// in CI's Windows run, at a load of 7, as "could not start step07:
/// Internal error". Any other failure is the test's at once.
pub fn spawn(command: &mut Command) -> std::io::Result<std::process::Child> {
    const WINES_INTERNAL_ERROR: i32 = 1359;
    let mut tries = 0;
    loop {
        match command.spawn() {
            Err(err)
                if cfg!(windows)
                    && err.raw_os_error() == Some(WINES_INTERNAL_ERROR)
                    && tries < 3 =>
            {
                tries += 1;
                std::thread::sleep(Duration::from_millis(200));
            }
            started => return started,
        }
    }
}

/// `Command::output`, but kills it and fails the test once `limit` has
/// passed: a demo whose loop never ends must fail its test, not hang it.
pub fn output_within(limit: Duration, mut command: Command) -> Output {
    let shown = format!("{command:?}");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn(&mut command)
        .unwrap_or_else(|err| panic!("could not run {shown}: {err}"));
    let stdout = read_to_end_in_background(child.stdout.take());
    let stderr = read_to_end_in_background(child.stderr.take());
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the demo can be waited for") {
            break status;
        }
        if began.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{shown} did not finish in {} s and was stopped: its loop never \
                 ends, or waits for a wake-up that never comes",
                limit.as_secs()
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// Reads a child's pipe to its end on a thread of its own, so that a child
/// filling one pipe never blocks while we read the other.
fn read_to_end_in_background(
    pipe: Option<impl Read + Send + 'static>,
) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// A `Command` for `package`'s freshly built binary, for tests that talk to
/// it while it runs (servers) rather than wait for it to finish.
pub fn step_command(package: &str) -> Command {
    let mut command = Command::new(step_binary(package));
    // A participant's own `LOOP_TRACE=1` must not leak into the pinned runs:
    // the tests that want the trace set it themselves.
    command.env_remove("LOOP_TRACE");
    command
}

/// A `Command` for `package`'s example `example`, freshly built, as
/// `cargo run -p <package> --example <example>` runs it.
pub fn example_command(package: &str, example: &str) -> Command {
    let mut command =
        match prebuilt(&format!("examples/{package}/{example}{EXE_SUFFIX}")) {
            Some(binary) => Command::new(binary),
            None => Command::new(built::example(package, example)),
        };
    command.env_remove("LOOP_TRACE");
    command
}

/// The path of `package`'s binary, built by Cargo from the current source
/// the first time a test of this process asks for it. Later asks reuse
/// that path: each trip through Cargo costs a freshness check under
/// Cargo's lock on `target/`, which the tests running at once would
/// otherwise queue for, hundreds of times a run.
fn step_binary(package: &str) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    // Held while Cargo builds: a second test that wants the same binary
    // waits for this build instead of starting its own.
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(path) = built.get(package) {
        return path.clone();
    }
    if let Some(binary) = prebuilt(&format!("{package}{EXE_SUFFIX}")) {
        return binary;
    }
    let mut args = vec!["--bin", package];
    args.extend(PROGRAM_BUILD_ARGS);
    let path =
        built::executable(&workspace_root().join("Cargo.toml"), &args, package);
    built.insert(package.to_owned(), path.clone());
    path
}

/// Builds `package`'s example `example` from the current source and runs
/// it, as `cargo run -p <package> --example <example>` does.
pub fn run_example(package: &str, example: &str) -> Transcript {
    let output = example_command(package, example)
        .output()
        .unwrap_or_else(|err| panic!("could not run {package}'s {example}: {err}"));
    Transcript {
        command: format!("cargo run -p {package} --example {example}"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        exit_code: output.status.code(),
    }
}

/// The folder where the programs the tests run wait, built before the
/// tests: `cargo workshop check` builds them before its clock starts, so
/// that no test waits on Cargo's lock (another Cargo may hold it) inside
/// its deadline; `.ci/wine` builds the Windows ones, which a Windows
/// process under Wine can start, where it cannot start Linux's `cargo`.
/// Unset (`cargo test`), each test process builds what it runs.
pub use workshop::PREBUILT_PROGRAMS as PREBUILT_STEPS;

/// `file` in the folder `PREBUILT_STEPS` names, if it names one; it must
/// be there then: a missing program fails the test rather than passing it
/// over.
fn prebuilt(file: &str) -> Option<PathBuf> {
    let folder = PathBuf::from(std::env::var_os(PREBUILT_STEPS)?);
    let binary = folder.join(file);
    assert!(
        binary.is_file(),
        "{PREBUILT_STEPS} is set, but {} is not there",
        binary.display()
    );
    Some(binary)
}

/// The repository's root folder, where the workspace `Cargo.toml` is: the
/// nearest folder above the package's (`tests/`, or `book/tools/` for the
/// book's tools) that holds one, the package's as Cargo names it to the
/// test or program it runs, else as it named it to the build. At run time first: `cargo
/// workshop check` runs tests in a copy of the repository with what the
/// participant's build compiled, so this library may have been built for
/// another folder than the one it runs in.
pub fn workspace_root() -> PathBuf {
    let package = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    package
        .ancestors()
        .skip(1)
        .find(|folder| {
            fs::read_to_string(folder.join("Cargo.toml"))
                .is_ok_and(|manifest| manifest.contains("[workspace]"))
        })
        .expect("a package of the workshop sits below its workspace root")
        .to_path_buf()
}

/// Reads a text file with line endings made `\n`, so a checkout that turned
/// them into `\r\n` reads the same as one that did not.
pub fn read_text(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("could not read {}: {err}", path.display()))
        .replace("\r\n", "\n")
}

/// The number in a step folder's name: `step03-sleep` is step 3.
pub fn step_number(folder: &str) -> Option<u32> {
    let digits = folder.strip_prefix("step")?.get(..2)?;
    let rest = &folder["step".len() + 2..];
    if !rest.starts_with('-') {
        return None;
    }
    digits.parse().ok()
}

/// Every `stepNN-name` folder at the workspace root, in step order.
pub fn step_folders() -> Vec<String> {
    let root = workspace_root();
    let mut folders: Vec<String> = fs::read_dir(&root)
        .expect("the workspace root can be listed")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| step_number(name).is_some())
        .filter(|name| root.join(name).join("Cargo.toml").is_file())
        .collect();
    folders.sort();
    folders
}

/// Runs `package` with `LOOP_TRACE=1`; what it wrote on stdout and stderr
/// together, in the order it wrote it (one pipe for both: stdout is flushed
/// at each line, stderr at once).
pub fn traced_output(package: &str, args: &[&str]) -> String {
    let mut command = step_command(package);
    command.args(args).env("LOOP_TRACE", "1");
    merged_output(command)
}

/// Runs the traced scene `scene` of `tests/examples/trace_scenes.rs` (as
/// `LOOP_TRACE=1 cargo run -p workshop-tests --example trace_scenes --
/// scene`); its output as `traced_output` gives it.
pub fn traced_scene(scene: &str) -> String {
    let mut command = example_command("workshop-tests", "trace_scenes");
    command.arg(scene).env("LOOP_TRACE", "1");
    merged_output(command)
}

/// `traced_output` of the demo, read as it comes, and stopped once
/// `enough` says the output so far is enough for the test; or read to its
/// end, when the demo must succeed.
pub fn traced_demo_until(package: &str, enough: impl FnMut(&str) -> bool) -> String {
    let mut command = step_command(package);
    command.env("LOOP_TRACE", "1");
    merged_output_until(command, enough)
}

/// What `command` writes on stdout and stderr, merged in order; fails if it
/// fails.
pub fn merged_output(command: Command) -> String {
    merged_output_until(command, |_| false)
}

/// `merged_output`, read line by line: once `enough` says the output so
/// far is enough, the program is stopped there, and what it wrote is the
/// answer.
pub fn merged_output_until(
    mut command: Command,
    mut enough: impl FnMut(&str) -> bool,
) -> String {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    command
        .stdin(Stdio::null())
        .stdout(writer.try_clone().expect("the pipe's writer clones"))
        .stderr(writer);
    let mut child = spawn(&mut command).expect("the step starts");
    drop(command); // our copies of the writer: the read ends with the child
    let mut reader = std::io::BufReader::new(reader);
    let mut output = String::new();
    while reader.read_line(&mut output).expect("the output is UTF-8") > 0 {
        if enough(&output) {
            let _ = child.kill();
            let _ = child.wait();
            return output;
        }
    }
    let status = child.wait().expect("the step ends");
    assert!(status.success(), "the traced run failed:\n{output}");
    output
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

/// Snapshot settings: the snapshot files name no module and no expression.
///
/// The numbers that change from run to run are hidden before a text is
/// pinned, by `pinned_transcript` (or `pinned_trace::redacted` for a
/// trace), not by insta's filters: those bring the regex crates into every
/// build of the tests, a participant's first check among them.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

/// `transcript` as the snapshots pin it: measured durations, printed with
/// two decimals (`0.70 s`), become `#.## s`; fixed durations in labels,
/// with one decimal (`sleep 0.5 s`), stay. The claims behind the hidden
/// numbers are tested on their own.
pub fn pinned_transcript(transcript: &Transcript) -> String {
    workshop::pinned_trace::durations_redacted(&transcript.to_string())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "did not finish in 1 s and was stopped")]
    fn a_demo_that_runs_past_its_limit_is_stopped_and_fails_its_test() {
        let mut command = Command::new("sleep");
        command.arg("30");
        output_within(Duration::from_secs(1), command);
    }
}

/// Every process, but this test's own, that works in `dir` or names it on
/// its command line, as `pid command`: what a test of the tool finds left
/// running in its copy of the workshop. Zombies are over, so not counted.
#[cfg(target_os = "linux")]
pub fn processes_working_in(dir: &Path) -> Vec<String> {
    let me = std::process::id().to_string();
    let named = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me {
            continue;
        }
        let proc = entry.path();
        let cwd = fs::read_link(proc.join("cwd")).unwrap_or_default();
        let command = fs::read(proc.join("cmdline")).unwrap_or_default();
        let command = String::from_utf8_lossy(&command).replace('\0', " ");
        let state = fs::read_to_string(proc.join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'));
        if !zombie && (cwd.starts_with(dir) || command.contains(&named)) {
            found.push(format!("{pid} {}", command.trim()));
        }
    }
    found
}
