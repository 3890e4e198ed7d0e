//! A step's program run for what it prints, as a test would run it, but
//! bounded: a wrong loop may never end, so it is stopped, with whatever it
//! started (a process group, as a test), once it has printed enough or
//! once its time is up, and what it printed until then is kept.

use std::io::{self, Read};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use super::processes;

/// What a program printed, stdout and stderr together.
#[derive(Debug)]
pub struct Printed {
    pub text: String,
    /// Whether it was stopped at its time limit, before it ended or had
    /// printed enough.
    pub stopped: bool,
}

/// Runs `command`, stdout and stderr into one pipe, in the order written
/// (stdout at each line, stderr at once, as the steps write them), until it
/// ends, or `enough` says what it printed so far is all that is wanted, or
/// `limit` has passed; then ends it and everything in its process group.
pub fn merged_output_within(
    mut command: Command,
    limit: Duration,
    enough: impl Fn(&str) -> bool,
) -> io::Result<Printed> {
    let (mut reader, writer) = io::pipe()?;
    command
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer);
    // Under the tests' memory cap: a runaway demo once held 4 GiB.
    let mut child = processes::spawn_test(&mut command)?;
    drop(command); // our copies of the writer: the read ends with the child
    let printed = Arc::new(Mutex::new(Vec::new()));
    let (done, finished) = mpsc::channel();
    {
        let printed = Arc::clone(&printed);
        thread::spawn(move || {
            let mut chunk = [0; 8192];
            while let Ok(n @ 1..) = reader.read(&mut chunk) {
                lock(&printed).extend_from_slice(&chunk[..n]);
            }
            let _ = done.send(());
        });
    }
    let text = || String::from_utf8_lossy(&lock(&printed)).into_owned();
    let began = Instant::now();
    let stopped = loop {
        if matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
            // Ended: what it wrote last may still be in the pipe.
            let _ = finished.recv_timeout(Duration::from_millis(500));
            break false;
        }
        if enough(&text()) {
            break false;
        }
        if began.elapsed() >= limit {
            break true;
        }
        thread::sleep(Duration::from_millis(20));
    };
    processes::end_test(&mut child);
    Ok(Printed {
        text: text(),
        stopped,
    })
}

fn lock(printed: &Mutex<Vec<u8>>) -> std::sync::MutexGuard<'_, Vec<u8>> {
    printed.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_never_ends_is_stopped_with_what_it_printed() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo out; echo err >&2; sleep 30"]);
        let began = Instant::now();
        let printed =
            merged_output_within(command, Duration::from_secs(1), |_| false)
                .unwrap();
        assert!(began.elapsed() < Duration::from_secs(5));
        assert!(printed.stopped);
        assert_eq!(printed.text, "out\nerr\n");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_program_runs_under_the_tests_memory_cap() {
        // Waited for here, not ended as `merged_output_within` ends a
        // program: that ends the children other tests start at once.
        let mut command = Command::new("sh");
        command.args(["-c", "ulimit -d"]).stdout(Stdio::piped());
        let printed = processes::spawn_test(&mut command)
            .and_then(std::process::Child::wait_with_output)
            .unwrap();
        let kib = super::super::MEMORY_LIMIT_GIB << 20;
        assert_eq!(
            String::from_utf8_lossy(&printed.stdout).trim(),
            kib.to_string()
        );
    }

    #[test]
    fn enough_printed_ends_it_early_and_an_ended_one_is_read_whole() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo one; sleep 30"]);
        let printed =
            merged_output_within(command, Duration::from_secs(20), |so_far| {
                so_far.contains("one\n")
            })
            .unwrap();
        assert!(!printed.stopped);
        assert_eq!(printed.text, "one\n");
        let mut command = Command::new("sh");
        command.args(["-c", "echo a; echo b >&2; echo c"]);
        let printed =
            merged_output_within(command, Duration::from_secs(20), |_| false)
                .unwrap();
        assert_eq!(
            (printed.text.as_str(), printed.stopped),
            ("a\nb\nc\n", false)
        );
    }
}
