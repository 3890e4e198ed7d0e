//! The book's figures, drawn from real runs of the steps (`cargo run -p
//! book-tools --bin figures` writes them to `book/src/figures/`).
//!
//! Each figure is made in two halves. A *run* of a step's binary (with
//! `LOOP_TRACE=1`, or reading the timings its demo prints) gives what the
//! figure shows: which phases, which events, in which order, and the times
//! it measured. *Drawing* turns that into SVG text. The committed file keeps
//! the measured times in its `<metadata>`, so a check can tell a figure that
//! changed shape from one whose times moved a little: it redraws the fresh
//! run with the committed times and compares the text exactly, and compares
//! the times themselves within `TOLERANCE` (`figures_are_current` in
//! `book/tools/tests/figures.rs`).

mod cancel;
pub mod geometry;
mod requests;
mod sleeps;
pub(crate) mod svg;
mod turn;

use std::fs;
use std::path::PathBuf;

use crate::workspace::workspace_root;
use workshop_tests::{traced_output, traced_scene};

/// How far a measured time may move before its figure must be redrawn:
/// 0.25 s, or 20 % of the committed time, whichever is more. Enough for a
/// loaded machine (beside `stress-ng --cpu 2`, ten requests one after
/// another, forty turns each a little late, took 15 % longer); far less
/// than a change a reader would see (ten requests one after another
/// instead of at once: 1.2 s instead of 0.2 s).
pub const TOLERANCE_SECONDS: f64 = 0.25;
pub const TOLERANCE_SHARE: f64 = 0.20;

/// CPU times are not wall times: on a loaded machine a polling loop gets
/// less of a core and burns less CPU in the same 0.5 s (0.5 s alone, 0.1 s
/// beside two busy processes on two cores). So a CPU time is checked only
/// for the side of this line it falls on: the polling sleep uses CPU, the
/// heap's sleep does not.
pub const CPU_LINE_SECONDS: f64 = 0.05;

/// What a measured time is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Wall-clock time: within the tolerance.
    Wall,
    /// CPU time: on the same side of `CPU_LINE_SECONDS`.
    Cpu,
}

/// One figure: what a run measured, and how to draw it with any times.
pub struct Figure {
    /// The file's name under `book/src/figures/`.
    pub name: String,
    /// The measured times, in seconds, rounded to milliseconds.
    pub times: Vec<f64>,
    /// What each of `times` is (all wall times, unless said otherwise).
    pub measures: Vec<Measure>,
    draw: Draw,
}

/// Draws a figure with the times it is given.
type Draw = Box<dyn Fn(&[f64]) -> String>;

impl std::fmt::Debug for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Figure")
            .field("name", &self.name)
            .field("times", &self.times)
            .finish_non_exhaustive()
    }
}

impl Figure {
    fn new(
        name: &str,
        times: Vec<f64>,
        draw: impl Fn(&[f64]) -> String + 'static,
    ) -> Self {
        Figure {
            name: name.to_owned(),
            measures: vec![Measure::Wall; times.len()],
            times: times.into_iter().map(millis).collect(),
            draw: Box::new(draw),
        }
    }

    /// The same figure, with the times at `indices` CPU times.
    fn with_cpu_times(mut self, indices: &[usize]) -> Self {
        for &i in indices {
            self.measures[i] = Measure::Cpu;
        }
        self
    }

    /// The SVG text, with the times this run measured.
    pub fn svg(&self) -> String {
        (self.draw)(&self.times)
    }

    /// The SVG text this run's figure would be with other `times` (those of
    /// the committed file): same shape, those numbers.
    pub fn svg_with(&self, times: &[f64]) -> String {
        (self.draw)(times)
    }
}

/// Every figure of the book, each from a fresh run of its step.
pub fn all() -> Vec<Figure> {
    let mut runs: Vec<turn::Run> = (2..=8)
        .map(|step| turn::Run {
            step,
            scene: None,
            output: traced_output(&format!("step0{step}"), &[]),
        })
        .collect();
    for &(step, scene) in turn::SCENES {
        runs.push(turn::Run {
            step,
            scene: Some(scene),
            output: traced_scene(scene),
        });
    }
    let mut figures = turn::figures(&runs);
    let output = |step| {
        &runs
            .iter()
            .find(|run| run.step == step && run.scene.is_none())
            .expect("ran")
            .output
    };
    let untraced = workshop_tests::run_step("step03", &[]).stdout;
    figures.push(sleeps::figure(output(3), &untraced));
    figures.push(requests::figure(output(4)));
    figures.push(cancel::figure(output(8)));
    figures
}

/// Where the figures live.
pub fn folder() -> PathBuf {
    workspace_root().join("book/src/figures")
}

/// The committed text of figure `name`, if there is one.
pub fn committed(name: &str) -> Option<String> {
    fs::read_to_string(folder().join(name)).ok()
}

/// The times a figure's text keeps in its metadata.
pub fn times_in(svg: &str) -> Option<Vec<f64>> {
    let start = svg.find("<metadata>measured seconds:")?
        + "<metadata>measured seconds:".len();
    let end = start + svg[start..].find("</metadata>")?;
    svg[start..end]
        .split_whitespace()
        .map(|t| t.parse().ok())
        .collect()
}

/// Whether `fresh` is within the tolerance of `committed`.
pub fn close_enough(measure: Measure, fresh: f64, committed: f64) -> bool {
    match measure {
        Measure::Wall => {
            let allowed = TOLERANCE_SECONDS.max(TOLERANCE_SHARE * committed.abs());
            (fresh - committed).abs() <= allowed + 1e-9
        }
        Measure::Cpu => (fresh > CPU_LINE_SECONDS) == (committed > CPU_LINE_SECONDS),
    }
}

/// The part of a demo's output under the heading `== title ==`, up to the
/// next heading.
pub fn section<'a>(output: &'a str, title: &str) -> &'a str {
    let heading = format!("== {title} ==");
    let start = output
        .find(&heading)
        .unwrap_or_else(|| panic!("no section `{heading}` in the output"));
    let rest = &output[start + heading.len()..];
    let end = rest.find("\n== ").unwrap_or(rest.len());
    &rest[..end]
}

/// One line of a traced run's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// `[+S.SSS s] turn N: what`; step 2's `run: what` has no turn. (A
    /// line `turn N: … 12 more turns like this` stands for folded turns.)
    Trace {
        seconds: f64,
        turn: Option<u64>,
        what: String,
    },
    /// Anything else: the demo's own words.
    Demo(String),
}

/// Every line of `output`, trace lines parsed. The trace's notes about
/// itself (`[trace: 12 lines dropped here: …]`) are neither.
pub fn lines(output: &str) -> Vec<Line> {
    output
        .lines()
        .filter(|text| !text.starts_with("[trace: "))
        .map(|text| parse_trace(text).unwrap_or_else(|| Line::Demo(text.to_owned())))
        .collect()
}

fn parse_trace(text: &str) -> Option<Line> {
    let (seconds, rest) = text.strip_prefix("[+")?.split_once(" s] ")?;
    let seconds = seconds.parse().ok()?;
    if let Some(what) = rest.strip_prefix("run: ") {
        let what = what.to_owned();
        return Some(Line::Trace {
            seconds,
            turn: None,
            what,
        });
    }
    let (turn, what) = rest.strip_prefix("turn ")?.split_once(": ")?;
    Some(Line::Trace {
        seconds,
        turn: Some(turn.parse().ok()?),
        what: what.to_owned(),
    })
}

fn millis(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}
