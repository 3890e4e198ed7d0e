//! `cargo xtask`: the workshop's own chores, for its authors and for the
//! teacher, kept apart from the participant's tool (`cargo workshop`, the
//! `workshop` package) so that no participant compiles them before their
//! first verdict. The `cargo xtask` convention: a package of the workspace
//! run through an alias in `.cargo/config.toml`.
//!
//! - `freeze` stores the steps as the authors' version (`tests/authors/`);
//! - `verify` proves every build-it track, for CI (`.ci/run`);
//! - `pack DIR` writes the teacher's offline folder and its ZIP;
//! - `pilot FILE...` turns the participants' `cargo workshop times --csv`
//!   files into the rows of the teacher's pilot table.
//!
//! It uses the `workshop` library for what it shares with the tool (steps,
//! tracks, the stored copies, `check` itself), and follows its error
//! policy (the `workshop` crate's documentation): exit 0 when the command
//! did what it says, 1 when `verify` found a track that does not hold, 2
//! with a whole-sentence `error: …` when it did nothing or stopped.

use std::env;
use std::path::Path;
use std::process::ExitCode;

use workshop::commands::help_asked;

mod freeze;
mod pack;
mod pilot;
mod verify;

const USAGE: &str = "\
usage: cargo xtask <command>

For the workshop's authors (CONTRIBUTING.md) and its teacher (the book's
teacher's page), not for a participant's copy:
  freeze [N...]      store the steps as the authors' version, in their repository
  verify [N...]      prove the tracks (for CI): start, check each function, reset
  pack DIR           the workshop to build offline, in DIR and DIR.zip
  pilot FILE...      the pilot table's rows, from the participants' times --csv
  help [COMMAND]     this, or what COMMAND does

A participant's commands are `cargo workshop`'s (`cargo workshop help`).";

/// What `help COMMAND` and `COMMAND --help` print.
fn command_help(command: &str) -> Option<&'static str> {
    Some(match command {
        "freeze" => freeze::HELP,
        "verify" => verify::HELP,
        "pack" => pack::HELP,
        "pilot" => pilot::HELP,
        _ => return None,
    })
}

fn main() -> ExitCode {
    // `cargo xtask verify | head` ends quietly, as `cargo workshop` does.
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
    if let Some(help) = help_asked(&words, command_help, USAGE) {
        println!("{help}");
        return Ok(ExitCode::SUCCESS);
    }
    let here =
        env::current_dir().map_err(|err| format!("no current folder: {err}"))?;
    let Some((command, rest)) = words.split_first() else {
        return Err(format!("which command?\n\n{USAGE}"));
    };
    let run: fn(&Path, &[&str]) -> Result<ExitCode, String> = match *command {
        "freeze" => freeze::run,
        "verify" => verify::run,
        "pack" => pack::run,
        "pilot" => pilot::run,
        _ => {
            return Err(format!("unknown command `{}`\n\n{USAGE}", words.join(" ")));
        }
    };
    run(&here, rest)
}
