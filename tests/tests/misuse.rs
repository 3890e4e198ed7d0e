//! Misusing the runtime gets a clear answer, never a hang, a cryptic panic
//! or a lost value: the same mistakes, tried on every step that has the
//! code they touch. Each module below is one step; the macros (in
//! `shared/misuse.rs`) keep one scenario written once and run against
//! every step's crate.

include!("shared/misuse.rs");

mod loops {
    use super::*;

    loop_misuse!(step03, |lp| lp);
    loop_misuse!(step04, |lp: std::io::Result<::step04::EventLoop>| lp
        .unwrap());
    loop_misuse!(step05, |lp: std::io::Result<::step05::EventLoop>| lp
        .unwrap());
    loop_misuse!(step06, |lp: std::io::Result<::step06::EventLoop>| lp
        .unwrap());
    loop_misuse!(step07, |lp: std::io::Result<::step07::EventLoop>| lp
        .unwrap());
    loop_misuse!(step08, |lp: std::io::Result<::step08::EventLoop>| lp
        .unwrap());
}

mod tasks {
    use super::*;

    task_misuse!(step05);
    task_misuse!(step06);
    task_misuse!(step07);
    task_misuse!(step08);

    timeout_misuse!();
}

mod joins {
    use super::*;

    join_misuse!(step06);
    join_misuse!(step07);
    join_misuse!(step08);
}

/// Item 5 in steps 6 and 7, which cannot cancel: a `join_all` dropped
/// before its end (as `timeout` would drop it in step 8) detaches its
/// tasks, which run on to their end, as its documentation says.
macro_rules! detach_misuse {
    ($step:ident) => {
        mod $step {
            use std::cell::Cell;
            use std::future::{self, Future};
            use std::pin::pin;
            use std::rc::Rc;
            use std::task::Poll;

            use ::$step::{EventLoop, join_all, yield_now};

            use super::*;

            #[test]
            fn a_join_all_dropped_before_its_end_leaves_its_tasks_running() {
                let ended = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        let ended = Rc::new(Cell::new(0));
                        let tasks = (0..2).map(|_| {
                            let ended = Rc::clone(&ended);
                            async move {
                                yield_now().await;
                                ended.set(ended.get() + 1);
                            }
                        });
                        {
                            let mut all = pin!(join_all(tasks));
                            // One poll: the tasks are spawned, none has ended.
                            future::poll_fn(|cx| {
                                assert!(all.as_mut().poll(cx).is_pending());
                                Poll::Ready(())
                            })
                            .await;
                        } // join_all is dropped here
                        for _ in 0..4 {
                            yield_now().await;
                        }
                        ended.get()
                    })
                    .unwrap()
                });
                assert_eq!(ended, 2, "the tasks did not run on");
            }
        }
    };
}

mod detaches {
    use super::*;

    detach_misuse!(step06);
    detach_misuse!(step07);
}

mod sockets {
    use super::*;

    io_misuse!(step07);
    io_misuse!(step08);

    timeout_io_misuse!();
}
