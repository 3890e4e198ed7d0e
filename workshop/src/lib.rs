//! `cargo workshop`: the participant's tool for the build-it-yourself
//! tracks. `start N` blanks the functions step N's authors marked with
//! `// BUILD` (`track`); `check N` runs the step's tests in bounded time and
//! memory (`runner`) and names the function to write or fix next; `diff N`,
//! `status` and `reset N` compare the step with the authors' version
//! (`authors`, `changes`); `times` keeps how long each function took. The
//! authors' and the teacher's commands are `cargo xtask`'s (`xtask/`), which
//! uses this crate as a library.
//!
//! # What a participant sees when something fails
//!
//! - **Exit 0**: the command did what it says (`check`: the step passes).
//! - **Exit 1**: `check` ran the tests and they fail: the verdict names the
//!   function to write or fix, the test that shows it and what it expected.
//!   This is the participant's code speaking, never the tool's trouble.
//! - **Exit 2**, `error: …` on stderr: the command did nothing, or stopped,
//!   and says why and what to do: an unknown word or a missing step number
//!   (with the usage); a refusal that keeps work safe (naming the functions
//!   and `--force`); the workshop not where it looks (naming the file and
//!   how to put it back); or the tool's own machinery failing (with the
//!   path, "not your code", and what to do; no function is blamed).
//! - A closed stdout (`cargo workshop status | head -1`) ends the command
//!   quietly (141, as a shell reports SIGPIPE), not with a panic.
//!
//! Errors are `Result<_, String>`, each a whole sentence for the
//! participant. Not anyhow's chain of contexts, which reads as a backtrace
//! to someone learning the language, nor clap: the commands take a step
//! number and a flag or two (`commands::Words`), and each crate would
//! lengthen the tool's first build, which every participant waits through.

pub mod authors;
pub mod changes;
pub mod commands;
pub mod pinned_trace;
pub mod runner;
pub mod sources_copy;
pub mod step;
pub mod test_messages;
pub mod track;

use std::fs;
use std::path::Path;

/// Besides `--bin stepNN`, how the tests build a step's program: the whole
/// workspace, with an example so that dev-dependencies count. Cargo gives a
/// dependency the features every package of the build asks for; built alone
/// (`-p step04`), a step's rustix would get fewer than under `cargo test
/// --workspace` and be compiled again in the middle of the tests.
pub const PROGRAM_BUILD_ARGS: [&str; 3] =
    ["--workspace", "--example", "trace_scenes"];

/// Besides `--example EXAMPLE`, how the tests build `package`'s example: as
/// `PROGRAM_BUILD_ARGS`, but without the other steps, whose examples of the
/// same name would be built to the same file.
pub fn example_build_args(package: &str) -> Vec<String> {
    let mut args = vec!["--workspace".to_owned()];
    for other in (1..=8).map(|n| format!("step{n:02}")) {
        if other != package {
            args.extend(["--exclude".to_owned(), other]);
        }
    }
    args
}

/// Set by `cargo workshop check` in each test's environment (and by
/// `.ci/wine`): the folder where the programs the tests run wait, built
/// before the tests started, so that no test calls Cargo inside its deadline.
pub const PREBUILT_PROGRAMS: &str = "WORKSHOP_PREBUILT_STEPS";

/// Set by `cargo workshop check` in each test's environment: how many
/// seconds a test may wait for what never comes. Alone, the tests wait
/// `HANG_LIMIT`, made for a busy machine; a participant waiting on a verdict
/// should not wait that long for each hang.
pub const PATIENCE_VAR: &str = "WORKSHOP_PATIENCE_SECS";

/// Every file below `dir`, relative to it with `/` between its parts,
/// sorted: the same list on every platform. A symbolic link is a file of
/// its own, never followed; a folder that cannot be read is passed over.
pub fn files_below(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(dir) {
                files.push(with_slashes(relative));
            }
        }
    }
    files.sort();
    files
}

/// A relative path with `/` between its parts, whatever the platform.
pub fn with_slashes(relative: &Path) -> String {
    let path = relative.to_string_lossy();
    path.replace(std::path::MAIN_SEPARATOR, "/")
}

/// The workshop this crate is part of, for its own tests.
#[cfg(test)]
pub(crate) fn workspace_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workshop package sits one folder below the root")
        .to_path_buf()
}
