//! Nothing a check started outlives it: not its tests on an interrupt, nor
//! a process that left its test's group. On Linux, where `check` in small
//! (this test executable, asked `check-…`) can be run and watched.

#![cfg(target_os = "linux")]

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use super::{ASK, CHILD, PID_FILE};

/// Runs this test as `check` in small, asking `what` of it.
fn check_in_small(what: &str, file: &Path) -> Child {
    Command::new(env::current_exe().expect("myself"))
        .args([CHILD, "--exact"])
        .env(ASK, what)
        .env(PID_FILE, file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("check in small starts")
}

/// Ends `pid` if it still runs: a failed test leaves nothing behind.
fn kill(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

/// A file for a test's process id, empty.
fn pid_file(name: &str) -> PathBuf {
    let file = env::temp_dir().join(format!("runner-{name}-{}", std::process::id()));
    fs::write(&file, "").expect("a pid file");
    file
}

/// Waits until the pid file says the test runs, at most a minute.
fn noted_pid(file: &Path) -> u32 {
    for _ in 0..3000 {
        if let Ok(pid) = fs::read_to_string(file).unwrap_or_default().parse() {
            return pid;
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("the test never noted its pid in {}", file.display());
}

fn is_alive(pid: u32) -> bool {
    // A zombie has ended: only its parent has yet to hear of it.
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

#[test]
fn an_interrupt_ends_the_tests_it_started() {
    let file = pid_file("interrupt");
    let mut check = check_in_small("check-and-hang", &file);
    let test = noted_pid(&file);
    let check_pid = rustix::process::Pid::from_child(&check);
    rustix::process::kill_process(check_pid, rustix::process::Signal::INT)
        .expect("the interrupt is sent");
    let status = check.wait().expect("check ends");
    let _ = fs::remove_file(&file);
    let ended = (0..250).any(|_| {
        thread::sleep(Duration::from_millis(20));
        !is_alive(test)
    });
    kill(test);
    assert!(
        ended,
        "the test {test} outlived the interrupted check ({status})"
    );
    assert_eq!(
        status.code(),
        Some(130),
        "check exits as Ctrl-C would have it"
    );
}

#[test]
fn a_process_that_left_its_tests_group_is_ended() {
    let file = pid_file("escape");
    let status = check_in_small("check-with-escape", &file)
        .wait()
        .expect("check ends");
    let escapee = noted_pid(&file);
    let _ = fs::remove_file(&file);
    let ended = (0..250).any(|_| {
        thread::sleep(Duration::from_millis(20));
        !is_alive(escapee)
    });
    kill(escapee);
    assert!(
        ended,
        "the escaped process {escapee} outlived check ({status})"
    );
}
