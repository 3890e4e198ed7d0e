//! Two probes behind `bench/RESULTS.md`'s fourth round, which tell the two
//! timer-cost rows apart (`scale.timers` and `scale.timers_at_first_poll`):
//!
//! ```sh
//! cargo run --profile bench -p bench --example timer_factors -- expired
//! cargo run --profile bench -p bench --example timer_factors -- heap
//! ```
//!
//! `expired` runs the `scale.timers` shape (each sleep made at spawn) on
//! both runtimes at 10,000, 100,000 and 1,000,000 sleeps, and counts the
//! sleeps whose deadline had passed before their task's first poll: those
//! finish without setting a timer. `heap` times a `BinaryHeap` alone at
//! the same sizes: push every deadline, pop them all, as step 8's loop
//! does when a million timers are set in one turn.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bench::Plan;
use cpu_time::ThreadTime;

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

fn main() {
    let plan = Plan::full();
    let probe = std::env::args().nth(1).unwrap_or_default();
    for sleeps in SIZES {
        let delays = plan.sleep_delays(sleeps);
        match probe.as_str() {
            "expired" => {
                let ours = expired_on_ours(&delays);
                let tokio = expired_on_tokio(&delays);
                println!(
                    "{sleeps} sleeps made at spawn, deadline passed at the first \
                     poll: ours {}, tokio {}",
                    share(ours, sleeps),
                    share(tokio, sleeps)
                );
            }
            "heap" => {
                let runs: Vec<String> = (0..5)
                    .map(|_| format!("{:.0}", heap_ns_per_timer(&delays)))
                    .collect();
                println!(
                    "{sleeps} timers, BinaryHeap push + pop, CPU ns each: {}",
                    runs.join(", ")
                );
            }
            _ => {
                eprintln!("usage: timer_factors expired|heap");
                std::process::exit(2);
            }
        }
    }
}

thread_local! {
    /// How many sleeps found their deadline passed at their first poll.
    static EXPIRED: Cell<usize> = const { Cell::new(0) };
}

/// The start of a task whose sleep was made at spawn with `deadline`.
fn note_first_poll(deadline: Instant) {
    if Instant::now() >= deadline {
        EXPIRED.with(|expired| expired.set(expired.get() + 1));
    }
}

fn expired_on_ours(delays: &[Duration]) -> usize {
    let delays = delays.to_vec();
    let event_loop = Rc::new(step08::EventLoop::new().expect("an event loop"));
    event_loop
        .block_on(async move {
            let sleepers: Vec<_> = delays
                .into_iter()
                .map(|delay| {
                    let sleep = step08::sleep(delay);
                    let deadline = Instant::now() + delay;
                    step08::spawn(async move {
                        note_first_poll(deadline);
                        sleep.await;
                    })
                })
                .collect();
            for sleeper in sleepers {
                sleeper.await.expect("a sleep cannot fail");
            }
        })
        .expect("the loop's poller works");
    EXPIRED.with(|expired| expired.replace(0))
}

fn expired_on_tokio(delays: &[Duration]) -> usize {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let sleepers: Vec<_> = delays
            .iter()
            .map(|&delay| {
                let sleep = tokio::time::sleep(delay);
                let deadline = Instant::now() + delay;
                tokio::spawn(async move {
                    note_first_poll(deadline);
                    sleep.await;
                })
            })
            .collect();
        for sleeper in sleepers {
            sleeper.await.expect("a sleep cannot fail");
        }
    });
    EXPIRED.with(|expired| expired.replace(0))
}

/// Pushes one 24-byte entry per delay (deadline, sequence, slot, as step
/// 8's heap holds), pops them all, and gives the CPU time per entry.
fn heap_ns_per_timer(delays: &[Duration]) -> f64 {
    let clock = ThreadTime::now();
    let mut heap = BinaryHeap::new();
    for (sequence, delay) in (0_u64..).zip(delays) {
        let deadline = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        heap.push(Reverse((deadline, sequence, sequence)));
    }
    let mut last = 0;
    while let Some(Reverse((deadline, _, _))) = heap.pop() {
        assert!(deadline >= last, "the heap pops in deadline order");
        last = deadline;
    }
    clock.elapsed().as_secs_f64() * 1e9 / as_f64(delays.len())
}

fn share(count: usize, of: usize) -> String {
    format!("{count} ({:.1}%)", 100.0 * as_f64(count) / as_f64(of))
}

/// Counts here stay far below 2^52, where f64 is exact.
#[allow(clippy::cast_precision_loss)]
fn as_f64(count: usize) -> f64 {
    count as f64
}
