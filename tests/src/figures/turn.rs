//! One turn of each step's loop, drawn from the phases its traced demo
//! shows (`turn-stepNN.svg`): a phase is a box, in the order the trace
//! shows the phases within a turn, with the kinds of line it printed; what
//! no earlier step's trace showed is orange. A phase an earlier step showed
//! and this step's demo never does is drawn dashed.

use std::collections::{BTreeMap, BTreeSet};

use super::svg::{self, Svg};
use super::{Figure, Line, lines};

/// The phases of a turn, in the trace's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Wait,
    Sockets,
    Timers,
    Woken,
    Run,
}

impl Phase {
    fn title(self) -> &'static str {
        match self {
            Phase::Wait => "wait: sleep, or poll the OS, until something is due",
            Phase::Sockets => "sockets that came ready: their waiters go to ready",
            Phase::Timers => "timers that came due: their callbacks go to ready",
            Phase::Woken => "woken tasks: each gets a poll",
            Phase::Run => "run the ready callbacks",
        }
    }

    /// Which phase a trace line belongs to. A line that names a callback or
    /// poll that held the loop is none: a busy machine can hold any of them
    /// past the trace's 100 ms, so a figure never shows one.
    fn of(what: &str) -> Option<Phase> {
        let starts = |prefix| what.starts_with(prefix);
        Some(if what.contains(" held the loop ") {
            return None;
        } else if starts("wait") {
            Phase::Wait
        } else if starts("socket ") {
            Phase::Sockets
        } else if starts("timer ") || starts("swept ") {
            Phase::Timers
        } else if starts("task ") || starts("poll task ") {
            Phase::Woken
        } else if starts("ran ") || starts("callback ") {
            Phase::Run
        } else {
            return None;
        })
    }
}

/// What a step's trace shows of its turns.
#[derive(Debug, Default)]
struct Turns {
    /// Each phase seen, with the kinds of line it printed.
    kinds: BTreeMap<Phase, BTreeSet<String>>,
    /// The phases in the order a turn goes through them.
    order: Vec<Phase>,
}

/// The turn figure of every step in `runs` (step, traced output).
pub(super) fn figures(runs: &[(u32, String)]) -> Vec<Figure> {
    let mut earlier = Turns::default();
    let mut figures = Vec::new();
    for (step, output) in runs {
        let turns = read_turns(output);
        let drawing = Drawing::new(*step, &turns, &earlier);
        figures.push(Figure::new(
            &format!("turn-step{step:02}.svg"),
            Vec::new(),
            move |_| drawing.draw(),
        ));
        for (phase, kinds) in turns.kinds {
            earlier.kinds.entry(phase).or_default().extend(kinds);
        }
    }
    figures
}

fn read_turns(output: &str) -> Turns {
    let mut turns = Turns::default();
    // Each turn's phases, in the order their first line came. A demo makes
    // several loops, each counting from turn 1: a new turn is wherever the
    // number changes.
    let mut sequences: Vec<Vec<Phase>> = Vec::new();
    let mut current = None;
    for line in lines(output) {
        let Line::Trace { turn, what, .. } = line else {
            continue;
        };
        if sequences.is_empty() || turn != current || turn.is_none() {
            sequences.push(Vec::new());
            current = turn;
        }
        let Some(phase) = Phase::of(&what) else {
            continue;
        };
        if !what.starts_with("waited ") {
            turns.kinds.entry(phase).or_default().insert(kind(&what));
        }
        // Cancelled timers leave the heap while the loop works out how long
        // to wait: housekeeping, not the turn's timer phase.
        let housekeeping =
            what.starts_with("timer cancelled") || what.starts_with("swept ");
        let sequence = sequences.last_mut().expect("pushed above");
        if !housekeeping && !sequence.contains(&phase) {
            sequence.push(phase);
        }
    }
    turns.order =
        order(&turns.kinds.keys().copied().collect::<Vec<_>>(), &sequences);
    turns
}

/// The phases sorted by how many others each comes before, counting the
/// turns where both appear (the wait always first: it starts a turn).
fn order(phases: &[Phase], sequences: &[Vec<Phase>]) -> Vec<Phase> {
    let before = |a: Phase, b: Phase| {
        sequences
            .iter()
            .filter(|seq| {
                let (ia, ib) = (
                    seq.iter().position(|&p| p == a),
                    seq.iter().position(|&p| p == b),
                );
                matches!((ia, ib), (Some(ia), Some(ib)) if ia < ib)
            })
            .count()
    };
    let beats = |a: Phase| {
        phases
            .iter()
            .filter(|&&b| b != a && before(a, b) > before(b, a))
            .count()
    };
    let mut sorted = phases.to_vec();
    sorted.sort_by_key(|&p| (p != Phase::Wait, std::cmp::Reverse(beats(p)), p));
    sorted
}

/// A trace line with its numbers hidden: `socket N readable: wakes task N
/// (read)`, `wait … s: the next deadline` (a `0` wait stays).
fn kind(what: &str) -> String {
    let mut out = String::new();
    let mut chars = what.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_ascii_digit() {
            out.push(c);
            continue;
        }
        let mut number = String::from(c);
        while let Some(&next) = chars.peek() {
            if next.is_ascii_digit() || next == '.' {
                number.push(next);
                chars.next();
            } else {
                break;
            }
        }
        let rest: String = chars.clone().collect();
        out.push_str(if number.contains('.') {
            "…"
        } else if number == "0" && rest.starts_with(" s") {
            "0"
        } else {
            "N"
        });
    }
    if what.starts_with("callback ") {
        out.insert_str(0, "run: ");
    }
    out
}

/// A row of the figure: a phase, its kinds of line, what is new in them.
struct Row {
    phase: Phase,
    new: bool,
    /// Only in earlier steps' traces: drawn dashed.
    absent: bool,
    kinds: Vec<(String, bool)>,
}

struct Drawing {
    step: u32,
    rows: Vec<Row>,
}

const ROW_TOP: f64 = 78.0;
const LINE_HEIGHT: f64 = 19.0;
const GAP: f64 = 18.0;
const LEFT: f64 = 64.0;

impl Drawing {
    fn new(step: u32, turns: &Turns, earlier: &Turns) -> Self {
        let mut rows: Vec<Row> = turns
            .order
            .iter()
            .map(|&phase| {
                let seen_before = earlier.kinds.get(&phase);
                let kinds = turns.kinds[&phase]
                    .iter()
                    .map(|kind| {
                        (
                            kind.clone(),
                            !seen_before.is_some_and(|k| k.contains(kind)),
                        )
                    })
                    .collect();
                Row {
                    phase,
                    new: seen_before.is_none(),
                    absent: false,
                    kinds,
                }
            })
            .collect();
        for &phase in earlier.kinds.keys() {
            if !turns.kinds.contains_key(&phase) {
                // Where the earlier steps had it: before the first phase that
                // comes later in the fixed listing.
                let at = rows
                    .iter()
                    .position(|r| r.phase > phase)
                    .unwrap_or(rows.len());
                rows.insert(
                    at,
                    Row {
                        phase,
                        new: false,
                        absent: true,
                        kinds: Vec::new(),
                    },
                );
            }
        }
        Drawing { step, rows }
    }

    fn row_height(row: &Row) -> f64 {
        let lines = if row.absent {
            1
        } else {
            row.kinds.len().div_ceil(2)
        };
        34.0 + LINE_HEIGHT * svg::count(lines)
    }

    fn draw(&self) -> String {
        let height: f64 = ROW_TOP
            + self
                .rows
                .iter()
                .map(|r| Self::row_height(r) + GAP)
                .sum::<f64>()
            + 40.0;
        let step = self.step;
        let mut svg = Svg::new(
            height,
            &format!("One turn of step {step}'s loop, as LOOP_TRACE=1 shows it"),
        );
        svg.arrow_marker();
        svg.text(
            24.0,
            32.0,
            &svg::bold(17, svg::INK),
            &format!(
                "One turn of step {step}'s loop, from a traced run of its demo"
            ),
        );
        svg.runs(
            24.0,
            56.0,
            &svg::sized(13, svg::MUTED),
            &[
                (
                    "orange: new in step ".to_owned() + &step.to_string(),
                    &svg::bold(13, svg::NEW),
                ),
                (
                    "   ·   each line is a kind of trace line the phase printed"
                        .to_owned(),
                    "",
                ),
            ],
        );
        let mut y = ROW_TOP;
        let mut middles = Vec::new();
        for (i, row) in self.rows.iter().enumerate() {
            let h = Self::row_height(row);
            self.draw_row(&mut svg, i + 1, row, y, h);
            middles.push(y + 24.0);
            if i + 1 < self.rows.len() {
                svg.line(
                    (LEFT + 30.0, y + h),
                    (LEFT + 30.0, y + h + GAP - 1.0),
                    &format!(
                        "{} marker-end=\"url(#arrow)\"",
                        svg::stroke(svg::LINE, 1.5)
                    ),
                );
            }
            y += h + GAP;
        }
        self.draw_loop_back(&mut svg, &middles, y);
        svg.finish(&[])
    }

    fn draw_row(&self, svg: &mut Svg, number: usize, row: &Row, y: f64, h: f64) {
        let width = svg::WIDTH - LEFT - 20.0;
        let style = if row.absent {
            format!(
                "{} stroke-dasharray=\"6 4\"",
                svg::boxed("#ffffff", svg::LINE, 1.2)
            )
        } else if row.new {
            svg::boxed(svg::NEW_FILL, svg::NEW, 2.5)
        } else {
            svg::boxed(svg::PANEL, svg::LINE, 1.2)
        };
        svg.rect(LEFT, y, width, h, &style);
        let title_colour = if row.absent { svg::MUTED } else { svg::INK };
        svg.text(
            LEFT + 14.0,
            y + 24.0,
            &svg::bold(15, title_colour),
            &format!("{number}. {}", row.phase.title()),
        );
        if row.new {
            svg.text(
                LEFT + width - 14.0,
                y + 24.0,
                &format!("{} text-anchor=\"end\"", svg::bold(13, svg::NEW)),
                &format!("NEW in step {}", self.step),
            );
        }
        if row.absent {
            svg.text(
                LEFT + 30.0,
                y + 24.0 + LINE_HEIGHT,
                &svg::sized(13, svg::MUTED),
                "still in the loop; this demo's trace never shows it",
            );
        }
        for (i, (kind, new)) in row.kinds.iter().enumerate() {
            let x = LEFT + 30.0 + if i % 2 == 0 { 0.0 } else { 330.0 };
            let line_y = y + 24.0 + LINE_HEIGHT * svg::count(1 + i / 2);
            let style = if *new && !row.new {
                format!("font-family=\"monospace\" {}", svg::bold(12, svg::NEW))
            } else {
                format!("font-family=\"monospace\" {}", svg::sized(12, svg::INK))
            };
            svg.text(x, line_y, &style, kind);
        }
    }

    /// The arrow from the last phase back to the first: the next turn.
    fn draw_loop_back(&self, svg: &mut Svg, middles: &[f64], bottom: f64) {
        let (first, last) = (middles[0], middles[middles.len() - 1]);
        let x = 30.0;
        let d = format!(
            "M{l},{last} H{x} V{first} H{l}",
            l = svg::num(LEFT - 1.0),
            x = svg::num(x),
            last = svg::num(last.max(first + 30.0)),
            first = svg::num(first),
        );
        svg.path(
            &d,
            &format!(
                "fill=\"none\" {} marker-end=\"url(#arrow)\"",
                svg::stroke(svg::LINE, 1.5)
            ),
        );
        let label = if self.rows.len() == 1 {
            "again"
        } else {
            "next turn"
        };
        svg.text(
            x - 6.0,
            f64::midpoint(first, last.max(first + 30.0)),
            &format!(
                "{} text-anchor=\"middle\" transform=\"rotate(-90 {} {})\"",
                svg::sized(12, svg::MUTED),
                svg::num(x - 6.0),
                svg::num(f64::midpoint(first, last.max(first + 30.0)))
            ),
            label,
        );
        svg.text(
            24.0,
            bottom + 14.0,
            &svg::sized(12, svg::MUTED),
            &format!(
                "Drawn from LOOP_TRACE=1 cargo run -p step{:02}; redraw: cargo run -p workshop-tests --bin figures",
                self.step
            ),
        );
    }
}
