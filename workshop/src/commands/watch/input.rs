//! What `watch` waits for, each on a thread that sends an `Event`: the
//! saves of the step's files (told by the OS), the keys and the signals.
//! And the terminal's raw mode, which lets a key arrive without Enter.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
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
pub struct Debounce(Option<Instant>);

impl Debounce {
    pub fn saw(&mut self, now: Instant) {
        self.0 = Some(now + QUIET);
    }

    /// How long to wait still before a check: `None` when no save waits.
    pub fn wait(&self, now: Instant) -> Option<Duration> {
        self.0.map(|due| due.saturating_duration_since(now))
    }

    /// Whether the saves seen call for a check now, one for all of them.
    pub fn take_due(&mut self, now: Instant) -> bool {
        self.0.take_if(|due| *due <= now).is_some()
    }
}

/// Whether a change to `path` is the participant's: a file of the step
/// folder `dir`, not a build's (`target/`), nor an editor's swap, backup or
/// lock file (`.x.swp`, `x~`, `#x#`, `.#x`, vim's `4913`).
pub fn is_theirs(dir: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(dir) else {
        return false;
    };
    let Some(name) = relative.file_name().map(|name| name.to_string_lossy()) else {
        return false; // the folder itself
    };
    !crate::authors::is_an_editors(&name)
        && !relative
            .components()
            .any(|part| part.as_os_str() == "target")
}

/// Watches the step folder `dir`, sending `Event::Saved` for each change
/// of the participant's, as long as the returned watcher lasts.
pub fn watch_saves(
    dir: &Path,
    events: Sender<Event>,
) -> Result<notify::RecommendedWatcher, String> {
    use notify::{RecursiveMode, Watcher};
    let folder = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let plain = dir.to_path_buf();
    let theirs =
        move |path: &PathBuf| is_theirs(&folder, path) || is_theirs(&plain, path);
    let handler = move |result: notify::Result<notify::Event>| {
        let Ok(event) = result else { return };
        let kind = event.kind;
        // Reads (a build opening the sources) are not saves.
        let change = kind.is_create() || kind.is_modify() || kind.is_remove();
        if change && event.paths.iter().any(&theirs) {
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

/// The keys for the next page (Space, Page Down) and the one before (b,
/// Page Up).
pub const PAGE_DOWN: char = ' ';
pub const PAGE_UP: char = 'b';

/// The key of one press, as `read_keys` sends it: Ctrl-C and Ctrl-D are
/// `q`, Enter `'\n'`; `None` for one that is no key of watch's (a tab, an
/// arrow). `more` reads the bytes a terminal sends at once after an escape.
fn key(byte: u8, more: &mut impl FnMut() -> Option<u8>) -> Option<char> {
    match byte {
        3 | 4 => Some('q'),
        b' ' => Some(PAGE_DOWN),
        b'\r' | b'\n' => Some('\n'),
        0x1b => escape(more),
        b if b.is_ascii_whitespace() => None,
        b => Some(char::from(b)),
    }
}

/// Page Down (`ESC [ 6 ~`) and Page Up (`ESC [ 5 ~`); a lone escape or
/// another sequence (one ends at its first byte from `@` to `~`) is none.
fn escape(more: &mut impl FnMut() -> Option<u8>) -> Option<char> {
    if more()? != b'[' {
        return None;
    }
    let mut sequence = Vec::new();
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

/// Reads the keys pressed, one `Event::Key` each, on a thread of its own.
pub fn read_keys(events: Sender<Event>) {
    std::thread::spawn(move || {
        let mut stdin = io::stdin().lock();
        let mut read_one = move || {
            let mut byte = [0_u8; 1];
            (stdin.read(&mut byte).ok()? == 1).then_some(byte[0])
        };
        while let Some(byte) = read_one() {
            if let Some(key) = key(byte, &mut read_one) {
                let _ = events.send(Event::Key(key, Instant::now()));
            }
        }
    });
}

/// From now on, Ctrl-C, SIGTERM and SIGHUP (a closed terminal) are each an
/// `Event::Signal`, for `watch` to end its check and restore the terminal
/// before it exits, and a new size (SIGWINCH) is an `Event::Resized`. While
/// `demo_runs`, Ctrl-C is the demo's: the terminal sends it there too.
pub fn on_signals(events: Sender<Event>, demo_runs: Arc<AtomicBool>) {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGINT, SIGWINCH};
        use std::sync::atomic::Ordering;
        let Some(mut signals) = crate::runner::interrupts() else {
            return;
        };
        let _ = signals.add_signal(SIGWINCH);
        std::thread::spawn(move || {
            for signal in signals.forever() {
                let event = match signal {
                    SIGWINCH => Event::Resized,
                    SIGINT if demo_runs.load(Ordering::SeqCst) => continue,
                    _ => Event::Signal(signal),
                };
                let _ = events.send(event);
            }
        });
    }
    // Elsewhere Ctrl-C ends `watch` at once; its check, in the same
    // console, receives it too and ends its tests.
    #[cfg(not(unix))]
    let _ = (events, demo_runs);
}

#[cfg(unix)]
type Saved = rustix::termios::Termios;
#[cfg(not(unix))]
type Saved = ();

/// The terminal in raw mode (keys arrive without Enter, and are not
/// echoed; Ctrl-C still interrupts) until dropped, on every way out. Only
/// where stdin is a terminal, on Unix: elsewhere keys take Enter.
#[derive(Debug)]
pub struct RawMode(Option<Saved>);

impl RawMode {
    pub fn on() -> RawMode {
        #[cfg(unix)]
        return RawMode(raw_mode().ok());
        #[cfg(not(unix))]
        RawMode(None)
    }

    /// Whether a key arrives without Enter.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }
}

/// Puts stdin's terminal in raw mode: how it was before.
#[cfg(unix)]
fn raw_mode() -> rustix::io::Result<Saved> {
    use rustix::termios::{LocalModes, OptionalActions, SpecialCodeIndex as Code};
    let saved = rustix::termios::tcgetattr(io::stdin())?;
    let mut raw = saved.clone();
    raw.local_modes
        .remove(LocalModes::ICANON | LocalModes::ECHO);
    raw.special_codes[Code::VMIN] = 1;
    raw.special_codes[Code::VTIME] = 0;
    rustix::termios::tcsetattr(io::stdin(), OptionalActions::Now, &raw)?;
    Ok(saved)
}

impl Drop for RawMode {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(saved) = &self.0 {
            use rustix::termios::{OptionalActions, tcsetattr};
            let _ = tcsetattr(io::stdin(), OptionalActions::Now, saved);
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
