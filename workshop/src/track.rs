//! The `// BUILD` markers of a step's track, and blanking the functions
//! they mark. A marker is one comment line right above a function's doc
//! comment:
//!
//! ```text
//! // BUILD 2/4: chapter 3, "The code"; test step03_timers::a_deadline_fires
//! ```
//!
//! the function's place in the track, the section of the chapter that
//! explains it, and the test that fails while it is blank.

use std::fmt::Write as _;
use std::fs;
use std::ops::Range;
use std::path::Path;

use ra_ap_rustc_lexer::{DocStyle, TokenKind};
use tokens::Token;

pub(crate) mod tokens;

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
    /// The heading of the chapter's section that explains the function.
    pub section: String,
    /// The test that fails while the function is blank: `file::name`.
    pub test: String,
    /// `Type::name` for a method, `name` for a free function.
    pub function: String,
    /// Its doc comment, `///` and one space taken off each line.
    pub doc: String,
    /// The body's bytes in the file, braces included.
    pub body: Range<usize>,
    /// The bytes between the marker's line and the body: doc comment,
    /// attributes, signature, which a participant may write too.
    pub signature: Range<usize>,
}

impl Marked {
    /// The function as the participant may write it: signature and body.
    pub fn whole(&self) -> Range<usize> {
        self.signature.start..self.body.end
    }

    /// The line of the function's `fn` keyword in `text`, its file: where
    /// every command names it, as an editor's "go to line" shows it.
    pub fn fn_line(&self, text: &str) -> usize {
        let signature = text.get(self.signature.clone()).unwrap_or_default();
        self.line + 1 + signature[..fn_offset(text, self)].matches('\n').count()
    }

    /// The call that stands in for the body while the participant writes it:
    /// one string literal, escaped, whatever the marker's section holds, so
    /// that a blanked file always holds the same functions.
    pub fn todo_call(&self) -> String {
        let says = format!(
            "write `{}`: see chapter {}, section \"{}\"",
            self.function, self.chapter, self.section
        );
        format!("todo!({says:?})")
    }

    /// What a test's panic message says while this function is blank.
    pub fn todo_message(&self) -> String {
        format!("write `{}`:", self.function)
    }
}

/// The marker's fields in `line`, the function left to find; `None` for a
/// line that is not a marker.
fn parse_marker(file: &str, line: &str) -> Option<Result<Marked, String>> {
    let rest = line.trim_start().strip_prefix(MARKER)?;
    let fields = || {
        let (place, rest) = rest.split_once(": chapter ")?;
        let (order, total) = place.split_once('/')?;
        let (chapter, rest) = rest.split_once(", \"")?;
        let (section, test) = rest.split_once("\"; test ")?;
        let test = test.trim();
        (test.contains("::") && !test.contains(' ')).then_some(())?;
        Some(Marked {
            file: file.to_owned(),
            line: 0,
            order: order.parse().ok()?,
            total: total.parse().ok()?,
            chapter: chapter.parse().ok()?,
            section: section.to_owned(),
            test: test.to_owned(),
            function: String::new(),
            doc: String::new(),
            body: 0..0,
            signature: 0..0,
        })
    };
    Some(fields().ok_or_else(|| {
        format!(
            "a BUILD marker reads `// BUILD k/n: chapter N, \"Section\"; test \
             file::name`, not `{}`",
            line.trim()
        )
    }))
}

/// What keeps `cargo workshop` from finding the marked functions of a file.
pub(crate) enum Problem {
    /// A marker line that does not parse, or stands above no function.
    Marker(String),
    /// A marked function whose braces do not pair up (a half-typed body):
    /// where it ends cannot be told, so nothing may blank or replace it.
    Unbalanced(String),
}

/// The marked functions in one file's text, in file order.
pub fn markers_in(file: &str, text: &str) -> Result<Vec<Marked>, String> {
    scan(file, text).map_err(|problem| match problem {
        Problem::Marker(said) | Problem::Unbalanced(said) => said,
    })
}

/// The marked functions in one file's text, or what keeps them from being
/// found.
pub(crate) fn scan(file: &str, text: &str) -> Result<Vec<Marked>, Problem> {
    let tokens = tokens::tokens(text);
    let mut found = Vec::new();
    let mut start = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (index, line) in lines.iter().enumerate() {
        let (at, end) = (
            start + line.len() - line.trim_start().len(),
            start + line.len(),
        );
        start = end;
        // A `//` comment of its own, not a line of a string or a block comment.
        let own_comment = |_: &_| {
            let index = tokens.partition_point(|token| token.range.start < at);
            tokens.get(index).is_some_and(|token| {
                token.range.start == at
                    && matches!(token.kind, TokenKind::LineComment { .. })
            })
        };
        let Some(fields) = parse_marker(file, line).filter(own_comment) else {
            continue;
        };
        let at_line = |err| Problem::Marker(format!("{file}:{}: {err}", index + 1));
        let mut marked = fields.map_err(at_line)?;
        let function = marked_function(text, &tokens, end).map_err(at_line)?;
        marked.function = match enclosing_impl(&lines[..index]) {
            Some(owner) if line.starts_with(' ') => {
                format!("{owner}::{}", function.name)
            }
            _ => function.name,
        };
        let Some(body) = function.body else {
            return Err(unpaired(file, text, &marked.function, function.fn_at));
        };
        marked.line = index + 1;
        marked.doc = function.doc;
        marked.signature = end..body.start;
        marked.body = body;
        found.push(marked);
    }
    for (index, marked) in found.iter().enumerate() {
        let swallows_the_next = found
            .get(index + 1)
            .is_some_and(|next| next.signature.start <= marked.body.end);
        if swallows_the_next || !ends_where_it_should(text, &tokens, marked) {
            let fn_at = marked.signature.start + fn_offset(text, marked);
            return Err(unpaired(file, text, &marked.function, fn_at));
        }
    }
    Ok(found)
}

/// What to say about `function`, whose braces do not pair up.
fn unpaired(file: &str, text: &str, function: &str, fn_at: usize) -> Problem {
    let line = text[..fn_at.min(text.len())].matches('\n').count() + 1;
    Problem::Unbalanced(format!(
        "`{function}` ({file}:{line}) does not end where it should: its `{{` \
         and `}}` do not pair up (a `{{` still open, or a `}}` too many), so \
         `cargo workshop` cannot tell where it ends and changes nothing in \
         its file. Close it as the compiler says (`cargo build`), then run \
         this again."
    ))
}

/// Whether `marked`'s body, as the braces pair, ends as a function's does:
/// its `}` no less indented than its `fn` line (not the `impl`'s `}`), and
/// no line inside it at the function's own indentation that starts the next
/// item (`fn`, `pub`, `impl`, `#[`, `///`), as a body that ran on would.
fn ends_where_it_should(text: &str, tokens: &[Token], marked: &Marked) -> bool {
    let fn_indent =
        indentation(text, marked.signature.start + fn_offset(text, marked));
    if indentation(text, marked.body.end - 1) < fn_indent {
        return false;
    }
    let first_of_line = |token: &&Token| {
        let start = token.range.start;
        start == 0 || text[..start].trim_end_matches([' ', '\t']).ends_with('\n')
    };
    !tokens
        .iter()
        .filter(|token| {
            token.range.start > marked.body.start
                && token.range.end < marked.body.end
        })
        .filter(first_of_line)
        .any(|token| {
            let word = &text[token.range.clone()];
            indentation(text, token.range.start) <= fn_indent
                && (["fn", "pub", "impl"].contains(&word)
                    || token.kind == TokenKind::Pound
                    || word.starts_with("///"))
        })
}

/// The byte of `marked`'s `fn` keyword, from the start of its signature.
fn fn_offset(text: &str, marked: &Marked) -> usize {
    let signature = text.get(marked.signature.clone()).unwrap_or_default();
    tokens::tokens(signature)
        .iter()
        .find(|token| {
            token.kind == TokenKind::Ident && &signature[token.range.clone()] == "fn"
        })
        .map_or(0, |token| token.range.start)
}

/// How many spaces and tabs open the line that holds byte `at`.
fn indentation(text: &str, at: usize) -> usize {
    let line_start = text[..at].rfind('\n').map_or(0, |nl| nl + 1);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .count()
}

/// A marked function as its tokens show it.
struct Found {
    name: String,
    doc: String,
    /// The byte of its `fn` keyword.
    fn_at: usize,
    /// Its body, braces included; `None` when its `{` never closes.
    body: Option<Range<usize>>,
}

/// The function whose doc comment, attributes or signature start at byte
/// `from`: its name, doc comment, and body as the braces pair.
fn marked_function(
    text: &str,
    tokens: &[Token],
    from: usize,
) -> Result<Found, String> {
    const NOT_A_FUNCTION: &str = "a BUILD marker must stand right above a function";
    let mut doc = String::new();
    let mut brackets = 0usize;
    let mut at = tokens.partition_point(|token| token.range.start < from);
    let fn_at = loop {
        let token = tokens.get(at).ok_or(NOT_A_FUNCTION)?;
        at += 1;
        let word = &text[token.range.clone()];
        match token.kind {
            TokenKind::LineComment {
                doc_style: Some(DocStyle::Outer),
            } if brackets == 0 => {
                let line = word[3..].trim_end();
                doc.push_str(line.strip_prefix(' ').unwrap_or(line));
                doc.push('\n');
            }
            _ if token.is_trivia() => {}
            // An attribute, `#[inline]`: skipped whole.
            TokenKind::Pound => {}
            TokenKind::OpenBracket => brackets += 1,
            TokenKind::CloseBracket => brackets = brackets.saturating_sub(1),
            _ if brackets > 0 => {}
            TokenKind::Ident if word == "fn" => break token.range.start,
            // `pub(crate) const async unsafe extern "C"`, before the `fn`.
            TokenKind::Ident
            | TokenKind::OpenParen
            | TokenKind::CloseParen
            | TokenKind::Literal { .. } => {}
            _ => return Err(NOT_A_FUNCTION.to_owned()),
        }
    };
    let name = tokens[at..]
        .iter()
        .find(|token| token.kind == TokenKind::Ident)
        .map(|token| text[token.range.clone()].to_owned())
        .unwrap_or_default();
    let open = body_start(tokens, at)?;
    if text[fn_at..open].contains("-> impl ") {
        return Err(format!(
            "`{name}` returns `impl Trait`, which `todo!()` cannot stand \
             in for: mark another function"
        ));
    }
    let body = matching_brace(tokens, open).map(|close| open..close);
    Ok(Found {
        name,
        doc,
        fn_at,
        body,
    })
}

/// The byte of the `{` that opens the body of the function whose name
/// follows token `from`: the first brace outside parentheses.
fn body_start(tokens: &[Token], from: usize) -> Result<usize, String> {
    let mut depth = 0i32;
    for token in &tokens[from..] {
        match token.kind {
            TokenKind::OpenParen => depth += 1,
            TokenKind::CloseParen => depth -= 1,
            TokenKind::OpenBrace if depth == 0 => return Ok(token.range.start),
            TokenKind::Semi if depth == 0 => break,
            _ => {}
        }
    }
    Err("the marked function has no body".to_owned())
}

/// The end of the `}` that closes the `{` at byte `open` (braces in
/// comments and literals are no tokens of their own); `None` if none does.
fn matching_brace(tokens: &[Token], open: usize) -> Option<usize> {
    let from = tokens.partition_point(|token| token.range.start < open);
    let mut depth = 0usize;
    for token in &tokens[from..] {
        match token.kind {
            TokenKind::OpenBrace => depth += 1,
            TokenKind::CloseBrace => {
                depth -= 1;
                if depth == 0 {
                    return Some(token.range.end);
                }
            }
            _ => {}
        }
    }
    None
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

/// Every marked function of the step in `step_dir`, in track order, checked
/// by `numbered`.
pub fn track(step_dir: &Path, step: u32) -> Result<Vec<Marked>, String> {
    let mut all = Vec::new();
    for file in rust_files(step_dir) {
        let text = fs::read_to_string(step_dir.join(&file))
            .map_err(|err| format!("could not read {file}: {err}"))?;
        all.extend(markers_in(&file, &text)?);
    }
    numbered(all, step)
}

/// `all`, the marked functions of step `step`, in track order, checked:
/// numbered 1 to n with no gap, and each citing chapter `step`.
pub fn numbered(mut all: Vec<Marked>, step: u32) -> Result<Vec<Marked>, String> {
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
        .filter(|file| is_rust(file))
        .map(|file| format!("src/{file}"))
        .collect()
}

/// Whether `file` is a Rust source file.
pub fn is_rust(file: &str) -> bool {
    Path::new(file).extension().is_some_and(|ext| ext == "rs")
}

/// `text` with the bodies of `marked` (all in this file) made `todo!()`,
/// in the line endings most of its lines have.
pub fn blanked(text: &str, marked: &[&Marked]) -> String {
    let eol = crate::authors::usual_ending(text);
    let mut bodies = marked.to_vec();
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

/// Whether `body` is exactly the blank that `start` writes for `marked`,
/// spaces and line breaks aside (an editor's formatting, CRLF): only such a
/// body holds nothing of the participant's.
pub fn is_the_blank(marked: &Marked, body: &str) -> bool {
    let blank = format!("{{{}}}", marked.todo_call());
    without_spaces(body) == without_spaces(&blank)
}

/// Whether `body` is not finished: the blank, or work with a `todo!()`
/// still in its code; one a comment or a string mentions is not one.
pub fn is_unfinished(marked: &Marked, body: &str) -> bool {
    is_the_blank(marked, body) || tokens::code_only(body).contains("todo!(")
}

/// `code` without its spaces and line breaks.
pub fn without_spaces(code: &str) -> String {
    code.split_whitespace().collect()
}

#[cfg(test)]
mod tests;
