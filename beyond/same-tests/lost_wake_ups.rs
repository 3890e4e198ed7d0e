//! The lost wake-ups of `tests/tests/lost_wake_ups.rs`, the same scenarios
//! (`tests/tests/shared/lost_wake_ups.rs`), run on `fast` under the name
//! `step08` where that file runs them on steps 5 to 8.

include!("../../tests/tests/shared/lost_wake_ups.rs");

lost_wake_ups!(step08);

mod joins {
    use super::*;

    lost_wake_ups_with_join!(step08);
}

mod sockets {
    use super::*;

    lost_wake_ups_with_sockets!(step08);
}
