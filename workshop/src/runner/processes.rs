//! Nothing `check` starts outlives it. Each test runs in a process group of
//! its own, so that ending it ends the demos and servers it started; the
//! terminal's Ctrl-C then reaches only `check`, which ends every noted
//! test and Cargo itself. On Linux `check` also adopts what left a test's
//! group (it is their "subreaper"), and marks each test with its identity,
//! so that the next check ends what a check killed outright (`kill -9`)
//! left running.

use std::io;
use std::path::Path;
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
/// started after that would outlive it.
static ENDING: AtomicBool = AtomicBool::new(false);

fn started() -> MutexGuard<'static, Vec<Started>> {
    STARTED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts a test in a process group of its own, its memory capped, noted
/// until `end_test`.
pub(super) fn spawn_test(command: &mut Command) -> io::Result<Child> {
    in_a_process_group_of_its_own(command);
    if let Some(me) = STARTED_BY_ME.get() {
        command.env(STARTED_BY, me);
    }
    let child = spawn(command, true)?;
    super::memory::watch();
    Ok(child)
}

/// Starts Cargo, noted until `forget_cargo`.
pub(super) fn spawn_cargo(command: &mut Command) -> io::Result<Child> {
    spawn(command, false)
}

/// Spawns and notes under one lock: `end_escaped` must never take a test
/// just started for an orphan, and no Cargo may start under a test's cap.
fn spawn(command: &mut Command, test: bool) -> io::Result<Child> {
    let mut noted = started();
    if ENDING.load(Ordering::SeqCst) {
        return Err(io::Error::other("not started: the check is ending"));
    }
    if !test {
        let child = command.spawn()?;
        noted.push(Started::Process(child.id()));
        return Ok(child);
    }
    let child = super::memory::capped(|| command.spawn())?;
    noted.push(Started::Group(child.id()));
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
    signal_groups(&[child.id()], Signal::KILL);
    let _ = child.kill();
    let _ = child.wait();
    started().retain(|p| *p != Started::Group(child.id()));
    let _ = super::memory::stopped_for_memory(child.id());
    end_escaped(Some(child.id()))
}

#[cfg(unix)]
pub(super) fn in_a_process_group_of_its_own(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(not(unix))]
pub(super) fn in_a_process_group_of_its_own(_command: &mut Command) {}

#[cfg(unix)]
use rustix::process::Signal;

/// Where there are no signals: what would be sent, to nothing.
#[cfg(not(unix))]
#[derive(Clone, Copy)]
#[allow(clippy::upper_case_acronyms)]
enum Signal {
    KILL,
    STOP,
    CONT,
}

/// Sends `signal` to each process group of `groups`; one gone already is
/// no matter.
fn signal_groups(groups: &[u32], signal: Signal) {
    #[cfg(unix)]
    for group in groups.iter().filter_map(|group| pid(*group)) {
        let _ = rustix::process::kill_process_group(group, signal);
    }
    #[cfg(not(unix))]
    let _ = (groups, signal);
}

/// The tests running now, stopped (SIGSTOP) while the probe asks about
/// those that seem stuck, so that its build and reruns have the processor
/// (beside tests that spin, they waited 5 to 8 s for it); they go on when
/// this is dropped, or after `at_most`.
#[derive(Debug)]
#[must_use = "the tests go on once it is dropped"]
pub struct Paused {
    groups: Vec<u32>,
}

impl Paused {
    pub fn now() -> Self {
        let groups = test_groups();
        signal_groups(&groups, Signal::STOP);
        Paused { groups }
    }

    /// Lets them go on after `limit` at most, even while this is held.
    pub fn at_most(&self, limit: std::time::Duration) {
        let groups = self.groups.clone();
        std::thread::spawn(move || {
            std::thread::sleep(limit);
            signal_groups(&groups, Signal::CONT);
        });
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        signal_groups(&self.groups, Signal::CONT);
    }
}

/// The signals that end a run (Ctrl-C, SIGTERM, a closed terminal's
/// SIGHUP), to be received on a thread; `None` leaves them their default.
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
/// nothing: its reader has gone (`check 3 2>&1 | head -4`).
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
            Started::Group(id) => signal_groups(&[id], Signal::KILL),
            Started::Process(id) => {
                if let Some(pid) = pid(id) {
                    let _ = rustix::process::kill_process(pid, Signal::TERM);
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
        use rustix::process::{WaitOptions, getpgrp, getpid, kill_process, waitpid};
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
    /// Clock ticks from boot to its start: an id is reused, never at the
    /// same tick.
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

/// The process `id`, if it exists (its command, in parentheses, may hold
/// spaces and parentheses).
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

/// The variable each test of a recording check is started with, which
/// whatever the test starts inherits: the check's identity and checkout.
/// No pid is kept, so none since reused by another program is taken.
const STARTED_BY: &str = "WORKSHOP_STARTED_BY_CHECK";

/// `STARTED_BY` for the tests this process starts, once asked to record.
static STARTED_BY_ME: OnceLock<String> = OnceLock::new();

/// From now on, on Linux, the tests this process starts carry its
/// identity and the checkout at `root`, for the next check there to end
/// what they leave should this one be killed (`kill -9`).
pub fn record_tests_in(root: &Path) {
    if let Some(me) = identity(std::process::id()) {
        let _ = STARTED_BY_ME.set(format!("{me} {}", root.display()));
    }
}

/// Ends what checks killed earlier in the checkout at `root` left running,
/// and names it in a line on stderr.
pub fn end_leftovers_of_killed_checks(root: &Path) {
    let ended = end_leftovers(root);
    if !ended.is_empty() {
        eprintln!(
            "ended what a check killed earlier left running: {}",
            ended.join(", ")
        );
    }
}

/// Ends every process that a dead check of the checkout at `root` started
/// (by the `STARTED_BY` it carries), in its test's group or out of it,
/// never a live check's: what was ended, as `pid (command)`.
#[cfg(target_os = "linux")]
fn end_leftovers(root: &Path) -> Vec<String> {
    let me = std::process::id();
    let mut ended = Vec::new();
    for process in processes() {
        // Not itself: a check a killed check's test started carries it too.
        if process.ended || process.id == me {
            continue;
        }
        let Some(by) = started_by(process.id) else {
            continue;
        };
        let Some((check, checkout)) = by.split_once(' ') else {
            continue;
        };
        if Path::new(checkout) == root && !is_alive(check) {
            if let Some(id) = pid(process.id) {
                let _ = rustix::process::kill_process(id, Signal::KILL);
            }
            ended.push(format!("{} ({})", process.id, process.command));
        }
    }
    ended
}

#[cfg(not(target_os = "linux"))]
fn end_leftovers(_root: &Path) -> Vec<String> {
    Vec::new()
}

/// Who `id` is, or `None` if it is not running: its id and start, which no
/// later process shares.
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

#[cfg(target_os = "linux")]
fn is_alive(check: &str) -> bool {
    let id = check.split(':').next().and_then(|id| id.parse().ok());
    id.and_then(identity).as_deref() == Some(check)
}

/// What process `id` carries in `STARTED_BY`, if anything.
#[cfg(target_os = "linux")]
fn started_by(id: u32) -> Option<String> {
    let environment = std::fs::read(format!("/proc/{id}/environ")).ok()?;
    let prefix = format!("{STARTED_BY}=");
    environment
        .split(|byte| *byte == 0)
        .find_map(|variable| variable.strip_prefix(prefix.as_bytes()))
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

#[cfg(all(test, target_os = "linux"))]
mod tests;
