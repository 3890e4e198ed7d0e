//! `cargo xtask pilot FILE...`, for the teacher: the times the participants
//! handed over (`cargo workshop times --csv`, one file each) as the rows of
//! the teacher's page's pilot table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use workshop::commands::Words;
use workshop::step::find_root;

pub const HELP: &str = "usage: cargo xtask pilot FILE...\n\n\
             For the teacher, after a pilot: reads the files the participants \
             wrote with\n`cargo workshop times --csv`, or a folder of them, and \
             prints the rows of the\nteacher's page's pilot table: for each \
             track someone finished, the median and\nthe slowest minutes to \
             its first passing check, and how many finished it.";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &[], HELP)?;
    if words.plain.is_empty() {
        return Err(format!(
            "`cargo xtask pilot` needs the participants' files, or a folder of \
             them\n\n{HELP}"
        ));
    }
    print!("{}", pilot_rows(&find_root(here)?, &words.plain)?);
    Ok(ExitCode::SUCCESS)
}

/// A file's text: UTF-8, or UTF-16 with its byte-order mark, which is what
/// Windows PowerShell 5.1's `>` writes (`cargo workshop times --csv >
/// times-NAME.csv` there gave a file `pilot` could not read, and the whole
/// folder failed with it); a UTF-8 byte-order mark is dropped.
fn as_text(bytes: &[u8]) -> Option<String> {
    let utf16 = |rest: &[u8], from: fn([u8; 2]) -> u16| {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|pair| from([pair[0], pair[1]]))
            .collect();
        String::from_utf16(&units).ok()
    };
    match bytes {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8(rest.to_vec()).ok(),
        _ => String::from_utf8(bytes.to_vec()).ok(),
    }
}

/// The collected `--csv` files of a group (or folders of them), as rows of
/// the teacher's pilot table: median and slowest minutes to `done` among
/// those who finished the step, and how many did; the estimate is taken
/// from the teacher's page when it is there.
fn pilot_rows(root: &Path, named: &[&str]) -> Result<String, String> {
    let files = csv_files(named)?;
    let mut done: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    let mut dates: Vec<String> = Vec::new();
    for file in &files {
        let shown = file.display();
        let bytes = fs::read(file).map_err(|err| format!("{shown}: {err}"))?;
        let text = as_text(&bytes).ok_or_else(|| {
            format!("{shown}: neither UTF-8 nor UTF-16 text: was it written by `times --csv`?")
        })?;
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.trim_end().split(',').collect();
            let [step, started, "done", minutes] = fields.as_slice() else {
                continue;
            };
            let (Ok(step), Ok(minutes)) = (step.parse(), minutes.parse()) else {
                return Err(format!("{shown}: cannot read the line `{line}`"));
            };
            done.entry(step).or_default().push(minutes);
            dates.push(started.get(..10).unwrap_or_default().to_owned());
        }
    }
    if done.is_empty() {
        return Err(format!(
            "no step is done in {} file(s): nothing to put in the pilot table",
            files.len()
        ));
    }
    dates.sort();
    dates.dedup();
    let when = match dates.as_slice() {
        [one] => one.clone(),
        [first, .., last] => format!("{first} to {last}"),
        [] => String::new(),
    };
    let teacher_page =
        fs::read_to_string(root.join("book/src/teacher.md")).unwrap_or_default();
    let mut out = String::from(
        "| track | estimated | median participant | slowest participant | date, group size |\n\
         | --- | --- | --- | --- | --- |\n",
    );
    for (step, mut minutes) in done {
        minutes.sort_unstable();
        let _ = writeln!(
            out,
            "| `start {step}` | {} | {} min | {} min | {when}, {} of {} participants |",
            estimate(&teacher_page, step).unwrap_or("?"),
            median(&minutes),
            minutes[minutes.len() - 1],
            minutes.len(),
            files.len()
        );
    }
    Ok(out)
}

/// The files named, a folder standing for the `.csv` files in it (a
/// PowerShell does not expand `times-*.csv` for a program).
fn csv_files(named: &[&str]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for name in named {
        let path = PathBuf::from(name);
        if !path.is_dir() {
            files.push(path);
            continue;
        }
        let mut inside: Vec<PathBuf> = fs::read_dir(&path)
            .map_err(|err| format!("{name}: {err}"))?
            .flatten()
            .map(|entry| entry.path())
            .filter(|file| file.extension().is_some_and(|ext| ext == "csv"))
            .collect();
        inside.sort();
        files.extend(inside);
    }
    Ok(files)
}

/// The estimate for `start N` in the teacher page's pilot table.
fn estimate(page: &str, step: u32) -> Option<&str> {
    let row = format!("| `start {step}` | ");
    let line = page.lines().find(|line| line.starts_with(&row))?;
    Some(line[row.len()..].split(" |").next()?.trim())
}

/// The middle value of sorted minutes, rounded up between two.
fn median(sorted: &[u64]) -> u64 {
    let half = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[half]
    } else {
        (sorted[half - 1] + sorted[half]).div_ceil(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_windows_powershell_wrote_reads_as_its_text() {
        let csv =
            "step,started_utc,passed,minutes\r\n3,2026-12-01 09:00,done,41\r\n";
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(csv.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(as_text(&utf16).as_deref(), Some(csv));
        let with_bom = [&[0xEF, 0xBB, 0xBF][..], csv.as_bytes()].concat();
        assert_eq!(as_text(&with_bom).as_deref(), Some(csv));
        assert_eq!(as_text(csv.as_bytes()).as_deref(), Some(csv));
        assert_eq!(as_text(&[0xC3, 0x28]), None, "not text at all");
    }

    #[test]
    fn the_median_of_an_even_count_rounds_up() {
        assert_eq!(median(&[10, 20, 30]), 20);
        assert_eq!(median(&[10, 21]), 16);
    }
}
