//! What `watch` runs: the check, a child `cargo workshop check N` (this
//! same program) that a save ends, as does a drop on every way out; and
//! the step's demo.

use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Sender;
use std::time::Instant;

use super::Event;
use crate::commands::check::NEXT_FILE_VAR;
use crate::step::Step;

/// Where each check writes the function its verdict names, for the hint.
pub fn next_file(step: &Step) -> PathBuf {
    step.state().join("watch-next")
}

/// A check running.
#[derive(Debug)]
pub struct RunningCheck {
    pub id: u64,
    pub began: Instant,
    child: Child,
    reaped: bool,
}

impl RunningCheck {
    /// Starts `check` of `step`, in a process group of its own (so that
    /// ending it reaches the Cargo it runs). Each line of its stderr is an
    /// `Event::CheckSaid` with `id`, and its end an `Event::CheckDone`.
    pub fn start(
        step: &Step,
        id: u64,
        events: &Sender<Event>,
    ) -> Result<RunningCheck, String> {
        let n = step.number;
        let _ = std::fs::create_dir_all(step.state());
        let _ = std::fs::remove_file(next_file(step));
        let me = std::env::current_exe().map_err(|err| {
            format!("cannot find this program to run `check`: {err}")
        })?;
        let mut command = Command::new(me);
        command
            .args(["check", &n.to_string()])
            .current_dir(&step.root)
            .env(NEXT_FILE_VAR, next_file(step))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(|err| {
            format!("cannot start `cargo workshop check {n}`: {err}. Not your code.")
        })?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let events = events.clone();
        std::thread::spawn(move || {
            let out = std::thread::spawn(|| io::read_to_string(stdout));
            let mut err = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                err.push_str(&line);
                err.push('\n');
                let _ = events.send(Event::CheckSaid(id, line));
            }
            let out = out.join().ok().and_then(Result::ok).unwrap_or_default();
            let _ = events.send(Event::CheckDone(id, out, err));
        });
        Ok(RunningCheck {
            id,
            began: Instant::now(),
            child,
            reaped: false,
        })
    }

    /// Its exit code (none when a signal ended it), once its outputs closed.
    pub fn reap(&mut self) -> Option<i32> {
        self.reaped = true;
        self.child.wait().ok().and_then(|status| status.code())
    }

    /// Ends it and everything it started, and reaps it: on Unix, SIGTERM to
    /// its group (the check ends its tests as on Ctrl-C, and Cargo and the
    /// compilers end), then, after 5 s of grace, SIGKILL to what is left.
    pub fn end(&mut self) {
        if self.reaped {
            return;
        }
        #[cfg(unix)]
        {
            use rustix::process::{Pid, Signal, kill_process_group};
            use std::time::Duration;
            let group = Pid::from_child(&self.child);
            let _ = kill_process_group(group, Signal::TERM);
            let deadline = Instant::now() + Duration::from_secs(5);
            while matches!(self.child.try_wait(), Ok(None))
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(10));
            }
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

/// Runs the step's demo, `cargo run -p stepNN`, on the terminal: how it
/// ended.
pub fn run_demo(root: &Path, package: &str) -> Result<ExitStatus, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    Command::new(cargo)
        .args(["run", "-p", package])
        .current_dir(root)
        .stdin(Stdio::null())
        .status()
        .map_err(|err| format!("cannot run `cargo run -p {package}`: {err}"))
}
