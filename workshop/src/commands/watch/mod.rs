//! `cargo workshop watch [N]`: checks step N again after each save of a
//! file in its folder, on one screen (piped or with `TERM=dumb`, as lines).
//! Each check is a child `cargo workshop check N`, so that a save can end
//! it. Nothing `watch` starts outlives it, and the terminal is restored.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use crate::commands::Words;
use crate::commands::status::passes_as_is;
use crate::step::{Step, find_root, step_folders};

use child::RunningCheck;
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

/// What `watch` waits for, from its threads: a save of the step's files,
/// a key, a signal, a new terminal size, and the progress lines and the
/// end (stdout, stderr) of the check with an id.
#[derive(Debug)]
pub enum Event {
    Saved(Instant),
    Key(char, Instant),
    Signal(i32),
    Resized,
    CheckSaid(u64, String),
    CheckDone(u64, String, String),
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
    let raw = RawMode::on();
    input::read_keys(sender.clone());
    let mut watch = Watch {
        fancy: draw::draws_a_screen(
            cfg!(unix) && std::io::stdout().is_terminal(),
            std::env::var_os("TERM").as_deref(),
        ),
        raw: raw.is_on(),
        step,
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
/// passing; else the last one started, whose screen names the next step.
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

/// Of the steps started (each with whether it passes), the one to watch.
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

/// The panel shown above the verdict, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overlay {
    None,
    Hint,
    List,
}

/// The last check's verdict, the function it names, and its status line.
#[derive(Debug)]
struct Verdict {
    text: String,
    next: Option<String>,
    checked: String,
}

#[derive(Debug)]
struct Watch {
    step: Step,
    sender: Sender<Event>,
    fancy: bool,
    raw: bool,
    demo_runs: Arc<AtomicBool>,
    /// How many checks were started: the last one's id.
    checks: u64,
    running: Option<RunningCheck>,
    verdict: Option<Verdict>,
    /// The running check's last progress line, or why none runs.
    said: String,
    overlay: Overlay,
    /// The body's first line shown.
    scroll: usize,
    debounce: Debounce,
    /// The first save not yet answered by a verdict.
    saved_at: Option<Instant>,
    /// When the demo ended, until a key brings the screen back.
    demo_ended: Option<Instant>,
}

/// What the loop does after an event.
#[derive(Debug)]
enum Next {
    Nothing,
    Redraw,
    Quit(ExitCode),
}

impl Watch {
    fn run(&mut self, events: &Receiver<Event>) -> Result<ExitCode, String> {
        self.start_check()?;
        self.draw();
        loop {
            let wait = self.debounce.wait(Instant::now());
            // Never disconnected: `self.sender` is one of its ends.
            let event = events
                .recv_timeout(wait.unwrap_or(Duration::from_secs(1)))
                .ok();
            // Without news, the running check's seconds move on.
            let mut redraw = event.is_none() && self.running.is_some();
            match event.map(|event| self.take(event)) {
                Some(Next::Quit(code)) => return Ok(code),
                Some(Next::Redraw) => redraw = true,
                _ => {}
            }
            if self.debounce.take_due(Instant::now()) {
                self.start_check()?;
                redraw = true;
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
                // Dropped, the check ends: the next starts after the quiet.
                if self.running.take().is_none() {
                    return Next::Nothing;
                }
                "a save: checking again".clone_into(&mut self.said);
                Next::Redraw
            }
            Event::Key(key, at) => self.key(key, at),
            Event::Signal(signal) => {
                Next::Quit(ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)))
            }
            Event::Resized => Next::Redraw,
            Event::CheckSaid(id, line) => match &self.running {
                Some(running) if running.id == id => {
                    self.said = line;
                    Next::Redraw
                }
                _ => Next::Nothing,
            },
            Event::CheckDone(id, stdout, stderr) => {
                match self.running.take_if(|running| running.id == id) {
                    Some(ended) => self.take_verdict(ended, &stdout, &stderr),
                    None => Next::Nothing, // an ended check's last words
                }
            }
        }
    }

    fn key(&mut self, key: char, at: Instant) -> Next {
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
            '\n' => Next::Nothing, // the Enter after a key
            'h' => self.show(Overlay::Hint),
            'l' => self.show(Overlay::List),
            'r' => self.run_demo(),
            _ => self.show(Overlay::None),
        }
    }

    /// Opens `overlay` at its top, or closes it if open.
    fn show(&mut self, overlay: Overlay) -> Next {
        self.scroll = 0;
        self.overlay = if self.overlay == overlay {
            Overlay::None
        } else {
            overlay
        };
        if !self.fancy && self.overlay != Overlay::None {
            say(&self.overlay_text());
            return Next::Nothing;
        }
        Next::Redraw
    }

    /// Runs the step's demo on the terminal; watch waits for its end, and
    /// Ctrl-C, which the terminal sends to both, is the demo's.
    fn run_demo(&mut self) -> Next {
        self.overlay = Overlay::None;
        let package = self.step.package();
        if self.fancy {
            print!("\x1b[2J\x1b[H");
        }
        say(&format!(
            "cargo run -p {package} (Ctrl-C ends the demo, not watch)\n"
        ));
        self.demo_runs.store(true, Ordering::SeqCst);
        let ran = child::run_demo(&self.step.root, &package);
        // The Ctrl-C that ended it may still be on its way to `on_signals`.
        std::thread::sleep(Duration::from_millis(100));
        self.demo_runs.store(false, Ordering::SeqCst);
        match ran {
            Ok(status) => {
                say(&format!(
                    "\nThe demo ended ({status}). Press a key to come back."
                ));
                self.demo_ended = Some(Instant::now());
                Next::Nothing
            }
            Err(err) => {
                self.said = err;
                Next::Redraw
            }
        }
    }

    fn take_verdict(
        &mut self,
        mut ended: RunningCheck,
        out: &str,
        err: &str,
    ) -> Next {
        let code = ended.reap();
        let n = self.step.number;
        let last = step_folders(&self.step.root).last().map_or(n, |(k, _)| *k);
        let since_save = self.saved_at.take().map(|at| at.elapsed());
        self.verdict = Some(Verdict {
            text: screen::verdict(code, out, err, (n, last)),
            next: std::fs::read_to_string(child::next_file(&self.step))
                .ok()
                .filter(|name| !name.is_empty()),
            checked: screen::checked(ended.began.elapsed(), since_save),
        });
        self.scroll = 0;
        self.said.clear();
        if !self.fancy {
            say(&self.plain_verdict());
        }
        Next::Redraw
    }

    fn start_check(&mut self) -> Result<(), String> {
        self.running = None; // dropped, the one running ends
        self.checks += 1;
        let check = RunningCheck::start(&self.step, self.checks, &self.sender)?;
        self.running = Some(check);
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
