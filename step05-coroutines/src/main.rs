//! `cargo run -p step05`: tasks, futures the loop polls until they are done.
//!
//! This file reads the arguments and reports errors; the demo itself is in
//! `apps/demo.rs`.

use std::process::ExitCode;

use step05::apps::demo;

const USAGE: &str = "usage: cargo run -p step05 [-- --help]";

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
    match demo::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
