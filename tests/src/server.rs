//! A step's real server, running in `serve` mode for a test to talk to, and
//! (on Linux) what `/proc` tells about it: CPU time, memory, open
//! descriptors.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::step_command;

/// How long a server may take to print its address.
const STARTUP_LIMIT: Duration = Duration::from_secs(30);

/// `package`'s binary running `serve 127.0.0.1:0` (or another mode or address), on
/// the port the OS picked. Dropping it kills the process, so a failing assertion never
/// leaves a server behind.
#[derive(Debug)]
pub struct RunningServer {
    child: Child,
    addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
    /// What it printed after its address.
    stdout: Arc<Mutex<String>>,
}

impl RunningServer {
    /// Starts `package`'s server and waits until it says where it listens.
    pub fn start(package: &str) -> RunningServer {
        Self::start_under(package, &[])
    }

    /// The same, run by `wrapper` (a program and its arguments that then
    /// runs the server, such as `prlimit --nofile=16:16`). The wrapper must
    /// replace itself with the server (exec), so the pid is the server's.
    pub fn start_under(package: &str, wrapper: &[&str]) -> RunningServer {
        Self::launch(package, wrapper, "serve", "127.0.0.1:0", Stdio::piped())
    }

    /// The same, with the server's stderr going to `stderr` (a full file, a
    /// pipe no one reads) instead of to the test: `stderr()` is then empty.
    pub fn start_with_stderr(
        package: &str,
        wrapper: &[&str],
        stderr: impl Into<Stdio>,
    ) -> RunningServer {
        Self::launch(package, wrapper, "serve", "127.0.0.1:0", stderr.into())
    }

    /// `package`'s server on `addr`, as a participant would type it: a host
    /// name or an address, and a port.
    pub fn start_on(package: &str, addr: &str) -> RunningServer {
        Self::launch(package, &[], "serve", addr, Stdio::piped())
    }

    /// `package`'s slow server, `serve-slow 127.0.0.1:0`: seed 002's.
    pub fn start_slow(package: &str) -> RunningServer {
        Self::launch(package, &[], "serve-slow", "127.0.0.1:0", Stdio::piped())
    }

    fn launch(
        package: &str,
        wrapper: &[&str],
        mode: &str,
        addr: &str,
        stderr_to: Stdio,
    ) -> RunningServer {
        let server = step_command(package);
        let mut command = match wrapper.split_first() {
            None => Command::new(server.get_program()),
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(server.get_program());
                command
            }
        };
        command
            .args([mode, addr])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr_to);
        let mut child = crate::spawn(&mut command)
            .unwrap_or_else(|err| panic!("could not start {package}: {err}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(piped) = child.stderr.take() {
            drain_into(piped, stderr.clone());
        }
        // Dropped at once if the server fails first: the test reports it.
        let mut server = RunningServer {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            stderr,
            stdout: Arc::default(),
        };
        server.addr = server.read_address(stdout);
        server
    }

    /// Reads the `listening on ADDR` line, then keeps reading stdout on a
    /// thread of its own so the server never blocks on a full pipe.
    fn read_address(&mut self, stdout: impl Read + Send + 'static) -> SocketAddr {
        let (first_line, receive) = mpsc::channel();
        let rest = Arc::clone(&self.stdout);
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let read = reader.read_line(&mut line);
            let _ = first_line.send(matches!(read, Ok(1..)).then_some(line));
            append_all(reader, &rest);
        });
        let Ok(Some(line)) = receive.recv_timeout(STARTUP_LIMIT) else {
            panic!(
                "the server printed no address; its stderr: {}",
                self.stderr()
            );
        };
        line.trim_end()
            .strip_prefix("listening on ")
            .and_then(|addr| addr.parse().ok())
            .unwrap_or_else(|| panic!("expected `listening on ADDR`, got {line:?}"))
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server has written to stdout so far, after its address.
    pub fn stdout(&self) -> String {
        self.stdout.lock().expect("not poisoned").clone()
    }

    /// Everything the server has written to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("not poisoned").clone()
    }

    /// Whether the process is still running (it has not crashed or exited).
    /// Ends the server at once, as a crash would: its clients see their
    /// connections closed by the system.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn drain_into(stream: impl Read + Send + 'static, text: Arc<Mutex<String>>) {
    thread::spawn(move || append_all(stream, &text));
}

/// Appends what `stream` gives to `text` until it ends.
fn append_all(mut stream: impl Read, text: &Mutex<String>) {
    let mut chunk = [0; 1024];
    while let Ok(n @ 1..) = stream.read(&mut chunk) {
        let mut text = text.lock().expect("not poisoned");
        text.push_str(&String::from_utf8_lossy(&chunk[..n]));
    }
}

/// Checks `condition` every 10 ms until it holds or `limit` has passed;
/// says whether it held.
pub fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if condition() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// What Linux's `/proc` says about a running process.
// Linux only: macOS and Windows have no `/proc`.
#[cfg(target_os = "linux")]
pub mod proc {
    use std::fs;
    use std::time::Duration;

    /// CPU time (user + system) the process has used so far.
    pub fn cpu_time(pid: u32) -> Duration {
        let stat =
            fs::read_to_string(format!("/proc/{pid}/stat")).expect("a live pid");
        // The command name, in parentheses, may hold spaces: count fields
        // after its closing parenthesis. utime and stime are fields 14, 15.
        let after_name = &stat[stat.rfind(')').expect("a command name") + 2..];
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let ticks: u64 = fields[11].parse::<u64>().expect("utime")
            + fields[12].parse::<u64>().expect("stime");
        // /proc counts in USER_HZ, which Linux fixes at 100 on every
        // architecture, whatever the kernel's own tick rate.
        Duration::from_millis(ticks * 10)
    }

    /// Resident memory, in KiB (`VmRSS`).
    pub fn resident_kib(pid: u32) -> u64 {
        status_field(pid, "VmRSS:")
    }

    /// How many times the process has blocked (in `poll`, `sleep`, a read):
    /// each is a voluntary context switch, and a process that sleeps until
    /// something happens makes none while nothing does.
    pub fn voluntary_switches(pid: u32) -> u64 {
        status_field(pid, "voluntary_ctxt_switches:")
    }

    /// How many file descriptors the process has open.
    pub fn open_descriptors(pid: u32) -> usize {
        fs::read_dir(format!("/proc/{pid}/fd"))
            .expect("a live pid")
            .count()
    }

    /// The number the process's next new descriptor would get: it may open
    /// none when that reaches its limit. (Counting them would not say: it
    /// may have inherited descriptors numbered above its limit.)
    pub fn lowest_free_descriptor(pid: u32) -> usize {
        let open: Vec<usize> = fs::read_dir(format!("/proc/{pid}/fd"))
            .expect("a live pid")
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        (0..=open.len())
            .find(|n| !open.contains(n))
            .expect("one of len + 1 numbers is free")
    }

    /// A number from `/proc/<pid>/status`, its unit (if any) dropped.
    fn status_field(pid: u32, name: &str) -> u64 {
        let status =
            fs::read_to_string(format!("/proc/{pid}/status")).expect("a live pid");
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|value| {
                value.trim().trim_end_matches("kB").trim().parse().ok()
            })
            .unwrap_or_else(|| panic!("no {name} line in /proc/{pid}/status"))
    }
}
