//! `LOOP_TRACE=1`: every step from 2 on writes a line per phase of each turn
//! on stderr. These tests parse those lines, check that each step's phases
//! appear and that nothing is written when the variable is unset, and pin
//! the turn walks the chapters include (`trace-stepNN.snap`). They also
//! check the trace's manners: the values that turn it on and off, a slow
//! callback or poll and a busy task named, repeated turns folded, and a
//! stderr nobody reads costing trace lines, not a server's clients.
//!
//! No pinned trace may depend on how late a busy machine runs: each scene
//! is callbacks, yields and sockets on one thread, timers set one after
//! another, timers that share one deadline, or deadlines 0.5 s apart, so a
//! late wake-up changes only the times, which are redacted.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use workshop::pinned_trace;
use workshop_tests::{HANG_LIMIT, snapshot_settings, step_command};
use workshop_tests::{merged_output, merged_output_until, traced_demo_until};
use workshop_tests::{traced_output, traced_scene};

/// Only stderr, for the tests that parse every line.
fn traced_stderr(package: &str, trace: Option<&str>) -> String {
    let mut command = step_command(package);
    if let Some(value) = trace {
        command.env("LOOP_TRACE", value);
    }
    let output = command.output().expect("the step runs");
    assert!(output.status.success(), "{package} failed");
    String::from_utf8(output.stderr).expect("stderr is UTF-8")
}

/// A trace line, parsed: `[+S.SSS s] turn N: what` (`run: what` in step 2).
#[derive(Debug)]
struct Line {
    turn: Option<u64>,
    what: String,
}

fn parse(line: &str) -> Option<Line> {
    let rest = line.strip_prefix("[+")?;
    let (seconds, rest) = rest.split_once(" s] ")?;
    let (whole, millis) = seconds.split_once('.')?;
    whole.parse::<u64>().ok()?;
    (millis.len() == 3 && millis.parse::<u64>().is_ok()).then_some(())?;
    if let Some(what) = rest.strip_prefix("run: ") {
        return Some(Line {
            turn: None,
            what: what.to_owned(),
        });
    }
    let (turn, what) = rest.strip_prefix("turn ")?.split_once(": ")?;
    Some(Line {
        turn: Some(turn.parse().ok()?),
        what: what.to_owned(),
    })
}

/// Every trace line of `stderr` (lines that start as one must parse), with
/// turns that only ever count up, or start again at 1 on a new loop.
fn trace_lines(stderr: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    for text in stderr.lines().filter(|line| line.starts_with("[+")) {
        let line = parse(text).unwrap_or_else(|| panic!("unparsable: {text}"));
        if let (Some(last), Some(turn)) =
            (lines.last().and_then(|l: &Line| l.turn), line.turn)
        {
            let new_loop = turn == 1;
            assert!(
                turn >= last || new_loop,
                "turn {turn} after turn {last}: {text}"
            );
        }
        lines.push(line);
    }
    lines
}

/// `package`'s demo with `LOOP_TRACE=1`, stdout and stderr merged, run once
/// for the whole test process: the demos wait on real timers for up to 4 s,
/// and six tests read each one's trace. Tests that ask for the same demo at
/// once wait for the one run.
fn traced_demo(package: &'static str) -> &'static str {
    type Runs = BTreeMap<&'static str, &'static OnceLock<&'static str>>;
    static RUNS: Mutex<Runs> = Mutex::new(BTreeMap::new());
    let run: &OnceLock<&str> = RUNS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(package)
        .or_insert_with(|| Box::leak(Box::default()));
    run.get_or_init(|| traced_output(package, &[]).leak())
}

/// Checks that `package`'s traced demo has a line starting with each of
/// `phases`. (That the demos write no trace line when `LOOP_TRACE` is
/// unset is pinned by their snapshots, which hold stderr; the values that
/// turn it off are tried on step 2 below.)
fn assert_phases(package: &'static str, phases: &[&str]) {
    let lines = trace_lines(traced_demo(package));
    assert!(!lines.is_empty(), "{package} traced nothing");
    let missing: Vec<&&str> = phases
        .iter()
        .filter(|phase| !lines.iter().any(|line| line.what.starts_with(**phase)))
        .collect();
    assert!(missing.is_empty(), "{package}: no line for {missing:?}");
}

const TURN_PHASES: [&str; 4] = ["wait ", "waited ", "timer due: ", "ran "];

#[test]
fn step02_traces_each_callback() {
    assert_phases("step02", &["callback 1 (2 more ready)"]);
}

#[test]
fn step03_traces_waits_timers_and_runs() {
    // The polling sleep's turns each find a callback ready: `wait_time`
    // says zero for them (`None` would be "for ever", which step 3's `run`
    // reads as no wait at all, so only the trace can tell).
    let ready = ["wait 0 s: a callback is ready", "wait: nothing to wait for"];
    assert_phases("step03", &[&TURN_PHASES[..], &ready].concat());
}

#[test]
fn step04_traces_sockets() {
    assert_phases("step04", &[&TURN_PHASES[..], &["socket "]].concat());
}

#[test]
fn step05_traces_woken_tasks_and_polls() {
    let tasks = [
        "task 0 woken: polled this turn",
        "poll task 0: pending",
        "poll task 0: done",
    ];
    assert_phases("step05", &[&TURN_PHASES[..], &tasks].concat());
}

#[test]
fn step06_traces_a_panicked_poll() {
    assert_phases(
        "step06",
        &[&TURN_PHASES[..], &["poll task 1: panicked"]].concat(),
    );
}

#[test]
fn step07_traces_which_task_a_socket_wakes() {
    let sockets = [
        "socket 1 readable: wakes task 1 (read)",
        "socket 0 writable: nobody waits",
    ];
    assert_phases("step07", &[&TURN_PHASES[..], &sockets].concat());
}

#[test]
fn step08_traces_cancelled_tasks() {
    // No scene meets `timer cancelled: skipped` any more: the timeout's
    // cancelled timer would come up at the start of the turn after the
    // last poll, and `block_on` returns in the turn that polls its task.
    let cancelled = ["poll task 1: cancelled: dropped unpolled"];
    assert_phases("step08", &[&TURN_PHASES[..], &cancelled].concat());
}

#[test]
fn every_off_value_turns_the_trace_off() {
    for off in [None, Some(""), Some("0"), Some("false"), Some("off")]
        .into_iter()
        .chain([Some("no"), Some("FALSE"), Some("Off"), Some("NO")])
    {
        let stderr = traced_stderr("step02", off);
        assert!(stderr.is_empty(), "LOOP_TRACE={off:?} wrote:\n{stderr}");
    }
}

#[test]
fn every_on_value_turns_the_trace_on() {
    for on in ["1", "true", "on", "yes", "TRUE", "On"] {
        let stderr = traced_stderr("step02", Some(on));
        assert!(
            stderr.starts_with("[+") && !trace_lines(&stderr).is_empty(),
            "LOOP_TRACE={on} wrote:\n{stderr}"
        );
    }
}

#[test]
fn an_unknown_value_is_named_once_and_traces() {
    // Step 6's demo makes three loops: the notice comes once, not per loop.
    let stderr = traced_stderr("step06", Some("verbose"));
    let notices = stderr
        .lines()
        .filter(|line| line.contains(r#"LOOP_TRACE="verbose" is not a value"#))
        .count();
    assert_eq!(notices, 1, "{stderr}");
    assert!(!trace_lines(&stderr).is_empty(), "{stderr}");
}

#[test]
fn step03_polling_sleep_folds_its_repeated_turns() {
    // Before folding, the polling sleep wrote some 60,000 turns of three
    // lines each in its 0.5 s; folded, it is two turns and one line.
    let stderr = traced_demo("step03");
    let lines = trace_lines(stderr);
    assert!(lines.len() < 100, "{} trace lines", lines.len());
    let folded: Vec<u64> = lines
        .iter()
        .filter_map(|line| {
            let count = line.what.strip_prefix("… ")?;
            let count = count.strip_suffix(" more turns like this")?;
            count.replace(',', "").parse().ok()
        })
        .collect();
    // One fold line, unless a busy machine held a turn past 100 ms: its
    // line breaks the run of repeats in two.
    assert!(
        !folded.is_empty() && folded.iter().sum::<u64>() > 100,
        "folded: {folded:?}\n{stderr}"
    );
}

/// `package`'s traced demo, read until the parts titled `titles` are whole
/// (the rest would cost a test the demo's whole time: step 7's is 3 s),
/// or under `check` (`STOP_AT_A_DIFFERENCE`) until they differ from the
/// pinned `name`: a loop that lost a wake-up hangs the demo right after.
fn traced_parts(package: &str, titles: &[&str], name: &str) -> String {
    let pinned = std::env::var_os(pinned_trace::STOP_AT_A_DIFFERENCE)
        .and_then(|_| {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
            std::fs::read_to_string(dir.join(format!("{name}.snap"))).ok()
        })
        .map(|file| pinned_trace::snapshot_contents(&file));
    let output = traced_demo_until(package, |output| {
        let whole = titles
            .iter()
            .all(|title| pinned_trace::section_complete(output, title));
        whole
            || pinned.as_deref().is_some_and(|pinned| {
                !agrees_so_far(&pinned_part(output, titles), pinned)
            })
    });
    parts(&output, titles)
}

/// The parts titled `titles` of `output` that have begun, one after
/// another, a blank line between.
fn parts(output: &str, titles: &[&str]) -> String {
    let parts: Vec<String> = titles
        .iter()
        .filter_map(|title| pinned_trace::section(output, title))
        .collect();
    parts.join("\n")
}

/// `parts`, as pinned: times redacted.
fn pinned_part(output: &str, titles: &[&str]) -> String {
    pinned_trace::redacted(&parts(output, titles))
}

/// Whether `so_far` still agrees with `pinned`: every line of the loop's
/// trace (`[+…`) and every heading is the pinned one in its place. Other
/// lines may be the participant's own prints (a `dbg!`), which `check`
/// tells apart from the loop's, and are passed over: stopped at one, the
/// trace would seem to lack everything after it.
fn agrees_so_far(so_far: &str, pinned: &str) -> bool {
    let mut pinned = pinned.lines().peekable();
    for line in so_far.lines() {
        if pinned.peek() == Some(&line) {
            pinned.next();
        } else if line.starts_with("[+") || line.starts_with("== ") {
            return false;
        }
    }
    true
}

#[test]
fn a_program_read_until_enough_is_stopped_there() {
    // The server never ends by itself: read to its end, this test would
    // never end either.
    let mut command = step_command("step07");
    command.args(["serve", "127.0.0.1:0"]);
    let output =
        merged_output_until(command, |output| output.starts_with("listening on"));
    assert!(output.starts_with("listening on 127.0.0.1:"), "{output}");
}

#[test]
fn a_trace_agrees_so_far_while_each_line_is_the_pinned_one() {
    let pinned = "== part ==\n[+#.### s] turn 1: a\nsaid\n[+#.### s] turn 1: b\n";
    let (first, rest) = pinned.split_at(pinned.find("said").expect("a line"));
    assert!(agrees_so_far(first, pinned));
    assert!(agrees_so_far(pinned, pinned));
    // A print of the participant's among the loop's lines is passed over.
    let printed = format!("{first}[src/lib.rs:8:9] x = 1\n{rest}");
    assert!(agrees_so_far(&printed, pinned));
    let other = pinned.replace("turn 1: b", "turn 1: c");
    assert!(!agrees_so_far(&other, pinned));
    assert!(!agrees_so_far(
        &format!("{pinned}[+#.### s] turn 2: d\n"),
        pinned
    ));
}

/// Pins `trace` as `<name>.snap`, in the form `pinned_trace::redacted`
/// gives it: times redacted, and lines naming a callback or poll that held
/// the loop left out (a busy machine can keep any of them from the CPU for
/// 100 ms; the pinned scenes hold the loop for no time at all). `check`
/// brings a participant's trace to the same form to set it beside these.
fn assert_trace(name: &str, trace: &str) {
    let trace = pinned_trace::redacted(trace);
    snapshot_settings().bind(|| insta::assert_snapshot!(name, trace));
}

#[test]
fn step02_trace_pinned() {
    let trace = traced_parts(
        "step02",
        &["countup and countdown as callbacks that reschedule themselves"],
        "trace-step02",
    );
    assert_trace("trace-step02", &trace);
}

#[test]
fn step03_trace_pinned() {
    // Both sleeps of the first part are set one after the other, and the
    // three timers of the last part share one deadline: however late the
    // loop wakes, the turns are the same.
    let trace = traced_parts(
        "step03",
        &[
            "One after the other: sleep 0.5 s, then sleep 0.7 s",
            "Equal deadlines fire in the order they were scheduled",
        ],
        "trace-step03",
    );
    assert_trace("trace-step03", &trace);
}

#[test]
fn step05_trace_pinned() {
    let trace = traced_parts(
        "step05",
        &["countup and countdown as tasks that yield after every line"],
        "trace-step05",
    );
    assert_trace("trace-step05", &trace);
}

#[test]
fn step06_trace_pinned() {
    let trace = traced_parts(
        "step06",
        &["spawn a child, then join it", "A child that panics"],
        "trace-step06",
    );
    assert_trace("trace-step06", &trace);
}

#[test]
fn step07_trace_pinned() {
    let trace = traced_parts(
        "step07",
        &["Hello, world! through a socket pair"],
        "trace-step07",
    );
    assert_trace("trace-step07", &trace);
}

#[test]
fn step08_trace_pinned() {
    let trace = traced_parts("step08", &["Cancel a suspended task"], "trace-step08");
    assert_trace("trace-step08", &trace);
}

#[test]
fn step04_trace_pinned() {
    // One request at a time: each timer is set only once the request before
    // it has its answer, so no two can come due in one turn.
    let trace = traced_parts(
        "step04",
        &["Ten requests to a slow server, one after another"],
        "trace-step04",
    );
    assert_trace("trace-step04", &trace);
}

/// Set in the child process a scene test starts: run the scene, not the
/// test. The loop writes its trace to the process's stderr, which only a
/// parent process can read; so a scene test runs itself again as a child.
const SCENE: &str = "WORKSHOP_TRACE_SCENE";

/// Runs the test `name` of this binary again, in a child process with
/// `LOOP_TRACE=1`, and returns its trace and the scene's own lines (those
/// starting with one of `said`), in order.
fn scene_output(name: &str, said: &[&str]) -> String {
    let mut command =
        Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(SCENE, "1")
        .env("LOOP_TRACE", "1");
    let output = merged_output(command);
    // libtest's `test NAME ... ` has no newline before the scene's first line.
    let mut scene = String::new();
    for line in output.lines() {
        let line = line.find("[+").map_or(line, |at| &line[at..]);
        if line.starts_with("[+") || said.iter().any(|s| line.starts_with(s)) {
            scene.push_str(line);
            scene.push('\n');
        }
    }
    scene
}

#[test]
fn step03_concurrent_sleeps_trace_pinned() {
    // Chapter 3 walks this scene: the demo's two sleeps scheduled at once,
    // the longer first, but 0.5 s apart where the demo's are 0.2 s apart,
    // so that no late wake-up can fire both in one turn.
    if std::env::var_os(SCENE).is_some() {
        let lp = step03::EventLoop::new();
        lp.call_later(Duration::from_secs_f64(1.0), |_| println!("slept 1.0 s"));
        lp.call_later(Duration::from_secs_f64(0.5), |_| println!("slept 0.5 s"));
        lp.run();
        return;
    }
    let trace = scene_output("step03_concurrent_sleeps_trace_pinned", &["slept "]);
    assert_trace("trace-step03-concurrent", &trace);
}

#[test]
fn step08_traces_cancelled_timers_skipped_and_swept() {
    // No demo leaves a cancelled timer for the loop to meet (the demo's is
    // dropped with the loop), so this scene makes each case happen: a
    // cancelled timer on top of a small heap is skipped, another among the
    // due timers, and a heap of more
    // than 100 timers, more than half cancelled, is swept in one go. Step
    // 8's turn figure draws its sweep from the same scene.
    let scene = traced_scene("sweep-step08");
    let lines: Vec<&str> = scene.lines().collect();
    let at = |wanted: &str| {
        lines
            .iter()
            .position(|line| line.ends_with(wanted))
            .unwrap_or_else(|| panic!("no `{wanted}` in:\n{scene}"))
    };
    assert!(
        at("timer cancelled: skipped") < at("fired: 20 ms"),
        "{scene}"
    );
    // The second cancelled timer, due with the 20 ms one, is met among the
    // due timers after the wait: step 8's turn figure draws the line in
    // both phases.
    let due = lines
        .iter()
        .position(|line| line.contains("timer due: 1 ("))
        .unwrap_or_else(|| panic!("no timer 1 came due:\n{scene}"));
    assert!(
        lines[due + 1].ends_with("timer cancelled: skipped"),
        "{scene}"
    );
    assert!(
        at("fired: 20 ms") < at("swept 149 cancelled timers"),
        "{scene}"
    );
    assert!(
        at("swept 149 cancelled timers") < at("fired: 10 ms"),
        "{scene}"
    );
}

/// How long the scenes below block the loop: over the trace's 100 ms.
const BLOCKING: Duration = Duration::from_millis(150);

#[test]
fn a_callback_or_poll_that_holds_the_loop_is_named() {
    // Steps 2 to 4: a callback that sleeps on the loop's thread; steps 5 to
    // 8: a task that does.
    if std::env::var_os(SCENE).is_some() {
        let step02 = step02::EventLoop::new();
        step02.call_soon(|_| thread::sleep(BLOCKING));
        step02.run();
        let step03 = step03::EventLoop::new();
        step03.call_later(Duration::from_millis(1), |_| thread::sleep(BLOCKING));
        step03.run();
        let step04 = step04::EventLoop::new().expect("a loop");
        step04.call_soon(|_| thread::sleep(BLOCKING));
        step04.run().expect("the loop runs");
        let blocking = || async { thread::sleep(BLOCKING) };
        let step05 = Rc::new(step05::EventLoop::new().expect("a loop"));
        step05.block_on(blocking()).expect("the loop runs");
        let step06 = Rc::new(step06::EventLoop::new().expect("a loop"));
        step06.block_on(blocking()).expect("the loop runs");
        let step07 = Rc::new(step07::EventLoop::new().expect("a loop"));
        step07.block_on(blocking()).expect("the loop runs");
        let step08 = Rc::new(step08::EventLoop::new().expect("a loop"));
        step08.block_on(blocking()).expect("the loop runs");
        return;
    }
    let scene = scene_output("a_callback_or_poll_that_holds_the_loop_is_named", &[]);
    let held: Vec<(&str, f64, &str)> = scene
        .lines()
        .filter_map(|line| {
            let (who, rest) = line.split_once(" held the loop ")?;
            let who = who.rsplit_once(": ").map_or(who, |(_, who)| who);
            let (seconds, why) = rest.split_once(" s ")?;
            Some((who, seconds.parse().ok()?, why))
        })
        .collect();
    let who: Vec<&str> = held.iter().map(|(who, _, _)| *who).collect();
    assert_eq!(
        who,
        [
            "callback 1",
            "callback 1 of 1 (timer 0)",
            "callback 1 of 1 (a ready callback)",
            "poll task 0",
            "poll task 0",
            "poll task 0",
            "poll task 0",
        ],
        "{scene}"
    );
    for (who, seconds, why) in held {
        assert!(seconds >= BLOCKING.as_secs_f64(), "{who}: {seconds} s");
        let inside = if who.starts_with("poll") {
            "task"
        } else {
            "callback"
        };
        assert_eq!(
            why,
            format!("(over 0.100 s: a blocking call inside a {inside}?)")
        );
    }
}

/// A child process, killed when dropped, so a failing test leaves none.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_stderr_nobody_reads_costs_trace_lines_not_clients() {
    // A participant pipes the trace into a pager and leaves it: the pipe
    // fills, and the trace's writer can write no more. The server must go
    // on answering; once someone reads again, the trace says how many
    // lines it dropped.
    let (mut unread, stderr) = std::io::pipe().expect("a pipe");
    let mut command = step_command("step07");
    command
        .args(["serve", "127.0.0.1:0"])
        .env("LOOP_TRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    let mut server = Killed(command.spawn().expect("the server starts"));
    drop(command); // our copy of the pipe's writer
    let addr = listening_address(server.0.stdout.take().expect("piped"));
    for client in 1..=300 {
        let started = Instant::now();
        echo_once(addr).unwrap_or_else(|err| {
            panic!(
                "client {client} got no answer after {:.1} s: {err}",
                started.elapsed().as_secs_f64()
            )
        });
    }
    let (read, trace) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let mut text = Vec::new();
        let mut chunk = [0; 4096];
        while let Ok(n @ 1..) = unread.read(&mut chunk) {
            text.extend_from_slice(&chunk[..n]);
            if text.windows(DROPPED.len()).any(|w| w == DROPPED.as_bytes()) {
                break;
            }
        }
        let _ = read.send(String::from_utf8_lossy(&text).into_owned());
    });
    echo_once(addr).expect("the server still answers");
    let trace = trace.recv_timeout(HANG_LIMIT).expect("the trace is read");
    assert!(trace.contains(DROPPED), "no `{DROPPED}` in the trace");
}

/// What the trace says where it dropped lines.
const DROPPED: &str = "lines dropped here: stderr was not read]";

/// Reads the `listening on ADDR` line, then keeps reading stdout on a
/// thread of its own.
fn listening_address(stdout: impl Read + Send + 'static) -> SocketAddr {
    let mut lines = BufReader::new(stdout).lines();
    let line = lines.next().expect("a line").expect("UTF-8");
    thread::spawn(move || lines.for_each(drop));
    line.strip_prefix("listening on ")
        .and_then(|addr| addr.parse().ok())
        .unwrap_or_else(|| panic!("expected `listening on ADDR`, got {line:?}"))
}

/// One client: a line sent, and its echo (`Got: ping`) back within 5 s.
fn echo_once(addr: SocketAddr) -> std::io::Result<()> {
    let mut client = TcpStream::connect(addr)?;
    client.set_read_timeout(Some(Duration::from_secs(5)))?;
    client.write_all(b"ping\n")?;
    let mut echoed = String::new();
    BufReader::new(client).read_line(&mut echoed)?;
    assert_eq!(echoed, "Got: ping\n");
    Ok(())
}

#[test]
fn a_task_that_keeps_waking_itself_is_named_once() {
    // tokio-console's other warning: a task that wakes itself on most of
    // its polls is a busy loop, here of `yield_now`, 300 polls long.
    if std::env::var_os(SCENE).is_some() {
        let step05 = Rc::new(step05::EventLoop::new().expect("a loop"));
        step05
            .block_on(async {
                for _ in 0..300 {
                    step05::yield_now().await;
                }
            })
            .expect("the loop runs");
        let step06 = Rc::new(step06::EventLoop::new().expect("a loop"));
        step06
            .block_on(async {
                for _ in 0..300 {
                    step06::yield_now().await;
                }
            })
            .expect("the loop runs");
        let step07 = Rc::new(step07::EventLoop::new().expect("a loop"));
        step07
            .block_on(async {
                for _ in 0..300 {
                    step07::yield_now().await;
                }
            })
            .expect("the loop runs");
        let step08 = Rc::new(step08::EventLoop::new().expect("a loop"));
        step08
            .block_on(async {
                for _ in 0..300 {
                    step08::yield_now().await;
                }
            })
            .expect("the loop runs");
        return;
    }
    let scene = scene_output("a_task_that_keeps_waking_itself_is_named_once", &[]);
    let warnings: Vec<&str> = scene
        .lines()
        .filter_map(|line| line.split_once(": task ").map(|(_, what)| what))
        .filter(|what| what.contains("woke itself"))
        .collect();
    assert_eq!(
        warnings,
        ["0 woke itself on 100 of 100 polls: a busy loop of yield_now?"; 4],
        "{scene}"
    );
}

#[test]
fn steps05_and_06_trace_callbacks_waiting_on_sockets() {
    // Their demos run tasks and timers only; the scenes the turn figures
    // draw the sockets' phase from wait on a socket pair with callbacks.
    for scene in ["sockets-step05", "sockets-step06"] {
        let output = traced_scene(scene);
        let lines = trace_lines(&output);
        for wanted in [
            "wait for ever: sockets only",
            "socket 0 writable: its write waiter is ready",
            "socket 1 readable: its read waiter is ready",
        ] {
            assert!(
                lines.iter().any(|line| line.what == wanted),
                "{scene}: no `{wanted}` in:\n{output}"
            );
        }
        let wrote = output.find("wrote: ping").expect("the write callback ran");
        let read = output.find("read: ping").expect("the read callback ran");
        assert!(wrote < read, "{output}");
    }
}
