//! The results table: one row per metric, one column per runtime, and how
//! many times faster than tokio each other runtime is.
//!
//! `bench/python/asyncio_bench.py` prints the same table in the same way
//! (row ids, number format, ratio columns), so the two read alike and the
//! Python numbers can be merged into this one by row id.

use std::collections::HashMap;
use std::fmt::Write as _;

/// Which way a metric improves, which decides how its ratio is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Costs: time per task, CPU, lateness.
    Lower,
    /// Rates: round trips per second, bytes per second.
    Higher,
    /// A count of failures that must stay zero (early wake-ups): shown,
    /// never turned into a ratio.
    Zero,
}

/// One metric of one workload, with one value per runtime.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Stable name, the same in the Python script: `sleeps.cpu_ms`.
    pub id: String,
    /// What ran: `3 100,000 sleeps of 0-100 ms`.
    pub workload: String,
    /// What was measured, with its unit: `CPU ms`.
    pub metric: &'static str,
    pub better: Better,
    /// One per runtime, in the order of [`Table::sides`]; `None` where that
    /// runtime does not run this workload.
    pub values: Vec<Option<f64>>,
}

/// Results of one run of the harness.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub sides: Vec<String>,
    pub rows: Vec<Row>,
}

/// The runtime every ratio is taken against.
const BASELINE: &str = "tokio";

impl Table {
    /// Adds a column for a runtime measured by another program (Python),
    /// filling in the rows whose ids it reported.
    pub fn add_side(&mut self, side: &str, values: &HashMap<String, f64>) {
        self.sides.push(side.to_owned());
        for row in &mut self.rows {
            row.values.push(values.get(&row.id).copied());
        }
    }

    /// How many times better `side` did than tokio on `row`: above 1 means
    /// better (cheaper, or faster).
    pub fn ratio(&self, row: &Row, side: usize) -> Option<f64> {
        let baseline = self.sides.iter().position(|name| name == BASELINE)?;
        let (base, value) = (row.values[baseline]?, row.values[side]?);
        match row.better {
            Better::Lower if value > 0.0 => Some(base / value),
            Better::Higher if base > 0.0 => Some(value / base),
            _ => None,
        }
    }

    /// The table in Markdown, its columns padded so it also reads in a
    /// terminal; the workload is named only on its first row.
    pub fn to_markdown(&self) -> String {
        let mut lines = vec![self.heading()];
        lines.push(lines[0].iter().map(|_| "---".to_owned()).collect());
        let mut previous = "";
        for row in &self.rows {
            let workload = if row.workload == previous {
                String::new()
            } else {
                row.workload.clone()
            };
            previous = &row.workload;
            lines.push(self.cells(row, workload));
        }
        render(&lines)
    }

    fn compared_sides(&self) -> Vec<usize> {
        if !self.sides.iter().any(|name| name == BASELINE) {
            return Vec::new();
        }
        (0..self.sides.len())
            .filter(|&side| self.sides[side] != BASELINE)
            .collect()
    }

    fn heading(&self) -> Vec<String> {
        let mut heading = vec!["workload".to_owned(), "metric".to_owned()];
        heading.extend(self.sides.iter().cloned());
        for side in self.compared_sides() {
            heading.push(format!("{} vs {BASELINE}", self.sides[side]));
        }
        heading
    }

    fn cells(&self, row: &Row, workload: String) -> Vec<String> {
        let mut cells = vec![workload, row.metric.to_owned()];
        for value in &row.values {
            cells.push(value.map_or_else(|| "-".to_owned(), format_value));
        }
        for side in self.compared_sides() {
            let ratio = self.ratio(row, side);
            cells.push(ratio.map_or_else(|| "-".to_owned(), format_ratio));
        }
        cells
    }
}

/// Pads every column to its widest cell; numbers stay readable without a
/// Markdown viewer.
fn render(lines: &[Vec<String>]) -> String {
    let columns = lines[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in lines {
        out.push('|');
        for (cell, width) in line.iter().zip(&widths) {
            let fill = if cell == "---" { '-' } else { ' ' };
            let padding: String =
                std::iter::repeat_n(fill, width - cell.chars().count()).collect();
            let _ = write!(out, " {cell}{padding} |");
        }
        out.push('\n');
    }
    out
}

/// Three significant digits, whole numbers from 100 up, and thousands
/// separated by commas: `0.0412`, `4.12`, `41.2`, `412`, `84,210`.
pub fn format_value(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    if value.abs() >= 100.0 {
        return group_thousands(value.round());
    }
    // Digits before the point: 2 for 41.2, 0 for 0.41, -1 for 0.041.
    #[allow(clippy::cast_possible_truncation)]
    let digits = value.abs().log10().floor() as i32 + 1;
    let decimals = usize::try_from(3 - digits).unwrap_or(0);
    format!("{value:.decimals$}")
}

/// A ratio, as `1.05×`.
fn format_ratio(ratio: f64) -> String {
    format!("{}×", format_value(ratio))
}

/// `84,210`: a whole number with its thousands separated.
pub(crate) fn group_thousands(whole: f64) -> String {
    let mut grouped = plumbing::digits::grouped(&format!("{:.0}", whole.abs()));
    if whole < 0.0 {
        grouped.insert(0, '-');
    }
    grouped
}

/// The middle value (the mean of the middle two for an even count): one slow
/// run, disturbed by whatever else the machine did, does not move it.
pub fn median(values: &[f64]) -> f64 {
    assert!(!values.is_empty(), "the median of nothing");
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        f64::midpoint(sorted[middle - 1], sorted[middle])
    }
}

/// The nearest-rank percentile of sorted values: the smallest value that at
/// least `percent` % of the values are less than or equal to.
pub fn percentile(sorted: &[f64], percent: f64) -> f64 {
    assert!(!sorted.is_empty(), "the percentile of nothing");
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = (percent / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_three_significant_digits() {
        let shown: Vec<_> = [
            0.041_23,
            0.412_3,
            4.123,
            41.23,
            412.3,
            84_213.7,
            1_234_567.0,
        ]
        .into_iter()
        .map(format_value)
        .collect();
        assert_eq!(
            shown,
            [
                "0.0412",
                "0.412",
                "4.12",
                "41.2",
                "412",
                "84,214",
                "1,234,567"
            ]
        );
        assert_eq!(format_value(0.0), "0");
    }

    #[test]
    fn median_ignores_one_outlier_and_averages_an_even_middle() {
        assert!((median(&[5.0, 1.0, 400.0]) - 5.0).abs() < f64::EPSILON);
        assert!((median(&[4.0, 1.0, 3.0, 2.0]) - 2.5).abs() < f64::EPSILON);
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
        assert!((percentile(&sorted, 50.0) - 50.0).abs() < f64::EPSILON);
        assert!((percentile(&sorted, 99.0) - 99.0).abs() < f64::EPSILON);
        assert!((percentile(&sorted, 100.0) - 100.0).abs() < f64::EPSILON);
        assert!((percentile(&[7.0], 99.0) - 7.0).abs() < f64::EPSILON);
    }

    fn two_rows() -> Table {
        let row = |id: &str, metric, better, values: [f64; 2]| Row {
            id: id.to_owned(),
            workload: "1 spawn".to_owned(),
            metric,
            better,
            values: values.into_iter().map(Some).collect(),
        };
        Table {
            sides: vec!["tokio".to_owned(), "ours".to_owned()],
            rows: vec![
                row("spawn.ns", "ns per task", Better::Lower, [400.0, 200.0]),
                row("spawn.rate", "tasks/s", Better::Higher, [1000.0, 500.0]),
            ],
        }
    }

    #[test]
    fn ratios_read_as_times_better_than_tokio_both_ways() {
        let table = two_rows();
        assert_eq!(table.ratio(&table.rows[0], 1), Some(2.0));
        assert_eq!(table.ratio(&table.rows[1], 1), Some(0.5));
    }

    #[test]
    fn the_markdown_table_names_each_workload_once_and_adds_ratios() {
        let mut table = two_rows();
        let python = HashMap::from([("spawn.ns".to_owned(), 4000.0)]);
        table.add_side("asyncio", &python);
        let expected = "\
| workload | metric      | tokio | ours | asyncio | ours vs tokio | asyncio vs tokio |
| -------- | ----------- | ----- | ---- | ------- | ------------- | ---------------- |
| 1 spawn  | ns per task | 400   | 200  | 4,000   | 2.00×         | 0.100×           |
|          | tasks/s     | 1,000 | 500  | -       | 0.500×        | -                |
";
        assert_eq!(table.to_markdown(), expected);
    }
}
