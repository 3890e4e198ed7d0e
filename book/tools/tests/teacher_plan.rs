//! The teacher's plans add up, and keep adding up when a chapter changes.
//!
//! `book/src/teacher.md` states, for each chapter, how much a reader reads
//! on its core path and in full (words of prose, lines of code and output)
//! and how big its build-it track is; its plans' boxes are sums of those.
//! These tests measure the chapters again, compare within a tolerance, and
//! redo every sum. When a chapter grows, the failure prints the new row.
//!
//! The rates are the page's own, stated there: 130 words of prose a minute
//! and 12 lines of code a minute (a room reading to understand, not to
//! skim), 10 minutes for each "Try it" exercise, and for a build-it track 5
//! minutes a function plus a minute for every 2 lines of body a participant
//! writes; and a day the page plans from 9:00 to 17:30 at the latest, with
//! a teacher's introduction to every chapter, breaks and a buffer.

use std::collections::BTreeMap;

use book_tools::book::{
    AuthorsVersion, book_src, includes, normalized, read_text, step_chapters,
    step_number,
};
use book_tools::plan::{self, Parts, Plan, Row, clock_text, exercise_numbers};
use workshop::track;
use workshop_tests::workspace_root;

const WORDS_PER_MINUTE: usize = 130;
const CODE_LINES_PER_MINUTE: usize = 12;
const MINUTES_PER_EXERCISE: usize = 10;
const MINUTES_PER_FUNCTION: usize = 5;
const BODY_LINES_PER_MINUTE: usize = 2;
/// What the teacher says before a chapter the room works through.
const TEACHER_INTRO_MINUTES: usize = 5;
/// A chapter the teacher shows instead of the room working through it.
const LIVE_DEMO_MINUTES: usize = 15;
/// From a day's first row to its end, at most: 9:00 to 17:30.
const LONGEST_DAY_MINUTES: usize = 8 * 60 + 30;
/// Time kept free in each day, for set-up trouble and questions.
const LEAST_BUFFER_MINUTES: usize = 30;
/// The room's silent reading in a box, at most: the rest of the box is the
/// teacher's introduction and walk-through, running, Try it and Build it.
const MOST_READING_PERCENT: usize = 40;
const DAY_STARTS: &str = "9:00";
const DAY_ENDS_BY: &str = "17:30";

/// The sections timed by their own rates, not as reading: an exercise's
/// minutes and a track's minutes include reading them.
const PRACTICE: [&str; 2] = ["Try it", "Build it"];

/// What a depth section says under its heading.
const DEPTH_LABEL: &str = "*Depth: skip on the one-day path";

/// One `## ` section of a chapter (the text above the first is `""`).
#[derive(Debug, Default)]
struct Section {
    heading: String,
    words: usize,
    code_lines: usize,
    /// What a first reading passes over: folded text (`<details>`, the
    /// answers and long listings) and the pinned diffs, which show again
    /// code the section has just listed.
    skimmed_words: usize,
    skimmed_code_lines: usize,
}

/// A chapter's sections, measured: prose words outside code blocks, and
/// the lines of its code blocks with every include expanded.
fn sections(chapter: &str) -> Vec<Section> {
    let markdown = read_text(&book_src().join(chapter));
    // As the book shows them: a step started with `cargo workshop start`
    // keeps its size.
    let book_src = book_src().canonicalize().expect("book/src exists");
    let authors = AuthorsVersion::around(&book_src);
    let mut sections = vec![Section::default()];
    let mut in_code = false;
    let mut folded = 0_usize;
    for line in markdown.lines() {
        let section = sections.last_mut().expect("one section at least");
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            let shown = includes(chapter, line).unwrap_or_default();
            if shown.is_empty() {
                section.count_code(1, folded > 0);
            }
            for include in shown {
                let file = normalized(&include.file_from(&book_src));
                let content = authors.read_or_disk(&file).expect("an included file");
                let lines = include.part.select(&content).lines().count();
                section.count_code(lines, folded > 0 || is_diff(&include.path));
            }
        } else if let Some(heading) = line.strip_prefix("## ") {
            sections.push(Section {
                heading: heading.to_owned(),
                ..Section::default()
            });
            folded = 0;
        } else {
            folded += line.matches("<details>").count();
            section.count_words(prose_words(line), folded > 0);
            folded = folded.saturating_sub(line.matches("</details>").count());
        }
    }
    sections
}

impl Section {
    fn count_code(&mut self, lines: usize, skimmed: bool) {
        self.code_lines += lines;
        if skimmed {
            self.skimmed_code_lines += lines;
        }
    }

    fn count_words(&mut self, words: usize, skimmed: bool) {
        self.words += words;
        if skimmed {
            self.skimmed_words += words;
        }
    }
}

fn is_diff(path: &str) -> bool {
    std::path::Path::new(path)
        .extension()
        .is_some_and(|ext| ext == "diff")
}

/// Words a reader reads in a line of Markdown: no directive, no HTML tag.
fn prose_words(line: &str) -> usize {
    let mut text = String::new();
    let mut depth = 0;
    let mut rest = line;
    while let Some(open) = rest.find("{{#") {
        text.push_str(&rest[..open]);
        rest = rest[open..].split_once("}}").map_or("", |(_, after)| after);
    }
    text.push_str(rest);
    let mut words = String::new();
    for c in text.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            c if depth == 0 => words.push(c),
            _ => {}
        }
    }
    words
        .split_whitespace()
        .filter(|word| word.chars().any(char::is_alphanumeric))
        .count()
}

/// What a chapter's "Core path" note at its top says: the sections of the
/// core path, in the order it takes them, and those left for depth.
fn core_note(chapter: &str) -> Option<(Vec<String>, Vec<String>)> {
    let markdown = read_text(&book_src().join(chapter));
    let note: Vec<&str> = markdown
        .lines()
        .skip_while(|line| !line.starts_with("> **Core path**"))
        .take_while(|line| line.starts_with('>'))
        .map(|line| line.trim_start_matches('>').trim())
        .collect();
    let note = note.join(" ");
    let (core, depth) = note.split_once("**Depth**")?;
    Some((link_texts(core), link_texts(depth)))
}

/// The texts of the `[text](#id)` links in a piece of Markdown.
fn link_texts(markdown: &str) -> Vec<String> {
    markdown
        .split('[')
        .skip(1)
        .filter_map(|piece| piece.split_once("](#").map(|(text, _)| text))
        .map(|text| text.replace('`', ""))
        .collect()
}

/// A chapter as the plans count it.
#[derive(Debug, PartialEq, Eq)]
struct Size {
    core_words: usize,
    core_code: usize,
    all_words: usize,
    all_code: usize,
    exercises: usize,
    functions: usize,
    body_lines: usize,
}

impl Size {
    fn core_reading(&self) -> usize {
        reading(self.core_words, self.core_code)
    }
    fn all_reading(&self) -> usize {
        reading(self.all_words, self.all_code)
    }
    fn build_it(&self) -> usize {
        self.functions * MINUTES_PER_FUNCTION
            + self.body_lines.div_ceil(BODY_LINES_PER_MINUTE)
    }
}

fn reading(words: usize, code_lines: usize) -> usize {
    (words * CODE_LINES_PER_MINUTE + code_lines * WORDS_PER_MINUTE)
        .div_ceil(WORDS_PER_MINUTE * CODE_LINES_PER_MINUTE)
}

fn measure(chapter: &str, folder: &str) -> Size {
    let sections = sections(chapter);
    let core: Vec<String> =
        core_note(chapter).map(|(core, _)| core).unwrap_or_default();
    let is_core = |section: &&Section| {
        let heading = section.heading.replace('`', "");
        section.heading.is_empty()
            || (core.contains(&heading) && !PRACTICE.contains(&heading.as_str()))
    };
    let try_it = read_text(&book_src().join(chapter))
        .split_once("\n## Try it\n")
        .map(|(_, rest)| rest.split("\n## ").next().unwrap_or(rest).to_owned())
        .unwrap_or_default();
    let exercises = (1..=99)
        .take_while(|n| try_it.contains(&format!("\n**{n}. ")))
        .count();
    let step = workspace_root()
        .join(folder)
        .canonicalize()
        .expect("the step exists");
    // The track as the authors wrote it, so a started step measures the same.
    let authors = AuthorsVersion::around(&step);
    let mut marked = Vec::new();
    let mut body_lines = 0;
    for file in track::rust_files(&step) {
        let text = authors
            .read_or_disk(&step.join(&file))
            .expect("a step's file");
        let in_file = track::markers_in(&file, &text).expect("the step's markers");
        body_lines += in_file
            .iter()
            .map(|marked| {
                text[marked.body.clone()].lines().count().saturating_sub(2)
            })
            .sum::<usize>();
        marked.extend(in_file);
    }
    Size {
        core_words: sections
            .iter()
            .filter(is_core)
            .map(|s| s.words - s.skimmed_words)
            .sum(),
        core_code: sections
            .iter()
            .filter(is_core)
            .map(|s| s.code_lines - s.skimmed_code_lines)
            .sum(),
        all_words: sections.iter().map(|s| s.words - s.skimmed_words).sum(),
        all_code: sections
            .iter()
            .map(|s| s.code_lines - s.skimmed_code_lines)
            .sum(),
        exercises,
        functions: marked.len(),
        body_lines,
    }
}

/// A row of the page's table "The chapters, measured".
#[derive(Debug)]
struct Stated {
    size: Size,
    core_reading: usize,
    all_reading: usize,
    build_it: usize,
}

fn teacher_page() -> String {
    read_text(&book_src().join("teacher.md"))
}

/// The cells of each table row in `markdown` under the heading `heading`
/// (up to the next heading of any level), header and rule left out.
fn table_rows(markdown: &str, heading: &str) -> Vec<Vec<String>> {
    let section = markdown
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("teacher.md has no `{heading}`"))
        .1;
    let section = section.split("\n#").next().unwrap_or(section);
    section
        .lines()
        .filter(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect()
}

/// `1,122` or `7 min` as a number.
fn number(cell: &str) -> usize {
    let digits: String = cell
        .trim_end_matches(" min")
        .chars()
        .filter(|c| *c != ',')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("`{cell}` is not a number"))
}

/// The chapter file a cell links to: `[Step 1](step01-while-loop.md)`.
fn linked_chapter(cell: &str) -> Option<String> {
    let (_, rest) = cell.split_once("](")?;
    let target = rest.split(')').next()?;
    let file = target.split('#').next()?;
    step_number(file.strip_suffix(".md")?).map(|_| file.to_owned())
}

/// The headings of the page's two tables of measurements, under "The
/// chapters, measured": the reading, then the exercises and tracks.
const READING: &str = "### Reading";
const TRACKS: &str = "### Exercises and build-it tracks";
const PILOT: &str = "### Build-it times from your pilot";

/// The rows of the table under `heading`, by chapter, each of `cells`
/// cells after the chapter's.
fn rows_by_chapter(
    page: &str,
    heading: &str,
    cells: usize,
) -> BTreeMap<String, Vec<usize>> {
    let mut rows = BTreeMap::new();
    for row in table_rows(page, heading) {
        assert_eq!(
            row.len(),
            1 + cells,
            "{heading}: a row of {} cells: {row:?}",
            1 + cells
        );
        let chapter = linked_chapter(&row[0])
            .unwrap_or_else(|| panic!("{heading}: no chapter link in {row:?}"));
        let numbers = row[1..].iter().map(|cell| number(cell)).collect();
        assert!(
            rows.insert(chapter.clone(), numbers).is_none(),
            "{heading}: two rows for {chapter}"
        );
    }
    rows
}

fn stated_sizes() -> BTreeMap<String, Stated> {
    let page = teacher_page();
    let reading = rows_by_chapter(&page, READING, 6);
    let mut tracks = rows_by_chapter(&page, TRACKS, 4);
    let sizes: BTreeMap<String, Stated> = reading
        .into_iter()
        .map(|(chapter, r)| {
            let t = tracks.remove(&chapter).unwrap_or_else(|| {
                panic!("{chapter} has a row in `{READING}`, none in `{TRACKS}`")
            });
            let stated = Stated {
                size: Size {
                    core_words: r[0],
                    core_code: r[1],
                    all_words: r[3],
                    all_code: r[4],
                    exercises: t[0],
                    functions: t[1],
                    body_lines: t[2],
                },
                core_reading: r[2],
                all_reading: r[5],
                build_it: t[3],
            };
            (chapter, stated)
        })
        .collect();
    assert!(
        tracks.is_empty(),
        "rows in `{TRACKS}` with none in `{READING}`: {:?}",
        tracks.keys()
    );
    sizes
}

/// The rows a chapter's measurements would make, one for each table, to
/// paste into the page.
fn row(chapter: &str, size: &Size) -> String {
    let title = chapter
        .strip_prefix("step0")
        .and_then(|rest| rest.get(..1))
        .unwrap_or("?");
    format!(
        "{READING}: | [Step {title}]({chapter}) | {} | {} | {} min | {} | {} | {} min |\n\
         {TRACKS}: | [Step {title}]({chapter}) | {} | {} | {} | {} min |",
        size.core_words,
        size.core_code,
        size.core_reading(),
        size.all_words,
        size.all_code,
        size.all_reading(),
        size.exercises,
        size.functions,
        size.body_lines,
        size.build_it()
    )
}

/// Within 10 %, or 30 of whatever it counts, of what was measured.
fn close(stated: usize, measured: usize) -> bool {
    stated.abs_diff(measured) <= (measured / 10).max(30)
}

#[test]
fn the_measured_sizes_are_the_chapters_sizes() {
    let stated = stated_sizes();
    let mut problems = Vec::new();
    for (chapter, folder) in step_chapters() {
        let measured = measure(&chapter, &folder);
        let Some(row_stated) = stated.get(&chapter) else {
            problems.push(format!(
                "no row for {chapter}: {}",
                row(&chapter, &measured)
            ));
            continue;
        };
        let (s, m) = (&row_stated.size, &measured);
        let sizes_hold = close(s.core_words, m.core_words)
            && close(s.core_code, m.core_code)
            && close(s.all_words, m.all_words)
            && close(s.all_code, m.all_code)
            && s.exercises == m.exercises
            && s.functions == m.functions
            && close(s.body_lines, m.body_lines);
        // The minutes follow from the row's own numbers, at the page's rates.
        let sums_hold = row_stated.core_reading == s.core_reading()
            && row_stated.all_reading == s.all_reading()
            && row_stated.build_it == s.build_it();
        if !(sizes_hold && sums_hold) {
            problems.push(format!(
                "{chapter} has changed; its rows and the plans' boxes that use \
                 them should now read\n{}",
                row(&chapter, &measured)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Each chapter's note at its top names every one of its sections once,
/// as core path or as depth.
#[test]
fn every_chapter_splits_its_sections_into_core_path_and_depth() {
    let mut problems = Vec::new();
    for (chapter, _) in step_chapters() {
        let Some((core, depth)) = core_note(&chapter) else {
            problems
                .push(format!("{chapter}: no `> **Core path**` note at its top"));
            continue;
        };
        let mut named: Vec<String> = core.iter().chain(&depth).cloned().collect();
        named.sort();
        let mut headings: Vec<String> = sections(&chapter)
            .into_iter()
            .skip(1)
            .map(|section| section.heading.replace('`', ""))
            .collect();
        headings.sort();
        if named != headings {
            problems.push(format!(
                "{chapter}: the note names {named:?}, the sections are {headings:?}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The page states the rates the sums use, so a reader can redo them.
#[test]
fn the_page_states_the_rates_these_tests_use() {
    let page = teacher_page();
    let stated = [
        format!("{WORDS_PER_MINUTE} words a minute"),
        format!("{CODE_LINES_PER_MINUTE} lines a minute"),
        format!("{MINUTES_PER_EXERCISE} minutes (predict"),
        format!("{MINUTES_PER_FUNCTION} minutes a function"),
        format!("every {BODY_LINES_PER_MINUTE} lines of body"),
        format!("{TEACHER_INTRO_MINUTES} minutes of introduction"),
        format!("at least {LEAST_BUFFER_MINUTES} minutes of buffer"),
        format!("{LIVE_DEMO_MINUTES} minutes of the teacher's time"),
        format!("at most {MOST_READING_PERCENT} % of its box"),
        format!("from {DAY_STARTS}"),
        format!("by {DAY_ENDS_BY}"),
    ];
    // As a reader sees it: line breaks and list indents are spaces.
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let missing: Vec<&String> = stated
        .iter()
        .filter(|rate| !page.contains(rate.as_str()))
        .collect();
    assert!(missing.is_empty(), "teacher.md does not say {missing:?}");
}

/// The plans in `teacher.md`, computed from the chapters' minutes as the
/// book's preprocessor computes them.
fn the_plans() -> Vec<Plan> {
    plan::teacher_plans(&book_src()).unwrap_or_else(|err| panic!("{err}"))
}

/// The heading each plan's table sits under, in the order declared.
const PLANS: [&str; 2] = ["one-day", "two-day"];

/// Each day runs at most 8 h 30 from its first row to its end, with two
/// breaks, a lunch and at least 30 minutes of buffer.
#[test]
fn every_day_fits_its_hours_with_breaks_and_a_buffer() {
    let plans = the_plans();
    let names: Vec<&str> = plans.iter().map(|plan| plan.name.as_str()).collect();
    assert_eq!(names, PLANS, "teacher.md's plans");
    let problems: Vec<String> = plans.iter().flat_map(day_problems).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn day_problems(plan: &Plan) -> Vec<String> {
    let name = &plan.name;
    let mut problems = Vec::new();
    let (first, last) = match (plan.rows.first(), plan.rows.last()) {
        (Some(first), Some(last)) if last.minutes.is_none() => (first, last),
        _ => return vec![format!("{name}: no rows, or no `end` row last")],
    };
    let length = last.from - first.from;
    if length > LONGEST_DAY_MINUTES {
        problems.push(format!(
            "{name}: {} from {} to {}, longer than {}",
            duration(length),
            clock_text(first.from),
            clock_text(last.from),
            duration(LONGEST_DAY_MINUTES)
        ));
    }
    let kind = |row: &&Row| {
        row.what
            .split([' ', ':', ','])
            .next()
            .unwrap_or("")
            .to_owned()
    };
    let count =
        |wanted: &str| plan.rows.iter().filter(|row| kind(row) == wanted).count();
    let buffer: usize = plan
        .rows
        .iter()
        .filter(|row| kind(row) == "buffer")
        .filter_map(|row| row.minutes)
        .sum();
    if count("break") < 2 || count("lunch") < 1 {
        problems.push(format!("{name}: not two breaks and a lunch"));
    }
    if buffer < LEAST_BUFFER_MINUTES {
        problems.push(format!(
            "{name}: {buffer} min of buffer, less than {LEAST_BUFFER_MINUTES}"
        ));
    }
    problems
}

fn duration(minutes: usize) -> String {
    format!("{} h {:02}", minutes / 60, minutes % 60)
}

/// Every box's minutes hold what it asks of the room at the page's rates:
/// its reading, its exercises, its track; it reads only core sections,
/// builds before it reads the answer, and names every depth section as
/// skipped. A chapter shown as a live demo on the first day is worked
/// through on the second, and every chapter is in a plan.
#[test]
fn every_box_holds_its_words_lines_exercises_and_track() {
    let plans = the_plans();
    let mut problems = Vec::new();
    let (mut worked, mut demonstrated) = (Vec::new(), Vec::new());
    for plan in &plans {
        for row in &plan.rows {
            let place = format!("{}, {}", plan.name, clock_text(row.from));
            if let (Some(parts), Some(chapter)) = (&row.parts, &row.chapter) {
                worked.push(chapter.clone());
                check_minutes(&place, chapter, parts, &mut problems);
                check_sections(&place, chapter, row, parts, &mut problems);
            } else if row.what.contains("live demo") {
                if row.minutes < Some(LIVE_DEMO_MINUTES) {
                    problems.push(format!(
                        "{place}: a live demo takes {LIVE_DEMO_MINUTES} min"
                    ));
                }
                if plan.name == PLANS[0] {
                    demonstrated.extend(plan::linked_chapter(&row.what));
                }
            }
        }
    }
    for chapter in &demonstrated {
        if !worked.contains(chapter) {
            problems.push(format!(
                "{chapter} is a live demo on the first day and not worked through on the second"
            ));
        }
    }
    for (chapter, _) in step_chapters() {
        if !worked.contains(&chapter) && !demonstrated.contains(&chapter) {
            problems.push(format!("{chapter} is in no plan"));
        }
    }
    assert!(
        worked.len() >= 8,
        "only {} chapter boxes in the plans",
        worked.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The room does not spend a box reading in silence: in every box of every
/// plan, its reading is at most 40 % of the box's minutes, and the teacher
/// walks through on screen what would take it over.
#[test]
fn no_box_is_mostly_silent_reading() {
    let mut problems = Vec::new();
    for plan in &the_plans() {
        for row in &plan.rows {
            let Some(parts) = &row.parts else { continue };
            if parts.reading * 100 > MOST_READING_PERCENT * parts.total() {
                problems.push(format!(
                    "{}, {}: {} of the box's {} min are silent reading ({} %), \
                     more than {MOST_READING_PERCENT} %: have the teacher walk through \
                     a section (`The code (walk-through)`), or read less",
                    plan.name,
                    clock_text(row.from),
                    parts.reading,
                    parts.total(),
                    parts.reading_percent()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A box's declared minutes against the chapter measured at the page's
/// rates: never fewer, so a box whose reading grows must grow with it.
fn check_minutes(
    place: &str,
    chapter: &str,
    parts: &Parts,
    problems: &mut Vec<String>,
) {
    let sections = sections(chapter);
    let measured = |names: &[String], with_title: bool| {
        sections
            .iter()
            .filter(|s| {
                (with_title && s.heading.is_empty())
                    || names.contains(&s.heading.replace('`', ""))
            })
            .fold((0, 0), |(words, code), s| {
                (
                    words + s.words - s.skimmed_words,
                    code + s.code_lines - s.skimmed_code_lines,
                )
            })
    };
    // The room reads the title's text and the sections it is given; the
    // teacher's walk-through covers its sections at the same rates.
    for (who, names, with_title, declared) in [
        ("reads", &parts.read, true, parts.reading),
        ("walks through", &parts.walked, false, parts.walk_through),
    ] {
        let (words, code) = measured(names, with_title);
        let needed = reading(words, code);
        if declared < needed {
            problems.push(format!(
                "{place}: {chapter}'s box {who} {words} words and {code} lines of code, \
                 {needed} min at the page's rates; its sections declare {declared} min: \
                 raise their minutes or take less"
            ));
        }
    }
    if parts.intro < TEACHER_INTRO_MINUTES {
        problems.push(format!(
            "{place}: {} min of introduction, less than {TEACHER_INTRO_MINUTES}",
            parts.intro
        ));
    }
    let exercises = parts.exercises.len() * MINUTES_PER_EXERCISE;
    if parts.try_it < exercises {
        problems.push(format!(
            "{place}: {chapter}'s Try it declares {} min for the box's exercises {:?}, \
             less than {exercises}",
            parts.try_it,
            parts.exercises
        ));
    }
    if parts.build_it > 0 {
        let folder = chapter.strip_suffix(".md").expect("a chapter file");
        let track = measure(chapter, folder).build_it();
        if parts.build_it < track {
            problems.push(format!(
                "{place}: {chapter}'s Build it declares {} min, its track takes {track}",
                parts.build_it
            ));
        }
    }
}

/// The sections and exercises a box names, against its chapter's note.
fn check_sections(
    place: &str,
    chapter: &str,
    row: &Row,
    parts: &Parts,
    problems: &mut Vec<String>,
) {
    let (covers, skips) = row.what.split_once("skips").unwrap_or((&row.what, ""));
    let Some((core, depth)) = core_note(chapter) else {
        problems.push(format!("{place}: {chapter} has no core note"));
        return;
    };
    for section in &depth {
        if covers.contains(section.as_str()) {
            problems
                .push(format!("{place}: assigns \"{section}\", a depth section"));
        }
        if !skips.contains(section.as_str()) {
            problems
                .push(format!("{place}: does not name \"{section}\" as skipped"));
        }
    }
    if parts.build_it > 0 && !core.iter().any(|section| section == "Build it") {
        problems.push(format!(
            "{place}: builds it, but {chapter}'s Build it is depth"
        ));
    }
    let position = |section: &str| covers.find(section);
    if parts.build_it > 0 && position("Build it") > position("The code") {
        problems.push(format!(
            "{place}: reads The code, the answer, before Build it"
        ));
    }
    let core_exercises = core_exercises(chapter);
    for exercise in &parts.exercises {
        if !core_exercises.contains(exercise) {
            problems.push(format!(
                "{place}: assigns Try it {exercise}, which {chapter} calls depth"
            ));
        }
    }
}

/// The page's source holds each plan once, as its declaration, and no
/// table of times written by hand; the book shows each as a table.
#[test]
fn the_plans_are_declared_once_and_expanded_into_tables() {
    let page = teacher_page();
    for heading in ["## One day", "## A second day"] {
        let section = page
            .split_once(&format!("\n{heading}\n"))
            .map_or("", |(_, rest)| rest.split("\n## ").next().unwrap_or(rest));
        assert!(
            section.contains(plan::PLAN_OPENING),
            "teacher.md: `{heading}` declares no plan"
        );
        assert!(
            !section.contains("| from |"),
            "teacher.md: `{heading}` holds a plan table written by hand"
        );
    }
    let expanded = plan::expand(&page, &the_plans());
    assert!(!expanded.contains(plan::PLAN_OPENING));
    assert_eq!(expanded.matches("| from | box | what |").count(), 2);
}

/// The first line of prose under each `## ` heading of a chapter.
fn labels(chapter: &str) -> Vec<(String, String)> {
    let markdown = read_text(&book_src().join(chapter));
    let mut labels = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if let Some(heading) = line.strip_prefix("## ") {
            // The minutes line is for the plans, not the reader.
            let first = lines.by_ref().find(|line| {
                !line.trim().is_empty() && plan::minutes_line(line).is_none()
            });
            labels.push((heading.replace('`', ""), first.unwrap_or("").to_owned()));
        }
    }
    labels
}

/// The exercises a chapter's "Try it" calls core, in its label:
/// `*Core: exercise 2, …`.
fn core_exercises(chapter: &str) -> Vec<usize> {
    labels(chapter)
        .into_iter()
        .find(|(heading, _)| heading == "Try it")
        .and_then(|(_, label)| {
            label.strip_prefix("*Core: exercise ").map(exercise_numbers)
        })
        .unwrap_or_default()
}

/// A reader who opens a chapter in the middle knows where they are: every
/// depth section says so under its heading, no core one does, and "Try it"
/// names the exercises that are core.
#[test]
fn every_heading_of_a_step_chapter_is_core_or_labelled_depth() {
    let mut problems = Vec::new();
    for (chapter, _) in step_chapters() {
        let Some((_, depth)) = core_note(&chapter) else {
            continue; // the note's own test says so
        };
        for (heading, label) in labels(&chapter) {
            let labelled = label.starts_with(DEPTH_LABEL);
            if depth.contains(&heading) && !labelled {
                problems.push(format!(
                    "{chapter}, \"{heading}\": depth, but its first line is not `{DEPTH_LABEL}…`"
                ));
            }
            if !depth.contains(&heading) && labelled {
                problems.push(format!(
                    "{chapter}, \"{heading}\": core, but labelled depth"
                ));
            }
        }
        if !depth.iter().any(|section| section == "Try it")
            && core_exercises(&chapter).is_empty()
        {
            problems.push(format!(
                "{chapter}: \"Try it\" is core, and its label does not say which exercise"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The build-it minutes are estimates from each track's size, and the page
/// says so; its pilot table has a row for each track, with the estimate the
/// plans use, for a teacher to set real times beside.
#[test]
fn the_pilot_table_holds_each_tracks_estimate() {
    let page = teacher_page();
    assert!(
        page.replace('\n', " ")
            .contains("The build-it times are estimates, not measurements."),
        "teacher.md no longer says plainly that the build-it times are estimates"
    );
    let stated = stated_sizes();
    let by_step: BTreeMap<u32, &Stated> = stated
        .iter()
        .map(|(chapter, size)| {
            let stem = chapter.strip_suffix(".md").expect("a chapter file");
            (step_number(stem).expect("a step chapter"), size)
        })
        .collect();
    let mut problems = Vec::new();
    let mut tracks = Vec::new();
    for row in table_rows(&page, PILOT) {
        let [track, estimated, median, slowest, _when] = row.as_slice() else {
            problems.push(format!("{PILOT}: a row of 5 cells: {row:?}"));
            continue;
        };
        let step: u32 = number(track.trim_matches('`').trim_start_matches("start "))
            .try_into()
            .expect("a small step number");
        tracks.push(step);
        match by_step.get(&step) {
            Some(size) if number(estimated) == size.build_it => {}
            Some(size) => problems.push(format!(
                "{PILOT}: {track} is estimated at {} min in `{TRACKS}`, not {estimated}",
                size.build_it
            )),
            None => problems.push(format!("{PILOT}: no chapter for {track}")),
        }
        for time in [median, slowest] {
            if time != "not yet timed" && !time.ends_with(" min") {
                problems.push(format!(
                    "{PILOT}: {track}: `{time}` is neither `not yet timed` nor minutes"
                ));
            }
        }
    }
    let steps: Vec<u32> = by_step.keys().copied().collect();
    if tracks != steps {
        problems.push(format!(
            "{PILOT}: rows for tracks {tracks:?}, not {steps:?}"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The fenced blocks of a language (`sh`, `powershell`) in a piece of
/// Markdown, each as its lines.
fn code_blocks(markdown: &str, language: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        let fence = line.trim_start();
        match current.as_mut() {
            Some(block) if fence.starts_with("```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line.trim_start());
                block.push('\n');
            }
            None if fence == format!("```{language}") => {
                current = Some(String::new());
            }
            None => {}
        }
    }
    blocks
}

/// Plan B is used by someone with no network and no one to ask: the
/// teacher's one command writes a folder that builds as it is, so the
/// participant pastes no lines into Cargo's configuration (their own
/// `~/.cargo`, shared by their other projects) and needs no shell of a
/// given kind; and the page says where the built book is.
#[test]
fn plan_b_is_one_command_and_a_folder_that_builds_as_it_is() {
    let page = teacher_page();
    let plan_b = page
        .split_once("### Plan B")
        .and_then(|(_, rest)| rest.split("\n### ").next())
        .expect("teacher.md has a Plan B section");
    let mut problems = Vec::new();
    let blocks = code_blocks(plan_b, "sh");
    for wanted in ["cargo workshop pack ", "cargo run -p step01"] {
        if !blocks.iter().any(|block| block.contains(wanted)) {
            problems.push(format!("Plan B: no `{wanted}` line"));
        }
    }
    if let Some(block) = blocks
        .iter()
        .chain(&code_blocks(plan_b, "powershell"))
        .find(|block| block.contains("[source") || block.contains(".cargo"))
    {
        problems.push(format!(
            "Plan B: lines that write Cargo's configuration by hand:\n{block}"
        ));
    }
    if !plan_b.contains("book-html/index.html") {
        problems.push("Plan B: does not say where the built book is".to_owned());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
