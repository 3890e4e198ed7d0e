//! A lost wake-up is named, not waited on: from step 5 on, `block_on`
//! returns an error naming the tasks nothing can wake any more, instead of
//! waiting for ever. And it is never a false alarm: a waker held by another
//! thread, a timer or a socket is waited for, however long it takes.

use std::future;
use std::io;
use std::task::{Poll, Waker};
use std::thread;
use std::time::Duration;

use workshop_tests::within;

/// Far more than naming a lost wake-up takes (a turn or two), and far less
/// than the `HANG_LIMIT` a hang is given.
const NAMED_WITHIN: Duration = Duration::from_secs(5);

/// A future that says `Pending` and keeps nothing: the lost wake-up in its
/// plainest form.
fn forgets_its_waker() -> impl Future<Output = ()> {
    future::poll_fn(|_| Poll::Pending)
}

/// The message of a `block_on` that must have failed with a lost wake-up.
fn lost_wake_up_message<T: std::fmt::Debug>(outcome: io::Result<T>) -> String {
    let err =
        outcome.expect_err("block_on returned, but nothing could wake its task");
    err.to_string()
}

/// A future that hands its waker to another thread, which wakes it after
/// `delay`: a wake-up that is late, not lost.
fn woken_by_a_thread_after(delay: Duration) -> impl Future<Output = ()> {
    let mut handed_over = false;
    future::poll_fn(move |cx| {
        if handed_over {
            return Poll::Ready(());
        }
        handed_over = true;
        let waker: Waker = cx.waker().clone();
        thread::spawn(move || {
            thread::sleep(delay);
            waker.wake();
        });
        Poll::Pending
    })
}

macro_rules! lost_wake_ups {
    ($step:ident) => {
        mod $step {
            use std::rc::Rc;

            use ::$step::{EventLoop, LostWakeUp, sleep};

            use super::*;

            /// Spawns `future` and lets it run on its own: step 5's `spawn`
            /// returns nothing, later steps' a handle, dropped here.
            #[allow(clippy::let_underscore_future)]
            fn detach(lp: &EventLoop, future: impl Future<Output = ()> + 'static) {
                let _ = lp.spawn(future);
            }

            #[test]
            fn block_on_names_a_future_that_kept_no_waker() {
                let message = within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lost_wake_up_message(lp.block_on(forgets_its_waker()))
                });
                assert!(message.contains("lost wake-up"), "{message}");
                assert!(message.contains("task 0, spawned at"), "{message}");
                assert!(message.contains(file!()), "{message}");
                assert!(message.contains("\"Lost wake-ups\""), "{message}");
            }

            #[test]
            fn the_error_is_a_lost_wake_up_naming_every_stuck_task() {
                let ids = within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    detach(&lp, forgets_its_waker());
                    let err = lp.block_on(forgets_its_waker()).unwrap_err();
                    let lost =
                        err.get_ref().and_then(|e| e.downcast_ref::<LostWakeUp>());
                    lost.expect("the error is a LostWakeUp").task_ids()
                });
                assert_eq!(ids, [0, 1]);
            }

            #[test]
            fn a_waker_held_by_another_thread_is_waited_for() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(woken_by_a_thread_after(Duration::from_millis(300)))
                        .expect("a late wake-up from another thread is not lost");
                });
            }

            #[test]
            fn a_task_lost_beside_one_a_thread_will_wake_is_no_alarm() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    detach(&lp, forgets_its_waker());
                    lp.block_on(woken_by_a_thread_after(Duration::from_millis(300)))
                        .expect("the thread's wake-up may still come: no alarm");
                });
            }

            #[test]
            fn a_sleeping_task_is_no_alarm() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    detach(&lp, forgets_its_waker());
                    lp.block_on(sleep(Duration::from_millis(50)))
                        .expect("a timer will wake the task: no alarm");
                });
            }
        }
    };
}

lost_wake_ups!(step05);
lost_wake_ups!(step06);
lost_wake_ups!(step07);
lost_wake_ups!(step08);

/// From step 6 on a task can wait to join a child: the child's slot holds
/// the joiner's waker, which counts as the loop's own when the child is
/// stuck too.
macro_rules! lost_wake_ups_with_join {
    ($step:ident) => {
        mod $step {
            use std::rc::Rc;

            use ::$step::{EventLoop, spawn};

            use super::*;

            #[test]
            fn block_on_names_a_joined_child_that_kept_no_waker_and_its_joiner() {
                let message = within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lost_wake_up_message(
                        lp.block_on(async { spawn(forgets_its_waker()).await }),
                    )
                });
                assert!(
                    message.contains("task 0, spawned at")
                        && message.contains("waiting to join task 1"),
                    "{message}"
                );
                assert!(
                    message.contains("task 1, spawned at")
                        && message.contains("nothing holds its waker"),
                    "{message}"
                );
            }

            #[test]
            fn a_chain_of_joins_ending_in_a_lost_wake_up_is_named_whole() {
                let message = within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lost_wake_up_message(lp.block_on(async {
                        spawn(async { spawn(forgets_its_waker()).await }).await
                    }))
                });
                assert!(message.contains("waiting to join task 1"), "{message}");
                assert!(message.contains("waiting to join task 2"), "{message}");
                assert!(message.contains("nothing holds its waker"), "{message}");
            }

            #[test]
            fn joining_a_child_that_a_thread_will_wake_is_no_alarm() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        spawn(woken_by_a_thread_after(Duration::from_millis(300)))
                            .await
                            .unwrap();
                    })
                    .expect("the child's wake-up may still come: no alarm");
                });
            }
        }
    };
}

mod joins {
    use super::*;

    lost_wake_ups_with_join!(step06);
    lost_wake_ups_with_join!(step07);
    lost_wake_ups_with_join!(step08);
}
