//! A solution to chapter 3's exercise. Try it yourself before reading on.

use std::time::{Duration, Instant};

use step03::EventLoop;

use super::OnBeat;

// ANCHOR: metronome
/// Beat `n` is due at `start + n × interval`, a deadline fixed before the
/// first beat plays, so a beat that runs late or plays long does not move
/// the ones after it.
pub fn metronome(lp: &EventLoop, interval: Duration, beats: u32, on_beat: OnBeat) {
    let start = Instant::now();
    for n in 1..=beats {
        let on_beat = on_beat.clone();
        lp.call_at(start + interval * n, move |_| on_beat(n));
    }
}
// ANCHOR_END: metronome
