use std::fs::OpenOptions;
use std::io;
use std::process::Stdio;
use std::time::Instant;

use crate::server::{eventually, proc};
use socket2::SockRef;

use super::{
    Barrier, Duration, EchoServer, PATIENCE, Read, RunningServer, Shutdown,
    TcpStream, Write, connect, exchange, thread,
};

/// Asks one line on an open connection and returns the reply line.
fn ask(stream: &mut TcpStream, line: &str) -> String {
    stream
        .write_all(format!("{line}\n").as_bytes())
        .expect("sent");
    let mut reply = Vec::new();
    let mut byte = [0];
    while !reply.ends_with(b"\n") {
        stream.read_exact(&mut byte).expect("a reply");
        reply.push(byte[0]);
    }
    String::from_utf8(reply).expect("text")
}

pub fn clients_that_leave_abruptly_are_freed_and_the_others_are_served(
    echo: EchoServer,
) {
    let mut server = RunningServer::start(echo.package);
    let pid = server.pid();
    let mut bystander = connect(server.addr());
    assert_eq!(ask(&mut bystander, "before"), "Got: before\n");
    let baseline = proc::open_descriptors(pid);
    let accepted_one_more = || proc::open_descriptors(pid) == baseline + 1;

    // Leaves in the middle of a line: the server sees the end of the
    // stream with half a line in its buffer.
    let mut half_a_line = connect(server.addr());
    half_a_line.write_all(b"half a li").expect("sent");
    assert!(
        eventually(crate::patience(PATIENCE), accepted_one_more),
        "never accepted"
    );
    drop(half_a_line);
    assert!(eventually(
        crate::patience(PATIENCE),
        || proc::open_descriptors(pid) == baseline
    ));

    // Resets the connection: linger 0 makes close send RST, not FIN.
    let mut resetter = connect(server.addr());
    assert_eq!(ask(&mut resetter, "reset next"), "Got: reset next\n");
    SockRef::from(&resetter)
        .set_linger(Some(Duration::ZERO))
        .expect("linger 0");
    drop(resetter);
    assert!(eventually(
        crate::patience(PATIENCE),
        || proc::open_descriptors(pid) == baseline
    ));

    // Vanishes in the middle of a large write: it sends far more than
    // the buffers hold, reads nothing, and closes with replies unread
    // (which also makes its close a reset).
    let mut vanisher = connect(server.addr());
    vanisher
        .set_write_timeout(Some(Duration::from_millis(300)))
        .expect("a timeout");
    let block = b"a line in a very large write\n".repeat(8 * 1024);
    let mut written = 0;
    while written < 64 << 20 {
        match vanisher.write(&block) {
            Ok(n) => written += n,
            Err(_) => break, // the buffers are full: vanish now
        }
    }
    drop(vanisher);
    assert!(
        eventually(crate::patience(PATIENCE), || proc::open_descriptors(pid)
            == baseline),
        "the server still holds {} descriptors, {baseline} before",
        proc::open_descriptors(pid)
    );

    assert_eq!(ask(&mut bystander, "after"), "Got: after\n");
    assert_eq!(exchange(server.addr(), b"newcomer\n"), b"Got: newcomer\n");
    assert!(server.is_running());
}

pub fn a_client_that_never_reads_cannot_grow_the_servers_memory(echo: EchoServer) {
    const FLOOD_LIMIT: usize = 64 << 20;
    let server = RunningServer::start(echo.package);
    let pid = server.pid();
    // One ordinary client first, so what any connection allocates is
    // already in the baseline.
    assert_eq!(exchange(server.addr(), b"warm up\n"), b"Got: warm up\n");
    let baseline = proc::resident_kib(pid);

    let mut flooder = connect(server.addr());
    flooder
        .set_write_timeout(Some(Duration::from_millis(500)))
        .expect("a timeout");
    let block = b"a line from a client that never reads\n".repeat(1024);
    let mut bytes_sent = 0;
    while bytes_sent < FLOOD_LIMIT {
        match flooder.write(&block) {
            Ok(n) => bytes_sent += n,
            Err(_) => break, // blocked for 0.5 s: the server stopped reading
        }
    }
    let grown_kib = proc::resident_kib(pid).saturating_sub(baseline);

    // A server that kept reading would have taken all 64 MiB and kept
    // their replies; this one stopped once its buffers were full, and
    // the rest waits in the kernel's socket buffers.
    assert!(
        bytes_sent < FLOOD_LIMIT,
        "the server read all {bytes_sent} bytes"
    );
    assert!(
        grown_kib < 2048,
        "the server grew by {grown_kib} KiB while a client sent {bytes_sent} bytes"
    );
    // Everyone else is served as before, while the flooder stays.
    let reply = exchange(server.addr(), b"anyone there?\n");
    assert_eq!(reply, b"Got: anyone there?\n");
    drop(flooder);
}

pub fn an_idle_server_sleeps_even_with_clients_connected(echo: EchoServer) {
    let server = RunningServer::start(echo.package);
    let pid = server.pid();
    let mut clients: Vec<TcpStream> =
        (0..10).map(|_| connect(server.addr())).collect();
    for (n, client) in clients.iter_mut().enumerate() {
        assert_eq!(ask(client, &format!("{n}")), format!("Got: {n}\n"));
    }

    // The clients' delayed ACKs for those replies free send buffer
    // space, which may wake the server once more: let them arrive.
    thread::sleep(Duration::from_millis(300));
    let (cpu, wakeups) = (proc::cpu_time(pid), proc::voluntary_switches(pid));
    thread::sleep(Duration::from_secs(1));
    let cpu = proc::cpu_time(pid).saturating_sub(cpu);
    let wakeups = proc::voluntary_switches(pid) - wakeups;

    // Blocked in poll with no timeout: the OS has no reason to run it.
    // (CPU time is counted in 10 ms ticks; a loop that polled on a
    // timer would also show as wake-ups.)
    assert!(wakeups <= 2, "the idle server woke {wakeups} times in 1 s");
    assert!(cpu <= Duration::from_millis(20), "it used {cpu:?} of CPU");
}

pub fn running_out_of_descriptors_neither_crashes_nor_spins_and_service_resumes(
    echo: EchoServer,
) {
    // The server itself holds 5 or 6: stdin, stdout, stderr, the poller,
    // the listener and, from step 5 on, the loop's waker. 16 leaves room
    // for 10 or 11 clients, far fewer than 30.
    const DESCRIPTORS: usize = 16;
    const CLIENTS: usize = 30;
    let limit = format!("--nofile={DESCRIPTORS}:{DESCRIPTORS}");
    let mut server = RunningServer::start_under(echo.package, &["prlimit", &limit]);
    let pid = server.pid();

    // Each client sends its line at once; the kernel completes every
    // handshake, and the clients past the limit wait in the backlog.
    let mut waiting: Vec<(usize, TcpStream, Vec<u8>)> = (0..CLIENTS)
        .map(|n| {
            let mut stream = connect(server.addr());
            stream
                .write_all(format!("client {n}\n").as_bytes())
                .expect("sent");
            stream.set_nonblocking(true).expect("non-blocking");
            (n, stream, Vec::new())
        })
        .collect();
    assert!(
        eventually(crate::patience(PATIENCE), || server
            .stderr()
            .contains("not accepting")),
        "the server never ran out of descriptors; stderr: {}",
        server.stderr()
    );

    // While it cannot accept, it must not spin: a server retrying in a
    // loop would use most of a core here.
    let cpu = proc::cpu_time(pid);
    thread::sleep(Duration::from_secs(1));
    let cpu = proc::cpu_time(pid).saturating_sub(cpu);
    assert!(
        cpu <= Duration::from_millis(100),
        "it used {cpu:?} of CPU in 1 s"
    );
    assert!(server.is_running(), "the server died: {}", server.stderr());

    // Close each client as soon as it has its reply: that frees a
    // descriptor in the server for a client still in the backlog.
    let start = Instant::now();
    let mut answered = 0;
    while !waiting.is_empty() && start.elapsed() < PATIENCE {
        waiting.retain_mut(|(n, stream, reply)| {
            let mut chunk = [0; 64];
            if let Ok(read @ 1..) = stream.read(&mut chunk) {
                reply.extend_from_slice(&chunk[..read]);
            }
            let done = reply.ends_with(b"\n");
            if done {
                assert_eq!(*reply, format!("Got: client {n}\n").into_bytes());
                answered += 1;
            }
            !done
        });
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        answered,
        CLIENTS,
        "clients never answered: {}",
        waiting.len()
    );
    assert!(server.stderr().contains("accepting clients again"));
    assert!(server.is_running());
    assert_eq!(exchange(server.addr(), b"later\n"), b"Got: later\n");
}

pub fn a_pause_is_announced_only_while_a_client_waits(echo: EchoServer) {
    // Linux's `accept` fails with EMFILE once the server has no
    // descriptor left, whether or not a client waits in the backlog.
    const DESCRIPTORS: usize = 16;
    const PAUSED: &str = "not accepting clients for now";
    const RESUMED: &str = "accepting clients again";
    // Long enough for a line the server writes before a reply to be
    // read from its stderr once the reply has come.
    const SETTLE: Duration = Duration::from_millis(300);
    let limit = format!("--nofile={DESCRIPTORS}:{DESCRIPTORS}");
    let server = RunningServer::start_under(echo.package, &["prlimit", &limit]);
    let pid = server.pid();

    // Clients one at a time, each answered, until the server holds
    // every descriptor it may: it is full, and no one waits.
    let mut answered = Vec::new();
    while proc::lowest_free_descriptor(pid) < DESCRIPTORS {
        assert!(answered.len() < DESCRIPTORS, "the server never filled up");
        let mut client = connect(server.addr());
        assert_eq!(ask(&mut client, "hello"), "Got: hello\n");
        answered.push(client);
    }
    thread::sleep(SETTLE);
    assert!(
        !server.stderr().contains(PAUSED),
        "a pause announced while no client waited: {}",
        server.stderr()
    );

    // One more client waits in the backlog: now the pause is true.
    let mut waiting = connect(server.addr());
    waiting.write_all(b"let me in\n").expect("sent");
    assert!(
        eventually(crate::patience(PATIENCE), || server
            .stderr()
            .contains(PAUSED)),
        "a client waits, and no pause was announced: {}",
        server.stderr()
    );

    // A descriptor comes back: the waiting client is taken, and then
    // no one waits any more, though the server is full again.
    drop(answered.pop());
    let mut reply = [0; b"Got: let me in\n".len()];
    waiting
        .read_exact(&mut reply)
        .expect("the waiting client's reply");
    assert_eq!(&reply, b"Got: let me in\n");
    assert!(eventually(crate::patience(PATIENCE), || server
        .stderr()
        .contains(RESUMED)));
    thread::sleep(SETTLE);
    let stderr = server.stderr();
    let (_, after_resuming) = stderr.split_once(RESUMED).expect("resumed");
    assert!(
        !after_resuming.contains(PAUSED),
        "a pause announced right after resuming, with no client waiting: {stderr}"
    );
}

/// What the server says, on stdout, once stderr has refused a line.
const STDERR_LOST: &str = "warning: standard error cannot be written";

pub fn a_full_stderr_costs_no_client_when_descriptors_run_out(echo: EchoServer) {
    let full = OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("Linux's /dev/full, where every write fails: no space left");
    all_served_past_the_descriptor_limit(echo, full);
}

pub fn a_closed_stderr_pipe_costs_no_client_when_descriptors_run_out(
    echo: EchoServer,
) {
    // Its reader gone, as `2>&1 | head -n 2` leaves it once `head` has
    // its lines: every write fails with a broken pipe.
    let (reader, writer) = io::pipe().expect("a pipe");
    drop(reader);
    all_served_past_the_descriptor_limit(echo, writer);
}

/// Runs the server with 64 descriptors and its stderr sent to `stderr`,
/// and 200 clients at once, all connected before any sends: the server
/// runs out of descriptors with clients waiting, and says so on a
/// stderr that cannot take the line. Every client must still be served,
/// and the loss said once on stdout.
///
/// The clients send nothing until the server has said it: `connect`
/// returns before the server's kernel has queued the connection, so on a
/// busy machine a server that served clients as they came might never
/// find one waiting when it runs out, and rightly say nothing.
fn all_served_past_the_descriptor_limit(echo: EchoServer, stderr: impl Into<Stdio>) {
    const DESCRIPTORS: usize = 64;
    const CLIENTS: usize = 200;
    let limit = format!("--nofile={DESCRIPTORS}:{DESCRIPTORS}");
    let mut server =
        RunningServer::start_with_stderr(echo.package, &["prlimit", &limit], stderr);
    let addr = server.addr();
    // The clients and this thread: each client waits at both, so this
    // thread must reach both whatever it finds in between.
    let all_connected = Barrier::new(CLIENTS + 1);
    let send_now = Barrier::new(CLIENTS + 1);

    let (loss_said_while_full, failures) = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let (all_connected, send_now) = (&all_connected, &send_now);
                scope.spawn(move || {
                    // A client that cannot connect still reaches the
                    // barriers, so that no other waits there for ever.
                    let connected = TcpStream::connect(addr);
                    all_connected.wait();
                    send_now.wait();
                    let line = format!("client {client}");
                    match connected.and_then(|stream| ask_once(stream, &line)) {
                        Ok(reply) if reply == format!("Got: {line}\n") => None,
                        Ok(reply) => Some(format!("{line} got {reply:?}")),
                        Err(err) => Some(format!("{line}: {err}")),
                    }
                })
            })
            .collect();
        all_connected.wait();
        let loss_said = eventually(crate::patience(PATIENCE), || {
            server.stdout().contains(STDERR_LOST)
        });
        send_now.wait();
        let failures: Vec<String> = clients
            .into_iter()
            .filter_map(|client| client.join().expect("the client thread ran"))
            .collect();
        (loss_said, failures)
    });
    assert!(
        failures.is_empty(),
        "{} of {CLIENTS} clients not served; the server is {}; the first: {:#?}",
        failures.len(),
        if server.is_running() {
            "running"
        } else {
            "gone"
        },
        &failures[..failures.len().min(3)]
    );
    assert!(server.is_running(), "the server died");
    // The lost lines are said once, where they can be.
    assert!(
        loss_said_while_full,
        "full, with clients waiting, the server never said on stdout \
         that its pause was lost: {}",
        server.stdout()
    );
    assert_eq!(server.stdout().matches(STDERR_LOST).count(), 1);
}

/// Sends `line`, closes the sending side, and returns all the reply.
fn ask_once(mut stream: TcpStream, line: &str) -> io::Result<String> {
    stream.set_read_timeout(Some(crate::patience(PATIENCE)))?;
    stream.set_write_timeout(Some(crate::patience(PATIENCE)))?;
    stream.write_all(format!("{line}\n").as_bytes())?;
    stream.shutdown(Shutdown::Write)?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply)?;
    Ok(String::from_utf8_lossy(&reply).into_owned())
}
