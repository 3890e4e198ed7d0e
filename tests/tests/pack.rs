//! `cargo xtask pack DIR`, the teacher's plan B: the folder it writes
//! builds and runs the build-it track with no network and an empty Cargo
//! home, as a participant's machine would, from a path with spaces in it
//! (a stick mounted at `/Volumes/NO NAME`).
//!
//! Linux only: it cuts the network with `unshare -n` (as root; otherwise
//! `unshare -rn`, in a user namespace of its own). Slow (the whole
//! workshop's crates built from scratch: two minutes or more on two
//! cores), so `#[ignore]`d: `.ci/run` runs it with `--ignored`.
#![cfg(target_os = "linux")]

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use workshop_tests::{workspace_root, xtask_program};

#[test]
#[ignore = "builds the workshop from scratch with no network: 2 minutes or more"]
fn a_pack_builds_and_runs_the_track_with_no_network() {
    let scratch = env::temp_dir().join(format!("xtask pack {}", std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    let stick = scratch.join("NO NAME");
    fs::create_dir_all(&stick).expect("the scratch folder");
    let packed = stick.join("event loop");

    let began = Instant::now();
    let output = Command::new(xtask_program())
        .current_dir(workspace_root())
        .arg("pack")
        .arg(&packed)
        .stdin(Stdio::null())
        .output()
        .expect("cargo xtask runs");
    assert_ran(&output, "cargo xtask pack");
    eprintln!("pack: {} s", began.elapsed().as_secs());
    let zip = stick.join("event loop.zip");
    assert!(zip.is_file(), "no {}", zip.display());
    if on_path("mdbook") {
        assert!(packed.join("book-html").join("index.html").is_file());
    }
    the_teachers_page_states_the_packs_size(&packed, &zip);

    // The participant's copy: the ZIP unzipped, where `unzip` is at hand
    // (so that the ZIP is tried too), else the folder copied.
    let copies = scratch.join("participant's copy");
    fs::create_dir_all(&copies).expect("the copy's folder");
    let copy = copies.join("event loop");
    if on_path("unzip") {
        let output = Command::new("unzip")
            .arg("-q")
            .arg(&zip)
            .arg("-d")
            .arg(&copies)
            .output()
            .expect("unzip runs");
        assert_ran(&output, "unzip");
    } else {
        copy_folder(&packed, &copy);
    }

    let offline = Offline::new(&scratch, &copy);
    let began = Instant::now();
    let output = offline.run(&["run", "-p", "step01"]);
    assert_ran(&output, "cargo run -p step01");
    eprintln!("cargo run -p step01: {} s", began.elapsed().as_secs());

    let began = Instant::now();
    let output = offline.run(&["workshop", "start", "3"]);
    assert_ran(&output, "cargo workshop start 3");
    assert!(text(&output.stdout).contains("EventLoop::call_at"));
    eprintln!("cargo workshop start 3: {} s", began.elapsed().as_secs());

    let began = Instant::now();
    let output = offline.run(&["workshop", "check", "3"]);
    let said = text(&output.stdout);
    assert!(
        output.status.code() == Some(1)
            && said.contains("Next: write `EventLoop::call_at`"),
        "cargo workshop check 3 should name EventLoop::call_at and exit 1, \
         but exited {:?}:\n{said}\n{}",
        output.status.code(),
        text(&output.stderr)
    );
    eprintln!("cargo workshop check 3: {} s", began.elapsed().as_secs());

    // The book's preprocessor is `cargo run`, so it too builds from vendor/.
    if on_path("mdbook") {
        let began = Instant::now();
        let output = offline
            .command("mdbook", &["build", "book", "-d"])
            .arg(scratch.join("book"))
            .output()
            .expect("mdbook runs");
        assert_ran(&output, "mdbook build book");
        eprintln!("mdbook build book: {} s", began.elapsed().as_secs());
    }

    assert!(
        !offline.cargo_home.join("config.toml").exists()
            && !offline.home.join(".cargo").exists(),
        "something wrote a Cargo configuration outside the copy"
    );
    let _ = fs::remove_dir_all(&scratch);
}

/// The teacher's page says what the pack writes ("about 7,900 files, 192
/// MB (64 crates, 181 MB, in `vendor/`…); the ZIP is 194 MB"), for a
/// teacher who must find room on a stick: each number within a tenth of
/// the pack just made, the crates exactly.
fn the_teachers_page_states_the_packs_size(packed: &Path, zip: &Path) {
    let page = fs::read_to_string(workspace_root().join("book/src/teacher.md"))
        .expect("the teacher's page");
    let sentence = page
        .find("wrote about ")
        .map(|at| &page[at..])
        .expect("the page's sentence on what the pack writes");
    let stated = |before: &str, after: &str| -> u64 {
        let at = sentence
            .find(before)
            .unwrap_or_else(|| panic!("no `{before}`"));
        let rest = &sentence[at + before.len()..];
        let number = rest.split(after).next().unwrap_or_default();
        number
            .replace([',', '\n', ' '], "")
            .parse()
            .unwrap_or_else(|_| panic!("`{before}{number}{after}` is not a number"))
    };
    let (files, bytes) = tally(packed);
    let (_, vendored) = tally(&packed.join("vendor"));
    let crates = fs::read_dir(packed.join("vendor"))
        .expect("vendor/")
        .count() as u64;
    let zipped = fs::metadata(zip).expect("the ZIP").len();
    let mb = |bytes: u64| bytes / 1_000_000;
    let measured = [
        ("files", stated("wrote about ", " files"), files),
        ("MB", stated(" files, ", " MB ("), mb(bytes)),
        (
            "MB of vendor/",
            stated("crates, ", " MB, in `vendor/`"),
            mb(vendored),
        ),
        ("MB of ZIP", stated("the ZIP is ", " MB"), mb(zipped)),
    ];
    eprintln!(
        "pack: {files} files, {} MB ({crates} crates, {} MB, in vendor/); the ZIP {} MB",
        mb(bytes),
        mb(vendored),
        mb(zipped)
    );
    for (what, said, is) in measured {
        assert!(
            said.abs_diff(is) * 10 <= is,
            "teacher.md says {said} {what} for the pack, and it is {is}"
        );
    }
    let said = stated(" MB (", " crates");
    assert_eq!(said, crates, "teacher.md's count of vendored crates");
}

/// How many files a folder holds, and their bytes, below it too.
fn tally(folder: &Path) -> (u64, u64) {
    let mut found = (0, 0);
    for entry in fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            let (files, bytes) = tally(&path);
            found = (found.0 + files, found.1 + bytes);
        } else if let Ok(meta) = entry.metadata() {
            found = (found.0 + 1, found.1 + meta.len());
        }
    }
    found
}

/// Commands run inside the copy, with no network, an empty Cargo home and
/// an empty home folder, and no environment but `PATH`: the toolchain's
/// own `cargo` first on it, so that an empty `CARGO_HOME` does not lose
/// rustup's proxies (`RUSTUP_HOME` is kept for them all the same).
/// `CARGO_NET_OFFLINE` is not set: the participant does not set it, and
/// with the network cut, any try to reach it fails the test.
struct Offline {
    copy: PathBuf,
    home: PathBuf,
    cargo_home: PathBuf,
    cargo: PathBuf,
    path: OsString,
    unshare: &'static [&'static str],
}

impl Offline {
    fn new(scratch: &Path, copy: &Path) -> Offline {
        let home = scratch.join("home");
        let cargo_home = scratch.join("empty cargo home");
        fs::create_dir_all(&home).expect("the home folder");
        fs::create_dir_all(&cargo_home).expect("the Cargo home");
        let cargo = toolchain_cargo();
        let toolchain = cargo.parent().expect("cargo's folder").to_path_buf();
        let path = env::join_paths(
            std::iter::once(toolchain)
                .chain(env::split_paths(&env::var_os("PATH").unwrap_or_default())),
        )
        .expect("PATH");
        let unshare: &[&str] = if succeeds("unshare", &["-n", "true"]) {
            &["-n"]
        } else if succeeds("unshare", &["-r", "-n", "true"]) {
            &["-r", "-n"]
        } else {
            panic!(
                "`unshare -n true` and `unshare -rn true` both failed: this \
                 test needs to cut the network (run it as root, or where \
                 user namespaces are allowed)"
            );
        };
        Offline {
            copy: copy.to_path_buf(),
            home,
            cargo_home,
            cargo,
            path,
            unshare,
        }
    }

    fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut command = Command::new("unshare");
        command
            .args(self.unshare)
            .arg(program)
            .args(args)
            .current_dir(&self.copy)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("CARGO_HOME", &self.cargo_home)
            .stdin(Stdio::null());
        if let Some(rustup) = rustup_home() {
            command.env("RUSTUP_HOME", rustup);
        }
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        let cargo = self.cargo.to_str().expect("cargo's path is UTF-8");
        self.command(cargo, args).output().expect("unshare runs")
    }
}

/// The toolchain's own `cargo`, as rustup names it, else the `cargo` that
/// runs this test.
fn toolchain_cargo() -> PathBuf {
    let which = Command::new("rustup").args(["which", "cargo"]).output();
    match which {
        Ok(output) if output.status.success() => {
            PathBuf::from(text(&output.stdout).trim())
        }
        _ => PathBuf::from(env::var_os("CARGO").expect("Cargo names itself")),
    }
}

fn rustup_home() -> Option<PathBuf> {
    env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| Path::new(&home).join(".rustup")))
        .filter(|dir| dir.is_dir())
}

/// Whether `program` is there to run, whatever it says to `--version`.
fn on_path(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn assert_ran(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed ({:?}):\n{}\n{}",
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr)
    );
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn copy_folder(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("the copy's folder");
    for entry in fs::read_dir(from).expect("the pack's folder").flatten() {
        let (path, dest) = (entry.path(), to.join(entry.file_name()));
        if path.is_dir() {
            copy_folder(&path, &dest);
        } else {
            fs::copy(&path, &dest).expect("a file of the pack copies");
        }
    }
}

/// A ZIP download of the workshop (a clone without `.git`) packed twice
/// into a folder inside it, as a teacher who packs again after a change
/// does: the second pack replaces the first, and leaves the first one's
/// ZIP, which lies in the workshop, out of itself. Then a participant's
/// work in the pack keeps it from being emptied by a third.
#[test]
#[ignore = "vendors every crate twice: a minute or more"]
fn pack_runs_again_inside_a_zip_download_and_never_empties_work() {
    let scratch =
        env::temp_dir().join(format!("xtask pack again {}", std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    let workshop = scratch.join("event loop");
    let cloned = Command::new("git")
        .args(["clone", "--quiet", "--no-hardlinks"])
        .arg(workspace_root())
        .arg(&workshop)
        .status()
        .expect("git runs");
    assert!(cloned.success(), "git clone failed");
    fs::remove_dir_all(workshop.join(".git")).expect("the clone's .git");
    let pack = || {
        Command::new(xtask_program())
            .current_dir(&workshop)
            .args(["pack", "out"])
            .stdin(Stdio::null())
            .output()
            .expect("cargo xtask runs")
    };
    assert_ran(&pack(), "the first pack");
    let again = pack();
    assert_ran(&again, "the second pack");
    assert!(text(&again.stdout).contains("Replaced the earlier pack there."));
    let packed = workshop.join("out");
    assert!(!packed.join("out.zip").exists(), "the first ZIP was packed");

    fs::write(packed.join("NOTES.md"), "my notes\n").expect("a note");
    let refused = pack();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stdout));
    assert!(
        packed.join("NOTES.md").is_file(),
        "the third pack took the notes"
    );
    let _ = fs::remove_dir_all(&scratch);
}
