//! step04's wait, interrupted by a signal: `poll` fails with `Interrupted`
//! when a signal handler runs on the loop's thread while it waits, and the
//! loop must take that as "nothing happened yet", not as its end.
//!
//! A file of its own: the handler it installs is the whole process's, and
//! no other test should meet its signals. Linux only: it sends the signal
//! to the loop's own thread by that thread's id (`/proc/thread-self`), and
//! Linux delivers a signal sent so to that thread while it waits.
#![cfg(target_os = "linux")]

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process};
use step04::EventLoop;
use workshop_tests::{HANG_LIMIT, within};

/// The id of the calling thread, as the kernel knows it: what `kill`
/// takes to reach this thread rather than any thread of the process.
fn this_threads_id() -> Pid {
    let link = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    // The link reads `PID/task/TID`.
    let tid = link
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.parse().ok())
        .unwrap_or_else(|| panic!("no thread id in {}", link.display()));
    Pid::from_raw(tid).expect("a thread id is positive")
}

#[test]
fn a_signal_that_interrupts_the_wait_only_starts_the_next_turn() {
    let handled = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR1, Arc::clone(&handled))
        .expect("a handler for SIGUSR1");
    let (outcome, fired) = within(HANG_LIMIT, || {
        let lp = EventLoop::new().expect("a poller");
        let fired = Rc::new(Cell::new(false));
        let flag = Rc::clone(&fired);
        // The loop waits for this timer, and is interrupted meanwhile.
        lp.call_later(Duration::from_millis(400), move |_| flag.set(true));
        let loop_thread = this_threads_id();
        let done = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&done);
        // Again and again, so that some signal comes while the loop is in
        // `poll`, however the threads are scheduled.
        let signaller = thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                thread::sleep(Duration::from_millis(20));
                let _ = kill_process(loop_thread, Signal::USR1);
            }
        });
        let outcome = lp.run();
        // The signaller stops before this thread can end: no signal goes
        // to a thread id that could be someone else's by then.
        done.store(true, Ordering::Release);
        signaller.join().expect("the signaller ends");
        (outcome.map_err(|err| err.to_string()), fired.get())
    });
    assert!(
        handled.load(Ordering::Acquire),
        "no signal reached the loop's thread: this test proved nothing"
    );
    if let Err(err) = outcome {
        panic!(
            "run failed with {err:?} when a signal interrupted its wait: an \
             interrupted poll did nothing and reported nothing, so wait_for_io \
             returns Ok and the next turn waits again"
        );
    }
    assert!(
        fired,
        "run returned before the timer it waited for had fired"
    );
}
