//! The demo `cargo run -p step06` shows: tasks that spawn tasks, and wait
//! for them.

use std::io;
use std::panic;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::event_loop::{EventLoop, join_all, spawn};
use crate::join::panic_message;
use crate::sleep::{sleep, sleep_until, yield_now};

/// Runs the demo's scenes, one after another, each on a loop of its own.
pub fn run() -> io::Result<()> {
    println!("== spawn a child, then join it ==");
    Rc::new(EventLoop::new()?).block_on(spawn_then_join())?;

    println!();
    println!("== A group of sleeps {NAPS:?} s beside a background ticker ==");
    Rc::new(EventLoop::new()?).block_on(group_beside_ticker())?;

    println!();
    println!("== A child that panics ==");
    with_short_panic_reports(|| Rc::new(EventLoop::new()?).block_on(order_drinks()))
}

// ANCHOR: spawn_join
/// Seed 004's `spawn` and `join`: the child runs beside its parent, which
/// waits for it and gets back what it returned.
async fn spawn_then_join() {
    let child = spawn(hello("world"));
    let greeting = child.await;
    println!("(after join) the child returned {greeting:?}");
}

async fn hello(name: &str) -> String {
    yield_now().await; // without the join, the parent would print first
    let greeting = format!("Hello, {name}!");
    println!("{greeting}");
    greeting
}
// ANCHOR_END: spawn_join

// ANCHOR: group
/// Seed 002's task group beside a background task: the group takes as long
/// as its longest sleep, and `block_on` does not wait for the ticker.
async fn group_beside_ticker() {
    spawn(ticker()); // the handle is dropped: the ticker runs detached
    let started = Instant::now();
    let naps = join_all(NAPS.map(nap)).await;
    let took = started.elapsed().as_secs_f64();
    println!("join_all returned {naps:?} after {took:.2} s");
}

/// How long each task in the group sleeps, in seconds.
const NAPS: [f64; 3] = [1.0, 0.5, 0.5];

async fn nap(seconds: f64) -> f64 {
    sleep(Duration::from_secs_f64(seconds)).await;
    println!("slept {seconds:.1} s");
    seconds
}

/// A tick every 0.25 s for ever, at 0.125 s, 0.375 s, ...: half-way between
/// the naps' deadlines, so a tick and a nap never race to print first.
///
/// Half-way keeps 0.125 s between a tick and the nearest nap, which is what
/// the pinned output needs on a busy machine: when the loop's turn comes
/// late, a tick that came due meanwhile fires in the same turn as the last
/// nap, before `block_on` has seen the group end, and counts one more.
async fn ticker() {
    let started = Instant::now();
    let mut ticks = TickCount(0);
    loop {
        let next = TICK / 2 + TICK * ticks.0;
        sleep_until(started + next).await;
        ticks.0 += 1;
        println!("tick {}", ticks.0);
    }
}

const TICK: Duration = Duration::from_millis(250);

/// Lives in the ticker's future: when `block_on` drops the ticker, this is
/// dropped with it, and says so.
struct TickCount(u32);

impl Drop for TickCount {
    fn drop(&mut self) {
        println!("ticker dropped, tick count {}", self.0);
    }
}
// ANCHOR_END: group

// ANCHOR: panicking_child
/// A child that panics: its parent gets the panic's message as an error,
/// and its sibling, the loop and the parent all carry on. Both drinks are
/// due at one instant, so their timers come due in one turn, however late a
/// busy machine runs the loop.
async fn order_drinks() {
    let due = Instant::now() + Duration::from_millis(100);
    let coffee = spawn(brew("coffee", false, due));
    let tea = spawn(brew("tea", true, due));
    match coffee.await {
        Ok(drink) => println!("parent: got {drink}"),
        Err(err) => println!("parent: the coffee task failed: {err}"),
    }
    println!("parent: the tea task still finished: {:?}", tea.await);
}

async fn brew(drink: &'static str, in_stock: bool, due: Instant) -> &'static str {
    sleep_until(due).await;
    assert!(in_stock, "out of {drink}");
    drink
}
// ANCHOR_END: panicking_child

// ANCHOR: panic_hook
/// Runs `demo` with a panic hook that reports a panic in one short line.
///
/// The hook runs where the panic happens, before the loop catches it. The
/// default one prints the file, line and column, and a whole backtrace when
/// `RUST_BACKTRACE` is set: in a demo where the panic is expected, that
/// reads like a crash, and it changes with every edit to this file.
fn with_short_panic_reports<T>(demo: impl FnOnce() -> T) -> T {
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(|info| {
        let message = panic_message(info.payload());
        eprintln!("panic hook: a task panicked: {message}");
    }));
    let result = demo();
    panic::set_hook(default_hook);
    result
}
// ANCHOR_END: panic_hook
