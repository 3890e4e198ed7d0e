//! The exercises of chapter 8 ("Try it") that a test can check.
//!
//! Each `#[ignore]`d test fails until its exercise is done. Run them with
//!
//!     cargo test -p workshop-tests --test step08_exercises -- --ignored
//!
//! A reference solution lives in `solutions/step08.rs`, and the tests that are
//! not ignored check it, so every exercise here is known to be solvable.

use std::future::{self, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use step08::{EventLoop, JoinError, JoinHandle, sleep, spawn, yield_now};
use workshop_tests::{DropFlag, HANG_LIMIT, within};

#[path = "solutions/step08.rs"]
mod solutions;

/// One job for a group: any future that gives a number.
type Job = Pin<Box<dyn Future<Output = u32>>>;

// ANCHOR: try_join_all
/// Exercise 1: run every job as a task of its own and wait for them all.
/// When all succeed, return their values in the order given. When one
/// fails, return its `JoinError` at once, *and stop the jobs still
/// running*.
///
/// This is chapter 6's solution. It returns the failure at once, but the
/// jobs still running only lose their handles, and dropping a `JoinHandle`
/// detaches its task: it runs on, holding what it holds, until it ends by
/// itself or the loop is done.
async fn try_join_all(jobs: Vec<Job>) -> Result<Vec<u32>, JoinError> {
    let mut pending: Vec<Option<JoinHandle<u32>>> =
        jobs.into_iter().map(|job| Some(spawn(job))).collect();
    let mut values: Vec<Option<u32>> = vec![None; pending.len()];
    future::poll_fn(|cx| {
        for (slot, value) in pending.iter_mut().zip(values.iter_mut()) {
            let Some(handle) = slot else { continue };
            if let Poll::Ready(outcome) = Pin::new(handle).poll(cx) {
                *slot = None;
                match outcome {
                    Ok(got) => *value = Some(got),
                    Err(err) => return Poll::Ready(Err(err)),
                }
            }
        }
        if pending.iter().any(Option::is_some) {
            return Poll::Pending;
        }
        Poll::Ready(Ok(values.iter().map(|v| v.expect("all ended")).collect()))
    })
    .await
}
// ANCHOR_END: try_join_all

/// How long the slow job would take: far longer than the test.
const SLOW: Duration = Duration::from_secs(10);

/// A job that sleeps, then returns `value`.
fn nap(duration: Duration, value: u32) -> Job {
    Box::pin(async move {
        sleep(duration).await;
        value
    })
}

/// A slow job holding `flag`: the flag is dropped with the job's future.
fn slow_holding(flag: DropFlag) -> Job {
    Box::pin(async move {
        let _held = flag;
        sleep(SLOW).await;
        1
    })
}

/// A job that sleeps briefly, then panics.
fn fail(message: &'static str) -> Job {
    Box::pin(async move {
        sleep(Duration::from_millis(50)).await;
        panic!("{message}")
    })
}

fn message(err: &JoinError) -> String {
    err.panic_message().unwrap_or("cancelled").to_owned()
}

fn check_try_join_all<Group>(try_join_all: fn(Vec<Job>) -> Group)
where
    Group: Future<Output = Result<Vec<u32>, JoinError>> + 'static,
{
    let (values, failure, slow_job_dropped) = within(HANG_LIMIT, move || {
        let lp = Rc::new(EventLoop::new().expect("a new poller"));
        lp.block_on(async move {
            let values = try_join_all(vec![
                nap(Duration::from_millis(60), 1),
                nap(Duration::from_millis(30), 2),
                nap(Duration::ZERO, 3),
            ])
            .await
            .map_err(|err| message(&err));

            let (flag, dropped) = DropFlag::new();
            let failure = try_join_all(vec![slow_holding(flag), fail("out of tea")])
                .await
                .map_err(|err| message(&err));
            // A cancelled task is dropped on the loop's next turn to it.
            yield_now().await;
            (values, failure, dropped.get())
        })
        .expect("the loop runs")
    });
    assert_eq!(values, Ok(vec![1, 2, 3]), "the values, in the order given");
    assert_eq!(failure, Err("out of tea".to_owned()));
    assert!(
        slow_job_dropped,
        "the slow job still runs after the failure: its handle was dropped, \
         which detached it, and nothing cancelled it"
    );
}

#[test]
#[ignore = "exercise 1 of chapter 8: cancel the jobs still running on a failure"]
fn exercise_1_a_failure_stops_the_other_jobs() {
    check_try_join_all(try_join_all);
}

#[test]
fn exercise_1_has_a_solution() {
    check_try_join_all(solutions::try_join_all);
}
