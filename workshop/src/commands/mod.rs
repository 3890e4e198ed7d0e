//! The commands of `cargo workshop`, a module each. Each has its `HELP`
//! (what `cargo workshop help COMMAND` prints) and its `run`, which takes
//! the words after the command's name; `main.rs` only dispatches. The
//! authors' and the teacher's commands (`cargo xtask`, in `xtask/`) take
//! their words the same way.
//!
//! What each command prints and how it exits follows the crate's error
//! policy (the crate's documentation, `lib.rs`).

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::step::Step;

pub mod check;
pub mod diff;
pub mod reset;
pub mod start;
pub mod status;
pub mod times;
pub mod watch;

/// The words after a command's name: its plain arguments, and which of
/// the flags it knows were given.
#[derive(Debug)]
pub struct Words<'a> {
    pub plain: Vec<&'a str>,
    given: Vec<&'a str>,
}

impl<'a> Words<'a> {
    /// Splits `args` into plain words and `flags`; any other word that
    /// starts with `-` is refused, with the command's `help`.
    pub fn parse(
        args: &[&'a str],
        flags: &[&str],
        help: &str,
    ) -> Result<Self, String> {
        if let Some(unknown) = args
            .iter()
            .find(|word| word.starts_with('-') && !flags.contains(word))
        {
            return Err(format!("`{unknown}` is not an option here\n\n{help}"));
        }
        let (given, plain) = args.iter().partition(|word| flags.contains(word));
        Ok(Words { plain, given })
    }

    pub fn has(&self, flag: &str) -> bool {
        self.given.contains(&flag)
    }

    /// The one step number a command takes first, and the words after it.
    pub fn step_and_rest(
        &self,
        command: &str,
        help: &str,
    ) -> Result<(&'a str, &[&'a str]), String> {
        match self.plain.split_first() {
            Some((n, rest)) => Ok((n, rest)),
            None => Err(format!(
                "`cargo workshop {command}` needs a step number, 1 to 8\n\n{help}"
            )),
        }
    }

    /// The one step number a command takes, and nothing else.
    pub fn only_step(&self, command: &str, help: &str) -> Result<&'a str, String> {
        match self.step_and_rest(command, help)? {
            (n, []) => Ok(n),
            (_, more) => Err(format!(
                "`cargo workshop {command}` takes one step number, not `{}` too\n\n{help}",
                more.join(" ")
            )),
        }
    }

    /// Refuses any plain word: for a command that takes none.
    pub fn none(&self, command: &str, help: &str) -> Result<(), String> {
        match self.plain.as_slice() {
            [] => Ok(()),
            more => Err(format!(
                "`cargo workshop {command}` takes no `{}`\n\n{help}",
                more.join(" ")
            )),
        }
    }
}

/// The help asked for, if any: `--help`, `-h` or `help` alone (the
/// `usage`), or with a command (`help start`, `start --help`: its own
/// help, as `command_help` gives it, or the usage for a command it does
/// not know).
pub fn help_asked(
    words: &[&str],
    command_help: fn(&str) -> Option<&'static str>,
    usage: &'static str,
) -> Option<&'static str> {
    let is_help = |word: &&str| matches!(*word, "--help" | "-h" | "help");
    if !words.iter().any(is_help) {
        return None;
    }
    let command = words
        .iter()
        .find(|word| !is_help(word) && !word.starts_with('-'));
    Some(command.and_then(|c| command_help(c)).unwrap_or(usage))
}

/// Writes `text` to `path`, making its folder if need be.
pub fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .map_err(|err| format!("{}: {err}", parent.display()))?;
    }
    fs::write(path, text).map_err(|err| format!("{}: {err}", path.display()))
}

/// Writes `text` to `file` of the step as a file of its own: a symbolic
/// link there is removed first, never written through, and nothing is
/// written outside the step folder.
pub fn write_in_step(step: &Step, file: &str, text: &str) -> Result<(), String> {
    let path = step.dir().join(file);
    crate::changes::inside_the_step(step, &path)?;
    if fs::symlink_metadata(&path).is_ok_and(|link| link.file_type().is_symlink()) {
        fs::remove_file(&path)
            .or_else(|_| fs::remove_dir(&path))
            .map_err(|err| format!("{}: {err}", path.display()))?;
    }
    write(&path, text)
}

/// `text` indented by four spaces, to stand apart in a message.
pub fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A file of `step` named on the command line, as the step's files are
/// named: relative to the step folder, `/`-separated. Tab completion gives
/// it from where the participant stands (`step03-sleep/src/lib.rs` from the
/// root, `src/lib.rs` in the step folder, `lib.rs` in `src/`); a path from
/// the step folder works anywhere, as it always has.
pub fn step_file(step: &Step, here: &Path, named: &str) -> String {
    let named = normal_file(named);
    let full = lexically_normal(&here.join(&named));
    match full.strip_prefix(step.dir()) {
        Ok(inside) if !inside.as_os_str().is_empty() => crate::with_slashes(inside),
        _ => named,
    }
}

/// A file named on the command line as the step's files are named:
/// relative to the step folder, `/`-separated.
pub fn normal_file(file: &str) -> String {
    file.replace('\\', "/").trim_start_matches("./").to_owned()
}

/// `path` with `.` left out and each `..` taking away the part before it,
/// without asking the file system: the same folder, comparable with
/// another by `starts_with`.
pub fn lexically_normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !normal.pop() {
                    normal.push(part);
                }
            }
            _ => normal.push(part),
        }
    }
    normal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_paths() {
        assert_eq!(
            lexically_normal(Path::new("/a/./b/../c")),
            Path::new("/a/c")
        );
        assert!(
            Path::new("/w/x").starts_with(lexically_normal(Path::new("/w/x/y/..")))
        );
    }
}
