//! What `watch` runs: each check a child process (`cargo workshop check
//! N`, this same program), which a save ends before it starts the next;
//! and the step's demo, in the foreground. Neither outlives `watch`: each
//! is ended when dropped, on every way out, a panic's included.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use super::Event;
use crate::commands::check::NEXT_FILE_VAR;

/// How long a check asked to end may take to end its tests and exit
/// before it is killed outright (what it leaves, the next check ends).
#[cfg(unix)]
const GRACE: Duration = Duration::from_secs(5);

/// A check running, and what it said so far.
#[derive(Debug)]
pub struct RunningCheck {
    pub id: u64,
    pub began: Instant,
    child: Child,
    reaped: bool,
    stdout: Option<String>,
    stderr: Option<String>,
}

/// A check's end: its exit code (none when a signal ended it) and what it
/// printed.
#[derive(Debug)]
pub struct Ended {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl RunningCheck {
    /// Starts `check n` in the workshop at `root`, in a process group of its
    /// own (so that ending it reaches the Cargo it runs), its output read on
    /// two threads that send `Event::CheckSaid`, `CheckOut` and `CheckErr`
    /// with `id`.
    pub fn start(
        root: &Path,
        n: u32,
        id: u64,
        next_file: &Path,
        events: &Sender<Event>,
    ) -> Result<RunningCheck, String> {
        let me = std::env::current_exe().map_err(|err| {
            format!("cannot find this program to run `check`: {err}")
        })?;
        let mut command = Command::new(me);
        command
            .args(["check", &n.to_string()])
            .current_dir(root)
            .env(NEXT_FILE_VAR, next_file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(|err| {
            format!("cannot start `cargo workshop check {n}`: {err}. Not your code.")
        })?;
        if let Some(mut out) = child.stdout.take() {
            let events = events.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = out.read_to_string(&mut text);
                let _ = events.send(Event::CheckOut(id, text));
            });
        }
        if let Some(err) = child.stderr.take() {
            let events = events.clone();
            std::thread::spawn(move || {
                let mut all = String::new();
                for line in BufReader::new(err).lines() {
                    let Ok(line) = line else { break };
                    all.push_str(&line);
                    all.push('\n');
                    let _ = events.send(Event::CheckSaid(id, line));
                }
                let _ = events.send(Event::CheckErr(id, all));
            });
        }
        Ok(RunningCheck {
            id,
            began: Instant::now(),
            child,
            reaped: false,
            stdout: None,
            stderr: None,
        })
    }

    /// Takes its stdout, at its end.
    pub fn out(&mut self, text: String) {
        self.stdout = Some(text);
    }

    /// Takes its stderr, at its end.
    pub fn err(&mut self, text: String) {
        self.stderr = Some(text);
    }

    /// Its end, once both its outputs are closed: it has exited (or is
    /// about to), and is reaped.
    pub fn ended(&mut self) -> Option<Ended> {
        if self.stdout.is_none() || self.stderr.is_none() {
            return None;
        }
        let status = self.child.wait().ok();
        self.reaped = true;
        Some(Ended {
            code: status.and_then(|status| status.code()),
            stdout: self.stdout.take().unwrap_or_default(),
            stderr: self.stderr.take().unwrap_or_default(),
            took: self.began.elapsed(),
        })
    }

    /// Ends it and everything it started, and reaps it: on Unix, SIGTERM to
    /// its group (the check ends its tests, each in a group of its own, as
    /// on Ctrl-C; Cargo and the compilers in its group end), then, after
    /// `GRACE`, SIGKILL.
    pub fn end(&mut self) {
        if self.reaped {
            return;
        }
        #[cfg(unix)]
        {
            use rustix::process::{Pid, Signal, kill_process_group};
            let group = Pid::from_child(&self.child);
            let _ = kill_process_group(group, Signal::TERM);
            let deadline = Instant::now() + GRACE;
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            // What of the group is left (a Cargo slow to go), and the check
            // itself if it is still there.
            let _ = kill_process_group(group, Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.reaped = true;
    }
}

impl Drop for RunningCheck {
    fn drop(&mut self) {
        self.end();
    }
}

/// The step's demo, `cargo run -p stepNN`, on the terminal.
#[derive(Debug)]
pub struct Demo {
    child: Child,
    done: bool,
}

impl Demo {
    pub fn start(root: &Path, package: &str) -> Result<Demo, String> {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let child = Command::new(cargo)
            .args(["run", "-p", package])
            .current_dir(root)
            .stdin(Stdio::null())
            .spawn()
            .map_err(|err| format!("cannot run `cargo run -p {package}`: {err}"))?;
        Ok(Demo { child, done: false })
    }

    /// How it ended, once it has.
    pub fn ended(&mut self) -> Option<ExitStatus> {
        let status = self.child.try_wait().ok().flatten()?;
        self.done = true;
        Some(status)
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
