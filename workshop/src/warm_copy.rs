//! A copy of the workshop whose build starts from the original's, for the
//! probe of `cargo workshop check` and for the tests that run whole checks
//! in a copy. The probe's build folder, started from the participant's own
//! instead of from nothing: a first build of the copy from nothing took 135 s to
//! 375 s and 600 MB, at the moment the participant waits for a verdict.
//!
//! Nothing Cargo builds depends on where the workspace is (it names each
//! source relative to the workspace, and the tests find the workspace at
//! run time: `crate::workspace_root`), so the copy can start
//! from the participant's build as it is. Cargo finds it fresh where the
//! copy's sources are the same (`sync_tree` keeps their times) and
//! rebuilds only the step the probe changes, and the tests. It is seeded
//! again at each probe, so what the participant's check has just built is
//! never built again in the copy.
//!
//! Sharing a file must never let the participant's build see the probe's
//! version of their step. What rustc and the linker write (libraries,
//! executables) they replace by a new file, so the old one stays as it was
//! for whoever else links to it (measured: after a rebuild, a hard link to
//! the old library or executable keeps the old file): those are
//! hard-linked, at no cost in disk. What Cargo notes (fingerprints, build
//! scripts' output) and rustc's `.d` files are rewritten in place, so
//! those are copied, with their times; they are small.

use std::fs;
use std::path::Path;

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

/// A copy that keeps the time `from` was last written: Cargo compares it
/// with the sources' to tell what is fresh.
pub fn copy_with_times(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::copy(from, to)?;
    same_time(from, to)
}

/// Gives `to` the time `from` was last written.
pub fn same_time(from: &Path, to: &Path) -> std::io::Result<()> {
    let written = fs::metadata(from)?.modified()?;
    if fs::metadata(to)?.modified()? == written {
        return Ok(());
    }
    fs::File::options()
        .write(true)
        .open(to)?
        .set_modified(written)
}

/// Makes `to` a copy of the repository's sources at `from`, writing only
/// the files that differ, each with the time it has at `from`: the
/// participant's build output, seeded into the copy's, is then fresh for
/// it exactly where it is in the participant's. Build output, git's folder
/// and the book are left out, but for the book's tools (`book/tools`), a
/// member of the workspace, without which Cargo loads no manifest.
pub fn sync_tree(from: &Path, to: &Path) -> Result<(), String> {
    sync_below(from, from, to)
}

fn sync_below(root: &Path, from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|err| format!("{}: {err}", to.display()))?;
    for entry in fs::read_dir(from)
        .map_err(|err| format!("{err}"))?
        .flatten()
    {
        let name = entry.file_name();
        let path = entry.path();
        let skip = [".git", "target", ".workshop"];
        // A target folder by another name (CARGO_TARGET_DIR) has this tag.
        if skip.iter().any(|s| name == *s)
            || path.join("CACHEDIR.TAG").exists()
            || is_the_book_not_its_tools(root, &path)
        {
            continue;
        }
        let dest = to.join(&name);
        let failed = |err: std::io::Error| format!("{}: {err}", path.display());
        if path.is_dir() {
            sync_below(root, &path, &dest)?;
        } else if !dest.exists() || fs::read(&path).ok() != fs::read(&dest).ok() {
            copy_with_times(&path, &dest).map_err(failed)?;
        } else {
            same_time(&path, &dest).map_err(failed)?;
        }
    }
    Ok(())
}

/// Whether `path` is in the book's folder at `root`, but not its tools.
fn is_the_book_not_its_tools(root: &Path, path: &Path) -> bool {
    let book = root.join("book");
    path.starts_with(&book) && path != book && !path.starts_with(book.join("tools"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replaced_whole(path: &str) -> bool {
        is_replaced_whole(Path::new(path))
    }

    #[test]
    fn the_copy_has_the_books_tools_not_the_book() {
        let root = Path::new("/w");
        let left_out =
            |path: &str| is_the_book_not_its_tools(root, &root.join(path));
        assert!(left_out("book/src"));
        assert!(left_out("book/book.toml"));
        assert!(!left_out("book"), "its folder, for the tools");
        assert!(!left_out("book/tools"));
        assert!(!left_out("book/tools/src/lib.rs"));
        assert!(!left_out("step03-sleep/src/lib.rs"));
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
