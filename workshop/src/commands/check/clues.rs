//! What a reviewer adds to a failure: the test says what went wrong where
//! it showed, which is not always where the mistake is (a `RefCell`
//! "already borrowed" shows at the second borrow, in a function that is
//! right). Each note reads the participant's function, or knows the step,
//! and says where the mistake is.

use crate::step::Step;
use crate::track::Marked;

/// A reviewer's note on `message`, the failure of `test` shown for
/// `blamed`, or `None` when the message says enough by itself.
pub(super) fn note(
    step: &Step,
    blamed: &Marked,
    test: &str,
    message: &str,
) -> Option<String> {
    let written = step.read(&blamed.file);
    let function = written.get(blamed.whole()).unwrap_or_default();
    let above = &written[..blamed.whole().start.min(written.len())];
    let first_line = above.lines().count() + 1;
    borrow_held_by_a_condition(function, first_line, message)
        .or_else(|| known_mistake(&blamed.function, message))
        .or_else(|| a_print_to_a_stderr_nobody_reads(function, first_line, test))
}

/// Whether the written `blamed` holds a print to stderr, outside comments.
pub(super) fn prints_to_stderr(step: &Step, blamed: &Marked) -> bool {
    let written = step.read(&blamed.file);
    print_to_stderr(written.get(blamed.whole()).unwrap_or_default()).is_some()
}

/// Whether `test` is one of those that close or fill a server's stderr.
pub(super) fn closes_or_fills_stderr(test: &str) -> bool {
    test.contains("stderr")
}

/// The first print to stderr in `function`: its line's index and the
/// print's name (`dbg!`).
fn print_to_stderr(function: &str) -> Option<(usize, &'static str)> {
    function.lines().enumerate().find_map(|(at, line)| {
        let code = line.split("//").next().unwrap_or_default();
        TO_STDERR
            .iter()
            .find(|print| code.contains(*print))
            .map(|print| (at, print.trim_end_matches('(')))
    })
}

/// The prints that write to stderr.
const TO_STDERR: [&str; 3] = ["dbg!(", "eprintln!(", "eprint!("];

/// A `dbg!` or `eprintln!` in a function a server runs, in a test whose
/// server's stderr is closed or full: the print panics when it cannot
/// write, or waits for ever on a full pipe, and the server is gone or
/// stuck (the loop's own trace loses lines there instead).
fn a_print_to_a_stderr_nobody_reads(
    function: &str,
    first_line: usize,
    test: &str,
) -> Option<String> {
    if !closes_or_fills_stderr(test) {
        return None;
    }
    let (at, print) = print_to_stderr(function)?;
    Some(format!(
        "Your `{print}` at line {line} writes to stderr, which this test \
         closes or fills, as when nobody reads a server's stderr: a `{print}` \
         that cannot write panics, or waits for ever on a full pipe, and \
         takes the server with it. Take it out (the other tests decide on the \
         function), then check again.",
        line = first_line + at,
    ))
}

/// The borrows that `RefCell` says are still held, in its words before
/// and since Rust 1.83 ("`RefCell` already borrowed").
const STILL_BORROWED: [&str; 3] = [
    "already borrowed",
    "already mutably borrowed",
    "BorrowMutError",
];

/// A `while let`, `if let` or `match` whose condition borrows a `RefCell`:
/// the temporary lives until the end of the whole statement, so whatever
/// the body calls that borrows the cell again panics there, not here.
/// `first_line` is the line of `function`'s first in its file.
fn borrow_held_by_a_condition(
    function: &str,
    first_line: usize,
    message: &str,
) -> Option<String> {
    if !STILL_BORROWED.iter().any(|sign| message.contains(sign)) {
        return None;
    }
    function.lines().enumerate().find_map(|(at, line)| {
        let code = line.trim();
        let keyword = ["while let ", "if let ", "match "]
            .into_iter()
            .find(|keyword| code.starts_with(keyword))?;
        let condition = code.strip_suffix('{').unwrap_or(code).trim_end();
        let (at_call, method) = [".borrow_mut()", ".borrow()"]
            .into_iter()
            .find_map(|method| Some((condition.find(method)?, method)))?;
        // What is borrowed: the expression just before the call.
        let borrowed = condition[..at_call]
            .rsplit([' ', '=', '(', '!', '&'])
            .next()
            .unwrap_or_default();
        let borrow = format!("{borrowed}{method}");
        Some(format!(
            "The `{keyword}` at line {line} keeps its borrow `{borrow}` for its \
             whole body: a temporary in the condition of a `{keyword}` lives \
             until the end of the statement, so whatever the body calls that \
             borrows the same cell again panics \"already borrowed\", at that \
             call's line. Take the value out in a statement or a function of \
             its own, so the borrow ends before the body runs.",
            keyword = keyword.trim_end(),
            line = first_line + at,
        ))
    })
}

/// Mistakes whose failure shows far from them, which `block_on` says as a
/// task dropped: `report` writing over an outcome already reported, and
/// `run_and_report` ending without reporting what its future returned.
fn known_mistake(function: &str, message: &str) -> Option<String> {
    if !message.contains("dropped before it finished") {
        return None;
    }
    let note = match function {
        "Reporter::report" => {
            "The task did finish here: `report` left its outcome, and then the \
             reporter's drop reported `Cancelled` over the outcome already \
             reported. Only the first report counts: a report once the task has \
             ended (the reporter's drop, after the task reported) must do nothing."
        }
        "run_and_report" => {
            "The task did finish here, but its outcome never reached its handle: \
             when `run_and_report` ends without reporting what the future gave \
             (a value as well as a panic), the reporter's drop reports \
             `Cancelled`, which `block_on` reads as its task dropped unfinished. \
             Report every outcome, `Ok` as well as `Err`, through `task.reporter`."
        }
        _ => return None,
    };
    Some(note.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What step 2's tests printed for a `run` that takes each callback
    /// in its `while let` (`cargo workshop check 2`, Rust 1.95).
    const CALL_SOON_BORROWED: &str = "thread \
        'a_callback_scheduled_by_a_callback_runs_after_those_already_queued' \
        panicked at step02-task-queue/src/lib.rs:49:20:\nRefCell already borrowed";

    #[test]
    fn a_borrow_held_by_a_while_let_is_named_at_its_line() {
        let run = "    pub fn run(&self) {\n        \
                   while let Some(callback) = self.ready.borrow_mut().pop_front() {\n            \
                   callback(self);\n        }\n    }";
        let note = borrow_held_by_a_condition(run, 56, CALL_SOON_BORROWED)
            .expect("a note on the while let");
        assert!(
            note.starts_with(
                "The `while let` at line 57 keeps its borrow \
                 `self.ready.borrow_mut()` for its whole body"
            ),
            "{note}"
        );
        let taken_first = "    pub fn run(&self) {\n        \
                           while let Some(callback) = self.next_ready() {\n";
        assert_eq!(
            borrow_held_by_a_condition(taken_first, 56, CALL_SOON_BORROWED),
            None
        );
        assert_eq!(
            borrow_held_by_a_condition(run, 56, "assertion failed"),
            None,
            "no note where nothing was borrowed twice"
        );
    }

    #[test]
    fn a_dbg_in_a_server_with_a_closed_stderr_is_named_at_its_line() {
        let wait = "    fn wait_for_io(&self) {\n        for event in events.iter() {\n            \
                    dbg!(event.token());\n        }\n    }";
        let closed = "step04_echo_server::a_closed_stderr_pipe_costs_no_client_when_descriptors_run_out";
        let note =
            a_print_to_a_stderr_nobody_reads(wait, 226, closed).expect("a note");
        assert!(
            note.starts_with("Your `dbg!` at line 228 writes to stderr"),
            "{note}"
        );
        assert_eq!(
            a_print_to_a_stderr_nobody_reads(
                wait,
                226,
                "step04_loop::a_timer_fires"
            ),
            None
        );
        let commented = wait.replace("dbg!", "// dbg!");
        assert_eq!(
            a_print_to_a_stderr_nobody_reads(&commented, 226, closed),
            None
        );
    }

    #[test]
    fn a_report_over_a_reported_outcome_is_named_as_the_drop_that_writes_it() {
        // What step 6's `block_on` said for a `report` without its guard.
        let message = "thread 'main' panicked at step06-spawn-join/src/event_loop.rs:\
                       447:39:\nblock_on's task was dropped before it finished: is a \
                       pending task kept for its next poll?";
        let note = known_mistake("Reporter::report", message).expect("a note");
        assert!(
            note.contains("reported `Cancelled` over the outcome already reported"),
            "{note}"
        );
        assert_eq!(known_mistake("EventLoop::poll_task", message), None);
    }

    #[test]
    fn a_run_and_report_that_loses_the_value_is_named_as_the_missing_report() {
        // What step 6's `block_on` said for a `run_and_report` that reports
        // only a panic.
        let message = "block_on's task was dropped before it finished: is a \
                       pending task kept for its next poll?";
        let note = known_mistake("run_and_report", message).expect("a note");
        assert!(note.contains("Report every outcome"), "{note}");
        assert_eq!(
            known_mistake("run_and_report", "still running after 5s"),
            None
        );
    }
}
