//! What Cargo builds for a test: `cargo build --message-format=json`, and
//! the path of the executable it names. The tests run the steps' programs,
//! their examples and `cargo workshop` freshly built this way, never a file
//! some earlier build left in `target/`, which could be stale.
//!
//! Cargo's messages are read with `serde_json`, which the tool already uses
//! for the same messages; a crate for it (escargot) brought serde's derive
//! and `syn` into a participant's first check, for these few lines.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{example_build_args, workspace_root};

/// Builds `args` in the workspace of `manifest` (`cargo build ARGS`) and
/// returns the executable of the target named `target`. A build that fails
/// fails the test, with the end of what Cargo said.
pub fn executable(manifest: &Path, args: &[&str], target: &str) -> PathBuf {
    // Cargo sets `CARGO` for what it runs: the same Cargo, the same toolchain.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .arg("build")
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--message-format=json-render-diagnostics")
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("could not run cargo: {err}"));
    let said = |stream: &[u8]| {
        let text = String::from_utf8_lossy(stream);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    };
    assert!(
        output.status.success(),
        "`cargo build {}` failed:\n{}",
        args.join(" "),
        said(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|message| executable_named(&message, target))
        .unwrap_or_else(|| {
            panic!(
                "`cargo build {}` named no executable {target}",
                args.join(" ")
            )
        })
}

/// The executable a `compiler-artifact` message names, if it is `target`'s.
fn executable_named(message: &serde_json::Value, target: &str) -> Option<PathBuf> {
    let is_it = message["reason"] == "compiler-artifact"
        && message["target"]["name"] == target;
    is_it.then(|| message["executable"].as_str().map(PathBuf::from))?
}

/// Cargo's build of `package`'s example `example`: each example of the
/// workspace has a name of its own (steps 5 to 8 name theirs
/// `stepNN_lost_wake_up`), so the path Cargo gives holds this one.
pub fn example(package: &str, example: &str) -> PathBuf {
    let mut args = vec!["--example", example];
    let others = example_build_args(package);
    args.extend(others.iter().map(String::as_str));
    executable(&workspace_root().join("Cargo.toml"), &args, example)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_target_s_executable_is_found_and_no_other() {
        let message = serde_json::json!({
            "reason": "compiler-artifact",
            "target": { "name": "step03", "kind": ["bin"] },
            "executable": "/t/debug/step03",
        });
        assert_eq!(
            executable_named(&message, "step03"),
            Some(PathBuf::from("/t/debug/step03"))
        );
        assert_eq!(executable_named(&message, "step04"), None);
        let library = serde_json::json!({
            "reason": "compiler-artifact",
            "target": { "name": "step03", "kind": ["lib"] },
            "executable": null,
        });
        assert_eq!(executable_named(&library, "step03"), None);
        let not_an_artifact = serde_json::json!({
            "reason": "build-finished",
            "success": true,
        });
        assert_eq!(executable_named(&not_an_artifact, "step03"), None);
    }
}
