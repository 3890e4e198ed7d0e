//! The benchmark harness: the workloads of `bench/README.md`, run on each
//! runtime the same way, reported as medians with ratios against tokio.
//!
//! A runtime takes part as a [`Side`]: a table of plain functions, one per
//! workload, written once per runtime in the same shape
//! (`bench/sides/tokio_side.rs`; the workshop's own runtime gets its file
//! beside it). Everything that does not depend on a runtime lives here: the
//! sizes of each workload ([`Plan`]), how a run is timed ([`Stopwatch`]), the
//! echo server in its own process ([`ServerProcess`]), the loop that runs
//! every side round by round ([`run`]), and the table it prints ([`Table`]).
//!
//! `cargo bench -p bench --bench compare` runs it all; [`main`] is that
//! binary's entry point.

mod cli;
mod measure;
mod plan;
mod python;
mod run;
mod server_process;
mod side;
mod table;
pub mod timer_buckets;

pub use cli::main;
pub use measure::{Sample, Stopwatch, lateness_ns};
pub use plan::{EchoPlan, Plan};
pub use python::PythonSides;
pub use run::{Isolation, measure_one, run};
pub use server_process::{ServerProcess, serve_echo_child};
pub use side::{Side, listen_loopback};
pub use table::{Better, Row, Table, format_value, median, percentile};
