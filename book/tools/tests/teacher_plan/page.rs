//! The teacher's page itself: core and depth labelled, the pilot's table,
//! plan B as one command.

#[allow(clippy::wildcard_imports)]
use super::*;

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
pub(super) fn core_exercises(chapter: &str) -> Vec<usize> {
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
    for wanted in ["cargo xtask pack ", "cargo run -p step01"] {
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
