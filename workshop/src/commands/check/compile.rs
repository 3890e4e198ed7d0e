//! When the tests do not build: whose code the first error is in, or that
//! the machine, not the code, failed (a full disk, a read-only folder).

use super::Checked;
use super::report::failing;
use crate::commands::indent;
use crate::runner::CompileError;
use crate::step::{Step, step_folders};

/// What the system said when a build or a copy failed for want of the
/// machine's means rather than because of the code, in the participant's
/// words; `None` for anything else (a compile error is the code's).
pub fn machine_trouble(said: &str) -> Option<&'static str> {
    const TROUBLES: [(&[&str], &str); 4] = [
        (
            &[
                "No space left on device",
                "os error 28)",
                "not enough space on the disk",
                "os error 112)",
            ],
            "the disk is full",
        ),
        (
            &["Disk quota exceeded", "os error 122)"],
            "your disk quota is used up",
        ),
        (
            &["Read-only file system", "os error 30)"],
            "the folder cannot be written (a read-only file system)",
        ),
        (
            &[
                "Permission denied (os error 13)",
                "Access is denied. (os error 5)",
            ],
            "a file cannot be written (permission denied)",
        ),
    ];
    TROUBLES
        .iter()
        .find(|(signs, _)| signs.iter().any(|sign| said.contains(sign)))
        .map(|(_, trouble)| *trouble)
}

/// What `check` says when building step N's tests failed for want of the
/// machine's means: not "does not compile", which would send the
/// participant to look for a mistake that is not there.
pub(super) fn build_failed_for_the_machine(step: &Step, said: &str) -> String {
    let n = step.number;
    let trouble = machine_trouble(said).unwrap_or("the build failed");
    format!(
        "Cargo could not build step {n}'s tests: {trouble}. This is about the \
         machine, not your code: nothing was tested and no function is \
         blamed. What Cargo said:\n\n{}\n\nMake room (`cargo clean` in \
         another project frees the most), then run `cargo workshop check {n}` \
         again.",
        indent(said.trim())
    )
}

/// The tests do not compile: says whose code the first error is in.
pub(super) fn does_not_compile(step: &Step, error: &CompileError) -> Checked {
    let n = step.number;
    let folder = error.package_dir.as_ref().and_then(|dir| dir.file_name());
    let folder = folder
        .map(|name| name.to_string_lossy())
        .unwrap_or_default();
    let owner = step_folders(&step.root)
        .into_iter()
        .find(|(_, name)| *name == folder);
    let message = indent(&error.message);
    let kept = |m: u32| step.root.join(".workshop").join(format!("step{m:02}"));
    let report = match owner {
        Some((m, _)) if m == n => format!(
            "Step {n} does not compile yet. The first error:\n\n{message}\n\n\
             (`cargo build -p step{n:02}` shows them all.)"
        ),
        Some((m, name)) => format!(
            "Step {m} ({name}/) does not compile, and checking step {n} builds \
             every step's tests, so step {m} must compile first. Its first \
             error:\n\n{message}\n\n(`cargo build -p step{m:02}` shows them \
             all{}.)",
            if kept(m).is_dir() {
                format!("; `cargo workshop reset {m}` puts step {m} back")
            } else {
                String::new()
            }
        ),
        None if folder == "tests" => format!(
            "The tests do not compile against step {n}: did the signature of \
             a function, or a public name, change? The first error:\n\n\
             {message}\n\n(`cargo test -p workshop-tests --no-run` shows them all.)"
        ),
        None => {
            format!("The workspace does not compile. The first error:\n\n{message}")
        }
    };
    failing(&[], None, report)
}
