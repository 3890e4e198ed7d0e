//! `cargo workshop`: the usage and the dispatch. Each command is a module
//! of `workshop::commands`; failures follow the crate's error policy.

use std::env;
use std::path::Path;
use std::process::ExitCode;

use workshop::commands::{
    check, diff, help_asked, reset, start, status, times, watch,
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

Run it anywhere inside your copy of the workshop (a clone or a download).";

type Run = fn(&Path, &[&str]) -> Result<ExitCode, String>;

/// Each command: its name, its help and its `run`.
const COMMANDS: [(&str, &str, Run); 7] = [
    ("start", start::HELP, start::run),
    ("check", check::HELP, check::run),
    ("reset", reset::HELP, reset::run),
    ("diff", diff::HELP, diff::run),
    ("status", status::HELP, status::run),
    ("times", times::HELP, times::run),
    ("watch", watch::HELP, watch::run),
];

/// The commands that moved to `cargo xtask`, for a teacher or an author
/// used to the old name.
const MOVED_TO_XTASK: [&str; 3] = ["freeze", "verify", "pack"];

/// What `help COMMAND` and `COMMAND --help` print.
fn command_help(command: &str) -> Option<&'static str> {
    if MOVED_TO_XTASK.contains(&command) {
        return Some(
            "The authors' and the teacher's commands, freeze, verify and \
             pack, are `cargo xtask`'s now: `cargo xtask help` lists them.",
        );
    }
    let found = COMMANDS.iter().find(|(name, _, _)| *name == command);
    found.map(|(_, help, _)| *help)
}

fn main() -> ExitCode {
    // `cargo workshop status | head -n 1` ends quietly, as the steps'
    // demos do; every command prints only after its work is done.
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
    if let Some((_, _, run)) = COMMANDS.iter().find(|(name, _, _)| name == command) {
        return run(&here, rest);
    }
    if MOVED_TO_XTASK.contains(command) {
        return Err(format!(
            "`cargo workshop {command}` is `cargo xtask {command}` now: the \
             authors' and the teacher's commands have a package of their \
             own, xtask/, which a participant never builds"
        ));
    }
    Err(format!("unknown command `{}`\n\n{USAGE}", words.join(" ")))
}
