//! Small traced scenes that reach the phases of a turn a step's demo never
//! shows, so that each turn figure (`book/src/figures/turn-stepNN.svg`)
//! draws every phase its step's trace can print from real trace lines:
//!
//! ```sh
//! LOOP_TRACE=1 cargo run -p workshop-tests --example trace_scenes -- sweep-step08
//! ```
//!
//! - `sockets-step05`, `sockets-step06`: steps 5 and 6 keep step 4's
//!   callbacks that wait on sockets, but their demos only run tasks and
//!   timers. Here one socket of a connected pair waits to write, the other
//!   to read: the first callback writes `ping`, the second reads it.
//! - `sweep-step08`: no demo of step 8 leaves a cancelled timer for the
//!   loop to meet. Here a cancelled timer on top of a small heap is
//!   skipped at the turn's start, another among the due timers after the
//!   wait, then a heap of 150 timers, 149 of them cancelled, is swept in
//!   one go (`tests/tests/traces.rs` checks the order of those lines).

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::rc::Rc;
use std::time::Duration;

fn main() -> io::Result<()> {
    let scene = std::env::args().nth(1).unwrap_or_default();
    match scene.as_str() {
        "sockets-step05" => sockets_step05(),
        "sockets-step06" => sockets_step06(),
        "sweep-step08" => sweep_step08(),
        _ => {
            eprintln!(
                "usage: trace_scenes sockets-step05 | sockets-step06 | sweep-step08"
            );
            std::process::exit(2);
        }
    }
}

/// Both ends of a loopback TCP connection, non-blocking, for mio.
fn connected_pair() -> io::Result<(mio::net::TcpStream, mio::net::TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let writer = TcpStream::connect(listener.local_addr()?)?;
    let (reader, _) = listener.accept()?;
    writer.set_nonblocking(true)?;
    reader.set_nonblocking(true)?;
    Ok((
        mio::net::TcpStream::from_std(writer),
        mio::net::TcpStream::from_std(reader),
    ))
}

/// What `reader` holds now, read until it would block.
fn read_what_came(reader: &mut mio::net::TcpStream) -> io::Result<String> {
    let mut came = Vec::new();
    let mut chunk = [0; 64];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => came.extend_from_slice(&chunk[..n]),
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
            Err(err) => return Err(err),
        }
    }
    Ok(String::from_utf8_lossy(&came).into_owned())
}

/// The sockets scene on one step's loop: the steps' types differ, the
/// scene does not.
macro_rules! sockets_scene {
    ($step:ident) => {{
        let (writer, reader) = connected_pair()?;
        let (writer, reader) =
            (Rc::new(RefCell::new(writer)), Rc::new(RefCell::new(reader)));
        let lp = $step::EventLoop::new()?;
        let writer_token = lp.register(&mut *writer.borrow_mut())?;
        let reader_token = lp.register(&mut *reader.borrow_mut())?;
        let wrote = Rc::clone(&writer);
        lp.write_wait(writer_token, move |_| {
            wrote
                .borrow_mut()
                .write_all(b"ping")
                .expect("a loopback write");
            println!("wrote: ping");
        });
        let read = Rc::clone(&reader);
        lp.read_wait(reader_token, move |_| {
            let came =
                read_what_came(&mut read.borrow_mut()).expect("a loopback read");
            println!("read: {came}");
        });
        lp.run()?;
        lp.deregister(&mut *writer.borrow_mut(), writer_token)?;
        lp.deregister(&mut *reader.borrow_mut(), reader_token)?;
        Ok(())
    }};
}

fn sockets_step05() -> io::Result<()> {
    sockets_scene!(step05)
}

fn sockets_step06() -> io::Result<()> {
    sockets_scene!(step06)
}

fn sweep_step08() -> io::Result<()> {
    let lp = step08::EventLoop::new()?;
    let skipped = lp.call_later(Duration::from_millis(10), |_| {});
    let at_20_ms = std::time::Instant::now() + Duration::from_millis(20);
    lp.call_at(at_20_ms, |_| println!("fired: 20 ms"));
    // Same deadline, so under the timer above at the sweep: met among the
    // due timers, after the wait.
    let skipped_when_due = lp.call_at(at_20_ms, |_| {});
    assert!(skipped.cancel());
    assert!(skipped_when_due.cancel());
    lp.run()?;
    let far = Duration::from_secs(60);
    let handles: Vec<_> = (0..149).map(|_| lp.call_later(far, |_| {})).collect();
    lp.call_later(Duration::from_millis(10), |_| println!("fired: 10 ms"));
    for handle in &handles {
        assert!(handle.cancel());
    }
    lp.run()
}
