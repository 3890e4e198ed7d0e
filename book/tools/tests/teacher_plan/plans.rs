//! The plans: each day fits its hours, each box holds what it asks, and
//! the room reads at most 40 % of a box.

use super::page::core_exercises;
#[allow(clippy::wildcard_imports)]
use super::*;

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
    // teacher's walk-through covers its sections at the same rates, but
    // for those taken by a route, which its own test measures.
    let walked: Vec<String> = parts
        .walked
        .iter()
        .filter(|name| !parts.routed.contains(name))
        .cloned()
        .collect();
    let routed = parts
        .routed
        .iter()
        .map(|name| routed_minutes(chapter, name))
        .sum::<usize>();
    for (who, names, with_title, declared) in [
        ("reads", &parts.read, true, parts.reading),
        ("walks through", &walked, false, parts.walk_through - routed),
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
    let answer_first = matches!(
        (position("Build it"), position("The code")),
        (Some(build_at), Some(answer_at)) if build_at > answer_at
    );
    if parts.build_it > 0 && answer_first {
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

/// Each plan's table ends with its hands-on share, the room's hands on the
/// code (Try its that change code, Build it, and its review) against the
/// day's teaching minutes (breaks and lunch aside), computed from the same
/// rows, so the page states what the day gives the room to build; and the
/// one day builds for at least `LEAST_HANDS_ON_PERCENT` of it, with at
/// least `LEAST_HANDS_ON_AFTER_LUNCH` minutes after lunch.
#[test]
fn each_plan_states_its_hands_on_share_as_computed() {
    for plan in the_plans() {
        let share = plan.hands_on();
        let parts: usize = plan
            .rows
            .iter()
            .filter_map(|row| row.parts.as_ref())
            .map(|parts| parts.try_it_code + parts.build_it + parts.review)
            .sum();
        assert_eq!(share.minutes, parts, "{}", plan.name);
        assert!(share.after_lunch <= share.minutes, "{}", plan.name);
        let table = plan::table(&plan);
        let stated = format!(
            "{}: {} of the day's {} teaching min ({} %;",
            plan::HANDS_ON,
            share.minutes,
            share.of,
            share.percent()
        );
        assert!(table.contains(&stated), "{}: {table}", plan.name);
        println!(
            "{}: {stated} {} min after lunch",
            plan.name, share.after_lunch
        );
    }
    let one_day = &the_plans()[0];
    let share = one_day.hands_on();
    assert!(
        share.minutes * 100 >= LEAST_HANDS_ON_PERCENT * share.of,
        "the one day builds {} of its {} teaching min, under {LEAST_HANDS_ON_PERCENT} %",
        share.minutes,
        share.of
    );
    assert!(
        share.after_lunch >= LEAST_HANDS_ON_AFTER_LUNCH,
        "the one day builds {} min after lunch, under {LEAST_HANDS_ON_AFTER_LUNCH}",
        share.after_lunch
    );
}

/// The room's hands on the code, in percent of the one day's teaching
/// minutes, at least: a workshop, not a lecture.
const LEAST_HANDS_ON_PERCENT: usize = 45;

/// And after lunch, when a room that only listens falls asleep.
const LEAST_HANDS_ON_AFTER_LUNCH: usize = 60;

/// The welcome pays for what it teaches: the introduction's sections it
/// names, at the page's rates, their speaker notes' questions and shows,
/// and the teacher's minutes to check everyone's build.
#[test]
fn the_welcome_pays_for_the_introductions_sections_it_teaches() {
    let one_day = &the_plans()[0];
    let welcome = &one_day.rows[0];
    assert!(welcome.what.starts_with("welcome"), "{}", welcome.what);
    let chapter = "introduction.md";
    let minutes = plan::chapter_minutes(&read_text(&book_src().join(chapter)));
    let taught: Vec<Section> = sections(chapter)
        .into_iter()
        .filter(|s| !s.heading.is_empty() && welcome.what.contains(&s.heading))
        .collect();
    assert_eq!(taught.len(), 2, "the welcome names two sections it teaches");
    let reading: usize = taught
        .iter()
        .map(|s| {
            reading(
                s.words - s.skimmed_words,
                s.code_lines - s.skimmed_code_lines,
            )
        })
        .sum();
    let notes: usize = taught.iter().map(|s| minutes.notes_of(&s.heading)).sum();
    let needed = reading + notes + TEACHER_INTRO_MINUTES;
    assert!(
        welcome.minutes >= Some(needed),
        "the welcome's {:?} min, for {reading} min of reading, {notes} of notes \
         and {TEACHER_INTRO_MINUTES} to check the builds",
        welcome.minutes
    );
}

/// A walk-through on the big screen holds a room this long at most.
const LONGEST_WALK_THROUGH_MINUTES: usize = 20;

/// The routes `teacher.md` declares.
fn the_routes() -> Vec<plan::Route> {
    plan::routes(&read_text(&book_src().join("teacher.md")))
        .unwrap_or_else(|err| panic!("{err}"))
}

/// The minutes a routed section takes: its route's.
fn routed_minutes(chapter: &str, _section: &str) -> usize {
    the_routes()
        .iter()
        .find(|route| route.chapter == chapter)
        .map_or(0, plan::Route::minutes)
}

/// Every walk-through of every plan takes a route, 20 minutes at most:
/// listings the chapter shows, in order, with minutes enough to show their
/// lines at the page's rate, and a stop to run or ask.
#[test]
fn every_walk_through_is_twenty_minutes_at_most_on_its_route() {
    let mut problems = Vec::new();
    for plan in &the_plans() {
        for row in &plan.rows {
            let (Some(parts), Some(chapter)) = (&row.parts, &row.chapter) else {
                continue;
            };
            for walked in parts.walked.iter().filter(|s| !parts.routed.contains(s)) {
                problems.push(format!(
                    "{}, {chapter}: \"{walked}\" is walked through without a route",
                    plan.name
                ));
            }
            if parts.walk_through > LONGEST_WALK_THROUGH_MINUTES {
                problems.push(format!(
                    "{chapter}: a walk-through of {} min, over {LONGEST_WALK_THROUGH_MINUTES}: \
                     give it a route in teacher.md",
                    parts.walk_through
                ));
            }
        }
    }
    for route in the_routes() {
        problems.extend(route_problems(&route));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn route_problems(route: &plan::Route) -> Vec<String> {
    let chapter = &route.chapter;
    let markdown = read_text(&book_src().join(chapter));
    let mut problems = Vec::new();
    if route.minutes() > LONGEST_WALK_THROUGH_MINUTES {
        problems.push(format!("{chapter}'s route takes {} min", route.minutes()));
    }
    if !route.stops.iter().any(|stop| stop.listings.is_empty()) {
        problems.push(format!("{chapter}'s route has no stop to run or ask"));
    }
    let mut last_at = 0;
    for stop in route.stops.iter().filter(|stop| !stop.listings.is_empty()) {
        let mut lines = 0;
        for listing in &stop.listings {
            let include = format!("/src/{listing}}}}}");
            let Some(at) = markdown.find(&include) else {
                problems.push(format!("{chapter} shows no listing `{listing}`"));
                continue;
            };
            if at < last_at {
                problems.push(format!("{chapter}'s route goes back to `{listing}`"));
            }
            last_at = at;
            let folder = markdown[..at]
                .rsplit("{{#include ../../")
                .next()
                .unwrap_or_default()
                .to_owned();
            lines += listing_lines(&folder, listing);
        }
        // Each row on its own: a teacher keeps to the minutes at each
        // listing, not only to the route's sum.
        let showing = lines.div_ceil(CODE_LINES_PER_MINUTE);
        if stop.minutes < showing {
            problems.push(format!(
                "{chapter}'s route shows {} ({lines} lines of code, {showing} min at \
                 the page's rate) in {} min",
                stop.listings.join(", "),
                stop.minutes
            ));
        }
    }
    problems
}

/// The lines of `listing` (`file` whole, or `file:anchor`) in the step
/// folder `folder`, as the book includes them.
fn listing_lines(folder: &str, listing: &str) -> usize {
    let (file, anchor) = listing
        .split_once(':')
        .map_or((listing, None), |(f, a)| (f, Some(a)));
    let text = read_text(&workspace_root().join(folder).join("src").join(file));
    let Some(anchor) = anchor else {
        return text.lines().count();
    };
    text.lines()
        .skip_while(|line| !line.trim_end().ends_with(&format!("ANCHOR: {anchor}")))
        .skip(1)
        .take_while(|line| {
            !line.trim_end().ends_with(&format!("ANCHOR_END: {anchor}"))
        })
        .filter(|line| !line.contains("ANCHOR"))
        .count()
}
