//! One turn of each step's loop, drawn from the phases its traced demo
//! shows (`turn-stepNN.svg`): a phase is a box, in the order the trace
//! shows the phases within a turn, with the kinds of line it printed; what
//! no earlier step's trace showed is orange.
//!
//! Every phase the step's trace code can print has its box (`phases_in_code`
//! reads them from `stepNN-*/src/trace.rs`). A phase the demo never reaches
//! is drawn from a small traced scene that does (`SCENES`, run from
//! `tests/examples/trace_scenes.rs`), marked `*`, and the figure's foot
//! names the scene.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use super::geometry::{self, Font};
use super::svg::{self, Svg};
use super::{Figure, Line, lines};
use workshop_tests::workspace_root;

/// The scenes that reach what a step's demo does not, by step: the
/// argument of `cargo run -p workshop-tests --example trace_scenes`.
pub(super) const SCENES: &[(u32, &str)] = &[
    (5, "sockets-step05"),
    (6, "sockets-step06"),
    (8, "sweep-step08"),
];

/// A traced run a figure is drawn from: a step's demo, or a scene.
pub(super) struct Run {
    pub step: u32,
    /// The scene's name; `None` for the step's demo.
    pub scene: Option<&'static str>,
    pub output: String,
}

/// The phases of a turn, in the trace's words, in the order `run_once`
/// goes through them (the order a figure falls back on where no traced
/// turn shows two phases together).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Sweep,
    Wait,
    Sockets,
    Timers,
    Run,
    Woken,
    /// Not a phase of the turn: `run` found nothing left to wait for, its
    /// loop has ended, and it says so in a turn of its own as it returns.
    End,
}

impl Phase {
    /// The box's title in step `step`: true of that step's loop.
    fn title(self, step: u32) -> &'static str {
        match self {
            // Step 8's `remove_cancelled_timers`, first in `run_once`.
            Phase::Sweep => "sweep: cancelled timers leave the heap",
            Phase::Wait => "wait: sleep, or poll the OS, until something is due",
            // A task's waiter (steps 7 and 8) is a callback that wakes it.
            Phase::Sockets => "sockets that came ready: their waiters go to ready",
            // Up to step 7 a `Sleep` sets a callback that wakes its task; in
            // step 8 its timer wakes the task itself (`TimerAction::Wake`).
            Phase::Timers if step >= 8 => {
                "timers that came due: each wakes a sleeping task, or queues a callback"
            }
            Phase::Timers => "timers that came due: their callbacks go to ready",
            Phase::Run => "run the ready callbacks",
            // Step 8's `poll_woken` drops a cancelled task instead.
            Phase::Woken if step >= 8 => {
                "woken tasks: each gets a poll, or is dropped if cancelled"
            }
            Phase::Woken => "woken tasks: each gets a poll",
            Phase::End => "after the loop: nothing left to wait for, so run returns",
        }
    }

    /// Which phase a trace line belongs to. A line that names a callback or
    /// poll that held the loop is none: a busy machine can hold any of them
    /// past the trace's 100 ms, so a figure never shows one. A cancelled
    /// timer skipped is the sweep's, unless it is met among the due timers
    /// (`read_turns` tells the two apart).
    fn of(what: &str) -> Option<Phase> {
        let starts = |prefix| what.starts_with(prefix);
        Some(if what.contains(" held the loop ") {
            return None;
        } else if starts("swept ") || starts("timer cancelled") {
            Phase::Sweep
        } else if what == "wait: nothing to wait for" {
            Phase::End
        } else if starts("wait") {
            Phase::Wait
        } else if starts("socket ") {
            Phase::Sockets
        } else if starts("timer ") {
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

/// The phases step `step`'s trace code can print: each line its
/// `src/trace.rs` writes (the text given to `format_args!`), sorted into
/// its phase. Fails on a line no phase claims. The lines the plumbing's
/// `Tracer` writes for every step are not read: `waited` follows a step's
/// own `wait` line, in the same phase, and a line naming what held the
/// loop is never drawn.
fn phases_in_code(step: u32) -> BTreeSet<Phase> {
    let root = workspace_root();
    let prefix = format!("step{step:02}-");
    let folder = fs::read_dir(&root)
        .expect("the workspace's folder")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(&prefix))
        })
        .unwrap_or_else(|| panic!("no folder {prefix}*"));
    let path = folder.join("src/trace.rs");
    let source = fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let mut phases = BTreeSet::new();
    for (_, after) in source.match_indices("format_args!(").map(|(at, m)| {
        let rest = &source[at + m.len()..];
        (at, rest)
    }) {
        let open = after.find('"').expect("a string after format_args!(");
        let text = &after[open + 1..];
        let close = text.find('"').expect("a closed string");
        let what = &text[..close];
        if what.contains(" held the loop ") {
            continue;
        }
        let phase = Phase::of(what).unwrap_or_else(|| {
            panic!("{}: no phase for the trace line {what:?}", path.display())
        });
        phases.insert(phase);
    }
    phases
}

/// What a step's traces show of its turns.
#[derive(Debug, Default)]
struct Turns {
    /// Each phase seen, with the kinds of line it printed.
    kinds: BTreeMap<Phase, BTreeSet<String>>,
    /// The phases in the order a turn goes through them.
    order: Vec<Phase>,
    /// The phases drawn from a scene, not the demo, and that scene.
    from_scene: BTreeMap<Phase, &'static str>,
    /// The kinds of line a scene added to a phase the demo shows.
    kinds_from_scene: BTreeMap<(Phase, String), &'static str>,
}

/// The turn figure of every step in `runs`: its demo's traced run first,
/// then any scenes of `SCENES`.
pub(super) fn figures(runs: &[Run]) -> Vec<Figure> {
    let mut earlier = Turns::default();
    let mut figures = Vec::new();
    let steps: BTreeSet<u32> = runs.iter().map(|run| run.step).collect();
    for step in steps {
        let step_runs: Vec<&Run> = runs.iter().filter(|r| r.step == step).collect();
        let turns = read_turns(&step_runs);
        let mut in_code = phases_in_code(step);
        let drawn: BTreeSet<Phase> = turns.kinds.keys().copied().collect();
        if !drawn.contains(&Phase::End) {
            // No phase of the turn: drawn where a run shows `run` returning
            // (step 7's demo only ever returns from `block_on`).
            in_code.remove(&Phase::End);
        }
        assert_eq!(
            drawn, in_code,
            "step {step}: the turn figure draws phases {drawn:?}, its trace code \
             prints {in_code:?}: add a scene that reaches the missing ones \
             (tests/examples/trace_scenes.rs, SCENES in book/tools/src/figures/turn.rs)"
        );
        let drawing = Drawing::new(step, &turns, &earlier);
        let problems = misdrawn(&step_runs, &drawing.draw());
        assert!(
            problems.is_empty(),
            "step {step}'s turn figure does not draw the lines where its \
             trace printed them:\n{}",
            problems.join("\n")
        );
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

/// The turns of one step's runs: the demo's phases, and from each scene
/// the phases and the kinds of line no run before it showed (a line may be
/// printed by two phases, and a scene show it in the second).
fn read_turns(runs: &[&Run]) -> Turns {
    let mut turns = Turns::default();
    // Each turn's phases, in the order their first line came: the order
    // of the phases, from every run (a scene's turns place its phases).
    let mut sequences: Vec<Vec<Phase>> = Vec::new();
    for run in runs {
        let (kinds, run_sequences) = read_run(&run.output);
        sequences.extend(run_sequences);
        for (phase, kinds) in kinds {
            let Some(drawn) = turns.kinds.get_mut(&phase) else {
                if let Some(scene) = run.scene {
                    turns.from_scene.insert(phase, scene);
                }
                turns.kinds.insert(phase, kinds);
                continue;
            };
            for kind in kinds {
                if let (true, Some(scene)) = (drawn.insert(kind.clone()), run.scene)
                {
                    turns.kinds_from_scene.insert((phase, kind), scene);
                }
            }
        }
    }
    turns.order =
        order(&turns.kinds.keys().copied().collect::<Vec<_>>(), &sequences);
    turns
}

/// The kinds of line each phase of one traced run printed, and each of
/// its turns' phases in order.
fn read_run(output: &str) -> (BTreeMap<Phase, BTreeSet<String>>, Vec<Vec<Phase>>) {
    let mut kinds: BTreeMap<Phase, BTreeSet<String>> = BTreeMap::new();
    // A demo makes several loops, each counting from turn 1: a new turn is
    // wherever the number changes.
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
        let Some(mut phase) = Phase::of(&what) else {
            continue;
        };
        let sequence = sequences.last_mut().expect("pushed above");
        // A cancelled timer met among the due ones, after the wait, is
        // skipped by the timers' phase (`pop_due_timer`), not the sweep.
        if phase == Phase::Sweep && sequence.iter().any(|&p| p > Phase::Sweep) {
            phase = Phase::Timers;
        }
        if !what.starts_with("waited ") {
            kinds.entry(phase).or_default().insert(kind(&what));
        }
        if !sequence.contains(&phase) {
            sequence.push(phase);
        }
    }
    (kinds, sequences)
}

// ---------------------------------------------------------------------------
// The check: each line drawn where the trace printed it.

/// What a drawn turn figure shows in the wrong place, judged from the
/// runs it was drawn from and the SVG's geometry: a line printed after the
/// loop ended drawn inside the loop, and a line printed in two phases not
/// drawn in two boxes.
fn misdrawn(runs: &[&Run], svg: &str) -> Vec<String> {
    let boxes = geometry::boxes(svg);
    let texts = geometry::texts(svg);
    // The boxes each kind of line is drawn in (a scene's mark aside).
    let drawn_in = |kind: &str| -> Vec<geometry::Area> {
        let mut found: Vec<geometry::Area> = texts
            .iter()
            .filter(|text| text.content.trim_end_matches([' ', '*']) == kind)
            .filter_map(|text| geometry::box_around(&boxes, text.anchor))
            .collect();
        found.dedup();
        found
    };
    let mut problems = Vec::new();
    let loop_bottom = loop_back_bottom(svg);
    for kind in printed_after_the_loop(runs) {
        for area in drawn_in(&kind) {
            if area.top <= loop_bottom {
                problems.push(format!(
                    "{kind:?} is printed after the loop ends, but drawn inside \
                     it, in the box at {area}"
                ));
            }
        }
    }
    let mut phases_of: BTreeMap<String, BTreeSet<Phase>> = BTreeMap::new();
    for run in runs {
        for (phase, kinds) in read_run(&run.output).0 {
            for kind in kinds {
                phases_of.entry(kind).or_default().insert(phase);
            }
        }
    }
    for (kind, phases) in phases_of.iter().filter(|(_, p)| p.len() > 1) {
        let boxes = drawn_in(kind);
        if boxes.len() < phases.len() {
            problems.push(format!(
                "{kind:?} is printed in {} phases ({phases:?}), but drawn in {} \
                 box{}",
                phases.len(),
                boxes.len(),
                if boxes.len() == 1 { "" } else { "es" }
            ));
        }
    }
    problems
}

/// The kinds of line printed after a loop ended: alone in the last turn of
/// a loop (where the turns count from 1 again, or the output ends).
fn printed_after_the_loop(runs: &[&Run]) -> BTreeSet<String> {
    let mut after = BTreeSet::new();
    for run in runs {
        let turns: Vec<(u64, String)> = lines(&run.output)
            .into_iter()
            .filter_map(|line| match line {
                Line::Trace {
                    turn: Some(turn),
                    what,
                    ..
                } => Some((turn, what)),
                _ => None,
            })
            .collect();
        for (i, (turn, what)) in turns.iter().enumerate() {
            let alone = i == 0 || turns[i - 1].0 != *turn;
            let last = turns.get(i + 1).is_none_or(|(next, _)| next < turn);
            if alone && last {
                after.insert(kind(what));
            }
        }
    }
    after
}

/// How far down the arrow back to the turn's first phase reaches: the
/// middle of the loop's last box (the path `M…,last H… V first H…`).
fn loop_back_bottom(svg: &str) -> f64 {
    let path = svg
        .match_indices("<path d=\"M")
        .map(|(at, opening)| &svg[at + opening.len()..])
        .find(|d| d.split('"').next().is_some_and(|d| d.contains(" V")))
        .expect("the loop-back arrow");
    let (_, after_comma) = path.split_once(',').expect("M x,y");
    let y = after_comma.split(' ').next().expect("a number");
    y.parse().expect("the arrow's lower end")
}

/// The phases in the order the turns show them: each next phase is one
/// that no phase left comes before more often than after, in the turns
/// where both appear; among several, the first in `run_once`'s order.
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
    let mut left: Vec<Phase> = phases.to_vec();
    left.sort();
    let mut sorted = Vec::new();
    while !left.is_empty() {
        let free = left
            .iter()
            .position(|&a| !left.iter().any(|&b| before(b, a) > before(a, b)))
            .unwrap_or(0); // a cycle: take the first in `run_once`'s order
        sorted.push(left.remove(free));
    }
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
    /// Drawn from this scene, not from the demo.
    scene: Option<&'static str>,
    kinds: Vec<Kind>,
}

/// A kind of line a phase printed.
struct Kind {
    text: String,
    /// Not printed by this phase in any earlier step.
    new: bool,
    /// Added from this scene to a phase the demo shows.
    scene: Option<&'static str>,
}

struct Drawing {
    step: u32,
    rows: Vec<Row>,
}

const ROW_TOP: f64 = 78.0;
const LINE_HEIGHT: f64 = 19.0;
const GAP: f64 = 18.0;
const LEFT: f64 = 64.0;
/// The kinds of line start this far into their box, and the second
/// column this far after the first.
const INDENT: f64 = 30.0;
const COLUMN: f64 = 330.0;
/// Room kept free at a box's right edge.
const PADDING: f64 = 14.0;
/// How the kinds of line are set.
const KIND_FONT: Font = Font {
    size: 12.0,
    bold: false,
    mono: true,
};

impl Drawing {
    fn new(step: u32, turns: &Turns, earlier: &Turns) -> Self {
        let rows: Vec<Row> = turns
            .order
            .iter()
            .map(|&phase| {
                let seen_before = earlier.kinds.get(&phase);
                let kinds = turns.kinds[&phase]
                    .iter()
                    .map(|kind| Kind {
                        text: kind.clone(),
                        new: !seen_before.is_some_and(|k| k.contains(kind)),
                        scene: turns
                            .kinds_from_scene
                            .get(&(phase, kind.clone()))
                            .copied(),
                    })
                    .collect();
                Row {
                    phase,
                    new: seen_before.is_none(),
                    scene: turns.from_scene.get(&phase).copied(),
                    kinds,
                }
            })
            .collect();
        Drawing { step, rows }
    }

    /// Whether a row's kinds of line fit two to a line: each must fit the
    /// second column, or the row takes one a line.
    fn columns(&self, row: &Row) -> usize {
        let room = svg::WIDTH - 20.0 - PADDING - (LEFT + INDENT + COLUMN);
        let fits = row
            .kinds
            .iter()
            .all(|kind| geometry::width(&self.label(kind), KIND_FONT) <= room);
        if fits { 2 } else { 1 }
    }

    fn row_height(&self, row: &Row) -> f64 {
        let lines = row.kinds.len().div_ceil(self.columns(row));
        34.0 + LINE_HEIGHT * svg::count(lines)
    }

    /// The scenes the figure draws from, in the order of their rows.
    fn scenes(&self) -> Vec<&'static str> {
        let mut scenes = Vec::new();
        for row in &self.rows {
            let kinds = row.kinds.iter().filter_map(|kind| kind.scene);
            for scene in row.scene.into_iter().chain(kinds) {
                if !scenes.contains(&scene) {
                    scenes.push(scene);
                }
            }
        }
        scenes
    }

    /// The mark of `scene` (` *`, ` **`, …), or nothing.
    fn mark_of(&self, scene: Option<&'static str>) -> String {
        scene
            .map(|scene| mark(self.scenes().iter().position(|&s| s == scene)))
            .unwrap_or_default()
    }

    /// A kind of line as drawn: with its scene's mark, if a scene added it.
    fn label(&self, kind: &Kind) -> String {
        format!("{}{}", kind.text, self.mark_of(kind.scene))
    }

    fn draw(&self) -> String {
        let scenes = self.scenes();
        let height: f64 = ROW_TOP
            + self
                .rows
                .iter()
                .map(|r| self.row_height(r) + GAP)
                .sum::<f64>()
            + 40.0
            + 17.0 * svg::count(scenes.len());
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
            let h = self.row_height(row);
            self.draw_row(&mut svg, i + 1, row, y, h);
            // The loop goes round the turn's phases; what `run` prints
            // once it has ended is drawn below, outside it.
            if row.phase != Phase::End {
                middles.push(y + 24.0);
            }
            if i + 1 < self.rows.len() {
                svg.line(
                    (LEFT + INDENT, y + h),
                    (LEFT + INDENT, y + h + GAP - 1.0),
                    &format!(
                        "{} marker-end=\"url(#arrow)\"",
                        svg::stroke(svg::LINE, 1.5)
                    ),
                );
            }
            y += h + GAP;
        }
        self.draw_loop_back(&mut svg, &middles, y, &scenes);
        svg.finish(&[])
    }

    fn draw_row(&self, svg: &mut Svg, number: usize, row: &Row, y: f64, h: f64) {
        let width = svg::WIDTH - LEFT - 20.0;
        let style = if row.new {
            svg::boxed(svg::NEW_FILL, svg::NEW, 2.5)
        } else {
            svg::boxed(svg::PANEL, svg::LINE, 1.2)
        };
        svg.rect(LEFT, y, width, h, &style);
        let number = if row.phase == Phase::End {
            String::new() // not one of the turn's phases
        } else {
            format!("{number}. ")
        };
        svg.text(
            LEFT + PADDING,
            y + 24.0,
            &svg::bold(15, svg::INK),
            &format!(
                "{number}{}{}",
                row.phase.title(self.step),
                self.mark_of(row.scene)
            ),
        );
        if row.new {
            svg.text(
                LEFT + width - PADDING,
                y + 24.0,
                &format!("{} text-anchor=\"end\"", svg::bold(13, svg::NEW)),
                &format!("NEW in step {}", self.step),
            );
        }
        let columns = self.columns(row);
        for (i, kind) in row.kinds.iter().enumerate() {
            let column = if i % columns == 0 { 0.0 } else { COLUMN };
            let x = LEFT + INDENT + column;
            let line_y = y + 24.0 + LINE_HEIGHT * svg::count(1 + i / columns);
            let style = if kind.new && !row.new {
                format!("font-family=\"monospace\" {}", svg::bold(12, svg::NEW))
            } else {
                format!("font-family=\"monospace\" {}", svg::sized(12, svg::INK))
            };
            svg.text(x, line_y, &style, &self.label(kind));
        }
    }

    /// The arrow from the last phase back to the first: the next turn.
    /// The figure's foot says where its lines came from: the demo, and
    /// each scene by its mark.
    fn draw_loop_back(
        &self,
        svg: &mut Svg,
        middles: &[f64],
        bottom: f64,
        scenes: &[&str],
    ) {
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
                "Drawn from LOOP_TRACE=1 cargo run -p step{:02}; redraw: cargo run -p book-tools --bin figures",
                self.step
            ),
        );
        for (i, scene) in scenes.iter().enumerate() {
            svg.text(
                24.0,
                bottom + 31.0 + 17.0 * svg::count(i),
                &svg::sized(12, svg::MUTED),
                &format!(
                    "{} not in the demo's trace: from LOOP_TRACE=1 cargo run -p \
                     workshop-tests --example trace_scenes -- {scene}",
                    mark(Some(i)).trim_start()
                ),
            );
        }
    }
}

/// The mark of the `i`th scene a figure draws from: ` *`, ` **`, ….
fn mark(i: Option<usize>) -> String {
    format!(" {}", "*".repeat(i.unwrap_or(0) + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_steps_trace_code_names_its_phases() {
        use Phase::{End, Run, Sockets, Sweep, Timers, Wait, Woken};
        let expected: [&[Phase]; 7] = [
            &[Run],
            &[Wait, Timers, Run, End],
            &[Wait, Sockets, Timers, Run, End],
            &[Wait, Sockets, Timers, Run, Woken, End],
            &[Wait, Sockets, Timers, Run, Woken, End],
            &[Wait, Sockets, Timers, Run, Woken, End],
            &[Sweep, Wait, Sockets, Timers, Run, Woken, End],
        ];
        for (step, phases) in (2..=8).zip(expected) {
            let in_code: Vec<Phase> = phases_in_code(step).into_iter().collect();
            assert_eq!(in_code, phases, "step {step}");
        }
    }

    #[test]
    fn a_cancelled_timer_skipped_after_the_wait_is_the_timers_phase() {
        let output = "\
[+0.000 s] turn 1: timer cancelled: skipped
[+0.000 s] turn 1: wait 0.010 s: the next deadline
[+0.010 s] turn 1: timer due: 1 (deadline +0.010 s)
[+0.010 s] turn 1: timer cancelled: skipped
[+0.010 s] turn 1: ran 1 callbacks
";
        let (kinds, sequences) = read_run(output);
        assert!(kinds[&Phase::Sweep].contains("timer cancelled: skipped"));
        assert!(kinds[&Phase::Timers].contains("timer cancelled: skipped"));
        assert_eq!(
            sequences,
            [[Phase::Sweep, Phase::Wait, Phase::Timers, Phase::Run]]
        );
    }

    /// A demo whose loop ends (`wait: nothing to wait for`, alone in the
    /// last turn), and a scene that skips a cancelled timer in two phases.
    fn runs() -> [Run; 2] {
        let demo = "\
[+0.000 s] turn 1: wait 0.010 s: the next deadline
[+0.010 s] turn 1: timer due: 1 (deadline +0.010 s)
[+0.010 s] turn 1: ran 1 callbacks
[+0.010 s] turn 2: wait: nothing to wait for
";
        let scene = "\
[+0.000 s] turn 1: timer cancelled: skipped
[+0.000 s] turn 1: wait 0.010 s: the next deadline
[+0.010 s] turn 1: timer due: 1 (deadline +0.010 s)
[+0.010 s] turn 1: timer cancelled: skipped
[+0.010 s] turn 1: ran 1 callbacks
";
        [
            Run {
                step: 8,
                scene: None,
                output: demo.to_owned(),
            },
            Run {
                step: 8,
                scene: Some("sweep-step08"),
                output: scene.to_owned(),
            },
        ]
    }

    #[test]
    fn the_figure_draws_each_line_where_it_was_printed() {
        let runs = runs();
        let runs: Vec<&Run> = runs.iter().collect();
        let turns = read_turns(&runs);
        let svg = Drawing::new(8, &turns, &Turns::default()).draw();
        assert_eq!(misdrawn(&runs, &svg), Vec::<String>::new(), "{svg}");
        assert!(svg.contains(">timer cancelled: skipped *</text>"), "{svg}");
    }

    #[test]
    fn a_line_drawn_inside_the_loop_or_in_one_of_its_two_phases_is_named() {
        let runs = runs();
        let runs: Vec<&Run> = runs.iter().collect();
        // Two boxes in the loop, the arrow back from the second: the line
        // that ends the loop drawn in the first, the skipped timer only in
        // the second.
        let svg = "<svg viewBox=\"0 0 760 300\">\n\
            <rect x=\"64\" y=\"78\" width=\"676\" height=\"60\"/>\n\
            <text x=\"94\" y=\"121\">wait: nothing to wait for</text>\n\
            <rect x=\"64\" y=\"160\" width=\"676\" height=\"60\"/>\n\
            <text x=\"94\" y=\"200\">timer cancelled: skipped *</text>\n\
            <path d=\"M63,184 H30 V102 H63\"/>\n</svg>";
        let problems = misdrawn(&runs, svg);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].contains("printed after the loop ends"),
            "{problems:?}"
        );
        assert!(problems[1].contains("drawn in 1 box"), "{problems:?}");
    }

    #[test]
    fn phases_are_ordered_as_the_turns_show_them_and_run_once_otherwise() {
        use Phase::{Run, Sockets, Timers, Wait, Woken};
        // The demo's turns never show sockets beside timers, a scene's
        // never timers: sockets still come before timers, after the wait.
        let sequences = vec![
            vec![Wait, Timers, Run, Woken],
            vec![Wait, Run, Woken],
            vec![Wait, Sockets, Run],
        ];
        let phases = [Woken, Run, Timers, Sockets, Wait];
        assert_eq!(
            order(&phases, &sequences),
            [Wait, Sockets, Timers, Run, Woken]
        );
    }
}
