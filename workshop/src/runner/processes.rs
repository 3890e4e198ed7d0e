//! Nothing `check` starts outlives it. Each test runs in a process group of
//! its own, so that ending it ends the demos and servers it started; the
//! terminal's Ctrl-C then reaches only `check`, which ends every noted
//! test and Cargo itself. On Linux `check` also adopts what left a test's
//! group (it is their "subreaper"), and records each test it runs in
//! `.workshop/running/`, so that the next check ends what a check killed
//! outright (`kill -9`) left running.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

/// A process `check` started and has not reaped yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Started {
    /// A test, leader of a process group of its own.
    Group(u32),
    /// Cargo, in `check`'s own group.
    Process(u32),
}

static STARTED: Mutex<Vec<Started>> = Mutex::new(Vec::new());

/// Set, with `STARTED` held, once `check` ends everything to exit: a test
/// a worker started after that would outlive it.
static ENDING: AtomicBool = AtomicBool::new(false);

fn started() -> MutexGuard<'static, Vec<Started>> {
    STARTED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts a test in a process group of its own, noted until `end_test`.
pub(super) fn spawn_test(command: &mut Command) -> io::Result<Child> {
    in_a_process_group_of_its_own(command);
    let record = RECORD.get();
    if let Some(record) = record {
        command.env(STARTED_BY, &record.owner);
    }
    let child = spawn(command, Started::Group)?;
    if let Some(record) = record {
        record.note(child.id());
    }
    super::memory::watch();
    Ok(child)
}

/// Starts Cargo, noted until `forget_cargo`.
pub(super) fn spawn_cargo(command: &mut Command) -> io::Result<Child> {
    spawn(command, Started::Process)
}

/// Spawns and notes under one lock: `end_escaped` must never take a test
/// just started for an orphan.
fn spawn(command: &mut Command, noted_as: fn(u32) -> Started) -> io::Result<Child> {
    let mut noted = started();
    if ENDING.load(Ordering::SeqCst) {
        return Err(io::Error::other("not started: the check is ending"));
    }
    let child = command.spawn()?;
    noted.push(noted_as(child.id()));
    Ok(child)
}

pub(super) fn forget_cargo(child: &Child) {
    started().retain(|p| *p != Started::Process(child.id()));
}

/// The process groups of the tests running.
pub(super) fn test_groups() -> Vec<u32> {
    let started = started();
    let groups = started.iter().filter_map(|p| match p {
        Started::Group(group) => Some(*group),
        Started::Process(_) => None,
    });
    groups.collect()
}

/// Kills the test, if still running, and everything in its group, then
/// reaps it. Returns the processes that escaped its group, ended now.
pub(super) fn end_test(child: &mut Child) -> Vec<String> {
    signal_group(child.id(), Signal::Kill);
    let _ = child.kill();
    let _ = child.wait();
    started().retain(|p| *p != Started::Group(child.id()));
    let _ = super::memory::stopped_for_memory(child.id());
    if let Some(record) = RECORD.get() {
        record.forget(child.id());
    }
    end_escaped(Some(child.id()))
}

#[cfg(unix)]
pub(super) fn in_a_process_group_of_its_own(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(not(unix))]
pub(super) fn in_a_process_group_of_its_own(_command: &mut Command) {}

/// What `signal_group` sends.
#[derive(Debug, Clone, Copy)]
enum Signal {
    Kill,
    Stop,
    Continue,
}

/// Sends `signal` to the process group `group`; one gone already is no
/// matter.
#[cfg(unix)]
fn signal_group(group: u32, signal: Signal) {
    use rustix::process::{Signal as S, kill_process_group};
    let signal = match signal {
        Signal::Kill => S::KILL,
        Signal::Stop => S::STOP,
        Signal::Continue => S::CONT,
    };
    if let Some(group) = pid(group) {
        let _ = kill_process_group(group, signal);
    }
}

#[cfg(not(unix))]
fn signal_group(_group: u32, _signal: Signal) {}

/// The tests running now, stopped (SIGSTOP) while the probe asks about
/// those that seem stuck, so that its build and reruns have the processor
/// (beside tests that spin, they waited 5 to 8 s for it); they go on when
/// this is dropped, or after `at_most`, so one only slow still ends in time.
#[derive(Debug)]
#[must_use = "the tests go on once it is dropped"]
pub struct Paused {
    groups: Vec<u32>,
}

impl Paused {
    pub fn now() -> Self {
        let groups = test_groups();
        for group in &groups {
            signal_group(*group, Signal::Stop);
        }
        Paused { groups }
    }

    /// Lets them go on after `limit` at most, even while this is held.
    pub fn at_most(&self, limit: std::time::Duration) {
        let groups = self.groups.clone();
        std::thread::spawn(move || {
            std::thread::sleep(limit);
            go_on(&groups);
        });
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        go_on(&self.groups);
    }
}

fn go_on(groups: &[u32]) {
    for group in groups {
        signal_group(*group, Signal::Continue);
    }
}

/// The signals that end a run, to be received on a thread: Ctrl-C
/// (SIGINT), SIGTERM, and a closed terminal's SIGHUP. `None` if they cannot
/// be received, and then each keeps its default: it ends the process.
#[cfg(unix)]
pub fn interrupts() -> Option<signal_hook::iterator::Signals> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]).ok()
}

/// From now on, an interrupt (Ctrl-C, SIGTERM, SIGHUP) ends every process
/// `check` started, says so, and exits as the signal would have. So does
/// Ctrl-Z (SIGTSTP): a stopped Cargo would hold the build folder's lock,
/// and every later command, `cargo run` too, would wait for it for ever.
pub fn end_everything_on_interrupt() {
    #[cfg(unix)]
    {
        use signal_hook::consts::SIGTSTP;
        use std::io::Write;
        let Some(mut signals) = interrupts() else {
            return;
        };
        let _ = signals.add_signal(SIGTSTP);
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                if signal == SIGTSTP {
                    // The terminal stopped our whole process group, Cargo
                    // and its compilers too: they go on, to be ended.
                    let _ = rustix::process::kill_current_process_group(
                        rustix::process::Signal::CONT,
                    );
                }
                let ended = end_all();
                let why = if signal == SIGTSTP {
                    "stopped (Ctrl-Z): a check cannot wait in the background, \
                     where its Cargo would hold the build folder's lock, so \
                     what it started is ended"
                } else {
                    "interrupted: what `check` started is ended"
                };
                let _ = writeln!(io::stderr(), "\n{why} ({ended} tests and builds)");
                std::process::exit(128 + signal);
            }
        });
    }
}

/// Ends every process `check` started and exits with `code`, saying
/// nothing: for a check whose reader has gone (`check 3 2>&1 | head -4`).
pub fn end_everything_and_exit(code: i32) -> ! {
    #[cfg(unix)]
    end_all();
    std::process::exit(code)
}

/// From now on, on Linux, the orphans of the tests this process starts come
/// to it (not to `init`), for `end_test` to find.
pub fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
}

/// Ends every noted process and orphan: how many were noted.
#[cfg(unix)]
fn end_all() -> usize {
    let noted = {
        let noted = started();
        ENDING.store(true, Ordering::SeqCst);
        noted.clone()
    };
    for process in &noted {
        match *process {
            Started::Group(id) => {
                signal_group(id, Signal::Kill);
                if let Some(record) = RECORD.get() {
                    record.forget(id);
                }
            }
            Started::Process(id) => {
                if let Some(pid) = pid(id) {
                    let term = rustix::process::Signal::TERM;
                    let _ = rustix::process::kill_process(pid, term);
                }
            }
        }
    }
    let _ = end_escaped(None);
    noted.len()
}

#[cfg(unix)]
fn pid(id: u32) -> Option<rustix::process::Pid> {
    rustix::process::Pid::from_raw(i32::try_from(id).ok()?)
}

/// Ends the children of this process that are in no group it knows: a
/// test's descendants, orphaned to it. Those that left their test's group
/// (not that of `just_ended`, not yet ended) are named, as `pid (command)`.
fn end_escaped(just_ended: Option<u32>) -> Vec<String> {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{
            Signal, WaitOptions, getpgrp, getpid, kill_process, waitpid,
        };
        let noted = started();
        let (me, my_group) = (getpid().as_raw_nonzero().get(), getpgrp());
        let mut ended = Vec::new();
        for child in processes() {
            let known = noted.contains(&Started::Group(child.group));
            if child.parent != me || known || pid(child.group) == Some(my_group) {
                continue;
            }
            if let Some(pid) = pid(child.id) {
                let _ = kill_process(pid, Signal::KILL);
                let _ = waitpid(Some(pid), WaitOptions::empty());
            }
            if !child.ended && Some(child.group) != just_ended {
                ended.push(format!("{} ({})", child.id, child.command));
            }
        }
        ended
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = just_ended; // no subreaper here: nothing is adopted
        Vec::new()
    }
}

/// A process, as `/proc/<id>/stat` shows it.
#[cfg(target_os = "linux")]
pub(super) struct Process {
    pub id: u32,
    parent: i32,
    pub group: u32,
    command: String,
    /// A zombie: ended, not yet reaped.
    ended: bool,
    /// Clock ticks from boot to its start: with its id, which process it is
    /// (an id is reused, never at the same tick).
    started: u64,
}

/// Every process, from `/proc/<id>/stat`.
#[cfg(target_os = "linux")]
pub(super) fn processes() -> Vec<Process> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().parse().ok())
        .filter_map(process)
        .collect()
}

/// The process `id`, if it exists (the command is in parentheses and may
/// hold spaces and parentheses).
#[cfg(target_os = "linux")]
fn process(id: u32) -> Option<Process> {
    let stat = std::fs::read_to_string(format!("/proc/{id}/stat")).ok()?;
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    // Fields from the third (the state) on: `proc(5)` counts from one.
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    Some(Process {
        id,
        parent: fields.get(1)?.parse().ok()?,
        group: fields.get(2)?.parse().ok()?,
        command: stat[open + 1..close].to_owned(),
        ended: fields.first() == Some(&"Z"),
        started: fields.get(19)?.parse().ok()?,
    })
}

// ---------------------------------------------------------------------------
// What a killed check left running (Linux only: elsewhere no process shows
// who started it, and a killed check's tests run until they end).

/// The variable each test of a recording check is started with: the
/// check's identity, inherited by whatever the test starts, so that a pid
/// since reused by another program is never taken for its.
const STARTED_BY: &str = "WORKSHOP_STARTED_BY_CHECK";

/// Where this process records the tests it starts, once asked to.
static RECORD: OnceLock<Record> = OnceLock::new();

/// A check's record of its running tests: a file for each, named after
/// the check and the test's group, so that two checks never write the same.
#[derive(Debug)]
struct Record {
    dir: PathBuf,
    /// The check's identity (`identity`).
    owner: String,
}

/// The folder of the records of the checks of the checkout at `root`.
fn running_dir(root: &Path) -> PathBuf {
    root.join(".workshop").join("running")
}

/// From now on, on Linux, the tests this process starts are recorded in
/// the checkout at `root`, for the next check to end what they leave
/// should this one be killed.
pub fn record_tests_in(root: &Path) {
    if let Some(owner) = identity(std::process::id()) {
        let _ = RECORD.set(Record {
            dir: running_dir(root),
            owner,
        });
    }
}

impl Record {
    fn file(&self, group: u32) -> PathBuf {
        let owner = self.owner.split(':').next().unwrap_or_default();
        self.dir.join(format!("{owner}-{group}"))
    }

    /// Notes the test leading `group`. Written aside and renamed, so that
    /// another check never reads half an entry; a record that cannot be
    /// written costs only the cleanup after a kill, never the test.
    fn note(&self, group: u32) {
        let file = self.file(group);
        let aside = file.with_extension("new");
        let _ = std::fs::create_dir_all(&self.dir);
        if std::fs::write(&aside, format!("{}\n", self.owner)).is_ok() {
            let _ = std::fs::rename(&aside, &file);
        }
    }

    fn forget(&self, group: u32) {
        let _ = std::fs::remove_file(self.file(group));
    }
}

/// The entries in `dir`, each as its file and the identity of the check
/// that wrote it, skipping any being written (`Record::note`).
fn entries(dir: &Path) -> Vec<(PathBuf, String)> {
    let files = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let files = files
        .map(|file| file.path())
        .filter(|file| file.extension().is_none());
    files
        .filter_map(|file| {
            let text = std::fs::read_to_string(&file).ok()?;
            let owner = text.lines().next()?.to_owned();
            Some((file, owner))
        })
        .collect()
}

/// Who `id` is, or `None` if it is not running: its id and start, which no
/// later process shares. Only Linux shows that: elsewhere nothing is
/// recorded.
#[cfg(target_os = "linux")]
fn identity(id: u32) -> Option<String> {
    process(id)
        .filter(|process| !process.ended)
        .map(|process| format!("{id}:{}", process.started))
}

#[cfg(not(target_os = "linux"))]
fn identity(_id: u32) -> Option<String> {
    None
}

fn is_alive(owner: &str) -> bool {
    let id = owner.split(':').next().and_then(|id| id.parse().ok());
    id.and_then(identity).as_deref() == Some(owner)
}

/// Ends what checks killed earlier in the checkout at `root` left running,
/// and names it in a line on stderr.
pub fn end_leftovers_of_killed_checks(root: &Path) {
    let ended = end_leftovers(&running_dir(root));
    if !ended.is_empty() {
        eprintln!(
            "ended what a check killed earlier left running: {}",
            ended.join(", ")
        );
    }
}

/// Ends the leftovers of the entries in `dir` whose check is dead, and
/// removes those entries; what was ended, as `pid (command)`. A live
/// check's are never touched.
fn end_leftovers(dir: &Path) -> Vec<String> {
    let dead: Vec<(PathBuf, String)> = entries(dir)
        .into_iter()
        .filter(|(_, owner)| !is_alive(owner))
        .collect();
    if dead.is_empty() {
        return Vec::new();
    }
    let ended = end_started_by(&dead);
    for (file, _) in &dead {
        let _ = std::fs::remove_file(file);
    }
    ended
}

/// Ends every process started by the dead checks' tests, known by the
/// identity of the check each carries (`STARTED_BY`): in their groups or
/// out of them, and never a process that took a recorded id since.
#[cfg(target_os = "linux")]
fn end_started_by(dead: &[(PathBuf, String)]) -> Vec<String> {
    use rustix::process::{Signal, kill_process};
    let me = std::process::id();
    let mut ended = Vec::new();
    for process in processes() {
        // Not itself: a check a killed check's test started carries that
        // check's identity too.
        if process.ended || process.id == me {
            continue;
        }
        let Some(owner) = started_by(process.id) else {
            continue;
        };
        if dead.iter().any(|(_, dead)| *dead == owner) {
            if let Some(id) = pid(process.id) {
                let _ = kill_process(id, Signal::KILL);
            }
            ended.push(format!("{} ({})", process.id, process.command));
        }
    }
    ended
}

#[cfg(not(target_os = "linux"))]
fn end_started_by(_dead: &[(PathBuf, String)]) -> Vec<String> {
    Vec::new()
}

/// The identity of the check that started process `id`'s test, if any.
#[cfg(target_os = "linux")]
fn started_by(id: u32) -> Option<String> {
    let environment = std::fs::read(format!("/proc/{id}/environ")).ok()?;
    let prefix = format!("{STARTED_BY}=");
    environment
        .split(|byte| *byte == 0)
        .find_map(|variable| variable.strip_prefix(prefix.as_bytes()))
        .map(|owner| String::from_utf8_lossy(owner).into_owned())
}

#[cfg(all(test, target_os = "linux"))]
mod tests;
