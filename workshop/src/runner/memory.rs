//! Bounds the memory of the tests `check` runs, on Linux: each test's own
//! (`MemoryCap`), and the tests running at once under `TOGETHER_GIB`.
//!
//! Each test process has its own limit (`MEMORY_LIMIT_GIB`, set by
//! `MemoryCap`), but that bounds one process, not the tests at once: up to
//! eight run together (more start while those running seem stuck, and a
//! test that allocates without end seems stuck), and six runaway tests
//! held 5.3 GiB resident together. So a watcher sums what each running
//! test's process group (the test and the demos it started) holds
//! resident, and once the sum passes `STOP_AT`, stops the group holding
//! the most. It looks often while the sum is high, and seldom while low,
//! as each look reads every process's `/proc/<pid>/stat`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
#[cfg(target_os = "linux")]
use std::time::Duration;

/// The memory the tests running at once hold together, at most: the sum
/// past which tests are stopped (`STOP_AT`), and room for what they
/// allocate between two looks and for what a stopped test still holds
/// while its memory is given back. Measured
/// (`six_runaway_tests_at_once_stay_under_the_stated_total`): six tests
/// allocating as fast as they can, at once, held at most 1,287 to 1,358
/// MiB together, on 2 cores, also with 4 busy loops beside them; without
/// the watcher, 5,295 MiB.
pub const TOGETHER_GIB: u64 = 2;

/// The sum of resident memory past which the test holding the most stops.
#[cfg(target_os = "linux")]
const STOP_AT: u64 = (TOGETHER_GIB << 30) * 5 / 8;

/// How long the watcher waits between looks while the sum is under half
/// `STOP_AT`: a test grows by some hundred megabytes in that time at most.
#[cfg(target_os = "linux")]
const CALM: Duration = Duration::from_millis(50);

/// How long it waits between looks while the sum is higher.
#[cfg(target_os = "linux")]
const CLOSE: Duration = Duration::from_millis(5);

/// The process groups of the tests running, and those stopped for memory.
#[derive(Debug, Default)]
pub(super) struct Watch {
    running: Mutex<Vec<u32>>,
    /// Each stopped group, and what to tell about it.
    stopped: Mutex<Vec<(u32, String)>>,
    done: AtomicBool,
}

/// Ends the watcher when dropped.
pub(super) struct Watching(Arc<Watch>);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.done.store(true, Ordering::SeqCst);
    }
}

impl Watch {
    /// Starts watching (on Linux), until the `Watching` returned is dropped.
    pub(super) fn start(watch: &Arc<Watch>) -> Watching {
        #[cfg(target_os = "linux")]
        {
            let watch = Arc::clone(watch);
            std::thread::spawn(move || {
                while !watch.done.load(Ordering::SeqCst) {
                    std::thread::sleep(watch.look());
                }
            });
        }
        Watching(Arc::clone(watch))
    }

    /// Watches the test whose process group is `group`.
    pub(super) fn add(&self, group: u32) {
        lock(&self.running).push(group);
    }

    /// Stops watching `group`: what to tell, if it was stopped for memory.
    pub(super) fn remove(&self, group: u32) -> Option<String> {
        lock(&self.running).retain(|running| *running != group);
        let mut stopped = lock(&self.stopped);
        let at = stopped.iter().position(|(other, _)| *other == group)?;
        Some(stopped.remove(at).1)
    }

    /// Stops the biggest test if the sum passed `STOP_AT`; how long to wait
    /// before the next look.
    #[cfg(target_os = "linux")]
    fn look(&self) -> Duration {
        // A stopped group is left out: what it holds is on its way back,
        // and counting it would stop a small test for a big one's memory.
        let watched: Vec<u32> = {
            let stopped = lock(&self.stopped);
            lock(&self.running)
                .iter()
                .filter(|group| !stopped.iter().any(|(other, _)| other == *group))
                .copied()
                .collect()
        };
        if watched.is_empty() {
            return CALM;
        }
        let held = resident_by_group(&watched);
        let together: u64 = held.iter().map(|(_, bytes)| bytes).sum();
        if together > STOP_AT {
            if let Some(&(group, most)) = held.iter().max_by_key(|(_, bytes)| *bytes)
            {
                self.stop(group, most, together);
            }
        }
        if together < STOP_AT / 2 { CALM } else { CLOSE }
    }

    /// Stops `group`, noting why first, so that its worker, seeing it end,
    /// finds the reason.
    #[cfg(target_os = "linux")]
    fn stop(&self, group: u32, held: u64, together: u64) {
        let why = format!(
            "It held {} MiB when the tests running at once held {} MiB \
             together, more than `check` lets them ({} MiB): it was \
             stopped, as the one holding the most.",
            held >> 20,
            together >> 20,
            STOP_AT >> 20
        );
        lock(&self.stopped).push((group, why));
        let group = i32::try_from(group)
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        if let Some(group) = group {
            let _ = rustix::process::kill_process_group(
                group,
                rustix::process::Signal::KILL,
            );
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The bytes each of `groups` holds resident, from every process's
/// `/proc/<pid>/stat` (its group, and its resident pages), and the
/// `status` of those in `groups` (their resident kilobytes: no page size
/// to look up).
#[cfg(target_os = "linux")]
fn resident_by_group(groups: &[u32]) -> Vec<(u32, u64)> {
    let mut held: Vec<(u32, u64)> = groups.iter().map(|&group| (group, 0)).collect();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|name| name.parse::<u32>().is_ok())
        else {
            continue;
        };
        let Some(group) = group_of(pid) else { continue };
        if let Some(slot) = held.iter_mut().find(|(other, _)| *other == group) {
            slot.1 += resident_bytes(pid).unwrap_or(0);
        }
    }
    held
}

/// The process group of `pid`, from `/proc/<pid>/stat`: the third field
/// after the command, which is in parentheses and may hold spaces.
#[cfg(target_os = "linux")]
fn group_of(pid: &str) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_command = &stat[stat.rfind(')')? + 1..];
    after_command.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn resident_bytes(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
}

/// While one lives, each process this one starts may use
/// `MEMORY_LIMIT_GIB` of data (its heap), on Linux: the limit is set on this
/// process, and a child inherits it the moment it exists. (Set on a child
/// once it runs, a quick runaway could outrun it.) Elsewhere the deadline
/// alone bounds a runaway test. Counted, as tests run their own tests
/// at once.
pub(super) struct MemoryCap;

#[cfg(target_os = "linux")]
static MEMORY_CAPS: Mutex<(usize, Option<rustix::process::Rlimit>)> =
    Mutex::new((0, None));

impl MemoryCap {
    pub(super) fn new() -> Self {
        #[cfg(target_os = "linux")]
        if let Ok(mut caps) = MEMORY_CAPS.lock() {
            use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
            if caps.0 == 0 {
                let before = getrlimit(Resource::Data);
                let capped = Rlimit {
                    current: Some(super::MEMORY_LIMIT_GIB << 30),
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_groups_resident_memory_is_found() {
        let me = std::process::id();
        let group = group_of(&me.to_string()).expect("my group");
        let held = resident_by_group(&[group]);
        assert_eq!(held.len(), 1);
        // This test executable holds more than a megabyte.
        assert!(held[0].1 > 1 << 20, "{held:?}");
    }
}
