//! A solution to chapter 8's exercise. Try it yourself before reading on.

use std::future;
use std::pin::Pin;
use std::task::Poll;

use step08::{JoinError, JoinHandle, spawn};

use super::Job;

// ANCHOR: try_join_all
/// As chapter 6's, but a failure cancels every job still pending before it
/// returns. Each of those tasks is dropped at the loop's next turn to it:
/// its destructors run, and its timers and sockets go with it.
pub async fn try_join_all(jobs: Vec<Job>) -> Result<Vec<u32>, JoinError> {
    let mut pending: Vec<Option<JoinHandle<u32>>> =
        jobs.into_iter().map(|job| Some(spawn(job))).collect();
    let mut values: Vec<Option<u32>> = vec![None; pending.len()];
    future::poll_fn(|cx| {
        let mut failure = None;
        for (slot, value) in pending.iter_mut().zip(values.iter_mut()) {
            let Some(handle) = slot else { continue };
            if let Poll::Ready(outcome) = Pin::new(handle).poll(cx) {
                *slot = None;
                match outcome {
                    Ok(got) => *value = Some(got),
                    Err(err) => {
                        failure = Some(err);
                        break;
                    }
                }
            }
        }
        if let Some(err) = failure {
            // The new part: stop every job still running.
            for handle in pending.iter().flatten() {
                handle.cancel();
            }
            return Poll::Ready(Err(err));
        }
        if pending.iter().any(Option::is_some) {
            return Poll::Pending;
        }
        Poll::Ready(Ok(values.iter().map(|v| v.expect("all ended")).collect()))
    })
    .await
}
// ANCHOR_END: try_join_all
