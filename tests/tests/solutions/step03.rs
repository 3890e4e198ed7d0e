//! A solution to chapter 3's exercise. Try it yourself before reading on.

use std::time::{Duration, Instant};

use step03::EventLoop;

use super::OnBeat;

// ANCHOR: metronome
/// Beat `n` is due at `start + n × interval`, counted from one fixed start
/// rather than from whenever the previous beat finished, so a beat that runs
/// late or plays long does not move the ones after it.
pub fn metronome(lp: &EventLoop, interval: Duration, beats: u32, on_beat: OnBeat) {
    let start = Instant::now();
    lp.call_at(start + interval, move |lp| {
        beat(lp, start, interval, 1, beats, on_beat);
    });
}

fn beat(
    lp: &EventLoop,
    start: Instant,
    interval: Duration,
    n: u32,
    beats: u32,
    on_beat: OnBeat,
) {
    on_beat(n);
    if n < beats {
        lp.call_at(start + interval * (n + 1), move |lp| {
            beat(lp, start, interval, n + 1, beats, on_beat);
        });
    }
}
// ANCHOR_END: metronome
