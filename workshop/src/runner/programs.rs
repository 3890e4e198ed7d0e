//! The programs a check's tests run (the step's binary, its examples, the
//! traced scenes), handed over under names of their own, as another
//! check's build may replace Cargo's meanwhile, in a folder of this
//! check's that the tests find by `crate::PREBUILT_PROGRAMS`.

use std::env::consts::EXE_SUFFIX;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The folder, beside Cargo's own output, that holds every check's.
const FOLDER: &str = "workshop-programs";

/// How old a check's folder is when it is surely no check's any more: no
/// check runs that long, and one killed leaves its folder behind.
const FORGOTTEN_AFTER: Duration = Duration::from_secs(3600);

/// Gives each program `built` (its place among the programs, its path as
/// Cargo built it) a name of its own in a new folder, and returns the
/// folder. `package`'s binary must be among them: its folder is Cargo's.
pub(crate) fn hand_over(
    package: &str,
    built: &[(String, PathBuf)],
) -> io::Result<PathBuf> {
    let (_, binary) = built
        .iter()
        .find(|(place, _)| place == package)
        .ok_or_else(|| {
            io::Error::other(format!("Cargo named no program {package}"))
        })?;
    let parent = binary
        .parent()
        .ok_or_else(|| io::Error::other("a program with no folder"))?;
    let all = parent.join(FOLDER);
    remove_forgotten(&all);
    let folder = all.join(this_checks_name());
    let _ = fs::remove_dir_all(&folder);
    for (place, path) in built {
        let own = folder.join(format!("{place}{EXE_SUFFIX}"));
        if let Some(dir) = own.parent() {
            fs::create_dir_all(dir)?;
        }
        link_or_copy(path, &own)?;
    }
    Ok(folder)
}

/// Removes a check's folder once its tests have ended. Lost, it costs
/// only disk, until the next check an hour on removes it.
pub fn remove(folder: &Path) {
    let _ = fs::remove_dir_all(folder);
}

/// This process's pid and how many folders it made before: a check and
/// its probe's builds each get their own.
fn this_checks_name() -> String {
    static MADE: AtomicU32 = AtomicU32::new(0);
    let n = MADE.fetch_add(1, Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// A hard link writes nothing: a copy is a file this process writes, and a
/// thread that forks meanwhile would hold it open for writing until its
/// child execs, so that running it failed with "Text file busy". Where
/// links are refused (another file system), it is copied after all.
fn link_or_copy(from: &Path, to: &Path) -> io::Result<()> {
    fs::hard_link(from, to).or_else(|_| fs::copy(from, to).map(drop))
}

/// Removes the folders of checks that ended long ago (killed ones leave
/// theirs): the folder's own time is when its check made it.
fn remove_forgotten(all: &Path) {
    for entry in fs::read_dir(all).into_iter().flatten().flatten() {
        let old = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .is_ok_and(|at| at.elapsed().is_ok_and(|age| age > FORGOTTEN_AFTER));
        if old {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_program_gets_a_name_of_its_own_and_the_binary_must_be_there() {
        let dir = std::env::temp_dir()
            .join(format!("programs-test-{}", std::process::id()));
        let debug = dir.join("debug");
        fs::create_dir_all(debug.join("examples")).unwrap();
        let binary = debug.join(format!("step05{EXE_SUFFIX}"));
        let example = debug
            .join("examples")
            .join(format!("step05_lost_wake_up{EXE_SUFFIX}"));
        fs::write(&binary, "the binary").unwrap();
        fs::write(&example, "step 5's example").unwrap();
        let built = vec![
            ("step05".to_owned(), binary.clone()),
            (
                "examples/step05/step05_lost_wake_up".to_owned(),
                example.clone(),
            ),
        ];
        let folder = hand_over("step05", &built).unwrap();
        // Another check's build replaces Cargo's example: ours is kept.
        fs::remove_file(&example).unwrap();
        fs::write(&example, "a later build of it").unwrap();
        let own = folder
            .join("examples/step05")
            .join(format!("step05_lost_wake_up{EXE_SUFFIX}"));
        assert_eq!(fs::read_to_string(own).unwrap(), "step 5's example");
        assert_eq!(
            fs::read_to_string(folder.join(format!("step05{EXE_SUFFIX}"))).unwrap(),
            "the binary"
        );
        let second = hand_over("step05", &built).unwrap();
        assert_ne!(folder, second, "each build of a check gets its own folder");
        remove(&folder);
        assert!(!folder.exists());
        assert!(
            hand_over("step06", &built).is_err(),
            "step 6's binary was not built"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
