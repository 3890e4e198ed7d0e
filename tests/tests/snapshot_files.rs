//! Every `.snap` file under `tests/tests/snapshots` is one a test still
//! writes. insta never deletes a snapshot whose test was removed or renamed,
//! and the book includes these files as chapters' console output, so an
//! orphan would go on being shown as what a step prints while nothing
//! checks it.
//!
//! A snapshot's name is the string literal a test passes first to
//! `assert_run`, `assert_example`, `assert_port_in_use`, `assert_trace` or
//! `insta::assert_snapshot!` in `tests/tests/*.rs`; name every snapshot
//! that way.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use workshop_tests::{read_text, workspace_root};

/// The calls whose first argument, when it is a string literal, names a
/// snapshot file.
const SNAPSHOT_CALLS: [&str; 5] = [
    "assert_run(",
    "assert_example(",
    "assert_port_in_use(",
    "assert_trace(",
    "assert_snapshot!(",
];

const THIS_FILE: &str = "snapshot_files.rs";

fn tests_dir() -> PathBuf {
    workspace_root().join("tests").join("tests")
}

/// The names of the `.snap` files on disk (not `.snap.new` and not
/// `.pending-snap`, which insta writes for review and git ignores).
fn snapshot_files() -> BTreeSet<String> {
    let dir = tests_dir().join("snapshots");
    fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()))
        .map(|entry| entry.expect("an entry can be read").path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?;
            name.strip_suffix(".snap").map(str::to_owned)
        })
        .collect()
}

/// The snapshot names the test sources pass to a snapshot call (this file
/// aside: its own examples name no real snapshot).
fn named_in_tests() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for entry in fs::read_dir(tests_dir()).expect("tests/tests can be listed") {
        let path = entry.expect("an entry can be read").path();
        let this_file = path.file_name().is_some_and(|name| name == THIS_FILE);
        if path.extension().is_some_and(|ext| ext == "rs") && !this_file {
            names.extend(snapshot_names(&read_text(&path)));
        }
    }
    names
}

/// The first arguments of `SNAPSHOT_CALLS` in `source` that are plain string
/// literals; calls that pass a variable (the helpers themselves) are skipped,
/// and so is everything after `//` on a line.
fn snapshot_names(source: &str) -> Vec<String> {
    let code: String = source
        .lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n");
    let mut names = Vec::new();
    for call in SNAPSHOT_CALLS {
        for (at, _) in code.match_indices(call) {
            let args = code[at + call.len()..].trim_start();
            if let Some(rest) = args.strip_prefix('"') {
                let end = rest.find('"').expect("a closed string literal");
                names.push(rest[..end].to_owned());
            }
        }
    }
    names
}

#[test]
fn every_snapshot_file_is_written_by_a_test() {
    let named = named_in_tests();
    let orphans: Vec<_> = snapshot_files()
        .into_iter()
        .filter(|file| !named.contains(file))
        .map(|file| format!("  tests/tests/snapshots/{file}.snap"))
        .collect();
    assert!(
        orphans.is_empty(),
        "no test writes these snapshots any more:\n{}\n\
         delete them (or name them in the test that should write them); \
         check that no book chapter includes them",
        orphans.join("\n")
    );
}

/// Guards the check above: if the scan stopped finding names (a helper
/// renamed, say), every file would look orphaned, or none would be checked.
#[test]
fn every_snapshot_a_test_names_has_its_file() {
    let files = snapshot_files();
    let named = named_in_tests();
    assert!(
        !named.is_empty(),
        "found no snapshot call in tests/tests/*.rs"
    );
    let missing: Vec<_> = named.difference(&files).cloned().collect();
    assert!(
        missing.is_empty(),
        "tests name snapshots that have no .snap file: {missing:?}; run the \
         tests and review the new snapshots with `cargo insta review`"
    );
}

#[test]
fn names_come_from_literal_first_arguments_outside_comments() {
    let source = r#"
        fn assert_run(name: &str, package: &str, args: &[&str]) {}
        assert_run("step01", "step01", &[]);
        assert_port_in_use(
            "step04-port-in-use",
            "step04",
        );
        settings.bind(|| insta::assert_snapshot!(name, text));
        insta::assert_snapshot!("by-hand", text);
        // assert_run("commented-out", "step02", &[]);
    "#;
    assert_eq!(
        snapshot_names(source),
        ["step01", "step04-port-in-use", "by-hand"]
    );
}
