//! One build answers for every suspect: each holds both bodies, the
//! authors' and the participant's, behind a switch the rerun test's
//! environment sets, so the reruns of all suspects run side by side and
//! stop once one suspect's switch makes them all pass, or once one
//! suspect, the only one of the participant's left with every other
//! switched to the authors', fails them on its own.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::super::{Blame, authors_body, machine_trouble, test_settings};
use super::{Found, Probe, WorkshopCopy};
use crate::runner::{
    self, Built, Cargo, PROBE_DEADLINE, Progress, RERUNS_AT_ONCE, TestCase, TestRun,
};
use crate::step::Step;
use crate::track::Marked;

/// Set in a rerun test's environment: the places in the track of the
/// suspects whose authors' bodies the switching copy runs, separated by
/// commas (`2` or `1,3,4`); the others run the participant's own.
pub(super) const AUTHORS_BODY: &str = "WORKSHOP_AUTHORS_BODY";

/// How much longer than twice a switched rerun's pass the participant's
/// own rerun must run on to count as failing again (`Reruns::of`).
const OUTLASTED_BY: Duration = Duration::from_millis(500);

/// Builds the switching copy, then runs every rerun at once, stopped as
/// soon as the verdict is decided. `None` if the copy does not build (an
/// authors' body may call what the participant's file no longer has).
pub(super) fn all_at_once<'a>(
    step: &Step,
    copy: &WorkshopCopy,
    probe: &Probe<'a>,
    progress: &Progress,
) -> Result<Option<Found<'a>>, String> {
    if !write_switches(step, &copy.root, &probe.suspects)? {
        return Ok(None);
    }
    let mut files: Vec<String> =
        probe.rerun.iter().map(|c| c.file.clone()).collect();
    files.dedup();
    let Some((built, programs)) = build(step, &copy.cargo, &files, progress)? else {
        return Ok(None);
    };
    let mut sets = switch_sets(&probe.suspects, probe.alone_too);
    if probe.as_they_are {
        sets.insert(0, Vec::new());
    }
    let mut cases = Vec::new();
    for set in sets {
        let on: Vec<String> = set.iter().map(ToString::to_string).collect();
        for case in &probe.rerun {
            let Some(binary) = built.binaries.iter().find(|b| b.file == case.file)
            else {
                return Ok(None);
            };
            cases.push(TestCase {
                binary: binary.path.clone(),
                env: vec![(AUTHORS_BODY.to_owned(), on.join(","))],
                ..case.clone()
            });
        }
    }
    let mut settings = test_settings(&copy.cargo, PROBE_DEADLINE, Some(&programs));
    // A wrong suspect's reruns hang as the participant's did, to the
    // deadline: all at once, the culprit's are not queued behind them.
    settings.at_once = cases.len().min(RERUNS_AT_ONCE);
    // What still ran when the reruns were enough: the verdict reads it.
    let last_running = RefCell::new(Vec::new());
    let ran =
        runner::run_tests_until(&cases, &settings, &Progress::new(true), |so_far| {
            last_running.replace(so_far.running.clone());
            Reruns::of(probe, so_far.runs, &so_far.running).decided()
        });
    let running = if ran.enough {
        last_running.into_inner()
    } else {
        Vec::new()
    };
    Ok(Some(Reruns::of(probe, &ran.runs, &running).verdict()))
}

/// Which suspects each rerun switches to the authors' body, likeliest
/// suspect first: each alone (does theirs fix it?), then all but each
/// (does the participant's fail on its own?). With several functions
/// wrong, no one switch makes the tests pass: the second kind names one
/// without waiting for every wrong switch's rerun to hang to its deadline.
pub(super) fn switch_sets(suspects: &[&Marked], alone_too: bool) -> Vec<Vec<usize>> {
    let mut sets: Vec<Vec<usize>> = Vec::new();
    for suspect in suspects {
        let all_but = if alone_too {
            alone_with_the_authors(suspects, suspect)
        } else {
            Vec::new()
        };
        for set in [vec![suspect.order], all_but] {
            if !set.is_empty() && !sets.contains(&set) {
                sets.push(set);
            }
        }
    }
    sets
}

/// The switches, in order, that leave `kept` the only suspect of the
/// participant's.
fn alone_with_the_authors(suspects: &[&Marked], kept: &Marked) -> Vec<usize> {
    let mut others: Vec<usize> = suspects
        .iter()
        .map(|m| m.order)
        .filter(|&order| order != kept.order)
        .collect();
    others.sort_unstable();
    others
}

/// What the reruns so far say, suspect by suspect.
pub(super) struct Reruns<'p, 'a> {
    probe: &'p Probe<'a>,
    /// The failing tests that also fail rerun as they are (all of them, if
    /// not rerun so), or `None` while those reruns are not all done.
    still_failing: Option<Vec<String>>,
    /// For each suspect, in order: the tests its authors' body makes pass.
    fixed: Vec<Vec<String>>,
    /// For each suspect, in order: the tests that fail with it the only
    /// participant's function left (every other suspect switched to the
    /// authors'). Empty for a lone suspect: that is the rerun as it is.
    alone_fails: Vec<Vec<String>>,
}

impl<'p, 'a> Reruns<'p, 'a> {
    /// What `runs`, ended, say, with `running` those still running and
    /// for how long.
    pub(super) fn of(
        probe: &'p Probe<'a>,
        runs: &[TestRun],
        running: &[(TestCase, Duration)],
    ) -> Self {
        let run_of = |case: &TestCase, switches: &[usize]| {
            runs.iter().find(|run| {
                run.case.id() == case.id() && switched_to(&run.case) == switches
            })
        };
        // A test stopped at a blank function's `todo!()` counts as passing:
        // what is left is a function not written yet.
        let at_a_todo =
            |run: &TestRun| run.outcome.message().contains("not yet implemented");
        let passed = |case: &TestCase, switches: &[usize]| {
            run_of(case, switches).map(|run| {
                (run.outcome.passed() && probe.quick_enough(run.took))
                    || at_a_todo(run)
            })
        };
        // Rerun as it is, a test that runs on long after a switch made it
        // pass fails as it did: one whose failure comes and goes would end
        // about as soon as the switched one.
        let outlasted = |case: &TestCase| {
            let Some((_, ran_for)) = running.iter().find(|(other, _)| {
                other.id() == case.id() && switched_to(other).is_empty()
            }) else {
                return false;
            };
            runs.iter().any(|run| {
                run.case.id() == case.id()
                    && !switched_to(&run.case).is_empty()
                    && run.outcome.passed()
                    && *ran_for > run.took * 2 + OUTLASTED_BY
            })
        };
        let ids_of = |keep: &dyn Fn(&TestCase) -> bool| -> Vec<String> {
            probe
                .rerun
                .iter()
                .filter(|case| keep(case))
                .map(TestCase::id)
                .collect()
        };
        let still_failing = if probe.as_they_are {
            probe
                .rerun
                .iter()
                .map(|case| {
                    let passed = passed(case, &[])
                        .or_else(|| outlasted(case).then_some(false))?;
                    Some((!passed).then(|| case.id()))
                })
                .collect::<Option<Vec<_>>>()
                .map(|failing| failing.into_iter().flatten().collect())
        } else {
            Some(ids_of(&|_| true))
        };
        let fixed = probe
            .suspects
            .iter()
            .map(|suspect| {
                ids_of(&|case| passed(case, &[suspect.order]) == Some(true))
            })
            .collect();
        let alone_fails = probe
            .suspects
            .iter()
            .map(|kept| {
                let others = alone_with_the_authors(&probe.suspects, kept);
                if others.is_empty() || !probe.alone_too {
                    return Vec::new();
                }
                ids_of(&|case| {
                    run_of(case, &others)
                        .is_some_and(|run| !run.outcome.passed() && !at_a_todo(run))
                })
            })
            .collect();
        Reruns {
            probe,
            still_failing,
            fixed,
            alone_fails,
        }
    }

    /// Whether nothing left to run could change the verdict: the failures
    /// passed as they are, or one suspect's body makes them all pass, or
    /// one suspect fails them on its own.
    pub(super) fn decided(&self) -> bool {
        let Some(failing) = &self.still_failing else {
            return false;
        };
        failing.is_empty()
            || self
                .fixed
                .iter()
                .any(|passing| failing.iter().all(|id| passing.contains(id)))
            || self.alone_fails.iter().any(|fails| !fails.is_empty())
    }

    /// The suspect whose body makes all the tests still failing pass, else
    /// one that fails them on its own, else the one whose body makes the
    /// most pass (the likeliest of equals).
    pub(super) fn verdict(&self) -> Found<'a> {
        let Some(failing) = &self.still_failing else {
            return Found::Nothing;
        };
        if failing.is_empty() {
            return Found::PassedOnRerun;
        }
        let suspects = &self.probe.suspects;
        let best = suspects
            .iter()
            .zip(&self.fixed)
            .map(|(suspect, passing)| {
                let passing: Vec<String> = passing
                    .iter()
                    .filter(|id| failing.contains(id))
                    .cloned()
                    .collect();
                (*suspect, passing)
            })
            .filter(|(_, passing)| !passing.is_empty())
            .rev()
            .max_by_key(|(_, passing)| passing.len());
        let fixes_all =
            |(_, passing): &(_, Vec<String>)| passing.len() == failing.len();
        if let Some((suspect, passing)) = best.as_ref().filter(|b| fixes_all(b)) {
            return Found::Culprit(blame(suspect, passing.clone(), failing.len()));
        }
        let on_its_own = suspects
            .iter()
            .zip(&self.alone_fails)
            .find(|(_, fails)| !fails.is_empty());
        if let Some((suspect, fails)) = on_its_own {
            return Found::Culprit(blame_alone(suspect, fails.clone()));
        }
        best.map_or(Found::Nothing, |(suspect, passing)| {
            Found::Culprit(blame(suspect, passing, failing.len()))
        })
    }
}

/// Which suspects' switches a rerun had on, in order (none: as it is).
fn switched_to(case: &TestCase) -> Vec<usize> {
    let mut on: Vec<usize> = case
        .env
        .iter()
        .find(|(key, _)| key == AUTHORS_BODY)
        .map(|(_, orders)| {
            orders.split(',').filter_map(|n| n.parse().ok()).collect()
        })
        .unwrap_or_default();
    on.sort_unstable();
    on
}

/// The blame for `suspect`, whose authors' body made `passing` pass, of
/// `rerun` failing tests.
fn blame(suspect: &Marked, passing: Vec<String>, rerun: usize) -> Blame<'_> {
    let one = rerun == 1;
    Blame {
        function: suspect,
        why: format!(
            "with the authors' `{}` put back in a copy of your code, {} \
             failing test{} rerun there no longer fail{} this way",
            suspect.function,
            if passing.len() == rerun {
                "the"
            } else {
                "some"
            },
            if one { "" } else { "s" },
            if one { "s" } else { "" },
        ),
        tests: passing,
    }
}

/// The blame for `suspect`, the only one of the participant's functions
/// left in a copy where the others are the authors', and `failing` still
/// failing there.
fn blame_alone(suspect: &Marked, failing: Vec<String>) -> Blame<'_> {
    let one = failing.len() == 1;
    Blame {
        function: suspect,
        why: format!(
            "in a copy of your code with the authors' version of every other \
             function you wrote, and yours of `{}`, the failing test{} rerun \
             there still fail{}: it is wrong on its own (others may be too; \
             each verdict names one)",
            suspect.function,
            if one { "" } else { "s" },
            if one { "s" } else { "" },
        ),
        tests: failing,
    }
}

/// Writes each suspect into the copy with both bodies and the switch
/// between them: `false` if a body cannot be found, `Err` if the copy
/// cannot be written.
fn write_switches(
    step: &Step,
    copy: &Path,
    suspects: &[&Marked],
) -> Result<bool, String> {
    let mut files: Vec<&str> = suspects.iter().map(|m| m.file.as_str()).collect();
    files.sort_unstable();
    files.dedup();
    for file in files {
        let theirs = step.read(file);
        let mut text = theirs.clone();
        let mut in_file: Vec<&Marked> = suspects
            .iter()
            .copied()
            .filter(|m| m.file == file)
            .collect();
        // From the end of the file: each body's place stays as found.
        in_file.sort_by_key(|m| Reverse(m.body.start));
        for marked in in_file {
            let own = theirs.get(marked.body.clone());
            let (Some(authors), Some(own)) = (authors_body(step, marked), own)
            else {
                return Ok(false);
            };
            let switched = switch(marked.order, &authors, own);
            text.replace_range(marked.body.clone(), &switched);
        }
        // Written again the same (by `build_ahead`, then by the probe of the
        // same check), it would look newer to Cargo than its build.
        let path = copy.join(&step.folder).join(file);
        if fs::read_to_string(&path).ok() != Some(text.clone()) {
            fs::write(&path, text)
                .map_err(|err| format!("{}: {err}", path.display()))?;
        }
    }
    Ok(true)
}

/// A body that runs the authors' `authors` when `AUTHORS_BODY` lists
/// `order` and the participant's `theirs` otherwise. The answer is kept in a
/// static: a function the tests call a million times reads the
/// environment once.
pub(super) fn switch(order: usize, authors: &str, theirs: &str) -> String {
    format!(
        "{{\n    static AUTHORS: ::std::sync::OnceLock<bool> = \
         ::std::sync::OnceLock::new();\n    \
         if *AUTHORS.get_or_init(|| ::std::env::var(\"{AUTHORS_BODY}\")\
         .is_ok_and(|on| on.split(',').any(|n| n == \"{order}\"))) \
         {authors} else {theirs}\n}}"
    )
}

/// Builds in `copy`, ahead of any failure, the switching copy for
/// `suspects` with the test files `files`: started with the tests, the
/// probe then mostly only reruns. Whatever fails here, the probe meets
/// again and says.
pub fn build_ahead(
    step: &Step,
    copy: &WorkshopCopy,
    suspects: &[&Marked],
    files: &[String],
) {
    if write_switches(step, &copy.root, suspects) == Ok(true) {
        let built = build(step, &copy.cargo, files, &Progress::new(true));
        if let Ok(Some((_, programs))) = built {
            runner::remove_programs(&programs);
        }
    }
}

/// Builds the copy's test files `files`, then the step's programs, which
/// the reruns run. `None` if the code does not compile; `Err` if the build
/// failed for want of the machine's means (no space left, Cargo gone).
fn build(
    step: &Step,
    cargo: &Cargo,
    files: &[String],
    progress: &Progress,
) -> Result<Option<(Built, PathBuf)>, String> {
    let built = match runner::build_tests(cargo, files, progress)? {
        Ok(built) => built,
        Err(error) if machine_trouble(&error.message).is_some() => {
            return Err(error.message);
        }
        Err(_) => return Ok(None),
    };
    match runner::build_programs(cargo, &step.package(), progress) {
        Ok(folder) => Ok(Some((built, folder))),
        Err(error) if machine_trouble(&error).is_some() => Err(error),
        Err(_) => Ok(None),
    }
}
