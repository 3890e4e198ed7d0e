//! Step 3's two sleeps (`sleeps-step03.svg`): one after the other, then
//! side by side, each bar ending where the trace saw its timer come due;
//! and the polling sleep's CPU beside the heap's, as the demo prints them.

use super::svg::{self, Svg};
use super::{Figure, Line, lines, section};

const ONE_AFTER: &str = "One after the other: sleep 0.5 s, then sleep 0.7 s";
const AT_ONCE: &str = "Concurrently: both sleeps scheduled at once";

/// `traced`: the demo's output with `LOOP_TRACE=1`; `untraced`: its stdout
/// without, for the CPU times (a traced polling loop spends its CPU on
/// printing).
pub(super) fn figure(traced: &str, untraced: &str) -> Figure {
    let mut times = due_times(section(traced, ONE_AFTER));
    times.extend(due_times(section(traced, AT_ONCE)));
    assert_eq!(times.len(), 4, "two timers in each of the two parts");
    times.extend(wall_and_cpu(untraced, "polling the clock"));
    times.extend(wall_and_cpu(untraced, "sleeping until the deadline"));
    // The polling sleep's CPU and the heap's.
    Figure::new("sleeps-step03.svg", times, draw).with_cpu_times(&[5, 7])
}

/// When each timer of a part came due, in seconds since its loop started.
fn due_times(part: &str) -> Vec<f64> {
    lines(part)
        .into_iter()
        .filter_map(|line| match line {
            Line::Trace { seconds, what, .. } if what.starts_with("timer due") => {
                Some(seconds)
            }
            _ => None,
        })
        .collect()
}

/// `polling the clock   0.50 s wall, 0.49 s CPU` -> [0.50, 0.49].
fn wall_and_cpu(stdout: &str, label: &str) -> [f64; 2] {
    let line = stdout
        .lines()
        .find(|line| line.starts_with(label))
        .unwrap_or_else(|| panic!("no line `{label}` in step 3's output"));
    let numbers: Vec<f64> = line
        .split_whitespace()
        .filter_map(|word| word.parse().ok())
        .collect();
    [numbers[0], numbers[1]]
}

const X0: f64 = 250.0;
const SPAN: f64 = 1.4;
const SCALE: f64 = (svg::WIDTH - X0 - 50.0) / SPAN;
const BAR: f64 = 20.0;

fn draw(t: &[f64]) -> String {
    let mut svg = Svg::new(
        545.0,
        "Step 3: two sleeps on one loop, and the CPU a sleep costs",
    );
    svg.text(
        24.0,
        32.0,
        &svg::bold(17, svg::INK),
        "Two sleeps on step 3's loop, from a traced run",
    );
    let bar = svg::boxed(svg::BLUE_FILL, svg::BLUE, 1.5);
    svg.text(24.0, 66.0, &svg::bold(14, svg::INK), "One after the other");
    sleep_bar(&mut svg, 80.0, "sleep 0.5 s", 0.0, t[0], &bar);
    sleep_bar(&mut svg, 106.0, "then sleep 0.7 s", t[0], t[1], &bar);
    total(&mut svg, 106.0, 146.0, t[1], "the sum of the two");
    svg.text(24.0, 180.0, &svg::bold(14, svg::INK), "Side by side");
    sleep_bar(&mut svg, 194.0, "sleep 0.5 s", 0.0, t[2], &bar);
    sleep_bar(&mut svg, 220.0, "sleep 0.7 s", 0.0, t[3], &bar);
    total(&mut svg, 220.0, 260.0, t[3], "only the longer of the two");
    svg.time_axis(X0, 274.0, SPAN, 0.2, SCALE);
    svg.text(
        24.0,
        326.0,
        &svg::bold(14, svg::INK),
        "The same 0.5 s wait, two ways: wall time against CPU time",
    );
    cpu_pair(&mut svg, 340.0, "polling the clock", t[4], t[5]);
    cpu_pair(&mut svg, 400.0, "sleeping until the heap's", t[6], t[7]);
    svg.text(40.0, 432.0, &svg::sized(13, svg::INK), "earliest deadline");
    svg.time_axis(X0, 458.0, SPAN, 0.2, SCALE);
    svg.footnote(
        510.0,
        "Bars end where LOOP_TRACE=1 cargo run -p step03 saw each timer come due; the CPU times are the demo's own.",
    );
    svg.finish(t)
}

fn x(seconds: f64) -> f64 {
    X0 + seconds.clamp(0.0, SPAN) * SCALE
}

fn sleep_bar(svg: &mut Svg, y: f64, label: &str, from: f64, to: f64, style: &str) {
    svg.text(40.0, y + 15.0, &svg::sized(13, svg::INK), label);
    svg.rect(x(from), y, x(to) - x(from), BAR, style);
    svg.text(
        x(to) + 6.0,
        y + 15.0,
        &svg::sized(12, svg::MUTED),
        &format!("due at {to:.2} s"),
    );
}

/// A dashed mark at `at` seconds, from just above the bar that ends there
/// (its top at `last_bar`) down to the words at `bottom` saying what the
/// part took. Drawn from the part's top, it would strike through the
/// shorter bar's "due at" label when that label reaches past `at`.
fn total(svg: &mut Svg, last_bar: f64, bottom: f64, at: f64, why: &str) {
    svg.line(
        (x(at), last_bar - 3.0),
        (x(at), bottom - 14.0),
        &format!("{} stroke-dasharray=\"4 3\"", svg::stroke(svg::NEW, 1.5)),
    );
    svg.text(
        X0,
        bottom,
        &svg::bold(12, svg::NEW),
        &format!("took {at:.2} s: {why}"),
    );
}

fn cpu_pair(svg: &mut Svg, y: f64, label: &str, wall: f64, cpu: f64) {
    svg.text(40.0, y + 15.0, &svg::sized(13, svg::INK), label);
    svg.rect(
        x(0.0),
        y,
        x(wall) - x(0.0),
        BAR,
        &svg::boxed(svg::PANEL, svg::LINE, 1.2),
    );
    svg.text(
        x(wall) + 6.0,
        y + 15.0,
        &svg::sized(12, svg::MUTED),
        &format!("{wall:.2} s wall"),
    );
    let cpu_y = y + BAR + 4.0;
    svg.rect(
        x(0.0),
        cpu_y,
        (x(cpu) - x(0.0)).max(1.5),
        BAR,
        &svg::boxed(svg::NEW_FILL, svg::NEW, 1.5),
    );
    svg.text(
        x(cpu) + 6.0,
        cpu_y + 15.0,
        &svg::bold(12, svg::NEW),
        &format!("{cpu:.2} s CPU"),
    );
}
