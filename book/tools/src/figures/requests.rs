//! Seed 002's ten requests to the slow server, from a traced run of step 4
//! (`requests-step04.svg`): one after another, each bar as long as the demo
//! says the request took; then all at once, each bar ending where the trace
//! saw the server's timer for it come due.

use super::svg::{self, Svg};
use super::{Figure, Line, lines, section};

const ONE_AFTER: &str = "Ten requests to a slow server, one after another";
const AT_ONCE: &str = "The same ten requests, all at once";
const REQUESTS: usize = 10;

pub(super) fn figure(traced: &str) -> Figure {
    let one_after = section(traced, ONE_AFTER);
    let mut times: Vec<f64> = one_after
        .lines()
        .filter(|line| line.starts_with("request "))
        .map(|line| seconds_after(line, " after "))
        .collect();
    assert_eq!(times.len(), REQUESTS, "ten requests, one after another");
    times.push(took(one_after));
    let at_once = section(traced, AT_ONCE);
    // The server sets a timer per request in the order they arrive, as
    // it draws their delays: timer N is request N + 1, as above.
    let mut due = [None; REQUESTS];
    for line in lines(at_once) {
        let Line::Trace { seconds, what, .. } = line else {
            continue;
        };
        if let Some(rest) = what.strip_prefix("timer due: ") {
            let number: usize = rest
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .expect("a timer's number");
            due[number] = Some(seconds);
        }
    }
    times.extend(due.map(|at| at.expect("ten timers, all at once")));
    times.push(took(at_once));
    Figure::new("requests-step04.svg", times, draw)
}

/// `... after 0.19 s` -> 0.19.
fn seconds_after(line: &str, marker: &str) -> f64 {
    let at = line.find(marker).expect("a time") + marker.len();
    line[at..]
        .split_whitespace()
        .next()
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("no time in `{line}`"))
}

/// The part's `took 1.23 s: ...` line.
fn took(part: &str) -> f64 {
    let line = part
        .lines()
        .find(|line| line.starts_with("took "))
        .expect("a `took` line");
    seconds_after(line, "took ")
}

const X0: f64 = 130.0;
const SPAN: f64 = 1.6;
const SCALE: f64 = (svg::WIDTH - X0 - 40.0) / SPAN;
const ROW: f64 = 17.0;

fn draw(t: &[f64]) -> String {
    let (one_after, took_one) = (&t[..REQUESTS], t[REQUESTS]);
    let (due, took_all) = (&t[(REQUESTS + 1)..=(2 * REQUESTS)], t[2 * REQUESTS + 1]);
    let mut svg = Svg::new(
        640.0,
        "Step 4: ten requests to a slow server, one after another and all at once",
    );
    svg.text(
        24.0,
        32.0,
        &svg::bold(17, svg::INK),
        "Seed 002's ten requests to the slow server, on step 4's loop",
    );
    svg.text(
        24.0,
        52.0,
        &svg::sized(13, svg::MUTED),
        "The server answers each after its seeded delay (0.05 to 0.2 s: the seed's, ten times shorter).",
    );
    svg.text(
        24.0,
        84.0,
        &svg::bold(14, svg::INK),
        "One after another: each waits for the one before",
    );
    let mut start = 0.0;
    for (i, &took) in one_after.iter().enumerate() {
        let y = 96.0 + ROW * svg::count(i);
        request_bar(&mut svg, y, i + 1, start, start + took);
        start += took;
    }
    finish_mark(
        &mut svg,
        92.0,
        96.0 + ROW * 10.0 + 14.0,
        took_one,
        "about the sum of the delays",
    );
    svg.time_axis(X0, 290.0, SPAN, 0.2, SCALE);
    svg.text(
        24.0,
        350.0,
        &svg::bold(14, svg::INK),
        "All at once: the loop waits for all ten together",
    );
    for (i, &end) in due.iter().enumerate() {
        request_bar(&mut svg, 362.0 + ROW * svg::count(i), i + 1, 0.0, end);
    }
    finish_mark(
        &mut svg,
        358.0,
        362.0 + ROW * 10.0 + 14.0,
        took_all,
        "about the longest delay alone",
    );
    svg.time_axis(X0, 556.0, SPAN, 0.2, SCALE);
    svg.footnote(
        604.0,
        "Top: the times the demo prints. Bottom: where LOOP_TRACE=1 cargo run -p step04 saw each answer's timer come due.",
    );
    svg.finish(t)
}

fn x(seconds: f64) -> f64 {
    X0 + seconds.clamp(0.0, SPAN) * SCALE
}

fn request_bar(svg: &mut Svg, y: f64, number: usize, from: f64, to: f64) {
    svg.text(
        X0 - 10.0,
        y + 12.0,
        &format!("{} text-anchor=\"end\"", svg::sized(12, svg::INK)),
        &format!("request {number}"),
    );
    svg.rect(
        x(from),
        y + 1.0,
        x(to) - x(from),
        ROW - 4.0,
        &svg::boxed(svg::BLUE_FILL, svg::BLUE, 1.2),
    );
}

fn finish_mark(svg: &mut Svg, top: f64, bottom: f64, at: f64, why: &str) {
    svg.line(
        (x(at), top),
        (x(at), bottom - 11.0),
        &format!("{} stroke-dasharray=\"4 3\"", svg::stroke(svg::NEW, 1.5)),
    );
    let anchor = if x(at) > svg::WIDTH - 260.0 {
        "end"
    } else {
        "start"
    };
    svg.text(
        x(at) + if anchor == "end" { 0.0 } else { 4.0 },
        bottom,
        &format!("{} text-anchor=\"{anchor}\"", svg::bold(12, svg::NEW)),
        &format!("all done after {at:.2} s: {why}"),
    );
}
