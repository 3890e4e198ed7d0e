//! `cargo run -p step05`: tasks, futures the loop polls until they are done.
//!
//! This file reads the arguments and reports errors; the demo itself is in
//! `apps/demo.rs`.

use std::process::ExitCode;

use step05::apps::demo;

fn main() -> ExitCode {
    if let Some(arg) = std::env::args().nth(1) {
        eprintln!("error: unexpected argument '{arg}'; usage: cargo run -p step05");
        return ExitCode::from(2);
    }
    match demo::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
