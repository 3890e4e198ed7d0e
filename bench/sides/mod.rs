//! Every runtime the benchmarks compare, each a [`bench::Side`] in a file of
//! its own. The benchmark targets and the tests include this folder with
//! `#[path]`, because tokio is a dev-dependency: only they may use it.

pub mod tokio_side;

/// Step 8's runtime, the loop the book builds.
pub mod ours {
    use step08 as runtime;
    const NAME: &str = "ours";
    include!("step08_api.rs");
}

/// `fast` (`beyond/`): step 8's API rebuilt for speed, the same code on it.
pub mod fast {
    use ::fast as runtime;
    const NAME: &str = "fast";
    include!("step08_api.rs");
}

/// The runtimes, in the table's column order; tokio first, as every ratio
/// is taken against it.
pub const ALL: &[bench::Side] = &[tokio_side::SIDE, ours::SIDE, fast::SIDE];
