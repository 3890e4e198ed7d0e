//! `check`'s verdicts on made-up runs, and what it says of a compile error
//! or a full disk.

use super::compile::{does_not_compile, machine_trouble};
use super::meanwhile::Answers;
use super::report::{fn_line, not_right, start_with};
use super::verdict::verdict_on;
use super::*;
use crate::runner::{CompileError, Outcome, Ran, TestCase, TestRun};
use crate::test_messages;

#[test]
fn the_disk_full_or_read_only_is_the_machine_and_a_compile_error_is_not() {
    let disk_full = "error: failed to write /t/deps/libstep04-1.rmeta: \
                     No space left on device (os error 28)";
    assert_eq!(machine_trouble(disk_full), Some("the disk is full"));
    let linker = "error: linking with `cc` failed\n  = note: /usr/bin/ld: \
                  final link failed: No space left on device";
    assert_eq!(machine_trouble(linker), Some("the disk is full"));
    let read_only = "could not write x: Read-only file system (os error 30)";
    assert!(machine_trouble(read_only).is_some());
    let compile_error = "error[E0308]: mismatched types\n --> \
                         step04-select-echo/src/event_loop.rs:12:5";
    assert_eq!(machine_trouble(compile_error), None);
}

fn step(n: &str) -> Step {
    Step::find(&crate::workspace_root(), n).expect("the step")
}

fn error_in(folder: &str) -> CompileError {
    CompileError {
        package_dir: Some(crate::workspace_root().join(folder)),
        message: "error[E0308]: mismatched types".to_owned(),
    }
}

#[test]
fn a_compile_error_in_another_step_is_named_as_that_steps() {
    let report = does_not_compile(&step("3"), &error_in("step05-coroutines")).report;
    assert!(
        report.starts_with("Step 5 (step05-coroutines/) does not compile"),
        "{report}"
    );
    assert!(
        report.contains("`cargo build -p step05` shows them"),
        "{report}"
    );
    assert!(report.contains("error[E0308]"), "{report}");
}

fn failed(id: &str, message: &str) -> TestRun {
    let (file, name) = id.split_once("::").expect("file::name");
    TestRun {
        case: TestCase {
            file: file.to_owned(),
            name: name.to_owned(),
            binary: std::path::PathBuf::new(),
            env: Vec::new(),
        },
        outcome: Outcome::Failed(message.to_owned()),
        took: std::time::Duration::from_millis(300),
    }
}

#[test]
fn a_quick_failure_ends_the_run_once_the_functions_own_tests_have_ended() {
    let own = failed("step04_loop::own", "the reader ran at once");
    let other = failed("step04_loop::other", "no reply");
    let passed = TestRun {
        outcome: Outcome::Passed,
        ..failed("step04_loop::own", "")
    };
    let hung = TestRun {
        outcome: Outcome::TimedOut(TEST_DEADLINE),
        took: TEST_DEADLINE,
        ..failed("step04_echo_server::slow", "")
    };
    let cases: Vec<TestCase> = [&own, &other, &hung]
        .iter()
        .map(|run| run.case.clone())
        .collect();
    let own_tests = ["step04_loop::own"];
    let enough =
        |runs: &[TestRun]| a_failure_to_explain(runs, 0, &cases, &own_tests);
    assert!(enough(std::slice::from_ref(&own)), "its own test failed");
    assert!(enough(&[passed.clone(), other.clone()]));
    assert!(
        !enough(std::slice::from_ref(&other)),
        "its own test is still running"
    );
    assert!(!enough(std::slice::from_ref(&passed)), "nothing failed");
    assert!(
        !enough(&[passed.clone(), hung.clone()]),
        "a hang is no explanation"
    );
    let hangs = [passed, hung.clone(), hung];
    assert!(!a_failure_to_explain(&hangs, 1, &cases, &own_tests));
    assert!(
        a_failure_to_explain(&hangs, 2, &cases, &own_tests),
        "two hangs, and two more stopped unfinished: hangs everywhere"
    );
}

#[test]
fn a_verdict_points_at_the_functions_own_line() {
    for n in 1..=8 {
        let step = step(&n.to_string());
        for marked in step.authors_track().expect("a track") {
            let text = step.read(&marked.file);
            let line = fn_line(&step, &marked);
            let shown = text.lines().nth(line - 1).unwrap_or_default();
            assert!(
                shown.contains(&format!(
                    "fn {}",
                    marked.function.rsplit("::").next().unwrap_or_default()
                )),
                "step {n}, {}: line {line} is {shown:?}",
                marked.function
            );
        }
    }
}

#[test]
fn a_functions_own_test_is_shown_when_it_fails() {
    let step = step("5");
    let marked = step.track().expect("step 5's track");
    let wake = marked
        .iter()
        .find(|m| m.function == "TaskWaker::wake_by_ref")
        .expect("wake_by_ref is marked");
    let other = failed("step05_tasks::block_on_inside_a_task_is_refused", "unwrap");
    let own = failed(&wake.test, "polled twice, not once");
    let blame = Blame {
        function: wake,
        tests: vec![other.case.id()],
        why: "the probe says so".to_owned(),
    };
    let ran = Ran {
        runs: vec![other.clone(), own.clone()],
        not_run: Vec::new(),
        enough: false,
    };
    let report = not_right(&step, &blame, &[&other, &own], &ran, None, &[]).report;
    assert!(
        report.contains(&format!("{} fails:\n\n    polled twice", wake.test)),
        "{report}"
    );
}

#[test]
fn failing_trace_tests_alone_say_the_loop_no_longer_says_what_it_does() {
    let step = step("5");
    let trace = failed(
        "traces::step05_traces_woken_tasks_and_polls",
        "no poll line",
    );
    let ran = Ran {
        runs: vec![trace],
        not_run: Vec::new(),
        enough: false,
    };
    let cargo = Cargo {
        root: step.root.clone(),
        target_dir: None,
    };
    let report = verdict_on(
        &step,
        &[],
        &ran,
        (None, &cargo),
        Answers::default(),
        &Progress::new(true),
    )
    .expect("a verdict")
    .report;
    assert!(
        report.starts_with("The loop no longer says what it does"),
        "{report}"
    );
    assert!(report.contains("no poll line"), "{report}");
    assert!(
        test_files(&step)
            .expect("files")
            .contains(&TRACES.to_owned())
    );
}

#[test]
fn failing_trace_tests_before_the_others_ran_do_not_say_they_pass() {
    let step = step("5");
    let trace = failed(
        "traces::step05_traces_woken_tasks_and_polls",
        "no poll line",
    );
    let not_run = failed("step05_tasks::tasks_take_turns", "").case;
    let ran = Ran {
        runs: vec![trace],
        not_run: vec![not_run],
        enough: true,
    };
    let cargo = Cargo {
        root: step.root.clone(),
        target_dir: None,
    };
    let report = verdict_on(
        &step,
        &[],
        &ran,
        (None, &cargo),
        Answers::default(),
        &Progress::new(true),
    )
    .expect("a verdict")
    .report;
    assert!(!report.contains("other tests pass"), "{report}");
    assert!(report.contains("no poll line"), "{report}");
}

#[test]
fn warnings_about_a_written_function_are_its_own_and_others_are_not() {
    let step = step("5");
    let marked = step.track().expect("step 5's track");
    let poll = &marked[0];
    let text = step.read(&poll.file);
    let body_line = text[..poll.body.start].lines().count() + 1;
    let warning = |line: usize| Warning {
        file: format!("{}/{}", step.folder, poll.file),
        line,
        rendered: format!("warning: unused variable at {line}"),
    };
    let warnings = [warning(body_line), warning(1)];
    let own = own_warnings(&step, &marked, &warnings);
    assert_eq!(own, [&warnings[0]]);
    let report = warned(&step, &own);
    assert!(
        report.contains("The compiler warns about your code"),
        "{report}"
    );
    assert!(report.contains(&warnings[0].rendered), "{report}");
}

/// What a test that unwraps `block_on`'s lost wake-up shows, as
/// `check` shows it, for each step that has one.
macro_rules! an_unwrapped_lost_wake_up {
    ($($step:ident),*) => {[$({
        let event_loop = std::rc::Rc::new($step::EventLoop::new().expect("a loop"));
        // Nothing will ever wake it: a lost wake-up.
        let error = event_loop.block_on(std::future::pending::<()>()).unwrap_err();
        test_messages::shorten(&format!(
            "called `Result::unwrap()` on an `Err` value: {error:?}"
        ))
    }),*]};
}

#[test]
fn an_unwrapped_lost_wake_up_shows_its_explanation_whole() {
    for shown in an_unwrapped_lost_wake_up!(step05, step06, step07, step08) {
        assert!(shown.contains("no task can ever be woken again"), "{shown}");
        assert!(shown.contains("nothing holds its waker"), "{shown}");
        assert!(!shown.contains("more characters"), "{shown}");
    }
}

#[test]
fn a_compile_error_in_the_step_itself_is_the_steps() {
    let report = does_not_compile(&step("3"), &error_in("step03-sleep")).report;
    assert!(
        report.starts_with("Step 3 does not compile yet"),
        "{report}"
    );
    assert!(report.contains("`cargo build -p step03`"), "{report}");
}

#[test]
fn a_compile_error_in_the_tests_says_a_signature_may_have_changed() {
    let report = does_not_compile(&step("3"), &error_in("tests")).report;
    assert!(
        report.contains("did the signature of a function"),
        "{report}"
    );
}

#[test]
fn a_lesson_type_the_written_function_no_longer_constructs_is_a_clue() {
    // What the compiler said of step 6's `run_and_report` awaiting the
    // future itself (`cargo workshop check 6`, Rust 1.95).
    let rendered = "warning: struct `Contained` is never constructed\n   --> \
                    step06-spawn-join/src/join.rs:126:8\n    |\n126 | struct \
                    Contained<'a, F: Future> {\n    |        ^^^^^^^^^";
    assert_eq!(never_constructed(rendered), Some("Contained"));
    assert_eq!(never_constructed("warning: unused variable: `waker`"), None);
    let step = step("6");
    // This workspace's step 6 is the authors' version.
    let marked = step.track().expect("step 6's track");
    let run_and_report = marked
        .iter()
        .find(|m| m.function == "run_and_report")
        .expect("run_and_report is marked");
    let theirs = &step.read(&run_and_report.file)[run_and_report.body.clone()];
    // A note may name the type: only code counts.
    let now = "{ // as I wrote it, without `Contained`\n    \
               reporter.report(Ok(future.await));\n}";
    assert!(left_out("Contained", theirs, now));
    assert!(!left_out("Contained", theirs, theirs), "still constructed");
    assert!(
        !left_out("Contain", theirs, now),
        "a name, not a part of one"
    );
}

/// What a pinned output's test says (its panic, then the runner's summary
/// of insta's table) when the participant's prints added `added` to it.
fn with_lines_added(id: &str, added: &[&str]) -> TestRun {
    let lines: Vec<String> = added.iter().map(|line| format!("+{line}")).collect();
    failed(
        id,
        &format!(
            "thread 'x' panicked at insta/src/runtime.rs:734:13:\nsnapshot \
             assertion for 'trace-step03' failed in line 240\n{}\n{}",
            test_messages::ONLY_ADDED_LINES,
            lines.join("\n")
        ),
    )
}

fn verdict_on_runs(step: &Step, runs: Vec<TestRun>) -> Checked {
    let ran = Ran {
        runs,
        not_run: Vec::new(),
        enough: false,
    };
    let cargo = Cargo {
        root: step.root.clone(),
        target_dir: None,
    };
    verdict_on(
        step,
        &[],
        &ran,
        (None, &cargo),
        Answers::default(),
        &Progress::new(true),
    )
    .expect("a verdict")
}

#[test]
fn a_dbg_in_a_right_function_is_named_and_blames_nothing() {
    let step = step("3");
    let dbg = "[step03-sleep/src/lib.rs:83:9] sequence = 0";
    let again = "[step03-sleep/src/lib.rs:83:9] sequence = 1";
    let trace = with_lines_added("traces::step03_trace_pinned", &[dbg, again]);
    let demo = with_lines_added(
        "snapshots::step03_default_run",
        &["[stderr]", dbg, "my timer 1 of 2", "my timer 2 of 2"],
    );
    let checked = verdict_on_runs(&step, vec![trace, demo]);
    let report = &checked.report;
    assert!(checked.passed, "{report}");
    assert!(checked.next.is_none(), "{report}");
    assert!(
        report.contains(&format!(
            "    `{dbg}`: a `dbg!` at step03-sleep/src/lib.rs, line 83\n    `my timer 1 of 2`\n"
        )),
        "one line for each print, the `dbg!` by where it is: {report}"
    );
    assert!(!report.contains("sequence = 1"), "{report}");
    assert!(!report.contains("2 of 2"), "{report}");
    assert!(
        report.contains(
            "traces::step03_trace_pinned and snapshots::step03_default_run"
        ),
        "{report}"
    );
    assert!(!report.contains("[stderr]"), "{report}");
    assert!(!report.contains("a `trace` call left out"), "{report}");
}

#[test]
fn a_changed_pinned_line_beside_the_prints_is_still_a_difference() {
    let step = step("3");
    let changed = failed(
        "traces::step03_trace_pinned",
        &format!(
            "snapshot assertion for 'trace-step03' failed\n{}\n+[src/lib.rs:83:9] \
             sequence = 0\n-turn 1: ran 1 callbacks",
            test_messages::OTHER_LINES
        ),
    );
    let checked = verdict_on_runs(&step, vec![changed]);
    assert!(!checked.passed, "{}", checked.report);
    assert!(
        checked
            .report
            .starts_with("The loop no longer says what it does"),
        "{}",
        checked.report
    );
}

#[test]
fn lines_only_added_do_not_end_the_run_early() {
    let prints = with_lines_added("snapshots::step03_default_run", &["mine"]);
    let cases = vec![prints.case.clone()];
    assert!(!a_failure_to_explain(
        std::slice::from_ref(&prints),
        0,
        &cases,
        &[]
    ));
}

#[test]
fn a_test_whose_own_guard_gave_up_says_so_not_a_second_limit() {
    let step = step("3");
    let guarded = TestRun {
        took: crate::runner::PATIENCE,
        ..failed("step03_timers::own", "still running after 12 s")
    };
    let report = verdict_on_runs(&step, vec![guarded]).report;
    assert!(!report.contains("fails after"), "{report}");
    assert!(
        report.contains(&format!(
            "step03_timers::own gave up after waiting {} s for the loop, \
             within the {} s each test may run:",
            crate::runner::PATIENCE.as_secs(),
            TEST_DEADLINE.as_secs()
        )),
        "{report}"
    );
}

fn trace_changed(changed: &[&str]) -> TestRun {
    failed(
        "traces::step03_trace_pinned",
        &format!(
            "snapshot assertion for 'trace-step03' failed\n{}\n{}",
            test_messages::OTHER_LINES,
            changed.join("\n")
        ),
    )
}

#[test]
fn a_trace_call_left_out_is_said_only_when_a_trace_line_is_missing() {
    let step = step("3");
    let missing = trace_changed(&["-[+#.### s] turn 1: waited #.### s"]);
    let report = verdict_on_runs(&step, vec![missing]).report;
    assert!(
        report.contains("a line of the authors' trace is missing from yours: a `trace` call left out?"),
        "{report}"
    );
    let missing_among_prints = trace_changed(&[
        "+polling task 0",
        "-[+#.### s] turn 1: poll task 0: pending",
    ]);
    let report = verdict_on_runs(&step, vec![missing_among_prints]).report;
    assert!(report.contains("a `trace` call left out?"), "{report}");
    let something_else = trace_changed(&[
        "+[+#.### s] turn 2: timer due: 1 (deadline +#.### s)",
        "-[+#.### s] turn 2: timer due: 0 (deadline +#.### s)",
    ]);
    let report = verdict_on_runs(&step, vec![something_else]).report;
    assert!(!report.contains("left out"), "{report}");
    assert!(
        report.contains("your loop did something else than the authors' at turn 2."),
        "{report}"
    );
}

#[test]
fn a_test_stopped_at_a_later_functions_todo_is_not_the_evidence() {
    let step = step("7");
    let marked = step.authors_track().expect("step 7's track");
    let (blamed, later) = (&marked[0], &marked[marked.len() - 1]);
    let at_todo = format!(
        "thread 'x' panicked at step07-io/src/lib.rs:1:1:\nnot yet implemented: {} \
         see chapter 7\nBrokenPipe",
        later.todo_message()
    );
    let own = failed(&blamed.test, &at_todo);
    let other = failed("step07_sockets::other", "the reply was empty");
    let blame = Blame {
        function: blamed,
        tests: vec![own.case.id(), other.case.id()],
        why: "the probe says so".to_owned(),
    };
    let ran = Ran {
        runs: vec![own.clone(), other.clone()],
        not_run: Vec::new(),
        enough: false,
    };
    let report =
        not_right(&step, &blame, &[&own, &other], &ran, None, &[later]).report;
    assert!(
        report.contains("step07_sockets::other fails:\n\n    the reply was empty"),
        "a test that does not reach the todo!() is shown: {report}"
    );
    let report = not_right(&step, &blame, &[&own], &ran, None, &[later]).report;
    assert!(
        report.contains(&format!(
            "This test stops at the `todo!()` of `{}`, which you have not written \
             yet: `{}` cannot be judged until",
            later.function, blamed.function
        )),
        "{report}"
    );
}

#[test]
fn prints_alone_and_tests_left_out_are_no_pass() {
    let step = step("3");
    let prints = with_lines_added("snapshots::step03_default_run", &["mine"]);
    let ran = Ran {
        not_run: vec![failed("traces::step03_trace_pinned", "").case],
        ..Ran {
            runs: vec![prints],
            not_run: Vec::new(),
            enough: false,
        }
    };
    let cargo = Cargo {
        root: step.root.clone(),
        target_dir: None,
    };
    let checked = verdict_on(
        &step,
        &[],
        &ran,
        (None, &cargo),
        Answers::default(),
        &Progress::new(true),
    )
    .expect("a verdict");
    assert!(!checked.passed, "{}", checked.report);
    assert!(
        checked
            .report
            .starts_with("Step 3's tests that ran pass, but not all of them ran."),
        "{}",
        checked.report
    );
}

#[test]
fn a_dbg_over_several_lines_is_one_print() {
    let step = step("4");
    let token =
        "[step04-select-echo/src/event_loop.rs:239:13] event.token() = Token(";
    let demo = with_lines_added(
        "snapshots::step04_default_run",
        &[token, "    0,", ")", token, "    1,", ")", "mine"],
    );
    let report = verdict_on_runs(&step, vec![demo]).report;
    assert!(
        report.contains(&format!(
            "    `{token}`: a `dbg!` at step04-select-echo/src/event_loop.rs, line 239\n    `mine`\n"
        )),
        "{report}"
    );
}

/// Several functions wrong, none fixed alone by the authors' version: the
/// verdict says where to start, the first in track order whose own test
/// fails, not which is wrong.
#[test]
fn with_no_one_function_named_the_first_whose_own_test_fails_is_where_to_start() {
    let step = step("5");
    let marked = step.track().expect("step 5's track");
    let own_test = |function: &str| {
        marked
            .iter()
            .find(|m| m.function == function)
            .map(|m| m.test.clone())
            .expect("marked")
    };
    let poll_task = failed(&own_test("Tasks::poll_task"), "out of order");
    let wake = failed(&own_test("TaskWaker::wake_by_ref"), "polled twice");
    let other = failed("step05_tasks::block_on_inside_a_task_is_refused", "unwrap");

    let both = start_with(&step, &marked, &[&poll_task, &other, &wake]);
    let neither = start_with(&step, &marked, &[&other]);

    assert!(
        both.contains("Start with `TaskWaker::wake_by_ref` ("),
        "{both}"
    );
    assert!(
        both.contains(&format!("`{}`, fails", own_test("TaskWaker::wake_by_ref")))
    );
    assert_eq!(neither, "");
}
