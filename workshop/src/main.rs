//! `cargo workshop`: the usage and the dispatch. Each command is a module
//! of `workshop::commands`; what a participant sees when one fails is the
//! crate's error policy (`workshop`'s documentation).

use std::env;
use std::process::ExitCode;

use workshop::commands::{
    check, diff, freeze, pack, reset, start, status, times, verify, watch,
};

const USAGE: &str = "\
usage: cargo workshop <command>

  start N [--force]  blank the functions of step N you will write
  check N            run step N's tests: what to write next, or that it passes
  watch [N]          check step N again on each save, on one screen (the way
                     to work through a track); N: the step in progress
  reset N [FILE...] [--force]
                     put step N (or these files of it) back as the authors wrote it
  diff N [FILE...] [--names]
                     how step N differs from the authors' version
  status             which steps are started, which are done
  times [--csv]      when you started each step, minutes to each function
  help [COMMAND]     this, or what COMMAND does

Run it anywhere inside your copy of the workshop (a clone or a download).

For the teacher and the workshop's authors (CONTRIBUTING.md), not for a
participant's copy:
  pack DIR           the workshop to build offline, in DIR and DIR.zip
  verify [N...]      prove the tracks (for CI): start, check each function, reset
  freeze [N...]      store the steps as the authors' version, in their repository";

/// What `help COMMAND` and `COMMAND --help` print.
fn command_help(command: &str) -> Option<&'static str> {
    Some(match command {
        "start" => start::HELP,
        "check" => check::HELP,
        "reset" => reset::HELP,
        "diff" => diff::HELP,
        "freeze" => freeze::HELP,
        "status" => status::HELP,
        "times" => times::HELP,
        "verify" => verify::HELP,
        "pack" => pack::HELP,
        "watch" => watch::HELP,
        _ => return None,
    })
}

fn main() -> ExitCode {
    // `cargo workshop status | head -n 1` ends quietly, as the steps'
    // demos do. Every command prints only after its work is done, so
    // nothing is left half written.
    plumbing::console::exit_quietly_when_stdout_closes();
    let args: Vec<String> = env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    if let Some(help) = help_asked(&words) {
        println!("{help}");
        return Ok(ExitCode::SUCCESS);
    }
    let here =
        env::current_dir().map_err(|err| format!("no current folder: {err}"))?;
    let Some((command, rest)) = words.split_first() else {
        return Err(format!("which command?\n\n{USAGE}"));
    };
    let run = match *command {
        "start" => start::run,
        "check" => check::run,
        "reset" => reset::run,
        "diff" => diff::run,
        "freeze" => freeze::run,
        "status" => status::run,
        "times" => times::run,
        "verify" => verify::run,
        "pack" => pack::run,
        "watch" => watch::run,
        _ => {
            return Err(format!("unknown command `{}`\n\n{USAGE}", words.join(" ")));
        }
    };
    run(&here, rest)
}

/// The help asked for, if any: `--help`, `-h` or `help` alone, or with a
/// command (`help start`, `start --help`).
fn help_asked(words: &[&str]) -> Option<&'static str> {
    let is_help = |word: &&str| matches!(*word, "--help" | "-h" | "help");
    if !words.iter().any(is_help) {
        return None;
    }
    let command = words
        .iter()
        .find(|word| !is_help(word) && !word.starts_with('-'));
    Some(command.and_then(|c| command_help(c)).unwrap_or(USAGE))
}
