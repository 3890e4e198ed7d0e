// Every workload on a runtime with step 8's API, `runtime`: step 8's own,
// the loop the book builds, and `fast`'s, the same API made fast
// (`sides/mod.rs` compiles this file once for each). It has the same shape
// as `tokio_side.rs`, function for function, so the two read side by side.
//
// Where they differ, it is step 8's API showing through: `block_on` takes
// a future that owns what it uses (`'static`), so the delays are copied in;
// a task owns its socket, so the streaming client reads and writes through
// two handles on one connection (`try_clone`); and a cancelled
// `JoinHandle` stops the echo server instead of `abort`.

use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bench::{EchoPlan, Sample, Side, Stopwatch, lateness_ns};
use runtime::{EventLoop, JoinHandle, TcpListener, TcpStream, spawn};

/// The `runtime`'s version of every workload.
pub const SIDE: Side = Side {
    name: NAME,
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

/// Runs `future` on a new loop, as tokio's side runs it on a new runtime.
fn block_on<T: 'static>(future: impl Future<Output = T> + 'static) -> T {
    let event_loop = Rc::new(EventLoop::new().expect("an event loop"));
    event_loop
        .block_on(future)
        .expect("the loop's poller works")
}

fn spawn_join(tasks: usize) -> Sample {
    block_on(async move {
        let clock = Stopwatch::start();
        let handles: Vec<_> = (0..tasks).map(|_| spawn(async {})).collect();
        for handle in handles {
            handle.await.expect("an empty task cannot fail");
        }
        clock.stop()
    })
}

fn yield_switch(switches: usize) -> Sample {
    block_on(async move {
        let clock = Stopwatch::start();
        let first = spawn(yield_times(switches / 2));
        let second = spawn(yield_times(switches / 2));
        first.await.expect("a yielding task cannot fail");
        second.await.expect("a yielding task cannot fail");
        clock.stop()
    })
}

async fn yield_times(times: usize) {
    for _ in 0..times {
        runtime::yield_now().await;
    }
}

fn sleeps(delays: &[Duration], cancel_half: bool) -> Sample {
    let delays = delays.to_vec();
    block_on(async move {
        let clock = Stopwatch::start();
        let sleepers: Vec<_> = delays
            .into_iter()
            .map(|delay| spawn(runtime::sleep(delay)))
            .collect();
        if cancel_half {
            // A task spawned after the sleepers runs after each has started
            // sleeping, so their timers are set when it cancels them.
            spawn(cancel_every_other(sleepers))
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
        sleeper.cancel();
    }
    for (i, sleeper) in sleepers.into_iter().enumerate() {
        let outcome = sleeper.await;
        assert!(i % 2 == 0 || outcome.is_ok(), "sleeper {i}: {outcome:?}");
    }
}

fn sleeps_from_first_poll(delays: &[Duration]) -> Sample {
    let delays = delays.to_vec();
    block_on(async move {
        let clock = Stopwatch::start();
        let sleepers: Vec<_> = delays
            .into_iter()
            .map(|delay| spawn(sleep_from_first_poll(delay)))
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
    runtime::sleep(delay).await;
}

fn lateness(delays: &[Duration]) -> Vec<i64> {
    let delays = delays.to_vec();
    block_on(async move {
        let sleepers: Vec<_> = delays
            .into_iter()
            .map(|delay| spawn(sleep_measured(delay)))
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
    runtime::sleep_until(deadline).await;
    lateness_ns(deadline, Instant::now())
}

fn idle(wait: Duration) -> Sample {
    block_on(async move {
        let clock = Stopwatch::start();
        runtime::sleep(wait).await;
        clock.stop()
    })
}

fn echo(plan: EchoPlan) -> io::Result<Sample> {
    block_on(async move {
        let (server, addr) = start_echo_server()?;
        let sample = run_echo_clients(addr, plan).await;
        server.cancel();
        sample
    })
}

fn echo_clients(server: SocketAddr, plan: EchoPlan) -> io::Result<Sample> {
    block_on(run_echo_clients(server, plan))
}

fn serve_echo(listener: std::net::TcpListener) -> io::Result<()> {
    block_on(async move { echo_server(TcpListener::from_std(listener)?).await })
}

fn stream(bytes: usize) -> io::Result<Sample> {
    block_on(async move {
        let (server, addr) = start_echo_server()?;
        let mut reader = connect(addr).await?;
        let writer = reader.try_clone()?;
        let clock = Stopwatch::start();
        let sending = spawn(send_bytes(writer, bytes));
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
        server.cancel();
        Ok(sample)
    })
}

/// How much the streaming client writes, and the echo server reads, at once.
const CHUNK: usize = 64 * 1024;

async fn send_bytes(mut writer: TcpStream, bytes: usize) -> io::Result<()> {
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
        .map(|connection| spawn(round_trips(connection, plan)))
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
        read_exact(&mut connection, &mut reply).await?;
        if reply != message {
            return Err(io::Error::other("the echo changed the message"));
        }
    }
    Ok(())
}

/// Fills `buf` from `connection`: step 8's API has no `read_exact`, so here it is.
async fn read_exact(connection: &mut TcpStream, buf: &mut [u8]) -> io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match connection.read(&mut buf[filled..]).await? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => filled += n,
        }
    }
    Ok(())
}

async fn connect(server: SocketAddr) -> io::Result<TcpStream> {
    let connection = TcpStream::connect(server).await?;
    connection.set_nodelay(true)?;
    Ok(connection)
}

/// An echo server on loopback, as a task of the running loop.
fn start_echo_server() -> io::Result<(JoinHandle<io::Result<()>>, SocketAddr)> {
    let listener = TcpListener::from_std(bench::listen_loopback()?)?;
    let addr = listener.local_addr()?;
    Ok((spawn(echo_server(listener)), addr))
}

/// Accepts connections for ever, echoing each in a task of its own.
async fn echo_server(mut listener: TcpListener) -> io::Result<()> {
    loop {
        let (connection, _) = listener.accept().await?;
        connection.set_nodelay(true)?;
        spawn(echo_connection(connection));
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
