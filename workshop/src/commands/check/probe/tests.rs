//! The probe's verdict from made-up reruns, and the switch's text.

use super::switching::{AUTHORS_BODY, Reruns, switch, switch_sets};
use super::*;
use crate::runner::Outcome;
use std::path::PathBuf;
use std::time::Duration;

fn suspect(order: usize, function: &str) -> Marked {
    Marked {
        file: "src/lib.rs".to_owned(),
        line: order * 10,
        order,
        total: 3,
        chapter: 3,
        section: "The idea".to_owned(),
        test: format!("step03_timers::own_test_of_{order}"),
        function: function.to_owned(),
        doc: String::new(),
        signature: 0..0,
        body: 0..0,
    }
}

fn case(name: &str) -> TestCase {
    TestCase {
        file: "step03_timers".to_owned(),
        name: name.to_owned(),
        binary: PathBuf::new(),
        env: Vec::new(),
    }
}

/// A rerun of `name`, with suspect `order`'s switch on (or none), that
/// passed or failed.
fn rerun(name: &str, order: Option<usize>, passed: bool) -> TestRun {
    let mut case = case(name);
    if let Some(order) = order {
        case.env = vec![(AUTHORS_BODY.to_owned(), order.to_string())];
    }
    TestRun {
        case,
        outcome: if passed {
            Outcome::Passed
        } else {
            Outcome::Failed("assertion failed".to_owned())
        },
        took: Duration::from_millis(100),
    }
}

/// A rerun of `name` with the switches `on` (`"1,3"`) that passed or
/// failed.
fn rerun_with(name: &str, on: &str, passed: bool) -> TestRun {
    let mut run = rerun(name, None, passed);
    run.case.env = vec![(AUTHORS_BODY.to_owned(), on.to_owned())];
    run
}

fn culprit(found: Found) -> (String, Vec<String>) {
    match found {
        Found::Culprit(blame) => (blame.function.function.clone(), blame.tests),
        Found::PassedOnRerun => panic!("passed on rerun"),
        Found::Nothing => panic!("nothing found"),
        Found::Untried => panic!("the copy did not build"),
        Found::ToolFailed(failure) => panic!("the tool failed: {failure}"),
    }
}

#[test]
fn a_suspect_whose_switch_makes_every_rerun_pass_decides() {
    let (first, second) = (suspect(1, "call_at"), suspect(2, "Timer::cmp"));
    let probe = Probe {
        rerun: vec![case("a"), case("b")],
        as_they_are: true,
        suspects: vec![&first, &second],
        hung_after: None,
        alone_too: true,
    };
    let mut runs = vec![rerun("a", None, false), rerun("b", None, false)];
    runs.push(rerun("a", Some(2), true));
    assert!(
        !Reruns::of(&probe, &runs, &[]).decided(),
        "b is still to come"
    );
    runs.push(rerun("b", Some(2), true));
    let reruns = Reruns::of(&probe, &runs, &[]);
    assert!(reruns.decided());
    let (function, tests) = culprit(reruns.verdict());
    assert_eq!(function, "Timer::cmp");
    assert_eq!(tests, ["step03_timers::a", "step03_timers::b"]);
}

#[test]
fn nothing_is_decided_before_the_reruns_as_they_are_end() {
    let first = suspect(1, "call_at");
    let probe = Probe {
        rerun: vec![case("a")],
        as_they_are: true,
        suspects: vec![&first],
        hung_after: None,
        alone_too: true,
    };
    // The suspect's run came first: the test may pass as it is too.
    let runs = vec![rerun("a", Some(1), true)];
    assert!(!Reruns::of(&probe, &runs, &[]).decided());
    let runs = [runs, vec![rerun("a", None, true)]].concat();
    let reruns = Reruns::of(&probe, &runs, &[]);
    assert!(reruns.decided());
    assert!(matches!(reruns.verdict(), Found::PassedOnRerun));
}

#[test]
fn a_test_that_passes_as_it_is_counts_for_no_suspect() {
    let (first, second) = (suspect(1, "call_at"), suspect(2, "Timer::cmp"));
    let probe = Probe {
        rerun: vec![case("a"), case("b")],
        as_they_are: true,
        suspects: vec![&first, &second],
        hung_after: None,
        alone_too: true,
    };
    let runs = vec![
        rerun("a", None, true),
        rerun("b", None, false),
        rerun("a", Some(1), true),
        rerun("b", Some(1), false),
        rerun("a", Some(2), true),
        rerun("b", Some(2), true),
    ];
    let (function, tests) = culprit(Reruns::of(&probe, &runs, &[]).verdict());
    assert_eq!(function, "Timer::cmp");
    assert_eq!(tests, ["step03_timers::b"]);
}

#[test]
fn of_suspects_that_fix_as_much_the_likeliest_is_blamed() {
    let (first, second) = (suspect(1, "call_at"), suspect(2, "Timer::cmp"));
    let probe = Probe {
        rerun: vec![case("a"), case("b")],
        as_they_are: false,
        suspects: vec![&second, &first],
        hung_after: None,
        alone_too: true,
    };
    let runs = vec![
        rerun("a", Some(1), true),
        rerun("b", Some(1), false),
        rerun("a", Some(2), true),
        rerun("b", Some(2), false),
    ];
    let reruns = Reruns::of(&probe, &runs, &[]);
    // No suspect fixes both, but each fails `b` with the other switched.
    assert!(reruns.decided(), "each is wrong on its own");
    let (function, _) = culprit(reruns.verdict());
    assert_eq!(function, "Timer::cmp", "listed first, so likelier");
}

#[test]
fn without_a_rerun_as_they_are_a_hang_is_judged_by_the_switches_alone() {
    let first = suspect(1, "call_at");
    let probe = Probe {
        rerun: vec![case("a")],
        as_they_are: false,
        suspects: vec![&first],
        hung_after: None,
        alone_too: true,
    };
    let reruns = Reruns::of(&probe, &[rerun("a", Some(1), false)], &[]);
    assert!(!reruns.decided());
    assert!(matches!(reruns.verdict(), Found::Nothing));
}

#[test]
fn a_suspect_that_fails_alone_among_the_authors_functions_decides() {
    let (first, second, third) = (
        suspect(1, "wake_by_ref"),
        suspect(2, "poll_woken"),
        suspect(3, "poll_task"),
    );
    let probe = Probe {
        rerun: vec![case("a")],
        as_they_are: true,
        suspects: vec![&first, &second, &third],
        hung_after: None,
        alone_too: true,
    };
    // Three wrong: no one switch makes the test pass.
    let mut runs = vec![
        rerun("a", None, false),
        rerun("a", Some(1), false),
        rerun_with("a", "1,3", true),
    ];
    assert!(
        !Reruns::of(&probe, &runs, &[]).decided(),
        "poll_woken alone passes"
    );
    runs.push(rerun_with("a", "2,3", false));
    let reruns = Reruns::of(&probe, &runs, &[]);
    assert!(reruns.decided(), "wake_by_ref fails on its own");
    match reruns.verdict() {
        Found::Culprit(blame) => {
            assert_eq!(blame.function.function, "wake_by_ref");
            assert_eq!(blame.tests, ["step03_timers::a"]);
            assert!(blame.why.contains("wrong on its own"), "{}", blame.why);
        }
        _ => panic!("no culprit"),
    }
}

#[test]
fn with_a_function_still_blank_no_suspect_is_wrong_on_its_own() {
    let (first, second, third) = (
        suspect(1, "wake_by_ref"),
        suspect(2, "poll_woken"),
        suspect(3, "poll_task"),
    );
    let probe = Probe {
        rerun: vec![case("a")],
        as_they_are: false,
        suspects: vec![&first, &second, &third],
        hung_after: None,
        // `Sleep::poll` still blank: its `todo!()` fails the trace's test
        // with every function of the participant's right.
        alone_too: false,
    };
    let runs = vec![
        rerun_with("a", "2,3", false),
        rerun("a", Some(1), false),
        rerun("a", Some(2), false),
        rerun("a", Some(3), false),
    ];
    let reruns = Reruns::of(&probe, &runs, &[]);
    assert!(matches!(reruns.verdict(), Found::Nothing));
}

#[test]
fn a_switch_that_fixes_every_failure_comes_before_one_alone() {
    let (first, second, third) = (
        suspect(1, "call_at"),
        suspect(2, "Timer::cmp"),
        suspect(3, "run"),
    );
    let probe = Probe {
        rerun: vec![case("a")],
        as_they_are: false,
        suspects: vec![&first, &second, &third],
        hung_after: None,
        alone_too: true,
    };
    let runs = vec![rerun_with("a", "1,2", false), rerun("a", Some(2), true)];
    let (function, _) = culprit(Reruns::of(&probe, &runs, &[]).verdict());
    assert_eq!(function, "Timer::cmp");
}

#[test]
fn a_switch_that_passes_only_as_slowly_as_theirs_hung_is_no_fix() {
    let (first, second) = (suspect(1, "call_at"), suspect(2, "Timer::cmp"));
    let probe = Probe {
        rerun: vec![case("a")],
        as_they_are: false,
        suspects: vec![&first, &second],
        // Asked while it had run 6 s without ending.
        hung_after: Some(Duration::from_secs(6)),
        alone_too: true,
    };
    let slow = TestRun {
        took: Duration::from_secs(4),
        ..rerun("a", Some(1), true)
    };
    let reruns = Reruns::of(&probe, &[slow], &[]);
    assert!(!reruns.decided(), "as slow as a busy machine, not a fix");
    let quick = rerun("a", Some(1), true);
    let (function, _) = culprit(Reruns::of(&probe, &[quick], &[]).verdict());
    assert_eq!(function, "call_at");
}

#[test]
fn a_rerun_as_it_is_that_runs_on_long_after_a_switch_passed_fails_again() {
    let (first, second) = (suspect(1, "call_at"), suspect(2, "Timer::cmp"));
    let probe = Probe {
        rerun: vec![case("a")],
        as_they_are: true,
        suspects: vec![&first, &second],
        hung_after: None,
        alone_too: true,
    };
    // The switch passed in 100 ms; theirs, as it is, still runs.
    let runs = vec![rerun("a", Some(2), true)];
    let running = |ms| vec![(case("a"), Duration::from_millis(ms))];
    assert!(
        !Reruns::of(&probe, &runs, &running(300)).decided(),
        "as soon as a failure that comes and goes might end"
    );
    let reruns = Reruns::of(&probe, &runs, &running(800));
    assert!(reruns.decided());
    let (function, _) = culprit(reruns.verdict());
    assert_eq!(function, "Timer::cmp");
    // A switched rerun still running says nothing of the one as it is.
    let mut switched = case("a");
    switched.env = vec![(AUTHORS_BODY.to_owned(), "1".to_owned())];
    let only_switched = vec![(switched, Duration::from_secs(5))];
    assert!(!Reruns::of(&probe, &runs, &only_switched).decided());
}

#[test]
fn each_suspect_is_switched_alone_then_left_alone_once_each() {
    let (first, second, third) = (
        suspect(1, "call_at"),
        suspect(2, "Timer::cmp"),
        suspect(3, "run"),
    );
    assert_eq!(
        switch_sets(&[&third, &first, &second], true),
        [
            vec![3],
            vec![1, 2],
            vec![1],
            vec![2, 3],
            vec![2],
            vec![1, 3]
        ]
    );
    // With two, leaving one alone is switching the other: run once.
    assert_eq!(switch_sets(&[&first, &second], true), [vec![1], vec![2]]);
    assert_eq!(switch_sets(&[&first], true), [vec![1]]);
    // A function still blank: each alone only.
    assert_eq!(
        switch_sets(&[&third, &first, &second], false),
        [vec![3], vec![1], vec![2]]
    );
}

#[test]
fn the_switch_holds_both_bodies_and_reads_its_own_place() {
    let body = switch(4, "{ 1 }", "{ 2 }");
    assert!(body.starts_with('{') && body.ends_with('}'), "{body}");
    assert!(body.contains(r#"n == "4""#), "{body}");
    let authors = body.find("{ 1 }").expect("the authors' body");
    let theirs = body.find("{ 2 }").expect("the participant's body");
    assert!(
        authors < body.find("else").expect("else")
            && body.find("else") < Some(theirs)
    );
}

#[test]
fn the_probe_counts_the_functions_written_as_the_participant_does() {
    assert_eq!(
        which_function(3, 5),
        "which function? 3 of the 5 functions you wrote differ from the \
         authors' version: trying theirs in place of each, in a copy of your code"
    );
    assert!(
        which_function(3, 3)
            .starts_with("which function? the 3 functions you wrote differ"),
        "{}",
        which_function(3, 3)
    );
    assert!(
        which_function(1, 1)
            .starts_with("which function? the function you wrote differs"),
        "{}",
        which_function(1, 1)
    );
    assert!(
        which_function(1, 4)
            .starts_with("which function? 1 of the 4 functions you wrote differs"),
        "{}",
        which_function(1, 4)
    );
}

#[test]
fn among_hangs_the_markers_own_tests_are_rerun_first() {
    let first = suspect(1, "call_at");
    let hung = |file: &str, name: &str, secs: u64| TestRun {
        case: TestCase {
            file: file.to_owned(),
            ..case(name)
        },
        outcome: Outcome::TimedOut(Duration::from_secs(secs)),
        took: Duration::from_secs(secs),
    };
    let trace = hung("traces", "step03_trace_pinned", 5);
    let own = hung("step03_timers", "a_timer_test", 6);
    let failing = [&trace, &own];
    let rerun = tests_to_rerun(&failing, &[&first]);
    let names: Vec<String> = rerun.iter().map(TestCase::id).collect();
    assert_eq!(names, ["step03_timers::a_timer_test"]);
}
