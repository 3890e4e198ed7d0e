//! `cargo xtask pack DIR`: the teacher's plan B, a folder (and a ZIP of
//! it) that builds on any participant's machine with no network and no
//! setup.
//!
//! The folder holds the workshop's files, `vendor/` with every crate the
//! workspace and its tests use, for every platform (`cargo vendor`), and
//! the workshop's own `.cargo/config.toml` with the lines that point
//! crates.io at `vendor/`: Cargo reads them in that folder only, so
//! nothing is written to the participant's `~/.cargo`, and `cargo run -p
//! step01` works there as it is. With mdBook on the teacher's `PATH`, the
//! book is built into `book-html/` too, for participants without mdBook.
//!
//! The ZIP is written here, uncompressed ("stored"), so that it needs no
//! `zip` program, which Windows lacks, and no crate of its own, which
//! `vendor/` would carry into every participant's copy; the price is its
//! size, about the folder's.
//!
//! The pack is the whole workshop as git tracks it, `xtask/` too: it
//! depends on nothing but the workspace's own packages, so it adds no
//! crate to `vendor/`, and the workspace's members and `Cargo.lock` stay
//! as they are, which an offline Cargo needs (a member left out would have
//! to be cut from both by hand).

use std::env;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output, Stdio};
use std::time::Instant;

use workshop::commands::{Words, lexically_normal};
use workshop::step::{Step, find_root, step_folders};

use crate::freeze::blank_function;
use earlier::{MANIFEST, make_empty, write_manifest};
use zip::write_zip;

mod earlier;
mod zip;

/// The first line `pack` adds to the copy's `.cargo/config.toml`, to say
/// whose lines follow. (What a later `pack` may empty is `earlier`'s.)
const MARK: &str = "# Written by `cargo xtask pack`:";

/// What `pack` adds to the workshop's `.cargo/config.toml` in the copy.
/// Cargo resolves a `directory` in a `[source]` table from the folder that
/// holds `.cargo/`: the copy's root, wherever it is copied to.
const SOURCE_LINES: &str = "\
the crates come from vendor/, in this folder,
# not from crates.io: this copy builds with no network, and nothing is
# written to your own ~/.cargo.
[source.crates-io]
replace-with = \"vendored-sources\"

[source.vendored-sources]
directory = \"vendor\"
";

pub const HELP: &str = "usage: cargo xtask pack DIR\n\n\
             For the teacher's plan B: writes the folder DIR, and DIR.zip \
             beside it, that\nbuilds with no network on any system as it is: \
             the workshop, vendor/ with\nevery crate it needs, its \
             .cargo/config.toml pointing crates.io there (nothing\nis \
             written to the participant's ~/.cargo), and the book built into \
             book-html/\nif mdbook is on PATH. Needs the network, or the \
             crates in Cargo's cache.\nDIR must be new, empty or an earlier \
             pack as pack wrote it. A participant copies the folder\n(or unzips the ZIP) and \
             runs `cargo run -p step01` in it.";

/// `cargo xtask pack DIR`, DIR relative to `here`: packs, and says
/// what it wrote.
pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &[], HELP)?;
    let root = find_root(here)?;
    let [dir] = words.plain.as_slice() else {
        return Err(format!(
            "`cargo xtask pack` needs one folder to write, such as \
             /media/usb/event-loop (in quotes if its name has spaces)\n\n{HELP}"
        ));
    };
    println!("{}", pack(&root, &here.join(dir))?);
    Ok(ExitCode::SUCCESS)
}

/// Writes the pack into `dir` (and `dir`.zip beside it), from the workshop
/// at `root`; says what it wrote and what a participant does with it.
pub fn pack(root: &Path, dir: &Path) -> Result<String, String> {
    let began = Instant::now();
    let dir = lexically_normal(dir);
    let root = lexically_normal(root);
    if root.starts_with(&dir) {
        return Err(format!(
            "{} holds the workshop itself: name a new folder outside it \
             (on the stick, say), for example `cargo xtask pack \
             /media/usb/event-loop`",
            dir.display()
        ));
    }
    let name = dir.file_name().map(OsStr::to_os_string).ok_or_else(|| {
        format!("{} is no folder's name: name a new folder", dir.display())
    })?;
    let mut zip_name = name.clone();
    zip_name.push(".zip");
    let zip = dir.with_file_name(&zip_name);
    for n in step_folders(&root).iter().map(|(n, _)| n.to_string()) {
        if blank_function(&Step::find(&root, &n)?)?.is_some() {
            return Err(format!(
                "step {n} is started here, so the pack would hand out its \
                 blank functions: put it back first (`cargo workshop reset \
                 {n}`, with --force if you want to lose what you wrote)"
            ));
        }
    }
    let (files, tracked) = workshop_files(&root, &[&dir, &zip])?;
    let untracked: Vec<String> = untracked_files(&root)
        .into_iter()
        .filter(|file| {
            let path = root.join(file);
            !path.starts_with(&dir) && path != zip
        })
        .collect();
    let config = workshop_config(&root)?;

    let earlier = make_empty(&dir, &zip)?;
    let written = write_pack(&root, &dir, &files, &config).inspect_err(|_| {
        // What is there now is this pack's, half written: nobody's work.
        let _ = earlier::empty(&dir);
    })?;
    let (all, book) = written;
    let vendor = dir.join("vendor");
    let size = write_zip(&dir, &all, &zip)?;
    let crates = fs::read_dir(&vendor).map_or(0, Iterator::count);

    let mut said = String::new();
    if earlier {
        said.push_str("Replaced the earlier pack there.\n");
    }
    if !untracked.is_empty() {
        let _ = writeln!(
            said,
            "Left out, as git does not track them (git add them, and pack \
             again, to hand them out): {}",
            match untracked.len() {
                0..=10 => untracked.join(", "),
                more =>
                    format!("{} and {} more", untracked[..10].join(", "), more - 10),
            }
        );
    }
    let _ = write!(
        said,
        "Packed the workshop into {} ({} files, {}, in {} s):\n  \
         the workshop's {} files{}\n  \
         vendor/             {crates} crates, for every platform ({})\n  \
         .cargo/config.toml  the workshop's, with crates.io pointed at vendor/\n  \
         book-html/          {book}\n\
         and the same in one file: {} ({}, not compressed).\n\n\
         A participant copies the folder, or unzips the ZIP, anywhere, and in \
         it, with no\nnetwork and nothing else to set up, runs `cargo run -p \
         step01`. Cargo builds from\nvendor/, and writes nothing to their own \
         ~/.cargo.",
        dir.display(),
        all.len(),
        megabytes(all.iter().map(|(_, bytes)| bytes).sum()),
        began.elapsed().as_secs(),
        files.len(),
        if tracked { ", as git tracks them" } else { "" },
        megabytes(folder_size(&vendor)),
        zip.display(),
        megabytes(size),
    );
    Ok(said)
}

/// Writes the pack's files into `dir`, empty: the workshop's `files`, its
/// `config` with `pack`'s lines, `vendor/`, the book if mdBook is at hand,
/// and last the list of all of them (`earlier::MANIFEST`). Returns every
/// file written, with its size, and what became of the book.
fn write_pack(
    root: &Path,
    dir: &Path,
    files: &[String],
    config: &str,
) -> Result<(Vec<(String, u64)>, String), String> {
    let cargo_dir = dir.join(".cargo");
    fs::create_dir_all(&cargo_dir).map_err(|err| failed(&cargo_dir, &err))?;
    let config_path = cargo_dir.join("config.toml");
    fs::write(&config_path, format!("{config}{MARK} {SOURCE_LINES}"))
        .map_err(|err| failed(&config_path, &err))?;
    for file in files.iter().filter(|file| *file != ".cargo/config.toml") {
        let (from, to) = (root.join(file), dir.join(file));
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|err| failed(parent, &err))?;
        }
        fs::copy(&from, &to).map_err(|err| {
            format!("copying {} to {}: {err}", from.display(), to.display())
        })?;
    }
    vendor_crates(root, &dir.join("vendor"))?;
    let book = build_book(root, &dir.join("book-html"))?;
    let listed: Vec<(String, u64)> = walk(dir, &[])?
        .into_iter()
        .filter(|(file, _)| file != MANIFEST)
        .collect();
    write_manifest(dir, &listed)?;
    Ok((walk(dir, &[])?, book))
}

/// The workshop's files, relative to `root` with `/` between their parts:
/// what git tracks, if `root` is in a git checkout that git can list;
/// otherwise every file but build output, git's folder, `cargo workshop`'s
/// own records and a built book. Never anything inside `dir`, or
/// `leave_out`'s paths: the pack and its ZIP, which may lie inside the
/// workshop (`pack out`, run twice in a ZIP download).
fn workshop_files(
    root: &Path,
    leave_out: &[&Path],
) -> Result<(Vec<String>, bool), String> {
    let listed = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z", "--cached"])
        .stderr(Stdio::null())
        .output();
    let inside = |file: &String| {
        let path = root.join(file);
        leave_out.iter().any(|out| path.starts_with(out))
    };
    if let Ok(Output { status, stdout, .. }) = listed {
        if status.success() && !stdout.is_empty() {
            let files = String::from_utf8_lossy(&stdout)
                .split('\0')
                .filter(|file| !file.is_empty())
                .map(str::to_owned)
                // A tracked file deleted in the checkout is not copied.
                .filter(|file| root.join(file).is_file() && !inside(file))
                .collect();
            return Ok((files, true));
        }
    }
    let skip = [
        root.join("target"),
        root.join(".git"),
        root.join(".workshop"),
        root.join("book").join("book"),
    ]
    .into_iter()
    .chain(leave_out.iter().map(|out| out.to_path_buf()))
    .collect::<Vec<_>>();
    let files = walk(root, &skip)?
        .into_iter()
        .map(|(file, _)| file)
        .collect();
    Ok((files, false))
}

/// The files in `root` that git neither tracks nor ignores, which the
/// pack leaves out; none if git cannot say.
fn untracked_files(root: &Path) -> Vec<String> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z", "--others", "--exclude-standard"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| {
            String::from_utf8_lossy(&output.stdout)
                .split('\0')
                .filter(|file| !file.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Every file below `dir` but those in `skip`, relative to `dir` with `/`
/// between its parts, with its size; sorted, and symbolic links followed.
fn walk(dir: &Path, skip: &[PathBuf]) -> Result<Vec<(String, u64)>, String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let entries =
            fs::read_dir(&current).map_err(|err| failed(&current, &err))?;
        for entry in entries {
            let path = entry.map_err(|err| failed(&current, &err))?.path();
            if skip.contains(&path) {
                continue;
            }
            let metadata = fs::metadata(&path).map_err(|err| failed(&path, &err))?;
            if metadata.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(dir) {
                files.push((workshop::with_slashes(relative), metadata.len()));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The workshop's own `.cargo/config.toml`, which the copy keeps, with
/// `pack`'s lines added: refused if it has a `[source]` table already.
fn workshop_config(root: &Path) -> Result<String, String> {
    let path = root.join(".cargo").join("config.toml");
    let mut text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(failed(&path, &err)),
    };
    if text
        .lines()
        .any(|line| line.trim_start().starts_with("[source"))
    {
        return Err(format!(
            "{} has a [source] table already (is this folder a pack?): \
             pack from a clone of the workshop, whose crates come from \
             crates.io",
            path.display()
        ));
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !text.is_empty() {
        text.push('\n');
    }
    Ok(text)
}

/// `cargo vendor` of the whole workspace, every platform, into `vendor`.
fn vendor_crates(root: &Path, vendor: &Path) -> Result<(), String> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(root)
        .args(["vendor", "--locked", "--versioned-dirs", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .arg(vendor)
        .stdin(Stdio::null())
        .output()
        .map_err(|err| {
            format!(
                "cannot run {} for `cargo vendor`: {err}; run this as `cargo \
                 xtask pack`, with Cargo on PATH",
                cargo.display()
            )
        })?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "`cargo vendor` could not copy the crates into {}:\n{}\n\
         It needs crates.io, or every crate in Cargo's cache: run \
         `cargo xtask pack` again with the network on",
        vendor.display(),
        last_lines(&output.stderr, 12)
    ))
}

/// `mdbook build` of the participants' book into `out`. Never the
/// teacher's, with the speaker notes and the room's answers in them, even
/// from a shell where the teacher has set `BOOK_NOTES=teacher` to serve
/// theirs (in PowerShell it stays set for the session).
fn participants_book_build(root: &Path, out: &Path) -> Command {
    let mut command = Command::new("mdbook");
    command
        .current_dir(root)
        .arg("build")
        .arg(root.join("book"))
        .arg("-d")
        .arg(out)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env_remove("BOOK_NOTES");
    command
}

/// The book, built by mdBook into `out` if mdBook is on `PATH`: says which.
fn build_book(root: &Path, out: &Path) -> Result<String, String> {
    let version = Command::new("mdbook")
        .arg("--version")
        .stdin(Stdio::null())
        .output();
    let Ok(version) =
        version.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    else {
        return Ok("not written: no mdbook on PATH here to build the book; \
                   install it\n                      (`cargo install mdbook \
                   --locked --version 0.5.4`) and pack again to add it"
            .to_owned());
    };
    let output = participants_book_build(root, out)
        .output()
        .map_err(|err| format!("cannot run mdbook: {err}"))?;
    let mut log = output.stdout;
    log.extend_from_slice(&output.stderr);
    // mdBook logs a missing include file as an ERROR and still exits 0.
    let logged_error = String::from_utf8_lossy(&log).contains("ERROR");
    if !output.status.success() || logged_error || !out.join("index.html").is_file()
    {
        return Err(format!(
            "`mdbook build` did not build the book into {}:\n{}\n\
             Mend what it says, or pack where mdbook is not on PATH to \
             leave the book out",
            out.display(),
            last_lines(&log, 12)
        ));
    }
    Ok(format!(
        "the book, built by {} ({}): open book-html/index.html",
        version.trim(),
        megabytes(folder_size(out))
    ))
}

// ---------------------------------------------------------------------------

fn folder_size(dir: &Path) -> u64 {
    walk(dir, &[]).map_or(0, |files| files.iter().map(|(_, bytes)| bytes).sum())
}

fn megabytes(bytes: u64) -> String {
    format!("{} MB", (bytes + 500_000) / 1_000_000)
}

fn last_lines(bytes: &[u8], count: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..]
        .iter()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn failed(path: &Path, err: &io::Error) -> String {
    format!("{}: {err}", path.display())
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::path::Path;

    #[test]
    fn the_packed_book_is_the_participants_even_where_the_teacher_asked_for_theirs()
    {
        let command =
            super::participants_book_build(Path::new("."), Path::new("out"));
        let notes = command
            .get_envs()
            .find(|(name, _)| *name == OsStr::new("BOOK_NOTES"));
        assert_eq!(notes, Some((OsStr::new("BOOK_NOTES"), None)));
    }
}
