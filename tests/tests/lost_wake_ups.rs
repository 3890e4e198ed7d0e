//! A lost wake-up is named, not waited on: from step 5 on, `block_on`
//! returns an error naming the tasks nothing can wake any more, instead of
//! waiting for ever. And it is never a false alarm: a waker held by another
//! thread, a timer or a socket is waited for, however long it takes.

include!("shared/lost_wake_ups.rs");

lost_wake_ups!(step05);
lost_wake_ups!(step06);
lost_wake_ups!(step07);
lost_wake_ups!(step08);

mod joins {
    use super::*;

    lost_wake_ups_with_join!(step06);
    lost_wake_ups_with_join!(step07);
    lost_wake_ups_with_join!(step08);
}

mod sockets {
    use super::*;

    lost_wake_ups_with_sockets!(step07);
    lost_wake_ups_with_sockets!(step08);
}
