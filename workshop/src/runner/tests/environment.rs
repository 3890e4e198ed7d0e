//! What a test finds around it when the runner runs it: the workspace it
//! runs in (a copy, for the probe), and the patience its own guard waits.

use std::env;
use std::time::Duration;

use super::{ASK, myself};
use crate::runner::{
    AT_ONCE, Cargo, HURRIED, Progress, SLOW, Settings, TEST_DEADLINE, TestCase,
    run_tests,
};

#[test]
fn a_test_finds_the_workspace_it_runs_in_not_the_one_it_was_built_in() {
    // `check`'s probe runs tests built for the participant's folder in
    // a copy elsewhere: they must find the copy.
    let copy = env::temp_dir().join("a-copy-of-the-workshop");
    let case = myself();
    let cargo = Cargo {
        root: copy.clone(),
        target_dir: None,
    };
    let mut settings = Settings::new(&cargo, TEST_DEADLINE);
    settings.package_dir = env::current_dir().expect("a current folder");
    settings.env.push((ASK.to_owned(), "where".to_owned()));
    let ran = run_tests(&[case], &settings, &Progress::new(true));
    let message = ran.runs[0].outcome.message().to_owned();
    assert!(
        message.contains(&format!("the workspace: {}", copy.display())),
        "{message}"
    );
}

#[test]
fn a_test_run_by_check_waits_for_what_never_comes_only_its_patience() {
    let case = TestCase {
        env: vec![
            (ASK.to_owned(), "wait-within".to_owned()),
            (crate::PATIENCE_VAR.to_owned(), "1".to_owned()),
        ],
        ..myself()
    };
    let settings = Settings {
        package_dir: env::current_dir().expect("a current folder"),
        deadline: TEST_DEADLINE,
        env: Vec::new(),
        enough_hangs: None,
        slow: SLOW,
        hurried: HURRIED,
        at_once: AT_ONCE,
        left_out_when_hurried: Vec::new(),
    };
    let ran = run_tests(&[case], &settings, &Progress::new(true));
    let run = &ran.runs[0];
    assert!(
        run.outcome.message().contains("still running after 1s"),
        "{ran:?}"
    );
    // Without the patience, the guard would wait 20 s.
    assert!(run.took < Duration::from_secs(15), "{ran:?}");
}

#[test]
fn a_relative_target_dir_is_where_cargo_puts_it_not_below_each_test() {
    let here = std::path::Path::new("/home/someone/workshop");
    for relative in ["target", "~/target", "../builds"] {
        assert_eq!(
            super::super::as_cargo_reads_it(std::path::Path::new(relative), here),
            here.join(relative)
        );
    }
    let absolute = std::path::Path::new("/tmp/builds");
    assert_eq!(super::super::as_cargo_reads_it(absolute, here), absolute);
}
