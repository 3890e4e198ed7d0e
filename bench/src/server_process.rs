//! A side's echo server alone in its own process, so its CPU time per round
//! trip can be measured apart from the clients'.
//!
//! The child is the benchmark binary itself, run as `PROGRAM serve-echo SIDE`.
//! It prints `listening ADDR`, then answers each `cpu` line on its standard
//! input with `cpu NANOSECONDS` (its whole CPU time so far), and exits when
//! its standard input closes.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{self, Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread;
use std::time::Duration;

use cpu_time::ProcessTime;

use crate::{Side, listen_loopback};

/// The parent's handle on a running echo server process. Dropping it kills
/// the process, so a failed run never leaves a server behind.
#[derive(Debug)]
pub struct ServerProcess {
    child: KillOnDrop,
    requests: ChildStdin,
    replies: BufReader<ChildStdout>,
    addr: SocketAddr,
}

impl ServerProcess {
    /// Starts `program serve-echo side` and waits until it listens. If it
    /// does not, the error includes what it said on its standard error.
    pub fn start(program: &Path, side: &str) -> io::Result<Self> {
        let mut child = KillOnDrop(
            Command::new(program)
                .args(["serve-echo", side])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()?,
        );
        let requests = child.0.stdin.take().expect("stdin is piped");
        let mut replies =
            BufReader::new(child.0.stdout.take().expect("stdout is piped"));
        let mut complaints = child.0.stderr.take().expect("stderr is piped");
        let addr = match read_reply(&mut replies, "listening") {
            Ok(addr) => addr,
            Err(err) => {
                let _ = child.0.kill();
                let mut said = String::new();
                let _ = complaints.read_to_string(&mut said);
                return Err(invalid(format!("{err}: {}", said.trim())));
            }
        };
        let addr = addr
            .parse()
            .map_err(|err| invalid(format!("server address {addr:?}: {err}")))?;
        // From here on, whatever the server complains about shows up as ours.
        thread::spawn(move || io::copy(&mut complaints, &mut io::stderr()));
        Ok(Self {
            child,
            requests,
            replies,
            addr,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// All the CPU time the server process has used so far.
    pub fn cpu_time(&mut self) -> io::Result<Duration> {
        writeln!(self.requests, "cpu")?;
        self.requests.flush()?;
        let nanos = read_reply(&mut self.replies, "cpu")?
            .parse()
            .map_err(|err| invalid(format!("server CPU time: {err}")))?;
        Ok(Duration::from_nanos(nanos))
    }

    /// The child's process id, for checking that it is gone.
    pub fn id(&self) -> u32 {
        self.child.0.id()
    }
}

/// The child process, killed and reaped when dropped.
#[derive(Debug)]
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads one `KEY VALUE` line from the child and returns the value.
fn read_reply(replies: &mut impl BufRead, key: &str) -> io::Result<String> {
    let mut line = String::new();
    if replies.read_line(&mut line)? == 0 {
        return Err(invalid(format!(
            "the echo server exited before saying `{key}`"
        )));
    }
    match line.trim_end().split_once(' ') {
        Some((found, value)) if found == key => Ok(value.to_owned()),
        _ => Err(invalid(format!(
            "expected `{key} ...` from the echo server, got {line:?}"
        ))),
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// The child's part: what `PROGRAM serve-echo SIDE` runs. Never returns
/// unless the server fails.
pub fn serve_echo_child(side: &Side) -> io::Result<()> {
    let listener = listen_loopback()?;
    println!("listening {}", listener.local_addr()?);
    thread::spawn(answer_parent);
    (side.serve_echo)(listener)
}

/// Answers the parent's questions on a thread of its own, beside the server,
/// and ends the process when the parent goes away.
fn answer_parent() {
    for line in io::stdin().lock().lines() {
        match line.as_deref() {
            Ok("cpu") => {
                println!("cpu {}", ProcessTime::now().as_duration().as_nanos());
            }
            Ok(_) => eprintln!("serve-echo: unknown request {line:?}"),
            Err(_) => break,
        }
    }
    process::exit(0);
}
