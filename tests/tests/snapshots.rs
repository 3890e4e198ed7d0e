//! Each step's default run, pinned: the real binary's output, stream by
//! stream, with its exit code. The book shows these files as the console
//! output of each chapter, so a change here is a change the reader sees.

use std::net::TcpListener;

use workshop_tests::{pinned_transcript, run_example, run_step, snapshot_settings};

fn assert_run(name: &str, package: &str, args: &[&str]) {
    let transcript = run_step(package, args);
    snapshot_settings()
        .bind(|| insta::assert_snapshot!(name, pinned_transcript(&transcript)));
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
fn step04_default_run() {
    assert_run("step04", "step04", &[]);
}

#[test]
fn step04_rejects_an_unknown_argument() {
    assert_run("step04-bogus-argument", "step04", &["--bogus"]);
}

#[test]
fn step04_rejects_an_address_that_does_not_parse() {
    assert_run("step04-bad-address", "step04", &["serve", "localhost:http"]);
}

#[test]
fn step04_names_the_address_already_in_use() {
    assert_port_in_use("step04-port-in-use", "step04");
}

#[test]
fn step05_default_run() {
    assert_run("step05", "step05", &[]);
}

#[test]
fn step05_rejects_an_unknown_argument() {
    assert_run("step05-bogus-argument", "step05", &["--bogus"]);
}

#[test]
fn step06_default_run() {
    assert_run("step06", "step06", &[]);
}

#[test]
fn step06_rejects_an_unknown_argument() {
    assert_run("step06-bogus-argument", "step06", &["--bogus"]);
}

#[test]
fn step07_default_run() {
    assert_run("step07", "step07", &[]);
}

#[test]
fn step07_rejects_an_unknown_argument() {
    assert_run("step07-bogus-argument", "step07", &["--bogus"]);
}

#[test]
fn step07_rejects_an_address_that_does_not_parse() {
    assert_run("step07-bad-address", "step07", &["serve", "localhost:http"]);
}

#[test]
fn step07_names_the_address_already_in_use() {
    assert_port_in_use("step07-port-in-use", "step07");
}

#[test]
fn step08_default_run() {
    assert_run("step08", "step08", &[]);
}

#[test]
fn step08_rejects_an_unknown_argument() {
    assert_run("step08-bogus-argument", "step08", &["--bogus"]);
}

#[test]
fn step08_rejects_an_address_that_does_not_parse() {
    assert_run("step08-bad-address", "step08", &["serve", "localhost:http"]);
}

#[test]
fn step08_names_the_address_already_in_use() {
    assert_port_in_use("step08-port-in-use", "step08");
}

/// A lost wake-up made on purpose, named by the loop: chapter 5, "Lost
/// wake-ups", and the build-it sections of chapters 6 to 8 show these.
#[test]
fn step05_names_a_lost_wake_up() {
    assert_example("step05-lost-wake-up", "step05", "step05_lost_wake_up");
}

#[test]
fn step06_names_a_lost_wake_up() {
    assert_example("step06-lost-wake-up", "step06", "step06_lost_wake_up");
}

#[test]
fn step07_names_a_lost_wake_up() {
    assert_example("step07-lost-wake-up", "step07", "step07_lost_wake_up");
}

#[test]
fn step08_names_a_lost_wake_up() {
    assert_example("step08-lost-wake-up", "step08", "step08_lost_wake_up");
}

fn assert_example(name: &str, package: &str, example: &str) {
    let transcript = run_example(package, example);
    snapshot_settings()
        .bind(|| insta::assert_snapshot!(name, pinned_transcript(&transcript)));
}

/// Runs `package` in `serve` mode on a port that is taken, and pins what it
/// says.
fn assert_port_in_use(name: &str, package: &str) {
    let taken = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = taken.local_addr().expect("a bound address").to_string();
    let transcript = run_step(package, &["serve", &addr]);
    // The port is whatever the OS handed out this time.
    let pinned = pinned_transcript(&transcript).replace(&addr, "127.0.0.1:PORT");
    snapshot_settings().bind(|| insta::assert_snapshot!(name, pinned));
}
