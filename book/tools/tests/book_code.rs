//! The book's listings come from the authors' code, without markers: the
//! preprocessor `src/bin/book-code.rs` (run by `book/book.toml` before
//! mdBook's `links`) is tested here on its own, and the built book once
//! mdBook 0.5.4 is installed (`.ci/run` runs that test).

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use book_tools::book::{
    AuthorsVersion, book_src, chapters, includes, is_marker_line, read_text,
};
use serde_json::{Value, json};
use workshop::{authors, track};
use workshop_tests::{files_below, workspace_root};

/// Runs the preprocessor as mdBook would on a book whose root is `root`,
/// with the given chapters (path in `src`, Markdown), and returns their
/// Markdown as it hands them on to `links`.
fn preprocess(
    root: &Path,
    pages: &[(String, String)],
    env: &[(&str, &str)],
) -> Vec<String> {
    let items: Vec<Value> = pages
        .iter()
        .map(|(path, content)| {
            json!({ "Chapter": {
                "name": path, "content": content, "number": null,
                "sub_items": [], "path": path, "source_path": path,
                "parent_names": [],
            }})
        })
        .collect();
    let input = json!([
        { "root": root, "config": { "book": { "src": "src" } },
          "renderer": "html", "mdbook_version": "0.5.4" },
        { "items": items },
    ]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_book-code"))
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("book-code runs");
    child
        .stdin
        .take()
        .expect("a pipe")
        .write_all(input.to_string().as_bytes())
        .expect("book-code reads its input");
    let output = child.wait_with_output().expect("book-code ends");
    assert!(output.status.success(), "book-code failed");
    let book: Value =
        serde_json::from_slice(&output.stdout).expect("a book in JSON");
    book["items"]
        .as_array()
        .expect("the book's items")
        .iter()
        .map(|item| {
            item["Chapter"]["content"]
                .as_str()
                .expect("content")
                .to_owned()
        })
        .collect()
}

fn has_extension(path: &str, wanted: &[&str]) -> bool {
    Path::new(path)
        .extension()
        .is_some_and(|ext| wanted.iter().any(|wanted| ext == *wanted))
}

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

#[test]
fn a_started_step_keeps_the_authors_code_in_its_chapter() {
    let (chapter, step) = ("step03-sleep.md", "step03-sleep");
    // A workshop folder holding the chapter, the step and its stored
    // authors' version, and no git: as a ZIP download unpacks.
    let repo = scratch("book-code-started");
    let markdown = read_text(&book_src().join(chapter));
    fs::create_dir_all(repo.join("book/src")).unwrap();
    fs::write(repo.join("book/src").join(chapter), &markdown).unwrap();
    let root = workspace_root().canonicalize().unwrap();
    let stored = authors::read_stored(&root, step).expect("step 3's stored copy");
    let stored_at = authors::stored_copy(&repo, step);
    fs::create_dir_all(stored_at.parent().unwrap()).unwrap();
    fs::write(stored_at, authors::encode(step, &stored)).unwrap();
    let mut files: Vec<(String, String)> = stored
        .iter()
        .map(|(file, text)| (format!("{step}/{file}"), text.clone()))
        .collect();
    // The chapter's other listings too (its exercises' code).
    let authors_here = AuthorsVersion::around(&root);
    for include in includes(chapter, &markdown).unwrap() {
        let file = include.file_from(&book_src()).canonicalize().unwrap();
        let relative = file.strip_prefix(&root).unwrap().to_string_lossy();
        // As the authors wrote it: this test may run in a step already started.
        let text = authors_here.read_or_disk(&file).unwrap();
        files.push((relative.replace('\\', "/"), text));
    }
    for (file, text) in files {
        let to = repo.join(&file);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::write(to, text).unwrap();
    }
    let pages = [(chapter.to_owned(), markdown)];
    let before = preprocess(&repo.join("book"), &pages, &[]);

    // What `cargo workshop start 3` does: every marked body becomes todo!().
    let marked = track::track(&repo.join(step), 3).expect("step 3 has a track");
    assert!(!marked.is_empty(), "step 3 marks no function");
    let files: BTreeSet<&String> =
        marked.iter().map(|marked| &marked.file).collect();
    for file in files {
        let path = repo.join(step).join(file);
        let in_file: Vec<&track::Marked> = marked
            .iter()
            .filter(|marked| &marked.file == file)
            .collect();
        fs::write(&path, track::blanked(&read_text(&path), &in_file)).unwrap();
    }
    let after = preprocess(&repo.join("book"), &pages, &[]);
    let worktree =
        preprocess(&repo.join("book"), &pages, &[("BOOK_CODE", "worktree")]);
    fs::remove_dir_all(&repo).unwrap();

    assert_eq!(before, after, "the started step changed its chapter");
    for marked in &marked {
        let blank = marked.todo_message();
        assert!(!after[0].contains(&blank), "the chapter shows `{blank}`");
        // Otherwise the chapter would show none of the blanked code at all,
        // and the test above would prove nothing.
        assert!(
            worktree[0].contains(&blank),
            "BOOK_CODE=worktree hides `{blank}`"
        );
    }
}

/// Every listing of code, as the preprocessor hands it to mdBook: no line
/// of it is a `// ANCHOR` or `// BUILD` marker.
#[test]
fn no_listing_holds_a_marker_line() {
    let pages: Vec<(String, String)> = chapters()
        .into_iter()
        .map(|chapter| {
            let markdown = read_text(&book_src().join(&chapter));
            (chapter, markdown)
        })
        .collect();
    let shown = preprocess(&workspace_root().join("book"), &pages, &[]);
    let mut problems = Vec::new();
    for ((chapter, before), after) in pages.iter().zip(&shown) {
        let code_includes = includes(chapter, before)
            .unwrap_or_default()
            .iter()
            .filter(|include| has_extension(&include.path, &["rs", "toml"]))
            .count();
        let left = after.matches("{{#include").count();
        if before.matches("{{#include").count() - left != code_includes {
            problems
                .push(format!("{chapter}: not every include of code was expanded"));
        }
        problems.extend(
            markers_in_code_blocks(after)
                .into_iter()
                .map(|line| format!("{chapter}: `{line}`")),
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The marker lines inside fenced code blocks of `markdown`.
fn markers_in_code_blocks(markdown: &str) -> Vec<String> {
    let mut in_code = false;
    let mut found = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if in_code && is_marker_line(line) {
            found.push(line.trim().to_owned());
        }
    }
    found
}

/// The book as a reader gets it: built by mdBook 0.5.4, no `<pre>` block of
/// any page holds a marker line.
#[test]
#[ignore = "needs mdbook 0.5.4 on PATH; .ci/run runs it after installing it"]
fn the_built_book_shows_no_marker_in_a_code_block() {
    let out = scratch("book-code-built");
    let status = Command::new("mdbook")
        .arg("build")
        .arg(workspace_root().join("book"))
        .arg("--dest-dir")
        .arg(&out)
        .status()
        .expect("mdbook runs: cargo install mdbook --locked --version 0.5.4");
    assert!(status.success(), "mdbook build failed");
    let mut pages = 0;
    let mut problems = Vec::new();
    for page in files_below(&out) {
        if !has_extension(&page, &["html"]) || page == "print.html" {
            continue;
        }
        pages += 1;
        let html = read_text(&out.join(&page));
        for block in html.split("<pre").skip(1) {
            let code = block.split("</pre>").next().unwrap_or_default();
            problems.extend(
                code.lines()
                    .map(|line| {
                        line.replace("<code class=\"language-rust ignore\">", "")
                    })
                    .filter(|line| is_marker_line(&unescape(line)))
                    .map(|line| format!("{page}: `{}`", line.trim())),
            );
        }
    }
    fs::remove_dir_all(&out).unwrap();
    assert!(pages >= 10, "only {pages} pages built");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What the reader sees of a line of HTML text: the tags out, `&…;` read.
fn unescape(line: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in line.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The teacher's page leaves the preprocessor with its plans as tables,
/// their times of day written in, and no declaration left for a reader to
/// see; the other pages' plan-like text is not touched.
#[test]
fn the_teacher_page_gets_its_plans_as_tables() {
    let root = workspace_root().join("book");
    let page = read_text(&book_src().join("teacher.md"));
    let pages = [("teacher.md".to_owned(), page.clone())];
    let out = preprocess(&root, &pages, &[]);
    let teacher = &out[0];
    assert!(!teacher.contains("<!-- plan: "), "a plan left as declared");
    assert_eq!(teacher.matches("| from | box | what |").count(), 2);
    assert!(teacher.contains("| 9:00 | 15 min | welcome"), "{teacher}");
    assert!(teacher.contains("`cargo workshop reset 3 --force`"));
    let other = [("other.md".to_owned(), page)];
    assert!(preprocess(&root, &other, &[])[0].contains("<!-- plan: "));
}

/// The book's first build compiles the preprocessor, and only the figures
/// need the test harness: `book.toml` builds `book-code` without them, and
/// the harness is a dependency of the figures alone.
#[test]
fn the_preprocessor_is_built_without_the_test_harness() {
    let book_toml = read_text(&workspace_root().join("book/book.toml"));
    let command = book_toml
        .lines()
        .find(|line| line.contains("--bin book-code"))
        .expect("book.toml runs the preprocessor");
    assert!(
        command.contains("--no-default-features"),
        "book.toml builds the preprocessor with the figures: {command}"
    );
    let manifest = read_text(&workspace_root().join("book/tools/Cargo.toml"));
    let dependencies = manifest
        .split("\n[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("book-tools has dependencies");
    let harness = dependencies
        .lines()
        .find(|line| line.starts_with("workshop-tests"))
        .unwrap_or("optional = true");
    assert!(
        harness.contains("optional = true"),
        "book-tools needs the test harness for everything: {harness}"
    );
}

/// The teacher's page names the preprocessor's command as `book.toml` runs
/// it, so a teacher who builds it ahead of the day builds the right package.
#[test]
fn the_teacher_page_names_the_preprocessor_book_toml_runs() {
    let book_toml = read_text(&workspace_root().join("book/book.toml"));
    let command = book_toml
        .lines()
        .find_map(|line| line.strip_prefix("command = \""))
        .and_then(|command| command.strip_suffix(" --\""))
        .expect("book.toml runs the preprocessor");
    let teacher = read_text(&book_src().join("teacher.md"));
    let teacher = teacher.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        teacher.contains(&format!("`{command}`")),
        "teacher.md does not name `{command}`"
    );
}
