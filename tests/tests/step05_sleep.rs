//! Step 5's `sleep` and `yield_now`: timers under tasks, with the timing
//! claims of the demo, and a loop that waits without burning CPU.

use std::cell::RefCell;
use std::future;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;
use step05::{EventLoop, sleep, sleep_until, yield_now};
use workshop_tests::{HANG_LIMIT, counted, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

fn secs(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}

const AN_HOUR: Duration = Duration::from_secs(3600);

/// How many timers wait on the loop: its `Debug` output counts them.
fn timers_on(lp: &EventLoop) -> usize {
    let debug = format!("{lp:?}");
    let count = debug
        .split("timers: ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap_or_else(|| panic!("no timer count in {debug}"));
    count.parse().expect("a number")
}

/// A waker that only counts its wake-ups: a stand-in for a task that
/// polled a future once and went away.
#[derive(Default)]
struct CountingWaker(AtomicU32);

impl CountingWaker {
    fn wake_ups(&self) -> u32 {
        self.0.load(Ordering::SeqCst)
    }
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn two_sleeping_tasks_take_as_long_as_the_longer_sleep() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let started = Instant::now();
        lp.spawn(sleep(secs(0.5)));
        lp.block_on(sleep(secs(0.7))).unwrap();
        let took = started.elapsed();
        assert!(took >= secs(0.7), "woke early: {took:?}");
        // Serially they would take 1.2 s; the margin is for a loaded machine.
        assert!(took < secs(1.0), "not concurrent: {took:?}");
    });
}

#[test]
fn sleep_never_returns_early() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        for millis in [0, 1, 20, 75] {
            let nap = Duration::from_millis(millis);
            let took = lp
                .block_on(async move {
                    let started = Instant::now();
                    sleep(nap).await;
                    started.elapsed()
                })
                .unwrap();
            assert!(took >= nap, "sleep({nap:?}) returned after {took:?}");
        }
    });
}

#[test]
fn tasks_sleeping_until_the_same_deadline_wake_in_the_order_they_slept() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let log = Rc::new(RefCell::new(Vec::new()));
        let deadline = Instant::now() + secs(0.05);
        for name in ["first", "second", "third"] {
            let log = Rc::clone(&log);
            lp.spawn(async move {
                sleep_until(deadline).await;
                log.borrow_mut().push(name);
            });
        }
        lp.block_on(sleep_until(deadline + secs(0.05))).unwrap();
        assert_eq!(*log.borrow(), ["first", "second", "third"]);
    });
}

#[test]
fn a_sleeping_loop_uses_almost_no_cpu() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let cpu = ThreadTime::now();
        lp.block_on(sleep(secs(0.3))).unwrap();
        let used = cpu.elapsed();
        // Spinning would use about 0.3 s; blocking in poll uses next to none.
        assert!(used < secs(0.05), "used {used:?} of CPU to sleep 0.3 s");
    });
}

#[test]
fn a_task_that_yields_lets_a_sleeper_wake_on_time() {
    within(HANG_LIMIT, || {
        // A task that only ever yields keeps the loop busy; the loop must still
        // look at its timers every turn.
        let lp = new_loop();
        lp.spawn(async {
            loop {
                yield_now().await;
            }
        });
        let started = Instant::now();
        lp.block_on(sleep(secs(0.1))).unwrap();
        let took = started.elapsed();
        assert!(took < secs(0.4), "the sleeper woke after {took:?}");
    });
}

#[test]
fn yield_now_says_not_yet_exactly_once() {
    within(HANG_LIMIT, || {
        let mut future = yield_now();
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut future).poll(&mut cx).is_pending());
        assert!(Pin::new(&mut future).poll(&mut cx).is_ready());
    });
}

#[test]
fn a_sleeping_task_is_polled_once_to_wait_and_once_to_go_on() {
    within(HANG_LIMIT, || {
        let (nap, polls) = counted(sleep(secs(0.05)));
        new_loop().block_on(nap).unwrap();
        assert_eq!(
            polls.get(),
            2,
            "a task that slept 0.05 s was polled {} times: the first poll arms \
             the timer and says Pending, and only the timer wakes it, once",
            polls.get()
        );
    });
}

#[test]
fn a_sleep_polled_again_and_again_arms_one_timer() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let timers = lp
            .block_on(async move {
                let mut nap = pin!(sleep(AN_HOUR));
                for _ in 0..5 {
                    // One poll of the sleep, as a spurious wake-up of the
                    // task awaiting it would cause.
                    let poll =
                        future::poll_fn(|cx| Poll::Ready(nap.as_mut().poll(cx)))
                            .await;
                    assert!(poll.is_pending(), "an hour's sleep was over at once");
                    yield_now().await;
                }
                timers_on(&same_loop)
            })
            .unwrap();
        assert_eq!(
            timers, 1,
            "the sleep armed {timers} timers for one sleep polled 5 times: arm \
             it once, on the first poll; later polls only hand the timer the \
             new waker"
        );
    });
}

#[test]
fn a_sleep_polled_again_wakes_the_waker_of_its_latest_poll() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        let first = Arc::new(CountingWaker::default());
        let first_woken = Arc::clone(&first);
        let started = Instant::now();
        lp.block_on(async move {
            let mut nap = pin!(sleep(secs(0.02)));
            // The first poll comes from elsewhere: another task, say, that
            // polled the sleep once and handed it on.
            let first_waker = Waker::from(first);
            let mut first_cx = Context::from_waker(&first_waker);
            assert!(nap.as_mut().poll(&mut first_cx).is_pending());
            // Now this task awaits it. Should its timer wake the first waker
            // instead, a late timer of the test's own wakes this task after
            // a second, so that the test fails rather than hangs.
            let mut backstop_set = false;
            future::poll_fn(|cx| {
                if !backstop_set {
                    backstop_set = true;
                    let waker = cx.waker().clone();
                    same_loop.call_later(secs(1.0), move |_| waker.wake());
                }
                nap.as_mut().poll(cx)
            })
            .await;
        })
        .unwrap();
        assert_eq!(
            first_woken.wake_ups(),
            0,
            "the sleep woke the waker of its first poll, not the latest: the \
             task awaiting it now was woken only by the test's backstop, after \
             {:?}",
            started.elapsed()
        );
    });
}

#[test]
fn a_sleep_whose_timer_went_with_its_loop_sets_one_on_the_next() {
    // A sleep polled once on one loop, whose timer (and with it the waker
    // the sleep shares with the timer's callback) goes when that loop is
    // dropped, then awaited on another: it must set a timer there, or
    // nothing will ever wake it.
    within(HANG_LIMIT, || {
        let first = new_loop();
        // The sleep comes out of the first loop unfinished, on purpose: it
        // is awaited on the second.
        #[allow(clippy::async_yields_async)]
        let nap = first
            .block_on(async {
                let mut nap = sleep(secs(0.05));
                future::poll_fn(|cx| {
                    assert!(Pin::new(&mut nap).poll(cx).is_pending());
                    Poll::Ready(())
                })
                .await;
                nap
            })
            .unwrap();
        drop(first);
        new_loop().block_on(nap).unwrap_or_else(|err| {
            panic!(
                "a sleep whose shared waker is gone (its timer went with its \
                 loop) must set a new timer when polled again: {err}"
            )
        });
    });
}
