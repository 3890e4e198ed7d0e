//! Every runtime the benchmarks compare, each a [`bench::Side`] in a file of
//! its own. The benchmark targets and the tests include this folder with
//! `#[path]`, because tokio is a dev-dependency: only they may use it.

pub mod fast;
pub mod ours;
pub mod tokio_side;

/// The runtimes, in the table's column order; tokio first, as every ratio
/// is taken against it.
pub const ALL: &[bench::Side] = &[tokio_side::SIDE, ours::SIDE, fast::SIDE];
