//! The book's code listings, as the authors wrote them and without markers:
//! an mdBook preprocessor that runs before mdBook's own `links`.
//!
//! It expands each `{{#include …}}` of Rust or TOML code itself, so that
//!
//! - a step's file comes from the authors' version stored in
//!   `tests/authors/` (`workshop::authors`): after `cargo workshop
//!   start 3` blanks step 3's functions to `todo!()`, and whatever the
//!   participant commits, a book built or served locally still shows the
//!   authors' bodies where a chapter promises them. For a file the stored
//!   copy lacks, the file on disk is read. An author previewing changes to
//!   a step before `cargo xtask freeze` runs `BOOK_CODE=worktree mdbook
//!   serve book --port 4000`;
//! - no listing shows a marker line: `// ANCHOR:` and `// ANCHOR_END:`
//!   (how the book includes code) and `// BUILD k/n: …` (how `cargo
//!   workshop` finds a track) are left out, as the pinned diffs leave them.
//!
//! It also writes the teacher's plans: each `<!-- plan: … -->` in
//! `teacher.md` becomes its table, its boxes' minutes summed from the
//! minutes the chapters declare under their headings (`book_tools::plan`),
//! so a time is stated once, beside the text it times.
//!
//! And it leaves the speaker notes out of every chapter, since they hold
//! the room's answers (`book_tools::notes`): the teacher builds or serves
//! the book with `BOOK_NOTES=teacher` to have them, each note open.
//!
//! Every other include (console output from snapshots, pinned diffs) is
//! left to `links`. The protocol is mdBook's: `book-code supports <renderer>`
//! answers yes, and otherwise `[context, book]` comes as JSON on stdin and
//! the book goes back as JSON on stdout. `book/book.toml` runs it.

use std::collections::HashMap;
use std::env;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use book_tools::book::{AuthorsVersion, Include, includes, normalized};
use book_tools::notes::{self, Reader};
use book_tools::plan;
use serde_json::Value;

fn main() -> ExitCode {
    match env::args().nth(1).as_deref() {
        // It changes Markdown only, so it suits every renderer.
        Some("supports") => ExitCode::SUCCESS,
        Some(other) => {
            eprintln!("book-code: unknown argument `{other}`; mdBook runs it bare");
            ExitCode::FAILURE
        }
        None => match run() {
            Ok(()) => ExitCode::SUCCESS,
            Err(problem) => {
                eprintln!("book-code: {problem}");
                ExitCode::FAILURE
            }
        },
    }
}

fn run() -> Result<(), String> {
    let input: Value = serde_json::from_reader(io::stdin().lock())
        .map_err(|err| format!("mdBook's input is not JSON: {err}"))?;
    let Value::Array(mut pair) = input else {
        return Err("mdBook's input is not [context, book]".into());
    };
    if pair.len() != 2 {
        return Err("mdBook's input is not [context, book]".into());
    }
    let mut book = pair.pop().expect("two items");
    let context = pair.pop().expect("two items");
    let root = context["root"]
        .as_str()
        .ok_or("mdBook's context has no root")?;
    let src = context["config"]["book"]["src"].as_str().unwrap_or("src");
    let mut sources = Sources::new(&Path::new(root).join(src))?;
    let reader = Reader::from_switch(env::var(notes::SWITCH).ok().as_deref())?;
    rewrite_chapters(&mut book, &mut sources, reader)?;
    serde_json::to_writer(io::stdout().lock(), &book)
        .map_err(|err| format!("could not write the book: {err}"))
}

/// Finds every chapter in mdBook's JSON, wherever it nests, and rewrites
/// its content. A chapter is an object with a `content` and a `path`.
fn rewrite_chapters(
    value: &mut Value,
    sources: &mut Sources,
    reader: Reader,
) -> Result<(), String> {
    match value {
        Value::Object(object) => {
            let path = object
                .get("path")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if let (Some(path), Some(Value::String(content))) =
                (path, object.get_mut("content"))
            {
                *content = rewrite(&path, content, sources, reader)?;
            }
            for child in object.values_mut() {
                rewrite_chapters(child, sources, reader)?;
            }
        }
        Value::Array(items) => {
            for item in items {
                rewrite_chapters(item, sources, reader)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// One chapter: its code included, its speaker notes as `reader` gets them,
/// and on the teacher's page the plans written out as tables.
fn rewrite(
    path: &str,
    content: &str,
    sources: &mut Sources,
    reader: Reader,
) -> Result<String, String> {
    let content = match reader {
        Reader::Teacher => notes::name_listings(content),
        Reader::Participants => content.to_owned(),
    };
    let content = sources.expand(path, &content)?;
    // The plans are computed before the notes go: the routes they count
    // are in the teacher's notes.
    let plans = if path == "teacher.md" {
        Some(
            plan::plans(&content, &sources.book_src)
                .map_err(|err| format!("teacher.md: {err}"))?,
        )
    } else {
        None
    };
    let content = notes::for_reader(path, &content, reader)?;
    Ok(match plans {
        Some(plans) => plan::expand(&content, &plans),
        None => content,
    })
}

/// Where included code is read from, each file read once.
struct Sources {
    book_src: PathBuf,
    authors: AuthorsVersion,
    /// `BOOK_CODE=worktree`: steps' files as they are on disk.
    from_worktree: bool,
    read: HashMap<PathBuf, String>,
}

impl Sources {
    fn new(book_src: &Path) -> Result<Sources, String> {
        let book_src = book_src
            .canonicalize()
            .map_err(|err| format!("{}: {err}", book_src.display()))?;
        Ok(Sources {
            authors: AuthorsVersion::around(&book_src),
            book_src,
            from_worktree: env::var("BOOK_CODE")
                .is_ok_and(|from| from == "worktree"),
            read: HashMap::new(),
        })
    }

    /// `markdown` with each include of code replaced by the code it shows.
    fn expand(&mut self, chapter: &str, markdown: &str) -> Result<String, String> {
        // A directive mdBook does not know stays for `links` to report.
        let Ok(found) = includes(chapter, markdown) else {
            return Ok(markdown.to_owned());
        };
        let mut lines: Vec<String> =
            markdown.split('\n').map(str::to_owned).collect();
        for include in found.iter().filter(|include| is_code(include)) {
            let file = normalized(&include.file_from(&self.book_src));
            let content = self.content(&file).map_err(|err| {
                format!("{chapter}:{}: {}: {err}", include.line, include.text)
            })?;
            let line = &mut lines[include.line - 1];
            *line = line.replacen(&include.text, &include.part.select(&content), 1);
        }
        Ok(lines.join("\n"))
    }

    /// The authors' version of a step's file, or the file on disk.
    fn content(&mut self, file: &Path) -> io::Result<String> {
        if let Some(known) = self.read.get(file) {
            return Ok(known.clone());
        }
        let content = if self.from_worktree {
            fs::read_to_string(file)?.replace("\r\n", "\n")
        } else {
            self.authors.read_or_disk(file)?
        };
        self.read.insert(file.to_owned(), content.clone());
        Ok(content)
    }
}

/// Code, which this preprocessor shows; output and diffs are left to `links`.
fn is_code(include: &Include) -> bool {
    include.text.starts_with("{{#include")
        && Path::new(&include.path)
            .extension()
            .is_some_and(|ext| ext == "rs" || ext == "toml")
}
