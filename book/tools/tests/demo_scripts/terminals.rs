//! The teacher's terminals, played by the test: each runs one program at a
//! time, the step's binary the harness built, and keeps what it printed,
//! standard output and error merged in the order written, as a terminal
//! shows them.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use workshop::pinned_trace;
use workshop_tests::server::RunningServer;
use workshop_tests::{DEMO_LIMIT, HANG_LIMIT, step_command};

use super::{Action, Run, in_order};

/// The address the room's server listens on, which the scripts quote.
const ROOMS_ADDRESS: &str = "127.0.0.1:3000";

/// The modes that run until the teacher stops them.
const SERVE: &str = "serve";
const CLIENT: &str = "client";

/// How often a wait looks again.
const TICK: Duration = Duration::from_millis(20);

/// The terminals of one demo, and the server one of them runs.
#[derive(Debug, Default)]
pub struct Demo {
    terminals: BTreeMap<u32, Terminal>,
    /// Where this demo's server listens, shown as `ROOMS_ADDRESS`.
    listening: Option<SocketAddr>,
}

/// One terminal: the command typed last, and its program while it runs.
#[derive(Debug, Default)]
struct Terminal {
    command: String,
    running: Option<Running>,
    /// What the last program printed, once it is over.
    printed: String,
    /// The last program's exit code, if it ended by itself.
    exit_code: Option<i32>,
}

#[derive(Debug)]
enum Running {
    Server(RunningServer),
    Program(Program),
}

/// A step's binary, its input a pipe the test types into.
#[derive(Debug)]
struct Program {
    child: Child,
    stdin: Option<ChildStdin>,
    printed: Arc<Mutex<String>>,
    reader: Option<JoinHandle<()>>,
}

impl Demo {
    /// Does what `action` says in `terminal`.
    pub fn act(&mut self, terminal: u32, action: &Action) -> Result<(), String> {
        let listening = self.listening;
        let term = self.terminals.entry(terminal).or_default();
        let here = format!("terminal {terminal}");
        match action {
            Action::Run(run) => {
                if term.running.is_some() {
                    return Err(format!(
                        "{here} still runs `{}`: stop it first",
                        term.command
                    ));
                }
                if let Some(addr) = term.run(run, listening)? {
                    self.listening = Some(addr);
                }
            }
            Action::EchoStatus => {
                let (None, Some(code)) = (&term.running, term.exit_code) else {
                    return Err(format!(
                        "`echo $?` in {here}, where no program has ended by itself"
                    ));
                };
                "echo $?".clone_into(&mut term.command);
                term.printed = format!("{code}\n");
            }
            Action::Type(line) => term
                .type_line(line, listening)
                .map_err(|err| format!("`{line}` typed in {here}, {err}"))?,
            Action::CtrlD => {
                let Some(Running::Program(program)) = &mut term.running else {
                    return Err(format!("Ctrl-D in {here}, where no client runs"));
                };
                program.stdin = None;
                term.end(HANG_LIMIT)?;
            }
            Action::CtrlC => {
                if term.running.is_none() {
                    return Err(format!("Ctrl-C in {here}, where nothing runs"));
                }
                term.stop(listening);
            }
        }
        Ok(())
    }

    /// Waits until `terminal` shows each of `quotes`, in order, and fails
    /// once its program is over without them, or after `HANG_LIMIT`.
    pub fn shows(&mut self, terminal: u32, quotes: &[&str]) -> Result<(), String> {
        let listening = self.listening;
        let term = self.terminals.entry(terminal).or_default();
        let began = Instant::now();
        loop {
            // Read before the output: a program over by then printed it all.
            let over = !term.is_running();
            let shown = term.shown(listening);
            let missing = match in_order(&shown, quotes) {
                Ok(()) => return Ok(()),
                Err(missing) => missing,
            };
            if over || began.elapsed() > HANG_LIMIT {
                return Err(format!(
                    "terminal {terminal}, after `{}`: {missing}; it shows:\n{shown}",
                    term.command
                ));
            }
            thread::sleep(TICK);
        }
    }

    /// Checks that no terminal runs a program any more.
    pub fn all_stopped(&mut self) -> Result<(), String> {
        for (number, term) in &mut self.terminals {
            if term.is_running() {
                return Err(format!(
                    "`{}` running in terminal {number}",
                    term.command
                ));
            }
        }
        Ok(())
    }
}

/// `serve` as the harness runs it: on a port of 127.0.0.1 the system
/// picks, for the room's default address.
fn start_server(run: &Run) -> Result<RunningServer, String> {
    if run.traced {
        return Err("a server runs untraced here".to_owned());
    }
    match run.args.get(1) {
        None => {}
        Some(addr) if addr == ROOMS_ADDRESS => {}
        Some(addr) => {
            return Err(format!(
                "`{addr}`: a script's server listens on {ROOMS_ADDRESS}, the room's"
            ));
        }
    }
    Ok(RunningServer::start(&run.package))
}

/// Where a `client` connects: the demo's server, named by the room's
/// address or by none.
fn client_address(
    run: &Run,
    listening: Option<SocketAddr>,
) -> Result<SocketAddr, String> {
    if run.args.get(1).is_some_and(|addr| addr != ROOMS_ADDRESS) {
        return Err(format!(
            "`{}`: a script's client talks to {ROOMS_ADDRESS}, the room's server",
            run.command_line()
        ));
    }
    listening.ok_or_else(|| "a client, and no server started before it".to_owned())
}

impl Terminal {
    /// Runs `run` here: a server or a client until it is stopped, anything
    /// else to its end, as the room waits for it before the next command.
    /// Returns a server's address.
    fn run(
        &mut self,
        run: &Run,
        listening: Option<SocketAddr>,
    ) -> Result<Option<SocketAddr>, String> {
        self.command = run.command_line();
        self.printed.clear();
        self.exit_code = None;
        let mut command = step_command(&run.package);
        if run.traced {
            command.env("LOOP_TRACE", "1");
        }
        // `serve` and `client` with an address or none; not `serve --help`.
        let mode = match &run.args[..] {
            [mode] => Some(mode.as_str()),
            [mode, addr] if !addr.starts_with('-') => Some(mode.as_str()),
            _ => None,
        };
        match mode {
            Some(SERVE) => {
                let server = start_server(run)?;
                let addr = server.addr();
                self.running = Some(Running::Server(server));
                return Ok(Some(addr));
            }
            Some(CLIENT) => {
                let addr = client_address(run, listening)?;
                command.args([CLIENT, &addr.to_string()]);
                self.running = Some(Running::Program(Program::start(command)?));
            }
            _ => {
                command.args(&run.args);
                self.running = Some(Running::Program(Program::start(command)?));
                self.end(DEMO_LIMIT)?;
            }
        }
        Ok(None)
    }

    /// Types `line` into the program that runs here.
    fn type_line(
        &mut self,
        line: &str,
        listening: Option<SocketAddr>,
    ) -> Result<(), String> {
        let Some(Running::Program(program)) = &mut self.running else {
            return Err("where no program reads it (a command is `cargo run -p \
                        stepNN ...`)"
                .to_owned());
        };
        let stdin = program.stdin.as_mut().expect("open until Ctrl-D");
        let typed = stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush());
        typed.map_err(|err| {
            format!(
                "where it fails: {err}; it shows:\n{}",
                self.shown(listening)
            )
        })
    }

    /// What the terminal shows, as the scripts quote it: the server's
    /// address as the room's, and the times redacted as the snapshots do.
    fn shown(&self, listening: Option<SocketAddr>) -> String {
        let mut printed = match &self.running {
            None => self.printed.clone(),
            Some(Running::Server(server)) => format!(
                "listening on {}\n{}{}",
                server.addr(),
                server.stdout(),
                server.stderr()
            ),
            Some(Running::Program(program)) => program.printed(),
        };
        if let Some(addr) = listening {
            let (host, port) = ROOMS_ADDRESS.split_once(':').expect("host:port");
            printed = printed.replace(&addr.to_string(), ROOMS_ADDRESS).replace(
                &format!("{} {}", addr.ip(), addr.port()),
                &format!("{host} {port}"),
            );
        }
        pinned_trace::redacted(&printed)
    }

    /// Whether a program runs here still: not over, or not read to its end.
    fn is_running(&mut self) -> bool {
        match &mut self.running {
            None => false,
            Some(Running::Server(server)) => server.is_running(),
            Some(Running::Program(program)) => {
                matches!(program.child.try_wait(), Ok(None))
                    || program.reader.as_ref().is_some_and(|r| !r.is_finished())
            }
        }
    }

    /// Waits, at most `limit`, for the program to end by itself, which it
    /// must do with exit code 0: the room would see any other as a failure.
    fn end(&mut self, limit: Duration) -> Result<(), String> {
        let Some(Running::Program(mut program)) = self.running.take() else {
            unreachable!("only a program ends by itself");
        };
        let began = Instant::now();
        let status = loop {
            match program.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if began.elapsed() < limit => thread::sleep(TICK),
                _ => {
                    self.printed = program.printed();
                    drop(program); // killed
                    return Err(format!(
                        "`{}` did not end within {} s; it printed:\n{}",
                        self.command,
                        limit.as_secs(),
                        self.printed
                    ));
                }
            }
        };
        if let Some(reader) = program.reader.take() {
            let _ = reader.join();
        }
        self.printed = program.printed();
        self.exit_code = status.code();
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "`{}` ended with {status}; it printed:\n{}",
                self.command, self.printed
            ))
        }
    }

    /// Stops the program at once, as Ctrl-C does, keeping what it printed.
    fn stop(&mut self, listening: Option<SocketAddr>) {
        let printed = self.shown(listening);
        if let Some(running) = self.running.take() {
            drop(running); // each kills its process, and waits for it
        }
        self.printed = printed;
        self.exit_code = None;
    }
}

impl Program {
    /// Starts `command`, its input piped, its two outputs merged into one
    /// pipe that a thread of its own reads.
    fn start(mut command: Command) -> Result<Program, String> {
        let shown = format!("{command:?}");
        let (reader, writer) = std::io::pipe().map_err(|err| err.to_string())?;
        let writer_too = writer.try_clone().map_err(|err| err.to_string())?;
        command
            .stdin(Stdio::piped())
            .stdout(writer_too)
            .stderr(writer);
        let mut child = command
            .spawn()
            .map_err(|err| format!("could not run {shown}: {err}"))?;
        drop(command); // our copies of the writer: the read ends with the child
        let printed = Arc::new(Mutex::new(String::new()));
        let appended = Arc::clone(&printed);
        let reader = thread::spawn(move || {
            let mut reader = BufReader::new(reader);
            let mut line = Vec::new();
            while matches!(reader.read_until(b'\n', &mut line), Ok(1..)) {
                appended
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push_str(&String::from_utf8_lossy(&line));
                line.clear();
            }
        });
        Ok(Program {
            stdin: child.stdin.take(),
            child,
            printed,
            reader: Some(reader),
        })
    }

    fn printed(&self) -> String {
        self.printed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Program {
    /// A failing script leaves no program behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
