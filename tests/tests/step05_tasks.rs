//! Step 5's tasks: `spawn` and `block_on`, what runs when, and what is left
//! when `block_on` returns or the loop is dropped.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use step05::{EventLoop, sleep, yield_now};
use workshop_tests::{DropFlag, HANG_LIMIT, counted, within};

fn new_loop() -> Rc<EventLoop> {
    Rc::new(EventLoop::new().expect("a new poller"))
}

/// Turns the loop exactly once: `block_on` spawns its future, which is
/// done at its first poll, at the end of the first turn.
fn one_turn(lp: &Rc<EventLoop>) {
    lp.block_on(async {}).unwrap();
}

/// How many tasks are not done: the loop's `Debug` output counts them.
fn tasks_on(lp: &EventLoop) -> usize {
    let debug = format!("{lp:?}");
    let count = debug
        .split("tasks: ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap_or_else(|| panic!("no task count in {debug}"));
    count.parse().expect("a number")
}

#[test]
fn block_on_returns_what_its_future_returns() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        assert_eq!(lp.block_on(async { 6 * 7 }).unwrap(), 42);
        let greeting = lp.block_on(async {
            yield_now().await;
            String::from("after a yield")
        });
        assert_eq!(greeting.unwrap(), "after a yield");
    });
}

#[test]
fn tasks_take_turns_in_the_order_they_were_spawned() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let log = Rc::new(RefCell::new(Vec::new()));
        // Six tasks, so that an order that is not the wake-ups' (a hash
        // table's, say) cannot come out right by chance: one in 720.
        let names = ["a", "b", "c", "d", "e", "f"];
        for name in names {
            let log = Rc::clone(&log);
            lp.spawn(async move {
                for round in 0..3 {
                    log.borrow_mut().push(format!("{name}{round}"));
                    yield_now().await;
                }
            });
        }
        lp.block_on(async {
            for _ in 0..4 {
                yield_now().await;
            }
        })
        .unwrap();
        let expected: Vec<String> = (0..3)
            .flat_map(|round| names.map(|name| format!("{name}{round}")))
            .collect();
        assert_eq!(
            log.borrow().join(" "),
            expected.join(" "),
            "each yield lets every other ready task run once, and the woken tasks \
             run in the order they were woken (kept in a list, not looked up in \
             the task table, whose order is the hash's)"
        );
    });
}

#[test]
fn a_task_that_yields_is_polled_once_a_turn_and_leaves_the_table_when_done() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let (flag, dropped) = DropFlag::new();
        let (task, polls) = counted(async move {
            let _flag = flag;
            for _ in 0..3 {
                yield_now().await;
            }
        });
        lp.spawn(task);
        for turn in 1..=3 {
            one_turn(&lp);
            assert_eq!(
                polls.get(),
                turn,
                "after {turn} turns a task that yields (and so wakes itself) \
                 had been polled {} times: the loop polls a woken task once a \
                 turn, and a wake-up that comes during its poll queues the next",
                polls.get()
            );
            assert!(
                !dropped.get(),
                "the task was dropped after poll {turn} returned Pending: a \
                 pending task goes back in the table, to be polled when woken"
            );
        }
        one_turn(&lp); // the fourth poll: the task returns Ready
        assert_eq!(polls.get(), 4);
        assert!(dropped.get(), "the task was not dropped when it was done");
        assert_eq!(
            tasks_on(&lp),
            0,
            "a task that returned Ready is still in the task table: it leaves \
             the table when it is done"
        );
        for _ in 0..3 {
            one_turn(&lp); // `counted` fails if it is polled again
        }
    });
}

#[test]
fn a_task_does_nothing_until_the_loop_polls_it() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let started = Rc::new(Cell::new(false));
        let flag = Rc::clone(&started);
        lp.spawn(async move { flag.set(true) });
        assert!(!started.get(), "spawn only queues the task");
        lp.block_on(async {}).unwrap();
        assert!(started.get());
    });
}

#[test]
fn block_on_returns_when_its_own_future_is_done_and_leaves_other_tasks_pending() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let steps = Rc::new(Cell::new(0));
        let counter = Rc::clone(&steps);
        lp.spawn(async move {
            for _ in 0..10 {
                counter.set(counter.get() + 1);
                yield_now().await;
            }
        });

        lp.block_on(yield_now()).unwrap();
        let after_first = steps.get();
        assert!(after_first < 10, "block_on did not wait for the other task");

        lp.block_on(async {
            for _ in 0..20 {
                yield_now().await;
            }
        })
        .unwrap();
        assert_eq!(steps.get(), 10, "the next block_on carried on with it");
    });
}

#[test]
fn dropping_the_loop_drops_its_pending_tasks() {
    within(HANG_LIMIT, || {
        let (flag, dropped) = DropFlag::new();
        let lp = new_loop();
        lp.spawn(async move {
            let _flag = flag;
            sleep(Duration::from_secs(60)).await;
        });
        lp.block_on(yield_now()).unwrap();
        assert!(!dropped.get(), "the task is still asleep on the loop");

        drop(lp);
        assert!(dropped.get(), "no reference cycle kept the task alive");
    });
}

#[test]
#[should_panic(expected = "no event loop is running on this thread")]
fn sleep_outside_block_on_says_what_is_missing() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        // Long enough to be pending at its first poll on any machine: a sleep
        // whose deadline has passed is ready without asking for the loop.
        lp.spawn(sleep(Duration::from_secs(3600)));
        // `run` drives callbacks only; tasks that need the loop need `block_on`.
        lp.run().unwrap();
    });
}

#[test]
#[should_panic(expected = "block_on called inside block_on")]
fn block_on_inside_a_task_is_refused() {
    within(HANG_LIMIT, || {
        let lp = new_loop();
        let same_loop = Rc::clone(&lp);
        lp.block_on(async move { same_loop.block_on(yield_now()).unwrap() })
            .unwrap();
    });
}
