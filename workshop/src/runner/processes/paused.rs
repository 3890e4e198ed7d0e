//! The tests running, stopped a moment (`Paused`) while the probe asks
//! about those that seem stuck.

use super::Started;
#[cfg(unix)]
use super::pid;
use super::started;

/// The tests (and demos) running now, stopped (SIGSTOP) until the value
/// is dropped, then let go on (SIGCONT); what starts meanwhile runs. For
/// the probe asked about tests that spin without end: beside four to six
/// of them on two cores, the copy's build and reruns waited 5 to 8 s for
/// the processor, and the verdict came no sooner than at the tests' own
/// guard. A test is never kept stopped long (`Paused::at_most`), so one
/// only slow on a busy machine still ends within its time.
#[derive(Debug)]
#[must_use = "the tests go on once it is dropped"]
pub struct Paused {
    groups: Vec<u32>,
}

impl Paused {
    pub fn now() -> Self {
        let groups: Vec<u32> = started()
            .iter()
            .filter_map(|p| match p {
                Started::Group(group) => Some(*group),
                Started::Process(_) => None,
            })
            .collect();
        signal_groups(&groups, false);
        Paused { groups }
    }

    /// Lets them go on after `limit` at most, even while this is held.
    pub fn at_most(&self, limit: std::time::Duration) {
        let groups = self.groups.clone();
        std::thread::spawn(move || {
            std::thread::sleep(limit);
            signal_groups(&groups, true);
        });
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        signal_groups(&self.groups, true);
    }
}

/// Stops the process `groups` (`go_on` false) or lets them go on. A group
/// gone already (a test ended meanwhile) is no matter.
#[cfg(unix)]
fn signal_groups(groups: &[u32], go_on: bool) {
    use rustix::process::{Signal, kill_process_group};
    let signal = if go_on { Signal::CONT } else { Signal::STOP };
    for group in groups {
        if let Some(group) = pid(*group) {
            let _ = kill_process_group(group, signal);
        }
    }
}

#[cfg(not(unix))]
fn signal_groups(_groups: &[u32], _go_on: bool) {}
