//! Each way a test can end gets its verdict, and the message shown with
//! it: passed, failed with its own panic, stopped at its deadline, its
//! stack overflowed, or its process ended early; also after megabytes of
//! output.

use std::time::{Duration, Instant};

use super::run_asking;
use crate::runner::{Outcome, TEST_DEADLINE};

#[test]
fn a_test_past_its_deadline_is_stopped() {
    let began = Instant::now();
    let deadline = Duration::from_secs(1);
    assert_eq!(run_asking("hang", deadline), Outcome::TimedOut(deadline));
    assert!(began.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_stack_overflow_is_named_with_its_test() {
    let outcome = run_asking("recurse", TEST_DEADLINE);
    let Outcome::StackOverflow(message) = outcome else {
        panic!("expected a stack overflow, got {outcome:?}");
    };
    assert!(message.contains("misbehaves_when_asked'"), "{message}");
    assert!(message.contains("has overflowed its stack"), "{message}");
}

#[test]
fn a_failed_test_shows_its_own_panic_message() {
    let outcome = run_asking("panic", TEST_DEADLINE);
    let Outcome::Failed(message) = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert!(message.contains("the timer fired 3 ms early"), "{message}");
    assert!(!message.contains("RUST_BACKTRACE"), "{message}");
}

#[test]
fn a_test_that_ends_its_process_with_success_has_not_passed() {
    let outcome = run_asking("exit", TEST_DEADLINE);
    assert!(matches!(outcome, Outcome::EndedEarly(_)), "{outcome:?}");
}

#[test]
fn a_test_that_prints_megabytes_before_it_passes_passes() {
    assert_eq!(
        run_asking("print-then-pass", TEST_DEADLINE),
        Outcome::Passed
    );
}

#[test]
fn a_test_that_prints_megabytes_before_its_panic_shows_the_panic() {
    let outcome = run_asking("print-then-panic", TEST_DEADLINE);
    let Outcome::Failed(message) = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert!(message.contains("the timer fired 3 ms early"), "{message}");
}

#[test]
fn a_stack_overflow_after_megabytes_of_output_is_named() {
    let outcome = run_asking("print-then-recurse", TEST_DEADLINE);
    assert!(matches!(outcome, Outcome::StackOverflow(_)), "{outcome:?}");
}

#[test]
fn a_passing_test_passes() {
    assert_eq!(run_asking("nothing", TEST_DEADLINE), Outcome::Passed);
}
