//! Timing one run of a workload: wall-clock time, CPU time, lateness.

use std::time::{Duration, Instant};

use cpu_time::ThreadTime;

/// What one run of a workload cost: how long it took, and how much CPU the
/// runtime's thread burned meanwhile. The two differ exactly when the loop
/// waits (sleeps, I/O), which is where a good loop costs nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub wall: Duration,
    pub cpu: Duration,
}

/// Both clocks, started together.
///
/// CPU time is the calling thread's: a current-thread runtime runs every task
/// on the thread that calls `block_on`, so that is the runtime's whole cost,
/// and tests running beside it on other threads do not count. Start it inside
/// the runtime, after any setup that is not the workload.
#[derive(Debug)]
pub struct Stopwatch {
    wall: Instant,
    cpu: ThreadTime,
}

impl Stopwatch {
    pub fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: ThreadTime::now(),
        }
    }

    pub fn stop(&self) -> Sample {
        Sample {
            wall: self.wall.elapsed(),
            cpu: self.cpu.elapsed(),
        }
    }
}

/// How late a timer fired, in nanoseconds: `woke` minus `deadline`, negative
/// when it fired early (which a correct loop never does).
pub fn lateness_ns(deadline: Instant, woke: Instant) -> i64 {
    match woke.checked_duration_since(deadline) {
        Some(late) => nanos(late),
        None => -nanos(deadline - woke),
    }
}

fn nanos(duration: Duration) -> i64 {
    i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_is_negative_only_for_an_early_wake_up() {
        let deadline = Instant::now() + Duration::from_millis(10);
        let late = deadline + Duration::from_micros(1500);
        let early = deadline.checked_sub(Duration::from_micros(200)).unwrap();
        assert_eq!(lateness_ns(deadline, late), 1_500_000);
        assert_eq!(lateness_ns(deadline, early), -200_000);
        assert_eq!(lateness_ns(deadline, deadline), 0);
    }

    #[test]
    fn a_stopwatch_counts_cpu_only_while_the_thread_works() {
        let clock = Stopwatch::start();
        std::thread::sleep(Duration::from_millis(30));
        let sample = clock.stop();
        assert!(sample.wall >= Duration::from_millis(30));
        assert!(sample.cpu < Duration::from_millis(15), "{sample:?}");
    }
}
