//! The form in which the tests pin a demo's trace (`LOOP_TRACE=1`, in
//! `tests/tests/traces.rs`, as `tests/tests/snapshots/trace-stepNN.snap`):
//! the parts they keep, and the numbers that change from run to run
//! redacted. One copy, for those tests and for `check`, which sets a
//! participant's trace beside the authors' in the same form.

use std::path::{Path, PathBuf};

/// Set by `cargo workshop check` in each test's environment: a pinned
/// trace's test stops the demo at its first line that differs, and fails
/// there. Unset, as by `cargo test`, the test reads the whole part, so
/// that a changed demo's `.snap.new` holds all of it for the authors.
pub const STOP_AT_A_DIFFERENCE: &str = "WORKSHOP_TRACE_STOPS_AT_A_DIFFERENCE";

/// The file where the tests pin step `n`'s trace, below the workspace at
/// `root`.
pub fn snapshot_path(root: &Path, n: u32) -> PathBuf {
    let name = format!("trace-step{n:02}.snap");
    root.join("tests")
        .join("tests")
        .join("snapshots")
        .join(name)
}

/// A snapshot file's contents, without insta's header (the lines between
/// the first two `---`), line endings made `\n`.
pub fn snapshot_contents(file: &str) -> String {
    let file = file.replace("\r\n", "\n");
    let body = file.strip_prefix("---\n").and_then(|rest| {
        let end = rest.find("\n---\n")?;
        Some(rest[end + "\n---\n".len()..].to_owned())
    });
    body.unwrap_or(file)
}

/// The titles of the parts a demo's output is in, each under its heading
/// `== title ==`, in order.
pub fn titles(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter_map(|line| line.strip_prefix("== ")?.strip_suffix(" =="))
        .collect()
}

/// The part of a demo's output under the heading `== title ==`, up to the
/// next heading, or `None` if there is no such heading. Its trailing
/// spaces and blank lines are left out, and it ends with one line break.
pub fn section(output: &str, title: &str) -> Option<String> {
    let heading = format!("== {title} ==");
    let rest = &output[output.find(&heading)?..];
    let end = rest[heading.len()..]
        .find("\n== ")
        .map_or(rest.len(), |at| at + heading.len() + 1);
    Some(format!("{}\n", rest[..end].trim_end()))
}

/// Whether `output` holds the part `title` whole: a heading follows it.
pub fn section_complete(output: &str, title: &str) -> bool {
    let heading = format!("== {title} ==");
    output
        .find(&heading)
        .is_some_and(|start| output[start + heading.len()..].contains("\n== "))
}

/// `trace` in the form the tests pin it: the lines naming a callback or a
/// poll that held the loop left out (a busy machine can hold any of them
/// 100 ms; the pinned scenes hold it for no time), the trace's times
/// (`[+1.234 s]`, `wait 0.500 s`, `waited 0.501 s`, `deadline +0.500 s`)
/// made `#.###`, and the durations the demos print with two decimals
/// (`took 1.20 s`) `#.##`. Fixed durations, one decimal (`sleep 0.5 s`),
/// stay.
pub fn redacted(trace: &str) -> String {
    trace
        .lines()
        .filter(|line| !line.contains(" held the loop "))
        .flat_map(|line| [redacted_line(line, true), "\n".to_owned()])
        .collect()
}

/// `output` (a demo's, untraced) with only the durations it measured
/// redacted, as in `redacted`: every line kept, and every other number.
pub fn durations_redacted(output: &str) -> String {
    output
        .split_inclusive('\n')
        .map(|line| redacted_line(line, false))
        .collect()
}

/// `line` with its measured numbers redacted: the trace's times only if
/// `trace_times`.
fn redacted_line(line: &str, trace_times: bool) -> String {
    let digits = |text: &str| text.bytes().take_while(u8::is_ascii_digit).count();
    let mut redacted = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        let before = &line[..line.len() - rest.len() + at];
        redacted.push_str(&rest[..at]);
        let whole = digits(&rest[at..]);
        let number = &rest[at..at + whole];
        rest = &rest[at + whole..];
        let Some(after_point) = rest.strip_prefix('.') else {
            redacted.push_str(number);
            continue;
        };
        let decimals = digits(after_point);
        let unit = &after_point[decimals..];
        let timed = (before.ends_with("[+") && unit.starts_with(" s]"))
            || ((ends_with_word(before, "wait ")
                || ends_with_word(before, "waited ")
                || before.ends_with("deadline +"))
                && unit.starts_with(" s"));
        let a_duration = !ends_in_a_word_char(before)
            && unit
                .strip_prefix(" s")
                .is_some_and(|after| !after.starts_with(is_word_char));
        match decimals {
            3 if timed && trace_times => redacted.push_str("#.###"),
            2 if a_duration => redacted.push_str("#.##"),
            _ => {
                redacted.push_str(number);
                continue;
            }
        }
        rest = unit;
    }
    redacted.push_str(rest);
    redacted
}

/// Whether `text` ends with `word`, and no letter or digit is just before
/// it.
fn ends_with_word(text: &str, word: &str) -> bool {
    text.strip_suffix(word)
        .is_some_and(|before| !ends_in_a_word_char(before))
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn ends_in_a_word_char(text: &str) -> bool {
    text.chars().next_back().is_some_and(is_word_char)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_s_times_are_redacted_and_fixed_durations_kept() {
        let trace = "== sleep 0.5 s ==\n\
                     [+0.000 s] turn 1: wait 0.500 s: the next deadline\n\
                     [+0.501 s] turn 1: waited 0.501 s\n\
                     [+0.501 s] turn 1: timer due: 0 (deadline +0.500 s)\n\
                     [+0.652 s] turn 1: callback 1 of 1 (timer 0) held the loop 0.150 s\n\
                     slept 0.5 s\n\
                     took 1.20 s: the sum; 12.345 s and x1.20 s and 1.20 sx stay\n";
        assert_eq!(
            redacted(trace),
            "== sleep 0.5 s ==\n\
             [+#.### s] turn 1: wait #.### s: the next deadline\n\
             [+#.### s] turn 1: waited #.### s\n\
             [+#.### s] turn 1: timer due: 0 (deadline +#.### s)\n\
             slept 0.5 s\n\
             took #.## s: the sum; 12.345 s and x1.20 s and 1.20 sx stay\n"
        );
        assert_eq!(redacted("await 0.500 s"), "await 0.500 s\n");
        assert_eq!(
            redacted("wait 0 s: a task was woken"),
            "wait 0 s: a task was woken\n"
        );
    }

    #[test]
    fn a_demo_s_durations_are_redacted_and_every_other_number_kept() {
        let output = "slept 0.5 s\n\
                      both done in 0.70 s, not 1.20 s\n\
                      [+0.501 s] turn 1: wait 0.500 s (held the loop 0.150 s)\n\
                      x1.20 s and 1.20 sx and 12.345 s\n\
                      no newline at the end: 0.70 s";
        assert_eq!(
            durations_redacted(output),
            "slept 0.5 s\n\
             both done in #.## s, not #.## s\n\
             [+0.501 s] turn 1: wait 0.500 s (held the loop 0.150 s)\n\
             x1.20 s and 1.20 sx and 12.345 s\n\
             no newline at the end: #.## s"
        );
    }

    #[test]
    fn a_snapshot_s_header_is_left_out() {
        let file =
            "---\r\nsource: tests/tests/traces.rs\r\n---\r\n== a ==\r\nline\r\n";
        assert_eq!(snapshot_contents(file), "== a ==\nline\n");
        assert_eq!(snapshot_contents("no header\n"), "no header\n");
    }

    #[test]
    fn a_part_runs_to_the_next_heading() {
        let output = "== a ==\none\n\n== b ==\ntwo\n";
        assert_eq!(titles(output), ["a", "b"]);
        assert_eq!(section(output, "a").as_deref(), Some("== a ==\none\n"));
        assert_eq!(section(output, "b").as_deref(), Some("== b ==\ntwo\n"));
        assert_eq!(section(output, "c"), None);
        assert!(section_complete(output, "a"));
        assert!(!section_complete(output, "b"));
    }
}
