//! One at a time: the probe's copy is held by one check at a time, the
//! participant's build folder by one build ahead. The lock is the operating
//! system's, held by an open file: it goes with the process however that
//! ends (`kill -9`), so no stale lock is ever left to clear by hand.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::thread;
use std::time::Duration;

/// How often a waiting check tries the lock again.
const RETRY: Duration = Duration::from_millis(200);

/// A held lock; dropping it (or the process ending) lets the next in.
#[derive(Debug)]
pub struct Held {
    _file: File,
}

/// Takes the lock at `path`, creating the file if need be; while another
/// process holds it, calls `waiting` once and tries again until it is free.
pub fn hold(path: &Path, waiting: impl FnOnce()) -> io::Result<Held> {
    let mut waiting = Some(waiting);
    loop {
        if let Some(file) = try_hold(path)? {
            return Ok(Held { _file: file });
        }
        if let Some(say) = waiting.take() {
            say();
        }
        thread::sleep(RETRY);
    }
}

/// The lock's file, locked, or `None` while another process holds it.
#[cfg(unix)]
fn try_hold(path: &Path) -> io::Result<Option<File>> {
    use rustix::fs::{FlockOperation, flock};
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// The lock's file, opened for this process alone (no sharing), or `None`
/// while another process has it open so.
#[cfg(windows)]
fn try_hold(path: &Path) -> io::Result<Option<File>> {
    use std::os::windows::fs::OpenOptionsExt;
    /// Windows' `ERROR_SHARING_VIOLATION`: another process has it open.
    const IN_USE: i32 = 32;
    match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .share_mode(0)
        .open(path)
    {
        Ok(file) => Ok(Some(file)),
        Err(err) if err.raw_os_error() == Some(IN_USE) => Ok(None),
        Err(err) => Err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_second_holder_waits_until_the_first_lets_go() {
        let dir =
            std::env::temp_dir().join(format!("lock-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("step03.lock");
        let first = hold(&path, || panic!("nothing holds it yet")).unwrap();
        let (said, heard) = mpsc::channel();
        let (got, has) = mpsc::channel();
        let second = {
            let path = path.clone();
            thread::spawn(move || {
                let held = hold(&path, move || said.send(()).unwrap()).unwrap();
                got.send(()).unwrap();
                drop(held);
            })
        };
        heard
            .recv_timeout(Duration::from_secs(10))
            .expect("the second says it waits");
        assert!(
            has.recv_timeout(Duration::from_millis(500)).is_err(),
            "the second got the lock the first holds"
        );
        drop(first);
        has.recv_timeout(Duration::from_secs(10))
            .expect("the second gets it once the first lets go");
        second.join().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
