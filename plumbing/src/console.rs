//! Lines a program prints about itself, written so that printing cannot
//! stop it: `say!` for standard output, `warn!` for standard error.
//!
//! `println!` and `eprintln!` panic when their stream cannot take the line:
//! a full disk (`2>/dev/full`), or a pipe whose reader has gone (`2>&1 |
//! head -n 2`, once `head` has its two lines). In a server that panic ends
//! the process, and every connected client with it, for a line that no one
//! could read anyway. `say!` and `warn!` write the same line, and a stream
//! that refuses it loses the line instead: each loss is counted
//! (`lost_lines`), and the first is said once on the other stream, where
//! that one still works.
//!
//! A demo whose output *is* its point keeps `println!`: a closed stdout
//! should end it, quietly, as it ends `cat`
//! (`exit_quietly_when_stdout_closes`, which each step's `main` calls
//! first, and so does `cargo workshop`).

use std::fmt;
use std::io::{self, Write};
use std::panic;
use std::process;
use std::sync::atomic::{AtomicU64, Ordering};

/// Prints a line to standard output, as `println!` does, except that a
/// stdout that cannot take it loses the line instead of ending the program.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::console::say(::std::format_args!($($arg)*))
    };
}

/// Prints a line to standard error, as `eprintln!` does, except that a
/// stderr that cannot take it loses the line instead of ending the program.
#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => {
        $crate::console::warn(::std::format_args!($($arg)*))
    };
}

/// One of the two streams, and how many lines it has lost.
#[derive(Debug)]
pub struct Outlet {
    name: &'static str,
    lost: AtomicU64,
}

impl Outlet {
    const fn new(name: &'static str) -> Self {
        Outlet {
            name,
            lost: AtomicU64::new(0),
        }
    }

    /// How many lines this stream could not take so far.
    pub fn lost_lines(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// Writes `line` with `out`. A failure loses the line; the first one
    /// also returns what to say about it on the other stream.
    fn write(&self, mut out: impl Write, line: &str) -> Option<String> {
        let written = out.write_all(line.as_bytes()).and_then(|()| out.flush());
        let err = written.err()?;
        let earlier_losses = self.lost.fetch_add(1, Ordering::Relaxed);
        (earlier_losses == 0).then(|| {
            format!(
                "warning: {} cannot be written ({err}); lines printed to it are lost\n",
                self.name
            )
        })
    }
}

/// Standard output, as `say!` writes it.
pub static STDOUT: Outlet = Outlet::new("standard output");
/// Standard error, as `warn!` writes it.
pub static STDERR: Outlet = Outlet::new("standard error");

/// What `say!` calls: the line, whole, in one write.
pub fn say(args: fmt::Arguments<'_>) {
    let line = format!("{args}\n");
    // The lock is a temporary, released before the notice goes to stderr,
    // so two threads printing at once cannot each hold what the other needs.
    let notice = STDOUT.write(io::stdout().lock(), &line);
    if let Some(notice) = notice {
        STDERR.write(io::stderr().lock(), &notice);
    }
}

/// What `warn!` calls: the line, whole, in one write.
pub fn warn(args: fmt::Arguments<'_>) {
    let line = format!("{args}\n");
    let notice = STDERR.write(io::stderr().lock(), &line);
    if let Some(notice) = notice {
        STDOUT.write(io::stdout().lock(), &notice);
    }
}

/// The status a shell reports for a program that a closed pipe ended
/// (128 + SIGPIPE), as `head` ends `cat`.
pub const STDOUT_CLOSED: i32 = 141;

/// Ends the process quietly, as `cat` and `ls` end, once printing to stdout
/// fails: `cargo run -p step03 | head -n 2` closes the pipe after two lines.
///
/// Rust ignores the SIGPIPE that ends a C program there, so `println!`
/// panics instead ("failed printing to stdout"); the unwinding then runs
/// destructors that may print too, and a panic inside a panic aborts.
/// Exiting from the panic hook, before anything unwinds, keeps a demo's
/// `println!`s as they are. Every other panic goes to the hook that was
/// there before.
pub fn exit_quietly_when_stdout_closes() {
    let earlier_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if is_stdout_closed(info.payload()) {
            process::exit(STDOUT_CLOSED);
        }
        earlier_hook(info);
    }));
}

/// Whether a panic's payload is `println!`'s, for a stdout that refused it.
fn is_stdout_closed(payload: &(dyn std::any::Any + Send)) -> bool {
    payload
        .downcast_ref::<String>()
        .is_some_and(|text| text.starts_with("failed printing to stdout"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that takes nothing, as `/dev/full` does.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(28)) // ENOSPC
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_line_is_written_whole_and_nothing_is_lost() {
        let outlet = Outlet::new("a buffer");
        let mut buffer = Vec::new();
        assert_eq!(outlet.write(&mut buffer, "hello\n"), None);
        assert_eq!(buffer, b"hello\n");
        assert_eq!(outlet.lost_lines(), 0);
    }

    #[test]
    fn a_stream_that_refuses_loses_each_line_and_says_so_once() {
        let outlet = Outlet::new("a full stream");
        let first = outlet.write(Full, "one\n").expect("a notice");
        assert!(first.starts_with("warning: a full stream cannot be written ("));
        assert!(first.ends_with("lines printed to it are lost\n"));
        assert_eq!(outlet.write(Full, "two\n"), None);
        assert_eq!(outlet.write(Full, "three\n"), None);
        assert_eq!(outlet.lost_lines(), 3);
    }

    #[test]
    fn only_printlns_own_panic_for_a_closed_stdout_exits_quietly() {
        let closed =
            String::from("failed printing to stdout: Broken pipe (os error 32)");
        assert!(is_stdout_closed(&closed));
        let other = String::from("index out of bounds");
        assert!(!is_stdout_closed(&other));
        assert!(!is_stdout_closed(&"failed printing to stdout"));
    }
}
