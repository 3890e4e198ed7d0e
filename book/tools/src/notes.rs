//! The speaker notes, and who gets them.
//!
//! A chapter keeps its notes beside the text they teach, as a folded block
//! that reads well on GitHub too:
//!
//! ```text
//! <details>
//! <summary>Speaker notes</summary>
//!
//! - **Ask the room:** … Expect: …
//!
//! </details>
//! ```
//!
//! The notes give the room's answers, so the participants' book leaves them
//! out altogether: a folded block is one click from the answer on the
//! projector and in every participant's copy, and text hidden by a style
//! would still be printed by a browser without it and found by the book's
//! search. The teacher's build (`BOOK_NOTES=teacher`) keeps every note, open.

/// The line that makes a `<details>` block speaker notes.
pub const SUMMARY: &str = "<summary>Speaker notes</summary>";

/// The environment variable that asks for the teacher's build.
pub const SWITCH: &str = "BOOK_NOTES";

/// Whom a build of the book is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The room: no speaker notes at all.
    Participants,
    /// The teacher: every speaker note, open.
    Teacher,
}

impl Reader {
    /// The reader `BOOK_NOTES` asks for: unset or empty, the participants;
    /// `teacher`, the teacher. Anything else is refused rather than read as
    /// the participants', so a misspelt switch is not taken for the
    /// teacher's book.
    pub fn from_switch(value: Option<&str>) -> Result<Reader, String> {
        match value {
            None | Some("") => Ok(Reader::Participants),
            Some("teacher") => Ok(Reader::Teacher),
            Some(other) => Err(format!(
                "{SWITCH} is `{other}`: {SWITCH}=teacher builds the teacher's book, \
                 with the speaker notes, and without {SWITCH} the participants' book \
                 is built."
            )),
        }
    }
}

/// `markdown` as `reader` gets it: each speaker notes block left out for
/// the participants, or opened for the teacher. Fails on a block that is
/// never closed, and on a notes summary this function would not recognise,
/// which would otherwise reach the participants.
pub fn for_reader(
    chapter: &str,
    markdown: &str,
    reader: Reader,
) -> Result<String, String> {
    let lines: Vec<&str> = markdown.split('\n').collect();
    let mut kept: Vec<String> = Vec::with_capacity(lines.len());
    let mut in_code = false;
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if is_fence(line) {
            in_code = !in_code;
        }
        if in_code || !opens_notes(&lines[at..]) {
            if !in_code && line.contains(SUMMARY) {
                return Err(format!(
                    "{chapter}:{}: `{SUMMARY}` must come on the line after a line \
                     `<details>`, or the participants' book would show the notes.",
                    at + 1
                ));
            }
            kept.push(line.to_owned());
            at += 1;
            continue;
        }
        let end = at + block_length(&lines[at..]).ok_or_else(|| {
            format!(
                "{chapter}:{}: these speaker notes are never closed with `</details>`.",
                at + 1
            )
        })?;
        if reader == Reader::Teacher {
            kept.push(line.replacen("<details>", "<details open>", 1));
            kept.extend(lines[at + 1..end].iter().map(|&line| line.to_owned()));
        }
        at = end;
    }
    Ok(kept.join("\n"))
}

/// `markdown` with, above each listing, the names its `{{#include}}` lines
/// give it (`lib.rs:event_loop`): the names the teacher's walk-through
/// routes use, which the rendered book would otherwise never show. For the
/// teacher's build.
pub fn name_listings(markdown: &str) -> String {
    let lines: Vec<&str> = markdown.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut in_code = false;
    for (at, line) in lines.iter().enumerate() {
        if is_fence(line) && !in_code {
            let names: Vec<String> = lines[at + 1..]
                .iter()
                .take_while(|inside| !is_fence(inside))
                .filter_map(|inside| listing_name(inside))
                .map(|name| format!("`{name}`"))
                .collect();
            if !names.is_empty() {
                if out.last().is_some_and(|last| !last.trim().is_empty()) {
                    out.push(String::new());
                }
                out.push(format!("*Listing {}:*", names.join(", ")));
                out.push(String::new());
            }
        }
        if is_fence(line) {
            in_code = !in_code;
        }
        out.push((*line).to_owned());
    }
    out.join("\n")
}

/// `lib.rs:event_loop` of `{{#include ../../step03-sleep/src/lib.rs:event_loop}}`:
/// the file below the step's `src/`, and the part.
fn listing_name(line: &str) -> Option<&str> {
    let inner = line
        .trim()
        .strip_prefix("{{#include ")?
        .strip_suffix("}}")?;
    let (_, below_src) = inner.split_once("/src/")?;
    below_src.contains(':').then_some(below_src)
}

/// Whether `lines` start with a speaker notes block: a line `<details>` and
/// the summary on the next.
fn opens_notes(lines: &[&str]) -> bool {
    match lines {
        [details, summary, ..] => {
            details.trim() == "<details>" && summary.trim() == SUMMARY
        }
        _ => false,
    }
}

/// How many lines the `<details>` block that `lines` start with takes, up to
/// and with the `</details>` that closes it (blocks inside it counted), if
/// one does.
fn block_length(lines: &[&str]) -> Option<usize> {
    let mut depth = 0;
    for (index, line) in lines.iter().enumerate() {
        depth += line.matches("<details").count();
        depth -= line.matches("</details>").count().min(depth);
        if depth == 0 {
            return Some(index + 1);
        }
    }
    None
}

/// A line that opens or closes a fenced code block.
fn is_fence(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("```") || line.starts_with("~~~")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_teachers_listings_are_named_as_the_routes_name_them() {
        let page = "Text:\n```rust,ignore\n{{#include ../../step03-sleep/src/lib.rs:event_loop}}\n\
                    {{#include ../../step03-sleep/src/apps/echo.rs:serve}}\n```\n\n\
                    ```text\n{{#include ../../tests/tests/snapshots/step03.snap:4:}}\n```";
        let named = name_listings(page);
        assert!(
            named.contains("Text:\n\n*Listing `lib.rs:event_loop`, `apps/echo.rs:serve`:*\n\n```rust"),
            "{named}"
        );
        assert_eq!(
            named.matches("*Listing").count(),
            1,
            "output is no listing: {named}"
        );
    }

    const PAGE: &str = "Text.\n\n<details>\n<summary>Speaker notes</summary>\n\n\
                        - Expect: yes.\n\n</details>\n\n<details>\n\
                        <summary>Answer</summary>\n\nNo.\n\n</details>\n";

    #[test]
    fn the_participants_get_the_page_without_its_notes() {
        let page = for_reader("a.md", PAGE, Reader::Participants).unwrap();
        assert_eq!(
            page,
            "Text.\n\n\n<details>\n<summary>Answer</summary>\n\nNo.\n\n</details>\n"
        );
    }

    #[test]
    fn the_teacher_gets_the_notes_open() {
        let page = for_reader("a.md", PAGE, Reader::Teacher).unwrap();
        assert_eq!(page, PAGE.replacen("<details>", "<details open>", 1));
    }

    #[test]
    fn a_block_inside_the_notes_ends_with_them() {
        let page = "<details>\n<summary>Speaker notes</summary>\n<details>\n\
                    <summary>More</summary>\nExpect: yes.\n</details>\n\
                    Expect: no.\n</details>\nAfter.";
        let page = for_reader("a.md", page, Reader::Participants).unwrap();
        assert_eq!(page, "After.");
    }

    #[test]
    fn notes_shown_as_code_stay_code() {
        let page =
            "```md\n<details>\n<summary>Speaker notes</summary>\n</details>\n```";
        assert_eq!(
            for_reader("a.md", page, Reader::Participants).unwrap(),
            page
        );
    }

    #[test]
    fn notes_never_closed_are_refused() {
        let page = "<details>\n<summary>Speaker notes</summary>\n\nExpect: yes.\n";
        let said = for_reader("a.md", page, Reader::Participants).unwrap_err();
        assert!(said.starts_with("a.md:1: "), "{said}");
    }

    #[test]
    fn a_summary_it_cannot_place_is_refused() {
        let page = "<details class=\"notes\">\n<summary>Speaker notes</summary>\n</details>";
        let said = for_reader("a.md", page, Reader::Participants).unwrap_err();
        assert!(said.starts_with("a.md:2: "), "{said}");
    }

    #[test]
    fn the_switch_is_teacher_or_nothing() {
        assert_eq!(Reader::from_switch(None), Ok(Reader::Participants));
        assert_eq!(Reader::from_switch(Some("")), Ok(Reader::Participants));
        assert_eq!(Reader::from_switch(Some("teacher")), Ok(Reader::Teacher));
        assert!(Reader::from_switch(Some("Teacher")).is_err());
    }
}
