//! The teacher's plans, computed from the minutes the chapters declare.
//!
//! A chapter states how long each of its sections takes where the section
//! is written, on the first line under its heading: `<!-- minutes: N -->`
//! (`<!-- minutes: N per exercise -->` under "Try it"); the line under the
//! chapter's `# ` title times the text above its first `## `. A plan is
//! declared once, in `book/src/teacher.md`, as an HTML comment:
//!
//! ```text
//! <!-- plan: one-day, from 9:00, intro 5
//! 20 | welcome: …
//! box | [Step 1](step01-while-loop.md): The idea, The code, Run it; Try it 1 (…); skips …
//! 15 | break
//! -->
//! ```
//!
//! A `box` row takes, from its chapter, every `## ` section its text names
//! before `skips`, the exercises it names after `Try it`, and the title's
//! text; its minutes are the intro's plus theirs. A section named with
//! `(walk-through)` after it, up to the next `,` or `;` (`The code
//! (walk-through)`), is the teacher's walk-through on screen, from the
//! section's speaker notes, instead of the room's silent reading: the same
//! minutes, counted apart, so that a plan can say how much of a box the
//! room spends reading. Every box also pays for its speaker notes: each
//! "Ask the room" of a section it covers takes `ASK_MINUTES`, each "Show"
//! `SHOW_MINUTES`, counted from the notes themselves. The book's preprocessor
//! (`src/bin/book-code.rs`) turns each plan into its table, times of day
//! computed, and `tests/teacher_plan.rs` checks the same rows against the
//! day's limits and the chapters' sizes. Being one computation, the table
//! a teacher reads and the plan the test checks cannot drift apart.

use std::path::Path;

use crate::workspace::read_text;

mod chapter;
mod route;

pub use chapter::{ChapterMinutes, chapter_minutes, minutes_line};
pub use route::{Route, Stop, routes};

/// What follows a section a box names when the teacher walks through it.
pub const WALK_THROUGH: &str = "(walk-through)";

/// What an "Ask the room" item of a section's speaker notes takes: the
/// question, the room's answers, the teacher's.
pub const ASK_MINUTES: usize = 2;

/// What a "Show" item takes: a command run or a place pointed at.
pub const SHOW_MINUTES: usize = 1;

/// What follows The code in a box that walks through it as the answer to
/// the room's build (the build may be in the box before, across a break).
pub const AS_THE_ANSWER: &str = "as the answer";

/// The start of a plan's declaration in `teacher.md`.
pub const PLAN_OPENING: &str = "<!-- plan: ";

/// What follows a section a box names when the teacher takes its route
/// (`teacher.md`'s table for the chapter, after a `ROUTE_OPENING` line)
/// rather than the whole section: the route's minutes, not the section's.
pub const ROUTED: &str = "(walk-through, route)";

/// The line before a route's table in `teacher.md`: the chapter follows.
pub const ROUTE_OPENING: &str = "<!-- route: ";

/// What a chapter's box takes, in minutes, and the sections it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    pub intro: usize,
    /// The teacher's walk-through of the sections in `walked`.
    pub walk_through: usize,
    /// The room's silent reading: the title's text and the sections in
    /// `read`.
    pub reading: usize,
    pub try_it: usize,
    pub build_it: usize,
    /// The speaker notes' "Ask the room" and "Show" items of the sections
    /// the box covers.
    pub notes: usize,
    /// Of `try_it`, the exercises that change code.
    pub try_it_code: usize,
    /// Of `walk_through`, what comes after Build it, as its answer: the
    /// review of the room's solution on screen.
    pub review: usize,
    /// The `## ` sections the room reads (not "Try it" or "Build it").
    pub read: Vec<String>,
    /// The `## ` sections the teacher walks through instead.
    pub walked: Vec<String>,
    /// Of `walked`, those taken by their route (`ROUTED`), whose minutes
    /// are the route's.
    pub routed: Vec<String>,
    pub exercises: Vec<usize>,
    /// Minutes from the box's start to the end of Build it, if it builds.
    pub built_after: Option<usize>,
}

impl Parts {
    pub fn total(&self) -> usize {
        self.intro
            + self.walk_through
            + self.reading
            + self.notes
            + self.try_it
            + self.build_it
    }

    /// The room's hands on the code: Try its that change code, Build it,
    /// and the review of what was built.
    pub fn hands_on(&self) -> usize {
        self.try_it_code + self.build_it + self.review
    }

    /// The room's silent reading, in percent of the box, rounded up.
    pub fn reading_percent(&self) -> usize {
        (self.reading * 100).div_ceil(self.total().max(1))
    }
}

/// One row of a plan, its time of day computed.
#[derive(Debug, Clone)]
pub struct Row {
    pub from: usize,
    /// `None` for the day's end.
    pub minutes: Option<usize>,
    /// A chapter's box: where its minutes come from.
    pub parts: Option<Parts>,
    /// The chapter file a box works through.
    pub chapter: Option<String>,
    pub what: String,
}

/// A plan as declared: its name and rows.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub rows: Vec<Row>,
}

/// How much of a plan's boxes the room spends with its hands on the code
/// (`Parts::hands_on`), as against the day's teaching minutes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandsOn {
    pub minutes: usize,
    /// The day's teaching minutes: every row but the breaks and lunch
    /// (the welcome, the demos, the buffer and the close count).
    pub of: usize,
    /// Hands-on minutes after the row that says lunch.
    pub after_lunch: usize,
}

impl HandsOn {
    /// In percent of the day's teaching minutes, to the nearest.
    pub fn percent(&self) -> usize {
        (self.minutes * 100 + self.of / 2) / self.of.max(1)
    }
}

impl Plan {
    pub fn hands_on(&self) -> HandsOn {
        let mut share = HandsOn {
            minutes: 0,
            of: 0,
            after_lunch: 0,
        };
        let mut after_lunch = false;
        for row in &self.rows {
            let pause = ["break", "lunch"]
                .iter()
                .any(|pause| row.parts.is_none() && row.what.starts_with(pause));
            after_lunch |= pause && row.what.starts_with("lunch");
            if !pause {
                share.of += row.minutes.unwrap_or_default();
            }
            let Some(parts) = &row.parts else { continue };
            let hands_on = parts.hands_on();
            share.minutes += hands_on;
            if after_lunch {
                share.after_lunch += hands_on;
            }
        }
        share
    }
}

/// Every plan declared in `teacher.md`'s Markdown, computed from the
/// chapters in `book_src`.
pub fn plans(page: &str, book_src: &Path) -> Result<Vec<Plan>, String> {
    let routes = routes(page)?;
    declarations(page)
        .into_iter()
        .map(|(header, body)| plan(header, body, book_src, &routes))
        .collect()
}

/// The header line and the row lines of each plan comment in a page.
pub fn declarations(page: &str) -> Vec<(&str, Vec<&str>)> {
    let mut found = Vec::new();
    let mut rest = page;
    while let Some(open) = rest.find(PLAN_OPENING) {
        let after = &rest[open + PLAN_OPENING.len()..];
        let body = after.split("-->").next().unwrap_or(after);
        let mut lines = body.lines();
        let header = lines.next().unwrap_or("");
        found.push((header, lines.filter(|l| !l.trim().is_empty()).collect()));
        rest = &after[body.len()..];
    }
    found
}

fn plan(
    header: &str,
    body: Vec<&str>,
    book_src: &Path,
    routes: &[Route],
) -> Result<Plan, String> {
    let field = |name: &str| {
        header
            .split(", ")
            .find_map(|part| part.strip_prefix(name))
            .map(str::trim)
            .ok_or_else(|| format!("plan `{header}`: no `{name}`"))
    };
    let name = header.split(',').next().unwrap_or("").trim().to_owned();
    let mut from = clock(field("from ")?)?;
    let intro: usize = field("intro ")?
        .parse()
        .map_err(|_| format!("plan `{name}`: `intro` is not minutes"))?;
    let mut rows = Vec::new();
    for line in body {
        let row = row(line.trim(), from, intro, (book_src, routes))
            .map_err(|err| format!("plan `{name}`, `{line}`: {err}"))?;
        from += row.minutes.unwrap_or(0);
        rows.push(row);
    }
    Ok(Plan { name, rows })
}

fn row(
    line: &str,
    from: usize,
    intro: usize,
    (book_src, routes): (&Path, &[Route]),
) -> Result<Row, String> {
    let mut row = Row {
        from,
        minutes: None,
        parts: None,
        chapter: None,
        what: String::new(),
    };
    if line == "end" {
        return Ok(row);
    }
    let (kind, what) = line.split_once(" | ").ok_or("not `minutes | what`")?;
    what.clone_into(&mut row.what);
    if kind == "box" {
        let chapter = linked_chapter(what).ok_or("a box with no chapter link")?;
        let markdown = read_text(&book_src.join(&chapter));
        let route = routes.iter().find(|route| route.chapter == chapter);
        let parts = box_parts(what, &chapter_minutes(&markdown), intro, route)
            .map_err(|err| format!("{chapter}: {err}"))?;
        row.minutes = Some(parts.total());
        row.parts = Some(parts);
        row.chapter = Some(chapter);
    } else {
        row.minutes = Some(kind.parse().map_err(|_| "not minutes")?);
    }
    Ok(row)
}

/// What a box takes from its chapter, as its text names it.
pub fn box_parts(
    what: &str,
    chapter: &ChapterMinutes,
    intro: usize,
    route: Option<&Route>,
) -> Result<Parts, String> {
    let covers = what.split_once("skips").map_or(what, |(covers, _)| covers);
    let declared = |heading: &str| -> Result<usize, String> {
        chapter
            .sections
            .iter()
            .find(|(name, _)| name == heading)
            .and_then(|(_, minutes)| *minutes)
            .ok_or_else(|| format!("\"{heading}\" declares no minutes"))
    };
    let title = chapter.title.ok_or("its title declares no minutes")?;
    let mut parts = Parts {
        intro,
        walk_through: 0,
        reading: title,
        try_it: 0,
        build_it: 0,
        notes: chapter.notes_of(""),
        try_it_code: 0,
        review: 0,
        read: Vec::new(),
        walked: Vec::new(),
        routed: Vec::new(),
        exercises: covers
            .split_once("Try it ")
            .map(|(_, list)| exercise_numbers(list))
            .unwrap_or_default(),
        built_after: None,
    };
    let build_at = covers.find("Build it");
    // The title's text and its notes, then each section's before the build
    // ends, Build it's own notes included: when the catch-up comes.
    let mut before_build = title + parts.notes;
    for (heading, _) in &chapter.sections {
        let Some(position) = covers.find(heading.as_str()) else {
            continue;
        };
        let notes = chapter.notes_of(heading);
        parts.notes += notes;
        let after_build = build_at.is_some_and(|at| position > at);
        if build_at.is_some_and(|at| position <= at) {
            before_build += notes;
        }
        match heading.as_str() {
            "Try it" => {
                let each = declared(heading)?;
                parts.try_it = each * parts.exercises.len();
                parts.try_it_code = each
                    * parts
                        .exercises
                        .iter()
                        .filter(|n| chapter.code_exercises.contains(n))
                        .count();
            }
            "Build it" => parts.build_it = declared(heading)?,
            _ => {
                let mut minutes = declared(heading)?;
                let clause = clause(&covers[position..]);
                if clause.contains(ROUTED) {
                    let route = route.ok_or_else(|| {
                        format!("\"{heading}\" takes a route, and teacher.md has none for it")
                    })?;
                    minutes = route.minutes();
                    parts.routed.push(heading.clone());
                }
                if clause.contains(WALK_THROUGH) || clause.contains(ROUTED) {
                    parts.walk_through += minutes;
                    parts.walked.push(heading.clone());
                    if after_build || clause.contains(AS_THE_ANSWER) {
                        parts.review += minutes;
                    }
                } else {
                    parts.reading += minutes;
                    parts.read.push(heading.clone());
                }
                if build_at.is_some_and(|at| position < at) {
                    before_build += minutes;
                }
            }
        }
    }
    if build_at.is_some() {
        parts.built_after = Some(intro + before_build + parts.build_it);
    }
    Ok(parts)
}

/// The text up to the first `,` or `;` outside parentheses: a section's
/// clause in a box, `The code (walk-through, route)` whole.
fn clause(text: &str) -> &str {
    let mut depth = 0_usize;
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' | ';' if depth == 0 => return &text[..at],
            _ => {}
        }
    }
    text
}

/// The numbers `1, 3`, `1 and 3` or `1-4` name, up to the first word
/// that is none of these.
pub fn exercise_numbers(list: &str) -> Vec<usize> {
    let mut numbers = Vec::new();
    for word in list.split_whitespace() {
        let word = word.trim_end_matches([',', ';']);
        if word == "and" {
            continue;
        }
        if let Some((a, b)) = word.split_once('-') {
            if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                numbers.extend(a..=b);
                continue;
            }
        }
        match word.parse::<usize>() {
            Ok(number) => numbers.push(number),
            Err(_) => break,
        }
    }
    numbers
}

/// The step chapter a text links to first: `[Step 1](step01-while-loop.md)`.
pub fn linked_chapter(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("](step")?;
    let file = rest.split([')', '#']).next()?;
    Some(format!("step{file}"))
}

/// `9:50` as minutes after midnight.
pub fn clock(text: &str) -> Result<usize, String> {
    let (hours, minutes) = text.split_once(':').ok_or("a time as h:mm")?;
    let hours: usize = hours.parse().map_err(|_| format!("`{text}`: hours"))?;
    let minutes: usize =
        minutes.parse().map_err(|_| format!("`{text}`: minutes"))?;
    Ok(hours * 60 + minutes)
}

pub fn clock_text(minutes: usize) -> String {
    format!("{}:{:02}", minutes / 60, minutes % 60)
}

/// What the line under a plan's table counts as hands-on.
pub const HANDS_ON: &str =
    "Hands-on (Try its that change code, Build it, and its review on screen)";

/// A plan as the teacher's page shows it: a table, one row a box.
pub fn table(plan: &Plan) -> String {
    let rows = plan.rows.iter().map(|row| {
        let from = clock_text(row.from);
        let (boxed, what) = match (&row.minutes, &row.parts) {
            (None, _) => (String::new(), "end".to_owned()),
            (Some(minutes), None) => (format!("{minutes} min"), row.what.clone()),
            (Some(_), Some(parts)) => (breakdown(parts), box_text(row, parts)),
        };
        format!("| {from} | {boxed} | {what} |\n")
    });
    let head = "| from | box | what |\n| --- | --- | --- |\n";
    let hands_on = plan.hands_on();
    let share = format!(
        "\n{HANDS_ON}: {} of the day's {} teaching min \
         ({} %; breaks and lunch aside), {} min of it after lunch.\n",
        hands_on.minutes,
        hands_on.of,
        hands_on.percent(),
        hands_on.after_lunch
    );
    std::iter::once(head.to_owned())
        .chain(rows)
        .chain(std::iter::once(share))
        .collect()
}

fn breakdown(parts: &Parts) -> String {
    let review = match parts.review {
        0 => String::new(),
        minutes => format!(" ({minutes} of it the review)"),
    };
    format!(
        "{} min = {} intro + {} walk-through{review} + {} reading ({} %) + {} asked and \
         shown + {} Try it + {} build it; hands-on {}",
        parts.total(),
        parts.intro,
        parts.walk_through,
        parts.reading,
        parts.reading_percent(),
        parts.notes,
        parts.try_it,
        parts.build_it,
        parts.hands_on()
    )
}

/// A box's text and, when it builds, the catch-up move at the time its
/// Build it ends: whoever is not done takes the authors' code, so that the
/// room runs the same program in Run it.
fn box_text(row: &Row, parts: &Parts) -> String {
    let step = row
        .chapter
        .as_deref()
        .and_then(|chapter| chapter.get(4..6))
        .and_then(|digits| digits.parse::<u32>().ok());
    match (parts.built_after, step) {
        (Some(after), Some(step)) => format!(
            "{}. **At {}**, Build it's end: whoever's `cargo workshop check {step}` \
             still fails runs `cargo workshop reset {step} --force`, the authors' \
             code (after `cargo workshop diff {step} > mine.diff` to keep their \
             own), so Run it works for everyone",
            row.what.trim_end_matches('.'),
            clock_text(row.from + after)
        ),
        _ => row.what.clone(),
    }
}

/// `teacher.md`'s Markdown with each plan comment replaced by its table.
pub fn expand(page: &str, plans: &[Plan]) -> String {
    let mut out = String::new();
    let mut rest = page;
    let mut plans = plans.iter();
    while let Some(open) = rest.find(PLAN_OPENING) {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        let close = after.find("-->").map_or(after.len(), |close| close + 3);
        if let Some(plan) = plans.next() {
            out.push_str(table(plan).trim_end());
        }
        rest = &after[close..];
    }
    out.push_str(rest);
    out
}

/// Reads `teacher.md` from `book_src` and returns its plans.
pub fn teacher_plans(book_src: &Path) -> Result<Vec<Plan>, String> {
    plans(&read_text(&book_src.join("teacher.md")), book_src)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAPTER: &str = "# Step\n\n<!-- minutes: 1 -->\n\n\
        ## The idea\n\n<!-- minutes: 4 -->\n\n<details>\n<summary>Speaker notes</summary>\n\n\
        - **Show:** the demo.\n- **Ask the room:** why?\n\n</details>\n\n\
        ## The code\n\n<!-- minutes: 8 -->\n\n\
        ## Try it\n\n<!-- minutes: 10 per exercise -->\n\n\
        **1. Edit.** In `step/src/lib.rs`, change a line.\n\n\
        **2. Watch.** Run the server and talk to it.\n\n\
        ## Build it\n\n<!-- minutes: 13 -->\n";

    #[test]
    fn a_box_pays_for_its_notes_and_counts_the_hands_on_work() {
        let what = "[Step](step.md): The idea; then Build it; then The code as the \
                    answer (walk-through); Try it 1 and 2";
        let parts = box_parts(what, &chapter_minutes(CHAPTER), 5, None).unwrap();
        assert_eq!(parts.notes, ASK_MINUTES + SHOW_MINUTES);
        assert_eq!(parts.total(), 5 + 1 + 4 + 3 + 8 + 20 + 13);
        // The catch-up comes once the notes asked before the build are.
        assert_eq!(parts.built_after, Some(5 + 1 + 4 + 3 + 13));
        // Exercise 2 changes no code; The code as the answer is the review.
        assert_eq!((parts.try_it_code, parts.review), (10, 8));
        assert_eq!(parts.hands_on(), 10 + 13 + 8);
    }
}
