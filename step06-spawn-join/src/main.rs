//! `cargo run -p step06`: tasks that spawn tasks, and wait for them.
//!
//! This file reads the arguments and reports errors; the demo itself is in
//! `apps/demo.rs`.

use std::panic;
use std::process::{self, ExitCode};

use step06::apps::demo;

const USAGE: &str = "usage: cargo run -p step06 [-- --help]";

fn main() -> ExitCode {
    exit_quietly_when_stdout_closes();
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
    match demo::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------
// Plumbing: not the lesson. A demo whose stdout closes early ends quietly.
// A reader may stop here.
// ---------------------------------------------------------------------------

/// The status a shell reports for a program that a closed pipe ended
/// (128 + SIGPIPE), as `head` ends `cat`.
const STDOUT_CLOSED: i32 = 141;

/// Ends the process quietly, as `cat` and `ls` end, once printing to stdout
/// fails: `cargo run -p step03 | head -n 2` closes the pipe after two lines.
///
/// Rust ignores the SIGPIPE that ends a C program there, so `println!`
/// panics instead ("failed printing to stdout"); the unwinding then runs
/// destructors that may print too, and a panic inside a panic aborts.
/// Exiting from the panic hook, before anything unwinds, keeps the demo's
/// `println!`s as they are. Every other panic goes to the default hook.
fn exit_quietly_when_stdout_closes() {
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let message = info.payload().downcast_ref::<String>();
        if message.is_some_and(|text| text.starts_with("failed printing to stdout"))
        {
            process::exit(STDOUT_CLOSED);
        }
        default_hook(info);
    }));
}
