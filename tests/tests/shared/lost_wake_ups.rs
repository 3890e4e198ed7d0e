// The scenarios of `lost_wake_ups.rs`, one copy: each file that includes
// this one names the crates it runs them on (`lost_wake_ups!(step05)`),
// `tests/tests/lost_wake_ups.rs` steps 5 to 8,
// `beyond/same-tests/lost_wake_ups.rs` `fast` (under the name `step08`).

use std::cell::{Cell, RefCell};
use std::future;
use std::io;
use std::pin::pin;
use std::rc::Rc;
use std::sync::{Mutex, mpsc};
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

/// A future that is ready once `woken` is set, and until then leaves its
/// waker in `waker`, for whoever sets it: a channel of one value between
/// two tasks, made by hand.
fn ready_once_set(
    woken: Rc<Cell<bool>>,
    waker: Rc<RefCell<Option<Waker>>>,
) -> impl Future<Output = ()> {
    future::poll_fn(move |cx| {
        if woken.get() {
            return Poll::Ready(());
        }
        *waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    })
}

/// Sets `woken` and wakes whoever waits in `waker`: the sending side of
/// `ready_once_set`.
fn set_and_wake(woken: &Cell<bool>, waker: &RefCell<Option<Waker>>) {
    woken.set(true);
    if let Some(waker) = waker.borrow_mut().take() {
        waker.wake();
    }
}

/// A waker woken when it is dropped: kept in a thread-local, it is woken
/// by the thread-local's destructor, as its thread ends, while the
/// thread's locals are being destroyed. Waking must not panic there: a
/// panic in a thread-local's destructor aborts the whole process.
struct WakesWhenDropped(Waker);

impl Drop for WakesWhenDropped {
    fn drop(&mut self) {
        self.0.wake_by_ref();
    }
}

thread_local! {
    /// Where a thread keeps a waker it wakes as it ends.
    static WOKEN_AS_THE_THREAD_ENDS: RefCell<Option<WakesWhenDropped>> =
        const { RefCell::new(None) };
}

/// A future that hands its waker to another thread, which keeps it in a
/// thread-local and ends after `delay`: the waker is woken by the
/// thread-local's destructor.
fn woken_as_a_thread_ends_after(delay: Duration) -> impl Future<Output = ()> {
    let mut handed_over = false;
    future::poll_fn(move |cx| {
        if handed_over {
            return Poll::Ready(());
        }
        handed_over = true;
        let waker = WakesWhenDropped(cx.waker().clone());
        thread::spawn(move || {
            WOKEN_AS_THE_THREAD_ENDS.set(Some(waker));
            thread::sleep(delay);
        });
        Poll::Pending
    })
}

/// The first of two futures to be ready, polling both each time: a select
/// made by hand.
async fn first_of(one: impl Future<Output = ()>, other: impl Future<Output = ()>) {
    let (mut one, mut other) = (pin!(one), pin!(other));
    future::poll_fn(|cx| {
        if one.as_mut().poll(cx).is_ready() || other.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        Poll::Pending
    })
    .await;
}

macro_rules! lost_wake_ups {
    ($step:ident) => {
        mod $step {
            use ::$step::{EventLoop, LostWakeUp, sleep};

            use super::*;

            /// Where a task leaves its waker for a thread to wake (one per
            /// step: the steps' tests run at the same time).
            static WAKER_IN_A_STATIC: Mutex<Option<Waker>> = Mutex::new(None);

            thread_local! {
                /// Where a task leaves its waker for another task.
                static WAKER_IN_A_THREAD_LOCAL: RefCell<Option<Waker>> =
                    const { RefCell::new(None) };
            }

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
            fn a_waker_woken_as_its_thread_ends_is_waited_for_and_wakes() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(woken_as_a_thread_ends_after(Duration::from_millis(300)))
                        .expect("a wake-up from a thread-local's destructor is not lost");
                });
            }

            #[test]
            fn a_waker_woken_as_its_loops_thread_ends_is_harmless() {
                // On the loop's own thread, after the loop is gone: the
                // wake-up finds no loop to interrupt, and must not panic.
                let ended = thread::spawn(|| {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    let mut kept = false;
                    lp.block_on(future::poll_fn(move |cx| {
                        if kept {
                            return Poll::Ready(());
                        }
                        kept = true;
                        let waker = WakesWhenDropped(cx.waker().clone());
                        WOKEN_AS_THE_THREAD_ENDS.set(Some(waker));
                        cx.waker().wake_by_ref();
                        Poll::Pending
                    }))
                    .unwrap();
                })
                .join();
                assert!(ended.is_ok(), "the loop's thread panicked");
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
            fn a_waker_kept_in_a_static_for_a_thread_is_waited_for() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    let mut waited = false;
                    lp.block_on(future::poll_fn(move |cx| {
                        if waited {
                            return Poll::Ready(());
                        }
                        waited = true;
                        *WAKER_IN_A_STATIC.lock().unwrap() =
                            Some(cx.waker().clone());
                        thread::spawn(|| {
                            thread::sleep(Duration::from_millis(300));
                            let waker = WAKER_IN_A_STATIC.lock().unwrap().take();
                            waker.expect("the task left its waker").wake();
                        });
                        Poll::Pending
                    }))
                    .expect("the static's waker is the thread's to wake: no alarm");
                });
            }

            #[test]
            fn a_waker_kept_in_a_thread_local_for_another_task_is_waited_for() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    // The waker's owner wakes only once a thread has woken it.
                    detach(&lp, async {
                        woken_by_a_thread_after(Duration::from_millis(300)).await;
                        let waker = WAKER_IN_A_THREAD_LOCAL.take();
                        waker.expect("the main task left its waker").wake();
                    });
                    let mut waited = false;
                    lp.block_on(future::poll_fn(move |cx| {
                        if waited {
                            return Poll::Ready(());
                        }
                        waited = true;
                        WAKER_IN_A_THREAD_LOCAL.set(Some(cx.waker().clone()));
                        Poll::Pending
                    }))
                    .expect(
                        "the thread-local's waker has a task to wake it: no alarm",
                    );
                });
            }

            #[test]
            fn a_waker_sent_to_a_sleeping_thread_is_waited_for() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    let (send, receive) = mpsc::channel::<Waker>();
                    // The thread sleeps before it even looks at the channel:
                    // meanwhile the waker is in the channel, no one's hand.
                    thread::spawn(move || {
                        thread::sleep(Duration::from_millis(300));
                        receive.recv().expect("a waker comes").wake();
                    });
                    let mut waited = false;
                    lp.block_on(future::poll_fn(move |cx| {
                        if waited {
                            return Poll::Ready(());
                        }
                        waited = true;
                        send.send(cx.waker().clone()).expect("the thread lives");
                        Poll::Pending
                    }))
                    .expect("the channel holds the waker for the thread: no alarm");
                });
            }

            #[test]
            fn a_select_of_a_lost_future_and_one_a_thread_wakes_is_no_alarm() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(first_of(
                        forgets_its_waker(),
                        woken_by_a_thread_after(Duration::from_millis(300)),
                    ))
                    .expect("one branch may still be woken: no alarm");
                });
            }

            #[test]
            fn a_channel_between_tasks_whose_sender_sleeps_first_is_no_alarm() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    let woken = Rc::new(Cell::new(false));
                    let waker = Rc::new(RefCell::new(None));
                    let (sent, sender_waker) =
                        (Rc::clone(&woken), Rc::clone(&waker));
                    // It sleeps in a thread, not on a timer: no timer is left
                    // to keep the loop from looking for a lost wake-up.
                    detach(&lp, async move {
                        woken_by_a_thread_after(Duration::from_millis(300)).await;
                        set_and_wake(&sent, &sender_waker);
                    });
                    lp.block_on(ready_once_set(woken, waker))
                        .expect("the sender holds the receiver's waker: no alarm");
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

/// From step 6 on a task can wait to join a child: the child's slot holds
/// the joiner's waker, which counts as the loop's own when the child is
/// stuck too.
macro_rules! lost_wake_ups_with_join {
    ($step:ident) => {
        mod $step {
            use ::$step::{EventLoop, sleep, spawn};

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
            fn a_parent_waiting_for_a_child_that_sleeps_gets_its_value() {
                // Chapter 6's scene: the child ends on a timer, while its
                // parent waits in its slot, and its end wakes the parent.
                let value = within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        spawn(async {
                            sleep(Duration::from_millis(100)).await;
                            5
                        })
                        .await
                    })
                    .unwrap_or_else(|err| panic!("{err}"))
                });
                assert_eq!(value.unwrap(), 5);
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

/// From step 7 on a task can wait for a socket, whose readiness wakes it.
macro_rules! lost_wake_ups_with_sockets {
    ($step:ident) => {
        mod $step {
            use ::$step::{EventLoop, socket_pair, spawn};

            use super::*;

            #[test]
            fn an_idle_socket_pair_beside_a_waker_a_thread_holds_is_no_alarm() {
                within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        let _idle = socket_pair().unwrap();
                        woken_by_a_thread_after(Duration::from_millis(300)).await;
                    })
                    .expect("the thread's wake-up may still come: no alarm");
                });
            }

            #[test]
            fn a_read_from_a_socket_pair_whose_writer_sleeps_first_is_no_alarm() {
                let read = within(NAMED_WITHIN, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        let (mut reader, mut writer) = socket_pair()?;
                        // In a thread, as above: no timer is left.
                        let _writer = spawn(async move {
                            woken_by_a_thread_after(Duration::from_millis(300))
                                .await;
                            writer.write_all(b"late").await
                        });
                        let mut buf = [0; 4];
                        reader.read(&mut buf).await
                    })
                    .unwrap_or_else(|err| panic!("{err}"))
                });
                assert_eq!(read.expect("the read succeeds"), 4);
            }
        }
    };
}
