//! `cargo workshop watch [N]`: checks step N once, then again after each
//! save of a file in its folder, on one screen redrawn: the progress
//! through the track, the verdict as `check` gives it, and keys for the
//! hint, the list of functions, the demo and quitting.
//!
//! Each check is a child process, `cargo workshop check N` (this same
//! program), so that a save can end it (its tests with it, as Ctrl-C ends
//! them under `check`) and start the next. Nothing `watch` starts outlives
//! it: `q`, Ctrl-C, SIGTERM and a closed terminal (SIGHUP) end the check
//! and the demo and put the terminal back as it was, and so does a panic
//! (both are ended and the terminal restored when dropped).
//!
//! Where stdout is not a terminal (piped, a log), no screen is redrawn:
//! each verdict is printed once, as plain lines.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::commands::Words;
use crate::commands::status::passes_as_is;
use crate::step::{Step, find_root, step_folders};

use child::{Demo, Ended, RunningCheck};
use input::{Debounce, RawMode};

mod child;
mod draw;
mod input;
mod layout;
mod screen;

pub const HELP: &str = "usage: cargo workshop watch [N]\n\n\
             Checks step N, then again each time you save a file of its folder (a \
             save\nwhile a check runs starts it over), on one screen: how many \
             functions are\nwritten (and whether the verdict blames one), and \
             the verdict as `check` gives\nit, its headline always on screen \
             and the rest a page at a time. Keys: h the\nhint for the function \
             at hand (what it must do, the chapter's section to read),\nl the \
             list of functions, r run the step's demo, Space the next page, b \
             the\npage before, q quit (Ctrl-C too). On Windows, press Enter \
             after the key.\n\n\
             Without N, the step in progress: started, not yet passing. Piped, or \
             with\nTERM=dumb, it prints each verdict once, without redrawing.";

/// What `watch` waits for, from its threads (`input`, `child`).
#[derive(Debug)]
pub enum Event {
    /// A file of the step's, saved (or made, or removed) at that instant.
    Saved(Instant),
    Key(char, Instant),
    /// The keyboard's input ended (stdin closed).
    NoMoreKeys,
    Signal(i32),
    /// A progress line of the check with this id.
    CheckSaid(u64, String),
    /// The check's whole stdout, at its end.
    CheckOut(u64, String),
    /// The check's whole stderr, at its end.
    CheckErr(u64, String),
    /// The terminal changed its size: the screen is drawn again for it.
    Resized,
}

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &[], HELP)?;
    let root = find_root(here)?;
    let n = match words.plain.as_slice() {
        [] => step_in_progress(&root)?.to_string(),
        [n] => (*n).to_owned(),
        [_, more @ ..] => {
            return Err(format!(
                "`cargo workshop watch` takes one step number, not `{}` too\n\n{HELP}",
                more.join(" ")
            ));
        }
    };
    let step = Step::find(&root, &n)?;
    let (sender, events) = mpsc::channel();
    let _watcher = input::watch_saves(&step.dir(), sender.clone())?;
    let demo_runs = Arc::new(AtomicBool::new(false));
    input::on_signals(sender.clone(), Arc::clone(&demo_runs));
    input::on_resize(sender.clone());
    let raw = RawMode::on();
    input::read_keys(sender.clone());
    let last = step_folders(&root).last().map_or(step.number, |(k, _)| *k);
    let next_file = step.state().join("watch-next");
    let mut watch = Watch {
        fancy: draw::draws_a_screen(
            cfg!(unix) && std::io::stdout().is_terminal(),
            std::env::var_os("TERM").as_deref(),
        ),
        raw: raw.is_on(),
        step,
        last,
        next_file,
        sender,
        demo_runs,
        checks: 0,
        running: None,
        verdict: None,
        said: String::new(),
        overlay: Overlay::None,
        scroll: 0,
        debounce: Debounce::default(),
        saved_at: None,
        demo: None,
        demo_ended: None,
    };
    let code = watch.run(&events);
    let fancy = watch.fancy;
    drop(watch); // the check and the demo end, then the terminal is restored
    drop(raw);
    if fancy {
        println!(); // below the last screen
    }
    code
}

/// The step to watch when none is named: the one started and not yet
/// passing. With none such, the last step started, which passes: its
/// screen says so and names the next step's command, where an error would
/// leave a participant who just finished a step wondering what to type.
/// More than one in progress, or none started, is for the participant to
/// say.
fn step_in_progress(root: &Path) -> Result<u32, String> {
    let started: Vec<(u32, bool)> = step_folders(root)
        .into_iter()
        .filter_map(|(number, _)| {
            let step = Step::find(root, &number.to_string()).ok()?;
            step.is_started().then(|| (number, passes_as_is(&step)))
        })
        .collect();
    choose(&started)
}

/// Of the steps started (each with whether it passes as it is), the one to
/// watch.
fn choose(started: &[(u32, bool)]) -> Result<u32, String> {
    let in_progress: Vec<u32> = started
        .iter()
        .filter(|(_, passes)| !passes)
        .map(|(n, _)| *n)
        .collect();
    match (in_progress.as_slice(), started.last()) {
        ([n], _) => Ok(*n),
        ([], Some((last, _))) => Ok(*last),
        ([], None) => Err(format!(
            "no step is started yet: `cargo workshop start N` starts one, \
             then `cargo workshop watch`\n\n{HELP}"
        )),
        (several, _) => {
            let names: Vec<String> = several.iter().map(u32::to_string).collect();
            Err(format!(
                "steps {} are all in progress: name the one to watch, \
                 `cargo workshop watch {}`",
                names.join(", "),
                several.last().copied().unwrap_or_default()
            ))
        }
    }
}

/// What the screen shows besides the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overlay {
    None,
    Hint,
    List,
}

/// The verdict of the last check that ended.
#[derive(Debug)]
struct Verdict {
    text: String,
    /// The function it names, if any.
    next: Option<String>,
    took: Duration,
    /// From the save that called for it to the verdict, if a save did.
    since_save: Option<Duration>,
}

#[derive(Debug)]
struct Watch {
    step: Step,
    last: u32,
    next_file: PathBuf,
    sender: Sender<Event>,
    fancy: bool,
    raw: bool,
    demo_runs: Arc<AtomicBool>,
    /// How many checks were started: each one's id.
    checks: u64,
    running: Option<RunningCheck>,
    verdict: Option<Verdict>,
    /// The running check's last progress line.
    said: String,
    overlay: Overlay,
    /// The first line shown of what pages under the head.
    scroll: usize,
    debounce: Debounce,
    /// The first save not yet answered by a verdict.
    saved_at: Option<Instant>,
    demo: Option<Demo>,
    /// When the demo ended, until a key brings the screen back.
    demo_ended: Option<Instant>,
}

impl Watch {
    fn run(&mut self, events: &Receiver<Event>) -> Result<ExitCode, String> {
        self.start_check()?;
        self.draw();
        loop {
            let now = Instant::now();
            let wait = match (self.debounce.wait(now), self.demo.is_some()) {
                (Some(left), _) => left,
                (None, true) => Duration::from_millis(100),
                (None, false) => Duration::from_secs(1),
            };
            let event = match events.recv_timeout(wait) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return Ok(ExitCode::SUCCESS),
            };
            // Without news, the running check's seconds move on.
            let mut redraw = event.is_none() && self.running.is_some();
            if let Some(event) = event {
                match self.take(event) {
                    Next::Quit(code) => return Ok(code),
                    Next::Redraw => redraw = true,
                    Next::Nothing => {}
                }
            }
            if self.debounce.take_due(Instant::now()) {
                self.start_check()?;
                redraw = true;
            }
            if let Some(status) = self.demo.as_mut().and_then(Demo::ended) {
                self.demo = None;
                self.demo_runs.store(false, Ordering::SeqCst);
                self.demo_ended = Some(Instant::now());
                say(&format!(
                    "\nThe demo ended ({status}). Press a key to come back."
                ));
            }
            if redraw {
                self.draw();
            }
        }
    }

    fn take(&mut self, event: Event) -> Next {
        match event {
            Event::Saved(at) => {
                self.debounce.saw(at);
                self.saved_at.get_or_insert(at);
                if let Some(mut running) = self.running.take() {
                    running.end(); // a save restarts it, after the quiet
                    "a save: checking again".clone_into(&mut self.said);
                    return Next::Redraw;
                }
                Next::Nothing
            }
            Event::Key(key, at) => self.key(key, at),
            Event::NoMoreKeys => Next::Nothing, // Ctrl-C still ends it
            Event::Signal(signal) => {
                Next::Quit(ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)))
            }
            Event::CheckSaid(id, line) => {
                if self.running.as_ref().is_some_and(|r| r.id == id) {
                    self.said = line;
                    return Next::Redraw;
                }
                Next::Nothing
            }
            Event::CheckOut(id, text) => self.check_output(id, |r| r.out(text)),
            Event::CheckErr(id, text) => self.check_output(id, |r| r.err(text)),
            Event::Resized => Next::Redraw,
        }
    }

    fn key(&mut self, key: char, at: Instant) -> Next {
        if self.demo.is_some() {
            return Next::Nothing; // the demo has the screen; Ctrl-C ends it
        }
        if let Some(ended) = self.demo_ended {
            if at < ended {
                return Next::Nothing; // pressed while the demo ran
            }
            self.demo_ended = None;
            return Next::Redraw;
        }
        match key.to_ascii_lowercase() {
            'q' => Next::Quit(ExitCode::SUCCESS),
            input::PAGE_DOWN => self.turn_page(true),
            input::PAGE_UP => self.turn_page(false),
            // Keys typed with Enter: the Enter is no key of its own.
            '\n' => Next::Nothing,
            'h' => self.show(Overlay::Hint),
            'l' => self.show(Overlay::List),
            'r' => {
                self.overlay = Overlay::None;
                self.demo_runs.store(true, Ordering::SeqCst);
                let package = self.step.package();
                if self.fancy {
                    print!("\x1b[2J\x1b[H");
                }
                say(&format!(
                    "cargo run -p {package} (Ctrl-C ends the demo, not watch)\n"
                ));
                match Demo::start(&self.step.root, &package) {
                    Ok(demo) => self.demo = Some(demo),
                    Err(err) => {
                        self.demo_runs.store(false, Ordering::SeqCst);
                        self.said = err;
                        return Next::Redraw;
                    }
                }
                Next::Nothing
            }
            _ => self.show(Overlay::None),
        }
    }

    fn show(&mut self, overlay: Overlay) -> Next {
        self.scroll = 0; // a panel opens at its top
        self.overlay = if self.overlay == overlay {
            Overlay::None // the same key again hides it
        } else {
            overlay
        };
        if !self.fancy && self.overlay != Overlay::None {
            say(&self.overlay_text());
            return Next::Nothing;
        }
        Next::Redraw
    }

    /// Hands an output of check `id` to it, if it is the one running; at
    /// its end, takes its verdict.
    fn check_output(
        &mut self,
        id: u64,
        hand: impl FnOnce(&mut RunningCheck),
    ) -> Next {
        let Some(running) = self.running.as_mut().filter(|r| r.id == id) else {
            return Next::Nothing; // an ended check's last words
        };
        hand(running);
        let Some(ended) = running.ended() else {
            return Next::Nothing;
        };
        self.running = None;
        self.verdict = Some(self.verdict_of(&ended));
        self.scroll = 0;
        self.saved_at = None;
        self.said.clear();
        if !self.fancy {
            say(&self.plain_verdict());
        }
        Next::Redraw
    }

    fn verdict_of(&self, ended: &Ended) -> Verdict {
        let next = std::fs::read_to_string(&self.next_file)
            .ok()
            .filter(|name| !name.is_empty());
        let passing = screen::passing(self.step.number, self.last);
        Verdict {
            text: screen::verdict(
                ended.code,
                &ended.stdout,
                &ended.stderr,
                &passing,
            ),
            next,
            took: ended.took,
            since_save: self.saved_at.map(|at| at.elapsed()),
        }
    }

    fn start_check(&mut self) -> Result<(), String> {
        if let Some(mut running) = self.running.take() {
            running.end();
        }
        self.checks += 1;
        let _ = std::fs::create_dir_all(self.step.state());
        let _ = std::fs::remove_file(&self.next_file);
        self.running = Some(RunningCheck::start(
            &self.step.root,
            self.step.number,
            self.checks,
            &self.next_file,
            &self.sender,
        )?);
        "starting".clone_into(&mut self.said);
        if !self.fancy {
            say(&format!("checking step {}…", self.step.number));
        }
        Ok(())
    }
}

/// Prints `text` as lines; a closed stdout is no reason to stop.
fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// What the loop does after an event.
#[derive(Debug)]
enum Next {
    Nothing,
    Redraw,
    Quit(ExitCode),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_watched_is_the_one_in_progress() {
        assert_eq!(choose(&[(2, true), (3, false)]), Ok(3));
        let none = choose(&[]).unwrap_err();
        assert!(none.contains("`cargo workshop start N`"), "{none}");
        let several = choose(&[(2, false), (3, false)]).unwrap_err();
        assert!(several.contains("steps 2, 3"), "{several}");
        assert!(several.contains("`cargo workshop watch 3`"), "{several}");
    }

    #[test]
    fn with_every_started_step_passing_the_last_one_is_watched() {
        // Step 3 just passed: bare `watch` shows it passing and names
        // `start 4`, instead of an error.
        assert_eq!(choose(&[(3, true)]), Ok(3));
        assert_eq!(choose(&[(2, true), (3, true)]), Ok(3));
    }
}
