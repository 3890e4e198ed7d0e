//! How long and how many: every clock and count by which `check` runs a
//! step's tests, in one place, their order held by the compiler (the
//! assertions at the end). Shortest first: a test that fails after
//! `HUNG_AFTER` hung; its own guard gives up at `PATIENCE` (read from
//! `crate::PATIENCE_VAR`), before `check` stops it at `TEST_DEADLINE`.

use std::time::Duration;

/// No test of a correct step takes this long, even under load: a failure
/// after it is a hang that the test's own guard (`PATIENCE`) caught.
pub const HUNG_AFTER: Duration = Duration::from_secs(10);

/// How long a test run by `check` may wait for what never comes before
/// its own guard fails it (`crate::PATIENCE_VAR`).
pub const PATIENCE: Duration = Duration::from_secs(12);

/// How long one test may run: far longer than any correct test needs.
pub const TEST_DEADLINE: Duration = Duration::from_secs(25);

/// How long a rerun test may take: with the authors' function back, a test
/// that hung ends in about a second.
pub const PROBE_DEADLINE: Duration = Duration::from_secs(10);

/// A test running this long may be stuck: once all running are, the probe
/// may ask about them.
pub const SLOW: Duration = Duration::from_secs(5);

/// How long the tests running may be stopped while the probe asks about
/// those that seem stuck (`Paused`).
pub const PAUSED_AT_MOST: Duration = Duration::from_secs(4);

/// How long each test may run, from its start, once enough tests never
/// ended (`Settings::enough_hangs`) or once a quick failure came and those
/// running seem stuck: what is looked for then is a quick failure; a test
/// still running is left out, not failed.
pub const HURRIED: Duration = Duration::from_secs(3);

/// How often a long build or test run says it is still going.
pub const TICK: Duration = Duration::from_secs(10);

/// How many tests run at once: most of a step's tests wait rather than
/// compute, so four on two cores end a passing step 4 in 9 s, not 17.
pub const AT_ONCE: usize = 4;

/// How many run at once once hurried: each runs `HURRIED` at most, only
/// looked at for a quick failure.
pub const AT_ONCE_WHEN_HURRIED: usize = 6;

/// Once this many tests never ended (stopped at the deadline or for
/// memory), each left runs `HURRIED` at most: the step has a loop that
/// never ends, and each more would cost a deadline.
pub const ENOUGH_HANGS: usize = 2;

/// How many reruns of the switching copy run at once: most of those that
/// do not pass wait, asleep, on a hang until the deadline.
pub const RERUNS_AT_ONCE: usize = 8;

/// The heap a test process (and any demo it starts) may use: far more
/// than any test needs (the tests together: `TOGETHER_GIB`).
pub const MEMORY_LIMIT_GIB: u64 = 1;

// In seconds: `Duration`'s comparisons are not `const`.
// A failure after `HUNG_AFTER` is a hang its own guard caught, so the guard
// must come later; and the guard must fail a test before `check` stops it,
// or the test's own message is lost.
const _: () = assert!(HUNG_AFTER.as_secs() < PATIENCE.as_secs());
const _: () = assert!(PATIENCE.as_secs() < TEST_DEADLINE.as_secs());
// A rerun in the probe's copy is a test run again: no longer than the first.
const _: () = assert!(PROBE_DEADLINE.as_secs() <= TEST_DEADLINE.as_secs());
// A hurried test is looked at only for a quick failure, well before a hang.
const _: () = assert!(HURRIED.as_secs() < HUNG_AFTER.as_secs());
// Those that seem stuck (`SLOW`) when a quick failure hurries them have had
// their `HURRIED` already: they are left out at once.
const _: () = assert!(HURRIED.as_secs() <= SLOW.as_secs());
// A test only slow, stopped while the probe asks (at `SLOW`), still has
// time before its own guard once it goes on.
const _: () =
    assert!(SLOW.as_secs() + PAUSED_AT_MOST.as_secs() < PATIENCE.as_secs());
// More run at once only when hurried.
const _: () = assert!(AT_ONCE <= AT_ONCE_WHEN_HURRIED);
