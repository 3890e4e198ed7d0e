//! A solution to chapter 6's exercise. Try it yourself before reading on.

use std::future;
use std::pin::Pin;
use std::task::Poll;

use step06::{JoinError, JoinHandle, spawn};

use super::Job;

// ANCHOR: try_join_all
/// Polls every handle still pending whenever the group is woken, so it
/// sees whichever task ends first. Each pending handle keeps this task's
/// waker in its slot, so the end of any one of them wakes the group.
///
/// On a failure, the handles still pending are dropped: their tasks are
/// detached and run on (stopping them is cancellation, step 8's subject).
pub async fn try_join_all(jobs: Vec<Job>) -> Result<Vec<u32>, JoinError> {
    let mut pending: Vec<Option<JoinHandle<u32>>> =
        jobs.into_iter().map(|job| Some(spawn(job))).collect();
    let mut values: Vec<Option<u32>> = vec![None; pending.len()];
    future::poll_fn(|cx| {
        for (slot, value) in pending.iter_mut().zip(values.iter_mut()) {
            // A handle that has given its outcome must not be polled again.
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
