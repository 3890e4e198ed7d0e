// The scenarios of `misuse.rs`, one copy: `tests/tests/misuse.rs` runs
// them on steps 3 to 8, `beyond/same-tests/misuse.rs` on `fast` (under the
// name `step08`). Each names the crates it runs them on, in the modules of
// the same names, and includes this file.


use std::any::Any;
use std::future::{self, Future};
use std::panic::{self, AssertUnwindSafe};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use workshop_tests::{HANG_LIMIT, within};

/// What a panic said, for asserting on its message.
fn panic_text(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "(a panic without a message)".to_owned()
    }
}

/// Runs `misuse`, which must panic, and returns what the panic said.
fn refusal(misuse: impl FnOnce()) -> String {
    match panic::catch_unwind(AssertUnwindSafe(misuse)) {
        Ok(()) => panic!("the misuse was not refused"),
        Err(panic) => panic_text(&*panic),
    }
}

/// The words every refusal of a nested `run` or `block_on` carries, as
/// asyncio's "This event loop is already running".
const ALREADY_RUNNING: &str = "already running";

/// Item 1 and 2 of the misuse list, for the steps whose `run` takes the loop
/// by reference and whose timers take a delay: 3 to 8.
macro_rules! loop_misuse {
    ($step:ident, $run:expr) => {
        mod $step {
            use std::cell::Cell;
            use std::rc::Rc;
            use std::time::Duration;

            use ::$step::EventLoop;

            use super::*;

            /// A loop whose first callback calls `run` again, and whose
            /// second only notes that it ran.
            fn nested_run_then_a_note() -> (EventLoop, Rc<Cell<bool>>) {
                #[allow(clippy::redundant_closure_call)]
                let lp = ($run)(EventLoop::new());
                let ran = Rc::new(Cell::new(false));
                let note = Rc::clone(&ran);
                lp.call_soon(|lp| {
                    let _ = lp.run();
                });
                lp.call_soon(move |_| note.set(true));
                (lp, ran)
            }

            #[test]
            fn run_from_a_callback_is_refused() {
                let (message, ran) = within(HANG_LIMIT, || {
                    let (lp, ran) = nested_run_then_a_note();
                    let message = refusal(|| {
                        let _ = lp.run();
                    });
                    (message, ran.get())
                });
                assert!(
                    message.contains(ALREADY_RUNNING),
                    "the panic said: {message}"
                );
                assert!(!ran, "the nested run ran the next callback");
            }

            #[test]
            fn the_loop_runs_again_after_a_refused_nested_run() {
                let (ran_when_refused, ran_after) = within(HANG_LIMIT, || {
                    let (lp, ran) = nested_run_then_a_note();
                    let _ = refusal(|| {
                        let _ = lp.run();
                    });
                    let ran_when_refused = ran.get();
                    // The refusal unwound out of `run`: the loop must not
                    // think it is still running, and the second callback
                    // must still be waiting for its turn.
                    let _ = lp.run();
                    (ran_when_refused, ran.get())
                });
                assert!(!ran_when_refused, "the nested run ran the next callback");
                assert!(ran_after, "the loop did not run again");
            }

            #[test]
            fn a_delay_too_long_to_add_to_the_clock_means_never() {
                within(HANG_LIMIT, || {
                    #[allow(clippy::redundant_closure_call)]
                    let lp = ($run)(EventLoop::new());
                    let _never = lp.call_later(Duration::MAX, |_| {
                        panic!("a timer for Duration::MAX fired");
                    });
                });
            }

            /// Steps 3 to 7 cannot cancel a timer, and `run` would wait
            /// thirty years for the far one, so the short one ends `run` the
            /// only other way: by panicking.
            #[test]
            fn a_duration_max_timer_waits_behind_a_short_one() {
                let (message, lp_after) = within(HANG_LIMIT, || {
                    #[allow(clippy::redundant_closure_call)]
                    let lp = ($run)(EventLoop::new());
                    let _never = lp.call_later(Duration::MAX, |_| {
                        panic!("a timer for Duration::MAX fired");
                    });
                    let _soon = lp.call_later(Duration::from_millis(1), |_| {
                        panic!("the short timer fired");
                    });
                    let message = refusal(|| {
                        let _ = lp.run();
                    });
                    (message, format!("{lp:?}"))
                });
                assert_eq!(message, "the short timer fired");
                assert!(
                    lp_after.contains("timers: 1"),
                    "the far timer is not waiting: {lp_after}"
                );
            }
        }
    };
}

/// Items 1 and 2 again, for the steps with tasks: 5 to 8.
macro_rules! task_misuse {
    ($step:ident) => {
        mod $step {
            use std::cell::Cell;
            use std::pin::pin;
            use std::rc::Rc;
            use std::time::Duration;

            use ::$step::{EventLoop, sleep};

            use super::*;

            #[test]
            fn run_from_a_task_is_refused() {
                let message = within(HANG_LIMIT, || {
                    refusal(|| {
                        let lp = Rc::new(EventLoop::new().unwrap());
                        let inner = Rc::clone(&lp);
                        let _ = lp.block_on(async move {
                            let _ = inner.run();
                        });
                    })
                });
                assert!(
                    message.contains(ALREADY_RUNNING),
                    "the panic said: {message}"
                );
            }

            #[test]
            fn block_on_from_a_callback_is_refused() {
                let (message, ran) = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    let inner = Rc::clone(&lp);
                    let ran = Rc::new(Cell::new(false));
                    let note = Rc::clone(&ran);
                    lp.call_soon(move |_| {
                        let _ = inner.block_on(async {});
                    });
                    lp.call_soon(move |_| note.set(true));
                    let message = refusal(|| {
                        let _ = lp.run();
                    });
                    (message, ran.get())
                });
                assert!(
                    message.contains(ALREADY_RUNNING),
                    "the panic said: {message}"
                );
                assert!(!ran, "the nested block_on ran the next callback");
            }

            /// A sleep for `Duration::MAX` is set, stays pending, and the loop
            /// can wait with its thirty-year deadline on the heap: a wake
            /// from another thread ends that wait, and the sleep is still
            /// pending after it.
            #[test]
            fn a_sleep_too_long_to_add_to_the_clock_never_ends() {
                let value = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        let mut never = pin!(sleep(Duration::MAX));
                        assert!(poll_once(never.as_mut()).await.is_pending());
                        WokenFromAThread::default().await;
                        assert!(poll_once(never.as_mut()).await.is_pending());
                        7
                    })
                    .unwrap()
                });
                assert_eq!(value, 7);
            }
        }
    };
}

/// Polls `future` once, with the task's own waker, and says what it said.
async fn poll_once<F: Future + Unpin>(mut future: F) -> Poll<F::Output> {
    future::poll_fn(|cx| Poll::Ready(Pin::new(&mut future).poll(cx))).await
}

/// Pending until another thread, started at the first poll, wakes it: so
/// the loop has to wait in the OS for it, with whatever timers it holds.
#[derive(Default)]
struct WokenFromAThread {
    woken: Option<Arc<AtomicBool>>,
}

impl Future for WokenFromAThread {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(woken) = &self.woken {
            return if woken.load(SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            };
        }
        let woken = Arc::new(AtomicBool::new(false));
        let (flag, waker) = (Arc::clone(&woken), cx.waker().clone());
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            flag.store(true, SeqCst);
            waker.wake();
        });
        self.woken = Some(woken);
        Poll::Pending
    }
}

/// `timeout` is step 8's alone: its test in `mod tasks`, beside the steps'
/// own.
macro_rules! timeout_misuse {
    () => {
        /// `timeout` is step 8's alone.
        #[test]
        fn a_timeout_too_long_to_add_to_the_clock_never_times_out() {
            let outcome = within(HANG_LIMIT, || {
                let lp = std::rc::Rc::new(::step08::EventLoop::new().unwrap());
                lp.block_on(::step08::timeout(Duration::MAX, async { 7 }))
                    .unwrap()
            });
            assert_eq!(outcome, Ok(7));
        }
    };
}

/// Items 3, 4, 6 and 7: a task's destructor that panics or spawns, a
/// handle polled again, a handle whose task was dropped. Steps 6 to 8.
/// Item 5's tests for step 8 are in `step08_timeout.rs`.
macro_rules! join_misuse {
    ($step:ident) => {
        mod $step {
            use std::cell::Cell;
            use std::future::{self, Future};
            use std::pin::Pin;
            use std::rc::Rc;
            use std::task::{Context, Poll, Waker};

            use ::$step::{EventLoop, JoinHandle, spawn, yield_now};

            use super::*;

            /// Panics when dropped, as a careless destructor might.
            struct PanicsWhenDropped;

            impl Drop for PanicsWhenDropped {
                fn drop(&mut self) {
                    panic!("a destructor panicked");
                }
            }

            /// Spawns a task when dropped, and notes whether that task ran.
            struct SpawnsWhenDropped(Rc<Cell<bool>>);

            impl Drop for SpawnsWhenDropped {
                fn drop(&mut self) {
                    let ran = Rc::clone(&self.0);
                    let _detached = spawn(async move { ran.set(true) });
                }
            }

            fn tasks_on(lp: &EventLoop) -> bool {
                !format!("{lp:?}").contains("tasks: 0")
            }

            #[test]
            fn a_destructor_panicking_at_block_on_s_end_loses_no_value() {
                let (value, tasks_left) = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    let value = lp.block_on(async {
                        let _background = spawn(async {
                            let _guard = PanicsWhenDropped;
                            future::pending::<()>().await;
                        });
                        yield_now().await;
                        42
                    });
                    (value.unwrap(), tasks_on(&lp))
                });
                assert_eq!(value, 42);
                assert!(!tasks_left, "a task stayed in the table");
            }

            #[test]
            fn a_destructor_panicking_at_block_on_s_end_is_its_task_s_panic() {
                let (message, next) = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    // The handle leaves its block_on, whose end drops the task.
                    let handle = lp
                        .block_on(async {
                            let handle = spawn(async {
                                let _guard = PanicsWhenDropped;
                                future::pending::<()>().await;
                            });
                            yield_now().await; // the task takes its guard
                            Some(handle)
                        })
                        .unwrap()
                        .expect("the handle was returned");
                    let outcome = lp.block_on(handle).unwrap();
                    let message = outcome.map_err(|err| err.to_string());
                    // The loop goes on as if nothing had happened.
                    (message, lp.block_on(async { 5 }).unwrap())
                });
                let said =
                    message.expect_err("a task that never ended gave a value");
                assert_eq!(said, "task panicked: a destructor panicked");
                assert_eq!(next, 5);
            }

            #[test]
            fn a_task_spawned_during_block_on_s_teardown_does_not_outlive_it() {
                let (ran_later, tasks_left) = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    let ran = Rc::new(Cell::new(false));
                    let flag = Rc::clone(&ran);
                    lp.block_on(async move {
                        let _background = spawn(async move {
                            let _guard = SpawnsWhenDropped(flag);
                            future::pending::<()>().await;
                        });
                        yield_now().await;
                    })
                    .unwrap();
                    let tasks_left = tasks_on(&lp);
                    lp.block_on(async { yield_now().await }).unwrap();
                    (ran.get(), tasks_left)
                });
                assert!(!tasks_left, "a task outlived its block_on");
                assert!(!ran_later, "it ran in the next, unrelated block_on");
            }

            #[test]
            fn a_handle_polled_after_its_outcome_says_so() {
                let message = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        let mut handle: JoinHandle<u8> = spawn(async { 1 });
                        let first = (&mut handle).await;
                        assert_eq!(first.unwrap(), 1);
                        refusal(|| {
                            let mut context = Context::from_waker(Waker::noop());
                            let _ = Pin::new(&mut handle).poll(&mut context);
                        })
                    })
                    .unwrap()
                });
                assert!(message.contains("after"), "the panic said: {message}");
            }

            #[test]
            fn a_handle_whose_task_was_dropped_resolves() {
                let outcome = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    // The handle leaves its block_on, whose end drops the task.
                    let handle = lp
                        .block_on(async {
                            let handle = spawn(future::pending::<()>());
                            Some(handle)
                        })
                        .unwrap()
                        .expect("the handle was returned");
                    lp.block_on(handle).unwrap().map_err(|err| err.to_string())
                });
                let err = outcome.expect_err("a task that never ended gave a value");
                assert!(err.contains("cancelled"), "the error said: {err}");
            }

            #[test]
            fn a_task_spawned_during_teardown_is_dropped_and_its_handle_told() {
                let outcome = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    let late = Rc::new(Cell::new(None));
                    let slot = Rc::clone(&late);
                    lp.block_on(async move {
                        let _background = spawn(async move {
                            let _guard = SpawnsWhenDroppedInto(slot);
                            future::pending::<()>().await;
                        });
                        yield_now().await;
                    })
                    .unwrap();
                    let handle = late.take().expect("the destructor spawned");
                    lp.block_on(handle).unwrap().map_err(|err| err.to_string())
                });
                let err = outcome.expect_err("a task dropped unpolled gave a value");
                assert!(err.contains("cancelled"), "the error said: {err}");
            }

            /// Spawns a task when dropped, and leaves its handle in the slot.
            struct SpawnsWhenDroppedInto(Rc<Cell<Option<JoinHandle<()>>>>);

            impl Drop for SpawnsWhenDroppedInto {
                fn drop(&mut self) {
                    self.0.set(Some(spawn(async {})));
                }
            }

            /// Keeps `Poll` in use where a step has nothing else that needs it.
            #[allow(dead_code)]
            fn ready() -> Poll<()> {
                Poll::Ready(())
            }
        }
    };
}

/// Item 3 through step 8's `cancel`: a destructor that panics while the
/// loop drops a cancelled task is that task's panic, and its joiner hears it.
mod cancels {
    use std::future;
    use std::rc::Rc;

    use ::step08::{EventLoop, spawn, yield_now};

    use super::*;

    /// Panics when dropped, as a careless destructor might.
    struct PanicsWhenDropped;

    impl Drop for PanicsWhenDropped {
        fn drop(&mut self) {
            panic!("a destructor panicked");
        }
    }

    #[test]
    fn a_destructor_panicking_as_its_task_is_cancelled_is_the_task_s_panic() {
        let (message, next) = within(HANG_LIMIT, || {
            let lp = Rc::new(EventLoop::new().unwrap());
            lp.block_on(async {
                let handle = spawn(async {
                    let _guard = PanicsWhenDropped;
                    future::pending::<()>().await;
                });
                yield_now().await; // the task takes its guard, and waits
                assert!(handle.cancel());
                let message = handle.await.map_err(|err| err.to_string());
                // The loop goes on as if nothing had happened.
                (message, spawn(async { 5 }).await.unwrap())
            })
            .unwrap()
        });
        let said = message.expect_err("a cancelled task gave a value");
        assert_eq!(said, "task panicked: a destructor panicked");
        assert_eq!(next, 5);
    }
}

/// Polls `io` once, which must find nothing to do and wait, then drops it
/// while it waits, as a `timeout` that runs out does.
async fn drop_while_waiting<F: Future>(io: F) {
    let mut io = pin!(io);
    future::poll_fn(|cx| {
        assert!(io.as_mut().poll(cx).is_pending(), "it did not wait");
        Poll::Ready(())
    })
    .await;
}

/// Item 8: a read that is dropped while it waits takes its waker out of the
/// socket's slot. Steps 7 and 8.
macro_rules! io_misuse {
    ($step:ident) => {
        mod $step {
            use std::future::{self, Future};
            use std::net::{Ipv4Addr, SocketAddr};
            use std::pin::pin;
            use std::rc::Rc;
            use std::task::Poll;

            use ::$step::{
                EventLoop, TcpListener, TcpStream, socket_pair, spawn, yield_now,
            };
            use workshop_tests::counted;

            use super::*;

            /// Turns enough for readiness to reach a waiting waker, and for
            /// the task it wakes to be polled.
            const TURNS: usize = 4;

            #[test]
            fn a_read_dropped_while_it_waits_leaves_no_waiter() {
                within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    let sockets = lp
                        .block_on(async {
                            let (mut near, far) = socket_pair().unwrap();
                            {
                                let mut buf = [0; 8];
                                let mut read = pin!(near.read(&mut buf));
                                // One poll: nothing to read, so it waits.
                                future::poll_fn(|cx| {
                                    assert!(read.as_mut().poll(cx).is_pending());
                                    Poll::Ready(())
                                })
                                .await;
                            } // the read is dropped here, still waiting
                            (near, far)
                        })
                        .unwrap();
                    // Nothing waits for anything now: `run` has no work and
                    // must return at once instead of waiting for the socket.
                    lp.run().unwrap();
                    drop(sockets);
                });
            }

            #[test]
            fn a_read_dropped_while_it_waits_wakes_no_one_when_data_comes() {
                let polls = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        let (mut near, mut far) = socket_pair().unwrap();
                        let (task, polls) = counted(async move {
                            let mut buf = [0; 8];
                            drop_while_waiting(near.read(&mut buf)).await;
                            // Waits for nothing now, the socket least of all.
                            future::pending::<()>().await;
                        });
                        let _task = spawn(task);
                        yield_now().await;
                        assert_eq!(polls.get(), 1, "the task never ran");
                        far.write_all(b"late").await.unwrap();
                        for _ in 0..TURNS {
                            yield_now().await;
                        }
                        polls.get()
                    })
                    .unwrap()
                });
                assert_eq!(polls, 1, "data for a dropped read woke its task");
            }

            /// The waker a dropped read takes back is its own: a read on the
            /// original stream still wakes when a read on its clone is
            /// dropped.
            #[test]
            fn a_read_dropped_on_a_clone_leaves_the_original_s_reader_waiting() {
                let read = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
                        let mut listener = TcpListener::bind(loopback).unwrap();
                        let connecting = spawn(TcpStream::connect(
                            listener.local_addr().unwrap(),
                        ));
                        let (mut original, _) = listener.accept().await.unwrap();
                        let mut client = connecting.await.unwrap().unwrap();
                        let mut clone = original.try_clone().unwrap();
                        let reading = spawn(async move {
                            let mut buf = [0; 8];
                            let n = original.read(&mut buf).await.unwrap();
                            buf[..n].to_vec()
                        });
                        yield_now().await; // the original's reader waits
                        let mut buf = [0; 8];
                        drop_while_waiting(clone.read(&mut buf)).await;
                        client.write_all(b"hi").await.unwrap();
                        reading.await.unwrap()
                    })
                    .unwrap()
                });
                assert_eq!(read, b"hi");
            }
        }
    };
}

/// Step 8's alone: its test in `mod sockets`, beside the steps' own.
macro_rules! timeout_io_misuse {
    () => {
        /// Item 8 as `timeout` meets it: a read that timed out leaves no waiter.
        #[test]
        fn step08_a_timeout_around_a_read_leaves_no_waiter() {
            use std::rc::Rc;
            use std::time::Duration;

            use ::step08::{EventLoop, socket_pair, timeout};

            within(HANG_LIMIT, || {
                let lp = Rc::new(EventLoop::new().unwrap());
                let sockets = lp
                    .block_on(async {
                        let (mut near, far) = socket_pair().unwrap();
                        let mut buf = [0; 8];
                        let read =
                            timeout(Duration::from_millis(1), near.read(&mut buf));
                        assert!(
                            read.await.is_err(),
                            "a read with nothing sent ended"
                        );
                        (near, far)
                    })
                    .unwrap();
                // `run` returns at once: nothing waits for the socket.
                lp.run().unwrap();
                drop(sockets);
            });
        }
    };
}
