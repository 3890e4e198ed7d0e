//! The lost wake-ups of `tests/tests/lost_wake_ups.rs`, the same scenarios
//! (`tests/tests/shared/lost_wake_ups.rs`), run on `fast` where that file
//! runs them on steps 5 to 8.

include!("../../tests/tests/shared/lost_wake_ups.rs");

lost_wake_ups!(fast);

mod joins {
    use super::*;

    lost_wake_ups_with_join!(fast);
}

mod sockets {
    use super::*;

    lost_wake_ups_with_sockets!(fast);
}
