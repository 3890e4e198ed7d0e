//! `cargo run -p step03`: timers, and a loop that sleeps instead of spinning.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;
use step03::{EventLoop, naive_call_later};

const USAGE: &str = "usage: cargo run -p step03 [-- --help]";

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

    println!("== One after the other: sleep 0.5 s, then sleep 0.7 s ==");
    let took = timed(sleep_serially);
    println!("took {:.2} s: the sum of the two", took.as_secs_f64());

    println!();
    println!("== Concurrently: both sleeps scheduled at once ==");
    let took = timed(sleep_concurrently);
    println!(
        "took {:.2} s: only the longer of the two",
        took.as_secs_f64()
    );

    println!();
    println!("== Equal deadlines fire in the order they were scheduled ==");
    timed(equal_deadlines);

    println!();
    let wait = secs(0.5);
    println!("== The same {:.1} s wait, two ways ==", wait.as_secs_f64());
    compare_cpu_use(wait);

    ExitCode::SUCCESS
}

// ANCHOR: serial
/// The second sleep is scheduled by the first one's callback, so it only
/// starts once the first has finished.
fn sleep_serially(lp: &EventLoop) {
    lp.call_later(secs(0.5), |lp| {
        println!("slept 0.5 s");
        lp.call_later(secs(0.7), |_| println!("slept 0.7 s"));
    });
}
// ANCHOR_END: serial

// ANCHOR: concurrent
/// Both timers are on the heap at once; the loop sleeps until the earlier
/// deadline, runs it, then sleeps until the later one.
fn sleep_concurrently(lp: &EventLoop) {
    lp.call_later(secs(0.7), |_| println!("slept 0.7 s"));
    lp.call_later(secs(0.5), |_| println!("slept 0.5 s"));
}
// ANCHOR_END: concurrent

// ANCHOR: equal_deadlines
/// Three timers with the very same deadline: the sequence number decides.
fn equal_deadlines(lp: &EventLoop) {
    let deadline = Instant::now() + secs(0.1);
    for name in ["first", "second", "third"] {
        lp.call_at(deadline, move |_| println!("{name} timer (0.1 s)"));
    }
}
// ANCHOR_END: equal_deadlines

// ANCHOR: cpu_use
/// Waits for `delay` with the naive clock-polling sleep, then with
/// `call_later`, and prints the CPU time each one used.
fn compare_cpu_use(delay: Duration) {
    let cpu = ThreadTime::now();
    let wall = timed(|lp| naive_call_later(lp, delay, |_| {}));
    let cpu = cpu.elapsed();
    print_use("polling the clock", wall, cpu);

    let cpu = ThreadTime::now();
    let wall = timed(|lp| lp.call_later(delay, |_| {}));
    let cpu = cpu.elapsed();
    print_use("sleeping until the deadline", wall, cpu);
}
// ANCHOR_END: cpu_use

fn print_use(how: &str, wall: Duration, cpu: Duration) {
    println!(
        "{how:<28} {:.2} s wall, {:.2} s CPU",
        wall.as_secs_f64(),
        cpu.as_secs_f64()
    );
}

/// Runs a fresh loop with what `schedule` puts on it; returns the time taken.
fn timed(schedule: impl FnOnce(&EventLoop)) -> Duration {
    let start = Instant::now();
    let lp = EventLoop::new();
    schedule(&lp);
    lp.run();
    start.elapsed()
}

fn secs(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}
