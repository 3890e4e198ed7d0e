//! `cargo run -p step02`: callbacks that reschedule themselves take turns.

use std::process::ExitCode;

use step02::EventLoop;

const USAGE: &str = "usage: cargo run -p step02 [-- --help]";

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

    println!("== Callbacks run in the order they were scheduled ==");
    let lp = EventLoop::new();
    for step in ["boil the water", "brew the tea", "pour the tea"] {
        lp.call_soon(move |_| println!("{step}"));
    }
    lp.run();

    println!();
    println!("== countup and countdown as callbacks that reschedule themselves ==");
    // ANCHOR: interleaved
    let lp = EventLoop::new();
    lp.call_soon(|lp| countup(lp, 0, 5));
    lp.call_soon(|lp| countdown(lp, 5));
    lp.run();
    // ANCHOR_END: interleaved
    println!("(each callback did one step and queued the next, so they took turns)");

    ExitCode::SUCCESS
}

// ANCHOR: countup_countdown
/// Prints `Up i`, then queues the rest of the count instead of looping.
fn countup(lp: &EventLoop, i: u32, n: u32) {
    if i < n {
        println!("Up {i}");
        lp.call_soon(move |lp| countup(lp, i + 1, n));
    }
}

/// Prints `Down n`, then queues the rest of the count.
fn countdown(lp: &EventLoop, n: u32) {
    if n > 0 {
        println!("Down {n}");
        lp.call_soon(move |lp| countdown(lp, n - 1));
    }
}
// ANCHOR_END: countup_countdown
