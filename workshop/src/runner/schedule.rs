//! Listing a step's tests and running them: each test in a process of its
//! own, `AT_ONCE` at a time, each stopped at its deadline; and the rules
//! that stop the run early: once enough tests hung, the rest are hurried
//! (and some files left out), and once the caller has its answer, what is
//! left stops.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::memory::stopped_for_memory;
use super::output::{collect, read_in_background};
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
    Started(TestCase),
    Finished(TestRun),
    /// Stopped after `HURRIED`, because enough tests hung.
    LeftOut(TestCase),
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
            if let Ok(mut queue) = queue.lock() {
                let files = &settings.left_out_when_hurried;
                queue.retain(|case| !files.contains(&case.file));
            }
            self.hurry.store(true, Ordering::SeqCst);
        }
    }
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
    /// Whether every test running has run `SLOW` or more: they may never
    /// end.
    pub seem_stuck: bool,
    /// The tests running, with how long each has run.
    pub running: Vec<(TestCase, Duration)>,
}

/// Whether every test running has run `slow` or more.
fn each_ran_at_least(running: &[(TestCase, Instant)], slow: Duration) -> bool {
    !running.is_empty() && running.iter().all(|(_, since)| since.elapsed() >= slow)
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
    let queue = Arc::new(Mutex::new(cases.iter().cloned().collect::<VecDeque<_>>()));
    let orders = Arc::new(Orders::default());
    let hurry = &orders.hurry;
    let (sender, received) = mpsc::channel();
    for _ in 0..settings.at_once {
        start_worker(&queue, &orders, settings, sender.clone());
    }
    let (mut workers, mut more_workers) = (settings.at_once, Some(sender));
    let mut runs: Vec<TestRun> = Vec::new();
    let mut running: Vec<(TestCase, Instant)> = Vec::new();
    let mut last_said = Instant::now();
    let mut said_hurried = false;
    let mut left_out = 0;
    loop {
        if is_empty(&queue) {
            // None needed: the workers' own senders keep the channel open
            // until the last one ends.
            more_workers = None;
        }
        // All quick tests done, one failed with a message: that names the
        // mistake better than the slow ones left would, so they are hurried.
        let failed_quickly = runs.iter().any(|run| {
            !run.outcome.passed() && !run.hung() && !run.only_lines_added()
        });
        if settings.enough_hangs.is_some()
            && each_ran_at_least(&running, settings.slow)
            && failed_quickly
            && is_empty(&queue)
            && !hurry.swap(true, Ordering::SeqCst)
        {
            progress.say(&format!(
                "a test failed, and those still running, each for {} s or more, seem stuck: \
                 they are left out",
                settings.slow.as_secs()
            ));
        }
        // Hurried tests each run `HURRIED` at most: more at once.
        if let Some(sender) = more_workers.as_ref().filter(|_| {
            hurry.load(Ordering::SeqCst) && workers < AT_ONCE_WHEN_HURRIED
        }) {
            start_worker(&queue, &orders, settings, sender.clone());
            workers += 1;
        }
        match received.recv_timeout(Duration::from_secs(1)) {
            Ok(Event::Started(case)) => running.push((case, Instant::now())),
            Ok(Event::LeftOut(case)) => {
                running.retain(|(other, _)| *other != case);
                left_out += 1;
            }
            Ok(Event::Finished(run)) => {
                running.retain(|(other, _)| *other != run.case);
                if !run.outcome.passed() {
                    let label = run.case.label();
                    progress.say(&format!("{label}: {}", run.outcome.summary()));
                }
                runs.push(run);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let so_far = SoFar {
            runs: &runs,
            left_out,
            seem_stuck: each_ran_at_least(&running, settings.slow),
            running: running
                .iter()
                .map(|(case, since)| (case.clone(), since.elapsed()))
                .collect(),
        };
        if !orders.stop.load(Ordering::SeqCst) && enough(&so_far) {
            orders.stop.store(true, Ordering::SeqCst);
            if let Ok(mut queue) = queue.lock() {
                queue.clear();
            }
        }
        // Raised by the worker whose test was the last hang it took.
        if orders.hung_enough.load(Ordering::SeqCst)
            && !said_hurried
            && !orders.stop.load(Ordering::SeqCst)
        {
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
            let _ = events.send(Event::Started(case.clone()));
            let _ = events.send(match run_one(&case, &settings, &orders) {
                Some(run) => {
                    if run.hung() {
                        orders.note_hang(&settings, &queue);
                    }
                    Event::Finished(run)
                }
                None => Event::LeftOut(case),
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

fn say_hurried(
    queue: &Mutex<VecDeque<TestCase>>,
    hurried: Duration,
    progress: &Progress,
) {
    let left = queue.lock().map_or(0, |queue| queue.len());
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
    running: &[(TestCase, Instant)],
    done: usize,
    all: usize,
) -> String {
    let now: Vec<String> = running
        .iter()
        .map(|(case, since)| {
            format!("{} ({} s)", case.label(), since.elapsed().as_secs())
        })
        .collect();
    if now.is_empty() {
        format!("{done} of {all} tests done")
    } else {
        format!("{done} of {all} tests done; running {}", now.join(", "))
    }
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
            let stdout =
                read_in_background(child.stdout.take(), verdict::STDOUT_SIGNS);
            let stderr =
                read_in_background(child.stderr.take(), verdict::STDERR_SIGNS);
            let status = wait_until(&mut child, settings, orders);
            let stopped_for_memory = stopped_for_memory(child.id());
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
                    None => verdict::classify(status, &stdout, &stderr, &case.name),
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

/// Waits for the child to end, at most until the deadline, or until told
/// to stop. Once told to hurry, a test may run `HURRIED` in all, counted
/// from its start: one that has run that long without failing has no
/// quick failure to give.
fn wait_until(child: &mut Child, settings: &Settings, orders: &Orders) -> Waited {
    let (deadline, hurried_for) = (settings.deadline, settings.hurried);
    let began = Instant::now();
    loop {
        let hurried = orders.hurry.load(Ordering::SeqCst);
        if orders.stop.load(Ordering::SeqCst) {
            return Waited::Stopped;
        }
        match child.try_wait() {
            Ok(Some(status)) => return Waited::Exited(status),
            _ if has_had_its_time(began.elapsed(), hurried, hurried_for) => {
                return Waited::Stopped;
            }
            Ok(None) if began.elapsed() < deadline => {
                thread::sleep(Duration::from_millis(20));
            }
            _ => return Waited::Deadline,
        }
    }
}

/// Whether a test that has run `ran` is to be left out: only once the
/// run is hurried, and then once it has run `hurried_for` in all.
fn has_had_its_time(ran: Duration, hurried: bool, hurried_for: Duration) -> bool {
    hurried && ran >= hurried_for
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
        let one = [(case, Instant::now())];
        assert_eq!(
            still_running(&one, 3, 19),
            "3 of 19 tests done; running step03_timers::a (0 s)"
        );
    }
}
