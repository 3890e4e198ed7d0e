//! `cargo run -p step01`: a queue of plain functions, run in order.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use step01::{CAPACITY, EventLoop};

const USAGE: &str = "usage: cargo run -p step01 [-- --help]";

fn main() -> ExitCode {
    plumbing::console::exit_quietly_when_stdout_closes();
    match std::env::args().nth(1).as_deref() {
        None => {}
        Some("--help" | "-h") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(arg) => {
            eprintln!("error: unexpected argument '{arg}'; {USAGE}");
            return ExitCode::from(2);
        }
    }

    println!("== Callbacks run in the order they were queued ==");
    let mut lp = EventLoop::new();
    for callback in [boil_water, brew_tea, pour_tea] {
        lp.push(callback)
            .expect("three callbacks fit in an empty queue");
    }
    lp.run();

    println!();
    println!("== countup and countdown written as ordinary loops ==");
    // ANCHOR: plain_loops
    let mut lp = EventLoop::new();
    lp.push(|| countup(5)).expect("the queue is empty");
    lp.push(|| countdown(5)).expect("the queue has room");
    lp.run();
    // ANCHOR_END: plain_loops
    println!("(each loop ran to its end before the other could start)");

    println!();
    println!(
        "== The queue has room for {CAPACITY} callbacks; we queue {} ==",
        CAPACITY + 2
    );
    queue_more_than_fits(CAPACITY + 2);

    ExitCode::SUCCESS
}

fn boil_water() {
    println!("boil the water");
}

fn brew_tea() {
    println!("brew the tea");
}

fn pour_tea() {
    println!("pour the tea");
}

// ANCHOR: countup_countdown
/// Prints `Up 0` to `Up n-1`. Once started, nothing else runs until it returns.
fn countup(n: u32) {
    for i in 0..n {
        println!("Up {i}");
    }
}

/// Prints `Down n` to `Down 1`.
fn countdown(n: u32) {
    for i in (1..=n).rev() {
        println!("Down {i}");
    }
}
// ANCHOR_END: countup_countdown

// ANCHOR: full_queue
/// Queues `wanted` callbacks. When the queue is full, `push` says so, and we
/// make room by running what is already queued instead of dropping the
/// callback.
fn queue_more_than_fits(wanted: usize) {
    let mut lp = EventLoop::new();
    let mut queued = 0;
    while queued < wanted {
        match lp.push(numbered_callback) {
            Ok(()) => queued += 1,
            Err(full) => {
                println!(
                    "callback {}: {full}; running the queue to make room",
                    queued + 1
                );
                lp.run();
            }
        }
    }
    lp.run();
}
// ANCHOR_END: full_queue

/// A `fn()` cannot carry state, so the count it prints has to live in a static.
/// Step 2's closures remove that limitation.
fn numbered_callback() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, Ordering::Relaxed) + 1;
    println!("callback {n} ran");
}
