//! The programs under a shell, as a participant runs them from the README:
//! piped into `head`, asked for `--help`, given a host name, talked to with
//! the workshop's own client, and next to the book's `mdbook serve`. And the
//! repository's prose, which must speak only of the repository.

use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use workshop_tests::read_text;
use workshop_tests::server::RunningServer;
use workshop_tests::{HANG_LIMIT, run_step, step_command, within, workspace_root};

const STEPS: [&str; 8] = [
    "step01", "step02", "step03", "step04", "step05", "step06", "step07", "step08",
];

/// The steps with `serve` and `client` modes.
const SERVING_STEPS: [&str; 3] = ["step04", "step07", "step08"];

/// Runs `package`'s demo with its stdout a pipe that is closed once
/// `lines` lines were read from it (at once, before the demo starts, for 0).
fn run_with_stdout_closed_after(package: &str, lines: usize) -> Output {
    let mut command = step_command(package);
    command.stdin(Stdio::null()).stderr(Stdio::piped());
    let mut child = if lines == 0 {
        let (reader, writer) = io::pipe().expect("a pipe");
        drop(reader);
        command.stdout(writer).spawn()
    } else {
        command.stdout(Stdio::piped()).spawn()
    }
    .unwrap_or_else(|err| panic!("could not start {package}: {err}"));
    if let Some(stdout) = child.stdout.take() {
        let mut stdout = BufReader::new(stdout);
        for _ in 0..lines {
            stdout.read_line(&mut String::new()).expect("a line");
        }
    }
    within(HANG_LIMIT, move || {
        child.wait_with_output().expect("it ends")
    })
}

fn assert_ends_quietly(package: &str, lines: usize, output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "{package}, stdout closed after {lines} lines, panicked:\n{stderr}"
    );
    let code = output.status.code();
    assert!(
        code.is_some() && code != Some(101) && code != Some(134),
        "{package}, stdout closed after {lines} lines, ended with {:?}:\n{stderr}",
        output.status
    );
}

#[test]
fn a_demo_whose_stdout_is_closed_ends_quietly() {
    for package in STEPS {
        let output = run_with_stdout_closed_after(package, 0);
        assert_ends_quietly(package, 0, &output);
    }
}

/// `cargo run -p step06 | head -n 2`: the pipe closes while the demo's
/// tasks are alive, and their destructors print as they are dropped.
#[test]
fn a_demo_piped_into_head_ends_quietly() {
    for package in &STEPS[2..] {
        let output = run_with_stdout_closed_after(package, 2);
        assert_ends_quietly(package, 2, &output);
    }
}

#[test]
fn help_prints_the_usage_and_succeeds() {
    for package in STEPS {
        for flag in ["--help", "-h"] {
            let transcript = run_step(package, &[flag]);
            assert_eq!(transcript.exit_code, Some(0), "{transcript}");
            assert!(
                transcript
                    .stdout
                    .starts_with(&format!("usage: cargo run -p {package} [")),
                "{transcript}"
            );
            assert!(transcript.stdout.contains("--help"), "{transcript}");
            assert_eq!(transcript.stderr, "", "{transcript}");
        }
    }
}

#[test]
fn help_says_what_each_mode_does_and_its_default_address() {
    for package in SERVING_STEPS {
        let help = run_step(package, &["--help"]).stdout;
        for wanted in [
            "serve [ADDR]       the echo server alone, on ADDR (127.0.0.1:3000)",
            "client [ADDR]      type lines to the echo server at ADDR (127.0.0.1:3000)",
            "serve-slow [ADDR]  seed 002's slow server, on ADDR (127.0.0.1:8080)",
        ] {
            assert!(
                help.contains(wanted),
                "{package} --help lacks `{wanted}`:\n{help}"
            );
        }
    }
}

#[test]
fn each_mode_answers_help_with_its_own_usage() {
    for package in SERVING_STEPS {
        for mode in ["serve", "client", "serve-slow"] {
            for flag in ["--help", "-h"] {
                let transcript = run_step(package, &[mode, flag]);
                assert_eq!(transcript.exit_code, Some(0), "{transcript}");
                let usage =
                    format!("usage: cargo run -p {package} -- {mode} [ADDR]");
                assert!(transcript.stdout.starts_with(&usage), "{transcript}");
                assert!(transcript.stderr.is_empty(), "{transcript}");
            }
        }
    }
}

#[test]
fn the_usage_names_the_client_mode() {
    for package in SERVING_STEPS {
        let transcript = run_step(package, &["--help"]);
        assert!(transcript.stdout.contains("client [ADDR]"), "{transcript}");
    }
}

/// Says "hello" to `server` through `package`'s `client` mode, and returns
/// what the client printed.
fn hello_through_the_client(package: &str, addr: &str) -> String {
    let mut client = step_command(package)
        .args(["client", addr])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("could not start {package}'s client: {err}"));
    let mut stdin = client.stdin.take().expect("stdin is piped");
    stdin
        .write_all(b"hello\n")
        .expect("the client reads its input");
    drop(stdin); // the end of input: the client closes its sending side
    let output =
        within(HANG_LIMIT, move || client.wait_with_output().expect("ends"));
    assert!(
        output.status.success(),
        "{package} client {addr}: {:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_client_mode_talks_to_the_echo_server() {
    for package in SERVING_STEPS {
        let server = RunningServer::start(package);
        let said = hello_through_the_client(package, &server.addr().to_string());
        assert_eq!(said, "Got: hello\n", "{package}'s client");
    }
}

/// `package`'s client, talking to `addr`, with its three streams piped.
fn spawn_client(package: &str, addr: SocketAddr) -> Child {
    step_command(package)
        .args(["client", &addr.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("could not start {package}'s client: {err}"))
}

#[test]
fn the_client_ends_quietly_when_its_own_output_closes() {
    for package in SERVING_STEPS {
        let server = RunningServer::start(package);
        let mut client = spawn_client(package, server.addr());
        let mut stdin = client.stdin.take().expect("piped");
        let mut stdout = BufReader::new(client.stdout.take().expect("piped"));
        stdin.write_all(b"one\n").expect("the client reads");
        let mut first = String::new();
        stdout.read_line(&mut first).expect("a reply");
        assert_eq!(first, "Got: one\n");
        drop(stdout); // `client | head -n 1`: the reader is gone
        // The next reply has nowhere to go. But a process that another test
        // starts at that moment holds a copy of the pipe's reader until it
        // runs its program, and a reply may still find that copy: so send
        // lines until the client ends (their replies failing), for at most
        // ten seconds.
        let output = within(HANG_LIMIT, move || {
            for _ in 0..200 {
                if matches!(client.try_wait(), Ok(Some(_))) {
                    break;
                }
                let _ = stdin.write_all(b"again\n");
                thread::sleep(Duration::from_millis(50));
            }
            drop(stdin);
            client.wait_with_output().expect("ends")
        });
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.is_empty(), "{package}'s client said:\n{stderr}");
        assert_eq!(
            output.status.code(),
            Some(141),
            "{package}: {:?}",
            output.status
        );
    }
}

#[test]
fn the_client_says_so_when_the_server_goes_away() {
    for package in SERVING_STEPS {
        let mut server = RunningServer::start(package);
        let mut client = spawn_client(package, server.addr());
        let mut stdin = client.stdin.take().expect("piped");
        let mut stdout = BufReader::new(client.stdout.take().expect("piped"));
        stdin.write_all(b"hello\n").expect("the client reads");
        let mut reply = String::new();
        stdout.read_line(&mut reply).expect("a reply");
        assert_eq!(reply, "Got: hello\n");
        server.kill(); // in the middle of the session: stdin is still open
        let output =
            within(HANG_LIMIT, move || client.wait_with_output().expect("ends"));
        drop(stdin);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{package}: {:?}", output.status);
        assert!(
            stderr.contains("the server closed the connection"),
            "{package}'s client said:\n{stderr}"
        );
    }
}

/// Linux's `/dev/full`, where every write fails (no space left on the
/// device), to be a program's stderr.
#[cfg(target_os = "linux")]
fn dev_full() -> fs::File {
    fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("Linux's /dev/full")
}

/// Runs `command` with its stderr at `/dev/full` and returns its status.
#[cfg(target_os = "linux")]
fn status_with_stderr_full(mut command: std::process::Command) -> Option<i32> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(dev_full());
    within(HANG_LIMIT, move || command.status().expect("it runs")).code()
}

// `eprintln!` panics on a stderr that cannot take its line, and the
// program then ends with a panic's 101 instead of its own status.
#[cfg(target_os = "linux")]
#[test]
fn an_error_said_to_a_full_stderr_still_ends_with_its_own_status() {
    for package in ["step05", "step06", "step07", "step08"] {
        let lost_wake_up = workshop_tests::example_command(
            package,
            &format!("{package}_lost_wake_up"),
        );
        assert_eq!(
            status_with_stderr_full(lost_wake_up),
            Some(1),
            "{package}'s lost_wake_up, 2>/dev/full"
        );
    }
    let taken =
        std::net::TcpListener::bind("127.0.0.1:0").expect("a port of our own");
    let taken = taken.local_addr().expect("its address").to_string();
    for package in SERVING_STEPS {
        let mut port_in_use = step_command(package);
        port_in_use.args(["serve", &taken]);
        assert_eq!(
            status_with_stderr_full(port_in_use),
            Some(1),
            "{package} serve {taken}, 2>/dev/full"
        );
        let mut bogus = step_command(package);
        bogus.arg("--bogus");
        assert_eq!(
            status_with_stderr_full(bogus),
            Some(2),
            "{package} --bogus, 2>/dev/full"
        );
    }
}

#[test]
fn serve_and_client_resolve_a_host_name() {
    for package in SERVING_STEPS {
        let server = RunningServer::start_on(package, "localhost:0");
        let addr = format!("localhost:{}", server.addr().port());
        let said = hello_through_the_client(package, &addr);
        assert_eq!(said, "Got: hello\n", "{package} on {addr}");
    }
}

/// The shortest delay of seed 002's slow server; the demo's longest is 0.2 s.
const SEED_002_SHORTEST: Duration = Duration::from_millis(500);

/// `serve-slow` speaks seed 002's protocol, so that the seed's Python
/// clients run against it unchanged: a bare `request` (no newline) gets a
/// bare `response`, after one of the seed's delays, not the demo's.
#[test]
fn serve_slow_answers_the_seeds_request_after_the_seeds_delay() {
    for package in SERVING_STEPS {
        let server = RunningServer::start_slow(package);
        let mut stream = TcpStream::connect(server.addr()).expect("it connects");
        let start = Instant::now();
        stream.write_all(b"request").expect("the request goes out");
        let response = within(HANG_LIMIT, move || {
            let mut response = Vec::new();
            stream.read_to_end(&mut response).map(|_| response)
        });
        let waited = start.elapsed();
        let response = response.expect("the response comes back");
        assert_eq!(
            String::from_utf8_lossy(&response),
            "response",
            "{package} serve-slow; stderr: {}",
            server.stderr()
        );
        assert!(
            waited >= SEED_002_SHORTEST,
            "{package} serve-slow answered after {waited:?}, sooner than the \
             seed's shortest delay"
        );
    }
}

#[test]
fn the_usage_names_the_serve_slow_mode() {
    for package in SERVING_STEPS {
        let transcript = run_step(package, &["--help"]);
        assert!(
            transcript.stdout.contains("serve-slow [ADDR]"),
            "{transcript}"
        );
    }
}

#[test]
fn a_host_name_that_does_not_resolve_is_a_usage_error() {
    for package in SERVING_STEPS {
        for mode in ["serve", "client", "serve-slow"] {
            let transcript = run_step(package, &[mode, "no-such-host.invalid:3000"]);
            assert_eq!(transcript.exit_code, Some(2), "{transcript}");
            assert_eq!(transcript.stdout, "", "{transcript}");
            let stderr = transcript.stderr.trim_end();
            assert!(
                stderr.starts_with(
                    "error: no address to use in 'no-such-host.invalid:3000'"
                ) && !stderr.contains('\n'),
                "{transcript}"
            );
        }
    }
}

/// The ports the serve modes take when given no address: `serve`'s
/// (`DEFAULT_ADDR`) and `serve-slow`'s (`SLOW_ADDR`).
fn serve_default_ports(package_dir: &str) -> Vec<u16> {
    let main = read_text(&workspace_root().join(package_dir).join("src/main.rs"));
    let ports: Vec<u16> = [
        "const DEFAULT_ADDR: &str = \"",
        "const SLOW_ADDR: &str = \"",
    ]
    .iter()
    .filter_map(|prefix| main.lines().find_map(|line| line.strip_prefix(prefix)))
    .map(|line| {
        let addr = line.trim_end_matches("\";");
        addr.rsplit_once(':')
            .and_then(|(_, port)| port.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("{package_dir}: no port in {addr:?}"))
    })
    .collect();
    assert_eq!(
        ports.len(),
        2,
        "{package_dir}/src/main.rs: DEFAULT_ADDR, SLOW_ADDR"
    );
    ports
}

/// The port an `mdbook serve` command line asks for, if it names one.
fn mdbook_port(command: &str) -> Option<u16> {
    let mut words = command.split_whitespace();
    while let Some(word) = words.next() {
        if let Some(port) = word.strip_prefix("--port=") {
            return port.parse().ok();
        }
        if word == "--port" || word == "-p" {
            return words.next()?.parse().ok();
        }
    }
    None
}

/// Every Markdown file of the docs: the README, CONTRIBUTING and the book.
fn docs() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut docs = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    docs.extend(files_under(&root.join("book/src"), &["md"]));
    docs
}

/// The README says to read the book beside the code, and to run the serve
/// modes: `mdbook serve` must not take the port they take by default.
#[test]
fn the_docs_give_mdbook_a_port_the_serve_modes_leave_free() {
    let taken: Vec<u16> = ["step04-select-echo", "step07-io", "step08-cancel"]
        .into_iter()
        .flat_map(serve_default_ports)
        .collect();
    let mut found = 0;
    let mut problems = Vec::new();
    for doc in docs() {
        for (number, line) in read_text(&doc).lines().enumerate() {
            let Some(at) = line.find("mdbook serve") else {
                continue;
            };
            found += 1;
            let command = &line[at..];
            let place = format!("{}:{}", doc.display(), number + 1);
            match mdbook_port(command) {
                None => problems.push(format!(
                    "{place}: `{command}` takes mdBook's default port, 3000"
                )),
                Some(port) if taken.contains(&port) => problems.push(format!(
                    "{place}: `{command}` takes the serve modes' port"
                )),
                Some(_) => {}
            }
        }
    }
    assert!(
        found > 0,
        "no `mdbook serve` in the docs: is this test stale?"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Text files under `dir` whose names end in one of `extensions`, skipping
/// build output.
fn files_under(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return files;
    };
    for entry in entries {
        let path = entry.expect("a readable folder").path();
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("");
        if path.is_dir() {
            if !matches!(name, "target" | ".git" | "node_modules" | "book") {
                files.extend(files_under(&path, extensions));
            }
        } else if extensions
            .iter()
            .any(|ext| path.extension().is_some_and(|found| found == *ext))
        {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// A reader cannot follow a reference to a tracker the repository does not
/// ship: "the workloads of issue 7" says nothing to them. The word alone,
/// in code or prose, and a reference that names its repository
/// ("rust-lang/cargo#6313", a link to it) are fine: those can be followed.
#[test]
fn the_repository_speaks_only_of_itself() {
    let root = workspace_root();
    let this_file = root.join("tests/tests/shell.rs");
    let mut problems = Vec::new();
    let mut files = files_under(&root, &["md", "rs", "py", "toml", "yml", "sh"]);
    files.extend(files_under(&root.join("book/src"), &["md"]));
    files.push(root.join(".ci/run"));
    for file in files.into_iter().filter(|file| *file != this_file) {
        for (number, line) in read_text(&file).lines().enumerate() {
            if cites_a_tracker_number(line) {
                let place = file.strip_prefix(&root).unwrap_or(&file).display();
                problems.push(format!("{place}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Whether `line` cites a tracker's number without naming its repository:
/// "issue 7", "Issue #43", "issues 41 and 45".
/// A link (".../issues/6313") names its repository, so it is not one.
fn cites_a_tracker_number(line: &str) -> bool {
    let line = line.to_lowercase();
    let starts_a_word = |at: usize| {
        !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '/')
    };
    line.match_indices("issue").any(|(at, word)| {
        let rest = &line[at + word.len()..];
        let after = rest.strip_prefix('s').unwrap_or(rest);
        let number = after.trim_start().trim_start_matches('#');
        starts_a_word(at)
            && after.starts_with([' ', '#'])
            && number.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[test]
fn a_tracker_number_is_caught_and_the_word_alone_is_not() {
    for line in [
        "the workloads of issue 7",
        "// Issue #43: the first command warns.",
        "as issues 41 and 45 ask",
    ] {
        assert!(cites_a_tracker_number(line), "not caught: {line}");
    }
    for line in [
        "// an open issue upstream (rust-lang/cargo#6313)",
        "// https://github.com/rust-lang/cargo/issues/6313",
        "let issue_count = lines.len();",
        "fn issues() -> Vec<String> {",
        "This is a known issue of Cargo's, not the workshop's.",
    ] {
        assert!(!cites_a_tracker_number(line), "caught: {line}");
    }
}
