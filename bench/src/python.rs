//! The Python side: `bench/python/asyncio_bench.py` run as a child, one
//! workload at a time, its medians added to the table as more columns.

use std::collections::HashMap;
use std::env;
use std::io;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::Table;

/// The script, beside this crate's sources.
pub fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/asyncio_bench.py")
}

/// The Python event loops (asyncio, and uvloop where it is installed), run
/// by the script one workload at a time, each right after the Rust sides
/// ran it: a change in the machine's load between workloads then hits
/// both alike.
#[derive(Debug, Default)]
pub struct PythonSides {
    quick: bool,
    runs: Option<usize>,
    /// One column per event loop: its values by row id.
    columns: Vec<(String, HashMap<String, f64>)>,
}

impl PythonSides {
    /// The script's own plan (`--quick` or full), with `runs` measured runs
    /// instead of its default if given.
    pub fn new(quick: bool, runs: Option<usize>) -> Self {
        Self {
            quick,
            runs,
            columns: Vec::new(),
        }
    }

    /// Runs the script (with `$BENCH_PYTHON`, or `python3`) on the workload
    /// called `id`; it reports nothing for a workload it does not have. Its
    /// progress goes straight to our standard error.
    pub fn measure(&mut self, id: &str) -> io::Result<()> {
        let python =
            env::var("BENCH_PYTHON").unwrap_or_else(|_| "python3".to_owned());
        let mut command = Command::new(&python);
        command.arg(script()).args(["--rows", "--workload", id]);
        if self.quick {
            command.arg("--quick");
        }
        if let Some(runs) = self.runs {
            command.args(["--runs", &runs.to_string()]);
        }
        let output = command.stderr(Stdio::inherit()).output().map_err(|err| {
            io::Error::new(err.kind(), format!("running {python}: {err}"))
        })?;
        if !output.status.success() {
            return Err(io::Error::other(format!(
                "the Python benchmarks failed ({})",
                output.status
            )));
        }
        for (side, values) in parse_rows(&String::from_utf8_lossy(&output.stdout))? {
            match self.columns.iter_mut().find(|(name, _)| *name == side) {
                Some((_, column)) => column.extend(values),
                None => self.columns.push((side, values)),
            }
        }
        Ok(())
    }

    /// Adds one column per event loop measured.
    pub fn add_to(&self, table: &mut Table) {
        for (side, values) in &self.columns {
            table.add_side(side, values);
        }
    }
}

/// Reads `row SIDE ID VALUE` lines (tab-separated) into one map per side, in
/// the order the sides first appear.
fn parse_rows(stdout: &str) -> io::Result<Vec<(String, HashMap<String, f64>)>> {
    let mut sides: Vec<(String, HashMap<String, f64>)> = Vec::new();
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let [tag, side, id, value] = fields[..] else {
            continue;
        };
        if tag != "row" {
            continue;
        }
        let value: f64 = value.parse().map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidData, format!("bad row {line:?}"))
        })?;
        match sides.iter_mut().find(|(name, _)| name == side) {
            Some((_, values)) => {
                values.insert(id.to_owned(), value);
            }
            None => sides
                .push((side.to_owned(), HashMap::from([(id.to_owned(), value)]))),
        }
    }
    Ok(sides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_grouped_by_side_in_order_and_other_lines_ignored() {
        let stdout = "| a table |\nrow\tasyncio\tspawn.ns_per_task\t4123.5\n\
                      row\tuvloop\tspawn.ns_per_task\t2000\n\
                      row\tasyncio\techo.round_trips_per_s\t17000\n";
        let sides = parse_rows(stdout).unwrap();
        let names: Vec<_> = sides.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["asyncio", "uvloop"]);
        let asyncio = &sides[0].1;
        assert!((asyncio["spawn.ns_per_task"] - 4123.5).abs() < 1e-9);
        assert!((asyncio["echo.round_trips_per_s"] - 17000.0).abs() < 1e-9);
        assert_eq!(sides[1].1.len(), 1);
    }

    #[test]
    fn a_malformed_value_is_an_error() {
        assert!(parse_rows("row\tasyncio\tspawn.ns_per_task\tfast\n").is_err());
    }
}
