//! The book never drifts from the code: every include resolves to real lines,
//! every pinned diff matches the crates, every internal link lands somewhere,
//! and every step chapter shows its step's code, output and diff.
//!
//! After changing a step on purpose, rewrite the pinned diffs with
//! `UPDATE_BOOK_DIFFS=1 cargo test -p book-tools --test book pinned_diffs`
//! and read them before committing.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use book_tools::book::{
    Include, Part, PinnedDiff, UPDATE_DIFFS_COMMAND, book_src, chapters,
    check_include, expected_diffs, heading_ids, includes, is_marker_line, links,
    listed_whole, normalized, part_of, read_text, snapshot_header_lines,
    step_chapters, step_diff, step_folders, step_number,
};
use workshop::track;
use workshop_tests::{files_below, workspace_root};

/// Every Markdown file under `book/src`, relative to it, `/`-separated.
fn markdown_files() -> Vec<String> {
    let files: Vec<String> = files_below(&book_src())
        .into_iter()
        .filter(|file| Path::new(file).extension().is_some_and(|ext| ext == "md"))
        .collect();
    assert!(!files.is_empty(), "book/src holds no Markdown file");
    files
}

fn all_includes() -> Vec<Include> {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for chapter in markdown_files() {
        match includes(&chapter, &read_text(&book_src().join(&chapter))) {
            Ok(mut in_chapter) => found.append(&mut in_chapter),
            Err(problem) => problems.push(problem),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    found
}

/// Fails listing every problem at once, so one run shows all of them.
fn assert_no_problems(problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{} problem(s) in the book:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn every_include_shows_real_lines() {
    let includes = all_includes();
    // A parser that found nothing would pass everything below.
    assert!(
        includes.len() >= 10,
        "found only {} includes",
        includes.len()
    );
    let problems: Vec<String> = includes
        .iter()
        .filter_map(|include| check_include(include).err())
        .collect();
    assert_no_problems(&problems);
}

#[test]
fn console_output_starts_right_after_the_snapshot_header() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for include in all_includes() {
        let is_snapshot = Path::new(&include.path)
            .extension()
            .is_some_and(|ext| ext == "snap");
        if !is_snapshot {
            continue;
        }
        let file = book_src()
            .join(&include.chapter)
            .with_file_name(&include.path);
        if !file.is_file() {
            continue; // every_include_shows_real_lines reports it.
        }
        checked += 1;
        let header = snapshot_header_lines(&read_text(&file));
        // Any end may follow: a long trace is shown in part (`:4:23`).
        let skips_header = matches!(
            include.part,
            Part::Lines { start, .. } if start.is_some() && start == header
        );
        if !skips_header {
            problems.push(format!(
                "{}:{}: {} should skip the {}-line snapshot header: `{}:{}:`",
                include.chapter,
                include.line,
                include.text,
                header.unwrap_or(0),
                include.path,
                header.unwrap_or(0) + 1,
            ));
        }
    }
    assert!(checked > 0, "no chapter includes a snapshot");
    assert_no_problems(&problems);
}

#[test]
fn every_step_chapter_shows_its_code_output_and_diff() {
    let chapters = step_chapters();
    assert!(!chapters.is_empty(), "SUMMARY.md lists no step chapter");
    let includes = all_includes();
    let diffs = expected_diffs();
    let mut problems = Vec::new();
    for (chapter, folder) in &chapters {
        if !book_src().join("..").join("..").join(folder).is_dir() {
            problems.push(format!(
                "{chapter}: no step folder `{folder}` (chapters are named like their step)"
            ));
        }
        let shown: Vec<&str> = includes
            .iter()
            .filter(|include| include.chapter == *chapter)
            .map(|include| include.path.as_str())
            .collect();
        let number = step_number(folder).expect("a step chapter");
        let wanted_code = format!("../../{folder}/src/lib.rs");
        let wanted_output =
            format!("../../tests/tests/snapshots/step{number:02}.snap");
        let mut wanted = vec![wanted_code, wanted_output];
        for diff in diffs.iter().filter(|diff| diff.new_step == *folder) {
            wanted.push(diff.file());
        }
        for file in listed_whole(number) {
            wanted.push(format!("../../{folder}/{file}"));
        }
        for path in wanted {
            if !shown.contains(&path.as_str()) {
                problems.push(format!("{chapter}: does not include {path}"));
            }
        }
    }
    assert_no_problems(&problems);
}

#[test]
fn pinned_diffs_match_the_crates() {
    // Which diffs are expected is checked by the test above: every step
    // chapter after the first must include one.
    let expected = expected_diffs();
    let updating = std::env::var_os("UPDATE_BOOK_DIFFS").is_some();
    let mut problems = Vec::new();
    for diff in &expected {
        let file = book_src().join(diff.file());
        let fresh = diff.fresh();
        assert!(
            !fresh.is_empty(),
            "{} shows nothing: {} and {} do not differ there",
            diff.file(),
            diff.old_step,
            diff.new_step
        );
        let pinned = file.is_file().then(|| read_text(&file));
        if pinned.as_deref() == Some(fresh.as_str()) {
            continue;
        }
        if updating {
            fs::create_dir_all(file.parent().expect("diffs/ has a parent"))
                .expect("book/src/diffs can be created");
            fs::write(&file, &fresh).expect("the pinned diff can be written");
            eprintln!(
                "rewrote book/src/{}: read it before committing",
                diff.file()
            );
        } else {
            let state = if pinned.is_some() {
                "no longer matches"
            } else {
                "is missing"
            };
            problems.push(format!(
                "book/src/{} {state} `diff {} {}`",
                diff.file(),
                diff.old_step,
                diff.new_step
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\nIf the change to the steps is intended, rewrite the pinned diffs with\n    \
         {UPDATE_DIFFS_COMMAND}\nthen read each one: it should show only the one \
         capability its step adds.",
        problems.join("\n")
    );
}

#[test]
fn every_changed_file_is_in_a_part() {
    let mut problems = Vec::new();
    let mut steps: Vec<&PinnedDiff> = Vec::new();
    let expected = expected_diffs();
    for diff in &expected {
        if diff.part.is_some()
            && !steps.iter().any(|seen| seen.new_step == diff.new_step)
        {
            steps.push(diff);
        }
    }
    for diff in steps {
        let number = step_number(&diff.new_step).expect("a step folder");
        for file in step_diff(&diff.old_step, &diff.new_step) {
            if part_of(number, &file).is_none() {
                problems.push(format!(
                    "{}/{} changed, but no part of the step's diff shows it: \
                     add it to DIFF_PARTS in book/tools/src/book.rs",
                    diff.new_step, file.path
                ));
            }
            let new_file = file.diff.starts_with("--- /dev/null");
            if listed_whole(number).contains(&file.path.as_str()) && !new_file {
                problems.push(format!(
                    "{}/{} is listed whole instead of its diff, but it is not \
                     new: the diff would show what changed",
                    diff.new_step, file.path
                ));
            }
        }
    }
    assert_no_problems(&problems);
}

#[test]
fn pinned_diffs_leave_out_anchor_and_build_markers() {
    let with_markers: Vec<String> = expected_diffs()
        .iter()
        .filter(|diff| {
            diff.fresh().contains("// ANCHOR")
                || diff.fresh().contains(track::MARKER)
        })
        .map(PinnedDiff::file)
        .collect();
    assert_no_problems(&with_markers);
}

/// `cargo workshop` sends a participant to the section a `// BUILD` marker
/// names, and the chapter's "Build it" section lists the track: both must
/// stay true when a heading is renamed or a marker moves.
#[test]
fn every_build_marker_cites_a_heading_and_its_build_it_section_lists_it() {
    let mut problems = Vec::new();
    for (chapter, folder) in step_chapters() {
        let number = step_number(&folder).expect("a step folder");
        let markdown = read_text(&book_src().join(&chapter));
        let ids = heading_ids(&markdown);
        let marked = track::track(&workspace_root().join(&folder), number)
            .unwrap_or_else(|err| panic!("{folder}/{err}"));
        if marked.is_empty() {
            problems.push(format!("{folder}: no `// BUILD` markers, so no track"));
        }
        let build_it = markdown
            .split_once("\n## Build it\n")
            .map(|(_, rest)| rest.split("\n## ").next().unwrap_or(rest))
            .unwrap_or_default();
        if build_it.is_empty() {
            problems.push(format!("{chapter}: no `## Build it` section"));
        }
        let mut listed_up_to = 0;
        for marked in &marked {
            let cited = heading_ids(&format!("# {}", marked.section));
            if !cited.is_subset(&ids) {
                problems.push(format!(
                    "{folder}/{}:{}: cites section \"{}\", not a heading of {chapter}",
                    marked.file, marked.line, marked.section
                ));
            }
            let name = format!("`{}`", marked.function);
            match build_it[listed_up_to..].find(&name) {
                Some(at) => listed_up_to += at + name.len(),
                None => problems.push(format!(
                    "{chapter}: \"Build it\" does not list {name} after the \
                     functions before it in the track"
                )),
            }
        }
    }
    assert_no_problems(&problems);
}

/// `cargo workshop start` blanks a marked function's body and keeps its doc
/// comment: the doc comment is all a participant has of what the body must
/// do, so every marked function has one, and it names each call the body
/// makes to the trace (`trace.timer_due(…)`), which no other test asks for.
#[test]
fn every_marked_function_has_a_doc_comment_naming_its_trace_calls() {
    let mut problems = Vec::new();
    for (_, folder) in step_chapters() {
        let number = step_number(&folder).expect("a step folder");
        let step_dir = workspace_root().join(&folder);
        let marked = track::track(&step_dir, number)
            .unwrap_or_else(|err| panic!("{folder}/{err}"));
        for marked in &marked {
            let at = format!("{folder}/{}:{}", marked.file, marked.line);
            if marked.doc.trim().is_empty() {
                problems.push(format!(
                    "{at}: `{}` has no doc comment under its `// BUILD` marker, \
                     so `start` leaves nothing that says what its body must do",
                    marked.function
                ));
                continue;
            }
            let text = read_text(&step_dir.join(&marked.file));
            for call in trace_calls(&text[marked.body.clone()]) {
                if !marked.doc.contains(&format!("{call}(")) {
                    problems.push(format!(
                        "{at}: `{}` calls `trace.{call}`, and its doc comment \
                         does not say so (`{call}(…)`)",
                        marked.function
                    ));
                }
            }
        }
    }
    assert_no_problems(&problems);
}

/// The methods `code` calls on a trace: `trace.ran(n)` and
/// `event_loop⏎.trace⏎.task_waits(…)` give `ran` and `task_waits`.
fn trace_calls(code: &str) -> Vec<&str> {
    let mut calls = Vec::new();
    for (at, _) in code.match_indices("trace") {
        let after = code[at + "trace".len()..].trim_start();
        let Some(method) = after.strip_prefix('.') else {
            continue;
        };
        let method = method.trim_start();
        let name_end = method
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(method.len());
        if method[name_end..].starts_with('(') && name_end > 0 {
            calls.push(&method[..name_end]);
        }
    }
    calls
}

#[test]
fn no_pinned_diff_is_left_over() {
    let expected: BTreeSet<String> =
        expected_diffs().iter().map(PinnedDiff::file).collect();
    let Ok(entries) = fs::read_dir(book_src().join("diffs")) else {
        return; // no diffs folder: nothing is left over.
    };
    let stale: Vec<String> = entries
        .map(|entry| {
            format!("diffs/{}", entry.unwrap().file_name().to_string_lossy())
        })
        .filter(|file| !expected.contains(file))
        .map(|file| format!("book/src/{file} is pinned but no chapter asks for it"))
        .collect();
    assert_no_problems(&stale);
}

#[test]
fn internal_links_land_on_a_chapter_and_heading() {
    let listed: BTreeSet<String> = chapters().into_iter().collect();
    let src = book_src();
    let mut checked = 0;
    let mut problems = Vec::new();
    for page in markdown_files() {
        let markdown = read_text(&src.join(&page));
        for link in links(&markdown) {
            if is_external(&link.target) {
                continue;
            }
            checked += 1;
            let place = format!("{page}:{}: link to `{}`", link.line, link.target);
            let (path, fragment) = match link.target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (link.target.as_str(), None),
            };
            let target = if path.is_empty() {
                page.clone()
            } else if let Some(target) = resolve(&page, path) {
                target
            } else {
                problems.push(format!("{place}: leaves book/src"));
                continue;
            };
            if !src.join(&target).is_file() {
                problems.push(format!("{place}: no such file"));
                continue;
            }
            let is_page = Path::new(&target).extension().is_some_and(|e| e == "md");
            if is_page && page != "SUMMARY.md" && !listed.contains(&target) {
                problems.push(format!("{place}: {target} is not in SUMMARY.md"));
            }
            if let Some(fragment) = fragment {
                let ids = heading_ids(&read_text(&src.join(&target)));
                if !ids.contains(fragment) {
                    problems.push(format!(
                        "{place}: {target} has no heading #{fragment}"
                    ));
                }
            }
        }
    }
    assert!(checked > 0, "found no internal links to check");
    assert_no_problems(&problems);
}

/// A folded diff's summary says how long it is: "The diff (1,179 lines)".
/// The number is written by hand, so this keeps it true when the diff is
/// pinned again.
#[test]
fn every_folded_diffs_summary_counts_its_lines() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for chapter in markdown_files() {
        let text = read_text(&book_src().join(&chapter));
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            let Some(rest) = line.strip_prefix("<summary>The diff (") else {
                continue;
            };
            let stated: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ',')
                .collect();
            let Some(diff) = lines[index..].iter().find_map(|later| {
                let start = later.find("{{#include diffs/")? + "{{#include ".len();
                Some(later[start..].trim_end_matches("}}").to_owned())
            }) else {
                problems.push(format!("{chapter}:{}: no diff follows", index + 1));
                continue;
            };
            let actual = read_text(&book_src().join(&diff)).lines().count();
            checked += 1;
            if stated.replace(',', "") != actual.to_string() {
                problems.push(format!(
                    "{chapter}:{}: says {stated} lines, {diff} has {actual}",
                    index + 1
                ));
            }
        }
    }
    assert!(checked >= 8, "found only {checked} folded diffs");
    assert_no_problems(&problems);
}

/// The widest line a listing shows without a scroll bar: rustfmt's
/// `max_width` (rustfmt.toml), which mdBook's code blocks fit at 1200 px.
/// rustfmt does not wrap comments, so this test does.
const PAGE_WIDTH: usize = 85;

#[test]
fn no_listing_is_wider_than_the_page() {
    // Every step's Rust files are shown, whole or in a pinned diff; other
    // files only where a chapter includes them.
    let mut shown: BTreeSet<PathBuf> = BTreeSet::new();
    for folder in step_folders() {
        let dir = workspace_root().join(&folder);
        for file in files_below(&dir) {
            let rust = Path::new(&file).extension().is_some_and(|ext| ext == "rs");
            if rust && !file.starts_with("target/") {
                shown.insert(dir.join(file));
            }
        }
    }
    for include in all_includes() {
        let file = normalized(&include.file_from(&book_src()));
        if file.extension().is_some_and(|ext| ext == "rs") {
            shown.insert(file);
        }
    }
    assert!(shown.len() >= 40, "found only {} files", shown.len());
    let mut problems = Vec::new();
    for file in &shown {
        for (index, line) in read_text(file).lines().enumerate() {
            let width = line.chars().count();
            // Marker lines never reach a listing (see `is_marker_line`).
            if width > PAGE_WIDTH && !is_marker_line(line) {
                problems.push(format!(
                    "{}:{}: {width} columns, over {PAGE_WIDTH}",
                    file.display(),
                    index + 1
                ));
            }
        }
    }
    assert_no_problems(&problems);
}

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// Resolves `path`, written in `page`, to a path relative to `book/src`;
/// `None` when it climbs out of `book/src` (it would not exist on the web).
fn resolve(page: &str, path: &str) -> Option<String> {
    let mut parts: Vec<String> = Path::new(page)
        .parent()
        .map(|dir| {
            dir.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for component in PathBuf::from(path).components() {
        match component {
            Component::Normal(part) => {
                parts.push(part.to_string_lossy().into_owned());
            }
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}
