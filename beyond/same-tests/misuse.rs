//! The misuses of `tests/tests/misuse.rs`, the same scenarios
//! (`tests/tests/shared/misuse.rs`), run on `fast` under the name `step08`
//! where that file runs them on steps 3 to 8.

include!("../../tests/tests/shared/misuse.rs");

mod loops {
    use super::*;

    loop_misuse!(step08, |lp: std::io::Result<::step08::EventLoop>| lp
        .unwrap());
}

mod tasks {
    use super::*;

    task_misuse!(step08);

    timeout_misuse!();
}

mod joins {
    use super::*;

    join_misuse!(step08);
}

mod sockets {
    use super::*;

    io_misuse!(step08);

    timeout_io_misuse!();
}
