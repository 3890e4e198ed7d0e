//! What a killed check's tests left, tried for real: a check in small
//! (this test executable, run again) is killed outright, and the next check
//! in its checkout must end what it left, and never what a live check, a
//! check of another checkout or another program runs.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Stdio;
use std::thread;
use std::time::Duration;

use super::*;

/// Tells `plays_a_check_when_asked` its checkout and where to note its
/// test's pid.
const PLAY: &str = "WORKSHOP_PROCESSES_SELF_TEST";

/// Does nothing in a normal run; started by the test below, it is a
/// check in small: records a test that never ends, notes its pid, and
/// waits to be killed (a minute at most).
#[test]
fn plays_a_check_when_asked() {
    let Ok(dir) = env::var(PLAY) else {
        return;
    };
    let dir = PathBuf::from(dir);
    record_tests_in(&dir);
    // Left running on purpose: the next check must end it.
    #[allow(clippy::zombie_processes)]
    let test = spawn_test(&mut long_sleep()).expect("the test starts");
    fs::write(dir.join("pid"), test.id().to_string()).expect("a pid file");
    thread::sleep(Duration::from_secs(60));
}

/// A process that runs ten minutes unless ended, saying nothing.
fn long_sleep() -> Command {
    let mut sleep = Command::new("sleep");
    sleep
        .arg("600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    sleep
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        env::temp_dir().join(format!("processes-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// Waits until `file` holds a pid, at most a minute.
fn noted_pid(file: &Path) -> u32 {
    for _ in 0..3000 {
        if let Ok(pid) = fs::read_to_string(file).unwrap_or_default().parse() {
            return pid;
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("no pid was noted in {}", file.display());
}

fn is_running(id: u32) -> bool {
    process(id).is_some_and(|process| !process.ended)
}

/// Whether `id` ends within five seconds.
fn ends(id: u32) -> bool {
    (0..250).any(|_| {
        thread::sleep(Duration::from_millis(20));
        !is_running(id)
    })
}

/// Ends `id` if it still runs: a failed test leaves nothing behind.
fn kill(id: u32) {
    if let Some(id) = pid(id) {
        let _ = rustix::process::kill_process(id, rustix::process::Signal::KILL);
    }
}

#[test]
fn a_killed_checks_test_is_ended_by_the_next_check_a_live_ones_never() {
    let dir = scratch("killed");
    let mut check = Command::new(env::current_exe().expect("myself"))
        .args([
            "runner::processes::tests::plays_a_check_when_asked",
            "--exact",
        ])
        .env(PLAY, &dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the check starts");
    let test = noted_pid(&dir.join("pid"));
    let while_alive = end_leftovers(&dir);
    let _ = check.kill(); // SIGKILL: the check can end nothing itself
    let _ = check.wait();
    let outlived = is_running(test);
    let elsewhere = end_leftovers(&dir.join("another checkout"));
    let next = end_leftovers(&dir);
    let ended = ends(test);
    kill(test);
    let _ = fs::remove_dir_all(&dir);
    assert!(
        while_alive.is_empty(),
        "a live check's test: {while_alive:?}"
    );
    assert!(outlived, "the test {test} ended with the killed check");
    assert!(ended, "the test {test} outlived the next check: {next:?}");
    assert!(elsewhere.is_empty(), "another checkout's: {elsewhere:?}");
    assert_eq!(next, [format!("{test} (sleep)")]);
}

#[test]
fn only_what_carries_a_dead_checks_identity_is_ended() {
    let dir = scratch("carried");
    // A check that started a test, then died.
    let mut owner = long_sleep().spawn().expect("a process");
    let dead_owner = identity(owner.id()).expect("it runs");
    let _ = owner.kill();
    let _ = owner.wait();
    let mut left = long_sleep();
    left.env(STARTED_BY, format!("{dead_owner} {}", dir.display()));
    let mut left = left.spawn().expect("what the dead check left");
    // Another program, perhaps at a pid a test of the dead check had.
    let mut other = long_sleep().spawn().expect("another program");
    let found = end_leftovers(&dir);
    let survived = is_running(other.id());
    let _ = other.kill();
    let _ = other.wait();
    let _ = left.kill();
    let _ = left.wait();
    let _ = fs::remove_dir_all(&dir);
    assert_eq!(found, [format!("{} (sleep)", left.id())]);
    assert!(survived, "a process no check started was ended");
}
