//! What a chapter declares and asks of the room: its sections' minutes,
//! its speaker notes' questions and shows, and its exercises that change
//! code.

use std::path::Path;

use super::{ASK_MINUTES, SHOW_MINUTES};

/// A chapter's declared minutes: its title's, and each `## ` section's.
#[derive(Debug, Default, Clone)]
pub struct ChapterMinutes {
    pub title: Option<usize>,
    /// Each `## ` heading (backticks removed) and its minutes line, if any;
    /// under "Try it", the minutes of one exercise.
    pub sections: Vec<(String, Option<usize>)>,
    /// Each `## ` heading whose speaker notes ask or show, and the minutes
    /// that takes (`ASK_MINUTES`, `SHOW_MINUTES`); `""` for the title's.
    pub notes: Vec<(String, usize)>,
    /// The "Try it" exercises that change code: their text names a Rust
    /// file (`….rs`) to change. One that only runs a program and watches
    /// (talking to a server) is no hands-on work.
    pub code_exercises: Vec<usize>,
}

impl ChapterMinutes {
    /// The minutes of the speaker notes under `heading`.
    pub fn notes_of(&self, heading: &str) -> usize {
        self.notes
            .iter()
            .filter(|(name, _)| name == heading)
            .map(|(_, minutes)| minutes)
            .sum()
    }
}

/// The minutes in a `<!-- minutes: N -->` line, or `N per exercise`.
pub fn minutes_line(line: &str) -> Option<usize> {
    let inner = line.trim().strip_prefix("<!-- minutes: ")?;
    let inner = inner.strip_suffix("-->")?.trim();
    let number = inner.strip_suffix(" per exercise").unwrap_or(inner);
    number.parse().ok()
}

/// The minutes a chapter's Markdown declares under its headings, and
/// what its speaker notes and exercises ask of the room.
pub fn chapter_minutes(markdown: &str) -> ChapterMinutes {
    let mut found = ChapterMinutes::default();
    let mut lines = markdown.lines().peekable();
    while let Some(line) = lines.next() {
        let heading = if line.starts_with("# ") {
            None
        } else if let Some(heading) = line.strip_prefix("## ") {
            Some(heading.replace('`', ""))
        } else {
            continue;
        };
        while lines.peek().is_some_and(|next| next.trim().is_empty()) {
            lines.next();
        }
        let minutes = lines.peek().and_then(|next| minutes_line(next));
        match heading {
            None => found.title = minutes,
            Some(heading) => found.sections.push((heading, minutes)),
        }
    }
    found.notes = notes(markdown);
    found.code_exercises = code_exercises(markdown);
    found
}

/// The minutes of each section's speaker notes: its "Ask the room" and
/// "Show" items, inside `<details><summary>Speaker notes</summary>`.
fn notes(markdown: &str) -> Vec<(String, usize)> {
    let (mut found, mut heading, mut in_notes) = (Vec::new(), String::new(), false);
    for line in markdown.lines() {
        if let Some(name) = line.strip_prefix("## ") {
            heading = name.replace('`', "");
        } else if line.contains("<summary>Speaker notes</summary>") {
            in_notes = true;
        } else if line.contains("</details>") {
            in_notes = false;
        } else if in_notes {
            let minutes = if line.starts_with("- **Ask the room") {
                ASK_MINUTES
            } else if line.starts_with("- **Show") {
                SHOW_MINUTES
            } else {
                continue;
            };
            found.push((heading.clone(), minutes));
        }
    }
    found
}

/// The exercises of "Try it" whose text, up to their folded answer, names
/// a Rust file: `**N. Title.** In `…/src/lib.rs`, …`.
fn code_exercises(markdown: &str) -> Vec<usize> {
    let (mut found, mut in_try_it, mut exercise) = (Vec::new(), false, None);
    for line in markdown.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            in_try_it = heading == "Try it";
            exercise = None;
        } else if !in_try_it {
            continue;
        } else if let Some(number) = exercise_title(line) {
            exercise = Some(number);
        } else if line.contains("<summary>") {
            exercise = None;
        }
        if let Some(number) = exercise.filter(|_| names_a_rust_file(line)) {
            if !found.contains(&number) {
                found.push(number);
            }
        }
    }
    found
}

/// `N` of an exercise's first line, `**N. Title.** …`.
fn exercise_title(line: &str) -> Option<usize> {
    let (number, _) = line.strip_prefix("**")?.split_once(". ")?;
    number.parse().ok()
}

fn names_a_rust_file(line: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || "`,()".contains(c))
        .map(|word| Path::new(word.trim_end_matches(['.', ':', ';'])))
        .any(|file| file.extension().is_some_and(|ext| ext == "rs"))
}
