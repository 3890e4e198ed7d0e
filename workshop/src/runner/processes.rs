//! Nothing `check` starts outlives it: every test (in a process group of
//! its own, with whatever it started) and every Cargo it runs is noted
//! while it lives, so that an interrupt can end them all.
//!
//! A test runs in a group of its own so that stopping it stops the demos
//! and servers it started too. That also keeps the terminal's Ctrl-C from
//! reaching it: the terminal interrupts only its foreground group, `cargo
//! workshop`'s. So `check` listens for the interrupt (and for SIGTERM and
//! SIGHUP) itself, ends every noted process, and then exits. A process
//! that left its test's group (`setsid`) would escape both; on Linux,
//! `check` adopts such orphans (it is their "subreaper") and ends and
//! names any it finds once a test is over.
//!
//! A check killed outright (`kill -9`, a closed laptop lid, a killed
//! terminal) can end nothing: its tests and what they started live on. So
//! `check` records each test it starts in `.workshop/running/` (and removes
//! the entry once the test is over), and the next `check` in the checkout
//! ends what a dead check's tests left running, and names it. Only a dead
//! check's: two checks may run at once, and a live one's tests are its own.
//! Only processes that are provably still those tests' own: on Linux, each
//! test is started with the check's identity (pid and start time) in its
//! environment, which whatever it starts inherits, and `/proc` shows it;
//! a pid since reused by another program does not carry it. Where the OS
//! gives no such proof (macOS), the next `check` names the groups still
//! there, with the command that ends them, and ends nothing. On Windows
//! nothing is recorded: a killed check's tests run on until they end on
//! their own (each guards itself with a deadline of seconds, but a server
//! a test started may not).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// A process `check` started and has not reaped yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Started {
    /// A test, leader of a process group of its own.
    Group(u32),
    /// Cargo, in `check`'s own group.
    Process(u32),
}

static STARTED: Mutex<Vec<Started>> = Mutex::new(Vec::new());

/// Set once `check` ends everything it started, to exit: a worker that
/// starts a test after that (the verdict or a closed reader ends the check
/// while tests still run) would leave it running, as a second closed
/// reader's check left a trace test and its demo. Read and set with
/// `STARTED` held.
static ENDING: AtomicBool = AtomicBool::new(false);

/// The error of a process not started because `check` is ending.
fn ending() -> io::Error {
    io::Error::other("not started: the check is ending")
}

fn started() -> std::sync::MutexGuard<'static, Vec<Started>> {
    STARTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Starts a test in a process group of its own, noted until `end_test`.
pub(super) fn spawn_test(command: &mut Command) -> io::Result<Child> {
    in_a_process_group_of_its_own(command);
    // Noted under the same lock as spawned: `end_escaped` must never take
    // a test just started for an orphan.
    let record = RECORD.get();
    if let Some(record) = record {
        command.env(STARTED_BY, &record.owner);
    }
    let mut noted = started();
    if ENDING.load(Ordering::SeqCst) {
        return Err(ending());
    }
    let child = command.spawn()?;
    noted.push(Started::Group(child.id()));
    if let Some(record) = record {
        record.note(child.id(), command);
    }
    Ok(child)
}

/// Starts Cargo, noted until `forget_cargo`.
pub(super) fn spawn_cargo(command: &mut Command) -> io::Result<Child> {
    let mut noted = started();
    if ENDING.load(Ordering::SeqCst) {
        return Err(ending());
    }
    let child = command.spawn()?;
    noted.push(Started::Process(child.id()));
    Ok(child)
}

pub(super) fn forget_cargo(child: &Child) {
    started().retain(|p| *p != Started::Process(child.id()));
}

/// Kills the test, if still running, and everything in its group, then
/// reaps it. Returns the processes that escaped its group, ended now.
pub(super) fn end_test(child: &mut Child) -> Vec<String> {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal, kill_process_group};
        let _ = kill_process_group(Pid::from_child(child), Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
    started().retain(|p| *p != Started::Group(child.id()));
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

mod paused;
pub use paused::Paused;

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
/// Ctrl-Z (SIGTSTP): a check stopped in the background would keep a
/// stopped Cargo holding the build folder's lock, and every later command,
/// `cargo run` too, would wait for it for ever.
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
/// nothing: for a check whose reader has gone (`check 3 2>&1 | head -4`),
/// which has no one left to give its verdict to.
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
        use rustix::process::{Signal, kill_process, kill_process_group};
        match *process {
            Started::Group(id) => {
                if let Some(pid) = pid(id) {
                    let _ = kill_process_group(pid, Signal::KILL);
                }
                if let Some(record) = RECORD.get() {
                    record.forget(id);
                }
            }
            Started::Process(id) => {
                if let Some(pid) = pid(id) {
                    let _ = kill_process(pid, Signal::TERM);
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
            let known = noted
                .iter()
                .any(|p| matches!(p, Started::Group(g) if *g == child.group));
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
struct Process {
    id: u32,
    parent: i32,
    group: u32,
    command: String,
    /// A zombie: ended, not yet reaped.
    ended: bool,
    /// Clock ticks from boot to its start: with its id, which process it is
    /// (an id is reused, never at the same tick).
    started: u64,
}

/// Every process, from `/proc/<id>/stat`.
#[cfg(target_os = "linux")]
fn processes() -> Vec<Process> {
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
// What a killed check left running.

/// The variable each test of a recording check is started with: the
/// check's identity, inherited by whatever the test starts.
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

/// From now on, the tests this process starts are recorded in the checkout
/// at `root`, for the next check to end what they leave should this one be
/// killed. Unix only: see the module's comment.
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
    fn note(&self, group: u32, command: &Command) {
        let program = Path::new(command.get_program()).file_name();
        let program = program.unwrap_or_default().to_string_lossy();
        let file = self.file(group);
        let aside = file.with_extension("new");
        let _ = std::fs::create_dir_all(&self.dir);
        let entry = format!("{}\n{group}\n{program}\n", self.owner);
        if std::fs::write(&aside, entry).is_ok() {
            let _ = std::fs::rename(&aside, &file);
        }
    }

    fn forget(&self, group: u32) {
        let _ = std::fs::remove_file(self.file(group));
    }
}

/// A test a check recorded.
#[derive(Debug)]
struct Entry {
    file: PathBuf,
    owner: String,
    /// Read where the OS gives no proof of a process's origin, to name the
    /// group instead (on Linux the environment is that proof).
    #[cfg_attr(any(target_os = "linux", not(unix)), allow(dead_code))]
    group: u32,
    #[cfg_attr(any(target_os = "linux", not(unix)), allow(dead_code))]
    command: String,
}

/// The entries in `dir`, skipping any being written (`Record::note`).
fn entries(dir: &Path) -> Vec<Entry> {
    let mut found = Vec::new();
    for file in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let file = file.path();
        if file.extension().is_some() {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let mut lines = text.lines();
        let (Some(owner), Some(Ok(group)), Some(command)) =
            (lines.next(), lines.next().map(str::parse), lines.next())
        else {
            continue;
        };
        found.push(Entry {
            owner: owner.to_owned(),
            group,
            command: command.to_owned(),
            file,
        });
    }
    found
}

/// Who `id` is, as far as this OS can tell, or `None` if it is not running:
/// on Linux its id and start, which no later process shares; elsewhere on
/// Unix its id alone (a reused id then passes for the first: the check
/// that recorded it is taken for alive, and nothing of its is ended).
#[cfg(target_os = "linux")]
fn identity(id: u32) -> Option<String> {
    process(id)
        .filter(|process| !process.ended)
        .map(|process| format!("{id}:{}", process.started))
}

#[cfg(all(unix, not(target_os = "linux")))]
fn identity(id: u32) -> Option<String> {
    // Another user's process answers "not permitted": it runs.
    match rustix::process::test_kill_process(pid(id)?) {
        Err(rustix::io::Errno::SRCH) => None,
        _ => Some(id.to_string()),
    }
}

#[cfg(not(unix))]
fn identity(_id: u32) -> Option<String> {
    None // nothing is recorded: see the module's comment
}

fn is_alive(owner: &str) -> bool {
    let id = owner.split(':').next().and_then(|id| id.parse().ok());
    id.and_then(identity).as_deref() == Some(owner)
}

/// What `end_leftovers` found of dead checks' tests.
#[derive(Debug, Default, PartialEq, Eq)]
struct Leftovers {
    /// Ended, as `pid (command)`.
    ended: Vec<String>,
    /// Still there, but not provably theirs: not ended, as `group (command)`.
    unproven: Vec<String>,
}

/// Ends what checks killed earlier in the checkout at `root` left running,
/// or names it where it cannot be proved theirs, in a line on stderr.
pub fn end_leftovers_of_killed_checks(root: &Path) {
    let found = end_leftovers(&running_dir(root));
    if !found.ended.is_empty() {
        eprintln!(
            "ended what a check killed earlier left running: {}",
            found.ended.join(", ")
        );
    }
    if !found.unproven.is_empty() {
        eprintln!(
            "a check killed earlier may have left these process groups running \
             (not ended: this system cannot prove they are still its tests'; \
             `kill -9 -- -GROUP` ends one): {}",
            found.unproven.join(", ")
        );
    }
}

/// Ends the leftovers of the entries in `dir` whose check is dead, and
/// removes those entries. A live check's are never touched.
fn end_leftovers(dir: &Path) -> Leftovers {
    let dead: Vec<Entry> = entries(dir)
        .into_iter()
        .filter(|entry| !is_alive(&entry.owner))
        .collect();
    if dead.is_empty() {
        return Leftovers::default();
    }
    let found = end_started_by(&dead);
    for entry in &dead {
        let _ = std::fs::remove_file(&entry.file);
    }
    found
}

/// Ends every process started by the dead checks' tests, known by the
/// identity of the check each carries (`STARTED_BY`): in their groups or
/// out of them, and never a process that took a recorded id since.
#[cfg(target_os = "linux")]
fn end_started_by(dead: &[Entry]) -> Leftovers {
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
        if dead.iter().any(|entry| entry.owner == owner) {
            if let Some(id) = pid(process.id) {
                let _ = kill_process(id, Signal::KILL);
            }
            ended.push(format!("{} ({})", process.id, process.command));
        }
    }
    Leftovers {
        ended,
        unproven: Vec::new(),
    }
}

/// Names the dead checks' groups still there: without a process's
/// environment to read, a group of that id may be another program's.
#[cfg(all(unix, not(target_os = "linux")))]
fn end_started_by(dead: &[Entry]) -> Leftovers {
    let unproven = dead
        .iter()
        .filter(|entry| {
            pid(entry.group).is_some_and(|group| {
                rustix::process::test_kill_process_group(group).is_ok()
            })
        })
        .map(|entry| format!("{} ({})", entry.group, entry.command))
        .collect();
    Leftovers {
        ended: Vec::new(),
        unproven,
    }
}

#[cfg(not(unix))]
fn end_started_by(_dead: &[Entry]) -> Leftovers {
    Leftovers::default()
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
