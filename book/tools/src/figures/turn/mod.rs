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

use super::geometry;
use super::{Figure, Line, lines};
use crate::workspace::workspace_root;

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

mod drawing;
#[cfg(test)]
mod tests;

use drawing::Drawing;
