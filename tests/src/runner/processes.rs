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

use std::io;
use std::process::{Child, Command};
use std::sync::Mutex;

/// A process `check` started and has not reaped yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Started {
    /// A test, leader of a process group of its own.
    Group(u32),
    /// Cargo, in `check`'s own group.
    Process(u32),
}

static STARTED: Mutex<Vec<Started>> = Mutex::new(Vec::new());

fn started() -> std::sync::MutexGuard<'static, Vec<Started>> {
    STARTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Starts a test in a process group of its own, noted until `end_test`.
pub fn spawn_test(command: &mut Command) -> io::Result<Child> {
    in_a_process_group_of_its_own(command);
    // Noted under the same lock as spawned: `end_escaped` must never take
    // a test just started for an orphan.
    let mut noted = started();
    let child = command.spawn()?;
    noted.push(Started::Group(child.id()));
    Ok(child)
}

/// Starts Cargo, noted until `forget_cargo`.
pub fn spawn_cargo(command: &mut Command) -> io::Result<Child> {
    let mut noted = started();
    let child = command.spawn()?;
    noted.push(Started::Process(child.id()));
    Ok(child)
}

pub fn forget_cargo(child: &Child) {
    started().retain(|p| *p != Started::Process(child.id()));
}

/// Kills the test, if still running, and everything in its group, then
/// reaps it. Returns the processes that escaped its group, ended now.
pub fn end_test(child: &mut Child) -> Vec<String> {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal, kill_process_group};
        let _ = kill_process_group(Pid::from_child(child), Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
    started().retain(|p| *p != Started::Group(child.id()));
    end_escaped(Some(child.id()))
}

#[cfg(unix)]
pub(super) fn in_a_process_group_of_its_own(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(not(unix))]
pub(super) fn in_a_process_group_of_its_own(_command: &mut Command) {}

/// From now on, an interrupt (Ctrl-C, SIGTERM, SIGHUP) ends every process
/// `check` started, says so, and exits as the signal would have.
pub fn end_everything_on_interrupt() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) =
            signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let ended = end_all();
                eprintln!(
                    "\ninterrupted: {ended} tests and builds that `check` started are ended"
                );
                std::process::exit(128 + signal);
            }
        });
    }
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
    let noted = started().clone();
    for process in &noted {
        use rustix::process::{Signal, kill_process, kill_process_group};
        match *process {
            Started::Group(id) => {
                if let Some(pid) = pid(id) {
                    let _ = kill_process_group(pid, Signal::KILL);
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
}

/// Every process, from `/proc/<id>/stat` (the command is in parentheses
/// and may hold spaces).
#[cfg(target_os = "linux")]
fn processes() -> Vec<Process> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(id) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let (Some(parent), Some(group)) = (
            fields.get(1).and_then(|f| f.parse().ok()),
            fields.get(2).and_then(|f| f.parse().ok()),
        ) else {
            continue;
        };
        found.push(Process {
            id,
            parent,
            group,
            command: stat[open + 1..close].to_owned(),
            ended: fields.first() == Some(&"Z"),
        });
    }
    found
}
