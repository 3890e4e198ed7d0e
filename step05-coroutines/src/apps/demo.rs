//! The demo `cargo run -p step05` shows: tasks, futures the loop polls until
//! they are done.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::event_loop::EventLoop;
use crate::sleep::{Sleep, sleep, yield_now};

/// Runs the demo's scenes, one after another, each on a loop of its own.
pub fn run() -> io::Result<()> {
    println!("== Two tasks sleeping at once: Arouba 0.5 s, Brandenburg 0.7 s ==");
    let started = Instant::now();
    sleep_concurrently()?;
    let took = started.elapsed().as_secs_f64();
    println!("took {took:.2} s: the longer of the two, not the sum");

    println!();
    println!("== One task written by hand, as a state machine ==");
    let value = Rc::new(EventLoop::new()?).block_on(WakeUpByHand::new(NAP))?;
    println!("block_on returned {value:?}");

    println!();
    println!("== The same task written as an async fn ==");
    let value = Rc::new(EventLoop::new()?).block_on(wake_up(NAP))?;
    println!("block_on returned {value:?}");

    println!();
    println!("== countup and countdown as tasks that yield after every line ==");
    count_in_turns()?;
    println!("(each task went round its loop once, then let the other run)");
    Ok(())
}

// ANCHOR: concurrent_tasks
/// Seed 003's two sleepers as tasks. `block_on` returns when *its* task,
/// Brandenburg, is done; Arouba, the shorter sleep, is spawned beside it.
/// (Waiting for any number of tasks is step 6's `join`.)
fn sleep_concurrently() -> io::Result<()> {
    let lp = Rc::new(EventLoop::new()?);
    lp.spawn(nap_then_call("Arouba", 0.5));
    lp.block_on(nap_then_call("Brandenburg", 0.7))
}

async fn nap_then_call(name: &str, seconds: f64) {
    sleep(Duration::from_secs_f64(seconds)).await;
    println!("{name}: slept {seconds:.1} s");
}
// ANCHOR_END: concurrent_tasks

/// How long the task below sleeps.
const NAP: Duration = Duration::from_millis(300);

// ANCHOR: by_hand
/// The task `wake_up` below, written out by hand: roughly the state machine
/// the compiler builds from the `async fn`. Each poll carries on from where
/// the previous one stopped, which is what the state remembers.
enum WakeUpByHand {
    /// Not polled yet: nothing has happened.
    Start { nap: Duration },
    /// Waiting on the sleep it started.
    Sleeping { sleep: Sleep },
    /// Returned its value: polling it again is a bug.
    Done,
}

impl WakeUpByHand {
    fn new(nap: Duration) -> Self {
        WakeUpByHand::Start { nap }
    }
}

impl Future for WakeUpByHand {
    type Output = &'static str;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match &mut *self {
                WakeUpByHand::Start { nap } => {
                    println!("going to sleep for {:.1} s", nap.as_secs_f64());
                    let sleep = sleep(*nap);
                    *self = WakeUpByHand::Sleeping { sleep };
                }
                WakeUpByHand::Sleeping { sleep } => {
                    if Pin::new(sleep).poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    println!("awake again");
                    *self = WakeUpByHand::Done;
                    return Poll::Ready("rested");
                }
                WakeUpByHand::Done => panic!("polled after it returned"),
            }
        }
    }
}
// ANCHOR_END: by_hand

// ANCHOR: async_fn
/// The same task as an `async fn`: the compiler writes the state machine.
async fn wake_up(nap: Duration) -> &'static str {
    println!("going to sleep for {:.1} s", nap.as_secs_f64());
    sleep(nap).await;
    println!("awake again");
    "rested"
}
// ANCHOR_END: async_fn

// ANCHOR: yielding_tasks
/// Step 2's countup and countdown once more, now as plain loops, as in
/// step 1, that still take turns: each `yield_now` hands the loop back.
fn count_in_turns() -> io::Result<()> {
    let lp = Rc::new(EventLoop::new()?);
    lp.spawn(countup(5));
    lp.block_on(countdown(5))
}

async fn countup(n: u32) {
    for i in 0..n {
        println!("Up {i}");
        yield_now().await;
    }
}

async fn countdown(n: u32) {
    for i in (1..=n).rev() {
        println!("Down {i}");
        yield_now().await;
    }
}
// ANCHOR_END: yielding_tasks
