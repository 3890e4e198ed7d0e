//! Drawing a turn: a box for each phase, in the order the trace shows them,
//! each with the kinds of line that phase printed.

use super::super::geometry::{self, Font};
use super::super::svg::{self, Svg};
use super::{Phase, Turns};

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

pub(super) struct Drawing {
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
    pub(super) fn new(step: u32, turns: &Turns, earlier: &Turns) -> Self {
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

    pub(super) fn draw(&self) -> String {
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
