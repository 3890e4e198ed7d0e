//! A copy's build folder started from this workshop's, for the tests
//! that run whole checks in a copy (`checks_at_once`, `watch_tmux`): a
//! copy built from nothing took minutes, a test's time many times over.
//!
//! It leans on how Cargo lays out its build folder (`debug/deps`,
//! `debug/.fingerprint`), which Cargo does not promise to keep: that is
//! why it lives here, in the tests, and not in the participant's tool,
//! whose probe builds in a folder of its own as Cargo supports. Should a
//! Cargo release change the layout, these tests only build more.
//!
//! Nothing Cargo builds depends on where the workspace is (it hashes each
//! package's path relative to the workspace), so a copy whose sources
//! keep their times (`sources_copy::Times::Kept`) finds the seeded build
//! fresh wherever the sources are the same.
//!
//! Sharing a file must never let one build see the other's version of a
//! step. What rustc and the linker write (libraries, executables) they
//! replace by a new file, so the old one stays as it was for whoever else
//! links to it: those are hard-linked, at no cost in disk. What Cargo notes
//! (fingerprints, build scripts' output) and rustc's `.d` files are
//! rewritten in place, so those are copied, with their times.

use std::fs;
use std::path::Path;

use workshop::sources_copy::{self, Times, copy_with_times};

/// Makes `dir` a copy of the workshop at `root` whose build folder
/// (`dir/target`) and whose probe's (the copy `check` tries the authors'
/// functions in, and its build folder, below that) start from `target`,
/// the workshop's: only what a test changes is built again.
pub fn warm_copy(root: &Path, target: &Path, dir: &Path) -> Result<(), String> {
    sources_copy::sync_tree(root, dir, Times::Kept)?;
    seed(target, &dir.join("target"))?;
    let probe = dir.join("target").join("workshop-probe");
    sources_copy::sync_tree(root, &probe.join("workspace"), Times::Kept)?;
    seed(target, &probe.join("target"))
}

/// The folder of the profile `cargo test` builds in.
const PROFILE: &str = "debug";

/// The folders of a profile's output that the copy's build reads (not the
/// incremental caches: the copy makes its own for what it rebuilds).
const OUTPUT: [&str; 3] = ["deps", "build", ".fingerprint"];

/// Fills `to` (the probe's target folder) from `from` (the participant's),
/// replacing what the probe built there before: the participant's build is
/// of their code as it is now, so what is left to build is only what the
/// probe changes. (What the probe built that the participant never did
/// stays, with Cargo's fingerprints for it.)
pub fn seed(from: &Path, to: &Path) -> Result<(), String> {
    for folder in OUTPUT {
        share_or_copy(
            &from.join(PROFILE).join(folder),
            &to.join(PROFILE).join(folder),
        )?;
    }
    Ok(())
}

/// Puts `from` at `to`, file by file for a folder; each file shared if
/// rustc or the linker wrote it, else copied.
///
/// Another Cargo (rust-analyzer's, a second terminal's) may be building
/// in `from` meanwhile: rustc's object files (`….rcgu.o`) and temporary
/// folders come and go between the listing of a folder and the copy of
/// its files. What is gone by then was never output the copy's build
/// could read, so it is left out rather than called a failure.
fn share_or_copy(from: &Path, to: &Path) -> Result<(), String> {
    let failed = |err: std::io::Error| format!("{}: {err}", to.display());
    let done = if from.is_dir() {
        fs::create_dir_all(to).map_err(failed)?;
        match fs::read_dir(from) {
            Ok(entries) => {
                for entry in entries.flatten() {
                    share_or_copy(&entry.path(), &to.join(entry.file_name()))?;
                }
                Ok(())
            }
            Err(err) => Err(err),
        }
    } else if already_there(from, to) {
        Ok(())
    } else if is_replaced_whole(from) {
        let _ = fs::remove_file(to);
        fs::hard_link(from, to).or_else(|_| copy_with_times(from, to))
    } else {
        copy_with_times(from, to)
    };
    match done {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !from.exists() => {
            Ok(())
        }
        other => other.map_err(failed),
    }
}

/// Whether `to` is `from` as it is now: the same length, last written at
/// the same moment. A link made by an earlier seed is the same file; a
/// copy keeps the time (`copy_with_times`); what either build wrote since
/// has a time of its own. Linking and copying every one of 3,300 files
/// again took 1.1 to 1.3 s of each verdict that needed the probe (step 8).
fn already_there(from: &Path, to: &Path) -> bool {
    let (Ok(from), Ok(to)) = (fs::metadata(from), fs::metadata(to)) else {
        return false;
    };
    let written = |meta: &fs::Metadata| meta.modified().ok();
    from.len() == to.len()
        && written(&from).is_some()
        && written(&from) == written(&to)
}

/// Whether a file of the build output is a library or an executable, which
/// a rebuild replaces by a new file rather than writes over: in `deps/`,
/// `libstep05-….rlib` or `step05_tasks-…`; in `build/`, a build script.
fn is_replaced_whole(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let extension = path.extension().unwrap_or_default().to_string_lossy();
    let in_deps = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|folder| folder == "deps");
    let compiled = ["rlib", "rmeta", "so", "dylib", "dll", "exe", "pdb"];
    compiled.contains(&extension.as_ref())
        || (in_deps && extension.is_empty())
        || name.starts_with("build-script-")
        || name.starts_with("build_script_")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replaced_whole(path: &str) -> bool {
        is_replaced_whole(Path::new(path))
    }

    #[test]
    fn a_file_another_cargo_removed_since_the_listing_is_left_out() {
        let scratch = std::env::temp_dir()
            .join(format!("warm-copy-gone-{}", std::process::id()));
        let (from, to) = (scratch.join("from"), scratch.join("to"));
        fs::create_dir_all(&from).unwrap();
        fs::create_dir_all(&to).unwrap();
        let gone = from.join("step05-0123.step05.abc-cgu.0.rcgu.o");

        let result =
            share_or_copy(&gone, &to.join("step05-0123.step05.abc-cgu.0.rcgu.o"));

        let _ = fs::remove_dir_all(&scratch);
        assert_eq!(result, Ok(()));
    }

    #[test]
    fn a_seed_again_carries_what_changed_and_leaves_what_did_not() {
        let scratch = std::env::temp_dir()
            .join(format!("warm-copy-again-{}", std::process::id()));
        let (from, to) = (scratch.join("from"), scratch.join("to"));
        fs::create_dir_all(&from).unwrap();
        let fingerprint = |root: &Path| root.join("lib-step05");
        fs::write(fingerprint(&from), "aaaa").unwrap();
        share_or_copy(&from, &to).unwrap();
        assert_eq!(fs::read_to_string(fingerprint(&to)).unwrap(), "aaaa");
        // The probe's build writes its own fingerprint in the copy; the
        // participant's, unchanged, must be put back over it.
        fs::write(fingerprint(&to), "pppp").unwrap();
        share_or_copy(&from, &to).unwrap();
        assert_eq!(fs::read_to_string(fingerprint(&to)).unwrap(), "aaaa");
        // The participant's build rewrites it, the same length.
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(fingerprint(&from), "bbbb").unwrap();
        share_or_copy(&from, &to).unwrap();
        let carried = fs::read_to_string(fingerprint(&to)).unwrap();
        let _ = fs::remove_dir_all(&scratch);
        assert_eq!(carried, "bbbb");
    }

    #[test]
    fn a_file_that_is_there_but_cannot_be_copied_is_a_failure() {
        let scratch = std::env::temp_dir()
            .join(format!("warm-copy-fails-{}", std::process::id()));
        let from = scratch.join("output");
        fs::create_dir_all(&scratch).unwrap();
        fs::write(&from, "x").unwrap();

        let result =
            share_or_copy(&from, &scratch.join("no-such-folder").join("output"));

        let _ = fs::remove_dir_all(&scratch);
        assert!(result.is_err(), "{result:?}");
    }

    #[test]
    fn libraries_and_executables_are_shared() {
        assert!(replaced_whole("debug/deps/libstep05-0123456789abcdef.rlib"));
        assert!(replaced_whole("debug/deps/libmio-0123456789abcdef.rmeta"));
        assert!(replaced_whole(
            "debug/deps/libserde_derive-0123456789abcdef.so"
        ));
        assert!(replaced_whole("debug/deps/step05_tasks-0123456789abcdef"));
        assert!(replaced_whole(
            "debug/build/libc-0123456789abcdef/build-script-build"
        ));
    }

    #[test]
    fn what_cargo_and_rustc_write_in_place_is_copied() {
        assert!(!replaced_whole("debug/deps/step05-0123456789abcdef.d"));
        assert!(!replaced_whole(
            "debug/.fingerprint/step05-0123456789abcdef/lib-step05"
        ));
        assert!(!replaced_whole(
            "debug/.fingerprint/step05-0123456789abcdef/dep-lib-step05"
        ));
        assert!(!replaced_whole("debug/build/libc-0123456789abcdef/output"));
        assert!(!replaced_whole(
            "debug/build/libc-0123456789abcdef/root-output"
        ));
    }
}
