//! Hand-written SVG: a few shapes and text, in the book's colours.
//!
//! Every figure draws its own white card, so it reads the same in the
//! book's light and dark themes: an `<img>` does not take the page's
//! colours.

use std::fmt::Write as _;

/// The width every figure is drawn at: the book's column, so one pixel of
/// the figure is one pixel on the page.
pub const WIDTH: f64 = 760.0;

pub const INK: &str = "#1f2328";
pub const MUTED: &str = "#59636e";
pub const LINE: &str = "#8c959f";
pub const PANEL: &str = "#f6f8fa";
/// What is new in a step: the same orange everywhere.
pub const NEW: &str = "#c2410c";
pub const NEW_FILL: &str = "#ffedd5";
pub const BLUE: &str = "#0969da";
pub const BLUE_FILL: &str = "#ddf4ff";

const FONT: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

/// An SVG document under construction.
#[derive(Debug)]
pub struct Svg {
    height: f64,
    title: String,
    body: String,
}

impl Svg {
    /// An empty figure `height` pixels tall; `title` is what a screen
    /// reader says of it.
    pub fn new(height: f64, title: &str) -> Self {
        Svg {
            height,
            title: title.to_owned(),
            body: String::new(),
        }
    }

    /// The document, with `measured` (seconds, as drawn) in its metadata.
    pub fn finish(self, measured: &[f64]) -> String {
        let times: Vec<String> =
            measured.iter().map(|t| format!("{t:.3}")).collect();
        let (w, h) = (num(WIDTH), num(self.height));
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"{FONT}\" role=\"img\">\n\
             <title>{title}</title>\n\
             <metadata>measured seconds: {times}</metadata>\n\
             <rect x=\"0.5\" y=\"0.5\" width=\"{w1}\" height=\"{h1}\" rx=\"8\" \
             fill=\"#ffffff\" stroke=\"#d0d7de\"/>\n{body}</svg>\n",
            title = escape(&self.title),
            times = times.join(" "),
            w1 = num(WIDTH - 1.0),
            h1 = num(self.height - 1.0),
            body = self.body,
        )
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, style: &str) {
        let _ = writeln!(
            self.body,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {style}/>",
            num(x),
            num(y),
            num(w.max(0.0)),
            num(h)
        );
    }

    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), style: &str) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {style}/>",
            num(x1),
            num(y1),
            num(x2),
            num(y2)
        );
    }

    pub fn path(&mut self, d: &str, style: &str) {
        let _ = writeln!(self.body, "<path d=\"{d}\" {style}/>");
    }

    /// Text at (`x`, `y`); `style` adds attributes (size, weight, anchor).
    pub fn text(&mut self, x: f64, y: f64, style: &str, content: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" {style}>{}</text>",
            num(x),
            num(y),
            escape(content)
        );
    }

    /// One line of text made of runs, each with its own style.
    pub fn runs(&mut self, x: f64, y: f64, style: &str, runs: &[(String, &str)]) {
        let mut spans = String::new();
        for (content, run_style) in runs {
            let _ = write!(spans, "<tspan {run_style}>{}</tspan>", escape(content));
        }
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" {style}>{spans}</text>",
            num(x),
            num(y)
        );
    }

    /// An arrow head's marker, defined once per figure as `#arrow`.
    pub fn arrow_marker(&mut self) {
        let _ = writeln!(
            self.body,
            "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" \
             markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">\
             <path d=\"M0,0 L10,5 L0,10 z\" fill=\"{LINE}\"/></marker></defs>"
        );
    }

    /// The two muted lines at a figure's foot, the first at height `y`:
    /// where its numbers come from, and the command that redraws it.
    pub fn footnote(&mut self, y: f64, source: &str) {
        self.text(24.0, y, &sized(12, MUTED), source);
        self.text(
            24.0,
            y + 17.0,
            &sized(12, MUTED),
            "Redraw: cargo run -p book-tools --bin figures",
        );
    }

    /// A time axis from `x0` (0 s) to `x0 + seconds * scale`, a tick every
    /// `step` seconds, at height `y`.
    pub fn time_axis(
        &mut self,
        x0: f64,
        y: f64,
        seconds: f64,
        step: f64,
        scale: f64,
    ) {
        self.line((x0, y), (x0 + seconds * scale, y), &stroke(LINE, 1.0));
        let mut i = 0.0;
        while i * step <= seconds + 1e-9 {
            let t = i * step;
            i += 1.0;
            let x = x0 + t * scale;
            self.line((x, y), (x, y + 5.0), &stroke(LINE, 1.0));
            self.text(x, y + 19.0, &small_middle(MUTED), &format!("{t:.1} s"));
        }
    }
}

/// A number as SVG wants it: at most one decimal, no trailing `.0`.
pub fn num(value: f64) -> String {
    let rounded = (value * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 {
        format!("{rounded:.0}")
    } else {
        format!("{rounded:.1}")
    }
}

pub fn stroke(colour: &str, width: f64) -> String {
    format!("stroke=\"{colour}\" stroke-width=\"{}\"", num(width))
}

pub fn fill(colour: &str) -> String {
    format!("fill=\"{colour}\"")
}

/// A box: `fill`ed, outlined in `outline`.
pub fn boxed(fill_colour: &str, outline: &str, width: f64) -> String {
    format!("fill=\"{fill_colour}\" {} rx=\"6\"", stroke(outline, width))
}

pub fn small_middle(colour: &str) -> String {
    format!("font-size=\"12\" text-anchor=\"middle\" fill=\"{colour}\"")
}

pub fn sized(size: u32, colour: &str) -> String {
    format!("font-size=\"{size}\" fill=\"{colour}\"")
}

pub fn bold(size: u32, colour: &str) -> String {
    format!("font-size=\"{size}\" font-weight=\"bold\" fill=\"{colour}\"")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A count (rows, turns, lines) as a length to multiply: counts in a
/// figure are small.
pub fn count<N>(n: N) -> f64
where
    N: TryInto<u32>,
    N::Error: std::fmt::Debug,
{
    f64::from(n.try_into().expect("a figure's counts are small"))
}
