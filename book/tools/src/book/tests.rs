use super::*;

fn lines(start: Option<usize>, end: Option<usize>) -> Part {
    Part::Lines { start, end }
}

#[test]
fn includes_are_read_the_way_mdbook_reads_them() {
    let chapter = "x {{#include ../a.rs:timer_heap}} y {{#include b.snap:4:}}\n\
                   {{#rustdoc_include c.rs:2:10}} \\{{#include escaped.rs}}\n\
                   {{#include d.rs:7}} {{#include e.rs::3}} {{#include f.diff}}";
    let found = includes("ch.md", chapter).unwrap();
    let parts: Vec<_> = found
        .iter()
        .map(|include| (include.path.as_str(), include.part.clone()))
        .collect();
    assert_eq!(
        parts,
        [
            ("../a.rs", Part::Anchor("timer_heap".into())),
            ("b.snap", lines(Some(3), None)),
            ("c.rs", lines(Some(1), Some(10))),
            ("d.rs", lines(Some(6), Some(7))),
            ("e.rs", lines(None, Some(3))),
            ("f.diff", lines(None, None)),
        ]
    );
    assert_eq!(found[2].line, 2);
}

#[test]
fn a_misspelt_directive_is_an_error() {
    let error = includes("ch.md", "{{#inclde a.rs}}").unwrap_err();
    assert!(error.contains("ch.md:1"), "{error}");
}

#[test]
fn anchors_must_open_close_and_hold_something() {
    let file = "// ANCHOR: run\nfn run() {}\n// ANCHOR_END: run\n\
                // ANCHOR: run_ready\n// ANCHOR_END: run_ready\n";
    assert_eq!(check_anchor(file, "run"), Ok(()));
    assert!(check_anchor(file, "run_ready").is_err(), "empty anchor");
    assert!(check_anchor(file, "ru").is_err(), "prefix of a name");
    assert!(check_anchor("// ANCHOR: a\nx\n", "a").is_err(), "no end");
    assert!(check_anchor("// ANCHOR_END: a\nx\n// ANCHOR: a\n", "a").is_err());
    let twice =
        "// ANCHOR: a\nx\n// ANCHOR_END: a\n// ANCHOR: a\ny\n// ANCHOR_END: a\n";
    assert!(check_anchor(twice, "a").is_err(), "appears twice");
}

#[test]
fn line_ranges_must_lie_inside_the_file() {
    let file = "1\n2\n3\n4\n";
    assert_eq!(check_lines(file, Some(3), None), Ok(()));
    assert!(check_lines(file, Some(4), None).is_err());
    assert!(check_lines(file, None, Some(5)).is_err());
    assert!(check_lines(file, Some(2), Some(2)).is_err());
}

#[test]
fn snapshot_headers_end_at_the_second_rule() {
    let snap = "---\nsource: tests/tests/snapshots.rs\n---\n$ cargo run\n";
    assert_eq!(snapshot_header_lines(snap), Some(3));
    assert_eq!(snapshot_header_lines("$ cargo run\n"), None);
}

#[test]
fn links_outside_code_are_found() {
    let page = "See [one](a.md#x) and `[not](code.md)`.\n\
                ```\n[no](fence.md)\n```\n[label]: b.md\n";
    let targets: Vec<_> = links(page).into_iter().map(|l| l.target).collect();
    assert_eq!(targets, ["a.md#x", "b.md"]);
}

#[test]
fn heading_ids_follow_mdbook() {
    let ids = heading_ids("# Step 3: `call_later`\n## Try it\n## Try it\n");
    for id in ["step-3-call_later", "try-it", "try-it-1"] {
        assert!(ids.contains(id), "{id} missing from {ids:?}");
    }
}

#[test]
fn step_names_carry_their_number() {
    assert_eq!(step_number("step03-sleep"), Some(3));
    assert_eq!(step_number("step03"), None);
    assert_eq!(step_number("introduction"), None);
}

const MARKED: &str = "// ANCHOR: all\nuse x;\n// BUILD 1/1: chapter 3, \"The idea\"; \
    test a::b\n// ANCHOR: run\nfn run() {}\n// ANCHOR_END: run\n// ANCHOR_END: all\n";

#[test]
fn an_anchor_shows_its_lines_without_any_marker() {
    assert_eq!(
        Part::Anchor("all".into()).select(MARKED),
        "use x;\nfn run() {}"
    );
    assert_eq!(Part::Anchor("run".into()).select(MARKED), "fn run() {}");
    assert_eq!(Part::Anchor("none".into()).select(MARKED), "");
}

#[test]
fn a_line_range_shows_its_lines_without_any_marker() {
    assert_eq!(Part::parse(None).select(MARKED), "use x;\nfn run() {}");
    assert_eq!(
        Part::parse(Some("2:5")).select(MARKED),
        "use x;\nfn run() {}"
    );
    assert_eq!(Part::parse(Some("2")).select(MARKED), "use x;");
}
