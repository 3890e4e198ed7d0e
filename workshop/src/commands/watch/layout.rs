//! How `watch`'s screen fits the terminal: the head always on screen, the
//! rest (a panel, the verdict's evidence) a page at a time under it. A pure
//! function of the text and the size, so that every size is tested.

/// The lines to draw, and where the page shown starts in the body.
#[derive(Debug, PartialEq, Eq)]
pub struct Page {
    /// At most the terminal's height, each at most its width.
    pub lines: Vec<String>,
    /// The body's first line shown (0-based), after clamping.
    pub first: usize,
    /// How many body lines a page shows.
    pub size: usize,
}

/// Lines the body keeps under a head however long: a head that would leave
/// fewer gives its last lines to the body, to page through.
const BODY_AT_LEAST: usize = 4;

/// `head` and `body` laid out for a terminal of `height` lines and `width`
/// columns, the body shown from its line `first`.
pub fn layout(
    head: &str,
    body: &str,
    first: usize,
    height: usize,
    width: usize,
) -> Page {
    let height = height.max(BODY_AT_LEAST + 2);
    let width = width.max(20);
    let mut head = fitted(head, width);
    let mut body = fitted(body, width);
    let head_room = height - BODY_AT_LEAST - 1;
    if head.len() > head_room {
        let rest = head.split_off(head_room);
        body.splice(0..0, rest);
    }
    while body.first().is_some_and(String::is_empty) {
        body.remove(0); // the head's blank line is enough
    }
    let room = height - head.len() - 1; // the blank line between them
    let mut lines = head;
    if body.len() <= room {
        if !body.is_empty() {
            lines.push(String::new());
            lines.extend(body);
        }
        return Page {
            lines,
            first: 0,
            size: room,
        };
    }
    let size = room - 1; // and the line that says where the page is
    let first = first.min(body.len() - size);
    let place = format!(
        "-- lines {}-{} of {}; Space: next page, b: back --",
        first + 1,
        first + size,
        body.len()
    );
    lines.push(String::new());
    lines.extend(body.drain(first..first + size));
    lines.push(cut(&place, width));
    Page { lines, first, size }
}

/// `text` as screen lines of at most `width` characters. A longer line is
/// broken between words, its continuation indented as it was: a line the
/// terminal wraps itself would push the head off the top, and its reflow
/// on a resize cuts words. One that cannot be broken (a long word, or the
/// trace's two columns, ` | `, which would no longer line up) is cut.
fn fitted(text: &str, width: usize) -> Vec<String> {
    text.lines()
        .flat_map(|line| crate::commands::between_words(line, width))
        .map(|part| cut(&part, width))
        .collect()
}

/// `line` cut to `width` characters, the last a `…` when cut.
fn cut(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_owned();
    }
    let kept: String = line.chars().take(width - 1).collect();
    kept + "…"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(count: usize) -> String {
        (1..=count)
            .map(|n| format!("evidence {n}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    const HEAD: &str = "Checked 4.1 s after your save (the check: 3.9 s). Save again \
                        to check again.\n\nYour `Timer::cmp` is not right yet: \
                        fix it and save.";

    #[test]
    fn a_long_line_breaks_between_words_and_keeps_its_indent() {
        let fit = |text: &str, width| fitted(text, width).join("\n");
        assert_eq!(
            fit("    one two three four", 13),
            "    one two\n    three\n    four"
        );
        assert_eq!(fit("short\n  also short", 13), "short\n  also short");
        let columns = "> turn 1: wait: nothing to wait for | turn 1: wait";
        assert_eq!(fit(columns, 60), columns, "the trace's columns stay whole");
        assert_eq!(fit(columns, 20), "> turn 1: wait: not…", "and are cut");
        assert_eq!(fit("averyveryverylongword next", 8), "averyve…\nnext");
    }

    #[test]
    fn a_long_verdict_keeps_the_head_on_an_80_by_24_screen_and_pages() {
        let page = layout(HEAD, &numbered(50), 0, 24, 80);
        assert_eq!(page.lines.len(), 24, "{:#?}", page.lines);
        assert!(page.lines[0].starts_with("Checked 4.1 s after your save"));
        assert!(page.lines[2].starts_with("Your `Timer::cmp` is not right yet"));
        assert_eq!(page.lines[4], "evidence 1");
        assert_eq!(page.size, 19);
        assert_eq!(
            page.lines[23],
            "-- lines 1-19 of 50; Space: next page, b: back --"
        );
        // The next page: the head again, the evidence from line 20.
        let next = layout(HEAD, &numbered(50), page.first + page.size, 24, 80);
        assert!(next.lines[0].starts_with("Checked 4.1 s"));
        assert_eq!(next.lines[4], "evidence 20");
        // Past the end: the last page, full.
        let last = layout(HEAD, &numbered(50), 1000, 24, 80);
        assert_eq!(last.first, 31);
        assert_eq!(last.lines[22], "evidence 50");
        assert_eq!(last.lines.len(), 24);
    }

    #[test]
    fn a_short_verdict_is_shown_whole_without_a_page_line() {
        let page = layout(HEAD, "\nevidence 1\nevidence 2", 3, 24, 80);
        assert_eq!(page.lines.len(), 6, "{:#?}", page.lines);
        assert_eq!(page.first, 0);
        assert_eq!(page.lines[5], "evidence 2");
        assert!(!page.lines.iter().any(|line| line.contains("Space")));
    }

    #[test]
    fn no_line_is_longer_than_the_width_so_the_terminal_never_cuts_one() {
        let columns = format!("> turn 1: {} | turn 1: wait", "x".repeat(70));
        let body = format!("{columns}\n{}", "word ".repeat(40));
        for width in [40, 80, 120] {
            let page = layout(HEAD, &body, 0, 24, width);
            for line in &page.lines {
                assert!(line.chars().count() <= width, "{width}: {line:?}");
            }
        }
        let page = layout(HEAD, &body, 0, 24, 80);
        assert!(page.lines[4].ends_with('…'), "{:?}", page.lines[4]);
        assert!(page.lines[2].ends_with("fix it and save."));
    }

    #[test]
    fn a_head_too_long_for_the_screen_gives_its_end_to_the_body() {
        let head = format!("Checking (3 s): running\n\n{}", numbered(30));
        let page = layout(&head, "the rest", 0, 24, 80);
        assert_eq!(page.lines.len(), 24);
        assert!(page.lines[0].starts_with("Checking (3 s)"));
        assert!(
            page.lines[23].starts_with("-- lines 1-"),
            "{:#?}",
            page.lines
        );
        let tiny = layout(&head, "the rest", 0, 3, 80);
        assert!(tiny.lines[0].starts_with("Checking (3 s)"));
    }
}
