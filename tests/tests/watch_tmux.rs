//! `cargo workshop watch` in a real terminal: tmux runs it (`send-keys` to
//! type, `capture-pane` to read the screen) in a copy of this workshop
//! whose build starts from this one's (`workshop_tests::seed`), while the
//! test saves the participant's functions as an editor would.
//!
//! Slow (step 3's tests built in the copy, then a check after each save:
//! a minute or more on two cores) and a guard of the tool rather than of
//! the steps, so left out of the README's command: `.ci/run` runs it with
//! `--ignored`, after installing tmux. Linux only: it reads `/proc` to
//! prove that nothing `watch` started is left.

#![cfg(target_os = "linux")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use workshop::authors;
use workshop::track;
use workshop_tests::{seed, workshop_program, workspace_root};

const FOLDER: &str = "step03-sleep";
const WRONG: &str = "EventLoop::call_at";

/// A copy of the workshop, sources and build, removed when dropped.
struct WarmCopy {
    dir: PathBuf,
}

impl WarmCopy {
    /// A copy of its own for the test `name`: tests run at once, and a
    /// copy shares its build's files with this workshop's by hard links,
    /// which two copies made in one folder at once would overwrite.
    fn new(name: &str) -> WarmCopy {
        let dir = std::env::temp_dir()
            .join(format!("workshop-watch-tmux-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| workspace_root().join("target"), PathBuf::from);
        seed::warm_copy(&workspace_root(), &target, &dir)
            .expect("the copy and its build");
        WarmCopy { dir }
    }

    /// The copy's own build folder.
    fn target(&self) -> PathBuf {
        self.dir.join("target")
    }

    /// `cargo workshop start 3` in the copy, as a participant begins.
    fn start_step3(&self) {
        let start = Command::new(workshop_program())
            .args(["start", "3"])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", self.target())
            .output()
            .expect("start runs");
        assert!(start.status.success(), "{start:?}");
    }

    /// The shell command tmux runs for `cargo workshop watch{args}` in the
    /// copy, built in its own folder.
    fn watch(&self, args: &str) -> String {
        format!(
            "env CARGO_TARGET_DIR='{}' '{}' watch{args}",
            self.target().display(),
            workshop_program().display()
        )
    }

    /// Writes the bodies given, by function, over those of the copy's step
    /// 3, as an editor saves a file: the whole file at once.
    fn write(&self, bodies: &[(&str, &str)]) {
        let step_dir = self.dir.join(FOLDER);
        for file in track::rust_files(&step_dir) {
            let path = step_dir.join(&file);
            let mut text = fs::read_to_string(&path).expect("a step's file");
            let mut marked = track::markers_in(&file, &text).expect("its markers");
            marked.sort_by_key(|m| std::cmp::Reverse(m.body.start));
            let mut changed = false;
            for m in &marked {
                if let Some((_, body)) =
                    bodies.iter().find(|(f, _)| *f == m.function)
                {
                    text.replace_range(m.body.clone(), body);
                    changed = true;
                }
            }
            if changed {
                fs::write(&path, text).expect("the copy is writable");
            }
        }
    }

    /// Every process, but this test's own, that works in the copy or names
    /// it: `pid command` each.
    fn processes_in_it(&self) -> Vec<String> {
        workshop_tests::processes_working_in(&self.dir)
    }
}

impl Drop for WarmCopy {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A tmux server of the test's own (named by its folder, of the test's
/// own), killed when dropped, whatever happens.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(dir: &Path, command: &str) -> Tmux {
        Tmux::sized(dir, command, (200, 80))
    }

    /// Starts `command` in a terminal of `columns` by `lines`.
    fn sized(dir: &Path, command: &str, (columns, lines): (u16, u16)) -> Tmux {
        let tmux = Tmux {
            socket: dir
                .file_name()
                .map_or_else(
                    || "workshop-watch".into(),
                    |name| name.to_string_lossy(),
                )
                .into_owned(),
        };
        let (columns, lines) = (columns.to_string(), lines.to_string());
        let started = tmux
            .command()
            .args([
                "new-session",
                "-d",
                "-s",
                "watch",
                "-x",
                &columns,
                "-y",
                &lines,
            ])
            .arg("-c")
            .arg(dir)
            .arg(command)
            .status()
            .expect("tmux runs (apt-get install tmux)");
        assert!(started.success(), "tmux could not start `{command}`");
        tmux
    }

    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.socket]);
        command
    }

    fn screen(&self) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-t", "watch"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The screen with the lines the terminal wrapped joined again: a line
    /// longer than the pane is one the terminal cut.
    fn lines_as_drawn(&self) -> Vec<String> {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-J", "-t", "watch"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| line.trim_end().to_owned())
            .collect()
    }

    fn resize(&self, columns: u16, lines: u16) {
        let resized = self
            .command()
            .args(["resize-window", "-t", "watch", "-x", &columns.to_string()])
            .args(["-y", &lines.to_string()])
            .status()
            .expect("tmux resize-window");
        assert!(resized.success(), "tmux could not resize the window");
    }

    fn keys(&self, keys: &str) {
        let _ = self
            .command()
            .args(["send-keys", "-t", "watch", keys])
            .status();
    }

    /// Whether the pane's program still runs.
    fn runs(&self) -> bool {
        self.command()
            .args(["has-session", "-t", "watch"])
            .output()
            .is_ok_and(|output| output.status.success())
    }

    /// Waits up to `limit` for the screen to show every one of `wanted`;
    /// how long it took. Fails with the screen as it is otherwise.
    fn wait_for(&self, wanted: &[&str], limit: Duration) -> Duration {
        let began = Instant::now();
        loop {
            let screen = self.screen();
            if wanted.iter().all(|text| screen.contains(text)) {
                return began.elapsed();
            }
            assert!(
                began.elapsed() < limit,
                "after {limit:?} the screen does not show {wanted:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // Gone already once `watch` ended (its only pane): nothing to say.
        let _ = self
            .command()
            .arg("kill-server")
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// Step 3's bodies as the authors wrote them, by function.
fn authors_bodies() -> Vec<(String, String)> {
    let files = authors::read_stored(&workspace_root(), FOLDER).expect("stored");
    let mut bodies = Vec::new();
    for (file, text) in &files {
        if file.starts_with("src/")
            && Path::new(file).extension().is_some_and(|e| e == "rs")
        {
            for m in track::markers_in(file, text).expect("markers") {
                bodies.push((m.function.clone(), text[m.body.clone()].to_owned()));
            }
        }
    }
    bodies
}

#[test]
#[ignore = "slow: watch's checks in a copy of the workshop; .ci/run runs it"]
fn watch_names_a_wrong_function_counts_a_right_one_hints_and_leaves_nothing_on_q_ctrl_c_or_hangup()
 {
    let copy = WarmCopy::new("wrong-right-quit");
    copy.start_step3();
    // Every function but `call_at` written as the authors did.
    let bodies = authors_bodies();
    let others: Vec<(&str, &str)> = bodies
        .iter()
        .filter(|(function, _)| function != WRONG)
        .map(|(function, body)| (function.as_str(), body.as_str()))
        .collect();
    copy.write(&others);
    let total = bodies.len();

    let tmux = Tmux::start(&copy.dir, &copy.watch(""));
    // No step named: the one in progress. Its first check builds step 3's
    // tests in the copy.
    let first = tmux.wait_for(
        &[
            "cargo workshop watch 3",
            &format!("Next: write `{WRONG}`"),
            &format!("{} of {total} functions written", total - 1),
        ],
        Duration::from_secs(300),
    );
    eprintln!("first verdict: {first:?}");

    // A wrong `call_at`: it drops every timer.
    copy.write(&[(WRONG, "{\n        let _ = (deadline, callback);\n    }")]);
    let wrong = tmux.wait_for(
        &[
            &format!("Your `{WRONG}` ("),
            &format!("{total} of {total} functions written, 1 not right yet"),
            "after your save",
        ],
        Duration::from_secs(120),
    );
    eprintln!("save -> a wrong function named: {wrong:?}");

    tmux.keys("h");
    tmux.wait_for(
        &[
            &format!("Hint for `{WRONG}` (1 of {total})"),
            "Schedules `callback` to run once the clock reaches `deadline`.",
            "Read chapter 3, section \"The idea\"",
        ],
        Duration::from_secs(10),
    );

    // The authors' `call_at`: the step passes, and the bar is full.
    let right = &bodies.iter().find(|(f, _)| f == WRONG).expect("call_at").1;
    copy.write(&[(WRONG, right)]);
    let passes = tmux.wait_for(
        &[
            "Step 3 passes",
            &format!("{total} of {total} functions written"),
            "Next: `cargo workshop start 4` then `cargo workshop watch`",
        ],
        Duration::from_secs(120),
    );
    eprintln!("save -> the step passes: {passes:?}");

    // A save, and `q` while its check runs: nothing is left behind.
    copy.write(&[(WRONG, right)]);
    tmux.wait_for(&["Checking ("], Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(500)); // into its build
    assert!(
        !copy.processes_in_it().is_empty(),
        "a check runs in the copy, as far as /proc shows"
    );
    tmux.keys("q");
    let began = Instant::now();
    while tmux.runs() && began.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!tmux.runs(), "watch did not end on `q`:\n{}", tmux.screen());
    let ended = began.elapsed();
    eprintln!("q -> watch ended: {ended:?}");
    let left = copy.processes_in_it();
    assert!(left.is_empty(), "left running after `q`: {left:#?}");
    drop(tmux);

    // Ctrl-C, then a closed terminal, each while a check runs. The step
    // passes now, so it is named: no step is in progress.
    let watch = copy.watch(" 3");
    for (how, keys) in [("Ctrl-C", Some("C-c")), ("a closed terminal", None)] {
        ends_and_leaves_nothing(&copy, &watch, right, how, keys);
    }
}

/// Starts `watch` again in the copy (its step passing), saves to start a
/// check, and ends it with `keys` typed, or with no keys by closing the
/// terminal (tmux's server killed: SIGHUP to the pane's program); then
/// nothing may be left running in the copy.
fn ends_and_leaves_nothing(
    copy: &WarmCopy,
    watch: &str,
    right: &str,
    how: &str,
    keys: Option<&str>,
) {
    let tmux = Tmux::start(&copy.dir, watch);
    tmux.wait_for(&["Step 3 passes"], Duration::from_secs(120));
    copy.write(&[(WRONG, right)]);
    tmux.wait_for(&["Checking ("], Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(500)); // into its build
    match keys {
        Some(keys) => tmux.keys(keys),
        None => drop(tmux),
    }
    let began = Instant::now();
    let mut left = copy.processes_in_it();
    while !left.is_empty() && began.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(100));
        left = copy.processes_in_it();
    }
    assert!(left.is_empty(), "left running after {how}: {left:#?}");
    eprintln!("{how} -> nothing left: {:?}", began.elapsed());
}

/// A wrong `Timer::cmp`: the latest deadline first.
const WRONG_CMP: &str = "{\n        (self.deadline, self.sequence).cmp(&(other.deadline, other.sequence))\n    }";

#[test]
#[ignore = "slow: watch's checks in a copy of the workshop; .ci/run runs it"]
fn at_80_by_24_the_headline_and_the_status_stay_on_screen_and_a_resize_cuts_no_line()
{
    let copy = WarmCopy::new("80-by-24");
    copy.start_step3();
    // Every function written, `Timer::cmp` wrong.
    let bodies = authors_bodies();
    let mut written: Vec<(&str, &str)> = bodies
        .iter()
        .map(|(function, body)| (function.as_str(), body.as_str()))
        .collect();
    for (function, body) in &mut written {
        if *function == "Timer::cmp" {
            *body = WRONG_CMP;
        }
    }
    copy.write(&written);
    let tmux = Tmux::sized(&copy.dir, &copy.watch(" 3"), (120, 24));
    let headline = "Your `Timer::cmp` (";
    let first = tmux.wait_for(&[headline], Duration::from_secs(300));
    eprintln!("first verdict: {first:?}");
    // A save of the same wrong code: the verdict comes after it.
    copy.write(&[("Timer::cmp", WRONG_CMP)]);
    tmux.wait_for(&["Checking ("], Duration::from_secs(10));
    let after_save =
        tmux.wait_for(&[headline, "after your save"], Duration::from_secs(120));
    eprintln!("save -> the verdict, at 120 by 24: {after_save:?}");

    tmux.resize(80, 24);
    let began = Instant::now();
    loop {
        let lines = tmux.lines_as_drawn();
        let screen = lines.join("\n");
        let whole = lines.iter().all(|line| line.chars().count() <= 80);
        if whole && screen.contains(headline) && screen.contains("after your save") {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "10 s after the resize to 80 by 24, a line is cut or the head is \
             gone:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("resize -> redrawn whole: {:?}", began.elapsed());

    // The rest a page at a time under the head, which stays.
    tmux.wait_for(&["-- lines 1-"], Duration::from_secs(5));
    tmux.keys("Space");
    let paged = tmux.screen();
    tmux.wait_for(&[headline, "after your save"], Duration::from_secs(5));
    let began = Instant::now();
    while tmux.screen().contains("-- lines 1-") {
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "Space shows no next page:\n{paged}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The hint opens at its top, under the head, from the second page.
    tmux.keys("h");
    tmux.wait_for(
        &[headline, "after your save", "Hint for `Timer::cmp` ("],
        Duration::from_secs(5),
    );
    tmux.keys("q");
}

/// The room's editor beside `watch`: after every save, rust-analyzer runs
/// `cargo check --workspace --all-targets` on the same build folder, and
/// once a second terminal runs the README's `cargo test --workspace
/// --no-run`. Ten saves, wrong and right in turn: each verdict is the
/// true one, and comes within 15 s of the other Cargo finishing.
#[test]
#[ignore = "slow: watch's checks beside another cargo; .ci/run runs it"]
fn beside_another_cargo_every_verdict_is_true_and_prompt() {
    const SAVES: usize = 10;
    const AFTER_THE_OTHER: Duration = Duration::from_secs(15);
    let copy = WarmCopy::new("beside-cargo");
    copy.start_step3();
    let bodies = authors_bodies();
    let all: Vec<(&str, &str)> = bodies
        .iter()
        .map(|(function, body)| (function.as_str(), body.as_str()))
        .collect();
    copy.write(&all);
    let right_cmp = all
        .iter()
        .find(|(function, _)| *function == "Timer::cmp")
        .expect("step 3 has Timer::cmp")
        .1;
    let tmux = Tmux::start(&copy.dir, &copy.watch(" 3"));
    tmux.wait_for(&["Step 3 passes"], Duration::from_secs(300));
    let mut waits = Vec::new();
    for save in 0..SAVES {
        let wrong = save % 2 == 0;
        copy.write(&[("Timer::cmp", if wrong { WRONG_CMP } else { right_cmp })]);
        let other: &[&str] = if save == 4 {
            &["test", "--workspace", "--no-run", "--quiet"]
        } else {
            &[
                "check",
                "--workspace",
                "--all-targets",
                "--message-format=json",
            ]
        };
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let other_ran = Command::new(cargo)
            .args(other)
            .current_dir(&copy.dir)
            .env("CARGO_TARGET_DIR", copy.target())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("the other cargo runs");
        assert!(other_ran.success(), "cargo {other:?} failed in the copy");
        let verdict: &[&str] = if wrong {
            &["Your `Timer::cmp` (", "after your save"]
        } else {
            &["Step 3 passes", "after your save"]
        };
        let waited = tmux.wait_for(verdict, AFTER_THE_OTHER);
        eprintln!(
            "save {}: {} verdict {waited:?} after `cargo {}` ended",
            save + 1,
            if wrong { "wrong" } else { "right" },
            other[0]
        );
        waits.push(waited);
        // The verdict's words must be the true one's, not the other's too.
        let screen = tmux.screen();
        let other_verdict = if wrong {
            "Step 3 passes"
        } else {
            "Your `Timer::cmp` ("
        };
        assert!(
            !screen.contains(other_verdict),
            "both verdicts on screen:\n{screen}"
        );
    }
    eprintln!(
        "the slowest verdict after the other cargo: {:?}",
        waits.iter().max()
    );
}
