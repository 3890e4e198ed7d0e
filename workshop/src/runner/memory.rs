//! Bounds the memory of the tests `check` runs, on Linux: each test
//! process may use `MEMORY_LIMIT_GIB` of heap (`capped`), and all the
//! tests running at once (the check's, the probe's reruns, a demo) hold
//! `TOGETHER_GIB` together at most: a watcher sums what each test's
//! process group holds resident and stops the biggest past `STOP_AT`.
//! Without it, six runaway tests at once held 5.3 GiB.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// The memory the tests running at once hold together, at most: `STOP_AT`,
/// and room for what they allocate between two looks and for what a
/// stopped test holds while it is given back (six runaway tests held 1.3
/// GiB together at most: `six_runaway_tests_at_once_stay_under_the_stated_total`).
pub const TOGETHER_GIB: u64 = 2;

/// The groups the watcher stopped, each with what to tell about it.
static STOPPED: Mutex<Vec<(u32, String)>> = Mutex::new(Vec::new());

fn stopped() -> MutexGuard<'static, Vec<(u32, String)>> {
    STOPPED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What to tell of the test group `group`, if the watcher stopped it.
pub(super) fn stopped_for_memory(group: u32) -> Option<String> {
    let mut stopped = stopped();
    let at = stopped.iter().position(|(other, _)| *other == group)?;
    Some(stopped.remove(at).1)
}

/// Starts the watcher of every test group this process starts, once.
pub(super) fn watch() {
    #[cfg(target_os = "linux")]
    {
        static WATCHING: std::sync::Once = std::sync::Once::new();
        WATCHING.call_once(|| {
            std::thread::spawn(|| {
                loop {
                    std::thread::sleep(watcher::look());
                }
            });
        });
    }
}

#[cfg(target_os = "linux")]
mod watcher {
    use super::super::processes::{processes, test_groups};
    use super::{TOGETHER_GIB, stopped};
    use std::time::Duration;

    /// The sum of resident memory past which the biggest test stops.
    const STOP_AT: u64 = (TOGETHER_GIB << 30) * 5 / 8;

    /// How long the watcher waits between looks while the sum is under
    /// half `STOP_AT` (each look reads every process's `/proc` files),
    /// and while it is higher.
    const CALM: Duration = Duration::from_millis(50);
    const CLOSE: Duration = Duration::from_millis(5);

    /// Stops the biggest test if the sum passed `STOP_AT`; how long to wait
    /// before the next look. A group stopped already is left out: what it
    /// holds is on its way back.
    pub(super) fn look() -> Duration {
        let mut watched = test_groups();
        watched.retain(|group| !stopped().iter().any(|(other, _)| other == group));
        if watched.is_empty() {
            return CALM;
        }
        let mut held: Vec<(u32, u64)> = watched.iter().map(|&g| (g, 0)).collect();
        for process in processes() {
            if let Some(slot) = held.iter_mut().find(|(g, _)| *g == process.group) {
                slot.1 += resident_bytes(process.id).unwrap_or(0);
            }
        }
        let together: u64 = held.iter().map(|(_, bytes)| bytes).sum();
        if together > STOP_AT {
            if let Some(&(group, most)) = held.iter().max_by_key(|(_, bytes)| *bytes)
            {
                stop(group, most, together);
            }
        }
        if together < STOP_AT / 2 { CALM } else { CLOSE }
    }

    /// Stops `group`, noting why first, so that its worker, seeing it end,
    /// finds the reason.
    fn stop(group: u32, held: u64, together: u64) {
        let why = format!(
            "It held {} MiB when the tests running at once held {} MiB \
             together, more than `check` lets them ({} MiB): it was \
             stopped, as the one holding the most.",
            held >> 20,
            together >> 20,
            STOP_AT >> 20
        );
        stopped().push((group, why));
        let group = i32::try_from(group).ok();
        if let Some(group) = group.and_then(rustix::process::Pid::from_raw) {
            let kill = rustix::process::Signal::KILL;
            let _ = rustix::process::kill_process_group(group, kill);
        }
    }

    pub(super) fn resident_bytes(id: u32) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{id}/status")).ok()?;
        let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib << 10)
    }
}

/// Runs `spawn` with this process's heap limited to `MEMORY_LIMIT_GIB`, on
/// Linux, so that the child it starts has the limit from its first
/// instruction (set on a child once it runs, a quick runaway could outrun
/// it). Called under the lock every spawn takes: no Cargo inherits it.
pub(super) fn capped<T>(spawn: impl FnOnce() -> T) -> T {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let before = getrlimit(Resource::Data);
        let capped = Rlimit {
            current: Some(super::MEMORY_LIMIT_GIB << 30),
            maximum: before.maximum,
        };
        let _ = setrlimit(Resource::Data, capped);
        let spawned = spawn();
        let _ = setrlimit(Resource::Data, before);
        spawned
    }
    #[cfg(not(target_os = "linux"))]
    spawn()
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    #[test]
    fn a_processs_resident_memory_is_found() {
        let held = super::watcher::resident_bytes(std::process::id());
        // This test executable holds more than a megabyte.
        assert!(held.is_some_and(|bytes| bytes > 1 << 20), "{held:?}");
    }
}
