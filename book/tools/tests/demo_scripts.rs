//! The teacher's live demo scripts (`book/src/teacher.md`, "Live demo
//! scripts") run as they are written, so that a script never quotes a line
//! its step no longer prints, nor tells the teacher to type a command the
//! steps do not take.
//!
//! A script is declared like a walk-through's route: a line
//! `<!-- demo: CHAPTER -->`, then a table
//! `| min | type | point at | what the room sees, and why it matters |`.
//! In "type", each piece in backticks is, in order, a command (`cargo run
//! -p stepNN [-- ARGS]`, `LOOP_TRACE=1` before it for the trace, or `echo
//! $?`), a key (`Ctrl-D`, `Ctrl-C`), or else a line typed into the program
//! that runs in that terminal; the words `terminal N` between pieces say
//! where the pieces after them go, and a row starts in the terminal the row
//! before it typed in (terminal 1 at first). In "point at", each piece in
//! backticks is a line that terminal shows, in the order it shows them,
//! after the row's typing: a time that changes from run to run written
//! `#.##` (or `#.###` in the trace), as the snapshots pin it, and a trace
//! line without its `[+#.### s]` time stamp.
//!
//! Each command runs the step's binary built by the test harness, as
//! `cargo run` would: a demo to its end; `serve` as the harness' own
//! `RunningServer`, on a port of 127.0.0.1 the system picks (its address
//! shown as `127.0.0.1:3000`, the default the room's server takes), until
//! `Ctrl-C`; `client` talking to that server until `Ctrl-D`. Every wait is
//! bounded, and every program is stopped when its script ends, passed or
//! failed.

use std::collections::BTreeMap;

use book_tools::book::{book_src, read_text, step_folders, step_number};
use book_tools::plan;

#[path = "demo_scripts/terminals.rs"]
mod terminals;

use terminals::Demo;

/// The line before a script's table in `teacher.md`: the chapter follows.
const DEMO_OPENING: &str = "<!-- demo: ";

/// A live demo's script: its chapter and its rows, in order.
#[derive(Debug)]
struct Script {
    chapter: String,
    rows: Vec<Row>,
}

/// One row of a script.
#[derive(Debug)]
struct Row {
    /// The row as written, for the messages.
    text: String,
    minutes: usize,
    /// What to do, each in its terminal, in order.
    actions: Vec<(u32, Action)>,
    /// The lines to point at, each in its terminal, in order.
    quotes: Vec<(u32, String)>,
    why: String,
}

/// One thing the teacher types.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    Run(Run),
    /// `echo $?`: the last program's exit code.
    EchoStatus,
    /// A line typed into the program that runs.
    Type(String),
    /// The end of input: a client closes its sending side and ends.
    CtrlD,
    /// Stops the program that runs (a server).
    CtrlC,
}

/// A command that runs a step: `[LOOP_TRACE=1] cargo run -p PACKAGE [--
/// ARGS]`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    traced: bool,
    package: String,
    args: Vec<String>,
}

impl Run {
    fn command_line(&self) -> String {
        let mut line = String::new();
        if self.traced {
            line.push_str("LOOP_TRACE=1 ");
        }
        line.push_str("cargo run -p ");
        line.push_str(&self.package);
        if !self.args.is_empty() {
            line.push_str(" -- ");
            line.push_str(&self.args.join(" "));
        }
        line
    }
}

/// Every script a page declares.
fn scripts(page: &str) -> Result<Vec<Script>, String> {
    let packages = step_packages();
    let mut scripts = Vec::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.trim().strip_prefix(DEMO_OPENING) else {
            continue;
        };
        let chapter = rest.trim_end_matches("-->").trim().to_owned();
        let mut terminal = 1;
        let mut rows = Vec::new();
        for text in lines
            .by_ref()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
        {
            let row = row(text, &mut terminal, &packages).map_err(|err| {
                format!("the script of {chapter}, `{text}`: {err}")
            })?;
            rows.push(row);
        }
        scripts.push(Script { chapter, rows });
    }
    Ok(scripts)
}

fn row(text: &str, terminal: &mut u32, packages: &[String]) -> Result<Row, String> {
    let cells: Vec<&str> = text.trim().trim_matches('|').split('|').collect();
    let [minutes, typed, point_at, why] = cells[..] else {
        return Err("not four cells".to_owned());
    };
    let minutes = minutes
        .trim()
        .parse()
        .map_err(|_| format!("`{}` is not minutes", minutes.trim()))?;
    let actions = pieces(typed, terminal)
        .into_iter()
        .map(|(at, piece)| Ok((at, action(&piece, packages)?)))
        .collect::<Result<_, String>>()?;
    let quotes = pieces(point_at, terminal);
    Ok(Row {
        text: text.to_owned(),
        minutes,
        actions,
        quotes,
        why: why.trim().to_owned(),
    })
}

/// The pieces in backticks in `cell`, each with the terminal it is in:
/// `terminal N` in the text between them moves the pieces after it there.
fn pieces(cell: &str, terminal: &mut u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for (at, piece) in cell.split('`').enumerate() {
        if at % 2 == 1 {
            found.push((*terminal, piece.to_owned()));
        } else if let Some(named) = named_terminal(piece) {
            *terminal = named;
        }
    }
    found
}

/// The last `terminal N` that `prose` names.
fn named_terminal(prose: &str) -> Option<u32> {
    prose
        .match_indices("terminal ")
        .filter_map(|(at, words)| {
            let digits: String = prose[at + words.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .last()
}

/// What a piece of the "type" cell asks for. Whatever starts as a command
/// does must be one the steps take: a misspelt command is refused here, not
/// typed into a program.
fn action(piece: &str, packages: &[String]) -> Result<Action, String> {
    let first = piece.split_whitespace().next().unwrap_or("");
    match piece {
        "Ctrl-C" => Ok(Action::CtrlC),
        "Ctrl-D" => Ok(Action::CtrlD),
        "echo $?" => Ok(Action::EchoStatus),
        _ if first == "cargo" || first == "echo" || first.contains('=') => {
            run(piece, packages).map(Action::Run)
        }
        _ => Ok(Action::Type(piece.to_owned())),
    }
}

fn run(command: &str, packages: &[String]) -> Result<Run, String> {
    let mut words = command.split_whitespace().peekable();
    let traced = words.next_if_eq(&"LOOP_TRACE=1").is_some();
    let words: Vec<&str> = words.collect();
    let not_a_run = || {
        format!(
            "`{command}` is not `[LOOP_TRACE=1] cargo run -p stepNN [-- ARGS]` \
             nor `echo $?`"
        )
    };
    let ["cargo", "run", "-p", package, ref rest @ ..] = words[..] else {
        return Err(not_a_run());
    };
    let args = match rest {
        [] => Vec::new(),
        ["--", args @ ..] => args.iter().map(|&arg| arg.to_owned()).collect(),
        _ => return Err(not_a_run()),
    };
    if !packages.iter().any(|known| known == package) {
        return Err(format!(
            "`{command}`: no step is called {package} (the steps: {})",
            packages.join(", ")
        ));
    }
    Ok(Run {
        traced,
        package: package.to_owned(),
        args,
    })
}

/// The steps' packages, `step01` on, as `cargo run -p` names them.
fn step_packages() -> Vec<String> {
    step_folders()
        .iter()
        .filter_map(|folder| step_number(folder))
        .map(|number| format!("step{number:02}"))
        .collect()
}

/// Whether `line`, as the terminal shows it (times redacted), is the line
/// `quote` points at: the same, or a trace line whose text after its time
/// stamp is the same.
fn shows(line: &str, quote: &str) -> bool {
    let line = line.trim_end();
    line == quote || line.strip_prefix("[+#.### s] ") == Some(quote)
}

/// Checks that `shown` has a line for each of `quotes`, in their order;
/// else says which is missing, or out of order.
fn in_order(shown: &str, quotes: &[&str]) -> Result<(), String> {
    let lines: Vec<&str> = shown.lines().collect();
    let mut from = 0;
    for quote in quotes {
        match lines[from..].iter().position(|line| shows(line, quote)) {
            Some(at) => from += at + 1,
            None if lines.iter().any(|line| shows(line, quote)) => {
                return Err(format!(
                    "`{quote}` is there, but not after the line before it"
                ));
            }
            None => return Err(format!("`{quote}` is not there")),
        }
    }
    Ok(())
}

fn teacher_page() -> String {
    read_text(&book_src().join("teacher.md"))
}

fn the_scripts() -> Vec<Script> {
    scripts(&teacher_page()).unwrap_or_else(|err| panic!("teacher.md: {err}"))
}

/// Runs the script of `chapter`'s live demo, row by row, and fails at the
/// first row the step does not bear out.
fn assert_script_runs(chapter: &str) {
    let scripts = the_scripts();
    let script = scripts
        .iter()
        .find(|script| script.chapter == chapter)
        .unwrap_or_else(|| panic!("teacher.md has no script for {chapter}"));
    let mut demo = Demo::default();
    for (number, row) in script.rows.iter().enumerate() {
        let outcome = row
            .actions
            .iter()
            .try_for_each(|(terminal, action)| demo.act(*terminal, action))
            .and_then(|()| {
                let mut by_terminal: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
                for (terminal, quote) in &row.quotes {
                    by_terminal.entry(*terminal).or_default().push(quote);
                }
                by_terminal
                    .iter()
                    .try_for_each(|(terminal, quotes)| demo.shows(*terminal, quotes))
            });
        if let Err(err) = outcome {
            panic!(
                "the script of {chapter}, row {}, `{}`:\n{err}",
                number + 1,
                row.text
            );
        }
    }
    if let Err(err) = demo.all_stopped() {
        panic!("the script of {chapter} ends with {err}: stop it in a last row");
    }
}

#[test]
fn the_step06_demo_runs_as_its_script_says() {
    assert_script_runs("step06-spawn-join.md");
}

#[test]
fn the_step07_demo_runs_as_its_script_says() {
    assert_script_runs("step07-io.md");
}

#[test]
fn the_step08_demo_runs_as_its_script_says() {
    assert_script_runs("step08-cancel.md");
}

/// Every live demo of a plan has a script, whose minutes are its row's;
/// every script is a live demo's; every row says why it matters.
#[test]
fn every_live_demo_has_a_script_of_its_rows_minutes() {
    let plans = plan::teacher_plans(&book_src())
        .unwrap_or_else(|err| panic!("teacher.md's plans: {err}"));
    let scripts = the_scripts();
    let mut problems = Vec::new();
    let mut demos = Vec::new();
    for plan in &plans {
        let live = plan
            .rows
            .iter()
            .filter(|row| row.parts.is_none() && row.what.contains("live demo"));
        for row in live {
            let Some(chapter) = plan::linked_chapter(&row.what) else {
                problems.push(format!("{}: a live demo with no chapter", plan.name));
                continue;
            };
            let minutes = row.minutes.unwrap_or_default();
            match scripts.iter().find(|script| script.chapter == chapter) {
                None => {
                    problems.push(format!("{chapter}: a live demo with no script"));
                }
                Some(script) => {
                    let total: usize =
                        script.rows.iter().map(|row| row.minutes).sum();
                    if total != minutes {
                        problems.push(format!(
                            "{chapter}: a script of {total} min, for a demo of {minutes}"
                        ));
                    }
                }
            }
            demos.push(chapter);
        }
    }
    for script in &scripts {
        if !demos.contains(&script.chapter) {
            problems.push(format!("{}: a script, and no live demo", script.chapter));
        }
        for row in &script.rows {
            // A question to the room takes what the notes' do.
            let asks = row.why.starts_with("Ask:") || row.why.contains(" ask:");
            if asks && row.minutes < plan::ASK_MINUTES {
                problems.push(format!(
                    "{}: a question to the room in {} min, where the page gives {}",
                    script.chapter,
                    row.minutes,
                    plan::ASK_MINUTES
                ));
            }
            if row.minutes == 0 || row.why.is_empty() {
                problems.push(format!(
                    "{}: `{}` takes no minutes or says nothing of why",
                    script.chapter, row.text
                ));
            }
        }
    }
    assert!(
        demos.len() >= 3,
        "only {} live demos in the plans",
        demos.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_script_row_reads_its_terminals_commands_typed_lines_and_quotes() {
    let page = "<!-- demo: step07-io.md -->\n\
        | min | type | point at | why |\n\
        | --- | --- | --- | --- |\n\
        | 2 | `cargo run -p step07 -- serve` | `listening on 127.0.0.1:3000` | One. |\n\
        | 1 | terminal 2: `cargo run -p step07 -- client`, then `hi` | `Got: hi` | Two. |\n\
        | 1 | `Ctrl-D`, terminal 1: `Ctrl-C` | | Three. |\n\
        | 1 | | terminal 2: `Got: hi` | Four. |\n\
        | 1 | `LOOP_TRACE=1 cargo run -p step07`, then `echo $?` | `0` | Five. |\n";
    let scripts = scripts(page).expect("a script");
    let [script] = &scripts[..] else {
        panic!("one script: {scripts:?}")
    };
    assert_eq!(script.chapter, "step07-io.md");
    let client = Run {
        traced: false,
        package: "step07".to_owned(),
        args: vec!["client".to_owned()],
    };
    let traced = Run {
        traced: true,
        package: "step07".to_owned(),
        args: Vec::new(),
    };
    let rows: Vec<_> = script
        .rows
        .iter()
        .map(|row| (row.minutes, row.actions.clone(), row.quotes.clone()))
        .collect();
    assert_eq!(
        rows[1..],
        [
            (
                1,
                vec![(2, Action::Run(client)), (2, Action::Type("hi".to_owned()))],
                vec![(2, "Got: hi".to_owned())]
            ),
            (1, vec![(2, Action::CtrlD), (1, Action::CtrlC)], Vec::new()),
            (1, Vec::new(), vec![(2, "Got: hi".to_owned())]),
            (
                1,
                vec![(2, Action::Run(traced)), (2, Action::EchoStatus)],
                vec![(2, "0".to_owned())]
            ),
        ]
    );
}

#[test]
fn a_command_the_steps_do_not_take_is_refused() {
    let packages = step_packages();
    for command in [
        "cargo rn -p step06",
        "cargo run -p step6",
        "cargo run -p step06 serve",
        "LOOP_TRACE=yes cargo run -p step06",
        "echo $status",
    ] {
        assert!(action(command, &packages).is_err(), "`{command}` was taken");
    }
    assert_eq!(
        action("hello there", &packages),
        Ok(Action::Type("hello there".to_owned()))
    );
}

#[test]
fn a_quoted_line_is_a_whole_line_or_a_trace_line_without_its_time() {
    let shown = "== A part ==\n\
                 [+#.### s] turn 3: ran 2 callbacks\n\
                 took #.## s: the sum\n";
    assert_eq!(in_order(shown, &["turn 3: ran 2 callbacks"]), Ok(()));
    assert_eq!(
        in_order(shown, &["== A part ==", "took #.## s: the sum"]),
        Ok(())
    );
    assert!(
        in_order(shown, &["took #.## s"]).is_err(),
        "a part of a line"
    );
    assert!(in_order(shown, &["took 1.20 s: the sum"]).is_err());
    assert!(in_order(shown, &["ran 2 callbacks"]).is_err());
    let reversed = in_order(shown, &["took #.## s: the sum", "== A part =="]);
    assert!(reversed.is_err_and(|err| err.contains("not after")));
}
