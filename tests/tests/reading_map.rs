//! From step 4 on, a step is more than one file, and a reader needs a route
//! through it: `lib.rs` opens with a reading map that lists every file of
//! the step in an order in which each file uses only the files above it.
//! These tests hold the map to that promise, so it cannot drift from the
//! code as the steps change.

use std::fs;
use std::path::Path;

use workshop_tests::{files_below, workspace_root};
use workshop_tests::{read_text, step_folders, step_number};

/// The first step with a reading map: steps 1-3 are one `lib.rs` each.
const FIRST_MAPPED_STEP: u32 = 4;

/// How many lines a reader sees before scrolling: the map's heading and
/// what is new in the step must be inside them.
const FIRST_SCREEN: usize = 45;

/// The step folders that carry a reading map.
fn mapped_steps() -> Vec<String> {
    let steps: Vec<String> = step_folders()
        .into_iter()
        .filter(|folder| step_number(folder).is_some_and(|n| n >= FIRST_MAPPED_STEP))
        .collect();
    assert!(
        !steps.is_empty(),
        "no step from step {FIRST_MAPPED_STEP} on"
    );
    steps
}

/// Every `.rs` file under a step's `src/`, relative to it, `/`-separated.
fn source_files(step: &str) -> Vec<String> {
    let files: Vec<String> = files_below(&workspace_root().join(step).join("src"))
        .into_iter()
        .filter(|file| Path::new(file).extension().is_some_and(|ext| ext == "rs"))
        .collect();
    assert!(!files.is_empty(), "{step}/src holds no .rs file");
    files
}

/// The files the map in `lib.rs` lists, in its order. A map entry is a
/// numbered item (`3. `task.rs` ...`) or a sub-item (`- `apps/echo.rs` ...`)
/// that starts with one or more backticked paths.
fn map_order(lib: &str) -> Vec<String> {
    let mut order = Vec::new();
    for line in lib.lines().map_while(|line| line.strip_prefix("//!")) {
        let item = line.trim_start();
        let rest = match item.split_once(". ") {
            Some((number, rest)) if number.chars().all(|c| c.is_ascii_digit()) => {
                rest
            }
            _ => match item.strip_prefix("- ") {
                Some(rest) => rest,
                None => continue,
            },
        };
        order.extend(leading_paths(rest));
    }
    order
}

/// The backticked `.rs` paths at the start of a map entry, before its
/// description: "`apps/mod.rs`, `apps/demo.rs`: the demo" gives both.
fn leading_paths(entry: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = entry;
    while let Some(after_tick) = rest.strip_prefix('`') {
        let Some((path, after)) = after_tick.split_once('`') else {
            break;
        };
        if Path::new(path).extension().is_none_or(|ext| ext != "rs") {
            break;
        }
        paths.push(path.to_owned());
        rest = after
            .trim_start_matches([',', ' '])
            .trim_start_matches("and ")
            .trim_start();
    }
    paths
}

/// `source` without `//` comments (doc comments included), so names a
/// comment mentions do not count as uses.
fn without_comments(source: &str) -> String {
    source
        .lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate modules a file names through `crate::` or `super::` paths, as
/// the files that define them. `Err` names a path that does not go through
/// a module: an item re-exported by `lib.rs`, which hides where it lives.
fn uses(step: &str, file: &str, source: &str) -> Vec<Result<String, String>> {
    let src = workspace_root().join(step).join("src");
    let module_file = |segments: &[&str]| -> Option<String> {
        let mut folder = String::new();
        let mut found = None;
        for segment in segments {
            let as_file = format!("{folder}{segment}.rs");
            let as_folder = format!("{folder}{segment}/mod.rs");
            if src.join(&as_file).is_file() {
                found = Some(as_file);
                break;
            } else if src.join(&as_folder).is_file() {
                found = Some(as_folder);
                folder = format!("{folder}{segment}/");
            } else {
                break;
            }
        }
        found
    };
    let parent_folder = file.rsplit_once('/').map_or("", |(folder, _)| folder);
    let mut found = Vec::new();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", vec![parent_folder])]
    {
        let code = without_comments(source);
        for (at, _) in code.match_indices(prefix) {
            let tail = &code[at + prefix.len()..];
            for path in paths_in(tail) {
                let mut segments: Vec<&str> =
                    base.iter().copied().filter(|s| !s.is_empty()).collect();
                segments.extend(path.split("::"));
                found.push(module_file(&segments).ok_or(format!("{prefix}{path}")));
            }
        }
    }
    found
}

/// The paths that follow a `crate::`: one (`task::Tasks`), or each of a
/// group, nested groups spelled out (`{task::Tasks, waker::{TaskId}}` gives
/// `task::Tasks` and `waker::TaskId`).
fn paths_in(tail: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let end = tail.find(|c| !is_path_char(c)).unwrap_or(tail.len());
    let prefix = &tail[..end];
    let Some(group) = tail[end..].strip_prefix('{') else {
        return vec![prefix.trim_end_matches(':').to_owned()];
    };
    let mut depth = 0;
    let mut members = vec![String::new()];
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                members.push(String::new());
                continue;
            }
            _ => {}
        }
        members.last_mut().expect("one member at least").push(c);
    }
    members
        .iter()
        .map(|member| member.trim())
        .filter(|member| !member.is_empty() && *member != "self")
        .flat_map(paths_in)
        .map(|path| format!("{prefix}{path}"))
        .collect()
}

#[test]
fn the_map_lists_every_file_once() {
    let mut problems = Vec::new();
    for step in mapped_steps() {
        let lib = read_text(&workspace_root().join(&step).join("src/lib.rs"));
        let order = map_order(&lib);
        if order.first().map(String::as_str) != Some("lib.rs") {
            problems.push(format!("{step}: the map's first entry is not `lib.rs`"));
        }
        let files = source_files(&step);
        for file in &files {
            match order.iter().filter(|listed| *listed == file).count() {
                1 => {}
                0 => problems.push(format!("{step}: no map entry for `{file}`")),
                n => problems.push(format!("{step}: `{file}` is listed {n} times")),
            }
        }
        for listed in &order {
            if !files.contains(listed) {
                problems
                    .push(format!("{step}: the map lists `{listed}`, not a file"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_first_screen_shows_the_map_and_what_is_new() {
    let mut problems = Vec::new();
    for step in mapped_steps() {
        let lib = read_text(&workspace_root().join(&step).join("src/lib.rs"));
        let first_screen: Vec<&str> = lib.lines().take(FIRST_SCREEN).collect();
        let first_screen = first_screen.join("\n");
        for wanted in ["# Reading map", "**NEW**"] {
            if !first_screen.contains(wanted) {
                problems.push(format!(
                    "{step}: `{wanted}` is not in the first {FIRST_SCREEN} lines of lib.rs"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn lib_rs_is_only_the_map_and_the_module_list() {
    let kinds = [
        "fn ",
        "struct ",
        "enum ",
        "impl ",
        "impl<",
        "const ",
        "static ",
        "type ",
        "trait ",
        "macro_rules!",
    ];
    let mut problems = Vec::new();
    for step in mapped_steps() {
        let lib = read_text(&workspace_root().join(&step).join("src/lib.rs"));
        for line in without_comments(&lib).lines() {
            let line = line.trim_start().trim_start_matches("pub ");
            if kinds.iter().any(|kind| line.starts_with(kind)) {
                problems.push(format!("{step}/src/lib.rs holds code: `{line}`"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn each_file_uses_only_files_above_it_in_the_map() {
    let mut problems = Vec::new();
    for step in mapped_steps() {
        let lib = read_text(&workspace_root().join(&step).join("src/lib.rs"));
        let order = map_order(&lib);
        if order.is_empty() {
            problems.push(format!("{step}/src/lib.rs has no reading map"));
        }
        let position = |file: &str| order.iter().position(|listed| listed == file);
        for file in order.iter().filter(|file| *file != "lib.rs") {
            let path = workspace_root().join(&step).join("src").join(file);
            let Ok(source) = fs::read_to_string(&path) else {
                continue; // the_map_lists_every_file_once reports it.
            };
            for used in uses(&step, file, &source) {
                match used {
                    Err(path) => problems.push(format!(
                        "{step}/src/{file} uses `{path}` through lib.rs: name the \
                         module that defines it"
                    )),
                    Ok(used) if used == *file => {}
                    Ok(used) if position(&used) >= position(file) => {
                        problems.push(format!(
                            "{step}/src/{file} uses `{used}`, which the map lists after it"
                        ));
                    }
                    Ok(_) => {}
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_map_is_read_the_way_the_tests_expect() {
    let lib = "//! Step 9.\n//!\n//! # Reading map\n//!\n\
               //! 1. `lib.rs`: this map.\n//! 2. `waker.rs` **NEW**: wakers;\n\
               //!    `TaskWaker`.\n//! 3. `apps/mod.rs`, `apps/demo.rs`: the demo.\n\
               //!    - `apps/echo.rs`: an echo server.\n//! 4. `main.rs`.\n\
               //!\n//! 5. not a file\n\nmod waker;\n";
    assert_eq!(
        map_order(lib),
        [
            "lib.rs",
            "waker.rs",
            "apps/mod.rs",
            "apps/demo.rs",
            "apps/echo.rs",
            "main.rs"
        ]
    );
    assert_eq!(
        paths_in("{task::Tasks, waker::{self, TaskId, TaskWaker}};"),
        ["task::Tasks", "waker::TaskId", "waker::TaskWaker"]
    );
    assert_eq!(
        paths_in("event_loop::EventLoop;"),
        ["event_loop::EventLoop"]
    );
}

/// The map's entries, each with the files it starts with and its whole
/// text (continuation lines included): a numbered item or a sub-item, up to
/// the next one or a blank line.
fn map_entries(lib: &str) -> Vec<(Vec<String>, String)> {
    let mut entries: Vec<(Vec<String>, String)> = Vec::new();
    let mut open = false;
    for line in lib.lines().map_while(|line| line.strip_prefix("//!")) {
        let item = line.trim_start();
        let starts = match item.split_once(". ") {
            Some((number, rest)) if number.chars().all(|c| c.is_ascii_digit()) => {
                Some(rest)
            }
            _ => item.strip_prefix("- "),
        };
        if let Some(rest) = starts {
            entries.push((leading_paths(rest), item.to_owned()));
            open = true;
        } else if item.is_empty() {
            open = false;
        } else if open {
            // Rust 1.87, the declared rust-version, has no `let` chains.
            if let Some((_, text)) = entries.last_mut() {
                text.push(' ');
                text.push_str(item);
            }
        }
    }
    entries
}

/// What makes a step faster without teaching anything is not in the
/// steps: it lives in `fast` (`beyond/`), step 8's runtime rebuilt for
/// speed. So no map entry marks code as performance.
#[test]
fn no_map_entry_marks_code_that_is_only_faster() {
    let mut problems = Vec::new();
    for step in mapped_steps() {
        let lib = read_text(&workspace_root().join(&step).join("src/lib.rs"));
        for (files, text) in map_entries(&lib) {
            let text = text.to_lowercase();
            if text.contains("performance") || text.contains("faster") {
                problems.push(format!(
                    "{step}: the entry for {files:?} marks code as performance: \
                     what only makes a step faster belongs in `fast` (`beyond/`)"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
