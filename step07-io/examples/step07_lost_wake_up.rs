//! `cargo run -p step07 --example step07_lost_wake_up`: the mistake chapter 5
//! warns about, made on purpose, and what the loop says about it instead of
//! waiting for ever.
//!
//! A child task waits for a flag that another child raises 0.1 s later,
//! and the main task joins the waiting child. The waiting future checks the
//! flag and says `Pending`, but leaves its waker nowhere, so raising the
//! flag wakes no one, and the main task waits on a child that never ends.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use step07::{EventLoop, sleep, spawn};

// ANCHOR: flag_up
/// Ready once the flag is up. The mistake: `Pending` without handing
/// `cx.waker()` to whoever will raise the flag.
struct FlagUp(Rc<Cell<bool>>);

impl Future for FlagUp {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0.get() {
            Poll::Ready(())
        } else {
            Poll::Pending // and nobody will ever poll it again
        }
    }
}
// ANCHOR_END: flag_up

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            plumbing::warn!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

// ANCHOR: run
fn run() -> std::io::Result<()> {
    let lp = Rc::new(EventLoop::new()?);
    lp.block_on(async {
        let flag = Rc::new(Cell::new(false));
        let raiser = Rc::clone(&flag);
        let raising = spawn(async move {
            sleep(Duration::from_millis(100)).await;
            raiser.set(true);
            println!("the flag is up");
        });
        let waiting = spawn(async move {
            println!("waiting for the flag");
            FlagUp(flag).await;
        });
        let _ = waiting.await;
        let _ = raising.await;
        println!("never printed: nothing wakes the waiting task");
    })
}
// ANCHOR_END: run
