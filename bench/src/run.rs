//! Every workload, run on every side, round by round.

use std::cell::RefCell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::{self, Write};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::table::{Better, Row, Table, group_thousands, median, percentile};
use crate::{EchoPlan, Plan, PythonSides, ServerProcess, Side};

/// Runs every workload of `plan` (those whose id contains `only`, if given)
/// on every side, then on the Python loops if given, and returns the table
/// of medians.
///
/// Sides take turns within each round (warm-ups first, then measured runs),
/// so a slow spell on the machine hits every side alike rather than the one
/// whose turn it happened to be. `server` is the program whose `serve-echo`
/// mode runs a side's echo server in its own process; without it, that
/// workload is left out. `isolation` says whether each run gets a fresh
/// process. Progress goes to `log`.
pub fn run(
    sides: &[Side],
    plan: &Plan,
    server: Option<&Path>,
    only: Option<&str>,
    mut python: Option<&mut PythonSides>,
    isolation: Isolation,
    log: &mut dyn Write,
) -> io::Result<Table> {
    let mut table = Table {
        sides: sides.iter().map(|side| side.name.to_owned()).collect(),
        rows: Vec::new(),
    };
    for workload in workloads(plan, server) {
        if only.is_some_and(|only| !workload.id.contains(only)) {
            continue;
        }
        write!(log, "{} ", workload.label)?;
        let mut runs = vec![Vec::new(); sides.len()];
        for round in 0..plan.warmups + plan.runs {
            for (side, results) in sides.iter().zip(&mut runs) {
                let values = match isolation {
                    Isolation::Shared => (workload.measure)(side)?,
                    Isolation::Apart(program) => {
                        measure_apart(program, plan, side, &workload.id)?
                    }
                };
                if values.len() != workload.metrics.len() {
                    return Err(invalid(format!(
                        "{} on {}: {} values for {} metrics",
                        workload.id,
                        side.name,
                        values.len(),
                        workload.metrics.len()
                    )));
                }
                if round >= plan.warmups {
                    results.push(values);
                }
            }
            write!(log, ".")?;
            log.flush()?;
        }
        writeln!(log)?;
        table.rows.extend(workload.rows(&runs));
        if let Some(python) = python.as_deref_mut() {
            python.measure(&workload.id)?;
        }
    }
    if let Some(python) = python {
        python.add_to(&mut table);
    }
    Ok(table)
}

/// Where each run of a workload happens.
#[derive(Debug, Clone, Copy)]
pub enum Isolation<'a> {
    /// In this process, one run after another: quick, but each run inherits
    /// the allocator's heap (and the caches) that the runs before it left.
    Shared,
    /// Each run in a fresh process of `program` (its `measure-one` mode),
    /// as a program that runs one workload would: the allocator starts
    /// empty every time. Warm-up runs are processes of their own too, and
    /// warm only the OS's caches; the echo server of `echo_process` starts
    /// anew, cold, in each.
    Apart(&'a Path),
}

/// The child's part of `Isolation::Apart`: runs workload `id` of `plan`
/// once on `side` and gives its values. `server` is as in `run`.
pub fn measure_one(
    side: &Side,
    plan: &Plan,
    server: &Path,
    id: &str,
) -> io::Result<Vec<f64>> {
    let workload = workloads(plan, Some(server))
        .into_iter()
        .find(|workload| workload.id == id)
        .ok_or_else(|| invalid(format!("no workload called `{id}`")))?;
    (workload.measure)(side)
}

/// Runs workload `id` once on `side` in a fresh process of `program`, and
/// reads the values it prints.
fn measure_apart(
    program: &Path,
    plan: &Plan,
    side: &Side,
    id: &str,
) -> io::Result<Vec<f64>> {
    let output = Command::new(program)
        .args(["measure-one", plan.name, side.name, id])
        .output()
        .map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("could not run {}: {err}", program.display()),
            )
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(invalid(format!(
            "`measure-one {} {} {id}` failed ({}): {}",
            plan.name,
            side.name,
            output.status,
            stderr.trim()
        )));
    }
    stdout
        .split_whitespace()
        .map(|value| {
            value.parse().map_err(|_| {
                invalid(format!("`measure-one` printed {value:?}, not a number"))
            })
        })
        .collect()
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// One workload: what it is called, what it reports, and how to run it once
/// on a side, giving one value per metric.
struct Workload<'a> {
    id: String,
    label: String,
    metrics: &'static [Metric],
    measure: Measure<'a>,
}

/// Runs a workload once on a side, giving one value per metric.
type Measure<'a> = Box<dyn Fn(&Side) -> io::Result<Vec<f64>> + 'a>;

/// One number a workload reports.
struct Metric {
    id: &'static str,
    name: &'static str,
    better: Better,
}

impl Workload<'_> {
    /// One row per metric; each value is that side's median over its runs,
    /// except a count that must stay zero, which shows its worst run.
    fn rows(&self, runs: &[Vec<Vec<f64>>]) -> Vec<Row> {
        let row = |(m, metric): (usize, &Metric)| Row {
            id: format!("{}.{}", self.id, metric.id),
            workload: self.label.clone(),
            metric: metric.name,
            better: metric.better,
            values: runs
                .iter()
                .map(|side_runs| {
                    let values: Vec<f64> =
                        side_runs.iter().map(|run| run[m]).collect();
                    match metric.better {
                        Better::Zero => values.into_iter().reduce(f64::max),
                        _ => Some(median(&values)),
                    }
                })
                .collect(),
        };
        self.metrics.iter().enumerate().map(row).collect()
    }
}

/// The workloads of `bench/README.md`, numbered as it numbers them, then how
/// the cost of spawning, of timers and of echoing grows with their number.
fn workloads<'a>(plan: &'a Plan, server: Option<&'a Path>) -> Vec<Workload<'a>> {
    let mut all = vec![
        spawn_join("spawn", "1 spawn and join", plan.spawn_tasks),
        yield_switch(plan),
        sleeps(plan, false),
        sleeps(plan, true),
        lateness(
            "lateness",
            (plan.lateness_sleeps, plan.lateness_spread),
            move || plan.lateness_delays(),
        ),
        lateness("lateness_dense", (plan.sleeps, plan.sleep_max), move || {
            plan.dense_lateness_delays()
        }),
        echo("echo", echo_label(plan.echo), plan.echo),
    ];
    if let Some(program) = server {
        all.push(echo_server_process(plan, program));
    }
    all.extend([stream(plan), idle(plan)]);
    for &count in &plan.scale_counts {
        all.push(spawn_join(
            &format!("scale.spawn.{count}"),
            "spawn cost:",
            count,
        ));
    }
    for deadline in [Deadline::AtSpawn, Deadline::AtFirstPoll] {
        for &count in &plan.scale_counts {
            all.push(timer_cost(plan, count, deadline));
        }
    }
    for &connections in &plan.scale_connections {
        let id = format!("scale.echo.{connections}");
        let plural = if connections == 1 { "" } else { "s" };
        let label =
            format!("echo throughput: {} connection{plural}", count(connections));
        all.push(echo(&id, label, plan.scaled_echo(connections)));
    }
    all
}

fn spawn_join<'a>(id: &str, title: &str, tasks: usize) -> Workload<'a> {
    const METRICS: &[Metric] = &[Metric {
        id: "ns_per_task",
        name: "ns per task",
        better: Better::Lower,
    }];
    Workload {
        id: id.to_owned(),
        label: format!("{title} {} empty tasks", count(tasks)),
        metrics: METRICS,
        measure: Box::new(move |side| {
            let sample = (side.spawn_join)(tasks);
            Ok(vec![nanos_each(sample.wall, tasks)])
        }),
    }
}

fn yield_switch<'a>(plan: &Plan) -> Workload<'a> {
    const METRICS: &[Metric] = &[Metric {
        id: "ns_per_switch",
        name: "ns per switch",
        better: Better::Lower,
    }];
    let switches = plan.yield_switches;
    Workload {
        id: "yield".to_owned(),
        label: format!("2 two tasks yield to each other {} times", count(switches)),
        metrics: METRICS,
        measure: Box::new(move |side| {
            let sample = (side.yield_switch)(switches);
            Ok(vec![nanos_each(sample.wall, switches)])
        }),
    }
}

fn sleeps(plan: &Plan, cancel_half: bool) -> Workload<'_> {
    const METRICS: &[Metric] = &[
        Metric {
            id: "wall_ms",
            name: "wall ms",
            better: Better::Lower,
        },
        Metric {
            id: "cpu_ms",
            name: "CPU ms",
            better: Better::Lower,
        },
    ];
    let (id, cancelled) = if cancel_half {
        ("sleeps_half", ", half cancelled")
    } else {
        ("sleeps", "")
    };
    Workload {
        id: id.to_owned(),
        label: format!(
            "3 {} sleeps of 0-{}{cancelled}",
            count(plan.sleeps),
            duration(plan.sleep_max)
        ),
        metrics: METRICS,
        measure: Box::new(move |side| {
            let delays = plan.sleep_delays(plan.sleeps);
            let sample = (side.sleeps)(&delays, cancel_half);
            Ok(vec![millis(sample.wall), millis(sample.cpu)])
        }),
    }
}

/// When each sleep of a timer-cost workload gets its deadline.
#[derive(Debug, Clone, Copy)]
enum Deadline {
    /// When it is spawned (`Side::sleeps`): the `scale.timers` rows since
    /// the first round. A sleep whose deadline passed while the others were
    /// being spawned finishes at its first poll and sets no timer.
    AtSpawn,
    /// At its task's first poll (`Side::sleeps_from_first_poll`): every
    /// sleep sets a timer, however long the spawning took.
    AtFirstPoll,
}

fn timer_cost(plan: &Plan, sleeps: usize, deadline: Deadline) -> Workload<'_> {
    const METRICS: &[Metric] = &[
        Metric {
            id: "cpu_ns_per_sleep",
            name: "CPU ns per sleep",
            better: Better::Lower,
        },
        Metric {
            id: "wall_ns_per_sleep",
            name: "wall ns per sleep",
            better: Better::Lower,
        },
    ];
    let (id, shape) = match deadline {
        Deadline::AtSpawn => ("scale.timers", ""),
        Deadline::AtFirstPoll => {
            ("scale.timers_at_first_poll", ", deadline at first poll")
        }
    };
    Workload {
        id: format!("{id}.{sleeps}"),
        label: format!(
            "timer cost{shape}: {} sleeps of 0-{}",
            count(sleeps),
            duration(plan.sleep_max)
        ),
        metrics: METRICS,
        measure: Box::new(move |side| {
            let delays = plan.sleep_delays(sleeps);
            let sample = match deadline {
                Deadline::AtSpawn => (side.sleeps)(&delays, false),
                Deadline::AtFirstPoll => (side.sleeps_from_first_poll)(&delays),
            };
            Ok(vec![
                nanos_each(sample.cpu, sleeps),
                nanos_each(sample.wall, sleeps),
            ])
        }),
    }
}

/// `make_delays` makes the `sleeps` delays, spread over `spread`, anew for
/// each run: a workload builds nothing big before it runs, so a run apart
/// starts with an allocator that nothing else has used.
fn lateness<'a>(
    id: &str,
    (sleeps, spread): (usize, Duration),
    make_delays: impl Fn() -> Vec<Duration> + 'a,
) -> Workload<'a> {
    const METRICS: &[Metric] = &[
        Metric {
            id: "p50_ms",
            name: "late p50 ms",
            better: Better::Lower,
        },
        Metric {
            id: "p99_ms",
            name: "late p99 ms",
            better: Better::Lower,
        },
        Metric {
            id: "max_ms",
            name: "late max ms",
            better: Better::Lower,
        },
        Metric {
            id: "early",
            name: "early wake-ups",
            better: Better::Zero,
        },
    ];
    Workload {
        id: id.to_owned(),
        label: format!(
            "4 {} sleeps spread over {}",
            count(sleeps),
            duration(spread)
        ),
        metrics: METRICS,
        measure: Box::new(move |side| {
            #[allow(clippy::cast_precision_loss)]
            let mut late: Vec<f64> = (side.lateness)(&make_delays())
                .into_iter()
                .map(|nanos| nanos as f64 / 1e6)
                .collect();
            late.sort_by(f64::total_cmp);
            let early = late.iter().filter(|&&ms| ms < 0.0).count();
            Ok(vec![
                percentile(&late, 50.0),
                percentile(&late, 99.0),
                percentile(&late, 100.0),
                as_f64(early),
            ])
        }),
    }
}

fn echo_label(echo: EchoPlan) -> String {
    format!(
        "5 echo, {} conns × {} round trips of {} B",
        count(echo.connections),
        count(echo.round_trips),
        echo.message_len,
    )
}

const ROUND_TRIPS: Metric = Metric {
    id: "round_trips_per_s",
    name: "round trips/s",
    better: Better::Higher,
};

fn echo<'a>(id: &str, label: String, echo: EchoPlan) -> Workload<'a> {
    const METRICS: &[Metric] = &[ROUND_TRIPS];
    Workload {
        id: id.to_owned(),
        label,
        metrics: METRICS,
        measure: Box::new(move |side| {
            let sample = (side.echo)(echo)?;
            Ok(vec![per_second(echo.total_round_trips(), sample.wall)])
        }),
    }
}

fn echo_server_process<'a>(plan: &Plan, program: &'a Path) -> Workload<'a> {
    const METRICS: &[Metric] = &[
        ROUND_TRIPS,
        Metric {
            id: "server_cpu_us_per_round_trip",
            name: "server CPU µs per round trip",
            better: Better::Lower,
        },
    ];
    let echo = plan.echo;
    // One server process per side, started on first use and kept for every
    // round, so the warm-up round warms the server too (apart, each run is a
    // process with a server of its own). They are killed when the workload
    // is dropped, right after its last round.
    let servers: RefCell<HashMap<&str, ServerProcess>> = RefCell::default();
    Workload {
        id: "echo_process".to_owned(),
        label: "5 the same, server in its own process".to_owned(),
        metrics: METRICS,
        measure: Box::new(move |side| {
            let mut servers = servers.borrow_mut();
            let server = match servers.entry(side.name) {
                Entry::Occupied(running) => running.into_mut(),
                Entry::Vacant(slot) => {
                    slot.insert(ServerProcess::start(program, side.name)?)
                }
            };
            let before = server.cpu_time()?;
            let sample = (side.echo_clients)(server.addr(), echo)?;
            let server_cpu = server.cpu_time()?.saturating_sub(before);
            let trips = echo.total_round_trips();
            Ok(vec![
                per_second(trips, sample.wall),
                server_cpu.as_secs_f64() * 1e6 / as_f64(trips),
            ])
        }),
    }
}

fn stream<'a>(plan: &Plan) -> Workload<'a> {
    const METRICS: &[Metric] = &[Metric {
        id: "gb_per_s",
        name: "GB/s",
        better: Better::Higher,
    }];
    let bytes = plan.stream_bytes;
    Workload {
        id: "stream".to_owned(),
        label: format!(
            "6 one connection streams {} MiB through the echo",
            bytes / (1024 * 1024)
        ),
        metrics: METRICS,
        measure: Box::new(move |side| {
            let sample = (side.stream)(bytes)?;
            Ok(vec![per_second(bytes, sample.wall) / 1e9])
        }),
    }
}

fn idle<'a>(plan: &Plan) -> Workload<'a> {
    const METRICS: &[Metric] = &[Metric {
        id: "cpu_us",
        name: "CPU µs while waiting",
        better: Better::Lower,
    }];
    let wait = plan.idle_wait;
    Workload {
        id: "idle".to_owned(),
        label: format!("7 idle, one timer {} away", duration(wait)),
        metrics: METRICS,
        measure: Box::new(move |side| {
            let sample = (side.idle)(wait);
            Ok(vec![sample.cpu.as_secs_f64() * 1e6])
        }),
    }
}

fn nanos_each(total: Duration, items: usize) -> f64 {
    total.as_secs_f64() * 1e9 / as_f64(items)
}

fn per_second(items: usize, took: Duration) -> f64 {
    as_f64(items) / took.as_secs_f64()
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// Counts in these workloads stay far below 2^52, where f64 is exact.
#[allow(clippy::cast_precision_loss)]
fn as_f64(count: usize) -> f64 {
    count as f64
}

/// `100,000`: counts in labels, grouped as the README writes them.
fn count(n: usize) -> String {
    group_thousands(as_f64(n))
}

/// `1.0 s` or `100 ms`: durations in labels.
fn duration(duration: Duration) -> String {
    if duration >= Duration::from_secs(1) {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        format!("{} ms", duration.as_millis())
    }
}
