//! Whole `cargo workshop check`s, as a room runs them: three at once in one
//! workshop (two terminals and a habit), one whose probe cannot write its
//! copy, and verdicts that set a wrong loop's traced turn beside the
//! authors' (steps 3, 5 and 8). Each works in a copy of this workshop
//! whose build starts from this one's (`workshop_tests::seed`), so only the
//! steps changed here are built again.
//!
//! Slow (a build of three steps' tests and three probes, a minute or more
//! on two cores), and a guard of the tool rather than of the steps, so left
//! out of the README's command: `.ci/run` runs it with `--ignored`.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use workshop::track;
use workshop_tests::{seed, workshop_program, workspace_root};

/// A copy of the workshop, sources and build, removed when dropped.
struct WarmCopy {
    dir: PathBuf,
}

impl WarmCopy {
    fn new(name: &str) -> WarmCopy {
        let dir = std::env::temp_dir()
            .join(format!("workshop-checks-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        seed::warm_copy(&workspace_root(), &target_dir(), &dir)
            .expect("the copy and its build");
        WarmCopy { dir }
    }

    /// `cargo workshop check N`, started in the copy and built there.
    fn check(&self, step: u32) -> Command {
        let mut command = Command::new(workshop_program());
        command
            .args(["check", &step.to_string()])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", self.dir.join("target"));
        command
    }

    /// Rewrites every marked function of step `step` in the participant's
    /// words: the authors' body with a note of their own in it, and `wrong`
    /// applied to the body of `function`. More than one function then
    /// differs from the authors', so `check` must ask its probe which one
    /// the failures come from.
    fn write_track(
        &self,
        (step, folder): (u32, &str),
        function: &str,
        wrong: (&str, &str),
    ) {
        let step_dir = self.dir.join(folder);
        let marked = track::track(&step_dir, step).expect("the step's track");
        assert!(
            marked.iter().any(|m| m.function == function),
            "step {step} has no marked `{function}`"
        );
        for file in track::rust_files(&step_dir) {
            let path = step_dir.join(&file);
            let mut text = fs::read_to_string(&path).expect("a step's file");
            let mut in_file = track::markers_in(&file, &text).expect("its markers");
            in_file.sort_by_key(|m| std::cmp::Reverse(m.body.start));
            for m in &in_file {
                let mut body = text[m.body.clone()].to_owned();
                body.insert_str(1, " // as I wrote it\n");
                if m.function == function {
                    assert!(body.contains(wrong.0), "{function}: no `{}`", wrong.0);
                    body = body.replacen(wrong.0, wrong.1, 1);
                }
                text.replace_range(m.body.clone(), &body);
            }
            fs::write(&path, text).expect("the copy is writable");
        }
    }
    /// Blanks every marked function of step `step`, as `start` does: the
    /// step as a participant finds it before writing a line.
    fn blank_track(&self, (step, folder): (u32, &str)) {
        let step_dir = self.dir.join(folder);
        for file in track::rust_files(&step_dir) {
            let path = step_dir.join(&file);
            let text = fs::read_to_string(&path).expect("a step's file");
            let in_file = track::markers_in(&file, &text).expect("its markers");
            if in_file.is_empty() {
                continue;
            }
            let in_file: Vec<&track::Marked> = in_file.iter().collect();
            fs::write(&path, track::blanked(&text, &in_file))
                .expect("the copy is writable");
        }
        assert!(
            !track::track(&step_dir, step).expect("the track").is_empty(),
            "step {step} has a track"
        );
    }
}

impl Drop for WarmCopy {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Where this workshop's build is.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

fn said(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// One wrong function in each of steps 3, 4 and 5, every other function
/// rewritten: each check names its own step's wrong function.
#[test]
#[ignore = "slow: whole checks in a copy of the workshop; .ci/run runs it"]
fn three_checks_at_once_each_name_their_own_wrong_function() {
    let copy = WarmCopy::new("three");
    let wrong = [
        (
            (3, "step03-sleep"),
            "Timer::cmp",
            // Of two timers due at once, the newer first.
            (
                "(other.deadline, other.sequence)",
                "(other.deadline, self.sequence)",
            ),
        ),
        (
            (4, "step04-select-echo"),
            "EventLoop::register",
            // Every socket gets the same token.
            ("token.0 + 1", "token.0"),
        ),
        (
            (5, "step05-coroutines"),
            "Sleep::poll",
            // Ready a little before the deadline.
            (
                "Instant::now() >= self.deadline",
                "Instant::now() + std::time::Duration::from_millis(100) >= self.deadline",
            ),
        ),
    ];
    for (step, function, mistake) in &wrong {
        copy.write_track(*step, function, *mistake);
    }
    // Started together, as from three terminals; all ended before any
    // verdict is read, so that a failed one leaves nothing running.
    let running: Vec<_> = wrong
        .iter()
        .map(|((step, _), ..)| {
            copy.check(*step)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("check starts")
        })
        .collect();
    let outputs: Vec<Output> = running
        .into_iter()
        .map(|child| child.wait_with_output().expect("check ends"))
        .collect();
    for (output, ((step, _), function, _)) in outputs.iter().zip(&wrong) {
        let said = said(output);
        assert_eq!(output.status.code(), Some(1), "check {step}: {said}");
        assert!(
            said.contains(&format!("Your `{function}` (")),
            "check {step} did not name `{function}`: {said}"
        );
    }
}

/// A participant debugging with `println!` in a correct `call_at`: a test
/// that runs it 2,000 times prints over a megabyte before libtest's result
/// line. The verdict comes from that line and the exit status, wherever
/// they are in the output.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_correct_function_that_prints_a_megabyte_passes() {
    let copy = WarmCopy::new("prints");
    let file = copy.dir.join("step03-sleep/src/lib.rs");
    let text = fs::read_to_string(&file).unwrap();
    let marked = track::markers_in("src/lib.rs", &text).unwrap();
    let call_at = marked
        .iter()
        .find(|m| m.function == "EventLoop::call_at")
        .expect("call_at is marked");
    // From the 100th call on, as a participant's print would, once the
    // timing of the first calls is past.
    let debugging = "\n        static CALLS: std::sync::atomic::AtomicUsize = \
                     std::sync::atomic::AtomicUsize::new(0);\n        \
                     if CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) \
                     >= 100 {\n            println!(\"{}\", \"call_at \".repeat(60));\n        }";
    let mut written = text.clone();
    written.insert_str(call_at.body.start + 1, debugging);
    fs::write(&file, written).unwrap();
    let output = copy.check(3).output().expect("check runs");
    let said = said(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("Step 3 passes"), "{said}");
}

/// The probe's copy of step 3 cannot be written (a file stands where its
/// folder goes): the verdict is about the tool, and names the place.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_probe_that_cannot_write_its_copy_blames_the_tool_not_the_code() {
    let copy = WarmCopy::new("unwritable");
    copy.write_track(
        (3, "step03-sleep"),
        "Timer::cmp",
        (
            "(other.deadline, other.sequence)",
            "(other.deadline, self.sequence)",
        ),
    );
    let workspace = copy.dir.join("target/workshop-probe/workspace");
    let in_the_way = workspace.join("step03-sleep");
    fs::remove_dir_all(&in_the_way).expect("the probe's copy, made warm");
    fs::write(&in_the_way, "in the way").unwrap();
    let output = copy.check(3).output().expect("check runs");
    let said = said(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(said.contains("not your code"), "{said}");
    let place = workspace.display().to_string();
    assert!(said.contains(&place), "the place is not named: {said}");
    for blame in ["Your `", "more than one may be wrong", "Next: write"] {
        assert!(!said.contains(blame), "it spoke of the code: {said}");
    }
}

/// One wrong function of `step`, every other one rewritten, checked: what
/// `check` said, which must name `function` and end in exit 1.
fn verdict_on_one_wrong(
    name: &str,
    (step, folder): (u32, &str),
    function: &str,
    wrong: (&str, &str),
) -> String {
    let copy = WarmCopy::new(name);
    copy.write_track((step, folder), function, wrong);
    let output = copy.check(step).output().expect("check runs");
    let said = said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!("Your `{function}` (")), "{said}");
    said
}

/// Step 6's `report` without its "already ended" guard: the task reports
/// its value, then the reporter's drop writes `Cancelled` over it, and
/// `block_on` says its task "was dropped before it finished", which points
/// at step 5's `poll_task`. The verdict says what the drop did.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_report_without_its_guard_is_named_as_the_drop_that_overwrites_it() {
    let said = verdict_on_one_wrong(
        "report",
        (6, "step06-spawn-join"),
        "Reporter::report",
        (
            "return; // reported already: this is the reporter's drop",
            "",
        ),
    );
    assert!(
        said.contains("reported `Cancelled` over the outcome already reported"),
        "{said}"
    );
}

/// Step 6's `run_and_report` awaiting the future itself, without
/// `Contained`: the child's panic is not caught, and the compiler's
/// "never constructed", the best clue, is outside the function.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_lesson_type_never_constructed_is_shown_as_the_clue() {
    let said = verdict_on_one_wrong(
        "contained",
        (6, "step06-spawn-join"),
        "run_and_report",
        (
            "let mut task = Contained {\n        future: pin!(Some(future)),\n        \
             reporter,\n    };\n    let outcome = future::poll_fn(|cx| \
             task.poll(cx)).await;\n    task.reporter.report(outcome);",
            "reporter.report(Ok(future.await));",
        ),
    );
    assert!(
        said.contains("struct `Contained` is never constructed"),
        "{said}"
    );
}

/// Step 2's `run` taking each callback in its `while let`'s condition: the
/// queue's borrow lives through the body, and the callback's `call_soon`
/// panics "already borrowed" at `call_soon`'s line. The verdict says why.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_borrow_held_by_a_while_let_is_explained() {
    let said = verdict_on_one_wrong(
        "while-let",
        (2, "step02-task-queue"),
        "EventLoop::run",
        (
            "while let Some(callback) = self.next_ready() {",
            "while let Some(callback) = self.ready.borrow_mut().pop_front() {",
        ),
    );
    assert!(said.contains("keeps its borrow"), "{said}");
    assert!(said.contains("self.ready.borrow_mut()"), "{said}");
}

/// Step 5's `poll_woken` polling its first task forever: every test spins
/// until its own guard fails it. The probe starts with those hangs, while
/// the tests left would only spin beside its build, and they stop: the
/// verdict names the function, and says the tests it did not wait for.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_loop_that_spins_is_named_by_the_probe_without_the_tests_left() {
    let said = verdict_on_one_wrong(
        "spins",
        (5, "step05-coroutines"),
        "Tasks::poll_woken",
        (
            "for &id in &polling {",
            "while let Some(&id) = polling.first() {",
        ),
    );
    assert!(said.contains("which function?"), "{said}");
    assert!(said.contains("more tests were not run"), "{said}");
}

/// What introduces the side-by-side in a verdict (`check`'s `trace`).
const BESIDE: &str = "demo under `LOOP_TRACE=1`, your loop beside the authors'";

/// The verdict on one wrong function of `step` that changes its demo's
/// trace: it sets the first turn that differs beside the authors', as
/// `which`, with `marked` the line marked `>`.
fn shows_its_turn_beside_the_authors(
    name: &str,
    step: (u32, &str),
    function: &str,
    wrong: (&str, &str),
    (which, marked): (&str, &str),
) {
    let said = verdict_on_one_wrong(name, step, function, wrong);
    println!("{said}"); // for `--nocapture`
    let at = said
        .find(BESIDE)
        .unwrap_or_else(|| panic!("no trace: {said}"));
    let beside = &said[at..];
    assert!(
        beside.contains(&format!("the first turn that differs is {which} (")),
        "{said}"
    );
    assert!(
        beside.contains(&format!("LOOP_TRACE=1 cargo run -p step{:02}", step.0)),
        "{said}"
    );
    let table: Vec<&str> = beside
        .lines()
        .skip_while(|line| !line.starts_with("  yours "))
        .take_while(|line| !line.is_empty())
        .collect();
    let first = table.iter().filter(|line| line.starts_with('>')).count();
    assert_eq!(first, 1, "one line marked: {said}");
    assert!(
        table
            .iter()
            .any(|line| line.starts_with(&format!("> {marked}"))),
        "`> {marked}` not in: {said}"
    );
    assert!(table.len() <= 23, "{said}");
    assert!(
        table.iter().all(|line| line.chars().count() <= 80),
        "{said}"
    );
}

/// Step 3's `Timer::cmp` putting the newer of two timers due at once
/// first: the demo's three timers of one deadline fire newest first. (Ties
/// made equal instead, as in the test above, leave the demo's order to the
/// heap, which happens to keep it.)
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn step03_a_wrong_order_of_timers_shows_its_turn_beside_the_authors() {
    shows_its_turn_beside_the_authors(
        "trace-03",
        (3, "step03-sleep"),
        "Timer::cmp",
        (
            "(other.deadline, other.sequence).cmp(&(self.deadline, self.sequence))",
            "(other.deadline, self.sequence).cmp(&(self.deadline, other.sequence))",
        ),
        (
            "turn 1 of the part \"Equal deadlines fire in the order they were \
             scheduled\"",
            "turn 1: timer due: 2",
        ),
    );
}

/// Step 5's `poll_woken` polling the woken tasks newest first: countdown
/// prints before countup.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn step05_tasks_polled_out_of_order_show_their_turn_beside_the_authors() {
    shows_its_turn_beside_the_authors(
        "trace-05",
        (5, "step05-coroutines"),
        "Tasks::poll_woken",
        ("for &id in &polling {", "for &id in polling.iter().rev() {"),
        (
            "turn 1 of the part \"countup and countdown as tasks that yield \
             after every line\"",
            "Down 5",
        ),
    );
}

/// Step 8's `TaskWaker::cancel` saying the opposite of what it did: the
/// demo's parent prints `cancel() -> false`.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn step08_a_cancel_that_says_the_opposite_shows_its_turn_beside_the_authors() {
    shows_its_turn_beside_the_authors(
        "trace-08",
        (8, "step08-cancel"),
        "TaskWaker::cancel",
        (
            "}\n        !already_cancelled",
            "}\n        already_cancelled",
        ),
        (
            "turn 2 of the part \"Cancel a suspended task\"",
            "parent: cancel() -> false",
        ),
    );
}

/// Step 6 just started, every function blank: the first test reaches
/// `JoinHandle::poll`'s `todo!()`, and unwinding drops a reporter whose
/// `report` is still blank too, which panics again and aborts the process.
/// The verdict names the function at hand, without the second panic and
/// the abort, which come from a function the participant has not reached.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_blank_destructor_reached_while_unwinding_adds_no_noise() {
    let copy = WarmCopy::new("started");
    copy.blank_track((6, "step06-spawn-join"));
    let output = copy.check(6).output().expect("check runs");
    let said = said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("not yet implemented: write `"), "{said}");
    assert!(!said.contains("panic in a destructor"), "{said}");
    assert!(!said.contains("aborting"), "{said}");
}

/// A `dbg!` left in a right `call_at`, every function rewritten: the lines
/// it adds to the demo's output are the participant's, named with where
/// they come from, and the step passes.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_dbg_in_a_right_function_is_named_and_the_step_passes() {
    let copy = WarmCopy::new("dbg");
    copy.write_track(
        (3, "step03-sleep"),
        "EventLoop::call_at",
        (
            "let sequence = self.next_sequence.get();",
            "let sequence = dbg!(self.next_sequence.get());",
        ),
    );
    let output = copy.check(3).output().expect("check runs");
    let said = said(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("Step 3 passes"), "{said}");
    assert!(
        said.contains("a `dbg!` at step03-sleep/src/lib.rs, line"),
        "{said}"
    );
    assert!(!said.contains("left out"), "{said}");
}

/// The same `dbg!`, and `Timer::cmp` wrong: the prints blame nothing, the
/// loop's tests name the wrong function.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_dbg_beside_a_wrong_function_leaves_the_blame_to_the_loops_tests() {
    let copy = WarmCopy::new("dbg-and-cmp");
    copy.write_track(
        (3, "step03-sleep"),
        "Timer::cmp",
        (
            "(other.deadline, other.sequence)",
            "(other.deadline, self.sequence)",
        ),
    );
    let file = copy.dir.join("step03-sleep/src/lib.rs");
    let text = fs::read_to_string(&file).unwrap().replacen(
        "let sequence = self.next_sequence.get();",
        "let sequence = dbg!(self.next_sequence.get());",
        1,
    );
    fs::write(&file, text).unwrap();
    let output = copy.check(3).output().expect("check runs");
    let said = said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("Your `Timer::cmp` ("), "{said}");
    assert!(
        !said.contains("sequence = "),
        "no print in the trace: {said}"
    );
}

/// A `dbg!` left in step 4's right `wait_for_io`: the tests whose server
/// has a stderr nobody reads (closed, or full) fail, as the print panics
/// or waits there. The verdict says the print may be all that is wrong,
/// and where it is.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_dbg_in_a_server_with_a_stderr_nobody_reads_is_named_as_the_trouble() {
    let copy = WarmCopy::new("dbg-stderr");
    copy.write_track(
        (4, "step04-select-echo"),
        "EventLoop::wait_for_io",
        (
            "for event in events.iter() {",
            "for event in events.iter() {\n            dbg!(event.token());",
        ),
    );
    let output = copy.check(4).output().expect("check runs");
    let said = said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains(
            "prints to stderr, and only the tests of a stderr nobody reads fail"
        ),
        "{said}"
    );
    assert!(said.contains("Your `dbg!` at line "), "{said}");
}

/// Another Cargo holds the build folder's lock for 40 s while a right
/// step's tests run, as rust-analyzer's first `cargo check` does when the
/// editor opens, or a second terminal's `cargo test --workspace --no-run`.
/// The tests once built their programs inside their own deadlines, waited
/// there on the lock, and a right function was blamed for the timeout.
/// (`flock` takes the lock as Cargo does; util-linux has it, Linux only.)
#[cfg(target_os = "linux")]
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn another_cargo_holding_the_lock_during_the_tests_blames_nothing() {
    use std::io::{BufRead, BufReader};
    let copy = WarmCopy::new("locked");
    // Every function in the participant's words, and all right.
    copy.write_track((3, "step03-sleep"), "EventLoop::call_at", ("{", "{"));
    let mut check = copy
        .check(3)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("check starts");
    let mut progress =
        BufReader::new(check.stderr.take().expect("its stderr")).lines();
    let mut said_so_far = String::new();
    for line in progress.by_ref().map_while(Result::ok) {
        said_so_far.push_str(&line);
        said_so_far.push('\n');
        if line.contains("running") {
            break;
        }
    }
    assert!(said_so_far.contains("running"), "{said_so_far}");
    let lock = copy.dir.join("target").join("debug").join(".cargo-lock");
    let mut other_cargo = Command::new("flock")
        .arg(&lock)
        .args(["sleep", "40"])
        .spawn()
        .expect("flock runs (util-linux)");
    let rest: Vec<String> = progress.map_while(Result::ok).collect();
    let output = check.wait_with_output().expect("check ends");
    let _ = other_cargo.kill();
    let _ = other_cargo.wait();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("Step 3 passes"),
        "exit {:?}\n{stdout}\n{said_so_far}{}",
        output.status.code(),
        rest.join("\n")
    );
}

/// A reader that goes away (`check 3 2>&1 | head -4`) ends the check
/// quietly, 141 as a closed pipe ends `cat`, and the tests it started with
/// it: `eprintln!` once panicked there (exit 101) and left them running.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_reader_gone_ends_the_check_and_its_tests_quietly() {
    use std::io::{BufRead, BufReader};
    let copy = WarmCopy::new("closed");
    copy.blank_track((3, "step03-sleep"));
    let mut check = copy
        .check(3)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("check starts");
    let mut progress =
        BufReader::new(check.stderr.take().expect("its stderr")).lines();
    for line in progress.by_ref().map_while(Result::ok) {
        if line.contains("running") {
            break;
        }
    }
    drop(progress); // `head` has its lines
    let output = check.wait_with_output().expect("check ends");
    assert_eq!(output.status.code(), Some(141), "{}", said(&output));
    let left: Vec<String> = workshop_tests::processes_working_in(&copy.dir);
    assert!(left.is_empty(), "left running: {left:#?}");
}

/// Ctrl-Z stops the terminal's whole process group; a check stopped there
/// kept its Cargo stopped too, holding the build folder's lock, and every
/// later command waited for ever. Now Ctrl-Z ends the check like Ctrl-C.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn ctrl_z_during_a_build_ends_the_check_and_leaves_no_lock_held() {
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
    let copy = WarmCopy::new("ctrl-z");
    let lock = copy.dir.join("target").join("debug").join(".cargo-lock");
    // Another Cargo's lock keeps the check's own Cargo waiting in its build.
    let mut other_cargo = Command::new("flock")
        .arg(&lock)
        .args(["sleep", "8"])
        .spawn()
        .expect("flock runs (util-linux)");
    std::thread::sleep(Duration::from_millis(300));
    let mut check = copy
        .check(3)
        .process_group(0) // as a terminal's foreground job
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("check starts");
    std::thread::sleep(Duration::from_secs(2));
    let group = format!("-{}", check.id());
    let stopped = Command::new("kill")
        .args(["-TSTP", "--", &group])
        .status()
        .expect("kill runs");
    assert!(stopped.success());
    let began = Instant::now();
    let status = loop {
        if let Some(status) = check.try_wait().expect("check can be waited for") {
            break Some(status);
        }
        if began.elapsed() > Duration::from_secs(20) {
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = check.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = other_cargo.kill();
    let _ = other_cargo.wait();
    let status = status.expect("the check stopped by Ctrl-Z ended, not stopped");
    assert_eq!(status.code(), Some(128 + 20), "{status:?}");
    let left = workshop_tests::processes_working_in(&copy.dir);
    assert!(left.is_empty(), "left running: {left:#?}");
}

/// Step 3's `call_at` with its parameter renamed (`callback` to `then`), as
/// a participant may, and `Timer::cmp` wrong: the authors' `call_at` body
/// no longer fits the participant's signature, so the probe's copy with
/// both bodies behind a switch does not build. It is built again without
/// that switch, and the wrong function is still named.
#[test]
#[ignore = "slow: a whole check in a copy of the workshop; .ci/run runs it"]
fn a_renamed_parameter_still_lets_the_probe_name_the_wrong_function() {
    let copy = WarmCopy::new("renamed");
    let step = (3, "step03-sleep");
    copy.write_track(
        step,
        "Timer::cmp",
        (
            "(other.deadline, other.sequence)",
            "(other.deadline, self.sequence)",
        ),
    );
    let lib = copy.dir.join("step03-sleep/src/lib.rs");
    let text = fs::read_to_string(&lib).expect("step 3's lib.rs");
    let renamed = text
        .replacen(
            "        deadline: Instant,\n        callback: impl FnOnce",
            "        deadline: Instant,\n        then: impl FnOnce",
            1,
        )
        .replacen(
            "callback: Box::new(callback),",
            "callback: Box::new(then),",
            1,
        );
    assert_eq!(
        renamed.matches("Box::new(then)").count(),
        1,
        "call_at's body"
    );
    assert!(
        renamed.contains("        then: impl FnOnce"),
        "call_at's signature"
    );
    fs::write(&lib, renamed).expect("the copy is writable");

    let output = copy.check(3).output().expect("check runs");
    let said = said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("Your `Timer::cmp` ("), "{said}");
}
