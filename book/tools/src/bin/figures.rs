//! `cargo run -p book-tools --bin figures`: runs the steps and redraws
//! every figure of the book into `book/src/figures/` (see
//! `book_tools::figures`). Commit what changed, after looking at it.

use std::fs;

use book_tools::figures;

fn main() {
    let folder = figures::folder();
    fs::create_dir_all(&folder).expect("the figures' folder can be made");
    let mut overflows = Vec::new();
    for figure in figures::all() {
        let path = folder.join(&figure.name);
        let svg = figure.svg();
        let problems = figures::geometry::overflows(&svg)
            .into_iter()
            .chain(figures::geometry::texts_over_lines(&svg));
        for problem in problems {
            overflows.push(format!("{}: {problem}", figure.name));
        }
        let changed =
            fs::read_to_string(&path).ok().as_deref() != Some(svg.as_str());
        fs::write(&path, svg).expect("the figure can be written");
        let note = if changed { "written" } else { "unchanged" };
        println!("{note}: book/src/figures/{}", figure.name);
    }
    if !overflows.is_empty() {
        eprintln!(
            "text runs out of its box, or has a line through it:\n{}",
            overflows.join("\n")
        );
        std::process::exit(1);
    }
}
