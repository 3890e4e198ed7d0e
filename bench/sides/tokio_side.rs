//! tokio's side: every workload on tokio's current-thread runtime, the
//! runtime a user would pick instead of ours for a single-threaded loop.
//!
//! Each function builds a fresh runtime and times only the work inside it.
//! The workshop's runtime has a file of the same shape beside this one, so
//! the two can be read side by side.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bench::{EchoPlan, Sample, Side, Stopwatch, lateness_ns};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// tokio's version of every workload.
pub const SIDE: Side = Side {
    name: "tokio",
    spawn_join,
    yield_switch,
    sleeps,
    sleeps_from_first_poll,
    lateness,
    idle,
    echo,
    echo_clients,
    serve_echo,
    stream,
};

/// A new single-threaded tokio runtime with its timer and I/O driver.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn spawn_join(tasks: usize) -> Sample {
    runtime().block_on(async {
        let clock = Stopwatch::start();
        let handles: Vec<_> = (0..tasks).map(|_| tokio::spawn(async {})).collect();
        for handle in handles {
            handle.await.expect("an empty task cannot fail");
        }
        clock.stop()
    })
}

fn yield_switch(switches: usize) -> Sample {
    runtime().block_on(async {
        let clock = Stopwatch::start();
        let first = tokio::spawn(yield_times(switches / 2));
        let second = tokio::spawn(yield_times(switches / 2));
        first.await.expect("a yielding task cannot fail");
        second.await.expect("a yielding task cannot fail");
        clock.stop()
    })
}

async fn yield_times(times: usize) {
    for _ in 0..times {
        tokio::task::yield_now().await;
    }
}

fn sleeps(delays: &[Duration], cancel_half: bool) -> Sample {
    runtime().block_on(async {
        let clock = Stopwatch::start();
        let sleepers: Vec<_> = delays
            .iter()
            .map(|&delay| tokio::spawn(tokio::time::sleep(delay)))
            .collect();
        if cancel_half {
            // A task spawned after the sleepers runs after each has started
            // sleeping, so their timers are registered when it cancels them.
            tokio::spawn(cancel_every_other(sleepers))
                .await
                .expect("cancelling cannot fail");
        } else {
            for sleeper in sleepers {
                sleeper.await.expect("a sleep cannot fail");
            }
        }
        clock.stop()
    })
}

/// Cancels every other sleeper, then joins them all. A cancelled sleeper
/// whose delay was short may have finished already; one left alone must
/// finish.
async fn cancel_every_other(sleepers: Vec<JoinHandle<()>>) {
    for sleeper in sleepers.iter().step_by(2) {
        sleeper.abort();
    }
    for (i, sleeper) in sleepers.into_iter().enumerate() {
        let outcome = sleeper.await;
        assert!(i % 2 == 0 || outcome.is_ok(), "sleeper {i}: {outcome:?}");
    }
}

fn sleeps_from_first_poll(delays: &[Duration]) -> Sample {
    runtime().block_on(async {
        let clock = Stopwatch::start();
        let sleepers: Vec<_> = delays
            .iter()
            .map(|&delay| tokio::spawn(sleep_from_first_poll(delay)))
            .collect();
        for sleeper in sleepers {
            sleeper.await.expect("a sleep cannot fail");
        }
        clock.stop()
    })
}

/// Sleeps for `delay` from when it first runs: the `Sleep`, and so its
/// deadline, is made at the task's first poll, not when it is spawned.
async fn sleep_from_first_poll(delay: Duration) {
    tokio::time::sleep(delay).await;
}

fn lateness(delays: &[Duration]) -> Vec<i64> {
    runtime().block_on(async {
        let sleepers: Vec<_> = delays
            .iter()
            .map(|&delay| tokio::spawn(sleep_measured(delay)))
            .collect();
        let mut late = Vec::with_capacity(sleepers.len());
        for sleeper in sleepers {
            late.push(sleeper.await.expect("a sleep cannot fail"));
        }
        late
    })
}

/// Sleeps for `delay` from when it first runs, and says how late it woke.
async fn sleep_measured(delay: Duration) -> i64 {
    let deadline = Instant::now() + delay;
    tokio::time::sleep_until(deadline.into()).await;
    lateness_ns(deadline, Instant::now())
}

fn idle(wait: Duration) -> Sample {
    runtime().block_on(async {
        let clock = Stopwatch::start();
        tokio::time::sleep(wait).await;
        clock.stop()
    })
}

fn echo(plan: EchoPlan) -> io::Result<Sample> {
    runtime().block_on(async {
        let (server, addr) = start_echo_server()?;
        let sample = run_echo_clients(addr, plan).await;
        server.abort();
        sample
    })
}

fn echo_clients(server: SocketAddr, plan: EchoPlan) -> io::Result<Sample> {
    runtime().block_on(run_echo_clients(server, plan))
}

fn serve_echo(listener: std::net::TcpListener) -> io::Result<()> {
    runtime().block_on(async {
        listener.set_nonblocking(true)?;
        echo_server(TcpListener::from_std(listener)?).await
    })
}

fn stream(bytes: usize) -> io::Result<Sample> {
    runtime().block_on(async {
        let (server, addr) = start_echo_server()?;
        let connection = connect(addr).await?;
        let (mut reader, writer) = connection.into_split();
        let clock = Stopwatch::start();
        let sending = tokio::spawn(send_bytes(writer, bytes));
        let mut buffer = vec![0; CHUNK];
        let mut received = 0;
        while received < bytes {
            match reader.read(&mut buffer).await? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => received += n,
            }
        }
        sending.await.expect("the sender cannot panic")?;
        let sample = clock.stop();
        server.abort();
        Ok(sample)
    })
}

/// How much the streaming client writes, and the echo server reads, at once.
const CHUNK: usize = 64 * 1024;

async fn send_bytes(mut writer: OwnedWriteHalf, bytes: usize) -> io::Result<()> {
    let chunk = vec![0x5a; CHUNK];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(CHUNK);
        writer.write_all(&chunk[..n]).await?;
        left -= n;
    }
    Ok(())
}

/// Connects every client first, then times their round trips alone.
async fn run_echo_clients(server: SocketAddr, plan: EchoPlan) -> io::Result<Sample> {
    let mut connections = Vec::with_capacity(plan.connections);
    for _ in 0..plan.connections {
        connections.push(connect(server).await?);
    }
    let clock = Stopwatch::start();
    let clients: Vec<_> = connections
        .into_iter()
        .map(|connection| tokio::spawn(round_trips(connection, plan)))
        .collect();
    for client in clients {
        client.await.expect("a client cannot panic")?;
    }
    Ok(clock.stop())
}

/// One client: sends a message, waits for all of it to come back, again.
async fn round_trips(mut connection: TcpStream, plan: EchoPlan) -> io::Result<()> {
    let message = vec![b'x'; plan.message_len];
    let mut reply = vec![0; plan.message_len];
    for _ in 0..plan.round_trips {
        connection.write_all(&message).await?;
        connection.read_exact(&mut reply).await?;
        if reply != message {
            return Err(io::Error::other("the echo changed the message"));
        }
    }
    Ok(())
}

async fn connect(server: SocketAddr) -> io::Result<TcpStream> {
    let connection = TcpStream::connect(server).await?;
    connection.set_nodelay(true)?;
    Ok(connection)
}

/// An echo server on loopback, as a task of the current runtime.
fn start_echo_server() -> io::Result<(JoinHandle<io::Result<()>>, SocketAddr)> {
    let listener = bench::listen_loopback()?;
    listener.set_nonblocking(true)?;
    let listener = TcpListener::from_std(listener)?;
    let addr = listener.local_addr()?;
    Ok((tokio::spawn(echo_server(listener)), addr))
}

/// Accepts connections for ever, echoing each in a task of its own.
async fn echo_server(listener: TcpListener) -> io::Result<()> {
    loop {
        let (connection, _) = listener.accept().await?;
        connection.set_nodelay(true)?;
        tokio::spawn(echo_connection(connection));
    }
}

/// Writes back whatever arrives until the client hangs up.
async fn echo_connection(mut connection: TcpStream) {
    let mut buffer = vec![0; CHUNK];
    loop {
        match connection.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if connection.write_all(&buffer[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}
