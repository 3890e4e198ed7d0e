//! The commands of `cargo workshop`, a module each, with its `HELP` and its
//! `run`, which takes the words after the command's name (`cargo xtask`'s
//! commands take theirs the same way). What each prints and how it exits
//! follows the crate's error policy.

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

/// `line` broken between words into lines of at most `width` characters,
/// each continuation indented as the line was: a terminal's own wrap
/// breaks words, and its reflow on a resize moves them. A word longer than
/// `width` stays whole on a line of its own, and so does a line of the
/// trace's two columns (` | `), which would no longer line up.
pub fn between_words(line: &str, width: usize) -> Vec<String> {
    if line.chars().count() <= width || line.contains(" | ") {
        return vec![line.to_owned()];
    }
    let indent = &line[..line.len() - line.trim_start_matches(' ').len()];
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in line.trim_start().split(' ') {
        let long = current.chars().count() + 1 + word.chars().count() > width;
        if !current.is_empty() && long {
            lines.push(std::mem::take(&mut current));
        }
        current.push_str(if current.is_empty() { indent } else { " " });
        current.push_str(word);
    }
    lines.push(current);
    lines
}

/// The terminal's columns and lines, if stdout is one that says; else
/// 80×24, the size every terminal starts at.
pub fn terminal_size() -> (usize, usize) {
    #[cfg(unix)]
    if let Some(size) = rustix::termios::tcgetwinsize(std::io::stdout())
        .ok()
        .filter(|size| size.ws_col > 0 && size.ws_row > 0)
    {
        return (usize::from(size.ws_col), usize::from(size.ws_row));
    }
    (80, 24)
}

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
        self.plain.split_first().map(|(n, rest)| (*n, rest)).ok_or_else(|| {
            format!("`cargo workshop {command}` needs a step number, 1 to 8\n\n{help}")
        })
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
/// `usage`), or with a command (its help as `command_help` gives it, or the
/// usage for a command it does not know).
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
    if fs::symlink_metadata(&path).is_ok_and(|link| link.is_symlink()) {
        crate::changes::remove_file_or_link(&path)?;
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

/// A file of `step` named on the command line, relative to the step folder
/// and `/`-separated: from where the participant stands, as tab completion
/// gives it (`step03-sleep/src/lib.rs` from the root, `lib.rs` in `src/`),
/// or from the step folder, wherever they stand.
pub fn step_file(step: &Step, here: &Path, named: &str) -> String {
    let named = named.replace('\\', "/").trim_start_matches("./").to_owned();
    match lexically_normal(&here.join(&named)).strip_prefix(step.dir()) {
        Ok(inside) if !inside.as_os_str().is_empty() => crate::with_slashes(inside),
        _ => named,
    }
}

/// `path` with `.` left out and each `..` taking away the part before it,
/// without asking the file system.
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

    #[test]
    fn a_long_line_breaks_between_words_and_keeps_its_indent() {
        let line = "    snapshots::step03_default_run fails: the step printed more";
        assert_eq!(
            between_words(line, 40),
            [
                "    snapshots::step03_default_run fails:",
                "    the step printed more"
            ]
        );
        let long_word = format!("see {}", "x".repeat(50));
        assert_eq!(between_words(&long_word, 40), ["see", &"x".repeat(50)]);
        assert_eq!(between_words("short", 40), ["short"]);
        let columns = format!("{} | {}", "a ".repeat(30), "b ".repeat(30));
        let whole = between_words(&columns, 40);
        assert_eq!(whole, [columns]);
    }
}
