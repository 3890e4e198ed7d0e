//! What a sleep, a `yield_now` and a task allocate on step 8's loop and on
//! `fast`'s (`beyond/`), counted by a counting global allocator (`allocation-counter`, which counts the
//! current thread's allocations only). A global allocator is per binary,
//! which is why this is a test file of its own.
//!
//! Each figure is the difference between two runs that differ only in how
//! many sleeps (or yields) one task makes, divided by that difference: what
//! building the loop and spawning the task cost cancels out, and what is
//! left is the steady-state cost of one more sleep or yield.

use std::rc::Rc;
use std::time::Duration;

/// One module per runtime: the same counts on each, as the two share an API.
macro_rules! allocations {
    ($runtime:ident, $one_at_a_time:expr) => {
        mod $runtime {
            use super::*;
            use ::$runtime::{EventLoop, sleep, spawn, yield_now};

            /// Long enough that no sleep is already over when it is first polled (so
            /// each one really sets a timer), short enough for the test to be quick:
            /// the loop's wait rounds it up to 1 ms.
            const NAP: Duration = Duration::from_micros(200);

            /// The extra sleeps or yields the second run makes.
            const EXTRA: u64 = 100;

            /// Allocations made on this thread while a fresh loop runs `future`.
            pub fn allocations_of(future: impl Future<Output = ()> + 'static) -> u64 {
                allocation_counter::measure(|| {
                    let event_loop = Rc::new(EventLoop::new().expect("a new poller"));
                    event_loop.block_on(future).expect("the poller works");
                })
                .count_total
            }

            /// Allocations per extra round of `round`, in a task awaiting it `rounds`
            /// times, spawned from the main task as a benchmark's tasks are.
            fn allocations_per_round<F: Future<Output = ()> + 'static>(round: fn() -> F) -> f64 {
                let run = |rounds: u64| {
                    allocations_of(async move {
                        let task = spawn(async move {
                            for _ in 0..rounds {
                                round().await;
                            }
                        });
                        task.await.expect("the task cannot fail");
                    })
                };
                let base = run(10);
                let more = run(10 + EXTRA);
                #[allow(clippy::cast_precision_loss)] // counts far below 2^52
                let per_round = (more - base) as f64 / EXTRA as f64;
                per_round
            }

            /// A sleep's timer holds its waker in a reused place of the pending
            /// timers' slab, and the heap keeps its capacity (no sweep runs here, with
            /// one timer at a time): nothing to allocate.
            #[test]
            fn a_sleep_allocates_nothing() {
                let per_sleep = allocations_per_round(|| sleep(NAP));
                eprintln!("allocations per sleep: {per_sleep}");
                assert!(per_sleep == 0.0, "{per_sleep} allocations per sleep");
            }

            #[test]
            fn a_yield_allocates_nothing() {
                let per_yield = allocations_per_round(yield_now);
                eprintln!("allocations per yield_now: {per_yield}");
                assert!(per_yield == 0.0, "{per_yield} allocations per yield_now");
            }

            #[test]
            fn spawn_and_join_allocations_are_counted() {
                // Not a target: printed for RESULTS.md (`--nocapture`), and a check
                // that the counter counts at all, so the tests above cannot pass on a
                // counter that sees nothing.
                let run = |tasks: u64| {
                    allocations_of(async move {
                        for _ in 0..tasks {
                            spawn(async {}).await.expect("an empty task cannot fail");
                        }
                    })
                };
                let per_task = (run(10 + EXTRA) - run(10)) / EXTRA;
                eprintln!(
                    "{}: allocations per spawn and join, one task at a time: {per_task}",
                    stringify!($runtime)
                );
                assert!(per_task >= 1, "a task's future is boxed");
                let most: Option<u64> = $one_at_a_time;
                if let Some(most) = most {
                    assert!(per_task <= most, "{per_task} allocations per task");
                }
            }

            #[test]
            fn tasks_alive_together_allocations_are_counted() {
                // Not a target: printed, as the benchmarks spawn (10,000 tasks
                // alive at once, then joined, against 1,000; the handles'
                // `Vec` counts too, as in the benchmark).
                let run = |tasks: usize| {
                    allocations_of(async move {
                        let handles: Vec<_> = (0..tasks).map(|_| spawn(async {})).collect();
                        for handle in handles {
                            handle.await.expect("an empty task cannot fail");
                        }
                    })
                };
                #[allow(clippy::cast_precision_loss)] // counts far below 2^52
                let per_task = (run(10_000) - run(1_000)) as f64 / 9_000.0;
                eprintln!(
                    "{}: allocations per task, 10,000 alive together: {per_task:.2}",
                    stringify!($runtime)
                );
                assert!(per_task >= 1.0, "a task's future is boxed");
            }
        }
    };
}

// Step 8: a boxed future, an `Arc` waker and an `Rc` join state per task.
allocations!(step08, None);
// `fast`: the boxed future alone, when the task reuses a slot (and so
// its waker) of the table, as a task spawned after another ended does.
allocations!(fast, Some(1));
