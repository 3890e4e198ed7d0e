//! step04's wait, interrupted by a signal: `poll` fails with `Interrupted`
//! when a signal handler runs on the loop's thread while it waits, and the
//! loop must take that as "nothing happened yet", not as its end.
//!
//! A file of its own: the handler it installs is the whole process's, and
//! no other test should meet its signals. Linux only: it sends the signal
//! to the loop's own thread by that thread's id (`/proc/thread-self`), and
//! Linux delivers a signal sent so to that thread while it waits.
#![cfg(target_os = "linux")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process};
use step04::EventLoop;
use workshop_tests::{HANG_LIMIT, within};

/// The id of the calling thread, as the kernel knows it: what `kill`
/// takes to reach this thread rather than any thread of the process.
fn kernel_thread_id() -> Pid {
    let link = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    // The link reads `PID/task/TID`.
    let tid = link
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.parse().ok())
        .unwrap_or_else(|| panic!("no thread id in {}", link.display()));
    Pid::from_raw(tid).expect("a thread id is positive")
}

/// A thread that sends SIGUSR1 to one thread every 20 ms, so that some
/// signal comes while that thread waits in `poll`, however the threads are
/// scheduled. Dropping it stops it, and waits until it has: even when the
/// loop panics, no signal goes to a thread id that could be another
/// thread's by then.
struct Signaller {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Signaller {
    fn start(target: Pid) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            while !stopped.load(Ordering::Acquire) {
                thread::sleep(Duration::from_millis(20));
                let _ = kill_process(target, Signal::USR1);
            }
        });
        Signaller {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Signaller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Sets a timer of 100 ms, and again at each one, until a signal has been
/// handled: the loop waits in `poll` all that time, and however late the
/// signaller runs on a busy machine, the loop is still waiting when it does.
fn wait_for_a_signal(lp: &EventLoop, handled: Arc<AtomicBool>) {
    if !handled.load(Ordering::Acquire) {
        lp.call_later(Duration::from_millis(100), move |lp| {
            wait_for_a_signal(lp, handled);
        });
    }
}

#[test]
fn a_signal_that_interrupts_the_wait_only_starts_the_next_turn() {
    let handled = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR1, Arc::clone(&handled))
        .expect("a handler for SIGUSR1");
    let outcome = within(HANG_LIMIT, move || {
        let lp = EventLoop::new().expect("a poller");
        wait_for_a_signal(&lp, handled);
        let signaller = Signaller::start(kernel_thread_id());
        let outcome = lp.run();
        drop(signaller);
        outcome.map_err(|err| err.to_string())
    });
    if let Err(err) = outcome {
        panic!(
            "run failed with {err:?} when a signal interrupted its wait: an \
             interrupted poll did nothing and reported nothing, so wait_for_io \
             returns Ok and the next turn waits again"
        );
    }
}
