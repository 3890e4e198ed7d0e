//! A test that allocates without end is stopped at its own limit, and six
//! at once stay under the total `check` states (Linux only: elsewhere the
//! deadline alone bounds them).

#![cfg(target_os = "linux")]

use std::env;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use super::{ASK, PID_FILE, myself, run_asking};
use crate::runner::{
    HURRIED, Outcome, Progress, SLOW, Settings, TEST_DEADLINE, TOGETHER_GIB,
    TestCase, run_tests,
};

#[test]
fn a_test_past_the_memory_limit_is_stopped() {
    let outcome = run_asking("allocate", TEST_DEADLINE);
    assert!(matches!(outcome, Outcome::OutOfMemory(_)), "{outcome:?}");
}

/// The most the processes whose pids are noted in `dir` held resident
/// together, looked at every millisecond until `done`.
fn most_resident_together(dir: &Path, done: &AtomicBool) -> u64 {
    let mut most = 0;
    while !done.load(Ordering::SeqCst) {
        let together_kib: u64 = fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let pid = entry.file_name().to_string_lossy().into_owned();
                let status =
                    fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
                let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .sum();
        most = most.max(together_kib << 10);
        thread::sleep(Duration::from_millis(1));
    }
    most
}

#[test]
fn six_runaway_tests_at_once_stay_under_the_stated_total() {
    let places =
        env::temp_dir().join(format!("runner-runaways-{}", std::process::id()));
    fs::create_dir_all(&places).expect("a folder");
    let settings = Settings {
        package_dir: env::current_dir().expect("a current folder"),
        deadline: TEST_DEADLINE,
        env: vec![
            (ASK.to_owned(), "run-away".to_owned()),
            (PID_FILE.to_owned(), places.display().to_string()),
        ],
        enough_hangs: None,
        slow: SLOW,
        hurried: HURRIED,
        at_once: 6,
        left_out_when_hurried: Vec::new(),
    };
    // Six names for one test, as `check` never runs one twice.
    let cases: Vec<TestCase> = (1..=6)
        .map(|n| TestCase {
            file: format!("lib-{n}"),
            ..myself()
        })
        .collect();
    let done = AtomicBool::new(false);
    let (most, ran) = thread::scope(|scope| {
        let most = scope.spawn(|| most_resident_together(&places, &done));
        let ran = run_tests(&cases, &settings, &Progress::new(true));
        done.store(true, Ordering::SeqCst);
        (most.join().expect("the watcher"), ran)
    });
    let _ = fs::remove_dir_all(&places);
    let mib = most >> 20;
    eprintln!("six runaway tests held {mib} MiB resident together at most");
    assert!(most < TOGETHER_GIB << 30, "{mib} MiB together");
    for run in &ran.runs {
        assert!(matches!(run.outcome, Outcome::OutOfMemory(_)), "{run:?}");
    }
}
