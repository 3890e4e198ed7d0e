//! `cargo workshop`: the participant's tool for the build-it-yourself
//! tracks. `start N` blanks the functions step N's authors marked with
//! `// BUILD` (`track`) and, at a terminal, leaves what the step's first
//! check needs building in the background (`commands::check::build_ahead`);
//! `check N` runs the step's tests, each in bounded time and memory
//! (`runner`), and names the one function to write or fix next; `diff N`
//! and `status` say where the participant stands against the authors'
//! version of each step (`authors`, stored in `tests/authors/`), `reset N`
//! puts it back, and `times` keeps how long each function took, for the
//! teacher's pilot. That is all a participant builds: the authors' and the
//! teacher's commands (`freeze`, `verify`, `pack`, `pilot`) are `cargo
//! xtask`'s, in `xtask/`, which uses this crate as a library.
//!
//! Where things are: `main.rs` holds the usage and the dispatch; each
//! command is a module of `commands`, with its help and its `run`; `step`
//! and `changes` say where a step stands; `runner` runs tests (Cargo,
//! scheduling, verdicts from output, memory, processes, and its clocks in
//! `runner::limits`); `sources_copy` makes the copy the probe of `check`
//! builds in; `pinned_trace` is the form the tests pin a demo's trace in,
//! which `check` brings a participant's trace to.
//!
//! # What a participant sees when something fails
//!
//! One policy, for every command:
//!
//! - **Exit 0**: the command did what it says (`check`: the step passes).
//! - **Exit 1**: `check` ran the step's tests and they fail: the verdict on
//!   stdout names the function to write or fix, the test that shows it and
//!   what it expected (and, for a written function, the first turn where
//!   the step's traced demo differs from the authors'). This is the
//!   participant's code speaking, never the tool's trouble.
//! - **Exit 2**, `error: …` on stderr: the command did nothing, or stopped,
//!   and says why and what to do, in one message a participant can act on:
//!   - a word it does not know, or a missing step number: the command's
//!     usage follows;
//!   - a refusal that keeps work safe (`start` or `reset` over written
//!     functions, `cargo xtask freeze` of a started step): it names the
//!     functions and the command that goes on anyway (`--force`);
//!   - the workshop is not where it looks (no workspace, a marker deleted,
//!     a stored copy missing): it names the file and how to put it back;
//!   - the tool's own machinery failed (a copy, Cargo, a full disk, a
//!     read-only folder): it says so, with the path, "not your code", and
//!     what to do; no function is blamed.
//! - A closed stdout (`cargo workshop status | head -1`) ends the command
//!   quietly (141, as a shell reports SIGPIPE), not with a panic.
//!
//! Errors are `Result<_, String>`, each `String` a whole sentence written
//! for the participant: where it happened, what the system said, and what
//! to do. Not anyhow's chain of contexts ("Caused by: …"), which reads as a
//! backtrace to someone learning the language, and not clap either: the
//! commands take a step number and one or two flags (`commands::Words`),
//! and each crate would add to the first build of the tool, which every
//! participant waits through before their first verdict.

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

/// Besides `--bin stepNN`, how the tests build a step's program.
///
/// Cargo gives each dependency the features that every package of the
/// build asks for. Built alone (`-p step04`), a step's rustix would get
/// fewer than under `cargo test --workspace` (where the tests and the
/// benchmarks' dev-dependencies ask for more), and it and the step's
/// library would be compiled a second time, in the middle of the tests.
/// Asked for the whole workspace, with an example so that dev-dependencies
/// count, the build reuses what `cargo test --workspace` compiled.
/// (`cargo workshop check` builds the same before its tests start.)
pub const PROGRAM_BUILD_ARGS: [&str; 3] =
    ["--workspace", "--example", "trace_scenes"];

/// Besides `--example EXAMPLE`, how the tests build `package`'s example:
/// for the same features as `PROGRAM_BUILD_ARGS`, the whole workspace, but
/// for the other steps, whose examples of the same name would be built to
/// the same file.
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
/// `.ci/wine` under Wine): the folder where the programs the tests run
/// wait, built before the tests started (`runner::build_programs`). A test
/// then runs them from there and never calls Cargo inside its deadline.
/// In the folder: `stepNN`, `examples/stepNN/EXAMPLE` and
/// `examples/workshop-tests/trace_scenes`, each with the platform's
/// suffix.
pub const PREBUILT_PROGRAMS: &str = "WORKSHOP_PREBUILT_STEPS";

/// Every file below `dir`, as a path relative to it with `/` between its
/// parts, sorted: the same list on every platform. A folder that cannot be
/// read is passed over.
pub fn files_below(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(dir) {
                files.push(with_slashes(relative));
            }
        }
    }
    files.sort();
    files
}

/// A relative path with `/` between its parts, whatever the platform's
/// separator: how the workshop names a file to a participant and to Cargo.
pub fn with_slashes(relative: &Path) -> String {
    let parts: Vec<_> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Set by `cargo workshop check` in each test's environment: how many
/// seconds a test may wait for what never comes before it fails with its
/// own message. Alone, the tests wait `HANG_LIMIT`, made for a machine
/// busy with anything; under `check`, which runs at most four at once, a
/// correct test needs a few seconds, and a participant waiting on a
/// verdict should not wait 20 of them for each hang.
pub const PATIENCE_VAR: &str = "WORKSHOP_PATIENCE_SECS";

/// The workshop this crate is part of, for its own tests: the folder above
/// the package's.
#[cfg(test)]
pub(crate) fn workspace_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workshop package sits one folder below the root")
        .to_path_buf()
}
