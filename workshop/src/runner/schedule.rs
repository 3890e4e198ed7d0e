//! Listing a step's tests and running them: each test in a process of its
//! own, `AT_ONCE` at a time, each stopped at its deadline; and the rules
//! that stop the run early: once enough tests hung, the rest are hurried
//! (and some files left out), and once the caller has its answer, what is
//! left stops.

use std::collections::VecDeque;
use std::io;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::thread;
use std::time::{Duration, Instant};

use super::memory::stopped_for_memory;
use super::output::{Output, collect, read_in_background};
use super::verdict::{self, Outcome, TestRun};
use super::{
    AT_ONCE, AT_ONCE_WHEN_HURRIED, Cargo, HURRIED, Progress, SLOW, TICK, TestBinary,
    processes,
};

/// One test: `file::name`, in the executable that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    pub file: String,
    pub name: String,
    pub binary: PathBuf,
    /// Set for this run of the test only (beside `Settings::env`): the
    /// probe's reruns each switch on another function of the authors'.
    pub env: Vec<(String, String)>,
}

impl TestCase {
    /// `file::name`, as the `// BUILD` markers name tests.
    pub fn id(&self) -> String {
        format!("{}::{}", self.file, self.name)
    }

    /// `id`, and this run's own environment: what tells two runs apart.
    fn label(&self) -> String {
        let env = self
            .env
            .iter()
            .map(|(key, value)| format!(" {key}={value}"));
        match env.collect::<String>() {
            env if env.is_empty() => self.id(),
            env => format!("{} ({})", self.id(), &env[1..]),
        }
    }
}

/// The tests of `binary` that run (ignored ones left out) whose names start
/// with `prefix`.
pub fn list_tests(
    binary: &TestBinary,
    prefix: &str,
) -> Result<Vec<TestCase>, String> {
    let ignored = listed(binary, true)?;
    Ok(listed(binary, false)?
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

/// Where and how the tests run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The folder `cargo test` runs a test in: the package's (`tests/`).
    pub package_dir: PathBuf,
    pub deadline: Duration,
    pub env: Vec<(String, String)>,
    /// Once this many tests hung, each test left may run only `HURRIED`,
    /// and is left out if it runs longer: each more hang would cost a
    /// deadline, but a quick failure may still name the function. So too,
    /// when set, once all have started, those running all seem stuck, and
    /// one failed with a message.
    pub enough_hangs: Option<usize>,
    /// `SLOW` and `HURRIED`, shorter in this module's own tests.
    pub slow: Duration,
    pub hurried: Duration,
    /// How many run at once (`AT_ONCE`; the probe's reruns, which mostly
    /// wait on a hang, more).
    pub at_once: usize,
    /// The test files not run at all once enough tests hung (`check`: the
    /// demos' traces and snapshots, which hang with the rest).
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

/// The tests that ran, in the order asked, and those left out.
#[derive(Debug, Clone)]
pub struct Ran {
    pub runs: Vec<TestRun>,
    pub not_run: Vec<TestCase>,
    /// Whether the caller's `enough` ended the run (`run_tests_until`),
    /// and left out those not run.
    pub enough: bool,
}

/// Runs every test in `cases`, `Settings::at_once` at a time, each in a
/// process of its own.
pub fn run_tests(
    cases: &[TestCase],
    settings: &Settings,
    progress: &Progress,
) -> Ran {
    run_tests_until(cases, settings, progress, |_| false)
}

/// What the tests have done so far, as `run_tests_until` asks its caller
/// whether that is enough.
#[derive(Debug)]
pub struct SoFar<'r> {
    /// The tests ended, in the order they ended.
    pub runs: &'r [TestRun],
    /// How many were left out, stopped after `HURRIED`.
    pub left_out: usize,
    /// Whether every test running has run `SLOW` or more.
    pub seem_stuck: bool,
    /// The tests running, with how long each has run.
    pub running: Vec<(TestCase, Duration)>,
}

/// `run_tests`, but once `enough` says the tests so far answer the
/// caller's question, the tests left are not started and those running
/// are stopped (and left out, as `Ran::not_run`).
pub fn run_tests_until(
    cases: &[TestCase],
    settings: &Settings,
    progress: &Progress,
    enough: impl Fn(&SoFar) -> bool,
) -> Ran {
    let mut pool = Pool {
        settings,
        progress,
        queue: cases.iter().cloned().collect(),
        running: Vec::new(),
        runs: Vec::new(),
        hurried: false,
        hangs: 0,
        left_out: 0,
    };
    let (mut stopped, mut last_said) = (false, Instant::now());
    while !pool.queue.is_empty() || !pool.running.is_empty() {
        pool.start_more();
        thread::sleep(Duration::from_millis(20));
        pool.end_those_over();
        let seem_stuck = each_ran_at_least(&pool.running, settings.slow);
        pool.hurry_after_a_quick_failure(seem_stuck);
        let so_far = SoFar {
            runs: &pool.runs,
            left_out: pool.left_out,
            seem_stuck,
            running: pool
                .running
                .iter()
                .map(|test| (test.case.clone(), test.began.elapsed()))
                .collect(),
        };
        if last_said.elapsed() >= TICK {
            let done = pool.runs.len();
            progress.say(&still_running(&so_far.running, done, cases.len()));
            last_said = Instant::now();
        }
        if enough(&so_far) {
            stopped = true;
            pool.queue.clear();
            pool.running.drain(..).for_each(Running::stop);
        }
    }
    let mut runs = pool.runs;
    runs.sort_by_key(|run| cases.iter().position(|case| *case == run.case));
    let not_run = cases
        .iter()
        .filter(|case| !runs.iter().any(|run| run.case == **case))
        .cloned()
        .collect();
    Ran {
        runs,
        not_run,
        enough: stopped,
    }
}

/// The tests of a run: waiting, running and ended, and the rules met.
struct Pool<'s> {
    settings: &'s Settings,
    progress: &'s Progress,
    queue: VecDeque<TestCase>,
    running: Vec<Running>,
    runs: Vec<TestRun>,
    /// Each test may run only `Settings::hurried`.
    hurried: bool,
    hangs: usize,
    left_out: usize,
}

impl Pool<'_> {
    /// Starts tests until `Settings::at_once` run (more once hurried, as
    /// each then runs `HURRIED` at most).
    fn start_more(&mut self) {
        let mut at_once = self.settings.at_once;
        if self.hurried {
            at_once = at_once.max(AT_ONCE_WHEN_HURRIED);
        }
        while self.running.len() < at_once {
            let Some(case) = self.queue.pop_front() else {
                return;
            };
            match Running::start(&case, self.settings) {
                Ok(test) => self.running.push(test),
                Err(err) => self.ended(TestRun {
                    case,
                    outcome: Outcome::Crashed(format!(
                        "could not start the test: {err}"
                    )),
                    took: Duration::ZERO,
                }),
            }
        }
    }

    /// Ends the tests that exited, ran past the deadline, or, once
    /// hurried, ran `Settings::hurried` (those are left out).
    fn end_those_over(&mut self) {
        let settings = self.settings;
        let mut index = 0;
        while index < self.running.len() {
            let test = &mut self.running[index];
            let exited = test.child.try_wait().ok().flatten();
            let ran = test.began.elapsed();
            let left_out = has_had_its_time(ran, self.hurried, settings.hurried);
            if exited.is_none() && !left_out && ran < settings.deadline {
                index += 1;
                continue;
            }
            let test = self.running.remove(index);
            if exited.is_none() && left_out {
                test.stop();
                self.left_out += 1;
            } else {
                self.ended(test.end(exited, settings.deadline));
            }
        }
    }

    /// Notes a test ended; at the hang that makes enough, hurries the rest
    /// and takes the files `Settings::left_out_when_hurried` names out of
    /// the queue, before another test starts.
    fn ended(&mut self, run: TestRun) {
        if !run.outcome.passed() {
            let label = run.case.label();
            self.progress
                .say(&format!("{label}: {}", run.outcome.summary()));
        }
        let hung = run.hung();
        self.runs.push(run);
        if !hung {
            return;
        }
        self.hangs += 1;
        if self.settings.enough_hangs == Some(self.hangs) {
            let files = &self.settings.left_out_when_hurried;
            self.queue.retain(|case| !files.contains(&case.file));
            self.hurried = true;
            say_hurried(self.queue.len(), self.settings.hurried, self.progress);
        }
    }

    /// All quick tests done, one failed with a message, and those running
    /// `seem_stuck`: that failure names the mistake better than the slow
    /// ones would, so they are hurried.
    fn hurry_after_a_quick_failure(&mut self, seem_stuck: bool) {
        let failed_quickly = self.runs.iter().any(|run| {
            !run.outcome.passed() && !run.hung() && !run.only_lines_added()
        });
        if self.settings.enough_hangs.is_some()
            && seem_stuck
            && failed_quickly
            && self.queue.is_empty()
            && !self.hurried
        {
            self.hurried = true;
            self.progress.say(&format!(
                "a test failed, and those still running, each for {} s or more, seem stuck: \
                 they are left out",
                self.settings.slow.as_secs()
            ));
        }
    }
}

/// Whether every test running has run `slow` or more.
fn each_ran_at_least(running: &[Running], slow: Duration) -> bool {
    !running.is_empty() && running.iter().all(|test| test.began.elapsed() >= slow)
}

/// Whether a test that has run `ran` is to be left out: only once the
/// run is hurried, and then once it has run `hurried_for` in all, counted
/// from its start: one that ran that long has no quick failure to give.
fn has_had_its_time(ran: Duration, hurried: bool, hurried_for: Duration) -> bool {
    hurried && ran >= hurried_for
}

fn say_hurried(left: usize, hurried: Duration, progress: &Progress) {
    let which = match left {
        0 => return,
        1 => "the one test left".to_owned(),
        _ => format!("each of the {left} left"),
    };
    progress.say(&format!(
        "tests never end: {which} may run {} s, and one running longer is left out",
        hurried.as_secs()
    ));
}

/// The progress line while tests run: how many are done, and which run
/// now, with their seconds; between two tests, when none runs, only the
/// count (not "running " with nothing after it).
fn still_running(
    running: &[(TestCase, Duration)],
    done: usize,
    all: usize,
) -> String {
    let now: Vec<String> = running
        .iter()
        .map(|(case, ran)| format!("{} ({} s)", case.label(), ran.as_secs()))
        .collect();
    if now.is_empty() {
        format!("{done} of {all} tests done")
    } else {
        format!("{done} of {all} tests done; running {}", now.join(", "))
    }
}

/// A test running in a process of its own, its output read meanwhile.
struct Running {
    case: TestCase,
    child: Child,
    stdout: Receiver<Output>,
    stderr: Receiver<Output>,
    began: Instant,
}

impl Running {
    fn start(case: &TestCase, settings: &Settings) -> io::Result<Running> {
        let mut command = Command::new(&case.binary);
        // `--nocapture`: a test that aborts its process (a stack overflow,
        // a panic in a destructor) loses what libtest captured; straight to
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
        let mut child = processes::spawn_test(&mut command)?;
        Ok(Running {
            stdout: read_in_background(child.stdout.take(), verdict::STDOUT_SIGNS),
            stderr: read_in_background(child.stderr.take(), verdict::STDERR_SIGNS),
            child,
            case: case.clone(),
            began: Instant::now(),
        })
    }

    /// Ends the test, with what it started (a demo, a server), and says
    /// how it ended: `exited`, or stopped at `deadline`.
    fn end(mut self, exited: Option<ExitStatus>, deadline: Duration) -> TestRun {
        let stopped_for_memory = stopped_for_memory(self.child.id());
        let escaped = processes::end_test(&mut self.child);
        if !escaped.is_empty() {
            eprintln!(
                "{}: ended what it left running outside its process group: {}",
                self.case.label(),
                escaped.join(", ")
            );
        }
        let (stdout, stderr) = (collect(&self.stdout), collect(&self.stderr));
        let outcome = match (exited, stopped_for_memory) {
            (None, _) => Outcome::TimedOut(deadline),
            (Some(_), Some(why)) => Outcome::OutOfMemory(why),
            (Some(status), None) => {
                verdict::classify(status, &stdout, &stderr, &self.case.name)
            }
        };
        TestRun {
            took: self.began.elapsed(),
            case: self.case,
            outcome,
        }
    }

    /// Ends the test, and what it started, for nothing: it is left out.
    fn stop(mut self) {
        processes::end_test(&mut self.child);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hurried_test_runs_its_hurried_seconds_from_its_start_not_from_the_hurry() {
        let hurried_for = Duration::from_secs(3);
        // Running 5 s, as one must to seem stuck (`SLOW`), when hurried: out
        // at once, not 3 s later.
        assert!(has_had_its_time(Duration::from_secs(5), true, hurried_for));
        // Started just before the hurry: it keeps its 3 s for a quick failure.
        assert!(!has_had_its_time(Duration::from_secs(1), true, hurried_for));
        // Unhurried, only the deadline ends it.
        assert!(!has_had_its_time(
            Duration::from_secs(20),
            false,
            hurried_for
        ));
    }

    #[test]
    fn the_progress_line_names_what_runs_and_never_ends_in_running() {
        assert_eq!(still_running(&[], 3, 19), "3 of 19 tests done");
        let case = TestCase {
            file: "step03_timers".to_owned(),
            name: "a".to_owned(),
            binary: PathBuf::new(),
            env: Vec::new(),
        };
        let one = [(case, Duration::ZERO)];
        assert_eq!(
            still_running(&one, 3, 19),
            "3 of 19 tests done; running step03_timers::a (0 s)"
        );
    }
}
