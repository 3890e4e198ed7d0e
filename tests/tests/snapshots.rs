//! Each step's default run, pinned: the real binary's output, stream by
//! stream, with its exit code. The book shows these files as the console
//! output of each chapter, so a change here is a change the reader sees.

use workshop_tests::{run_step, snapshot_settings};

fn assert_run(name: &str, package: &str, args: &[&str]) {
    let transcript = run_step(package, args);
    snapshot_settings()
        .bind(|| insta::assert_snapshot!(name, transcript.to_string()));
}

#[test]
fn step01_default_run() {
    assert_run("step01", "step01", &[]);
}

#[test]
fn step02_default_run() {
    assert_run("step02", "step02", &[]);
}

#[test]
fn step03_default_run() {
    assert_run("step03", "step03", &[]);
}

#[test]
fn step03_rejects_an_unknown_argument() {
    assert_run("step03-bogus-argument", "step03", &["--bogus"]);
}

#[test]
fn step05_default_run() {
    assert_run("step05", "step05", &[]);
}

#[test]
fn step05_rejects_an_unknown_argument() {
    assert_run("step05-bogus-argument", "step05", &["--bogus"]);
}
