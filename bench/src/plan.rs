//! How big each workload is, and how many times it runs.

use std::time::Duration;

/// The shape of one echo workload: every connection does `round_trips` round
/// trips of one `message_len`-byte message, all connections at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoPlan {
    pub connections: usize,
    pub round_trips: usize,
    pub message_len: usize,
}

impl EchoPlan {
    pub fn total_round_trips(self) -> usize {
        self.connections * self.round_trips
    }
}

/// The sizes of every workload. [`Plan::full`] is the README's; [`Plan::quick`]
/// checks that everything works in a few seconds; [`Plan::tiny`] is for tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// `full`, `quick` or `tiny`, printed above the table.
    pub name: &'static str,
    /// Runs thrown away before measuring: the first run of anything pays for
    /// page faults, lazily grown buffers and cold caches.
    pub warmups: usize,
    /// Runs measured; the table shows their median.
    pub runs: usize,
    pub spawn_tasks: usize,
    pub yield_switches: usize,
    pub sleeps: usize,
    /// Each of `sleeps` sleeps a random time in `0..sleep_max`.
    pub sleep_max: Duration,
    pub lateness_sleeps: usize,
    /// The delays of `lateness_sleeps` are spread evenly over this.
    pub lateness_spread: Duration,
    pub idle_wait: Duration,
    pub echo: EchoPlan,
    pub stream_bytes: usize,
    /// Spawn cost and timer cost are measured at each of these counts.
    pub scale_counts: Vec<usize>,
    /// Echo throughput is measured at each of these connection counts...
    pub scale_connections: Vec<usize>,
    /// ...with this many round trips in all, shared out evenly.
    pub scale_round_trips: usize,
}

const MIB: usize = 1024 * 1024;

impl Plan {
    /// The workloads as `bench/README.md` states them, each run five times after one
    /// warm-up: about a minute and a half per runtime on a 2-core machine.
    /// The plan called `name`: `full`, `quick` or `tiny`.
    pub fn named(name: &str) -> Option<Self> {
        [Plan::full(), Plan::quick(), Plan::tiny()]
            .into_iter()
            .find(|plan| plan.name == name)
    }

    pub fn full() -> Self {
        Self {
            name: "full",
            warmups: 1,
            runs: 5,
            spawn_tasks: 100_000,
            yield_switches: 1_000_000,
            sleeps: 100_000,
            sleep_max: Duration::from_millis(100),
            lateness_sleeps: 10_000,
            lateness_spread: Duration::from_secs(1),
            idle_wait: Duration::from_secs(1),
            echo: EchoPlan {
                connections: 50,
                round_trips: 2_000,
                message_len: 64,
            },
            stream_bytes: 256 * MIB,
            scale_counts: vec![1_000, 10_000, 100_000, 1_000_000],
            scale_connections: vec![1, 10, 50, 100, 500, 1_000],
            scale_round_trips: 50_000,
        }
    }

    /// Every workload a tenth the size (and the waits a fifth), three runs:
    /// to check that everything works, not to quote.
    pub fn quick() -> Self {
        Self {
            name: "quick",
            warmups: 1,
            runs: 3,
            spawn_tasks: 10_000,
            yield_switches: 100_000,
            sleeps: 10_000,
            sleep_max: Duration::from_millis(100),
            lateness_sleeps: 1_000,
            lateness_spread: Duration::from_millis(200),
            idle_wait: Duration::from_millis(200),
            echo: EchoPlan {
                connections: 50,
                round_trips: 200,
                message_len: 64,
            },
            stream_bytes: 32 * MIB,
            scale_counts: vec![1_000, 10_000, 100_000],
            scale_connections: vec![1, 10, 50, 100, 500, 1_000],
            scale_round_trips: 5_000,
        }
    }

    /// Just enough of each workload to show that it works: for tests.
    pub fn tiny() -> Self {
        Self {
            name: "tiny",
            warmups: 0,
            runs: 1,
            spawn_tasks: 1_000,
            yield_switches: 1_000,
            sleeps: 200,
            sleep_max: Duration::from_millis(20),
            lateness_sleeps: 50,
            lateness_spread: Duration::from_millis(50),
            idle_wait: Duration::from_millis(20),
            echo: EchoPlan {
                connections: 3,
                round_trips: 20,
                message_len: 64,
            },
            stream_bytes: MIB,
            scale_counts: vec![100, 1_000],
            scale_connections: vec![1, 5],
            scale_round_trips: 50,
        }
    }

    /// `count` random delays in `0..sleep_max`. The seed is fixed, so every
    /// run and every side sleeps the same delays.
    pub fn sleep_delays(&self, count: usize) -> Vec<Duration> {
        let max = u64::try_from(self.sleep_max.as_nanos()).unwrap_or(u64::MAX);
        let mut random = SplitMix64(0x5eed);
        (0..count)
            .map(|_| Duration::from_nanos(random.next() % max))
            .collect()
    }

    /// Delays for the lateness workload, spread evenly over
    /// `lateness_spread`; the last one is the whole of it.
    pub fn lateness_delays(&self) -> Vec<Duration> {
        spread_evenly(self.lateness_sleeps, self.lateness_spread)
    }

    /// Delays for the dense lateness workload: as many sleeps as workload 3,
    /// spread evenly over its 0-100 ms, so the loop is as busy as there, and
    /// any lateness beyond a millisecond is the loop falling behind.
    pub fn dense_lateness_delays(&self) -> Vec<Duration> {
        spread_evenly(self.sleeps, self.sleep_max)
    }

    /// The echo plan that shares `scale_round_trips` among `connections`.
    pub fn scaled_echo(&self, connections: usize) -> EchoPlan {
        EchoPlan {
            connections,
            round_trips: (self.scale_round_trips / connections).max(1),
            message_len: self.echo.message_len,
        }
    }
}

/// A small, good-enough random number generator (`SplitMix64`), so the
/// benchmarks need no crate for it.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `count` delays spread evenly over `spread`; the last one is the whole of it.
fn spread_evenly(count: usize, spread: Duration) -> Vec<Duration> {
    let count = u32::try_from(count).expect("a sensible count");
    (1..=count).map(|i| spread * i / count).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_delays_are_the_same_every_time_and_cover_the_range() {
        let plan = Plan::full();
        let delays = plan.sleep_delays(10_000);
        assert_eq!(delays, plan.sleep_delays(10_000));
        assert!(delays.iter().all(|delay| *delay < plan.sleep_max));
        let short = delays.iter().filter(|d| d.as_millis() < 10).count();
        let long = delays.iter().filter(|d| d.as_millis() >= 90).count();
        // A tenth of the range holds about a tenth of the delays at each end.
        assert!((800..1200).contains(&short), "{short}");
        assert!((800..1200).contains(&long), "{long}");
    }

    #[test]
    fn lateness_delays_are_spread_evenly_to_the_end() {
        let delays = Plan::full().lateness_delays();
        assert_eq!(delays.len(), 10_000);
        assert_eq!(delays[0], Duration::from_micros(100));
        assert_eq!(delays[4_999], Duration::from_millis(500));
        assert_eq!(delays[9_999], Duration::from_secs(1));
    }

    #[test]
    fn scaled_echo_shares_the_round_trips_out() {
        let plan = Plan::full();
        let counts: Vec<_> = plan
            .scale_connections
            .iter()
            .map(|&connections| plan.scaled_echo(connections).total_round_trips())
            .collect();
        assert_eq!(counts, [50_000; 6]);
    }
}
