//! Misusing the runtime gets a clear answer, never a hang, a cryptic panic
//! or a lost value: the same mistakes, tried on every step that has the
//! code they touch. Each module below is one step; the macros keep one
//! scenario written once and run against every step's crate.

use std::any::Any;
use std::future::{self, Future};
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;
use std::task::Poll;

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
            use std::time::Duration;

            use ::$step::EventLoop;

            use super::*;

            #[test]
            fn run_from_a_callback_is_refused() {
                let message = within(HANG_LIMIT, || {
                    refusal(|| {
                        let lp = EventLoop::new();
                        #[allow(clippy::redundant_closure_call)]
                        let lp = ($run)(lp);
                        lp.call_soon(|lp| {
                            let _ = lp.run();
                        });
                        let _ = lp.run();
                    })
                });
                assert!(
                    message.contains(ALREADY_RUNNING),
                    "the panic said: {message}"
                );
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
        }
    };
}

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

/// Items 1 and 2 again, for the steps with tasks: 5 to 8.
macro_rules! task_misuse {
    ($step:ident) => {
        mod $step {
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
                let message = within(HANG_LIMIT, || {
                    refusal(|| {
                        let lp = Rc::new(EventLoop::new().unwrap());
                        let inner = Rc::clone(&lp);
                        lp.call_soon(move |_| {
                            let _ = inner.block_on(async {});
                        });
                        let _ = lp.run();
                    })
                });
                assert!(
                    message.contains(ALREADY_RUNNING),
                    "the panic said: {message}"
                );
            }

            #[test]
            fn a_sleep_too_long_to_add_to_the_clock_never_ends() {
                let value = within(HANG_LIMIT, || {
                    let lp = Rc::new(EventLoop::new().unwrap());
                    lp.block_on(async {
                        let _never = sleep(Duration::MAX);
                        7
                    })
                    .unwrap()
                });
                assert_eq!(value, 7);
            }
        }
    };
}

mod tasks {
    use super::*;

    task_misuse!(step05);
    task_misuse!(step06);
    task_misuse!(step07);
    task_misuse!(step08);
}

/// Items 3, 4, 6 and 7: a task's destructor that panics or spawns, a
/// handle polled again, a handle whose task was dropped. Steps 6 to 8.
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

            /// Keeps `Poll` in use where a step has nothing else that needs it.
            #[allow(dead_code)]
            fn ready() -> Poll<()> {
                Poll::Ready(())
            }
        }
    };
}

mod joins {
    use super::*;

    join_misuse!(step06);
    join_misuse!(step07);
    join_misuse!(step08);
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

mod sockets {
    use super::*;

    io_misuse!(step07);
    io_misuse!(step08);

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
                    assert!(read.await.is_err(), "a read with nothing sent ended");
                    (near, far)
                })
                .unwrap();
            // `run` returns at once: nothing waits for the socket.
            lp.run().unwrap();
            drop(sockets);
        });
    }
}
