//! Every workload of `bench/README.md` on every runtime, printed as one table of
//! medians with ratios against tokio:
//!
//! ```sh
//! cargo bench -p bench --bench compare                # about 1.5 min per runtime
//! cargo bench -p bench --bench compare -- --quick     # a few seconds
//! cargo bench -p bench --bench compare -- --python    # asyncio and uvloop too
//! ```

#[path = "../sides/mod.rs"]
mod sides;

fn main() -> std::process::ExitCode {
    bench::main(sides::ALL)
}
