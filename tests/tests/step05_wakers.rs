//! Step 5's wakers: a wake-up queues one poll, never more, never too late,
//! and never none, from whichever thread it comes.

use std::cell::RefCell;
use std::future::{self, Future};
use std::rc::Rc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier};
use std::task::{Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use step05::{EventLoop, yield_now};
use workshop_tests::{HANG_LIMIT, counted, within};

/// Where a test's future leaves its waker for the test to wake.
type WakerSlot = Rc<RefCell<Option<Waker>>>;

/// A future that never completes; it leaves its latest waker in `slot`.
fn parked(slot: &WakerSlot) -> impl Future<Output = ()> + use<> {
    let slot = Rc::clone(slot);
    future::poll_fn(move |cx| {
        *slot.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    })
}

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

async fn yield_times(turns: u32) {
    for _ in 0..turns {
        yield_now().await;
    }
}

#[test]
fn a_task_woken_twice_before_it_runs_is_polled_once() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let slot = WakerSlot::default();
        let (task, polls) = counted(parked(&slot));
        lp.spawn(task);

        let polls_seen = lp
            .block_on(async move {
                yield_now().await; // the parked task has had its first poll
                let waker = slot.borrow().clone().expect("polled once already");
                waker.wake_by_ref();
                waker.wake_by_ref();
                yield_times(3).await; // room for a second and a third poll
                polls.get()
            })
            .unwrap();

        assert_eq!(polls_seen, 2, "one poll to start, one for both wake-ups");
    });
}

#[test]
fn run_polls_every_woken_task_once_a_turn_until_none_is_woken() {
    // `run`, not `block_on`: a wake-up that is never written down leaves
    // `run` with nothing to do, and it returns, where `block_on` would wait
    // for ever for its own task.
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (first, first_polls) = counted(yield_times(2));
        let (second, second_polls) = counted(yield_times(2));
        lp.spawn(first);
        lp.spawn(second);
        lp.run().unwrap();
        let polls = (first_polls.get(), second_polls.get());
        let what = match polls {
            (0, 0) => {
                "no task was ever polled: spawn wakes its task, and the wake-up \
                 that finds a task not yet queued writes its id down"
            }
            (_, 0) => {
                "the second woken task was never polled: a turn polls every \
                 task woken since the last"
            }
            _ => {
                "a task that yields wakes itself during its poll: that wake-up \
                 queues one more poll, on the next turn"
            }
        };
        assert_eq!(
            polls,
            (3, 3),
            "two tasks that yield twice each were polled {polls:?} times by \
             run: {what}"
        );
    });
}

#[test]
fn a_task_that_wakes_itself_while_polled_is_polled_again() {
    let polls = within(Duration::from_secs(5), || {
        let (task, polls) = counted(future::poll_fn(|cx| {
            // Wakes itself twice before it is done, like `yield_now`, but
            // with nothing else on the loop to wake it if this were lost.
            cx.waker().wake_by_ref();
            Poll::Pending
        }));
        let lp = new_loop();
        lp.spawn(task);
        lp.block_on(yield_times(2)).unwrap();
        polls.get()
    });
    // Spawned before the main task, the self-waking task is polled once in
    // each of the three turns the main task needs to yield twice and return.
    assert_eq!(polls, 3);
}

#[test]
fn a_task_woken_by_a_callback_is_polled_in_the_same_turn() {
    // One turn per wake-up: a timer or socket callback that wakes a task is
    // followed, in the same turn, by the task's poll, not by one more
    // `epoll_wait` first. So the task runs before any callback the waking
    // callback scheduled, which waits for the next turn.
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let order: Rc<RefCell<Vec<&str>>> = Rc::default();
        let seen = Rc::clone(&order);
        let same_loop = Rc::clone(&lp);
        lp.block_on(async move {
            let mut parked = false;
            future::poll_fn(|cx| {
                if parked {
                    return Poll::Ready(());
                }
                parked = true;
                let waker = cx.waker().clone();
                let seen = Rc::clone(&seen);
                same_loop.call_soon(move |lp| {
                    lp.call_soon(move |_| seen.borrow_mut().push("next callback"));
                    waker.wake();
                });
                Poll::Pending
            })
            .await;
            seen.borrow_mut().push("woken task");
            yield_now().await; // the next turn runs the next callback
        })
        .unwrap();
        assert_eq!(*order.borrow(), ["woken task", "next callback"]);
    });
}

#[test]
fn a_self_waking_main_task_runs_to_completion() {
    let polls = within(Duration::from_secs(5), || {
        let mut left = 3;
        let (task, polls) = counted(future::poll_fn(move |cx| {
            if left == 0 {
                return Poll::Ready(());
            }
            left -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }));
        new_loop().block_on(task).unwrap();
        polls.get()
    });
    assert_eq!(polls, 4);
}

#[test]
fn a_finished_task_is_never_polled_again_however_often_it_is_woken() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let slot = WakerSlot::default();
        let task_slot = Rc::clone(&slot);
        // `counted` fails the test if the task is polled after it returned.
        let (task, polls) = counted(future::poll_fn(move |cx| {
            *task_slot.borrow_mut() = Some(cx.waker().clone());
            Poll::Ready(())
        }));
        lp.spawn(task);

        lp.block_on(async move {
            yield_now().await; // the task ran and finished
            let waker = slot.borrow().clone().expect("the task ran");
            for _ in 0..3 {
                waker.wake_by_ref();
                yield_now().await;
            }
            let from_another_thread = waker.clone();
            thread::spawn(move || from_another_thread.wake())
                .join()
                .unwrap();
            yield_times(3).await;
        })
        .unwrap();

        assert_eq!(polls.get(), 1);
    });
}

#[test]
fn waking_a_task_after_its_loop_is_gone_is_harmless() {
    within(HANG_LIMIT, || {
        let slot = WakerSlot::default();
        {
            let lp = new_loop();
            lp.spawn(parked(&slot));
            lp.block_on(yield_now()).unwrap();
        }
        let waker = slot.borrow_mut().take().expect("the task was polled");
        waker.wake_by_ref();
        thread::spawn(move || waker.wake()).join().unwrap();
    });
}

#[test]
fn a_wake_from_another_thread_ends_a_blocked_poll_promptly() {
    let delay = within(Duration::from_secs(10), || {
        let (send_waker, waker) = mpsc::channel::<Waker>();
        let waker_thread = thread::spawn(move || {
            let waker = waker.recv().expect("the task sends its waker");
            // Long enough for the loop to be blocked in `poll` by now.
            thread::sleep(Duration::from_millis(200));
            let woken_at = Instant::now();
            waker.wake();
            woken_at
        });

        // No timer and no socket: only the wake-up can end the loop's wait.
        let mut sent = false;
        let resumed_at = new_loop()
            .block_on(future::poll_fn(move |cx| {
                if sent {
                    return Poll::Ready(Instant::now());
                }
                send_waker.send(cx.waker().clone()).unwrap();
                sent = true;
                Poll::Pending
            }))
            .unwrap();
        resumed_at - waker_thread.join().unwrap()
    });
    // A few milliseconds normally; generous for a machine under load.
    assert!(
        delay < Duration::from_millis(500),
        "resumed {delay:?} after"
    );
}

#[test]
fn callbacks_and_tasks_may_spawn_schedule_and_wake_while_the_loop_runs_them() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let log = Rc::new(RefCell::new(Vec::new()));
        let note =
            |log: &Rc<RefCell<Vec<&'static str>>>, line| log.borrow_mut().push(line);

        // A parked task that a running task will wake.
        let slot = WakerSlot::default();
        let parked_log = Rc::clone(&log);
        let parked_slot = Rc::clone(&slot);
        let mut first_poll = true;
        lp.spawn(future::poll_fn(move |cx| {
            if first_poll {
                first_poll = false;
                *parked_slot.borrow_mut() = Some(cx.waker().clone());
                return Poll::Pending;
            }
            note(&parked_log, "parked task woken by another task");
            Poll::Ready(())
        }));

        // A callback that spawns a task, and schedules a callback that does too.
        let callback_log = Rc::clone(&log);
        lp.call_soon(move |lp| {
            let task_log = Rc::clone(&callback_log);
            lp.spawn(async move { note(&task_log, "task spawned by a callback") });
            lp.call_soon(move |lp| {
                note(&callback_log, "callback scheduled by a callback");
                lp.spawn(
                    async move { note(&callback_log, "task spawned by that one") },
                );
            });
        });

        // A task that spawns a task (through a clone of the loop) and wakes one.
        let spawner_log = Rc::clone(&log);
        let spawner_loop = Rc::clone(&lp);
        lp.spawn(async move {
            yield_now().await;
            let child_log = Rc::clone(&spawner_log);
            spawner_loop
                .spawn(async move { note(&child_log, "task spawned by a task") });
            slot.borrow().as_ref().expect("parked first").wake_by_ref();
        });

        lp.block_on(yield_times(5)).unwrap();
        let mut lines = log.borrow().clone();
        lines.sort_unstable();
        assert_eq!(
            lines,
            [
                "callback scheduled by a callback",
                "parked task woken by another task",
                "task spawned by a callback",
                "task spawned by a task",
                "task spawned by that one",
            ]
        );
    });
}

#[test]
fn wake_ups_racing_in_from_several_threads_queue_one_poll() {
    // Threads wake one parked task together, round after round. Whatever
    // the interleaving, one poll must follow: only one of them may find the
    // task not yet queued. Reading the flag and setting it in two steps lets
    // two threads both find it unset now and then (in 3,000 rounds, 8 to 47
    // times here; never with `swap`).
    const THREADS: usize = 4;
    const ROUNDS: u32 = 3_000;
    let extra_polls = within(HANG_LIMIT, || {
        let lp = new_loop();
        let slot = WakerSlot::default();
        let (task, polls) = counted(parked(&slot));
        lp.spawn(task);
        lp.block_on(async move {
            yield_now().await; // the parked task has had its first poll
            let waker = slot.borrow().clone().expect("polled once already");
            // All the threads and this one start a round together; then the
            // threads meet again among themselves, and the last to come lets
            // the others go as it wakes the task itself.
            let start = Arc::new(Barrier::new(THREADS + 1));
            let together = Arc::new(Barrier::new(THREADS));
            let wakers: Vec<_> = (0..THREADS)
                .map(|_| {
                    let (waker, start, together) =
                        (waker.clone(), Arc::clone(&start), Arc::clone(&together));
                    thread::spawn(move || {
                        for _ in 0..ROUNDS {
                            start.wait();
                            together.wait();
                            waker.wake_by_ref();
                            start.wait();
                        }
                    })
                })
                .collect();
            let mut extra_polls = 0;
            for _ in 0..ROUNDS {
                let before = polls.get();
                start.wait(); // the round begins
                start.wait(); // every thread has woken the task
                yield_times(3).await; // room for a second poll, and a third
                extra_polls += polls.get() - before - 1;
            }
            for thread in wakers {
                thread.join().expect("a waking thread");
            }
            extra_polls
        })
        .unwrap()
    });
    assert_eq!(
        extra_polls, 0,
        "{extra_polls} extra polls in {ROUNDS} rounds of {THREADS} threads \
         waking one task at once: marking the task queued must be one step \
         that says whether it already was (swap), or two threads both queue it"
    );
}

#[test]
fn every_wake_from_another_thread_reaches_a_loop_blocked_in_poll() {
    // Round after round, the task hands its waker to another thread and
    // waits; that thread wakes it, and the task's next waker is the answer.
    // If the loop is interrupted before the task's id is written down, it
    // can look, find nothing, and wait again, for ever: the race is narrow,
    // so it takes many rounds to meet it.
    const ROUNDS: u32 = 20_000;
    let patience = Duration::from_secs(5);
    let (send_waker, wakers) = mpsc::channel::<Waker>();
    let (send_outcome, outcome) = mpsc::channel::<Result<(), String>>();
    let stalled = send_outcome.clone();
    let waking_thread = thread::spawn(move || {
        for round in 1..=ROUNDS {
            let Ok(waker) = wakers.recv_timeout(patience) else {
                let _ = stalled.send(Err(format!(
                    "round {round} of {ROUNDS}: the task did not come back within \
                     {patience:?} of a wake from another thread: the loop must find \
                     the task's id when the interrupt ends its wait, so the id is \
                     written down before the interrupt"
                )));
                return;
            };
            waker.wake();
        }
    });
    // The loop runs on a thread of its own, so that a stall leaves it there
    // and the test still ends with the message above.
    thread::spawn(move || {
        let result = new_loop().block_on(async move {
            for _ in 0..ROUNDS {
                let mut sent = false;
                future::poll_fn(|cx| {
                    if sent {
                        return Poll::Ready(());
                    }
                    sent = send_waker.send(cx.waker().clone()).is_ok();
                    Poll::Pending
                })
                .await;
            }
        });
        let _ = send_outcome.send(result.map_err(|err| err.to_string()));
    });
    match outcome.recv_timeout(HANG_LIMIT) {
        Ok(Ok(())) => waking_thread.join().expect("the waking thread"),
        Ok(Err(why)) => panic!("{why}"),
        Err(RecvTimeoutError::Timeout) => {
            panic!("{ROUNDS} wake-ups from another thread took over {HANG_LIMIT:?}")
        }
        Err(RecvTimeoutError::Disconnected) => {
            panic!("the loop's thread ended without an outcome: it panicked (above)")
        }
    }
}
