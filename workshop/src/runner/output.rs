//! What is kept of a test's output: its head and tail, to show, and which
//! of the signs a verdict rests on it held anywhere, to judge (judged from
//! the part kept, a test that printed 310 KB before libtest's result line
//! failed). Each stream is read on a thread of its own, so that no process
//! blocks on a full pipe while `check` waits for it.

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

/// What is kept of each end of an output stream to show: far more than a
/// panic message, and bounded, as a test may print without end.
const KEPT_EACH_END: usize = 128 * 1024;

/// One output stream of a test, read to its end.
#[derive(Debug, Clone, Default)]
pub(super) struct Output {
    /// All of it, or its head and tail around a note of how much was cut.
    pub text: String,
    seen: Vec<&'static str>,
}

impl Output {
    /// Whether `sign`, one of those looked for, came anywhere in it.
    pub fn held(&self, sign: &str) -> bool {
        self.seen.contains(&sign)
    }
}

/// Reads `pipe` to its end, looking for `signs` in all of it.
pub(super) fn read(mut pipe: impl Read, signs: &[&'static str]) -> Output {
    let mut seen = Vec::new();
    let mut kept = Kept::default();
    // The last bytes read, and as many before them as a sign but one: a
    // sign may be split across two reads.
    let mut window = Vec::new();
    let longest = signs.iter().map(|sign| sign.len()).max().unwrap_or(1);
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let read = match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        kept.add(&buffer[..read]);
        window.extend_from_slice(&buffer[..read]);
        look_through(&window, signs, &mut seen);
        window.drain(..window.len().saturating_sub(longest - 1));
    }
    Output {
        text: kept.shown(),
        seen,
    }
}

/// Adds to `seen` the `signs` that `window` holds.
fn look_through(
    window: &[u8],
    signs: &[&'static str],
    seen: &mut Vec<&'static str>,
) {
    // A sign's characters are whole in the window (it keeps as many bytes
    // before a read as the longest sign but one), so only a character cut
    // at the window's start becomes U+FFFD, and no sign is hidden. Made
    // only when needed, as it costs more than a look for a rare letter.
    let mut text = None;
    for sign in signs {
        let Some((offset, rare)) = rarest_letter(sign) else {
            continue;
        };
        if seen.contains(sign) || !window.contains(&rare) {
            continue;
        }
        let text = text.get_or_insert_with(|| String::from_utf8_lossy(window));
        if holds(text, sign, offset) {
            seen.push(sign);
        }
    }
}

/// Whether `text` holds `sign`, whose rarest letter is at `offset`: fast
/// even unoptimized, as `check` runs, where `str::contains` made a test
/// printing a megabyte wait on its pipe long enough to miss a timing. Only
/// the places of the rarest letter are compared, found by std's optimized
/// `memchr` (`str::find(char)`).
fn holds(text: &str, sign: &str, offset: usize) -> bool {
    let rare = char::from(sign.as_bytes()[offset]);
    let (bytes, sign) = (text.as_bytes(), sign.as_bytes());
    let mut from = 0;
    while let Some(found) = text[from..].find(rare) {
        let at = from + found;
        if at >= offset && bytes[at - offset..].starts_with(sign) {
            return true;
        }
        from = at + 1;
    }
    false
}

/// The ASCII letter of `sign` least common in English text, and where;
/// any other ASCII character is rarer than all. (A sign may hold other
/// characters, insta's `│` say, but `holds` looks for one byte that is a
/// whole character.)
fn rarest_letter(sign: &str) -> Option<(usize, u8)> {
    const COMMON_FIRST: &[u8] = b" etaoinshrdlcumwfgypbvkjxqz";
    sign.bytes()
        .enumerate()
        .filter(|(_, letter)| letter.is_ascii())
        .max_by_key(|(_, letter)| {
            COMMON_FIRST
                .iter()
                .position(|common| common == letter)
                .unwrap_or(usize::MAX)
        })
}

/// The first and last `KEPT_EACH_END` bytes of a stream, and how long it
/// was.
#[derive(Default)]
struct Kept {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: usize,
}

impl Kept {
    fn add(&mut self, bytes: &[u8]) {
        self.total += bytes.len();
        let to_head = bytes.len().min(KEPT_EACH_END - self.head.len());
        self.head.extend_from_slice(&bytes[..to_head]);
        self.tail.extend_from_slice(&bytes[to_head..]);
        // Trimmed only now and then, so that each byte moves once or twice.
        if self.tail.len() > 2 * KEPT_EACH_END {
            self.tail.drain(..self.tail.len() - KEPT_EACH_END);
        }
    }

    /// The head and the tail, whole lines only, around a note of what was
    /// cut between them; or all of it, when nothing was.
    fn shown(mut self) -> String {
        if self.tail.len() > KEPT_EACH_END {
            self.tail.drain(..self.tail.len() - KEPT_EACH_END);
        }
        if self.head.len() + self.tail.len() == self.total {
            self.head.extend_from_slice(&self.tail);
            return String::from_utf8_lossy(&self.head).into_owned();
        }
        let head_end = self
            .head
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let tail_start = self
            .tail
            .iter()
            .position(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let (head, tail) = (&self.head[..head_end], &self.tail[tail_start..]);
        let cut = self.total - head.len() - tail.len();
        format!(
            "{}[… {} KiB of output cut here …]\n{}",
            String::from_utf8_lossy(head),
            cut.div_ceil(1024),
            String::from_utf8_lossy(tail)
        )
    }
}

/// The last `count` lines of `text`.
pub(super) fn tail(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

/// Reads `pipe` to its end on a thread of its own, looking for `signs`:
/// what it kept arrives on the receiver.
pub(super) fn read_in_background(
    pipe: Option<impl Read + Send + 'static>,
    signs: &'static [&'static str],
) -> Receiver<Output> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let kept = pipe.map(|pipe| read(pipe, signs));
        let _ = sender.send(kept.unwrap_or_default());
    });
    receiver
}

/// Sends each line of `pipe` as it comes.
pub(super) fn lines_in_background(
    pipe: Option<impl Read + Send + 'static>,
) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let Some(pipe) = pipe else { return };
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// What a reader thread read; nothing if the pipe is still held open a
/// while after the process ended (by something that escaped it).
pub(super) fn collect(text: &Receiver<Output>) -> Output {
    text.recv_timeout(Duration::from_secs(5))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out `bytes` a few at a time, as a pipe may.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, into: &mut [u8]) -> std::io::Result<usize> {
            let count = self.step.min(self.bytes.len()).min(into.len());
            into[..count].copy_from_slice(&self.bytes[..count]);
            self.bytes = &self.bytes[count..];
            Ok(count)
        }
    }

    fn megabytes_then(last: &str) -> String {
        let mut text = String::from("first line\n");
        while text.len() < 3 << 20 {
            text.push_str("call_at: one more timer\n");
        }
        text.push_str(last);
        text
    }

    #[test]
    fn a_sign_after_megabytes_is_seen() {
        let text = megabytes_then("test result: ok. 1 passed;\n");
        let output = read(text.as_bytes(), &["test result: ok. 1 passed;"]);
        assert!(output.held("test result: ok. 1 passed;"));
        assert!(!output.held("has overflowed its stack"));
    }

    #[test]
    fn a_sign_split_between_two_reads_is_seen() {
        let text = megabytes_then("has overflowed its stack\n");
        // 7 divides neither the text's length nor the sign's offset.
        let pipe = Trickle {
            bytes: text.as_bytes(),
            step: 7 * 1024 + 3,
        };
        let output = read(pipe, &["has overflowed its stack", "out of memory"]);
        assert!(output.held("has overflowed its stack"));
        assert!(!output.held("out of memory"));
    }

    #[test]
    fn what_is_shown_of_megabytes_is_their_head_and_tail_and_what_was_cut() {
        let text = megabytes_then("the last line\n");
        let shown = read(text.as_bytes(), &[]).text;
        assert!(shown.starts_with("first line\n"), "{}", &shown[..100]);
        assert!(shown.ends_with("\nthe last line\n"));
        assert!(shown.len() <= 2 * KEPT_EACH_END + 100, "{}", shown.len());
        let note = shown
            .lines()
            .find(|line| line.contains("of output cut here"))
            .expect("a note of what was cut");
        let cut_kib: usize = note
            .split_whitespace()
            .nth(1)
            .and_then(|kib| kib.parse().ok())
            .expect("how much was cut");
        let kept = shown.len() - note.len() - 1;
        assert_eq!(cut_kib, (text.len() - kept).div_ceil(1024), "{note}");
        // Only whole lines, on both sides of the note.
        assert!(shown.lines().all(|line| line == note
            || line == "first line"
            || line == "the last line"
            || line == "call_at: one more timer"));
    }

    #[test]
    fn a_short_output_is_shown_whole() {
        let shown = read("running 1 test\nok\n".as_bytes(), &[]).text;
        assert_eq!(shown, "running 1 test\nok\n");
    }
}
