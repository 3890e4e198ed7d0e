//! The benchmarks at tiny sizes, on every side: each workload runs and
//! reports sane numbers, and each echo server process behaves. CI builds and
//! checks the benchmarks this way; it never runs them at full size.
//!
//! They guard the authors' tools, not the steps, and take over a minute on
//! two cores (they build the `compare` benchmark first), so the README's
//! `cargo test --workspace` leaves them out; `.ci/run` runs them:
//!
//!     cargo test -p bench --test sides -- --ignored

#[path = "../sides/mod.rs"]
mod sides;

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use bench::{Better, Isolation, Plan, ServerProcess};
use sides::ALL;

/// The `compare` benchmark binary, built once by Cargo (so never stale): its
/// `serve-echo` mode is the echo server process.
fn compare_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        workshop_tests::built::executable(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"),
            &["-p", "bench", "--bench", "compare"],
            "compare",
        )
    })
}

#[test]
#[ignore = "the authors' benchmark harness; .ci/run runs it"]
fn every_workload_reports_a_number_for_every_metric() {
    let plan = Plan::tiny();
    let table = bench::run(
        ALL,
        &plan,
        Some(compare_binary()),
        None,
        None,
        Isolation::Shared,
        &mut io::sink(),
    )
    .expect("every workload runs");
    // spawn cost, then timer cost (CPU and wall) with deadlines at spawn
    // and at first poll
    let scaled = 5 * plan.scale_counts.len() + plan.scale_connections.len();
    // spawn, yield, 2 sleeps x 2, 2 lateness x 4, echo, echo process 2,
    // stream, idle
    assert_eq!(table.rows.len(), 19 + scaled);
    for row in &table.rows {
        for (side, value) in table.sides.iter().zip(&row.values) {
            let value =
                value.unwrap_or_else(|| panic!("{side}: {} has none", row.id));
            assert!(
                value.is_finite() && value >= 0.0,
                "{side}: {}: {value}",
                row.id
            );
            if row.better != Better::Zero {
                assert!(value > 0.0, "{side}: {}: {value}", row.id);
            }
        }
    }
}

#[test]
#[ignore = "the authors' benchmark harness; .ci/run runs it"]
fn no_sleep_wakes_before_its_deadline() {
    let delays: Vec<_> = (1..=200).map(|i| Duration::from_micros(i * 500)).collect();
    for side in ALL {
        let late = (side.lateness)(&delays);
        assert_eq!(late.len(), delays.len());
        assert!(
            late.iter().all(|&nanos| nanos >= 0),
            "{}: {late:?}",
            side.name
        );
    }
}

/// A task per sleep, each sleep made at the task's first poll: the run
/// lasts at least the longest delay (the sleeps are awaited, not skipped),
/// and the loop waits for them blocked, not spinning.
#[test]
#[ignore = "the authors' benchmark harness; .ci/run runs it"]
fn a_sleep_set_at_its_first_poll_waits_its_whole_delay() {
    let delays: Vec<_> = (1..=100).map(|i| Duration::from_micros(i * 300)).collect();
    let longest = delays[delays.len() - 1];
    for side in ALL {
        let sample = (side.sleeps_from_first_poll)(&delays);
        assert!(sample.wall >= longest, "{}: {sample:?}", side.name);
        // 100 sleeps cost well under a millisecond of CPU; a loop that
        // spun until the last deadline would burn the whole 30 ms.
        assert!(sample.cpu * 2 < sample.wall, "{}: {sample:?}", side.name);
    }
}

#[test]
#[ignore = "the authors' benchmark harness; .ci/run runs it"]
fn waiting_on_a_timer_burns_next_to_no_cpu() {
    for side in ALL {
        let sample = (side.idle)(Duration::from_millis(200));
        assert!(sample.wall >= Duration::from_millis(200));
        // A busy loop would burn the whole 200 ms; a blocked one some µs.
        assert!(
            sample.cpu < Duration::from_millis(20),
            "{}: {sample:?}",
            side.name
        );
    }
}

#[test]
#[ignore = "the authors' benchmark harness; .ci/run runs it"]
fn half_cancelled_sleeps_and_streams_complete() {
    let delays = Plan::tiny().sleep_delays(1_000);
    for side in ALL {
        let sample = (side.sleeps)(&delays, true);
        assert!(
            sample.wall < Duration::from_secs(5),
            "{}: {sample:?}",
            side.name
        );
        let sample = (side.stream)(4 * 1024 * 1024).expect("4 MiB stream through");
        assert!(
            sample.wall < Duration::from_secs(5),
            "{}: {sample:?}",
            side.name
        );
    }
}

#[test]
#[ignore = "the authors' benchmark harness; .ci/run runs it"]
fn each_server_process_echoes_reports_its_cpu_and_dies_with_its_handle() {
    for side in ALL {
        let mut server = ServerProcess::start(compare_binary(), side.name).unwrap();
        let addr = server.addr();
        let before = server.cpu_time().unwrap();

        let mut client = TcpStream::connect(addr).unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        client.write_all(b"hello").unwrap();
        let mut reply = [0; 5];
        client.read_exact(&mut reply).unwrap();
        assert_eq!(&reply, b"hello", "{}", side.name);
        assert!(server.cpu_time().unwrap() >= before);

        drop(server);
        // Its listener went with it.
        assert!(TcpStream::connect(addr).is_err(), "{}", side.name);
    }
}

#[test]
#[ignore = "the authors' benchmark harness; .ci/run runs it"]
fn a_server_process_for_an_unknown_side_fails_cleanly() {
    let err = ServerProcess::start(compare_binary(), "nonesuch").unwrap_err();
    assert!(
        err.to_string().contains("no side called `nonesuch`"),
        "{err}"
    );
}

/// `--apart`: each run in a child process of the compare binary, whose
/// values come back through its output.
#[test]
#[ignore = "the authors' benchmark harness; .ci/run runs it"]
fn a_workload_measured_apart_reports_its_numbers() {
    let table = bench::run(
        ALL,
        &Plan::tiny(),
        Some(compare_binary()),
        Some("scale.timers"),
        None,
        Isolation::Apart(compare_binary()),
        &mut io::sink(),
    )
    .expect("every timer workload runs in its own processes");
    // Deadlines at spawn, and at first poll (`scale.timers_at_first_poll`),
    // each with its CPU and wall time.
    assert_eq!(table.rows.len(), 4 * Plan::tiny().scale_counts.len());
    for row in &table.rows {
        for value in &row.values {
            let value = value.expect("a value for every side");
            assert!(value.is_finite() && value > 0.0, "{}: {value}", row.id);
        }
    }
}

/// A child asked for a workload that does not exist says so, and fails.
#[test]
#[ignore = "the authors' benchmark harness; .ci/run runs it"]
fn a_child_asked_for_an_unknown_workload_fails_cleanly() {
    let output = std::process::Command::new(compare_binary())
        .args(["measure-one", "tiny", "ours", "nonesuch"])
        .output()
        .expect("the compare binary runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no workload called `nonesuch`"), "{stderr}");
}
