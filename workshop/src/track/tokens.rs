//! Rust's tokens, as the compiler's own lexer finds them (the copy
//! rust-analyzer uses): what tells a `{` of the code from one in a block
//! comment (nested too), a raw string, a byte string or a character, and a
//! lifetime (`'a`) from a character (`'a'`), all of which a participant's
//! half-typed code has.

use std::ops::Range;

use ra_ap_rustc_lexer::{FrontmatterAllowed, LiteralKind, TokenKind, tokenize};

/// One token: what it is, and its bytes in the text.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub range: Range<usize>,
}

impl Token {
    /// A comment of any kind, doc comments included.
    pub fn is_comment(&self) -> bool {
        matches!(
            self.kind,
            TokenKind::LineComment { .. } | TokenKind::BlockComment { .. }
        )
    }

    /// Whitespace or a comment: nothing the compiler runs.
    pub fn is_trivia(&self) -> bool {
        self.is_comment() || self.kind == TokenKind::Whitespace
    }

    /// A string or character literal, of any kind.
    pub fn is_quoted(&self) -> bool {
        matches!(self.kind, TokenKind::Literal { kind, .. }
            if !matches!(kind, LiteralKind::Int { .. } | LiteralKind::Float { .. }))
    }
}

/// Every token of `text`, in order, whitespace and comments included; a
/// UTF-8 byte order mark (Notepad's) is whitespace.
pub(crate) fn tokens(text: &str) -> Vec<Token> {
    let skipped = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut at = skipped;
    let mut found = Vec::new();
    if skipped > 0 {
        found.push(Token {
            kind: TokenKind::Whitespace,
            range: 0..skipped,
        });
    }
    for token in tokenize(&text[skipped..], FrontmatterAllowed::No) {
        let start = at;
        at += token.len as usize;
        found.push(Token {
            kind: token.kind,
            range: start..at,
        });
    }
    found
}

/// `code` without its comments, and with its string and character
/// literals emptied (`""`): what the compiler runs, for a search that a
/// comment (`// was a todo!()`) or a message must not fool.
pub(crate) fn code_only(code: &str) -> String {
    let mut kept = String::with_capacity(code.len());
    for token in tokens(code) {
        if token.is_comment() {
            kept.push(' ');
        } else if token.is_quoted() {
            kept.push_str("\"\"");
        } else {
            kept.push_str(&code[token.range]);
        }
    }
    kept
}

/// `code`'s tokens as the compiler reads them, one string each, without
/// whitespace and comments: two texts that differ only in spacing, line
/// breaks, a byte order mark or comments give the same list.
pub(crate) fn significant(code: &str) -> Vec<&str> {
    tokens(code)
        .into_iter()
        .filter(|token| !token.is_trivia())
        .map(|token| &code[token.range])
        .collect()
}
