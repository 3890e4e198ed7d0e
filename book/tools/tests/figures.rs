//! The book's figures (`book/src/figures/*.svg`) are drawn from real runs
//! of the steps by `cargo run -p book-tools --bin figures`. This check
//! runs the steps again and fails when a committed figure no longer shows
//! what they do.
//!
//! That redraw reruns every step's timed demos (20 s to 2 min) and guards
//! the authors' figures, not the steps: the README's `cargo test
//! --workspace` leaves it out, and `.ci/run` runs it:
//!
//!     cargo test -p book-tools --test figures -- --ignored
//!
//! Shape: exact. The fresh run is drawn with the committed file's measured
//! times (kept in its `<metadata>`) and must give the committed text byte
//! for byte: same elements, labels, phases, events, order.
//! Times: each freshly measured time must be within 0.25 s, or 20 % of the
//! committed one, whichever is more (`figures::TOLERANCE_SECONDS`,
//! `TOLERANCE_SHARE`): enough for a loop that wakes late on a loaded
//! machine, far less than a change a reader would see. A CPU time (the
//! polling sleep's, the heap's) is only checked for the side of 0.05 s it
//! falls on (`figures::CPU_LINE_SECONDS`): a loaded machine gives a
//! polling loop less CPU, and that is not a change in the step.

use book_tools::figures::{self, Figure};

#[test]
#[ignore = "the authors' figures, redrawn from timed runs; .ci/run runs it"]
fn figures_are_current() {
    let fresh = figures::all();
    let problems: Vec<String> = fresh.iter().filter_map(problem).collect();
    assert!(
        problems.is_empty(),
        "{}\nredraw with `cargo run -p book-tools --bin figures`, look at \
         the figures, and commit them",
        problems.join("\n")
    );
}

/// What is wrong with `figure`'s committed file, if anything.
fn problem(figure: &Figure) -> Option<String> {
    let name = &figure.name;
    let Some(committed) = figures::committed(name) else {
        return Some(format!("{name}: not committed"));
    };
    let Some(times) = figures::times_in(&committed) else {
        return Some(format!("{name}: no measured times in its metadata"));
    };
    if times.len() != figure.times.len() {
        return Some(format!(
            "{name}: {} measured times, the committed figure has {}",
            figure.times.len(),
            times.len()
        ));
    }
    if figure.svg_with(&times) != committed {
        return Some(format!("{name}: the figure's shape changed"));
    }
    let moved: Vec<String> = (0..times.len())
        .filter(|&i| {
            !figures::close_enough(figure.measures[i], figure.times[i], times[i])
        })
        .map(|i| format!("{:.3} s is now {:.3} s", times[i], figure.times[i]))
        .collect();
    (!moved.is_empty()).then(|| format!("{name}: {}", moved.join(", ")))
}

#[test]
fn no_text_runs_out_of_its_box() {
    // Checked on the committed files, which `figures_are_current` holds to
    // what the code draws: each text's width is estimated for the widest
    // font a reader may get (`figures::geometry`).
    let mut problems = Vec::new();
    for (name, svg) in committed_figures() {
        for problem in figures::geometry::overflows(&svg) {
            problems.push(format!("{name}: {problem}"));
        }
    }
    assert!(
        problems.is_empty(),
        "text runs out of its box:\n{}\nwrap or shorten it where the figure is \
         drawn (book/tools/src/figures/), and redraw",
        problems.join("\n")
    );
}

#[test]
fn no_text_has_a_line_through_it() {
    // On the committed files, as above: a line (a mark, an arrow, an axis)
    // drawn through a label makes it hard to read.
    let mut problems = Vec::new();
    for (name, svg) in committed_figures() {
        for problem in figures::geometry::texts_over_lines(&svg) {
            problems.push(format!("{name}: {problem}"));
        }
    }
    assert!(
        problems.is_empty(),
        "a line runs through a text:\n{}\nmove the text or shorten the line \
         where the figure is drawn (book/tools/src/figures/), and redraw",
        problems.join("\n")
    );
}

/// Every committed figure: its file name and text.
fn committed_figures() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(figures::folder()).expect("the figures' folder") {
        let path = entry.expect("a folder entry").path();
        if path.extension().is_none_or(|ext| ext != "svg") {
            continue;
        }
        let svg = std::fs::read_to_string(&path).expect("an SVG file");
        let name = path.file_name().expect("a name").to_string_lossy();
        found.push((name.into_owned(), svg));
    }
    assert!(found.len() >= 10, "only {} figures found", found.len());
    found
}
