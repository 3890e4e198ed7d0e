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
const LIVE_DEMO_MINUTES: usize = 10;
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

#[path = "teacher_plan/page.rs"]
mod page;
#[path = "teacher_plan/plans.rs"]
mod plans;

/// The page's counts of the whole book: its words of prose (the chapters'
/// text, folded answers and notes aside, this page and the handout aside)
/// within a twentieth, and the core paths' minutes, the sum of the reading
/// table's column, exactly.
#[test]
fn the_pages_counts_of_the_whole_book_are_the_books() {
    let page = read_text(&book_src().join("teacher.md"));
    let number_before = |after: &str| -> usize {
        let at = page.find(after).unwrap_or_else(|| panic!("no `{after}`"));
        let word = page[..at].split_whitespace().last().unwrap_or_default();
        word.replace(',', "")
            .parse()
            .unwrap_or_else(|_| panic!("`{word}{after}` is not a number"))
    };
    let mut words = 0;
    for entry in std::fs::read_dir(book_src()).expect("book/src") {
        let name = entry
            .expect("an entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        let aside = ["teacher.md", "SUMMARY.md", "handout.md"];
        let markdown = std::path::Path::new(&name)
            .extension()
            .is_some_and(|ext| ext == "md");
        if markdown && !aside.contains(&name.as_str()) {
            words += sections(&name)
                .iter()
                .map(|s| s.words - s.skimmed_words)
                .sum::<usize>();
        }
    }
    let said = number_before(" words of prose");
    assert!(
        said.abs_diff(words) * 20 <= words,
        "teacher.md says about {said} words of prose; the book has {words}"
    );
    let stated = stated_sizes();
    let core_minutes: usize = step_chapters()
        .iter()
        .filter_map(|(chapter, _)| stated.get(chapter))
        .map(|row| row.core_reading)
        .sum();
    assert_eq!(
        number_before(" minutes, nearly"),
        core_minutes,
        "teacher.md's sum of the core reading column"
    );
}
