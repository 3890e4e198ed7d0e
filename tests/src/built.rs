//! What Cargo builds for a test: `cargo build --message-format=json`, and
//! the path of the executable it names. The tests run the steps' programs,
//! their examples and `cargo workshop` freshly built this way, never a file
//! some earlier build left in `target/`, which could be stale.
//!
//! Cargo's messages are read with `serde_json`, which the tool already uses
//! for the same messages; a crate for it (escargot) brought serde's derive
//! and `syn` into a participant's first check, for these few lines.

use std::env::consts::EXE_SUFFIX;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

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

/// Cargo's build of `package`'s example `example`, under a name of its
/// own.
///
/// Steps 5 to 8 each have an example `lost_wake_up`, and Cargo puts every
/// one at the same `target/debug/examples/lost_wake_up`. Two tests that
/// build two of them at once could each run the other's: step 5's
/// snapshot once showed step 6's tasks. So the builds of one process take
/// turns, and each is given, under the lock, a name of its own before
/// another build can replace it (never over one that may be running:
/// Windows refuses that). Names made over an hour ago are removed.
///
/// The name is a hard link, not a copy: a copy is a file this process
/// writes, and a test thread that forks meanwhile holds it open for writing
/// until its child execs, so that running the copy at once failed with
/// "Text file busy" (ETXTBSY), once in CI. A link writes nothing. Where
/// links are refused (another file system), it is copied after all.
pub fn example_of_its_own(package: &str, example: &str) -> PathBuf {
    static ONE_AT_A_TIME: Mutex<u32> = Mutex::new(0);
    let mut copies = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let mut args = vec!["--example", example];
    let others = example_build_args(package);
    args.extend(others.iter().map(String::as_str));
    let built = executable(&workspace_root().join("Cargo.toml"), &args, example);
    let built = built.as_path();
    let folder = built.parent().expect("an example's folder").join("copies");
    fs::create_dir_all(&folder).expect("a folder for the examples' copies");
    remove_old_copies(&folder);
    *copies += 1;
    let own = folder.join(format!(
        "{package}-{example}-{}-{}-{copies}{EXE_SUFFIX}",
        seconds_since_1970(),
        std::process::id()
    ));
    fs::hard_link(built, &own)
        .or_else(|_| fs::copy(built, &own).map(drop))
        .expect("the example has a name of its own");
    own
}

fn seconds_since_1970() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Removes the examples' copies made over an hour ago: no test runs that
/// long, so none of them is still running.
fn remove_old_copies(folder: &Path) {
    let an_hour = Duration::from_secs(3600);
    let now = seconds_since_1970();
    for entry in fs::read_dir(folder).into_iter().flatten().flatten() {
        // A link's time is its file's, the build's, maybe hours old: the
        // name says when it was made. A name of the older form, without
        // that, is a copy, whose own time says.
        let old = match named_at(&entry.file_name().to_string_lossy()) {
            Some(made) => now.saturating_sub(made) > an_hour.as_secs(),
            None => entry
                .metadata()
                .and_then(|meta| meta.modified())
                .is_ok_and(|at| at.elapsed().is_ok_and(|age| age > an_hour)),
        };
        if old {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// When an example's name of its own was made, from the name itself:
/// `{package}-{example}-{seconds}-{pid}-{n}`.
fn named_at(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(EXE_SUFFIX).unwrap_or(name);
    let mut parts = stem.rsplitn(4, '-');
    let (_n, _pid, seconds) = (parts.next()?, parts.next()?, parts.next()?);
    parts.next()?; // the package and the example
    seconds.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_example_s_own_name_says_when_it_was_made() {
        assert_eq!(
            named_at(&format!(
                "step05-lost_wake_up-1764280000-4242-3{EXE_SUFFIX}"
            )),
            Some(1_764_280_000)
        );
        // The older form, package, example, pid and count: no time in it.
        assert_eq!(named_at("step05-lost_wake_up-4242-3"), None);
        assert_eq!(named_at("anything"), None);
    }

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
