//! `cargo workshop times`: how long each step took, for the teacher's pilot.
//! `start` notes when a step was started, `check` when each marked function
//! and the whole step first passed: one line each, appended to
//! `.workshop/times.csv` in the participant's checkout, never erased, never
//! sent anywhere. So the minutes count from a step's first `start` to its
//! first pass, restarts included. `times --csv` is what the teacher collects
//! for `cargo xtask pilot`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::commands::Words;
use crate::commands::status::fingerprint;
use crate::step::{Stage, Step};

pub const HELP: &str = "usage: cargo workshop times [--csv]\n\n\
             For each step you started: when (UTC), and the minutes from then \
             to each\nfunction's first pass of `check` and to the step's. \
             Kept in .workshop/times.csv\nof this checkout only; nothing is \
             sent anywhere. --csv prints them for your\nteacher.";

const CSV_HEADER: &str = "seconds_since_1970_utc,step,event,function";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &["--csv"], HELP)?;
    let root = crate::step::find_root(here)?;
    if !words.plain.is_empty() {
        return Err(format!(
            "`cargo workshop times` prints this checkout's own times, and takes \
             no `{}`: a teacher turns the collected files into the pilot \
             table's rows with `cargo xtask pilot FILE...`\n\n{HELP}",
            words.plain.join(" ")
        ));
    }
    if words.has("--csv") {
        print!("{}", csv(&root));
    } else {
        println!("{}", table(&root));
    }
    Ok(ExitCode::SUCCESS)
}

/// What happened to a step, as one line of the record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Started,
    /// A marked function first passed `check`.
    Passed(String),
    /// The whole step first passed `check`.
    Done,
    Reset,
}

/// One line of the record: when (seconds since 1970, UTC), which step, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub at: u64,
    pub step: u32,
    pub event: Event,
}

/// The record's file in the checkout at `root`.
pub fn record_file(root: &Path) -> PathBuf {
    root.join(".workshop").join("times.csv")
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// `start N` succeeded.
pub fn started(root: &Path, step: u32) {
    note_now(root, step, Event::Started);
}

/// `reset N` put the whole step back: the record is kept (those minutes are
/// minutes of the day), and the sentence returned says so.
pub fn reset(root: &Path, step: u32) -> Option<String> {
    if !read(root).iter().any(|note| note.step == step) {
        return None;
    }
    note_now(root, step, Event::Reset);
    Some(format!(
        "Your times for step {step} are kept: `cargo workshop times` shows them."
    ))
}

fn note_now(root: &Path, step: u32, event: Event) {
    let at = now();
    append(root, &[Note { at, step, event }]);
}

/// The step's files as a check is about to read them, for `checked`.
pub fn files_before_check(step: &Step) -> String {
    fingerprint(step)
}

/// `check N` gave its verdict (whether the step `passed`, and the function
/// it names `next`) on the files `before`: notes each function's and the
/// step's first pass, and marks the step "done" while the last check of
/// exactly these files passed. A save during the check makes its verdict
/// no one's: nothing is noted, and watch checks again.
pub fn checked(step: &Step, before: &str, passed: bool, next: Option<&str>) {
    let passed_file = step.state().join("passed");
    let unchanged = fingerprint(step) == before;
    if passed && unchanged && step.is_started() {
        let _ = fs::create_dir_all(step.state());
        let _ = fs::write(&passed_file, before);
    } else {
        let _ = fs::remove_file(&passed_file);
    }
    if !unchanged {
        return; // saved during the check: its verdict is about older files
    }
    let Ok(stages) = step.stages() else {
        return; // damaged markers: the verdict says what to mend
    };
    let stages: Vec<(String, Stage)> = stages
        .into_iter()
        .map(|(marked, stage)| (marked.function, stage))
        .collect();
    let record = read(&step.root);
    let new = first_passes(&record, step.number, &stages, passed, next, now());
    append(&step.root, &new);
}

/// The notes a verdict adds to `record`: `stages` is the track as it is now,
/// `next` the function the verdict names. `check` names the first function
/// that is blank or wrong, so each written one before it passes; with none
/// named and the step failing, nothing does. Nothing is noted twice, nor for
/// a step never started.
pub fn first_passes(
    record: &[Note],
    step: u32,
    stages: &[(String, Stage)],
    passed: bool,
    next: Option<&str>,
    at: u64,
) -> Vec<Note> {
    let ours: Vec<&Note> = record.iter().filter(|note| note.step == step).collect();
    let started = ours.iter().any(|note| note.event == Event::Started);
    let touched = stages.iter().any(|(_, stage)| *stage != Stage::Authors);
    if !started && !touched {
        return Vec::new(); // the authors' version passing is no one's time
    }
    let upto = match (passed, next) {
        (true, _) => stages.len(),
        (false, Some(next)) => stages
            .iter()
            .position(|(function, _)| function == next)
            .unwrap_or(0),
        (false, None) => 0,
    };
    // Started before the record was kept: it was first seen now.
    let first_seen = (!started).then_some(Event::Started);
    first_seen
        .into_iter()
        .chain(
            stages[..upto]
                .iter()
                .filter(|(_, stage)| !stage.is_unfinished())
                .map(|(function, _)| Event::Passed(function.clone())),
        )
        .chain(passed.then_some(Event::Done))
        .filter(|event| !ours.iter().any(|note| note.event == *event))
        .map(|event| Note { at, step, event })
        .collect()
}

/// Appends to the record; a record that cannot be written costs only the
/// times, never the command.
fn append(root: &Path, notes: &[Note]) {
    let path = record_file(root);
    if notes.is_empty()
        || path
            .parent()
            .is_some_and(|dir| fs::create_dir_all(dir).is_err())
    {
        return;
    }
    let mut text = if path.exists() {
        String::new()
    } else {
        format!("{CSV_HEADER}\n")
    };
    for note in notes {
        let (event, function) = match &note.event {
            Event::Started => ("started", ""),
            Event::Passed(function) => ("passed", function.as_str()),
            Event::Done => ("done", ""),
            Event::Reset => ("reset", ""),
        };
        let _ = writeln!(text, "{},{},{event},{function}", note.at, note.step);
    }
    if let Ok(mut file) =
        fs::OpenOptions::new().create(true).append(true).open(&path)
    {
        let _ = file.write_all(text.as_bytes());
    }
}

/// The record as kept; lines it cannot read (a hand edit) are skipped.
pub fn read(root: &Path) -> Vec<Note> {
    read_with_damage(root).0
}

/// The record as kept, and a sentence naming each damaged line. Read line
/// by line, so that one bad byte (a crash mid-write, an editor's encoding)
/// costs at most its own line: bytes that are not UTF-8 become U+FFFD.
fn read_with_damage(root: &Path) -> (Vec<Note>, Vec<String>) {
    let bytes = fs::read(record_file(root)).unwrap_or_default();
    let (mut notes, mut damaged) = (Vec::new(), Vec::new());
    for (index, raw) in bytes.split(|byte| *byte == b'\n').enumerate() {
        let line = String::from_utf8_lossy(raw);
        let note = parse_note(&line);
        let damage = if (index == 0 && line.starts_with(CSV_HEADER))
            || line.trim().is_empty()
        {
            None
        } else if note.is_none() {
            Some("cannot be read, and is left out")
        } else if std::str::from_utf8(raw).is_err() {
            Some("has bytes that are not text, shown as \u{fffd}")
        } else {
            None
        };
        if let Some(damage) = damage {
            let shown = line.trim_end();
            damaged.push(format!("line {} {damage}: {shown}", index + 1));
        }
        notes.extend(note);
    }
    (notes, damaged)
}

fn parse_note(line: &str) -> Option<Note> {
    let mut fields = line.trim_end().splitn(4, ',');
    let at = fields.next()?.parse().ok()?;
    let step = fields.next()?.parse().ok()?;
    let event = match (fields.next()?, fields.next().unwrap_or_default()) {
        ("started", _) => Event::Started,
        ("passed", function) if !function.is_empty() => {
            Event::Passed(function.to_owned())
        }
        ("done", _) => Event::Done,
        ("reset", _) => Event::Reset,
        _ => return None,
    };
    Some(Note { at, step, event })
}

/// One step's times: when it was first started, and the minutes from then
/// to each function's first pass and to the step's.
#[derive(Debug, PartialEq, Eq)]
pub struct StepTimes {
    pub step: u32,
    pub started: u64,
    pub starts: usize,
    pub functions: Vec<(String, u64)>,
    pub done: Option<u64>,
}

/// Each step of the record that was started, in step order.
pub fn per_step(record: &[Note]) -> Vec<StepTimes> {
    let mut steps: BTreeMap<u32, StepTimes> = BTreeMap::new();
    for note in record {
        if note.event == Event::Started {
            let times = steps.entry(note.step).or_insert(StepTimes {
                step: note.step,
                started: note.at,
                starts: 0,
                functions: Vec::new(),
                done: None,
            });
            times.starts += 1;
            continue;
        }
        let Some(times) = steps.get_mut(&note.step) else {
            continue;
        };
        let minutes = note.at.saturating_sub(times.started).div_ceil(60);
        match &note.event {
            Event::Passed(function)
                if !times.functions.iter().any(|(f, _)| f == function) =>
            {
                times.functions.push((function.clone(), minutes));
            }
            Event::Done if times.done.is_none() => times.done = Some(minutes),
            _ => {}
        }
    }
    steps.into_values().collect()
}

/// `cargo workshop times`: one line per started step.
pub fn table(root: &Path) -> String {
    let (record, damaged) = read_with_damage(root);
    let mut out = String::new();
    for line in &damaged {
        let _ = writeln!(out, ".workshop/times.csv, {line}");
    }
    let steps = per_step(&record);
    if steps.is_empty() {
        out.push_str(
            "No step started yet: `cargo workshop start N` starts the clock for \
             step N.",
        );
        return out;
    }
    out.push_str(
        "step  started (UTC)     done    minutes from start to each function's \
         first pass\n",
    );
    for times in &steps {
        let done = times
            .done
            .map_or("-".to_owned(), |minutes| format!("{minutes} min"));
        let functions: Vec<String> = times
            .functions
            .iter()
            .map(|(function, minutes)| format!("{function} {minutes}"))
            .collect();
        let restarts = match times.starts {
            1 => String::new(),
            n => format!(" ({n} starts)"),
        };
        let _ = writeln!(
            out,
            "{:<5} {}  {done:<7} {}{restarts}",
            times.step,
            utc(times.started),
            functions.join(", ")
        );
    }
    let _ = write!(
        out,
        "\nKept in .workshop/times.csv of this checkout only; nothing is sent \
         anywhere.\n`cargo workshop times --csv > times-NAME.csv` writes them \
         for your teacher."
    );
    out
}

/// `cargo workshop times --csv`: a row for each function's first pass and
/// one for the step's, `done`; minutes from the step's first start.
pub fn csv(root: &Path) -> String {
    let mut out = String::from("step,started_utc,passed,minutes\n");
    for times in per_step(&read(root)) {
        let started = utc(times.started);
        let rows = times
            .functions
            .iter()
            .map(|(function, minutes)| (function.as_str(), *minutes))
            .chain(times.done.map(|minutes| ("done", minutes)));
        for (what, minutes) in rows {
            let _ = writeln!(out, "{},{started},{what},{minutes}", times.step);
        }
    }
    out
}

/// Seconds since 1970 as `YYYY-MM-DD HH:MM`, UTC.
pub fn utc(seconds: u64) -> String {
    let (year, month, day) = plumbing::calendar::civil_from_days(seconds / 86_400);
    let minutes = seconds % 86_400 / 60;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        minutes / 60,
        minutes % 60
    )
}

#[cfg(test)]
mod tests;
