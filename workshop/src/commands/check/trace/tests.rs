//! The trace beside the authors': turns, the table, what it leaves out.

use super::*;

/// Step 3's equal deadlines, as the authors' loop runs them.
const THEIRS: &str = "== One after the other ==\n\
    [+#.### s] turn 1: wait #.### s: the next deadline\n\
    [+#.### s] turn 1: timer due: 0 (deadline +#.### s)\n\
    slept 0.5 s\n\
    [+#.### s] turn 1: ran 1 callbacks\n\
    [+#.### s] turn 2: wait: nothing to wait for\n\
    \n\
    == Equal deadlines ==\n\
    [+#.### s] turn 1: wait #.### s: the next deadline\n\
    [+#.### s] turn 1: timer due: 0 (deadline +#.### s)\n\
    [+#.### s] turn 1: timer due: 1 (deadline +#.### s)\n\
    first timer\n\
    second timer\n\
    [+#.### s] turn 1: ran 2 callbacks\n\
    [+#.### s] turn 2: wait: nothing to wait for\n";

#[test]
fn a_trace_is_cut_into_turns_each_part_starting_again() {
    let turns = turns(THEIRS);
    let said: Vec<(Option<&str>, Option<u64>, usize)> = turns
        .iter()
        .map(|turn| (turn.part, turn.number, turn.lines.len()))
        .collect();
    assert_eq!(
        said,
        [
            (Some("One after the other"), Some(1), 5),
            (Some("One after the other"), Some(2), 1),
            (Some("Equal deadlines"), Some(1), 7),
            (Some("Equal deadlines"), Some(2), 1),
        ]
    );
    assert_eq!(turns[2].lines[0], "== Equal deadlines ==");
}

#[test]
fn the_first_turn_that_differs_is_shown_side_by_side_its_first_difference_marked() {
    let yours = THEIRS
        .replace(
            "due: 0 (deadline +#.### s)\n[+#.### s] turn 1: timer due: 1",
            "due: 1 (deadline +#.### s)\n[+#.### s] turn 1: timer due: 0",
        )
        .replace("first timer\nsecond timer", "second timer\nfirst timer");
    let shown = first_difference(&yours, THEIRS).expect("they differ");
    assert_eq!(shown.which, "turn 1 of the part \"Equal deadlines\"");
    let expected = [
        "  yours                                | the authors'",
        "  == Equal deadlines ==                | == Equal deadlines ==",
        "  turn 1: wait #.### s: the next dead… | turn 1: wait #.### s: the next dead…",
        "> turn 1: timer due: 1 (deadline +#.#… | turn 1: timer due: 0 (deadline +#.#…",
        "  turn 1: timer due: 0 (deadline +#.#… | turn 1: timer due: 1 (deadline +#.#…",
        "  second timer                         | first timer",
        "  first timer                          | second timer",
        "  turn 1: ran 2 callbacks              | turn 1: ran 2 callbacks",
        "",
        "  The line marked `>`, whole:",
        "    yours:        turn 1: timer due: 1 (deadline +#.### s)",
        "    the authors': turn 1: timer due: 0 (deadline +#.### s)",
    ];
    assert_eq!(shown.table, expected.join("\n"), "\n{}", shown.table);
}

#[test]
fn the_line_that_differs_is_shown_whole_below_when_a_column_cuts_it() {
    let lost = "[+#.### s] turn 2: error: a lost wake-up: no task can \
                run and nothing will wake one";
    let yours = THEIRS.replace("[+#.### s] turn 2: wait: nothing to wait for", lost);
    let shown = first_difference(&yours, THEIRS).expect("they differ");
    assert!(
        shown.table.ends_with(
            "  The line marked `>`, whole:\n    yours:        turn 2: error: \
             a lost wake-up: no task can run and nothing will wake one\n    \
             the authors': turn 2: wait: nothing to wait for"
        ),
        "{}",
        shown.table
    );
    let short = THEIRS.replace("slept 0.5 s", "slept 0.6 s");
    let shown = first_difference(&short, THEIRS).expect("they differ");
    assert!(!shown.table.contains("whole:"), "{}", shown.table);
}

#[test]
fn a_line_one_side_lacks_stands_beside_nothing() {
    let yours = THEIRS.replace("slept 0.5 s\n", "");
    let shown = first_difference(&yours, THEIRS).expect("they differ");
    assert_eq!(shown.which, "turn 1 of the part \"One after the other\"");
    let lines: Vec<&str> = shown.table.lines().collect();
    assert_eq!(
        lines[4],
        format!("> {:<COLUMN$} | slept 0.5 s", "turn 1: ran 1 callbacks")
    );
    assert_eq!(
        lines[5],
        format!("  {} | turn 1: ran 1 callbacks", " ".repeat(COLUMN))
    );
}

#[test]
fn a_trace_that_stops_early_differs_at_the_turn_it_lacks() {
    let cut = THEIRS
        .find("[+#.### s] turn 2: wait: nothing")
        .expect("turn 2");
    let shown = first_difference(&THEIRS[..cut], THEIRS).expect("they differ");
    assert_eq!(shown.which, "turn 2 of the part \"One after the other\"");
    assert!(shown.table.starts_with("  yours"), "{}", shown.table);
    assert!(
        shown.table.ends_with(&format!(
            ">{} | turn 2: wait: nothing to wait for",
            " ".repeat(COLUMN + 1)
        )),
        "{}",
        shown.table
    );
}

#[test]
fn the_participants_own_prints_are_not_the_loops_difference() {
    let printed = THEIRS
        .replace(
            "slept 0.5 s\n",
            "[step03-sleep/src/lib.rs:83:9] sequence = 0\nslept 0.5 s\n",
        )
        .replace("first timer\n", "my timer 1\nfirst timer\n");
    assert!(
        first_difference(&without_own_prints(&printed, THEIRS), THEIRS).is_none()
    );
    let wrong =
        printed.replace("first timer\nsecond timer", "second timer\nfirst timer");
    let shown = first_difference(&without_own_prints(&wrong, THEIRS), THEIRS)
        .expect("the loop's own difference");
    assert!(shown.table.contains("> second timer"), "{}", shown.table);
    assert!(!shown.table.contains("my timer"), "{}", shown.table);
    // A line of the demo's own that the loop changed is no print.
    let changed = printed.replace("slept 0.5 s", "slept 0.7 s");
    let shown = first_difference(&without_own_prints(&changed, THEIRS), THEIRS)
        .expect("the demo's changed line");
    assert!(shown.table.contains("> slept 0.7 s"), "{}", shown.table);
}

#[test]
fn a_panic_and_its_backtrace_stay_out_of_the_table() {
    let panicked = THEIRS.replace(
        "[+#.### s] turn 2: wait: nothing to wait for\n",
        "thread 'main' (7) panicked at step03-sleep/src/lib.rs:90:9:\n\
         the heap is empty\nstack backtrace:\n   0: __rustc::rust_begin_unwind\n\
         \x20            at /rustc/abc/library/std/src/panicking.rs:689:5\n",
    );
    let shown = first_difference(&without_own_prints(&panicked, THEIRS), THEIRS)
        .expect("the turn it lacks");
    assert!(!shown.table.contains("backtrace"), "{}", shown.table);
    assert!(
        !shown.table.contains("rust_begin_unwind"),
        "{}",
        shown.table
    );
    assert_eq!(
        panic_in(&panicked),
        Some(("step03-sleep/src/lib.rs:90:9", "the heap is empty"))
    );
    assert!(!at_a_todo("the heap is empty"));
    let at_todo = panicked.replace(
        "the heap is empty",
        "not yet implemented: write `Socket::read`: see chapter 7",
    );
    assert!(at_a_todo(panic_in(&at_todo).expect("a panic").1));
}

#[test]
fn the_same_trace_shows_nothing() {
    assert!(first_difference(THEIRS, THEIRS).is_none());
    assert!(first_difference("", "").is_none());
}

#[test]
fn a_long_turn_shows_at_most_its_limit_around_the_difference() {
    let theirs = (0..60)
        .map(|at| format!("[+#.### s] turn 1: line {at}"))
        .collect::<Vec<_>>()
        .join("\n");
    let yours = theirs.replace("line 40\n", "line forty\n");
    let shown = first_difference(&yours, &theirs).expect("they differ");
    let lines: Vec<&str> = shown.table.lines().collect();
    assert_eq!(lines.len(), 1 + 1 + SHOWN + 1, "{}", shown.table);
    assert_eq!(lines[1], "  … 35 lines above");
    assert!(lines[2].contains("line 35"), "{}", shown.table);
    assert!(
        lines[7].starts_with("> turn 1: line forty"),
        "{}",
        shown.table
    );
    assert_eq!(lines.last(), Some(&"  … 5 lines below"));
}

#[test]
fn a_step_without_turns_is_one_block() {
    let theirs = "== callbacks ==\n[+#.### s] run: callback 1\nUp 0\n";
    let yours = "== callbacks ==\n[+#.### s] run: callback 1\nDown 5\n";
    let shown = first_difference(yours, theirs).expect("they differ");
    assert_eq!(shown.which, "the part \"callbacks\" (a loop without turns)");
    assert!(shown.table.contains("> Down 5"), "{}", shown.table);
}

const TITLES: [&str; 2] = ["One after the other", "Equal deadlines"];

#[test]
fn a_demo_printing_the_authors_trace_has_not_parted_even_mid_turn() {
    for end in [60, 150, THEIRS.len() - 40, THEIRS.len()] {
        assert!(!parted_already(&THEIRS[..end], &TITLES, THEIRS), "{end}");
    }
}

#[test]
fn a_finished_turn_that_differs_has_parted_an_unfinished_one_not_yet() {
    let yours =
        THEIRS.replace("first timer\nsecond timer", "second timer\nfirst timer");
    let next_turn = yours.rfind("[+#.### s] turn 2").expect("a second turn");
    assert!(!parted_already(&yours[..next_turn], &TITLES, THEIRS));
    let its_first_line =
        next_turn + yours[next_turn..].find('\n').expect("a line") + 1;
    assert!(!parted_already(
        &yours[..its_first_line - 1],
        &TITLES,
        THEIRS
    ));
    assert!(parted_already(&yours[..its_first_line], &TITLES, THEIRS));
}
