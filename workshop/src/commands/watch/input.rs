//! What `watch` waits for, each on a thread of its own that sends an
//! `Event`: the saves of the step's files (told by the OS, through
//! `notify`), the keys the participant presses, and the signals that end
//! it. And the terminal's raw mode, which lets a key arrive without Enter,
//! undone on every way out.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use super::Event;

/// How long the step's files must stay quiet after a save before a check
/// starts: an editor's save is several writes (a backup, a rename, the
/// file), and "save all" is one per file.
pub const QUIET: Duration = Duration::from_millis(300);

/// When to check after saves: `QUIET` after the last of them.
#[derive(Debug, Default)]
pub struct Debounce {
    last: Option<Instant>,
}

impl Debounce {
    /// A save, at `now`.
    pub fn saw(&mut self, now: Instant) {
        self.last = Some(now);
    }

    /// How long to wait still, at `now`, before the saves seen call for a
    /// check: `None` when none is pending.
    pub fn wait(&self, now: Instant) -> Option<Duration> {
        let last = self.last?;
        Some(QUIET.saturating_sub(now.saturating_duration_since(last)))
    }

    /// Whether the saves seen call for a check now; if so, they are
    /// forgotten (the check is for all of them).
    pub fn take_due(&mut self, now: Instant) -> bool {
        let due = self.wait(now).is_some_and(|left| left.is_zero());
        if due {
            self.last = None;
        }
        due
    }
}

/// Whether a change to `path` is the participant's: a file of the step
/// folder `dir`, not a build's (`target/`), nor an editor's swap, backup or
/// lock file (`.x.swp`, `x~`, `#x#`, `.#x`, vim's `4913`).
pub fn is_theirs(dir: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(dir) else {
        return false;
    };
    let parts: Vec<String> = relative
        .components()
        .filter_map(|part| match part {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let Some(name) = parts.last() else {
        return false; // the folder itself
    };
    let editors = name.starts_with('.')
        || name.starts_with('#')
        || name.ends_with('~')
        || name == "4913"
        || [".swp", ".swo", ".swx", ".tmp", ".bak"]
            .iter()
            .any(|end| name.ends_with(end));
    !editors && !parts.iter().any(|part| part == "target")
}

/// Watches the step folder `dir`, sending `Event::Saved` for each change
/// of the participant's. The watch lasts as long as the returned watcher.
pub fn watch_saves(
    dir: &Path,
    events: Sender<Event>,
) -> Result<notify::RecommendedWatcher, String> {
    use notify::{EventKind, RecursiveMode, Watcher};
    let folder: PathBuf = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let plain = dir.to_path_buf();
    let handler = move |result: notify::Result<notify::Event>| {
        let Ok(event) = result else { return };
        // Reads (a build opening the sources) are not saves.
        let change = matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
        );
        if change
            && event
                .paths
                .iter()
                .any(|path| is_theirs(&folder, path) || is_theirs(&plain, path))
        {
            let _ = events.send(Event::Saved(Instant::now()));
        }
    };
    let cannot = |err: notify::Error| {
        format!(
            "cannot watch {} for saves: {err}. Not your code: the system refuses \
             to watch the folder (on Linux, `sysctl fs.inotify.max_user_watches` \
             may be too low); `cargo workshop check N` after each save works the \
             same",
            dir.display()
        )
    };
    let mut watcher = notify::recommended_watcher(handler).map_err(cannot)?;
    watcher
        .watch(dir, RecursiveMode::Recursive)
        .map_err(cannot)?;
    Ok(watcher)
}

/// The key that shows the next page of what is under the head: Space,
/// and Page Down as `key` reads it.
pub const PAGE_DOWN: char = ' ';
/// The key that shows the page before: b, and Page Up.
pub const PAGE_UP: char = 'b';

/// What the bytes of one key press are, as `read_keys` sends it: `None`
/// for one that is no key of watch's (a tab, an arrow). `more` reads the
/// bytes after an escape, which a terminal sends at once with it.
fn key(byte: u8, more: &mut impl FnMut() -> Option<u8>) -> Option<char> {
    match byte {
        3 | 4 => Some('q'), // Ctrl-C, Ctrl-D
        b' ' => Some(PAGE_DOWN),
        b'\r' | b'\n' => Some('\n'),
        0x1b => escape(more),
        b if b.is_ascii_whitespace() => None,
        b => Some(char::from(b)),
    }
}

/// The key of an escape sequence: Page Down (`ESC [ 6 ~`) and Page Up
/// (`ESC [ 5 ~`); a lone escape or another sequence is none of watch's.
fn escape(more: &mut impl FnMut() -> Option<u8>) -> Option<char> {
    if more()? != b'[' {
        return None;
    }
    let mut sequence = Vec::new();
    // A sequence ends with its first byte from `@` to `~`.
    while let Some(byte) = more() {
        sequence.push(byte);
        if (0x40..=0x7e).contains(&byte) || sequence.len() > 8 {
            break;
        }
    }
    match sequence.as_slice() {
        b"6~" => Some(PAGE_DOWN),
        b"5~" => Some(PAGE_UP),
        _ => None,
    }
}

/// Reads the keys pressed, one `Event::Key` each, on a thread of its own;
/// `Event::NoMoreKeys` at the end of the input. Ctrl-C and Ctrl-D, which
/// raw mode hands over as bytes, are `q`; Space and Page Down are
/// `PAGE_DOWN`, Page Up `PAGE_UP`, Enter `'\n'`.
pub fn read_keys(events: Sender<Event>) {
    std::thread::spawn(move || {
        let mut stdin = io::stdin().lock();
        let mut read_one = move || {
            let mut byte = [0_u8; 1];
            match stdin.read(&mut byte) {
                Ok(1) => Some(byte[0]),
                _ => None,
            }
        };
        while let Some(byte) = read_one() {
            let Some(key) = key(byte, &mut read_one) else {
                continue;
            };
            if events.send(Event::Key(key, Instant::now())).is_err() {
                return;
            }
        }
        let _ = events.send(Event::NoMoreKeys);
    });
}

/// From now on, a change of the terminal's size (SIGWINCH) is an
/// `Event::Resized`, so that the screen is drawn again at once for the new
/// size, before the terminal's own reflow of the old one cuts its words.
pub fn on_resize(events: Sender<Event>) {
    #[cfg(unix)]
    {
        let Ok(mut signals) =
            signal_hook::iterator::Signals::new([signal_hook::consts::SIGWINCH])
        else {
            return; // the screen is then drawn for the new size at the next news
        };
        std::thread::spawn(move || {
            for _ in signals.forever() {
                if events.send(Event::Resized).is_err() {
                    return;
                }
            }
        });
    }
    #[cfg(not(unix))]
    drop(events);
}

/// From now on, Ctrl-C, SIGTERM and SIGHUP (a closed terminal) are each an
/// `Event::Signal`, for `watch` to end its check and restore the terminal
/// before it exits. While `demo_runs`, Ctrl-C is the demo's: the terminal
/// sends it to the demo too, and it ends the demo only.
pub fn on_signals(events: Sender<Event>, demo_runs: Arc<AtomicBool>) {
    #[cfg(unix)]
    {
        use signal_hook::consts::SIGINT;
        let Some(mut signals) = crate::runner::interrupts() else {
            return;
        };
        std::thread::spawn(move || {
            for signal in signals.forever() {
                if signal == SIGINT
                    && demo_runs.load(std::sync::atomic::Ordering::SeqCst)
                {
                    continue;
                }
                if events.send(Event::Signal(signal)).is_err() {
                    return;
                }
            }
        });
    }
    #[cfg(not(unix))]
    {
        // Ctrl-C ends `watch` at once here; its check, in the same
        // console, receives it too and ends its tests.
        let _ = (events, demo_runs);
    }
}

/// The terminal in raw mode (keys arrive without Enter, and are not
/// echoed) until dropped, which puts it back as it was: on a return, an
/// error or a panic. Ctrl-C still interrupts. Nothing changes when stdin
/// is not a terminal, nor on systems other than Unix (keys then take
/// Enter).
#[derive(Debug)]
pub struct RawMode {
    #[cfg(unix)]
    saved: Option<rustix::termios::Termios>,
}

impl RawMode {
    pub fn on() -> RawMode {
        #[cfg(unix)]
        {
            use std::io::IsTerminal;

            use rustix::termios::{
                LocalModes, OptionalActions, SpecialCodeIndex, tcgetattr, tcsetattr,
            };
            let stdin = io::stdin();
            if !stdin.is_terminal() {
                return RawMode { saved: None };
            }
            let Ok(saved) = tcgetattr(&stdin) else {
                return RawMode { saved: None };
            };
            let mut raw = saved.clone();
            raw.local_modes
                .remove(LocalModes::ICANON | LocalModes::ECHO);
            raw.special_codes[SpecialCodeIndex::VMIN] = 1;
            raw.special_codes[SpecialCodeIndex::VTIME] = 0;
            if tcsetattr(&stdin, OptionalActions::Now, &raw).is_err() {
                return RawMode { saved: None };
            }
            RawMode { saved: Some(saved) }
        }
        #[cfg(not(unix))]
        RawMode {}
    }

    /// Whether a key arrives without Enter.
    #[cfg_attr(not(unix), allow(clippy::unused_self))]
    pub fn is_on(&self) -> bool {
        #[cfg(unix)]
        return self.saved.is_some();
        #[cfg(not(unix))]
        false
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(saved) = &self.saved {
            let _ = rustix::termios::tcsetattr(
                io::stdin(),
                rustix::termios::OptionalActions::Now,
                saved,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_waits_for_the_saves_to_stop() {
        let mut debounce = Debounce::default();
        let start = Instant::now();
        assert_eq!(debounce.wait(start), None, "no save, no check");
        assert!(!debounce.take_due(start + QUIET));
        debounce.saw(start);
        debounce.saw(start + Duration::from_millis(200));
        let later = start + Duration::from_millis(400);
        assert_eq!(debounce.wait(later), Some(Duration::from_millis(100)));
        assert!(
            !debounce.take_due(later),
            "200 ms after the last save: wait"
        );
        let due = start + Duration::from_millis(500);
        assert!(debounce.take_due(due));
        assert!(!debounce.take_due(due), "one check for all those saves");
        assert_eq!(debounce.wait(due), None);
    }

    #[test]
    fn builds_and_editors_files_are_not_saves() {
        let dir = Path::new("/w/step03-sleep");
        let theirs = |path: &str| is_theirs(dir, &dir.join(path));
        assert!(theirs("src/lib.rs"));
        assert!(theirs("src/bin/demo.rs"));
        assert!(theirs("Cargo.toml"));
        assert!(!theirs("target/debug/x.rs"));
        assert!(!theirs("src/.lib.rs.swp"));
        assert!(!theirs("src/lib.rs~"));
        assert!(!theirs("src/#lib.rs#"));
        assert!(!theirs("src/.#lib.rs"));
        assert!(!theirs("src/4913"));
        assert!(!is_theirs(dir, dir), "the folder itself");
        assert!(!is_theirs(
            dir,
            Path::new("/w/step04-select-echo/src/lib.rs")
        ));
    }

    fn key_of(bytes: &[u8]) -> Option<char> {
        let mut rest = bytes[1..].iter().copied();
        key(bytes[0], &mut || rest.next())
    }

    #[test]
    fn space_enter_and_the_page_keys_are_keys() {
        assert_eq!(key_of(b" "), Some(PAGE_DOWN));
        assert_eq!(key_of(b"\r"), Some('\n'));
        assert_eq!(key_of(b"\n"), Some('\n'));
        assert_eq!(key_of(b"\x1b[6~"), Some(PAGE_DOWN));
        assert_eq!(key_of(b"\x1b[5~"), Some(PAGE_UP));
        assert_eq!(key_of(b"\x1b[A"), None, "an arrow is none of watch's");
        assert_eq!(key_of(b"\x1b"), None, "a lone escape");
        assert_eq!(key_of(b"\t"), None);
        assert_eq!(key_of(b"h"), Some('h'));
        assert_eq!(key_of(&[3]), Some('q'));
    }
}
