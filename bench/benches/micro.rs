//! The micro workloads whose cost is their wall-clock time (spawning and
//! joining tasks, tasks yielding to each other) under divan, which samples
//! each one many times and shows the spread (fastest, slowest, median, mean)
//! behind the single median of the `compare` table:
//!
//! ```sh
//! cargo bench -p bench --bench micro
//! ```
//!
//! Timer and I/O workloads are measured by `compare` only: their cost is CPU
//! time or a rate, which divan does not measure.

use bench::Side;
use divan::Bencher;
use divan::counter::ItemsCount;

#[path = "../sides/mod.rs"]
#[allow(dead_code, reason = "divan names each runtime by a type of its own")]
mod sides;

fn main() {
    // Cargo passes `--bench` under `cargo bench` only; `cargo test --benches`
    // would otherwise run every benchmark once, a million tasks and all.
    if !std::env::args().any(|arg| arg == "--bench") {
        eprintln!(
            "micro: measuring only under `cargo bench -p bench --bench micro`"
        );
        return;
    }
    divan::main();
}

/// A runtime, as a type, so divan names it in its output.
trait Runtime {
    const SIDE: Side;
}

struct Tokio;

impl Runtime for Tokio {
    const SIDE: Side = sides::tokio_side::SIDE;
}

struct Ours;

impl Runtime for Ours {
    const SIDE: Side = sides::ours::SIDE;
}

struct Fast;

impl Runtime for Fast {
    const SIDE: Side = sides::fast::SIDE;
}

/// Spawn cost at each of these numbers of tasks: does it stay flat?
const TASKS: &[usize] = &[1_000, 10_000, 100_000, 1_000_000];

/// Switches between the two yielding tasks, as in workload 2 (`yield`).
const SWITCHES: usize = 1_000_000;

#[divan::bench(types = [Tokio, Ours, Fast], args = TASKS, sample_count = 20, max_time = 3)]
fn spawn_join<R: Runtime>(bencher: Bencher, tasks: usize) {
    bencher
        .counter(ItemsCount::new(tasks))
        .bench(|| (R::SIDE.spawn_join)(tasks));
}

#[divan::bench(types = [Tokio, Ours, Fast], sample_count = 20, max_time = 3)]
fn yield_switch<R: Runtime>(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(SWITCHES))
        .bench(|| (R::SIDE.yield_switch)(SWITCHES));
}
