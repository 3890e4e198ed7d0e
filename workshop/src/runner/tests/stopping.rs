//! The rules that hurry or stop a run: tests that never end do not hold up
//! the others, a quick failure hurries those that seem stuck, enough hangs
//! leave some files out, and the caller's answer stops the rest.

use std::env;
use std::fs;
use std::time::{Duration, Instant};

use super::{ASK, PID_FILE, myself};
use crate::runner::{
    AT_ONCE, HURRIED, Progress, SLOW, Settings, TestCase, run_tests, run_tests_until,
};

#[test]
fn tests_that_never_end_do_not_keep_a_quick_one_from_running() {
    let places =
        env::temp_dir().join(format!("runner-places-{}", std::process::id()));
    fs::create_dir_all(&places).expect("a folder");
    let settings = Settings {
        package_dir: env::current_dir().expect("a current folder"),
        deadline: Duration::from_secs(4),
        env: vec![
            (ASK.to_owned(), "two-hang-then-one-fails".to_owned()),
            (PID_FILE.to_owned(), places.display().to_string()),
        ],
        enough_hangs: Some(2),
        slow: Duration::from_secs(1),
        hurried: HURRIED,
        at_once: AT_ONCE,
        left_out_when_hurried: Vec::new(),
    };
    let ran = run_tests(
        &[myself(), myself(), myself()],
        &settings,
        &Progress::new(true),
    );
    let _ = fs::remove_dir_all(&places);
    let quick = ran
        .runs
        .iter()
        .any(|run| run.outcome.message().contains("3 ms early"));
    assert!(quick, "the quick test did not run: {ran:?}");
}

#[test]
fn once_one_failed_and_all_have_started_a_test_that_never_ends_is_not_waited_for() {
    let places =
        env::temp_dir().join(format!("runner-order-{}", std::process::id()));
    fs::create_dir_all(&places).expect("a folder");
    let settings = Settings {
        package_dir: env::current_dir().expect("a current folder"),
        deadline: Duration::from_secs(60),
        env: vec![
            (ASK.to_owned(), "one-fails-then-one-hangs".to_owned()),
            (PID_FILE.to_owned(), places.display().to_string()),
        ],
        enough_hangs: Some(2),
        slow: Duration::from_secs(1),
        hurried: Duration::from_secs(1),
        at_once: AT_ONCE,
        left_out_when_hurried: Vec::new(),
    };
    let began = Instant::now();
    // Two names for the same test, as `check` never runs one twice.
    let mut other = myself();
    other.file = "lib-again".to_owned();
    let ran = run_tests(&[myself(), other], &settings, &Progress::new(true));
    let _ = fs::remove_dir_all(&places);
    assert_eq!(ran.runs.len(), 1, "{ran:?}");
    // Unhurried, the hanging test would run to its 60 s deadline.
    assert!(began.elapsed() < Duration::from_secs(30), "{ran:?}");
}

#[test]
fn once_the_caller_has_enough_the_tests_left_stop_and_are_not_run() {
    // Each run asks its own misbehaviour: what the probe relies on to
    // run one test with each suspect's switch.
    let asking = |what: &str| TestCase {
        env: vec![(ASK.to_owned(), what.to_owned())],
        ..myself()
    };
    let cases = [
        asking("panic"),
        asking("hang"),
        asking("hang"),
        asking("hang"),
    ];
    let settings = Settings {
        package_dir: env::current_dir().expect("a current folder"),
        deadline: Duration::from_secs(60),
        env: Vec::new(),
        enough_hangs: None,
        slow: SLOW,
        hurried: HURRIED,
        at_once: AT_ONCE,
        left_out_when_hurried: Vec::new(),
    };
    let began = Instant::now();
    let ran = run_tests_until(&cases, &settings, &Progress::new(true), |so_far| {
        so_far.runs.iter().any(|run| !run.outcome.passed())
    });
    assert_eq!(ran.runs.len(), 1, "{ran:?}");
    assert!(
        ran.runs[0].outcome.message().contains("3 ms early"),
        "{ran:?}"
    );
    assert_eq!(ran.not_run.len(), 3, "{ran:?}");
    // Unstopped, the hanging tests would run to their 60 s deadline.
    assert!(began.elapsed() < Duration::from_secs(30), "{ran:?}");
}

#[test]
fn tests_said_to_seem_stuck_have_each_run_slow() {
    // A test started since the last look has not run `slow` yet: the probe
    // asked about it as stuck took its 20 microseconds for a hang.
    let hang = TestCase {
        env: vec![(ASK.to_owned(), "hang".to_owned())],
        ..myself()
    };
    let cases = vec![hang; 3];
    let slow = Duration::from_millis(800);
    let settings = Settings {
        package_dir: env::current_dir().expect("a current folder"),
        deadline: Duration::from_secs(60),
        env: Vec::new(),
        enough_hangs: None,
        slow,
        hurried: HURRIED,
        at_once: 1,
        left_out_when_hurried: Vec::new(),
    };
    let began = Instant::now();
    let said_stuck = std::cell::RefCell::new(Vec::new());
    run_tests_until(&cases, &settings, &Progress::new(true), |so_far| {
        if so_far.seem_stuck {
            let least = so_far.running.iter().map(|(_, ran)| *ran).min();
            said_stuck.borrow_mut().push(least);
        }
        began.elapsed() > Duration::from_secs(4)
    });
    let said_stuck = said_stuck.into_inner();
    assert!(!said_stuck.is_empty(), "never said to seem stuck");
    for least in said_stuck {
        assert!(least.is_some_and(|ran| ran >= slow), "{least:?}");
    }
}

#[test]
fn once_hurried_the_files_left_out_then_do_not_run() {
    let asking = |what: &str| TestCase {
        env: vec![(ASK.to_owned(), what.to_owned())],
        ..myself()
    };
    let demo = TestCase {
        file: "demos".to_owned(),
        ..asking("panic")
    };
    let settings = Settings {
        package_dir: env::current_dir().expect("a current folder"),
        deadline: Duration::from_secs(3),
        env: Vec::new(),
        enough_hangs: Some(2),
        // One at a time: the demo waits its turn, after both.
        slow: Duration::from_secs(600),
        hurried: HURRIED,
        at_once: 1,
        left_out_when_hurried: vec!["demos".to_owned()],
    };
    let cases = [asking("hang"), asking("hang"), demo.clone()];
    let ran = run_tests(&cases, &settings, &Progress::new(true));
    assert_eq!(ran.runs.len(), 2, "{ran:?}");
    assert_eq!(ran.not_run, [demo], "{ran:?}");
}
