//! `cargo run -p step07`: the demo, `apps::demo`.
//! `cargo run -p step07 -- serve [ADDR]`: the echo server alone.
//!
//! This file reads the arguments and reports errors; the demo and the
//! serve mode are in `apps/demo.rs`.

use std::process::ExitCode;

use step07::apps::demo;

const USAGE: &str = "usage: cargo run -p step07 [-- serve [ADDR]]";
const DEFAULT_ADDR: &str = "127.0.0.1:3000";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let serve_addr = match args[..] {
        [] => None,
        ["serve"] => Some(DEFAULT_ADDR),
        ["serve", addr] => Some(addr),
        ["serve", _, extra, ..] | [extra, ..] => {
            return usage_error(&format!("unexpected argument '{extra}'"));
        }
    };
    let outcome = match serve_addr {
        None => demo::run().map_err(|err| err.to_string()),
        Some(addr) => {
            let Ok(addr) = addr.parse() else {
                let problem =
                    format!("'{addr}' is not an address like {DEFAULT_ADDR}");
                return usage_error(&problem);
            };
            demo::serve(addr)
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn usage_error(problem: &str) -> ExitCode {
    eprintln!("error: {problem}; {USAGE}");
    ExitCode::from(2)
}
