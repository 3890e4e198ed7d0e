//! The handout (`book/src/handout.md`) is one printed page, A4 or Letter.
//! Printing needs a browser, which the tests do not have; so this counts
//! the lines the page will take on paper, the way the print showed them,
//! and holds the count to what fitted when it was printed.
//!
//! How it was printed (the handout's note says so too), after
//! `mdbook build book`:
//!
//! ```sh
//! chromium --headless --no-sandbox --disable-gpu --no-first-run \
//!   --disable-background-networking --disable-component-update \
//!   --disable-sync --user-data-dir="$(mktemp -d)" \
//!   --no-pdf-header-footer --print-to-pdf=handout.pdf book/book/handout.html
//! pdfinfo handout.pdf   # Pages: 1
//! ```
//!
//! once for each paper: a copy of `handout.html` with
//! `<style>@page handout { size: A4; }</style>` (then `size: letter;`)
//! added before `</head>`, since the style names no size and takes the
//! printer's. One page each. `pdftoppm -png` showed the page whole.

use std::path::Path;

use book_tools::book::{book_src, chapters, read_text};
use workshop_tests::workspace_root;

/// A table cell's characters per printed line, for each table of the
/// handout in order, column by column: read off the printed A4 page
/// (`pdftotext -layout`), the narrower of the two, whose lines held 56 to
/// 63, 38 to 47 and 71 to 78 characters (a proportional font: it depends
/// on the letters), taken near the low end so that a cell is counted no
/// shorter than it printed. The first columns (the step, the command) do
/// not wrap.
const COLUMN_CHARS: [&[usize]; 2] = [&[4, 54, 42], &[30, 72]];

/// A code block's line is printed on one line: about this many characters
/// fit across the page in the code's 8.5 pt (0.6 em a character, on A4's
/// 186 mm between the margins, less the block's padding). The widest now
/// is 89, and printed whole.
const CODE_LINE_CHARS: usize = 100;

/// A line of prose (a paragraph's text) in characters per printed line:
/// 118 on the printed A4 page, rounded down.
const PROSE_CHARS: usize = 110;

/// What a heading costs, in body lines: `#` and `##`, with their margins.
const H1_LINES: usize = 3;
const H2_LINES: usize = 2;

/// The printed lines one page holds, counted as `printed_lines` counts
/// them. Measured on 2026-11-27 with Chromium 156 (Debian 12): the handout
/// as committed counts 57 lines and printed on one page of each size, its
/// last line 710 pt down Letter's 792 pt page (the bottom margin starts at
/// 758 pt). Then one-line rows were added to the build track's table, the
/// costliest line this count knows (a prose or code line, or a heading's
/// share, takes less paper than a table row): with 2 more (59 lines) it
/// still printed on one Letter and one A4 page; with 3 (60) Letter took a
/// second page, and with 4 so did A4. Letter is the shorter page, so 59 is
/// the budget.
const PAGE_LINES: usize = 59;

/// The part of `handout.md` that is printed: inside `<div class="handout">`.
fn printed_part(markdown: &str) -> &str {
    let start = markdown
        .find("<div class=\"handout\">")
        .expect("handout.md wraps its printed part in <div class=\"handout\">");
    let rest = &markdown[start..];
    let end = rest.find("</div>").expect("the wrapper is closed");
    &rest[..end]
}

/// How wide the text a reader sees of a Markdown line is, in characters of
/// prose: without backticks and the markers of emphasis, and a character
/// of code, in its monospace font, as wide as 5/4 of one of prose.
fn visible_chars(text: &str) -> usize {
    let mut quarters: usize = 0;
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '`' => in_code = !in_code,
            '*' if !in_code => {}
            _ if in_code => quarters += 5,
            _ => quarters += 4,
        }
    }
    quarters.div_ceil(4)
}

/// The printed lines `markdown`'s printed part takes, estimated from how
/// the print laid it out: a table row as tall as its tallest cell, a code
/// line one line, prose wrapped at `PROSE_CHARS`.
fn printed_lines(markdown: &str) -> usize {
    let mut lines = 0;
    let mut in_code = false;
    let mut table = 0;
    let mut in_table = false;
    let mut paragraph = 0;
    let end_paragraph = |paragraph: &mut usize, lines: &mut usize| {
        if *paragraph > 0 {
            *lines += paragraph.div_ceil(PROSE_CHARS);
            *paragraph = 0;
        }
    };
    for line in printed_part(markdown).lines().skip(1) {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            assert!(
                line.chars().count() <= CODE_LINE_CHARS,
                "handout.md: a code line wider than the page \
                 ({CODE_LINE_CHARS} characters): {line}"
            );
            lines += 1;
            continue;
        }
        if let Some(row) = trimmed.strip_prefix('|') {
            end_paragraph(&mut paragraph, &mut lines);
            if !in_table {
                in_table = true;
                table += 1;
            }
            if row.starts_with(" ---") {
                continue;
            }
            let widths = COLUMN_CHARS.get(table - 1).unwrap_or_else(|| {
                panic!("handout.md has table {table}: give it COLUMN_CHARS")
            });
            let cells: Vec<&str> = row.trim_end_matches('|').split(" | ").collect();
            assert_eq!(
                cells.len(),
                widths.len(),
                "handout.md, table {table}: {trimmed}"
            );
            lines += cells
                .iter()
                .zip(widths.iter())
                .map(|(cell, width)| visible_chars(cell.trim()).div_ceil(*width))
                .max()
                .unwrap_or(1);
            continue;
        }
        in_table = false;
        if trimmed.is_empty() {
            end_paragraph(&mut paragraph, &mut lines);
        } else if trimmed.starts_with("## ") {
            end_paragraph(&mut paragraph, &mut lines);
            lines += H2_LINES;
        } else if trimmed.starts_with("# ") {
            end_paragraph(&mut paragraph, &mut lines);
            lines += H1_LINES;
        } else {
            paragraph += visible_chars(trimmed) + 1;
        }
    }
    end_paragraph(&mut paragraph, &mut lines);
    lines
}

fn handout() -> String {
    read_text(&book_src().join("handout.md"))
}

#[test]
fn the_handout_stays_one_page() {
    let lines = printed_lines(&handout());
    assert!(
        lines <= PAGE_LINES,
        "the handout takes about {lines} printed lines, over the \
         {PAGE_LINES} that fitted on one page: shorten it, or print it again \
         (book/tools/tests/handout.rs says how) and measure"
    );
}

#[test]
fn the_handout_is_a_page_of_the_book_with_its_print_style() {
    assert!(
        chapters().iter().any(|chapter| chapter == "handout.md"),
        "SUMMARY.md does not list handout.md"
    );
    assert!(
        handout().contains("--print-to-pdf="),
        "handout.md's note no longer says how the page was printed"
    );
    let book = workspace_root().join("book");
    let toml = read_text(&book.join("book.toml"));
    assert!(
        toml.lines().any(|line| line.starts_with("additional-css")
            && line.contains("\"handout.css\"")),
        "book.toml's [output.html] does not load handout.css"
    );
    let css = read_text(&book.join(Path::new("handout.css")));
    for wanted in ["@page handout", "page: handout;", "@media print"] {
        assert!(css.contains(wanted), "book/handout.css lacks `{wanted}`");
    }
}

/// Every `cargo workshop` command the handout names is one the program
/// knows: its usage (`cargo workshop help`) lists it.
#[test]
fn the_handouts_workshop_commands_exist() {
    let usage = read_text(&workspace_root().join("workshop/src/main.rs"));
    let usage = usage
        .split_once("const USAGE: &str = \"")
        .and_then(|(_, rest)| rest.split_once("\";"))
        .map(|(usage, _)| usage)
        .expect("workshop/src/main.rs has its USAGE");
    let handout = handout();
    let mut named = 0;
    for (at, _) in handout.match_indices("cargo workshop ") {
        let command = handout[at + "cargo workshop ".len()..]
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
            .next()
            .unwrap_or_default();
        named += 1;
        assert!(
            usage.contains(&format!("\n  {command} ")),
            "the handout names `cargo workshop {command}`, which its usage lacks"
        );
    }
    assert!(
        named >= 7,
        "the handout names only {named} workshop commands"
    );
}
