//! The exercises of chapter 6 ("Try it") that a test can check.
//!
//! Each `#[ignore]`d test fails until its exercise is done. Run them with
//!
//!     cargo test -p workshop-tests --test step06_exercises -- --ignored
//!
//! A reference solution lives in `solutions/step06.rs`, and the tests that are
//! not ignored check it, so every exercise here is known to be solvable.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::{Duration, Instant};

use step06::{EventLoop, JoinError, sleep, spawn};
use workshop_tests::{HANG_LIMIT, within};

#[path = "solutions/step06.rs"]
mod solutions;

/// One job for a group: any future that gives a number.
type Job = Pin<Box<dyn Future<Output = u32>>>;

// ANCHOR: try_join_all
/// Exercise 1: run every job as a task of its own and wait for them all.
/// When all succeed, return their values in the order given. When one
/// panics, return its `JoinError` *as soon as it has panicked*, without
/// waiting for the jobs before it in the list.
///
/// This one gets the values right, but it finds out about a failure only
/// when it reaches that job's handle: after every job before it has ended.
async fn try_join_all(jobs: Vec<Job>) -> Result<Vec<u32>, JoinError> {
    let handles: Vec<_> = jobs.into_iter().map(spawn).collect();
    let mut values = Vec::with_capacity(handles.len());
    for handle in handles {
        values.push(handle.await?);
    }
    Ok(values)
}
// ANCHOR_END: try_join_all

/// How long the slow job takes: the test's yardstick.
const SLOW: Duration = Duration::from_secs(2);

/// A job that sleeps, then returns `value`.
fn nap(duration: Duration, value: u32) -> Job {
    Box::pin(async move {
        sleep(duration).await;
        value
    })
}

fn millis(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// A job that sleeps briefly, then panics.
fn fail(message: &'static str) -> Job {
    Box::pin(async move {
        sleep(millis(50)).await;
        panic!("{message}")
    })
}

/// Runs `try_join_all` on `jobs` on a fresh loop; returns the outcome and
/// how long it took.
fn run<Group>(
    try_join_all: impl Fn(Vec<Job>) -> Group + Send + 'static,
    jobs: fn() -> Vec<Job>,
) -> (Result<Vec<u32>, String>, Duration)
where
    Group: Future<Output = Result<Vec<u32>, JoinError>> + 'static,
{
    within(HANG_LIMIT, move || {
        let lp = Rc::new(EventLoop::new().expect("a new poller"));
        let group = try_join_all(jobs());
        let started = Instant::now();
        let outcome = lp.block_on(group).expect("the loop runs");
        let took = started.elapsed();
        (outcome.map_err(|err| message(&err)), took)
    })
}

fn message(err: &JoinError) -> String {
    err.panic_message().unwrap_or("cancelled").to_owned()
}

fn check_try_join_all<Group>(
    try_join_all: impl Fn(Vec<Job>) -> Group + Clone + Send + 'static,
) where
    Group: Future<Output = Result<Vec<u32>, JoinError>> + 'static,
{
    let (outcome, _) = run(try_join_all.clone(), || {
        vec![nap(millis(200), 1), nap(millis(100), 2), nap(millis(0), 3)]
    });
    assert_eq!(outcome, Ok(vec![1, 2, 3]), "the values, in the order given");

    let (outcome, took) =
        run(try_join_all, || vec![nap(SLOW, 1), fail("out of tea")]);
    assert_eq!(outcome, Err("out of tea".to_owned()));
    assert!(
        took < SLOW / 2,
        "the failure took {took:?} to come back: it waited for the slow job"
    );
}

#[test]
#[ignore = "exercise 1 of chapter 6: report a failure as soon as it happens"]
fn exercise_1_a_failure_comes_back_at_once() {
    check_try_join_all(try_join_all);
}

#[test]
fn exercise_1_has_a_solution() {
    check_try_join_all(solutions::try_join_all);
}
