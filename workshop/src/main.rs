//! `cargo workshop`: the usage and the dispatch. Each command is a module
//! of `workshop::commands`; what a participant sees when one fails is the
//! crate's error policy (`workshop`'s documentation).

use std::env;
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

/// The commands that were `cargo workshop`'s before they moved to `cargo
/// xtask`, for a teacher or an author used to the old name.
const MOVED_TO_XTASK: [&str; 3] = ["freeze", "verify", "pack"];

/// What `help COMMAND` and `COMMAND --help` print.
fn command_help(command: &str) -> Option<&'static str> {
    if MOVED_TO_XTASK.contains(&command) {
        return Some(
            "The authors' and the teacher's commands, freeze, verify and \
             pack, are `cargo xtask`'s now: `cargo xtask help` lists them.",
        );
    }
    Some(match command {
        "start" => start::HELP,
        "check" => check::HELP,
        "reset" => reset::HELP,
        "diff" => diff::HELP,
        "status" => status::HELP,
        "times" => times::HELP,
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
    if let Some(help) = help_asked(&words, command_help, USAGE) {
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
        "status" => status::run,
        "times" => times::run,
        "watch" => watch::run,
        moved if MOVED_TO_XTASK.contains(&moved) => {
            return Err(format!(
                "`cargo workshop {moved}` is `cargo xtask {moved}` now: the \
                 authors' and the teacher's commands have a package of their \
                 own, xtask/, which a participant never builds"
            ));
        }
        _ => {
            return Err(format!("unknown command `{}`\n\n{USAGE}", words.join(" ")));
        }
    };
    run(&here, rest)
}
