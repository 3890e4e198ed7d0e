//! `cargo run -p step05 --example step05_lost_wake_up`: the mistake chapter 5
//! warns about, made on purpose, and what the loop says about it instead of
//! waiting for ever.
//!
//! A task waits for a flag that another task raises 0.1 s later. The
//! waiting future checks the flag and says `Pending`, but leaves its waker
//! nowhere, so raising the flag wakes no one.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use step05::{EventLoop, sleep};

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
    let flag = Rc::new(Cell::new(false));
    let raiser = Rc::clone(&flag);
    lp.spawn(async move {
        sleep(Duration::from_millis(100)).await;
        raiser.set(true);
        println!("the flag is up");
    });
    lp.block_on(async move {
        println!("waiting for the flag");
        FlagUp(flag).await;
        println!("never printed: nothing wakes the waiting task");
    })
}
// ANCHOR_END: run
