//! The exercises of chapter 3 ("Try it") that a test can check.
//!
//! Each `#[ignore]`d test fails until its exercise is done. Run them with
//!
//!     cargo test -p workshop-tests --test step03_exercises -- --ignored
//!
//! A reference solution lives in `solutions/step03.rs`, and the tests that are
//! not ignored check it, so every exercise here is known to be solvable.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use step03::EventLoop;
use workshop_tests::{HANG_LIMIT, within};

#[path = "solutions/step03.rs"]
mod solutions;

/// What a metronome calls on each beat, with the beat's number (from 1).
type OnBeat = Rc<dyn Fn(u32)>;

// ANCHOR: metronome
/// Exercise 1: call `on_beat(1)` one `interval` from now, `on_beat(2)` two
/// intervals from now, and so on up to `on_beat(beats)`, however long each
/// beat takes to play.
fn metronome(lp: &EventLoop, interval: Duration, beats: u32, on_beat: OnBeat) {
    lp.call_later(interval, move |lp| beat(lp, 1, beats, interval, on_beat));
}

/// Plays beat `n`, then asks for the next one `interval` later.
fn beat(lp: &EventLoop, n: u32, beats: u32, interval: Duration, on_beat: OnBeat) {
    on_beat(n);
    if n < beats {
        lp.call_later(interval, move |lp| {
            beat(lp, n + 1, beats, interval, on_beat);
        });
    }
}
// ANCHOR_END: metronome

fn check_metronome(metronome: fn(&EventLoop, Duration, u32, OnBeat)) {
    const INTERVAL: Duration = Duration::from_millis(50);
    const BEATS: u32 = 6;
    // Each beat keeps the thread busy for most of an interval.
    const PLAYING: Duration = Duration::from_millis(45);
    // How late a loaded machine may wake the loop, on top of the schedule.
    const LATENESS: Duration = Duration::from_millis(150);

    let played = Rc::new(RefCell::new(Vec::new()));
    let record = played.clone();
    let lp = EventLoop::new();
    let start = Instant::now();
    metronome(
        &lp,
        INTERVAL,
        BEATS,
        Rc::new(move |n| {
            record.borrow_mut().push((n, start.elapsed()));
            std::thread::sleep(PLAYING);
        }),
    );
    lp.run();

    let played = played.borrow();
    let numbers: Vec<u32> = played.iter().map(|&(n, _)| n).collect();
    assert_eq!(numbers, (1..=BEATS).collect::<Vec<_>>());
    for &(n, at) in played.iter() {
        assert!(at >= INTERVAL * n, "beat {n} came early, at {at:?}");
    }
    // On time, the last beat comes at 300 ms. If every beat's playing time
    // delays the next, it comes at 300 + 5 × 45 = 525 ms or later.
    let (last, at) = played[played.len() - 1];
    assert!(
        at < INTERVAL * BEATS + LATENESS,
        "beat {last} came at {at:?}, not {:?}: the beats drifted",
        INTERVAL * BEATS
    );
}

#[test]
#[ignore = "exercise 1 of chapter 3: make the metronome keep time"]
fn exercise_1_the_metronome_keeps_time() {
    within(HANG_LIMIT, || {
        check_metronome(metronome);
    });
}

#[test]
fn exercise_1_has_a_solution() {
    within(HANG_LIMIT, || {
        check_metronome(solutions::metronome);
    });
}
