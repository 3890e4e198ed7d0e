//! The `compare` benchmark's command line: what to run, and the report
//! around the table (when, where, and the command that reproduces it).

use std::env;
use std::fs;
use std::io;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::{
    Isolation, Plan, PythonSides, Side, measure_one, run, serve_echo_child,
};

const USAGE: &str = "\
usage: cargo bench -p bench --bench compare -- [--quick] [--runs N] [--only TEXT] [--apart] [--python]

  --quick      every workload smaller and three runs: checks that all works
  --runs N     measured runs per workload (the median is shown)
  --only TEXT  only the workloads whose id contains TEXT (spawn, echo, scale.timers...)
  --apart      each run in a fresh process: the allocator starts empty every time
  --python     also run bench/python/asyncio_bench.py and add its columns";

/// The entry point of `benches/compare.rs`: runs `sides` on every workload and
/// prints the table, or runs one side's echo server (`serve-echo SIDE`).
pub fn main(sides: &[Side]) -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    match parse(&args).and_then(|command| execute(sides, command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Compare(Options),
    ServeEcho(String),
    /// A child of `--apart`: `measure-one PLAN SIDE WORKLOAD`.
    MeasureOne {
        plan: String,
        side: String,
        workload: String,
    },
    Help,
}

#[derive(Debug, Default, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "each is a command-line switch, on or off"
)]
struct Options {
    /// Cargo passes `--bench` under `cargo bench` only. Without it we are
    /// being run by `cargo test --benches` (or `--all-targets`), which must
    /// stay quick, so we measure nothing.
    bench: bool,
    quick: bool,
    runs: Option<usize>,
    only: Option<String>,
    apart: bool,
    python: bool,
}

fn parse(args: &[String]) -> io::Result<Request> {
    if let [mode, side] = args {
        if mode == "serve-echo" {
            return Ok(Request::ServeEcho(side.clone()));
        }
    }
    if let [mode, plan, side, workload] = args {
        if mode == "measure-one" {
            return Ok(Request::MeasureOne {
                plan: plan.clone(),
                side: side.clone(),
                workload: workload.clone(),
            });
        }
    }
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bench" => options.bench = true,
            "--quick" => options.quick = true,
            "--python" => options.python = true,
            "--apart" => options.apart = true,
            "--runs" => {
                let runs =
                    args.next().and_then(|n| n.parse().ok()).filter(|&n| n > 0);
                options.runs =
                    Some(runs.ok_or_else(|| usage("--runs needs a count"))?);
            }
            "--only" => {
                let only =
                    args.next().ok_or_else(|| usage("--only needs a word"))?;
                options.only = Some(only.clone());
            }
            "--help" | "-h" => return Ok(Request::Help),
            other => return Err(usage(&format!("unknown argument `{other}`"))),
        }
    }
    Ok(Request::Compare(options))
}

fn usage(problem: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{problem}\n{USAGE}"))
}

fn execute(sides: &[Side], request: Request) -> io::Result<()> {
    match request {
        Request::Help => println!("{USAGE}"),
        Request::ServeEcho(name) => serve_echo_child(find_side(sides, &name)?)?,
        Request::MeasureOne {
            plan,
            side,
            workload,
        } => {
            let plan = Plan::named(&plan)
                .ok_or_else(|| usage(&format!("no plan called `{plan}`")))?;
            let program = env::current_exe()?;
            let side = find_side(sides, &side)?;
            let values = measure_one(side, &plan, &program, &workload)?;
            let values: Vec<String> = values.iter().map(f64::to_string).collect();
            println!("{}", values.join(" "));
        }
        Request::Compare(options) if !options.bench => {
            eprintln!(
                "compare: measuring only under `cargo bench -p bench --bench compare`; \
                 nothing to do under `cargo test`"
            );
        }
        Request::Compare(options) => compare(sides, &options)?,
    }
    Ok(())
}

fn find_side<'a>(sides: &'a [Side], name: &str) -> io::Result<&'a Side> {
    let side = sides.iter().find(|side| side.name == name);
    side.ok_or_else(|| usage(&format!("no side called `{name}`")))
}

/// Measures every side, then prints when, where and how, and the table.
fn compare(sides: &[Side], options: &Options) -> io::Result<()> {
    let mut plan = if options.quick {
        Plan::quick()
    } else {
        Plan::full()
    };
    if let Some(runs) = options.runs {
        plan.runs = runs;
    }
    let program = env::current_exe()?;
    let only = options.only.as_deref();
    let load_before = load_average();
    let mut python = options
        .python
        .then(|| PythonSides::new(options.quick, options.runs));
    let isolation = if options.apart {
        Isolation::Apart(&program)
    } else {
        Isolation::Shared
    };
    let table = run(
        sides,
        &plan,
        Some(&program),
        only,
        python.as_mut(),
        isolation,
        &mut io::stderr(),
    )?;
    let load = format!(
        "{load_before} when it started, {} when it ended",
        load_average()
    );
    println!("{}", report_heading(sides, &plan, options, &load));
    print!("{}", table.to_markdown());
    Ok(())
}

fn report_heading(
    sides: &[Side],
    plan: &Plan,
    options: &Options,
    load: &str,
) -> String {
    let names: Vec<&str> = sides.iter().map(|side| side.name).collect();
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    format!(
        "## {} ({} plan)\n\n\
         Measured {} on this machine: {cpus} CPUs, {}, {}, tokio {}; \
         load average {load}.\n\
         Each value is the median of {} runs, after {} warm-up run(s) thrown away; \
         the runtimes take turns within each round{}{}.\n\
         `X vs tokio`: how many times better X did than tokio (cost ÷ cost, or \
         rate ÷ rate): above 1 is better.\n\n\
         Command: `{}`\n",
        names.join(" beside "),
        plan.name,
        today(),
        kernel(),
        rustc_version(),
        locked_version("tokio"),
        plan.runs,
        plan.warmups,
        if options.apart {
            ", each run in a fresh process"
        } else {
            ""
        },
        if options.python {
            "; the Python loops run each workload right after them"
        } else {
            ""
        },
        command_line(options),
    )
}

/// The command that reproduces this table.
fn command_line(options: &Options) -> String {
    let mut command = "cargo bench -p bench --bench compare".to_owned();
    let mut extra = Vec::new();
    if options.quick {
        extra.push("--quick".to_owned());
    }
    if let Some(runs) = options.runs {
        extra.push(format!("--runs {runs}"));
    }
    if let Some(only) = &options.only {
        extra.push(format!("--only {only}"));
    }
    if options.apart {
        extra.push("--apart".to_owned());
    }
    if options.python {
        extra.push("--python".to_owned());
    }
    if !extra.is_empty() {
        command.push_str(" -- ");
        command.push_str(&extra.join(" "));
    }
    command
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the days since 1970 (Howard
/// Hinnant's `civil_from_days`, in `plumbing::calendar`).
fn today() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let (year, month, day) = plumbing::calendar::civil_from_days(seconds / 86_400);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The 1-minute load average (Linux): how busy the machine was already.
fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|line| line.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

fn kernel() -> String {
    match fs::read_to_string("/proc/sys/kernel/osrelease") {
        Ok(release) => format!("Linux {}", release.trim()),
        Err(_) => env::consts::OS.to_owned(),
    }
}

fn rustc_version() -> String {
    Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map_or_else(
            || "rustc (unknown version)".to_owned(),
            |v| v.trim().to_owned(),
        )
}

/// The version of `package` that Cargo.lock pins.
fn locked_version(package: &str) -> String {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    let lock = fs::read_to_string(lock).unwrap_or_default();
    let name = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == name {
            if let Some(version) =
                lines.next().and_then(|l| l.strip_prefix("version = "))
            {
                return version.trim_matches('"').to_owned();
            }
        }
    }
    "(unknown version)".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn cargo_bench_arguments_ask_for_a_comparison() {
        let request = parse(&args(
            "--quick --runs 2 --only echo --apart --python --bench",
        ));
        let expected = Options {
            bench: true,
            quick: true,
            runs: Some(2),
            only: Some("echo".to_owned()),
            apart: true,
            python: true,
        };
        assert_eq!(request.unwrap(), Request::Compare(expected));
    }

    #[test]
    fn the_command_line_reproduces_the_options() {
        let Request::Compare(options) =
            parse(&args("--bench --quick --apart --python")).unwrap()
        else {
            panic!("not a comparison");
        };
        assert_eq!(
            command_line(&options),
            "cargo bench -p bench --bench compare -- --quick --apart --python"
        );
    }

    #[test]
    fn a_child_of_apart_is_asked_for_one_workload() {
        assert_eq!(
            parse(&args("measure-one full ours scale.timers.1000")).unwrap(),
            Request::MeasureOne {
                plan: "full".to_owned(),
                side: "ours".to_owned(),
                workload: "scale.timers.1000".to_owned(),
            }
        );
    }

    #[test]
    fn bad_arguments_are_errors_that_show_the_usage() {
        for line in ["--fast", "--runs", "--runs 0", "--runs many", "--only"] {
            let err = parse(&args(line)).unwrap_err();
            assert!(err.to_string().contains("usage:"), "{line}: {err}");
        }
    }

    #[test]
    fn serve_echo_names_a_side() {
        let request = parse(&args("serve-echo tokio")).unwrap();
        assert_eq!(request, Request::ServeEcho("tokio".to_owned()));
    }

    #[test]
    fn the_lock_file_names_tokios_version() {
        assert!(locked_version("tokio").starts_with("1."));
    }
}
