//! The record of times: what is noted when, the table, and a damaged
//! record.

use super::*;

const TRACK: [&str; 3] = ["EventLoop::call_at", "Timer::cmp", "EventLoop::run"];

fn stages(of: [Stage; 3]) -> Vec<(String, Stage)> {
    TRACK.iter().map(|f| (*f).to_owned()).zip(of).collect()
}

fn started_at(at: u64) -> Vec<Note> {
    vec![Note {
        at,
        step: 3,
        event: Event::Started,
    }]
}

#[test]
fn a_written_function_before_the_one_named_passes() {
    use Stage::{Blank, Written};
    let new = first_passes(
        &started_at(0),
        3,
        &stages([Written, Blank, Blank]),
        false,
        Some("Timer::cmp"),
        300,
    );
    assert_eq!(
        new,
        vec![Note {
            at: 300,
            step: 3,
            event: Event::Passed("EventLoop::call_at".to_owned())
        }]
    );
}

#[test]
fn the_function_named_has_not_passed_even_when_written() {
    use Stage::{Blank, Written};
    let new = first_passes(
        &started_at(0),
        3,
        &stages([Written, Blank, Blank]),
        false,
        Some("EventLoop::call_at"),
        300,
    );
    assert_eq!(new, vec![]);
}

#[test]
fn a_first_pass_is_kept_once_and_a_later_failure_does_not_erase_it() {
    use Stage::{Blank, Written};
    let mut record = started_at(0);
    let both = stages([Written, Written, Blank]);
    record.extend(first_passes(
        &record,
        3,
        &both,
        false,
        Some("EventLoop::run"),
        240,
    ));
    // Later the participant breaks `Timer::cmp`: check names it.
    record.extend(first_passes(
        &record,
        3,
        &both,
        false,
        Some("Timer::cmp"),
        600,
    ));
    record.extend(first_passes(
        &record,
        3,
        &both,
        false,
        Some("EventLoop::run"),
        900,
    ));
    let noted = |function: &str| {
        record
            .iter()
            .filter(|note| note.event == Event::Passed(function.to_owned()))
            .count()
    };
    assert_eq!((noted("EventLoop::call_at"), noted("Timer::cmp")), (1, 1));
    let times = per_step(&record);
    assert_eq!(
        times[0].functions,
        vec![
            ("EventLoop::call_at".to_owned(), 4),
            ("Timer::cmp".to_owned(), 4)
        ]
    );
    assert_eq!(times[0].done, None);
}

#[test]
fn a_passing_step_is_done_once() {
    use Stage::Written;
    let mut record = started_at(60);
    let all = stages([Written; 3]);
    record.extend(first_passes(&record, 3, &all, true, None, 60 + 31 * 60));
    record.extend(first_passes(&record, 3, &all, true, None, 60 + 50 * 60));
    let times = per_step(&record);
    assert_eq!(times[0].functions.len(), 3);
    assert_eq!(times[0].done, Some(31));
}

#[test]
fn the_authors_version_passing_is_not_noted() {
    let new = first_passes(&[], 3, &stages([Stage::Authors; 3]), true, None, 9);
    assert_eq!(new, vec![]);
}

#[test]
fn a_failure_no_function_answers_for_passes_nothing() {
    let new = first_passes(
        &started_at(0),
        3,
        &stages([Stage::Written; 3]),
        false,
        None,
        9,
    );
    assert_eq!(new, vec![]);
}

#[test]
fn a_damaged_record_shows_its_good_rows_and_names_the_bad_one() {
    let root = std::env::temp_dir()
        .join(format!("workshop-times-damaged-{}", std::process::id()));
    let file = record_file(&root);
    fs::create_dir_all(file.parent().expect("a folder")).expect("a folder");
    let mut text = b"seconds_since_1970_utc,step,event,function\n\
                     0,3,started,\n\
                     600,3,passed,Timer::c"
        .to_vec();
    text.extend_from_slice(b"\xffmp\n0,4,started,\n1800,4,done,\n");
    fs::write(&file, text).expect("a record");
    let shown = table(&root);
    let _ = fs::remove_dir_all(&root);
    assert!(shown.contains("\n3 "), "{shown}");
    assert!(
        shown.contains("\n4 ") && shown.contains("30 min"),
        "{shown}"
    );
    assert!(shown.contains("line 3"), "{shown}");
    assert!(shown.contains("Timer::c\u{fffd}mp"), "{shown}");
}

#[test]
fn utc_is_the_civil_date() {
    assert_eq!(utc(0), "1970-01-01 00:00");
    assert_eq!(utc(951_825_600), "2000-02-29 12:00");
    assert_eq!(utc(1_795_752_900), "2026-11-27 04:15");
}

/// A workshop of one step, step 1, copied from this one with its stored
/// authors' version, started, in a folder of its own.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn started(name: &str) -> (Scratch, Step) {
        let from = crate::workspace_root();
        let root = std::env::temp_dir()
            .join(format!("workshop-times-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let folder = "step01-while-loop";
        let stored = crate::authors::read_stored(&from, folder).expect("step 1");
        for (file, text) in &stored {
            crate::commands::write(&root.join(folder).join(file), text).unwrap();
        }
        crate::commands::write(
            &crate::authors::stored_copy(&root, folder),
            &crate::authors::encode(folder, &stored),
        )
        .unwrap();
        fs::copy(from.join("Cargo.toml"), root.join("Cargo.toml")).unwrap();
        let step = Step::find(&root, "1").expect("step 1");
        crate::commands::start::start(&step, false).expect("step 1 starts");
        (Scratch { root }, step)
    }
}

/// A participant's save: a comment added to the demo.
fn save(step: &Step) {
    let path = step.dir().join("src/main.rs");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, format!("// saved during the check\n{text}")).unwrap();
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn noted_done(step: &Step) -> bool {
    read(&step.root)
        .iter()
        .any(|note| note.step == step.number && note.event == Event::Done)
}

#[test]
fn a_save_in_the_last_second_of_a_passing_check_is_not_done() {
    use crate::commands::status::{fingerprint, passes_as_is};
    let (_scratch, step) = Scratch::started("late-save");
    let before = files_before_check(&step);
    save(&step);
    // What the check's pass writes at its end, after the save.
    fs::create_dir_all(step.state()).unwrap();
    fs::write(step.state().join("passed"), fingerprint(&step)).unwrap();
    checked(&step, &before, true, None);
    assert!(!passes_as_is(&step), "the saved files were never checked");
    assert!(!noted_done(&step), "the times record only true verdicts");
    // The check watch starts after that save passes: done, and noted.
    let again = files_before_check(&step);
    checked(&step, &again, true, None);
    assert!(passes_as_is(&step));
    assert!(noted_done(&step));
}

#[test]
fn a_failing_check_of_the_same_files_removes_done() {
    use crate::commands::status::passes_as_is;
    let (_scratch, step) = Scratch::started("fails-after");
    let before = files_before_check(&step);
    checked(&step, &before, true, None);
    assert!(passes_as_is(&step));
    // A failure on the same bytes (a test that depends on timing, say):
    // the last check of these files did not pass.
    checked(&step, &before, false, Some("EventLoop::run"));
    assert!(!passes_as_is(&step), "a failing check removes done");
}
