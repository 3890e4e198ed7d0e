//! A copy of the workshop's sources, kept up to date by writing only what
//! differs: for the probe of `check`, and for `cargo xtask verify` and the
//! tests that run whole checks in one. Cargo tells what to rebuild by the
//! times files were last written, so the copy's times matter (`Times`).

use std::fs;
use std::path::Path;

/// Which times the files of a copy get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Times {
    /// A file written gets the time of its writing; one already the same
    /// is left alone. For the probe's copy, whose build is kept across
    /// checks: a switched file put back with its old time would look older
    /// than the switched build, and Cargo would take that build for fresh.
    New,
    /// Every file gets the time it has in the original, so a build folder
    /// made from the original's finds the copy as fresh as the original.
    Kept,
}

/// A copy that keeps the time `from` was last written: Cargo compares it
/// with the sources' to tell what is fresh.
pub fn copy_with_times(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::copy(from, to)?;
    same_time(from, to)
}

/// Gives `to` the time `from` was last written.
fn same_time(from: &Path, to: &Path) -> std::io::Result<()> {
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
/// the files that differ, their times as `times` says. Build output, git's
/// folder and the book are left out, but for the book's tools
/// (`book/tools`), a member of the workspace, without which Cargo loads no
/// manifest.
pub fn sync_tree(from: &Path, to: &Path, times: Times) -> Result<(), String> {
    sync_below(from, from, to, times)
}

fn sync_below(
    root: &Path,
    from: &Path,
    to: &Path,
    times: Times,
) -> Result<(), String> {
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
            sync_below(root, &path, &dest, times)?;
        } else if !dest.exists() || fs::read(&path).ok() != fs::read(&dest).ok() {
            match times {
                Times::New => fs::copy(&path, &dest).map(drop),
                Times::Kept => copy_with_times(&path, &dest),
            }
            .map_err(failed)?;
        } else if times == Times::Kept {
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
    fn a_file_put_back_as_it_was_is_newer_than_what_was_built_between() {
        let scratch = std::env::temp_dir()
            .join(format!("sources-copy-new-{}", std::process::id()));
        let (from, to) = (scratch.join("from"), scratch.join("to"));
        let lib = |root: &Path| root.join("step05").join("lib.rs");
        fs::create_dir_all(from.join("step05")).unwrap();
        fs::write(lib(&from), "theirs").unwrap();
        sync_tree(&from, &to, Times::New).unwrap();
        // The probe switches the file, builds, and puts it back.
        fs::write(lib(&to), "switched").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let built = std::time::SystemTime::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(lib(&to), "theirs").unwrap();
        sync_tree(&from, &to, Times::New).unwrap();
        let written = fs::metadata(lib(&to)).unwrap().modified().unwrap();
        let original = fs::metadata(lib(&from)).unwrap().modified().unwrap();
        let _ = fs::remove_dir_all(&scratch);
        assert!(
            written > built,
            "Cargo would take the switched build for fresh"
        );
        assert!(original < built);
    }

    #[test]
    fn a_kept_copy_has_the_originals_times() {
        let scratch = std::env::temp_dir()
            .join(format!("sources-copy-kept-{}", std::process::id()));
        let (from, to) = (scratch.join("from"), scratch.join("to"));
        fs::create_dir_all(&from).unwrap();
        fs::write(from.join("lib.rs"), "theirs").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        sync_tree(&from, &to, Times::Kept).unwrap();
        let time = |root: &Path| {
            fs::metadata(root.join("lib.rs"))
                .unwrap()
                .modified()
                .unwrap()
        };
        let (original, copied) = (time(&from), time(&to));
        let _ = fs::remove_dir_all(&scratch);
        assert_eq!(original, copied);
    }
}
