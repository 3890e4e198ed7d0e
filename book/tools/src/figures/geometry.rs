//! Where a figure's text lands, estimated from the SVG's own geometry: no
//! text may run out of the box it starts in, nor off the figure.
//!
//! A browser measures text with whatever font it finds, so the estimate
//! takes the widest font a reader is likely to get: the figures ask for
//! `system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif`, and where
//! none of the first four is installed (most Linux machines) `sans-serif`
//! is `DejaVu Sans`, wider than Segoe UI, Roboto, San Francisco or Noto
//! Sans. Its advance widths, regular and bold, are in `SANS` and
//! `SANS_BOLD` (read from `DejaVuSans.ttf` and `DejaVuSans-Bold.ttf` 2.37,
//! for the printable ASCII characters; any other character counts as 1 em,
//! the widest there is). `font-family="monospace"` is `DejaVu Sans Mono`
//! there, 0.602 em a character, as wide as Menlo and wider than Consolas.

/// `DejaVu Sans`'s advance widths in thousandths of an em, for ' ' (32)
/// to '~' (126).
const SANS: [u16; 95] = [
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,
    636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,
    1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,
    603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,
    500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
];

/// `DejaVu Sans Bold`'s advance widths in thousandths of an em, for ' '
/// (32) to '~' (126).
const SANS_BOLD: [u16; 95] = [
    348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365,
    696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 580,
    1000, 774, 762, 734, 830, 683, 683, 821, 837, 372, 372, 775, 637, 995, 837, 850,
    733, 850, 770, 720, 682, 812, 774, 1103, 771, 724, 725, 457, 365, 457, 838, 500,
    500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665, 343, 1042, 712, 687,
    716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838,
];

/// `DejaVu Sans Mono`'s one width, in em.
const MONO: f64 = 0.602;

/// How far above and below its baseline a line of text reaches, in em
/// (`DejaVu Sans`: ascender 0.928, descender 0.236).
const ASCENT: f64 = 0.93;
const DESCENT: f64 = 0.24;

/// How text is set: what its width depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Font {
    pub size: f64,
    pub bold: bool,
    pub mono: bool,
}

/// The estimated width of `text` set in `font`, in pixels: an upper bound
/// for the fonts the figures name (see the module's doc).
pub fn width(text: &str, font: Font) -> f64 {
    let ems: f64 = text
        .chars()
        .map(|c| {
            if font.mono {
                return MONO;
            }
            let table = if font.bold { &SANS_BOLD } else { &SANS };
            u32::from(c)
                .checked_sub(32)
                .and_then(|i| table.get(usize::try_from(i).ok()?))
                .map_or(1.0, |&thousandths| f64::from(thousandths) / 1000.0)
        })
        .sum();
    ems * font.size
}

/// A rectangle: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Area {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

impl Area {
    fn contains_point(&self, x: f64, y: f64) -> bool {
        self.left <= x && x <= self.right && self.top <= y && y <= self.bottom
    }

    fn contains(&self, other: &Area) -> bool {
        const EPSILON: f64 = 1e-6;
        self.left <= other.left + EPSILON
            && other.right <= self.right + EPSILON
            && self.top <= other.top + EPSILON
            && other.bottom <= self.bottom + EPSILON
    }

    fn size(&self) -> f64 {
        (self.right - self.left) * (self.bottom - self.top)
    }

    fn shrunk(&self, by: f64) -> Area {
        Area {
            left: self.left + by,
            top: self.top + by,
            right: self.right - by,
            bottom: self.bottom - by,
        }
    }

    /// Whether the segment from `from` to `to` passes through the area:
    /// the part of the segment left after clipping it to the area's four
    /// sides (Liang-Barsky) is not empty.
    fn meets_segment(&self, from: (f64, f64), to: (f64, f64)) -> bool {
        let (dx, dy) = (to.0 - from.0, to.1 - from.1);
        let mut enter: f64 = 0.0;
        let mut leave: f64 = 1.0;
        // Each side as (-direction, distance inside from the start).
        let sides = [
            (-dx, from.0 - self.left),
            (dx, self.right - from.0),
            (-dy, from.1 - self.top),
            (dy, self.bottom - from.1),
        ];
        for (p, q) in sides {
            if p == 0.0 {
                if q < 0.0 {
                    return false; // parallel to this side, and outside it
                }
            } else if p < 0.0 {
                enter = enter.max(q / p);
            } else {
                leave = leave.min(q / p);
            }
        }
        enter <= leave
    }
}

impl std::fmt::Display for Area {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "x {:.1}..{:.1}, y {:.1}..{:.1}",
            self.left, self.right, self.top, self.bottom
        )
    }
}

/// One `<text>` of a figure: what it says and where its ink can reach.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub content: String,
    /// Where the text is anchored (its `x`, `y`, before any rotation).
    pub anchor: (f64, f64),
    pub area: Area,
}

/// Every text of `svg` that runs out of the smallest box (`<rect>`) its
/// anchor lies in, or out of the figure's `viewBox`: one line each, saying
/// which text, where it reaches and where its box ends.
pub fn overflows(svg: &str) -> Vec<String> {
    let view = view_box(svg);
    let boxes = boxes(svg);
    let mut problems = Vec::new();
    for text in texts(svg) {
        if let Some(container) = box_around(&boxes, text.anchor) {
            if !container.contains(&text.area) {
                problems.push(format!(
                    "{:?} reaches {}, past its box ({container})",
                    text.content, text.area
                ));
                continue;
            }
        }
        if !view.contains(&text.area) {
            problems.push(format!(
                "{:?} reaches {}, past the figure ({view})",
                text.content, text.area
            ));
        }
    }
    problems
}

/// Every text of `svg` that a `<line>` runs through: a line struck
/// through a label makes it hard to read. A line may end at a text's edge,
/// so each text's extent is taken half a pixel smaller on every side.
pub fn texts_over_lines(svg: &str) -> Vec<String> {
    let lines: Vec<((f64, f64), (f64, f64))> = elements(svg, "line")
        .iter()
        .map(|tag| {
            let n = |name| number(tag, name).unwrap_or(0.0);
            ((n("x1"), n("y1")), (n("x2"), n("y2")))
        })
        .collect();
    let mut problems = Vec::new();
    for text in texts(svg) {
        let ink = text.area.shrunk(0.5);
        for &(from, to) in &lines {
            if ink.meets_segment(from, to) {
                problems.push(format!(
                    "{:?} ({}) has a line through it, from ({:.1}, {:.1}) to \
                     ({:.1}, {:.1})",
                    text.content, text.area, from.0, from.1, to.0, to.1
                ));
            }
        }
    }
    problems
}

/// Every box (`<rect>`) of `svg`.
pub fn boxes(svg: &str) -> Vec<Area> {
    elements(svg, "rect").iter().map(|r| rect(r)).collect()
}

/// The smallest of `boxes` that `point` lies in: the box a text anchored
/// there is drawn in.
pub fn box_around(boxes: &[Area], (x, y): (f64, f64)) -> Option<Area> {
    boxes
        .iter()
        .filter(|b| b.contains_point(x, y))
        .min_by(|a, b| a.size().total_cmp(&b.size()))
        .copied()
}

/// The figure's `viewBox`.
fn view_box(svg: &str) -> Area {
    let root = elements(svg, "svg");
    let numbers: Vec<f64> = attribute(root.first().expect("an <svg>"), "viewBox")
        .expect("a viewBox")
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect();
    let [left, top, w, h] = numbers[..] else {
        panic!("a viewBox of four numbers");
    };
    Area {
        left,
        top,
        right: left + w,
        bottom: top + h,
    }
}

fn rect(tag: &str) -> Area {
    let n = |name| number(tag, name).unwrap_or(0.0);
    Area {
        left: n("x"),
        top: n("y"),
        right: n("x") + n("width"),
        bottom: n("y") + n("height"),
    }
}

/// Every `<text>` of `svg`, with its estimated extent.
pub fn texts(svg: &str) -> Vec<Text> {
    let mut texts = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find("<text ") {
        let after = &rest[start..];
        let open_end = after.find('>').expect("a closed tag");
        let open = &after[..open_end];
        let close = after.find("</text>").expect("a </text>");
        let inner = &after[open_end + 1..close];
        texts.push(text(open, inner));
        rest = &after[close..];
    }
    texts
}

fn text(open: &str, inner: &str) -> Text {
    let font = font_of(
        open,
        Font {
            size: 16.0, // SVG's default
            bold: false,
            mono: false,
        },
    );
    let mut content = String::new();
    let mut width_px = 0.0;
    let mut tallest = font.size;
    // Runs of text, each in its `<tspan>`'s font or the `<text>`'s.
    let mut rest = inner;
    while !rest.is_empty() {
        if let Some(span) = rest.strip_prefix("<tspan") {
            let open_end = span.find('>').expect("a closed tspan");
            let close = span.find("</tspan>").expect("a </tspan>");
            let run = unescape(&span[open_end + 1..close]);
            let run_font = font_of(&span[..open_end], font);
            width_px += width(&run, run_font);
            tallest = tallest.max(run_font.size);
            content.push_str(&run);
            rest = &span[close + "</tspan>".len()..];
        } else {
            let end = rest.find("<tspan").unwrap_or(rest.len());
            let run = unescape(&rest[..end]);
            width_px += width(&run, font);
            content.push_str(&run);
            rest = &rest[end..];
        }
    }
    let (x, y) = (
        number(open, "x").unwrap_or(0.0),
        number(open, "y").unwrap_or(0.0),
    );
    let left = match attribute(open, "text-anchor") {
        Some("middle") => x - width_px / 2.0,
        Some("end") => x - width_px,
        _ => x,
    };
    let mut area = Area {
        left,
        top: y - ASCENT * tallest,
        right: left + width_px,
        bottom: y + DESCENT * tallest,
    };
    if let Some(transform) = attribute(open, "transform") {
        area = rotated(area, transform);
    }
    Text {
        content,
        anchor: (x, y),
        area,
    }
}

/// `area` turned by a `rotate(a cx cy)` of a quarter turn (or none).
fn rotated(area: Area, transform: &str) -> Area {
    let inner = transform
        .strip_prefix("rotate(")
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or_else(|| panic!("only rotate() is known: {transform}"));
    let n: Vec<f64> = inner
        .split([' ', ','])
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("a number"))
        .collect();
    let (angle, cx, cy) = match n[..] {
        [a] => (a, 0.0, 0.0),
        [a, cx, cy] => (a, cx, cy),
        _ => panic!("rotate() takes 1 or 3 numbers: {transform}"),
    };
    let turn = |(x, y): (f64, f64)| {
        let (sin, cos) = angle.to_radians().sin_cos();
        let (dx, dy) = (x - cx, y - cy);
        (cx + dx * cos - dy * sin, cy + dx * sin + dy * cos)
    };
    let corners = [
        turn((area.left, area.top)),
        turn((area.right, area.top)),
        turn((area.left, area.bottom)),
        turn((area.right, area.bottom)),
    ];
    let xs = corners.map(|c| c.0);
    let ys = corners.map(|c| c.1);
    Area {
        left: xs.iter().copied().fold(f64::INFINITY, f64::min),
        right: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        top: ys.iter().copied().fold(f64::INFINITY, f64::min),
        bottom: ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// The font `tag` sets, starting from `inherited`.
fn font_of(tag: &str, inherited: Font) -> Font {
    Font {
        size: number(tag, "font-size").unwrap_or(inherited.size),
        bold: attribute(tag, "font-weight").map_or(inherited.bold, |w| {
            w == "bold" || w.parse::<u32>().is_ok_and(|w| w >= 600)
        }),
        mono: attribute(tag, "font-family")
            .map_or(inherited.mono, |family| family.contains("monospace")),
    }
}

/// The opening tags of every `<name …>` element.
fn elements<'a>(svg: &'a str, name: &str) -> Vec<&'a str> {
    let opening = format!("<{name} ");
    let mut found = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find(&opening) {
        let after = &rest[start..];
        let end = after.find('>').expect("a closed tag");
        found.push(&after[..end]);
        rest = &after[end..];
    }
    found
}

/// The value of attribute `name` in an opening tag.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = start + tag[start..].find('"')?;
    Some(&tag[start..end])
}

fn number(tag: &str, name: &str) -> Option<f64> {
    attribute(tag, name).map(|v| v.parse().expect("a number"))
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MONO_12: Font = Font {
        size: 12.0,
        bold: false,
        mono: true,
    };

    fn figure(body: &str) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"100\" \
             viewBox=\"0 0 200 100\" font-family=\"sans-serif\">\n{body}</svg>\n"
        )
    }

    #[test]
    fn monospace_text_is_0_602_em_a_character() {
        assert!((width("0123456789", MONO_12) - 72.24).abs() < 1e-9);
    }

    #[test]
    fn bold_sans_is_wider_than_regular_and_unknown_characters_count_1_em() {
        let regular = Font {
            size: 10.0,
            bold: false,
            mono: false,
        };
        let bold = Font {
            bold: true,
            ..regular
        };
        assert!(width("step", bold) > width("step", regular));
        assert!((width("…", regular) - 10.0).abs() < 1e-9);
        assert!((width("W", bold) - 11.03).abs() < 1e-9);
    }

    #[test]
    fn text_inside_its_box_passes() {
        // 10 characters of 12 px monospace: 72.24 px from x = 20.
        let svg = figure(
            "<rect x=\"10\" y=\"10\" width=\"100\" height=\"30\"/>\n\
             <text x=\"20\" y=\"30\" font-family=\"monospace\" font-size=\"12\">0123456789</text>\n",
        );
        assert_eq!(overflows(&svg), Vec::<String>::new());
    }

    #[test]
    fn text_past_its_box_fails() {
        // 72.24 px from x = 40 ends at 112.24, past the box's 110.
        let svg = figure(
            "<rect x=\"10\" y=\"10\" width=\"100\" height=\"30\"/>\n\
             <text x=\"40\" y=\"30\" font-family=\"monospace\" font-size=\"12\">0123456789</text>\n",
        );
        let problems = overflows(&svg);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("past its box"), "{problems:?}");
    }

    #[test]
    fn text_anchored_at_its_end_or_middle_is_measured_back_from_there() {
        let inside = figure(
            "<rect x=\"10\" y=\"10\" width=\"100\" height=\"30\"/>\n\
             <text x=\"105\" y=\"30\" font-family=\"monospace\" font-size=\"12\" \
             text-anchor=\"end\">0123456789</text>\n\
             <text x=\"60\" y=\"30\" font-family=\"monospace\" font-size=\"12\" \
             text-anchor=\"middle\">0123456789</text>\n",
        );
        assert_eq!(overflows(&inside), Vec::<String>::new());
        let past = figure(
            "<rect x=\"10\" y=\"10\" width=\"100\" height=\"30\"/>\n\
             <text x=\"75\" y=\"30\" font-family=\"monospace\" font-size=\"12\" \
             text-anchor=\"end\">0123456789</text>\n",
        );
        assert_eq!(overflows(&past).len(), 1);
    }

    #[test]
    fn text_in_no_box_must_stay_on_the_figure() {
        // 20 characters: 144.48 px from x = 60 ends at 204.48, past 200.
        let svg = figure(
            "<text x=\"60\" y=\"90\" font-family=\"monospace\" font-size=\"12\">\
             01234567890123456789</text>\n",
        );
        let problems = overflows(&svg);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("past the figure"), "{problems:?}");
    }

    #[test]
    fn a_line_through_a_text_is_named_and_one_beside_it_is_not() {
        // "0123456789", 12 px monospace at x = 20: 20 to 92.24 across, its
        // ink from y = 18.84 to 32.88.
        let label = "<text x=\"20\" y=\"30\" font-family=\"monospace\" \
                     font-size=\"12\">0123456789</text>\n";
        let through = figure(&format!(
            "{label}<line x1=\"60\" y1=\"5\" x2=\"60\" y2=\"80\"/>\n"
        ));
        assert_eq!(texts_over_lines(&through).len(), 1);
        let slanted = figure(&format!(
            "{label}<line x1=\"0\" y1=\"0\" x2=\"100\" y2=\"50\"/>\n"
        ));
        assert_eq!(texts_over_lines(&slanted).len(), 1);
        let beside = figure(&format!(
            "{label}<line x1=\"96\" y1=\"5\" x2=\"96\" y2=\"80\"/>\n\
             <line x1=\"10\" y1=\"34\" x2=\"150\" y2=\"34\"/>\n\
             <line x1=\"92\" y1=\"25\" x2=\"120\" y2=\"25\"/>\n"
        ));
        assert_eq!(texts_over_lines(&beside), Vec::<String>::new());
    }

    #[test]
    fn rotated_text_is_measured_upright_and_tspans_in_their_own_font() {
        // Turned a quarter, 10 characters (72.24 px) stand from y = 57.9
        // to 42.1 about their middle: inside a 100 px tall figure.
        let svg = figure(
            "<text x=\"20\" y=\"50\" font-family=\"monospace\" font-size=\"12\" \
             text-anchor=\"middle\" transform=\"rotate(-90 20 50)\">0123456789</text>\n\
             <text x=\"10\" y=\"80\" font-size=\"12\"><tspan font-family=\"monospace\" \
             font-size=\"20\">0123456789</tspan>0</text>\n",
        );
        let texts = texts(&svg);
        let turned = texts[0].area;
        assert!(
            (turned.bottom - turned.top - 72.24).abs() < 1e-6,
            "{turned}"
        );
        assert!(turned.right - turned.left < 20.0, "{turned}");
        // 10 × 12.04 px, then a regular '0' at 12 px.
        let runs = texts[1].area;
        assert!(
            (runs.right - runs.left - (120.4 + 0.636 * 12.0)).abs() < 1e-6,
            "{runs}"
        );
        assert_eq!(overflows(&svg), Vec::<String>::new());
    }
}
