//! Step 8's cancellation, turn by turn, from a traced run of the demo's
//! last part (`cancel-step08.svg`): `main` cancels the echo server's task;
//! the server is dropped, unpolled, when its poll comes round (the next
//! safe point), and its connections with it; their sockets leave the loop,
//! the clients read the end of their streams, and `main`'s join gives
//! `Cancelled`.

use super::svg::{self, Svg};
use super::{Figure, Line, lines, section};

const PART: &str = "The echo server shut down, its connections cancelled";

/// The lanes, top to bottom.
const LANES: [&str; 5] = [
    "main (the joiner)",
    "the server's task",
    "its connection tasks",
    "the clients",
    "sockets on the loop",
];

/// Something that happened in a turn, in a lane.
#[derive(Debug, Clone, PartialEq)]
struct Event {
    turn: u64,
    lane: usize,
    text: Vec<String>,
    cancel: bool,
}

pub(super) fn figure(traced: &str) -> Figure {
    let events = events(section(traced, PART));
    Figure::new("cancel-step08.svg", Vec::new(), move |_| draw(&events))
}

/// The part's lines, each with the turn it came in and whether it is a
/// trace line.
fn tagged(part: &str) -> Vec<(u64, String, bool)> {
    let mut turn = 0;
    let mut tagged = Vec::new();
    for line in lines(part) {
        match line {
            Line::Trace {
                turn: Some(n),
                what,
                ..
            } => {
                turn = n;
                tagged.push((n, what, true));
            }
            Line::Trace { .. } => {}
            Line::Demo(text) => tagged.push((turn, text, false)),
        }
    }
    tagged
}

/// What happened from the cancel on, turn by turn.
fn events(part: &str) -> Vec<Event> {
    let tagged = tagged(part);
    let cancel_at = tagged
        .iter()
        .position(|(_, text, trace)| !trace && text.contains("cancel() -> true"))
        .expect("main cancels the server");
    let mut events = Vec::new();
    let mut cancelled_tasks = 0;
    let mut connections_at = None;
    let mut push = |turn, lane, text: &[&str], cancel| {
        events.push(Event {
            turn,
            lane,
            text: text.iter().map(|t| (*t).to_owned()).collect(),
            cancel,
        });
    };
    // The turn before the cancel: how many sockets the loop held.
    let before = tagged[..cancel_at]
        .iter()
        .rev()
        .find(|(_, text, trace)| !trace && text.starts_with("sockets on the loop: "))
        .expect("main counts the sockets first");
    push(before.0, 4, &count(&before.1), false);
    let clients_reading = tagged[cancel_at..]
        .iter()
        .filter(|(_, what, trace)| *trace && what.contains("readable"))
        .fold(Vec::<(u64, usize)>::new(), |mut turns, (t, ..)| {
            match turns.last_mut() {
                Some((last, n)) if last == t => *n += 1,
                _ => turns.push((*t, 1)),
            }
            turns
        });
    let closed: Vec<u64> = tagged[cancel_at..]
        .iter()
        .filter(|(_, text, trace)| {
            !trace && text.ends_with("the server closed the connection")
        })
        .map(|(t, ..)| *t)
        .collect();
    for (t, text, trace) in &tagged[cancel_at..] {
        let t = *t;
        if !trace && text.contains("cancel() -> true") {
            push(t, 0, &["cancel(server)", "-> true"], true);
        } else if *trace && text.ends_with("cancelled: dropped unpolled") {
            cancelled_tasks += 1;
            if cancelled_tasks == 1 {
                push(t, 1, &["its poll comes:", "dropped, unpolled"], true);
            } else if connections_at.is_none() {
                connections_at = Some(t);
                push(
                    t,
                    2,
                    &["dropped,", "unpolled; their", "sockets", "deregistered"],
                    true,
                );
            }
        } else if !trace && text.starts_with("sockets on the loop: ") {
            push(t, 4, &count(text), false);
        } else if !trace
            && text.contains("joining gives an error: task was cancelled")
        {
            push(t, 0, &["join -> Err:", "Cancelled"], true);
        }
    }
    assert!(
        cancelled_tasks > 1,
        "the server's connections are cancelled too"
    );
    for (t, lines) in client_cells(clients_reading.first().copied(), &closed) {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        push(t, 3, &lines, false);
    }
    events.sort_by_key(|e| (e.turn, e.lane));
    let first = events[0].turn;
    for event in &mut events {
        event.turn -= first;
    }
    events
}

/// The clients' lane: when they found their streams readable, and when
/// all of them had been told the server closed the connection. Polled in
/// the turn that woke them, they do both in one turn: then one cell says
/// both, rather than two written on top of each other.
fn client_cells(
    reading: Option<(u64, usize)>,
    closed: &[u64],
) -> Vec<(u64, Vec<String>)> {
    let told = closed.first().copied();
    let owned = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect();
    match (reading, told) {
        (Some((t, n)), Some(t_told)) if t_told == t => vec![(
            t,
            owned(&[
                &format!("{n} readable, and"),
                &format!("all {} told: \"the", closed.len()),
                "server closed the",
                "connection\"",
            ]),
        )],
        _ => {
            let mut cells = Vec::new();
            if let Some((t, n)) = reading {
                let readable = format!("{n} readable:");
                cells.push((t, owned(&[&readable, "the server's", "ends closed"])));
            }
            if let Some(t) = told {
                let all = format!("all {} told:", closed.len());
                cells.push((
                    t,
                    owned(&[&all, "\"the server", "closed the", "connection\""]),
                ));
            }
            cells
        }
    }
}

/// `sockets on the loop: 7 (the listener, 3 clients)` -> `7 sockets`,
/// `the listener,`, `3 clients`: a line each.
fn count(text: &str) -> Vec<&str> {
    let count = text.trim_start_matches("sockets on the loop: ");
    let (number, what) = count.split_once(" (").unwrap_or((count, ""));
    let mut lines = vec![number];
    lines.extend(
        what.trim_end_matches(')')
            .split_inclusive(", ")
            .map(str::trim_end),
    );
    lines.retain(|line| !line.is_empty());
    lines
}

const LABELS: f64 = 180.0;
const TOP: f64 = 96.0;
const LANE: f64 = 80.0;

fn draw(events: &[Event]) -> String {
    let turns = events.iter().map(|e| e.turn).max().unwrap_or(0) + 1;
    let column = (svg::WIDTH - LABELS - 24.0) / svg::count(turns);
    let height = TOP + LANE * svg::count(LANES.len()) + 56.0;
    let mut svg = Svg::new(
        height,
        "Step 8: cancelling the echo server's task, turn by turn",
    );
    svg.text(
        24.0,
        32.0,
        &svg::bold(17, svg::INK),
        "Cancelling the echo server, turn by turn, from a traced run of step 8",
    );
    svg.text(
        24.0,
        52.0,
        &svg::sized(13, svg::MUTED),
        "cancel() only marks the task; the loop drops it where its next poll would have been.",
    );
    for turn in 0..turns {
        let x = LABELS + column * svg::count(turn);
        svg.rect(
            x + 2.0,
            TOP - 26.0,
            column - 4.0,
            LANE * svg::count(LANES.len()) + 26.0,
            &format!(
                "{} rx=\"4\"",
                svg::fill(if turn % 2 == 0 { svg::PANEL } else { "#ffffff" })
            ),
        );
        let label = if turn == 0 {
            "turn n".to_owned()
        } else {
            format!("n+{turn}")
        };
        svg.text(
            x + column / 2.0,
            TOP - 8.0,
            &format!("{} font-weight=\"bold\"", svg::small_middle(svg::INK)),
            &label,
        );
    }
    for (i, lane) in LANES.iter().enumerate() {
        let y = TOP + LANE * svg::count(i);
        svg.line(
            (24.0, y),
            (svg::WIDTH - 24.0, y),
            &svg::stroke("#d0d7de", 1.0),
        );
        svg.text(24.0, y + 22.0, &svg::bold(13, svg::INK), lane);
    }
    for event in events {
        let x = LABELS + column * svg::count(event.turn) + 10.0;
        let y = TOP + LANE * svg::count(event.lane) + 20.0;
        let colour = if event.cancel { svg::NEW } else { svg::BLUE };
        svg.path(
            &format!(
                "M{},{} m-4,0 a4,4 0 1,0 8,0 a4,4 0 1,0 -8,0",
                svg::num(x),
                svg::num(y - 4.0)
            ),
            &svg::fill(colour),
        );
        for (k, text) in event.text.iter().enumerate() {
            let style = if k == 0 {
                svg::bold(12, colour)
            } else {
                svg::sized(12, svg::INK)
            };
            svg.text(x + 9.0, y + 16.0 * svg::count(k), &style, text);
        }
    }
    svg.footnote(
        height - 30.0,
        "No timer: the turns follow at once. Drawn from LOOP_TRACE=1 cargo run -p step08 (its last part).",
    );
    svg.finish(&[])
}
