//! The runner's tests run this very test executable as the test that
//! misbehaves: `misbehaves_when_asked`, below, does nothing in a normal run,
//! and whatever wrong thing `ASK` names when the runner runs it. Here are
//! that child and its orders; the tests, by the property they hold, are in
//! the modules below.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use super::{
    AT_ONCE, HURRIED, MEMORY_LIMIT_GIB, Outcome, Progress, SLOW, Settings,
    TEST_DEADLINE, TestCase, adopt_orphans, end_everything_on_interrupt, processes,
    run_tests,
};

mod ending_processes;
mod environment;
mod memory_limits;
mod outcomes;
mod stopping;

/// The child's name, as libtest knows it (its path below the crate), in
/// one place: moved, it is renamed, and every test that runs it must follow.
const CHILD: &str = "runner::tests::misbehaves_when_asked";

/// Tells `misbehaves_when_asked` what to do, in the process the tests
/// below start from this very test executable.
const ASK: &str = "WORKSHOP_RUNNER_SELF_TEST";

/// Does nothing in a normal run; run by the tests below, it does the
/// wrong thing they ask for.
#[test]
fn misbehaves_when_asked() {
    fn deeper(depth: u64) -> u64 {
        if depth == u64::MAX {
            0
        } else {
            deeper(depth + 1) + 1
        }
    }
    match env::var(ASK).as_deref() {
        Ok("hang") => loop {
            thread::sleep(Duration::from_secs(1));
        },
        Ok("recurse") => assert_eq!(deeper(0), 0),
        Ok("allocate") => {
            let limit = usize::try_from(MEMORY_LIMIT_GIB << 30).expect("64-bit");
            let huge: Vec<u8> = Vec::with_capacity(2 * limit);
            assert!(huge.capacity() > 0);
        }
        Ok("panic") => panic!("the timer fired 3 ms early"),
        Ok("run-away") => run_away(),
        Ok("print-then-pass") => print_a_lot(Print::Out),
        Ok("print-then-panic") => {
            print_a_lot(Print::Err);
            panic!("the timer fired 3 ms early");
        }
        Ok("print-then-recurse") => {
            print_a_lot(Print::Err);
            assert_eq!(deeper(0), 0);
        }
        Ok("wait-within") => {
            // A test's own guard, as `workshop_tests::within` is: it
            // waits the patience `check` gives it, else 20 s.
            let patience: u64 = env::var(crate::PATIENCE_VAR)
                .ok()
                .and_then(|secs| secs.parse().ok())
                .unwrap_or(20);
            thread::sleep(Duration::from_secs(patience));
            panic!("still running after {patience}s");
        }
        Ok("exit") => std::process::exit(0),
        Ok(order @ ("two-hang-then-one-fails" | "one-fails-then-one-hangs")) => {
            // The first two processes to ask hang, the third fails; or
            // the first fails, the second hangs.
            let dir = PathBuf::from(env::var(PID_FILE).expect("a folder"));
            let place =
                (1..100).find(|n| fs::create_dir(dir.join(format!("{n}"))).is_ok());
            let fails = if order.starts_with("two") { 3 } else { 1 };
            if place != Some(fails) {
                loop {
                    thread::sleep(Duration::from_secs(1));
                }
            }
            panic!("the timer fired 3 ms early");
        }
        Ok("note-pid-and-hang") => {
            let file = env::var(PID_FILE).expect("where to note the pid");
            fs::write(file, std::process::id().to_string()).expect("a pid file");
            loop {
                thread::sleep(Duration::from_secs(1));
            }
        }
        Ok("escape") => {
            // A grandchild in a group of its own, left running.
            let mut escapee = Command::new(env::current_exe().expect("myself"));
            escapee
                .args([CHILD, "--exact"])
                .env(ASK, "note-pid-and-hang")
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            processes::in_a_process_group_of_its_own(&mut escapee);
            // Left running on purpose: `check` must end it.
            #[allow(clippy::zombie_processes)]
            let _ = escapee.spawn().expect("the escapee starts");
            let file = env::var(PID_FILE).expect("where the pid is noted");
            while fs::read_to_string(&file).map_or(true, |pid| pid.is_empty()) {
                thread::sleep(Duration::from_millis(20));
            }
        }
        Ok("check-with-escape") => {
            // `check` in small: a test that leaves a process behind.
            adopt_orphans();
            let _ = run_tests(
                &[myself()],
                &check_settings("escape"),
                &Progress::new(true),
            );
        }
        Ok("check-and-hang") => {
            // `check` in small: a test that never ends, and an interrupt.
            end_everything_on_interrupt();
            let settings = check_settings("note-pid-and-hang");
            let _ = run_tests(&[myself()], &settings, &Progress::new(true));
        }
        Ok("where") => {
            // As `workshop_tests::workspace_root` finds it.
            let package = env::var("CARGO_MANIFEST_DIR").expect("set by the runner");
            let root = Path::new(&package).parent().expect("the root");
            panic!("the workspace: {}", root.display())
        }
        _ => {}
    }
}

#[derive(Clone, Copy)]
enum Print {
    Out,
    Err,
}

/// What a participant debugging with `println!` prints: a megabyte,
/// far more than the runner keeps to show.
fn print_a_lot(to: Print) {
    let line = "call_at: pushed a timer, the queue holds 1234 timers now";
    for n in 0..((1 << 20) / line.len()) {
        match to {
            Print::Out => println!("{n:>6} {line}"),
            Print::Err => eprintln!("{n:>6} {line}"),
        }
    }
}

/// A loop that never ends while something grows, as fast as it can:
/// the pid noted first, in `PID_FILE`'s folder, for the tests to watch.
fn run_away() {
    let dir = PathBuf::from(env::var(PID_FILE).expect("a folder"));
    let pid = std::process::id();
    fs::write(dir.join(pid.to_string()), "").expect("a pid file");
    let mut grown: Vec<Vec<u8>> = Vec::new();
    loop {
        // Filled, so each page is touched and resident.
        grown.push(vec![1; 1 << 20]);
    }
}

/// Where a misbehaving test notes its process id.
const PID_FILE: &str = "WORKSHOP_RUNNER_PID_FILE";

fn myself() -> TestCase {
    TestCase {
        file: "lib".to_owned(),
        name: CHILD.to_owned(),
        binary: env::current_exe().expect("the test executable"),
        env: Vec::new(),
    }
}

fn run_asking(what: &str, deadline: Duration) -> Outcome {
    let case = myself();
    let settings = Settings {
        package_dir: env::current_dir().expect("a current folder"),
        deadline,
        env: vec![(ASK.to_owned(), what.to_owned())],
        enough_hangs: None,
        slow: SLOW,
        hurried: HURRIED,
        at_once: AT_ONCE,
        left_out_when_hurried: Vec::new(),
    };
    let ran = run_tests(&[case], &settings, &Progress::new(true));
    ran.runs[0].outcome.clone()
}

/// How `check` in small runs this test, asking `what` of it.
fn check_settings(what: &str) -> Settings {
    let file = env::var(PID_FILE).expect("where to note the pid");
    Settings {
        package_dir: env::current_dir().expect("a current folder"),
        deadline: TEST_DEADLINE,
        env: vec![
            (ASK.to_owned(), what.to_owned()),
            (PID_FILE.to_owned(), file),
        ],
        enough_hangs: None,
        slow: SLOW,
        hurried: HURRIED,
        at_once: AT_ONCE,
        left_out_when_hurried: Vec::new(),
    }
}
