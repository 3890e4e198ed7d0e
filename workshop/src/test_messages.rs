//! Test messages made readable for `cargo workshop check`: a failed
//! `assert_eq!` on two lists of 2,000 numbers prints 22 KB; what a
//! participant needs is where the two lists part.

/// How a failed snapshot's message begins when the output pinned is all
/// still there, in order, and lines were only added to it (then listed,
/// one a line, each after a `+`): what a participant's own `dbg!` or
/// `eprintln!` does to a demo's output.
pub const ONLY_ADDED_LINES: &str = "The step printed every line the chapter \
     shows, and more (+ added):";

/// How a failed snapshot's message begins when the output pinned differs
/// otherwise (then its first changed lines, each after a `-` for the
/// chapter's or a `+` for the step's, between unchanged ones): short
/// enough for an 80-column terminal, indented.
pub const OTHER_LINES: &str = "The step printed other lines than the chapter \
     (- the chapter, + now):";

/// Lines longer than this are shortened.
const LONG: usize = 160;

/// How many items around the first difference a shortened list shows.
const AROUND: usize = 3;

/// `message` with its long `left:`/`right:` lists cut to the items around
/// their first difference (and a line saying where it is), and any other
/// long line cut short.
pub fn shorten(message: &str) -> String {
    let mut lines = message.lines().peekable();
    let mut out = Vec::new();
    while let Some(line) = lines.next() {
        let right = lines.peek().and_then(|next| value_after(next, "right:"));
        match (value_after(line, "left:"), right) {
            (Some(left), Some(right)) if left.len() > LONG || right.len() > LONG => {
                out.extend(compared(left, right));
                lines.next();
            }
            _ if is_prose(line) => out.push(line.to_owned()),
            _ => out.push(cut(line)),
        }
    }
    out.join("\n")
}

/// `message` without what unwinding from its first panic set off: a
/// destructor that reached the `todo!()` of a function not yet written,
/// and Rust's "panic in a destructor during cleanup", which aborts. `None`
/// when there is no such noise, or when a later panic is the participant's
/// own (a written destructor that panics is news).
pub fn without_cleanup_noise(message: &str) -> Option<String> {
    const CLEANUP: &str = "panic in a destructor during cleanup";
    if !message.contains(CLEANUP) {
        return None;
    }
    let starts_a_panic =
        |line: &str| line.starts_with("thread '") && line.contains(" panicked at ");
    let mut panics: Vec<Vec<&str>> = Vec::new();
    for line in message.lines() {
        match panics.last_mut() {
            Some(panic) if !starts_a_panic(line) => panic.push(line),
            _ => panics.push(vec![line]),
        }
    }
    let noise = |panic: &Vec<&str>| {
        panic.iter().any(|line| {
            line.contains(CLEANUP) || line.starts_with("not yet implemented")
        })
    };
    let (first, later) = panics.split_first()?;
    if later.is_empty() || !later.iter().all(noise) {
        return None;
    }
    Some(first.join("\n").trim_end().to_owned())
}

/// The value printed after `label` on an assertion's line, if it is one.
fn value_after<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    line.trim_start().strip_prefix(label).map(str::trim)
}

/// The `left:`/`right:` lines of a failed comparison, shortened to where
/// the two differ.
fn compared(left: &str, right: &str) -> Vec<String> {
    let (Some(lefts), Some(rights)) = (items(left), items(right)) else {
        return vec![
            cut(&format!("  left: {left}")),
            cut(&format!(" right: {right}")),
        ];
    };
    let first = lefts
        .iter()
        .zip(&rights)
        .position(|(l, r)| l != r)
        .unwrap_or(lefts.len().min(rights.len()));
    let at =
        |list: &[&str]| list.get(first).copied().unwrap_or("nothing").to_owned();
    vec![
        format!("  left: {}", window(&lefts, first)),
        format!(" right: {}", window(&rights, first)),
        format!(
            "  (the lists have {} and {} items; the first difference is at \
             index {first}: left has {}, right has {})",
            lefts.len(),
            rights.len(),
            at(&lefts),
            at(&rights)
        ),
    ]
}

/// The items of `list` around `index`, as `[… a, b, c …]`.
fn window(list: &[&str], index: usize) -> String {
    let from = index.saturating_sub(AROUND);
    let to = (index + AROUND + 1).min(list.len());
    format!(
        "[{}{}{}]",
        if from > 0 { "…, " } else { "" },
        list[from..to].join(", "),
        if to < list.len() { ", …" } else { "" }
    )
}

/// The top-level items of a Debug-printed list, `[a, (b, c), "d, e"]`, or
/// `None` if `value` is not one.
fn items(value: &str) -> Option<Vec<&str>> {
    let inner = value.strip_prefix('[')?.strip_suffix(']')?;
    let mut found = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0i32, false, false, 0);
    for (at, c) in inner.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '(' | '[' | '{' if !in_string => depth += 1,
            ')' | ']' | '}' if !in_string => depth -= 1,
            ',' if !in_string && depth == 0 => {
                found.push(inner[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    let last = inner[start..].trim();
    if !last.is_empty() {
        found.push(last);
    }
    Some(found)
}

/// Whether a line reads as sentences (a test's explanation, kept whole)
/// rather than as a value (a Debug dump, cut): most of its words are
/// words, not numbers, brackets and field names.
fn is_prose(line: &str) -> bool {
    const LONGEST: usize = 1000;
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let words = tokens
        .iter()
        .map(|token| token.trim_end_matches([',', '.', ':', ';', ')', '?', '!']))
        .map(|token| token.trim_start_matches(['(', '"', '`']))
        .filter(|token| token.len() > 1 && token.chars().all(char::is_alphabetic))
        .count();
    line.len() <= LONGEST && words * 10 >= tokens.len() * 6
}

/// A line cut to `LONG` characters, saying how many it had.
fn cut(line: &str) -> String {
    let count = line.chars().count();
    if count <= LONG {
        return line.to_owned();
    }
    let kept: String = line.chars().take(LONG).collect();
    format!("{kept}… ({} more characters)", count - LONG)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(count: u32, changed_at: Option<u32>) -> String {
        let all: Vec<String> = (0..count)
            .map(|n| if Some(n) == changed_at { 9999 } else { n }.to_string())
            .collect();
        format!("[{}]", all.join(", "))
    }

    #[test]
    fn two_long_lists_show_their_first_difference() {
        let message = format!(
            "assertion `left == right` failed: timers fired in deadline order\n  \
             left: {}\n right: {}",
            numbers(2000, Some(1500)),
            numbers(2000, None)
        );
        let short = shorten(&message);
        assert!(short.len() < 400, "{short}");
        assert!(
            short.contains("first difference is at index 1500"),
            "{short}"
        );
        assert!(short.contains("left has 9999, right has 1500"), "{short}");
        assert!(
            short.contains("  left: […, 1497, 1498, 1499, 9999, 1501"),
            "{short}"
        );
    }

    #[test]
    fn a_list_that_stops_short_says_so() {
        let message = format!(
            "  left: {}\n right: {}",
            numbers(300, None),
            numbers(200, None)
        );
        let short = shorten(&message);
        assert!(short.contains("have 300 and 200 items"), "{short}");
        assert!(short.contains("left has 200, right has nothing"), "{short}");
    }

    #[test]
    fn an_explanation_is_kept_whole_and_a_long_value_cut() {
        let explanation = "timer 1973 fired where timer 34 should have (at place 1 \
             of 2000): both are due at +0 ms, and timer 34 was scheduled first: \
             equal deadlines fire in the order they were scheduled";
        assert_eq!(shorten(explanation), explanation);
        let dump = format!(
            "called `Result::unwrap()` on an `Err` value: Custom {{ kind: Other, \
             error: LostWakeUp {{ tasks: [{}] }} }}",
            "StuckTask { id: 0, why: NoWakerLeft }, ".repeat(5)
        );
        assert!(
            shorten(&dump).contains("more characters"),
            "{}",
            shorten(&dump)
        );
    }

    /// What a test printed, as `check` keeps it, when its first panic
    /// unwound into a destructor still at its `todo!()` (step 6 started,
    /// Rust 1.95): the second panic aborts the process.
    const ABORTED_IN_CLEANUP: &str = "\
thread 'a_joiner_gets_the_panic_message_of_its_child' (4410) panicked at step06-spawn-join/src/join.rs:80:9:
not yet implemented: write `JoinHandle::poll`: see chapter 6, section \"The idea\"
thread 'a_joiner_gets_the_panic_message_of_its_child' (4410) panicked at step06-spawn-join/src/join.rs:176:9:
not yet implemented: write `Reporter::report`: see chapter 6, section \"The idea\"
thread 'a_joiner_gets_the_panic_message_of_its_child' (4410) panicked at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:233:5:
panic in a destructor during cleanup
thread caused non-unwinding panic. aborting.";

    #[test]
    fn a_todo_reached_by_a_destructor_while_unwinding_is_left_out() {
        let cleaned =
            without_cleanup_noise(ABORTED_IN_CLEANUP).expect("noise found");
        assert_eq!(
            cleaned,
            "thread 'a_joiner_gets_the_panic_message_of_its_child' (4410) panicked \
             at step06-spawn-join/src/join.rs:80:9:\nnot yet implemented: write \
             `JoinHandle::poll`: see chapter 6, section \"The idea\""
        );
        let own_destructor = ABORTED_IN_CLEANUP.replace(
            "not yet implemented: write `Reporter::report`",
            "the reporter is poisoned",
        );
        assert_eq!(
            without_cleanup_noise(&own_destructor),
            None,
            "a written destructor's panic is the participant's: kept"
        );
        assert_eq!(
            without_cleanup_noise("thread 'x' panicked at a.rs:1:1:\nboom"),
            None
        );
    }

    #[test]
    fn short_messages_and_nested_items_are_kept_whole() {
        assert_eq!(
            shorten("  left: [1, 2]\n right: [1, 3]"),
            "  left: [1, 2]\n right: [1, 3]"
        );
        assert_eq!(
            items(r#"[(1, "a, b"), [2, 3]]"#).unwrap(),
            [r#"(1, "a, b")"#, "[2, 3]"]
        );
    }
}
