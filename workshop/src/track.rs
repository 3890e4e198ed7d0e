//! The build-it-yourself tracks: the `// BUILD` markers in a step's source,
//! and blanking the functions they mark, for `cargo workshop`.
//!
//! A marker is one comment line right above a function's doc comment:
//!
//! ```text
//! // BUILD 2/4: chapter 3, "The code"; test step03_timers::a_deadline_already_passed_fires_at_once_and_before_later_ones
//! ```
//!
//! It says where the function comes in the step's track (2nd of 4), which
//! section of which chapter explains it, and which test (file and name)
//! fails while the function is blank.

use std::fmt::Write as _;
use std::fs;
use std::ops::Range;
use std::path::Path;

/// How every marker line starts, after its indentation.
pub const MARKER: &str = "// BUILD ";

/// One marked function of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    /// The file, relative to the step folder, `/`-separated.
    pub file: String,
    /// The marker's line in that file, counting from 1.
    pub line: usize,
    /// Its place in the track, from 1, and the track's length.
    pub order: usize,
    pub total: usize,
    pub chapter: u32,
    /// The heading, as written in the chapter, that explains the function.
    pub section: String,
    /// The test that fails while the function is blank: `file::name`.
    pub test: String,
    /// `Type::name` for a method, `name` for a free function.
    pub function: String,
    /// Its doc comment, `///` and one space taken off each line; empty
    /// when it has none. `start` keeps it: it says what the body must do.
    pub doc: String,
    /// The body's bytes in the file, braces included.
    pub body: Range<usize>,
    /// The bytes between the marker's line and the body: the doc comment,
    /// any attributes, the signature. A participant may write these too
    /// (`self` for `mut self`): they are part of the function, not lines
    /// beside the track.
    pub signature: Range<usize>,
}

impl Marked {
    /// The function as the participant may write it: signature and body.
    pub fn whole(&self) -> Range<usize> {
        self.signature.start..self.body.end
    }

    /// The line of the function's signature in `text`, its file: the first
    /// below the marker that is neither a comment nor an attribute (a doc
    /// comment may say "fn"). Every command names a function by this line,
    /// where an editor's "go to line" shows it.
    pub fn fn_line(&self, text: &str) -> usize {
        let below = text.get(self.signature.clone()).unwrap_or_default();
        let skipped = below
            .lines()
            .take_while(|line| {
                let line = line.trim_start();
                line.is_empty() || line.starts_with("//") || line.starts_with("#[")
            })
            .count();
        self.line + 1 + skipped
    }

    /// The call that stands in for the body while the participant writes it.
    pub fn todo_call(&self) -> String {
        format!(
            "todo!(\"write `{}`: see chapter {}, section \\\"{}\\\"\")",
            self.function, self.chapter, self.section
        )
    }

    /// What a test's panic message says while this function is blank.
    pub fn todo_message(&self) -> String {
        format!("write `{}`:", self.function)
    }
}

/// What a marker line says, before the function below it is found.
struct MarkerLine {
    order: usize,
    total: usize,
    chapter: u32,
    section: String,
    failing_test: String,
}

/// The fields of a marker line, or `None` for a line that is not one.
fn parse_marker(line: &str) -> Option<Result<MarkerLine, String>> {
    let rest = line.trim_start().strip_prefix(MARKER)?;
    Some(parse_marker_fields(rest).ok_or_else(|| {
        format!(
            "a BUILD marker reads `// BUILD k/n: chapter N, \"Section\"; test \
             file::name`, not `{}`",
            line.trim()
        )
    }))
}

fn parse_marker_fields(rest: &str) -> Option<MarkerLine> {
    let (place, rest) = rest.split_once(": chapter ")?;
    let (order, total) = place.split_once('/')?;
    let (chapter, rest) = rest.split_once(", \"")?;
    let (section, rest) = rest.split_once("\"; test ")?;
    let test = rest.trim();
    if !test.contains("::") || test.contains(' ') {
        return None;
    }
    Some(MarkerLine {
        order: order.parse().ok()?,
        total: total.parse().ok()?,
        chapter: chapter.parse().ok()?,
        section: section.to_owned(),
        failing_test: test.to_owned(),
    })
}

/// The marked functions in one file's text, in file order.
pub fn markers_in(file: &str, text: &str) -> Result<Vec<Marked>, String> {
    let mut found = Vec::new();
    let mut offset = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (index, line) in lines.iter().enumerate() {
        let start = offset;
        offset += line.len();
        let Some(fields) = parse_marker(line) else {
            continue;
        };
        let at = format!("{file}:{}", index + 1);
        let fields = fields.map_err(|err| format!("{at}: {err}"))?;
        let (name, doc, body) = marked_function(text, start + line.len())
            .map_err(|err| format!("{at}: {err}"))?;
        let function = match enclosing_impl(&lines[..index]) {
            Some(owner) if line.starts_with(' ') => format!("{owner}::{name}"),
            _ => name,
        };
        found.push(Marked {
            file: file.to_owned(),
            line: index + 1,
            order: fields.order,
            total: fields.total,
            chapter: fields.chapter,
            section: fields.section,
            test: fields.failing_test,
            function,
            doc,
            signature: start + line.len()..body.start,
            body,
        });
    }
    Ok(found)
}

/// The name, doc comment and body of the function whose doc comment or
/// signature starts at byte `from`.
fn marked_function(
    text: &str,
    from: usize,
) -> Result<(String, String, Range<usize>), String> {
    let mut offset = from;
    let mut doc = String::new();
    for line in text[from..].split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(doc_line) = trimmed.strip_prefix("///") {
            let doc_line = doc_line.trim_end();
            doc.push_str(doc_line.strip_prefix(' ').unwrap_or(doc_line));
            doc.push('\n');
        }
        if trimmed.starts_with("//") || trimmed.starts_with("#[") {
            offset += line.len();
            continue;
        }
        let fn_at = find_fn_keyword(line)
            .ok_or("a BUILD marker must stand right above a function")?;
        let after = &line[fn_at + 3..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let open = body_start(text, offset + fn_at)?;
        if text[offset + fn_at..open].contains("-> impl ") {
            return Err(format!(
                "`{name}` returns `impl Trait`, which `todo!()` cannot stand \
                 in for: mark another function"
            ));
        }
        let close = matching_brace(text, open)?;
        return Ok((name, doc, open..close + 1));
    }
    Err("a BUILD marker must stand right above a function".to_owned())
}

/// Where ` fn ` (or a line's leading `fn `) is in a signature line.
fn find_fn_keyword(line: &str) -> Option<usize> {
    if line.trim_start().starts_with("fn ") {
        return line.find("fn ");
    }
    line.find(" fn ").map(|at| at + 1)
}

/// The `{` that opens the body of the function whose `fn` is at `from`:
/// the first brace outside parentheses (a signature holds none otherwise).
fn body_start(text: &str, from: usize) -> Result<usize, String> {
    let mut depth = 0i32;
    for (at, c) in text[from..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '{' if depth == 0 => return Ok(from + at),
            ';' if depth == 0 => break,
            _ => {}
        }
    }
    Err("the marked function has no body".to_owned())
}

/// The `}` that closes the `{` at `open`, skipping braces in comments,
/// strings and character literals.
fn matching_brace(text: &str, open: usize) -> Result<usize, String> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(at);
                }
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                while at < bytes.len() && bytes[at] != b'\n' {
                    at += 1;
                }
            }
            b'"' => {
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
            }
            // A character literal (`'{'`, `'\n'`), not a lifetime (`'a`).
            b'\'' if bytes.get(at + 2) == Some(&b'\'') => at += 2,
            b'\'' if bytes.get(at + 1) == Some(&b'\\') => {
                at += 2;
                while at < bytes.len() && bytes[at] != b'\'' {
                    at += 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    Err("the marked function's body never closes".to_owned())
}

/// The type of the last unindented `impl` block before a method:
/// `impl<T> Future for JoinHandle<T> {` gives `JoinHandle`.
fn enclosing_impl(lines_before: &[&str]) -> Option<String> {
    let header = lines_before
        .iter()
        .rev()
        .find(|line| line.starts_with("impl"))?;
    let mut rest = header.strip_prefix("impl")?;
    if rest.starts_with('<') {
        rest = &rest[rest.find('>')? + 1..];
    }
    if let Some((_, target)) = rest.split_once(" for ") {
        rest = target;
    }
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Every marked function of the step in `step_dir`, in track order, checked:
/// numbered 1 to n with no gap, and each citing chapter `step`.
pub fn track(step_dir: &Path, step: u32) -> Result<Vec<Marked>, String> {
    let mut all = Vec::new();
    for file in rust_files(step_dir) {
        let text = fs::read_to_string(step_dir.join(&file))
            .map_err(|err| format!("could not read {file}: {err}"))?;
        all.extend(markers_in(&file, &text)?);
    }
    all.sort_by_key(|marked| marked.order);
    let total = all.len();
    for (index, marked) in all.iter().enumerate() {
        let at = format!("{}:{}", marked.file, marked.line);
        if marked.order != index + 1 || marked.total != total {
            return Err(format!(
                "{at}: marker {}/{} in a track of {total}: number them 1/{total} \
                 to {total}/{total}, each once",
                marked.order, marked.total
            ));
        }
        if marked.chapter != step {
            return Err(format!(
                "{at}: a step {step} marker cites chapter {}",
                marked.chapter
            ));
        }
    }
    Ok(all)
}

/// The `.rs` files under `step_dir/src`, relative to `step_dir`, sorted.
pub fn rust_files(step_dir: &Path) -> Vec<String> {
    crate::files_below(&step_dir.join("src"))
        .into_iter()
        .filter(|file| Path::new(file).extension().is_some_and(|ext| ext == "rs"))
        .map(|file| format!("src/{file}"))
        .collect()
}

/// `text` with the bodies of `marked` (all in this file) made `todo!()`,
/// in the line endings most of its lines have (CRLF in a Windows checkout).
pub fn blanked(text: &str, marked: &[&Marked]) -> String {
    let eol = crate::authors::usual_ending(text);
    let mut bodies: Vec<&&Marked> = marked.iter().collect();
    bodies.sort_by_key(|marked| marked.body.start);
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for marked in bodies {
        let line_start =
            text[..marked.body.start].rfind('\n').map_or(0, |at| at + 1);
        let indent: String = text[line_start..]
            .chars()
            .take_while(|c| *c == ' ')
            .collect();
        out.push_str(&text[from..marked.body.start]);
        let _ = write!(
            out,
            "{{{eol}{indent}    {}{eol}{indent}}}",
            marked.todo_call()
        );
        from = marked.body.end;
    }
    out.push_str(&text[from..]);
    out
}

/// Whether `body` (as `Marked::body` finds it) is exactly the blank that
/// `start` writes for `marked`, spaces and line breaks aside (an editor's
/// formatting, CRLF). Only such a body holds nothing of the participant's:
/// any other is their work, even with a `todo!()` left in it.
pub fn is_the_blank(marked: &Marked, body: &str) -> bool {
    let blank = format!("{{{}}}", marked.todo_call());
    without_spaces(body) == without_spaces(&blank)
}

/// Whether `body` is not finished: the blank, or work with a `todo!()`
/// still in its code (a match arm left for later). A `todo!()` that a
/// comment mentions is not one.
pub fn is_unfinished(marked: &Marked, body: &str) -> bool {
    is_the_blank(marked, body) || code_only(body).contains("todo!(")
}

/// `code` without its spaces and line breaks.
pub fn without_spaces(code: &str) -> String {
    code.split_whitespace().collect()
}

/// `code` without its comments, and with the text of its string literals
/// emptied: what the compiler runs, for a search that must not be fooled
/// by a comment (`// was a todo!()`) or a message.
fn code_only(code: &str) -> String {
    let mut kept = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                while chars.next_if(|next| *next != '\n').is_some() {}
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for next in chars.by_ref() {
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            ('"', _) => {
                kept.push('"');
                while let Some(next) = chars.next() {
                    match next {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                kept.push('"');
            }
            _ => kept.push(c),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "impl<T> Thing<T> {\n    \
        // BUILD 1/1: chapter 3, \"The code\"; test step03_a::b\n    \
        /// Docs with a } brace.\n    \
        pub fn call_at(\n        &self,\n        f: impl FnOnce() + 'static,\n    \
        ) {\n        let c = '}';\n        let s = \"{\";\n        \
        if true { f() }\n    }\n}\n";

    #[test]
    fn a_marker_finds_its_method_and_whole_body() {
        let found = markers_in("src/lib.rs", FILE).unwrap();
        assert_eq!(found.len(), 1);
        let marked = &found[0];
        assert_eq!(marked.function, "Thing::call_at");
        assert_eq!(marked.test, "step03_a::b");
        assert_eq!(marked.section, "The code");
        assert!(FILE[marked.body.clone()].ends_with("if true { f() }\n    }"));
    }

    #[test]
    fn blanking_keeps_the_signature_and_says_where_to_read() {
        let found = markers_in("src/lib.rs", FILE).unwrap();
        let out = blanked(FILE, &[&found[0]]);
        assert!(out.contains(
            ") {\n        todo!(\"write `Thing::call_at`: see chapter 3, \
             section \\\"The code\\\"\")\n    }\n}\n"
        ));
        let again = markers_in("src/lib.rs", &out).unwrap();
        assert!(is_the_blank(&again[0], &out[again[0].body.clone()]));
        assert_eq!(
            again[0].doc, "Docs with a } brace.\n",
            "start keeps the doc"
        );
    }

    #[test]
    fn a_marked_function_without_a_doc_comment_has_an_empty_doc() {
        let bare = "impl Ord for Timer {\n    \
            // BUILD 1/1: chapter 3, \"T\"; test a::b\n    \
            // ANCHOR: cmp\n    \
            #[inline]\n    \
            fn cmp(&self, other: &Self) -> Ordering {\n        \
            /// Not a doc comment: inside the body.\n        \
            todo!()\n    }\n}\n";
        let found = markers_in("src/lib.rs", bare).unwrap();
        assert_eq!(found[0].function, "Timer::cmp");
        assert_eq!(found[0].doc, "");
        let documented =
            bare.replace("#[inline]", "/// Orders.\n    ///\n    #[inline]");
        let found = markers_in("src/lib.rs", &documented).unwrap();
        assert_eq!(found[0].doc, "Orders.\n\n");
    }

    #[test]
    fn impl_trait_returns_and_malformed_markers_are_refused() {
        let returns = "// BUILD 1/1: chapter 8, \"T\"; test a::b\n\
                       fn f() -> impl Future<Output = ()> {\n    async {}\n}\n";
        assert!(
            markers_in("x.rs", returns)
                .unwrap_err()
                .contains("impl Trait")
        );
        let bad = "// BUILD one: chapter 8\nfn f() {}\n";
        assert!(markers_in("x.rs", bad).is_err());
    }

    /// The blank `start` writes for the one function of `FILE`, and that
    /// function's marker as found in `text`.
    fn blank_and_marker(text_of: impl Fn(&str) -> String) -> (String, Marked) {
        let found = markers_in("src/lib.rs", FILE).unwrap();
        let blank = blanked(FILE, &[&found[0]]);
        let text = text_of(&blank);
        let marked = markers_in("src/lib.rs", &text).unwrap().remove(0);
        (text, marked)
    }

    #[test]
    fn only_the_exact_blank_is_blank_and_formatting_changes_nothing() {
        let (text, marked) =
            blank_and_marker(|blank| blank.replace("    todo!", "todo!"));
        let body = &text[marked.body.clone()];
        assert!(is_the_blank(&marked, body), "{body}");
        assert!(is_unfinished(&marked, body));
        let (text, marked) =
            blank_and_marker(|blank| blank.replace("todo!(", "let x = 1;\n todo!("));
        let body = &text[marked.body.clone()];
        assert!(
            !is_the_blank(&marked, body),
            "a line written above the todo!()"
        );
        assert!(is_unfinished(&marked, body));
    }

    #[test]
    fn work_with_a_todo_left_for_later_is_unfinished_work() {
        let half = "{\n        match x {\n            1 => f(),\n                                _ => todo!(\"later\"),\n        }\n    }";
        let (text, marked) = blank_and_marker(|blank| {
            let found = markers_in("src/lib.rs", blank).unwrap();
            let mut text = blank.to_owned();
            text.replace_range(found[0].body.clone(), half);
            text
        });
        let body = &text[marked.body.clone()];
        assert!(!is_the_blank(&marked, body));
        assert!(is_unfinished(&marked, body));
    }

    #[test]
    fn a_todo_in_a_comment_or_a_string_is_not_unfinished() {
        let found = markers_in("src/lib.rs", FILE).unwrap();
        for body in [
            "{\n        // was a todo!() until I wrote it\n        f()\n    }",
            "{\n        /* the todo!( is gone */ f()\n    }",
            "{\n        println!(\"no todo!( here \\\" still\");\n    }",
        ] {
            assert!(!is_unfinished(&found[0], body), "{body}");
        }
    }
}
