//! `cargo run -p step06`: tasks that spawn tasks, and wait for them.
//!
//! This file reads the arguments and reports errors; the demo itself is in
//! `apps/demo.rs`.

use std::process::ExitCode;

use step06::apps::demo;

fn main() -> ExitCode {
    if let Some(arg) = std::env::args().nth(1) {
        eprintln!("error: unexpected argument '{arg}'; usage: cargo run -p step06");
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
