//! The loop's wait for the wheel's next tick, ended at the tick itself.
//!
//! mio's timeout counts whole milliseconds, rounded up (epoll's unit):
//! a wait for a tick 0.3 ms away lasts 1 ms, so a timer, already rounded
//! up to its tick, fired on average a whole millisecond after its
//! deadline (tokio's too). On Linux a timerfd on the same poller, set to
//! the tick to the nanosecond, ends the wait there: half a millisecond
//! late on average, the tick's rounding alone. mio's timeout stays as
//! it was, so the wait never lasts longer than without it. Elsewhere,
//! nothing changes.

use std::io;
use std::time::Duration;

use mio::{Registry, Token};

pub(super) use imp::TickTimer;

#[cfg(target_os = "linux")]
mod imp {
    use std::cell::Cell;
    use std::os::fd::{AsRawFd, OwnedFd};

    use mio::Interest;
    use mio::unix::SourceFd;
    use rustix::time::{
        Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec,
        timerfd_create, timerfd_settime,
    };

    use super::{Duration, Registry, Token, io};

    pub(in super::super) struct TickTimer {
        fd: OwnedFd,
        /// The instant (ns since the loop's epoch) it is set for; set
        /// again only for another.
        set_for: Cell<Option<u64>>,
    }

    impl TickTimer {
        pub(in super::super) fn new(
            registry: &Registry,
            token: Token,
        ) -> io::Result<Self> {
            let fd = timerfd_create(
                TimerfdClockId::Monotonic,
                TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
            )?;
            registry.register(
                &mut SourceFd(&fd.as_raw_fd()),
                token,
                Interest::READABLE,
            )?;
            Ok(TickTimer {
                fd,
                set_for: Cell::new(None),
            })
        }

        /// Makes the poller's wait end `after` from now, at `at_ns`. A
        /// timer that goes off for a tick the loop no longer waits for
        /// (its timers were cancelled) costs one early turn.
        pub(in super::super) fn set(
            &self,
            at_ns: u64,
            after: Duration,
        ) -> io::Result<()> {
            if self.set_for.get() == Some(at_ns) {
                return Ok(());
            }
            // Zero would disarm it: a nanosecond is as good as now.
            let after = after.max(Duration::from_nanos(1));
            let value = Itimerspec {
                it_interval: Timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: Timespec {
                    tv_sec: i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
                    tv_nsec: i64::from(after.subsec_nanos()),
                },
            };
            timerfd_settime(&self.fd, TimerfdTimerFlags::empty(), &value)?;
            self.set_for.set(Some(at_ns));
            Ok(())
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Duration, Registry, Token, io};

    pub(in super::super) struct TickTimer;

    #[allow(
        clippy::unnecessary_wraps,
        clippy::unused_self,
        reason = "the Linux timer's signatures: the loop calls both alike"
    )]
    impl TickTimer {
        pub(in super::super) fn new(_: &Registry, _: Token) -> io::Result<Self> {
            Ok(TickTimer)
        }

        pub(in super::super) fn set(&self, _: u64, _: Duration) -> io::Result<()> {
            Ok(())
        }
    }
}
