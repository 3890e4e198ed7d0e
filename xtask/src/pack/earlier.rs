//! An earlier pack in the folder `pack` writes to: what may be emptied.
//!
//! A pack's `.cargo/config.toml` says it was written by `pack`, but that
//! line travels: every copy a participant unzipped and worked in carries
//! it. So `pack` keeps a list of every file it wrote, with its size and a
//! hash of its bytes (`.cargo/workshop-pack.txt`, which travels too), and
//! empties a folder only when every file in it is there as that list says:
//! a function written, a `NOTES.md` added, a step started (`.workshop/`)
//! all keep the folder. Build output (`target/`) is nobody's work.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::failed;

/// The list of what `pack` wrote, relative to the pack's folder.
pub(super) const MANIFEST: &str = ".cargo/workshop-pack.txt";

const HEADER: &str = "\
# Every file `cargo xtask pack` wrote here: its hash, size and path.
# A later pack into this folder empties it only while each is as listed.
";

/// Writes the list of `files` (relative to `dir`, with their sizes) into
/// `dir`: the last file of a pack.
pub(super) fn write_manifest(
    dir: &Path,
    files: &[(String, u64)],
) -> Result<(), String> {
    let mut text = HEADER.to_owned();
    for (file, size) in files {
        let hash = hash_of(&dir.join(file), file)?;
        let _ = writeln!(text, "{hash} {size} {file}");
    }
    let path = dir.join(MANIFEST);
    fs::write(&path, text).map_err(|err| failed(&path, &err))
}

/// The hash of a file's bytes (FNV-1a); a crate's file in `vendor/`,
/// which nobody edits and Cargo checks by its own checksums, by its size
/// alone, to keep a pack of thousands of files quick.
fn hash_of(path: &Path, file: &str) -> Result<String, String> {
    if file.starts_with("vendor/") {
        return Ok("-".to_owned());
    }
    let bytes = fs::read(path).map_err(|err| failed(path, &err))?;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    Ok(format!("{hash:016x}"))
}

/// Makes `dir` an empty folder, if it is missing, empty, or an earlier
/// pack that nobody changed (then it is emptied, and its ZIP removed);
/// true for an earlier pack. Any other folder is refused, naming what in
/// it is not as a pack wrote it, and so is a ZIP of that name beside a
/// folder that is not an earlier pack.
pub(super) fn make_empty(dir: &Path, zip: &Path) -> Result<bool, String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "{} is a file, not a folder: name a new folder",
            dir.display()
        ));
    }
    fs::create_dir_all(dir)
        .map_err(|err| format!("cannot make the folder {}: {err}", dir.display()))?;
    let entries = entries(dir)?;
    let earlier = dir.join(MANIFEST).is_file();
    if !entries.is_empty() && !earlier {
        return Err(format!(
            "{} is a folder with files in it, and not an earlier pack: \
             name a new or empty folder",
            dir.display()
        ));
    }
    if earlier {
        let not_packed = not_as_packed(dir)?;
        if !not_packed.is_empty() {
            return Err(format!(
                "{} was a pack, but holds what pack did not write there, or \
                 changed since: {}. That may be someone's work (a copy a \
                 participant unzipped and worked in), so nothing was emptied: \
                 name a new folder, or move that one away first.",
                dir.display(),
                listed(&not_packed)
            ));
        }
    }
    if zip.exists() && !earlier {
        return Err(format!(
            "{} is there already: move it away, or name another folder",
            zip.display()
        ));
    }
    empty(dir)?;
    if zip.exists() {
        fs::remove_file(zip).map_err(|err| failed(zip, &err))?;
    }
    Ok(earlier)
}

/// Removes everything in `dir`, which `pack` wrote: a symbolic link is
/// removed, never followed.
pub(super) fn empty(dir: &Path) -> Result<(), String> {
    for entry in entries(dir)? {
        let is_folder = fs::symlink_metadata(&entry).is_ok_and(|meta| meta.is_dir());
        let removed = if is_folder {
            fs::remove_dir_all(&entry)
        } else {
            fs::remove_file(&entry)
        };
        removed.map_err(|err| {
            format!("emptying the earlier pack: {}", failed(&entry, &err))
        })?;
    }
    Ok(())
}

fn entries(dir: &Path) -> Result<Vec<PathBuf>, String> {
    fs::read_dir(dir)
        .map_err(|err| failed(dir, &err))?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, io::Error>>()
        .map_err(|err| failed(dir, &err))
}

/// The files in `dir` that are not as its manifest lists them: changed,
/// added, or not files (a link); build output aside.
fn not_as_packed(dir: &Path) -> Result<Vec<String>, String> {
    let path = dir.join(MANIFEST);
    let manifest = fs::read_to_string(&path).map_err(|err| failed(&path, &err))?;
    let listed: std::collections::HashMap<&str, (&str, &str)> = manifest
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (hash, rest) = line.split_once(' ')?;
            let (size, file) = rest.split_once(' ')?;
            Some((file, (hash, size)))
        })
        .collect();
    let mut differ = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in entries(&current)? {
            let file =
                workshop::with_slashes(entry.strip_prefix(dir).unwrap_or(&entry));
            if file == MANIFEST || file == "target" {
                continue;
            }
            let meta =
                fs::symlink_metadata(&entry).map_err(|err| failed(&entry, &err))?;
            if meta.is_dir() {
                pending.push(entry);
                continue;
            }
            let as_packed = meta.is_file()
                && listed.get(file.as_str()).is_some_and(|(hash, size)| {
                    *size == meta.len().to_string()
                        && hash_of(&entry, &file).is_ok_and(|now| now == *hash)
                });
            if !as_packed {
                differ.push(file);
            }
        }
    }
    differ.sort();
    Ok(differ)
}

/// `a, b and c`, or the first five and how many more.
fn listed(files: &[String]) -> String {
    match files {
        [one] => one.clone(),
        [first @ .., last] if files.len() <= 5 => {
            format!("{} and {last}", first.join(", "))
        }
        _ => format!("{} and {} more", files[..5].join(", "), files.len() - 5),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MARK, walk};
    use super::*;

    /// A pack's folder, made by hand: a step's file and the config.
    fn packed(name: &str) -> (PathBuf, PathBuf) {
        let scratch = std::env::temp_dir()
            .join(format!("workshop-pack-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&scratch);
        let dir = scratch.join("event-loop");
        for (file, text) in [
            ("step03-sleep/src/lib.rs", "fn call_at() {}\n"),
            (
                ".cargo/config.toml",
                &format!("{MARK} the crates come from vendor/\n"),
            ),
            ("vendor/heapless/lib.rs", "// a crate\n"),
        ] {
            let path = dir.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let files = walk(&dir, &[]).unwrap();
        write_manifest(&dir, &files).unwrap();
        (scratch, dir)
    }

    #[test]
    fn an_earlier_pack_as_written_is_emptied_and_its_build_output_with_it() {
        let (scratch, dir) = packed("as-written");
        fs::create_dir_all(dir.join("target/debug")).unwrap();
        fs::write(dir.join("target/debug/step01"), "built").unwrap();
        let zip = scratch.join("event-loop.zip");
        fs::write(&zip, "an earlier zip").unwrap();
        assert_eq!(make_empty(&dir, &zip), Ok(true));
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        assert!(!zip.exists());
        let _ = fs::remove_dir_all(&scratch);
    }

    #[test]
    fn a_copy_someone_worked_in_is_never_emptied() {
        type Work = fn(&Path);
        let work: [(&str, Work); 3] = [
            ("function", |dir| {
                fs::write(
                    dir.join("step03-sleep/src/lib.rs"),
                    "fn call_at() { mine() }\n",
                )
                .unwrap();
            }),
            ("notes", |dir| {
                fs::write(dir.join("NOTES.md"), "my notes\n").unwrap();
            }),
            // A pack from before the list: only the config's mark says so.
            ("unlisted", |dir| {
                fs::remove_file(dir.join(MANIFEST)).unwrap();
            }),
        ];
        for (name, worked) in work {
            let (scratch, dir) = packed(name);
            worked(&dir);
            let refused = make_empty(&dir, &scratch.join("event-loop.zip"));
            assert!(refused.is_err(), "{name}");
            assert!(dir.join("step03-sleep/src/lib.rs").is_file(), "{name}");
            let _ = fs::remove_dir_all(&scratch);
        }
        let (scratch, dir) = packed("named");
        fs::write(dir.join("NOTES.md"), "my notes\n").unwrap();
        let said = make_empty(&dir, &scratch.join("event-loop.zip")).unwrap_err();
        assert!(
            said.contains(": NOTES.md. That may be someone's work"),
            "{said}"
        );
        let _ = fs::remove_dir_all(&scratch);
    }
}
