//! The record of times: what is noted when, the table, the pilot's rows,
//! and a damaged record.

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

#[test]
fn the_median_of_an_even_count_rounds_up() {
    assert_eq!(median(&[10, 20, 30]), 20);
    assert_eq!(median(&[10, 21]), 16);
}
