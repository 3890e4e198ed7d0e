//! The exercises of chapter 5 ("Try it") that a test can check.
//!
//! Each `#[ignore]`d test fails until its exercise is done. Run them with
//!
//!     cargo test -p workshop-tests --test step05_exercises -- --ignored
//!
//! A reference solution lives in `solutions/step05.rs`, and the tests that are
//! not ignored check it, so every exercise here is known to be solvable.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use step05::{EventLoop, sleep, yield_now};
use workshop_tests::{HANG_LIMIT, counted, within};

#[path = "solutions/step05.rs"]
mod solutions;

// ANCHOR: flag
/// Exercise 1: a flag that one task raises and other tasks wait for
/// (asyncio's `Event`, in miniature). Clones share one flag.
///
/// This one works, but a waiting task is polled again and again until the
/// flag goes up, the way the seeds' sleep asks the clock again and again.
/// Make `wait` sleep until `raise` wakes it.
#[derive(Clone, Default)]
struct Flag {
    shared: Rc<RefCell<FlagState>>,
}

#[derive(Default)]
struct FlagState {
    raised: bool,
}

impl Flag {
    fn raise(&self) {
        self.shared.borrow_mut().raised = true;
    }

    fn wait(&self) -> WaitForFlag {
        WaitForFlag { flag: self.clone() }
    }
}

/// The future `Flag::wait` returns.
struct WaitForFlag {
    flag: Flag,
}

impl Future for WaitForFlag {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.flag.shared.borrow().raised {
            return Poll::Ready(());
        }
        // Not yet: ask to be polled again at once.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
// ANCHOR_END: flag

/// What the test needs from a flag, so that it checks the exercise and the
/// solution alike.
trait AnyFlag: Clone + Default + 'static {
    fn raise(&self);
    fn wait(&self) -> impl Future<Output = ()> + 'static;
}

impl AnyFlag for Flag {
    fn raise(&self) {
        Flag::raise(self);
    }

    fn wait(&self) -> impl Future<Output = ()> + 'static {
        Flag::wait(self)
    }
}

/// How long the raising task sleeps before it raises the flag.
const BEFORE_RAISE: Duration = Duration::from_millis(100);

/// Two tasks wait for the flag; a third sleeps, then raises it. Each waiting
/// task should be polled twice: once to start waiting, once when the flag is
/// up.
fn check_flag<F: AnyFlag>() {
    let (first_polls, second_polls, second_done) = within(HANG_LIMIT, || {
        let lp = Rc::new(EventLoop::new().expect("a new poller"));
        let flag = F::default();
        let (first, first_polls) = counted(flag.wait());
        let (second, second_polls) = counted(flag.wait());
        let second_done = Rc::new(Cell::new(false));
        let done = Rc::clone(&second_done);
        lp.spawn(async move {
            second.await;
            done.set(true);
        });
        let raiser = flag.clone();
        lp.spawn(async move {
            sleep(BEFORE_RAISE).await;
            raiser.raise();
        });
        lp.block_on(async move {
            first.await;
            // One more turn, for the second waiter if it was woken after us.
            yield_now().await;
        })
        .expect("the loop runs");
        (first_polls.get(), second_polls.get(), second_done.get())
    });
    assert!(second_done, "the second waiting task never finished");
    assert_eq!(
        (first_polls, second_polls),
        (2, 2),
        "each waiting task should be polled twice: once to start waiting, \
         once after the flag went up"
    );
}

#[test]
#[ignore = "exercise 1 of chapter 5: wait for the flag without spinning"]
fn exercise_1_waiting_tasks_are_polled_only_when_the_flag_goes_up() {
    check_flag::<Flag>();
}

#[test]
fn exercise_1_has_a_solution() {
    check_flag::<solutions::Flag>();
}
