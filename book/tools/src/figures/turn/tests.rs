use super::*;

#[test]
fn each_steps_trace_code_names_its_phases() {
    use Phase::{End, Run, Sockets, Sweep, Timers, Wait, Woken};
    let expected: [&[Phase]; 7] = [
        &[Run],
        &[Wait, Timers, Run, End],
        &[Wait, Sockets, Timers, Run, End],
        &[Wait, Sockets, Timers, Run, Woken, End],
        &[Wait, Sockets, Timers, Run, Woken, End],
        &[Wait, Sockets, Timers, Run, Woken, End],
        &[Sweep, Wait, Sockets, Timers, Run, Woken, End],
    ];
    for (step, phases) in (2..=8).zip(expected) {
        let in_code: Vec<Phase> = phases_in_code(step).into_iter().collect();
        assert_eq!(in_code, phases, "step {step}");
    }
}

#[test]
fn a_cancelled_timer_skipped_after_the_wait_is_the_timers_phase() {
    let output = "\
[+0.000 s] turn 1: timer cancelled: skipped
[+0.000 s] turn 1: wait 0.010 s: the next deadline
[+0.010 s] turn 1: timer due: 1 (deadline +0.010 s)
[+0.010 s] turn 1: timer cancelled: skipped
[+0.010 s] turn 1: ran 1 callbacks
";
    let (kinds, sequences) = read_run(output);
    assert!(kinds[&Phase::Sweep].contains("timer cancelled: skipped"));
    assert!(kinds[&Phase::Timers].contains("timer cancelled: skipped"));
    assert_eq!(
        sequences,
        [[Phase::Sweep, Phase::Wait, Phase::Timers, Phase::Run]]
    );
}

/// A demo whose loop ends (`wait: nothing to wait for`, alone in the
/// last turn), and a scene that skips a cancelled timer in two phases.
fn runs() -> [Run; 2] {
    let demo = "\
[+0.000 s] turn 1: wait 0.010 s: the next deadline
[+0.010 s] turn 1: timer due: 1 (deadline +0.010 s)
[+0.010 s] turn 1: ran 1 callbacks
[+0.010 s] turn 2: wait: nothing to wait for
";
    let scene = "\
[+0.000 s] turn 1: timer cancelled: skipped
[+0.000 s] turn 1: wait 0.010 s: the next deadline
[+0.010 s] turn 1: timer due: 1 (deadline +0.010 s)
[+0.010 s] turn 1: timer cancelled: skipped
[+0.010 s] turn 1: ran 1 callbacks
";
    [
        Run {
            step: 8,
            scene: None,
            output: demo.to_owned(),
        },
        Run {
            step: 8,
            scene: Some("sweep-step08"),
            output: scene.to_owned(),
        },
    ]
}

#[test]
fn the_figure_draws_each_line_where_it_was_printed() {
    let runs = runs();
    let runs: Vec<&Run> = runs.iter().collect();
    let turns = read_turns(&runs);
    let svg = Drawing::new(8, &turns, &Turns::default()).draw();
    assert_eq!(misdrawn(&runs, &svg), Vec::<String>::new(), "{svg}");
    assert!(svg.contains(">timer cancelled: skipped *</text>"), "{svg}");
}

#[test]
fn a_line_drawn_inside_the_loop_or_in_one_of_its_two_phases_is_named() {
    let runs = runs();
    let runs: Vec<&Run> = runs.iter().collect();
    // Two boxes in the loop, the arrow back from the second: the line
    // that ends the loop drawn in the first, the skipped timer only in
    // the second.
    let svg = "<svg viewBox=\"0 0 760 300\">\n\
        <rect x=\"64\" y=\"78\" width=\"676\" height=\"60\"/>\n\
        <text x=\"94\" y=\"121\">wait: nothing to wait for</text>\n\
        <rect x=\"64\" y=\"160\" width=\"676\" height=\"60\"/>\n\
        <text x=\"94\" y=\"200\">timer cancelled: skipped *</text>\n\
        <path d=\"M63,184 H30 V102 H63\"/>\n</svg>";
    let problems = misdrawn(&runs, svg);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].contains("printed after the loop ends"),
        "{problems:?}"
    );
    assert!(problems[1].contains("drawn in 1 box"), "{problems:?}");
}

#[test]
fn phases_are_ordered_as_the_turns_show_them_and_run_once_otherwise() {
    use Phase::{Run, Sockets, Timers, Wait, Woken};
    // The demo's turns never show sockets beside timers, a scene's
    // never timers: sockets still come before timers, after the wait.
    let sequences = vec![
        vec![Wait, Timers, Run, Woken],
        vec![Wait, Run, Woken],
        vec![Wait, Sockets, Run],
    ];
    let phases = [Woken, Run, Timers, Sockets, Wait];
    assert_eq!(
        order(&phases, &sequences),
        [Wait, Sockets, Timers, Run, Woken]
    );
}
