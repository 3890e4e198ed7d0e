//! `cargo run -p step04`: the demo, `apps::demo::run`.
//! `cargo run -p step04 -- serve [ADDR]`: the echo server alone,
//! `apps::demo::serve`. `cargo run -p step04 -- client [ADDR]`: a client to
//! type to it, `apps::terminal::talk`. `cargo run -p step04 -- serve-slow
//! [ADDR]`: seed 002's slow server, `apps::demo::serve_slow`, for the seed's
//! own Python clients. This file reads the arguments,
//! reports usage errors and failures, and sets the exit code.

use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;

use plumbing::warn;
use step04::apps::{demo, terminal};

const USAGE: &str = "usage: cargo run -p step04 \
     [-- serve [ADDR] | client [ADDR] | serve-slow [ADDR] | --help]";
const DEFAULT_ADDR: &str = "127.0.0.1:3000";
/// Where seed 002's Python clients look for the slow server.
const SLOW_ADDR: &str = "127.0.0.1:8080";

/// `serve`, `client` or `serve-slow`: what runs with the addresses `ADDR`
/// names.
type Mode = fn(&[SocketAddr]) -> Result<(), String>;

fn main() -> ExitCode {
    plumbing::console::exit_quietly_when_stdout_closes();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mode, addr): (Mode, &str) = match args[..] {
        [] => return report(demo::run().map_err(|err| err.to_string())),
        ["--help" | "-h"] => {
            println!("{USAGE}\n\n{}", modes());
            return ExitCode::SUCCESS;
        }
        [mode @ ("serve" | "client" | "serve-slow"), "--help" | "-h"] => {
            println!("{}", mode_usage(mode));
            return ExitCode::SUCCESS;
        }
        ["serve"] => (demo::serve, DEFAULT_ADDR),
        ["serve", addr] => (demo::serve, addr),
        ["client"] => (terminal::talk, DEFAULT_ADDR),
        ["client", addr] => (terminal::talk, addr),
        ["serve-slow"] => (demo::serve_slow, SLOW_ADDR),
        ["serve-slow", addr] => (demo::serve_slow, addr),
        ["serve" | "client" | "serve-slow", _, extra, ..] | [extra, ..] => {
            return usage_error(&format!("unexpected argument '{extra}'"));
        }
    };
    match resolve(addr) {
        Ok(addrs) => report(mode(&addrs)),
        Err(problem) => usage_error(&problem),
    }
}

/// The addresses `addr` names: an IP address or a host name, with a port.
/// A name may stand for several (`localhost` for `::1` and `127.0.0.1`).
fn resolve(addr: &str) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> = match addr.to_socket_addrs() {
        Ok(addrs) => addrs.collect(),
        Err(err) => return Err(not_an_address(addr, &err.to_string())),
    };
    if addrs.is_empty() {
        return Err(not_an_address(addr, "the name has no address"));
    }
    Ok(addrs)
}

fn not_an_address(addr: &str, why: &str) -> String {
    format!(
        "no address to use in '{addr}' ({why}); give one like {DEFAULT_ADDR} \
         or localhost:3000"
    )
}

fn report(outcome: Result<(), String>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            warn!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn usage_error(problem: &str) -> ExitCode {
    warn!("error: {problem}; {USAGE}");
    ExitCode::from(2)
}

/// What `--help` adds below the usage line: what each mode does, and the
/// address it takes when given none.
fn modes() -> String {
    let mut lines = vec!["  (nothing)          the demo".to_owned()];
    for mode in ["serve", "client", "serve-slow"] {
        lines.push(format!(
            "  {:<18} {}",
            format!("{mode} [ADDR]"),
            what_it_does(mode)
        ));
    }
    lines.push(ADDR_HELP.to_owned());
    lines.join("\n")
}

/// What `MODE --help` prints: that mode's usage alone.
fn mode_usage(mode: &str) -> String {
    let package = env!("CARGO_PKG_NAME");
    format!(
        "usage: cargo run -p {package} -- {mode} [ADDR]\n\n  {}\n{ADDR_HELP}",
        what_it_does(mode)
    )
}

fn what_it_does(mode: &str) -> String {
    match mode {
        "serve" => format!("the echo server alone, on ADDR ({DEFAULT_ADDR})"),
        "client" => {
            format!("type lines to the echo server at ADDR ({DEFAULT_ADDR})")
        }
        _ => format!("seed 002's slow server, on ADDR ({SLOW_ADDR})"),
    }
}

const ADDR_HELP: &str =
    "ADDR is an IP address or a host name, with a port: localhost:3001";
