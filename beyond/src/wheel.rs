//! A hierarchical timing wheel: seven levels of 64 slots, 1 ms per tick at
//! level 0, each level's slot as long as the whole level below it.
//!
//! Why it beats a binary heap at a million timers: setting a timer is a
//! bit trick and a push at the tail of a slot's list, firing one is an
//! unlink, and neither walks a path of `log n` cold cache lines. A timer
//! more than 64 ms away sits at a higher level and moves down (cascades)
//! when its slot comes up, at most six times, and usually once or twice.
//!
//! Every entry lives in one `Slab`, linked to its slot's neighbours by
//! index, so cancelling is O(1): unlink, free the place. Nothing cancelled
//! is left behind to sweep.
//!
//! Deadlines are kept in nanoseconds beside their tick, and the timers a
//! call to [`Wheel::advance`] fires come out sorted by (deadline, order
//! set): the same order a heap would give.
//!
//! Never early: a deadline's tick is its nanoseconds rounded *up* to the
//! next millisecond, and a tick fires only once the clock, rounded *down*,
//! has reached it. The loop sleeps until the next tick's instant, not
//! less (mio rounds a timeout up to whole milliseconds; on Linux a timerfd
//! ends the wait at the instant itself), so a timer fires within a tick of
//! its deadline when the loop is not busy elsewhere.

use slab::Slab;

/// Nanoseconds in one tick.
pub(crate) const TICK_NS: u64 = 1_000_000;

const SLOT_BITS: u32 = 6;
const SLOTS: usize = 1 << SLOT_BITS;
const LEVELS: usize = 7;
/// The furthest tick the wheel can tell apart: 2^42 ms, about 139 years.
/// A deadline beyond it is kept at this tick (step 8 cuts "practically
/// never" to thirty years before it gets here).
const MAX_TICK: u64 = (1 << (SLOT_BITS * 7)) - 1;
const NIL: u32 = u32::MAX;

/// The tick a deadline (in ns since the loop's epoch) falls due at.
pub(crate) fn tick_of(deadline_ns: u64) -> u64 {
    deadline_ns.div_ceil(TICK_NS).min(MAX_TICK)
}

/// Which timer: its place in the slab and the sequence number it was set
/// with, never reused, so a key to a timer that has gone names nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimerKey {
    index: u32,
    sequence: u64,
}

struct Entry<T> {
    deadline_ns: u64,
    tick: u64,
    sequence: u64,
    prev: u32,
    next: u32,
    level: u8,
    slot: u8,
    value: T,
}

#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
}

const EMPTY: List = List {
    head: NIL,
    tail: NIL,
};

struct Level {
    /// Bit `s` set: slot `s` holds at least one timer.
    occupied: u64,
    slots: [List; SLOTS],
    /// While slot `s` is occupied, a tick at or before its earliest
    /// timer's: set by the first timer linked into the emptied slot,
    /// lowered by each after, left as it is when one is unlinked (so it
    /// may be early, never late).
    earliest: [u64; SLOTS],
}

/// A timer that fell due: its deadline, its sequence number, its value.
pub(crate) type Due<T> = (u64, u64, T);

/// The wheel. `T` is what a timer does when it fires.
pub(crate) struct Wheel<T> {
    /// The tick the wheel has been advanced to: every timer left in it is
    /// due after this tick, or at it (set for a tick already reached).
    elapsed: u64,
    entries: Slab<Entry<T>>,
    levels: Box<[Level; LEVELS]>,
    next_sequence: u64,
}

/// Above this many places, an emptied slab is given back: a burst of a
/// million timeouts cancelled does not keep its memory for ever, and the
/// one sleep at a time of a busy task reuses its place without allocating.
const SHRINK_ABOVE: usize = 1024;

// Levels (< 7), slots (< 64) and shifts (< 42) are small numbers: the
// casts between them cannot truncate.
#[allow(clippy::cast_possible_truncation)]
impl<T> Wheel<T> {
    pub(crate) fn new() -> Self {
        Wheel {
            elapsed: 0,
            entries: Slab::new(),
            levels: Box::new(std::array::from_fn(|_| Level {
                occupied: 0,
                slots: [EMPTY; SLOTS],
                earliest: [0; SLOTS],
            })),
            next_sequence: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Sets a timer for `deadline_ns` (ns since the loop's epoch).
    pub(crate) fn insert(&mut self, deadline_ns: u64, value: T) -> TimerKey {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        let tick = tick_of(deadline_ns).max(self.elapsed);
        let index = self.entries.insert(Entry {
            deadline_ns,
            tick,
            sequence,
            prev: NIL,
            next: NIL,
            level: 0,
            slot: 0,
            value,
        });
        let index = u32::try_from(index).expect("fewer than 2^32 timers");
        self.link(index);
        TimerKey { index, sequence }
    }

    /// The timer `key` names, if it is still set.
    pub(crate) fn get(&self, key: TimerKey) -> Option<&T> {
        self.entries
            .get(key.index as usize)
            .filter(|entry| entry.sequence == key.sequence)
            .map(|entry| &entry.value)
    }

    pub(crate) fn contains(&self, key: TimerKey) -> bool {
        self.get(key).is_some()
    }

    /// Takes the timer `key` out, in O(1), if it is still set.
    pub(crate) fn remove(&mut self, key: TimerKey) -> Option<T> {
        self.get(key)?;
        self.unlink(key.index);
        let value = self.entries.remove(key.index as usize).value;
        self.shrink_if_emptied();
        Some(value)
    }

    /// The tick at which a timer may next fall due: the loop may wait
    /// until then. `None` when empty.
    ///
    /// When the next slot to come up is a higher level's, its timers must
    /// move down before they fire, but not before the earliest of them
    /// is due: `advance` to that tick moves them and fires it in one go.
    /// Waiting for the slot's start instead would wake the loop once more
    /// for nothing (a lone sleep of 1 s: at 960 ms, then at 1000).
    pub(crate) fn next_tick(&self) -> Option<u64> {
        let (level, slot, tick) = self.next_expiration()?;
        Some(tick.max(self.levels[level].earliest[slot]))
    }

    /// Moves the wheel to `now_tick` and appends each timer due by then to
    /// `due`, sorted by deadline, then by the order they were set in.
    ///
    /// Each tick's timers are sorted apart, as it is reached (the ticks
    /// come in order): a loop far behind sorts many small batches, not
    /// one batch of everything due.
    pub(crate) fn advance(&mut self, now_tick: u64, due: &mut Vec<Due<T>>) {
        let mut batch = due.len();
        while let Some((level, slot, tick)) = self.next_expiration() {
            if tick > now_tick {
                break;
            }
            if tick != self.elapsed {
                sort_by_deadline(&mut due[batch..]);
                batch = due.len();
            }
            self.elapsed = tick;
            let list = self.take_slot(level, slot);
            let mut index = list.head;
            while index != NIL {
                let entry = &mut self.entries[index as usize];
                let next = entry.next;
                if entry.tick <= self.elapsed {
                    let entry = self.entries.remove(index as usize);
                    due.push((entry.deadline_ns, entry.sequence, entry.value));
                } else {
                    self.link(index); // down a level or more
                }
                index = next;
            }
        }
        self.elapsed = self.elapsed.max(now_tick);
        sort_by_deadline(&mut due[batch..]);
        self.shrink_if_emptied();
    }

    fn shrink_if_emptied(&mut self) {
        if self.entries.is_empty() && self.entries.capacity() > SHRINK_ABOVE {
            self.entries = Slab::new();
        }
    }

    // ANCHOR: place
    /// The level and slot an entry's tick belongs in, seen from `elapsed`:
    /// the level of the highest 6-bit group in which they differ.
    fn place(&self, tick: u64) -> (usize, usize) {
        let differ = (self.elapsed ^ tick) | (SLOTS as u64 - 1);
        let significant = differ.ilog2();
        let level = (significant / SLOT_BITS) as usize;
        let level = level.min(LEVELS - 1);
        let slot = (tick >> (SLOT_BITS * level as u32)) as usize % SLOTS;
        (level, slot)
    }

    /// Appends entry `index` to the tail of its slot's list.
    fn link(&mut self, index: u32) {
        let (level, slot) = self.place(self.entries[index as usize].tick);
        let tick = self.entries[index as usize].tick;
        let level_of = &mut self.levels[level];
        let list = &mut level_of.slots[slot];
        let tail = list.tail;
        if tail == NIL {
            list.head = index;
            level_of.earliest[slot] = tick;
        } else {
            self.entries[tail as usize].next = index;
            level_of.earliest[slot] = level_of.earliest[slot].min(tick);
        }
        level_of.slots[slot].tail = index;
        level_of.occupied |= 1 << slot;
        let entry = &mut self.entries[index as usize];
        entry.prev = tail;
        entry.next = NIL;
        entry.level = level as u8;
        entry.slot = slot as u8;
    }
    // ANCHOR_END: place

    fn unlink(&mut self, index: u32) {
        let entry = &self.entries[index as usize];
        let (prev, next) = (entry.prev, entry.next);
        let (level, slot) = (entry.level as usize, entry.slot as usize);
        if prev == NIL {
            self.levels[level].slots[slot].head = next;
        } else {
            self.entries[prev as usize].next = next;
        }
        if next == NIL {
            self.levels[level].slots[slot].tail = prev;
        } else {
            self.entries[next as usize].prev = prev;
        }
        if self.levels[level].slots[slot].head == NIL {
            self.levels[level].occupied &= !(1 << slot);
        }
    }

    fn take_slot(&mut self, level: usize, slot: usize) -> List {
        self.levels[level].occupied &= !(1 << slot);
        std::mem::replace(&mut self.levels[level].slots[slot], EMPTY)
    }

    /// The lowest level with a timer, its first occupied slot from the
    /// wheel's position on, and the tick at which that slot starts. A lower
    /// level always comes due before a higher one: its timers are all
    /// within the current slot of the level above.
    fn next_expiration(&self) -> Option<(usize, usize, u64)> {
        let (level, occupied) = self
            .levels
            .iter()
            .map(|level| level.occupied)
            .enumerate()
            .find(|&(_, occupied)| occupied != 0)?;
        let shift = SLOT_BITS * level as u32;
        let now_slot = (self.elapsed >> shift) % SLOTS as u64;
        let distance =
            u64::from(occupied.rotate_right(now_slot as u32).trailing_zeros());
        let slot = (now_slot + distance) % SLOTS as u64;
        let level_span = 1u64 << (shift + SLOT_BITS);
        let level_start = self.elapsed & !(level_span - 1);
        let mut tick = level_start + (slot << shift);
        if slot < now_slot {
            tick += level_span; // the next turn of this level (never at level 0)
        }
        Some((level, slot as usize, tick.max(self.elapsed)))
    }
}

/// By deadline, then by the order set: what a heap would have given.
fn sort_by_deadline<T>(due: &mut [Due<T>]) {
    due.sort_unstable_by_key(|&(deadline, sequence, _)| (deadline, sequence));
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = TICK_NS;

    /// Advances `wheel` one tick at a time to `to_tick`, noting when each
    /// timer fires: (tick fired at, value).
    fn run_to(wheel: &mut Wheel<u32>, to_tick: u64) -> Vec<(u64, u32)> {
        let mut fired = Vec::new();
        let mut due = Vec::new();
        for tick in wheel.elapsed..=to_tick {
            wheel.advance(tick, &mut due);
            fired.extend(due.drain(..).map(|(_, _, value)| (tick, value)));
        }
        fired
    }

    #[test]
    fn never_early_and_within_a_tick() {
        let mut wheel = Wheel::new();
        let deadlines: Vec<u64> =
            (0..5000).map(|i| i * 7919 % 300_000_000 + 1).collect();
        for (i, &deadline) in deadlines.iter().enumerate() {
            wheel.insert(deadline, u32::try_from(i).unwrap());
        }
        let fired = run_to(&mut wheel, 400);
        assert_eq!(fired.len(), deadlines.len());
        for (tick, value) in fired {
            let deadline = deadlines[value as usize];
            assert!(tick * MS >= deadline, "timer {value} fired early");
            assert!(tick * MS < deadline + MS, "timer {value} fired a tick late");
        }
        assert!(wheel.is_empty());
    }

    #[test]
    fn fires_in_deadline_order_then_in_the_order_set() {
        let mut wheel = Wheel::new();
        // Three in one millisecond, out of order, two with one deadline.
        wheel.insert(5 * MS - 10, 0);
        wheel.insert(5 * MS - 300, 1);
        wheel.insert(5 * MS - 10, 2);
        wheel.insert(3 * MS, 3);
        let mut due = Vec::new();
        wheel.advance(10, &mut due);
        let order: Vec<u32> = due.iter().map(|&(_, _, value)| value).collect();
        assert_eq!(order, [3, 1, 0, 2]);
    }

    #[test]
    fn a_cancelled_timer_leaves_at_once_and_never_fires() {
        let mut wheel = Wheel::new();
        let keys: Vec<_> = (0..100).map(|i| wheel.insert(70 * MS + i, 0)).collect();
        let kept = wheel.insert(70 * MS, 1);
        for &key in &keys {
            assert_eq!(wheel.remove(key), Some(0));
            assert_eq!(wheel.remove(key), None, "cancelled twice");
        }
        assert_eq!(wheel.len(), 1);
        assert!(wheel.contains(kept));
        let fired = run_to(&mut wheel, 100);
        assert_eq!(fired, [(70, 1)]);
        assert!(!wheel.contains(kept), "fired, so no longer set");
    }

    #[test]
    fn a_key_to_a_reused_place_names_nothing() {
        let mut wheel = Wheel::new();
        let old = wheel.insert(MS, 0);
        wheel.remove(old);
        let new = wheel.insert(MS, 1);
        assert_eq!(wheel.get(old), None);
        assert_eq!(wheel.remove(old), None);
        assert_eq!(wheel.get(new), Some(&1));
    }

    #[test]
    fn far_deadlines_cascade_down_and_fire_on_their_tick() {
        let mut wheel = Wheel::new();
        // One per level, and one past the last level's reach.
        let ticks = [63, 64, 4_095, 4_096, 300_000, 20_000_000, 2_000_000_000];
        for (i, &tick) in ticks.iter().enumerate() {
            wheel.insert(tick * MS, u32::try_from(i).unwrap());
        }
        let mut due = Vec::new();
        for (i, &tick) in ticks.iter().enumerate() {
            // Jump straight to the tick before, then to the tick itself.
            wheel.advance(tick - 1, &mut due);
            assert!(due.is_empty(), "timer {i} fired before tick {tick}");
            assert_eq!(wheel.next_tick(), Some(tick), "timer {i}'s own tick");
            wheel.advance(tick, &mut due);
            let fired: Vec<u32> = due.drain(..).map(|(_, _, value)| value).collect();
            assert_eq!(fired, [u32::try_from(i).unwrap()], "at tick {tick}");
        }
        assert!(wheel.is_empty());
        assert_eq!(wheel.next_tick(), None);
    }

    #[test]
    fn the_next_tick_is_never_after_the_earliest_deadline() {
        let mut wheel = Wheel::new();
        wheel.advance(1000, &mut Vec::new());
        wheel.insert(1000 * MS + 5_000 * MS, 0);
        let next = wheel.next_tick().unwrap();
        assert!(next <= 6000, "the loop would oversleep to {next}");
        wheel.insert(1000 * MS + 3 * MS, 1);
        assert_eq!(wheel.next_tick(), Some(1003));
    }

    /// A timer at a higher level asks for no wake-up at its slot's start
    /// (where it would move down): the next tick is its own, and one
    /// advance to it both moves it down and fires it.
    #[test]
    fn a_far_timer_alone_is_waited_for_in_one_go() {
        let mut wheel = Wheel::new();
        wheel.insert(1000 * MS, 0); // level 1, slot 15: starts at tick 960
        wheel.insert(1010 * MS, 1);
        assert_eq!(wheel.next_tick(), Some(1000));
        let mut due = Vec::new();
        wheel.advance(1000, &mut due);
        let fired: Vec<u32> = due.drain(..).map(|(_, _, value)| value).collect();
        assert_eq!(fired, [0]);
        assert_eq!(wheel.next_tick(), Some(1010));
        wheel.advance(1010, &mut due);
        assert_eq!(due.len(), 1);
        assert!(wheel.is_empty());
    }

    /// Cancelling a slot's earliest timer may leave the next tick early
    /// (a wake-up that finds nothing due), never late.
    #[test]
    fn after_a_cancel_the_next_tick_is_early_at_worst() {
        let mut wheel = Wheel::new();
        let first = wheel.insert(1000 * MS, 0);
        wheel.insert(1020 * MS, 1);
        wheel.remove(first);
        let next = wheel.next_tick().unwrap();
        assert!(next <= 1020, "the loop would oversleep to {next}");
        let mut due = Vec::new();
        wheel.advance(next, &mut due);
        assert!(due.is_empty(), "fired early");
        assert_eq!(wheel.next_tick(), Some(1020));
        wheel.advance(1020, &mut due);
        assert_eq!(due.len(), 1);
    }

    #[test]
    fn a_deadline_already_passed_fires_at_the_next_advance() {
        let mut wheel = Wheel::new();
        wheel.advance(500, &mut Vec::new());
        wheel.insert(10 * MS, 7); // long gone
        wheel.insert(0, 8);
        assert_eq!(wheel.next_tick(), Some(500));
        let mut due = Vec::new();
        wheel.advance(500, &mut due);
        let fired: Vec<u32> = due.iter().map(|&(_, _, value)| value).collect();
        assert_eq!(fired, [8, 7], "by deadline");
    }

    #[test]
    fn a_big_jump_fires_everything_due_in_order() {
        let mut wheel = Wheel::new();
        let mut expected = Vec::new();
        for i in (0..3000u32).rev() {
            let deadline = u64::from(i) * 997 * 1000 % (200_000 * MS) + 1;
            wheel.insert(deadline, i);
            expected.push((deadline, i));
        }
        wheel.insert(400_000 * MS, u32::MAX);
        let mut due = Vec::new();
        wheel.advance(200_000, &mut due);
        expected.sort_unstable_by_key(|&(deadline, i)| (deadline, 3000 - i));
        let fired: Vec<u32> = due.iter().map(|&(_, _, value)| value).collect();
        let expected: Vec<u32> = expected.iter().map(|&(_, value)| value).collect();
        assert_eq!(fired, expected);
        assert_eq!(wheel.len(), 1);
    }

    #[test]
    fn an_emptied_big_slab_gives_its_memory_back() {
        let mut wheel = Wheel::new();
        let keys: Vec<_> = (0..5000).map(|i| wheel.insert(i * MS, ())).collect();
        for key in keys {
            wheel.remove(key);
        }
        assert_eq!((wheel.len(), wheel.capacity()), (0, 0));
    }
}
