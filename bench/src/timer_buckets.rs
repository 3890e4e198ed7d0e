//! The solution to the benchmarks chapter's first exercise: timers sorted
//! into 1 ms buckets, and only the earliest bucket kept in order, instead
//! of step 8's one binary heap of every timer. No benchmark uses it; the
//! chapter measured it spliced into step 8's `event_loop.rs` in place of
//! `BinaryHeap<Timer>`, and its tests below check the promises a timer
//! store must keep.
//!
//! A heap orders every timer against every other: setting one and firing
//! one cost O(log n), and at 100,000 timers each pop walks down levels
//! that are no longer in the cache. But the loop only ever needs the
//! timers due soonest in order. 100,000 sleeps spread over 100 ms fall
//! into 100 buckets a millisecond wide, so setting a timer is a lookup
//! among those few buckets and a push onto a `Vec`. When the earliest
//! bucket comes due, it is sorted, a thousand timers or so that the cache
//! holds, and its timers fire from the front in order: earliest deadline
//! first, equal deadlines in the order they were set (the sort is
//! stable), and each at its own deadline, not at the end of its
//! millisecond, as a timer wheel that fires whole slots (tokio's) would.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

// ANCHOR: buckets
/// Entries of type `T`, each due at a deadline: the soonest in order, the
/// others in buckets a millisecond wide.
#[derive(Debug)]
pub struct Buckets<T> {
    /// The instant the ticks count from: tick `n` ends `n` ms after it.
    origin: Instant,
    /// The entries of every tick up to `due_tick`, sorted by deadline.
    soonest: VecDeque<(Instant, T)>,
    due_tick: u64,
    /// The entries of the later ticks, each bucket in the order it was
    /// filled, with the earliest deadline in it.
    later: BTreeMap<u64, Bucket<T>>,
    len: usize,
}

#[derive(Debug)]
struct Bucket<T> {
    earliest: Instant,
    entries: Vec<(Instant, T)>,
}

impl<T> Buckets<T> {
    /// Puts `item` in its tick's bucket, or, if that tick is being fired
    /// already, into its place among the soonest: after every deadline
    /// up to its own, so equal deadlines keep the order they were set in.
    pub fn push(&mut self, deadline: Instant, item: T) {
        self.len += 1;
        let tick = self.tick_of(deadline);
        if tick <= self.due_tick {
            let place = self.soonest.partition_point(|&(due, _)| due <= deadline);
            self.soonest.insert(place, (deadline, item));
            return;
        }
        let bucket = self.later.entry(tick).or_insert_with(|| Bucket {
            earliest: deadline,
            entries: Vec::new(),
        });
        bucket.earliest = bucket.earliest.min(deadline);
        bucket.entries.push((deadline, item));
    }

    /// The earliest deadline of all: how long the loop may wait.
    pub fn earliest(&self) -> Option<Instant> {
        match self.soonest.front() {
            Some(&(deadline, _)) => Some(deadline),
            None => self.later.values().next().map(|bucket| bucket.earliest),
        }
    }

    /// The entry with the earliest deadline, if that deadline is `now` or
    /// before. Every deadline among the soonest is in a tick before every
    /// tick still in a bucket, so the front one is the earliest of all;
    /// when none is left, the earliest bucket is sorted and takes over.
    pub fn pop_due(&mut self, now: Instant) -> Option<T> {
        if self.soonest.is_empty() {
            let first = self.later.first_entry()?;
            if first.get().earliest > now {
                return None;
            }
            self.due_tick = *first.key();
            let mut entries = first.remove().entries;
            entries.sort_by_key(|&(deadline, _)| deadline);
            self.soonest = entries.into();
        }
        if self
            .soonest
            .front()
            .is_none_or(|&(deadline, _)| deadline > now)
        {
            return None;
        }
        self.len -= 1;
        self.soonest.pop_front().map(|(_, item)| item)
    }
    // ANCHOR_END: buckets

    /// No entries yet; ticks count from now.
    pub fn new() -> Self {
        Self::starting_at(Instant::now())
    }

    /// No entries yet; ticks count from `origin`.
    pub fn starting_at(origin: Instant) -> Self {
        Buckets {
            origin,
            soonest: VecDeque::new(),
            due_tick: 0,
            later: BTreeMap::new(),
            len: 0,
        }
    }

    /// Keeps only the entries `keep` says yes to: the sweep of cancelled
    /// timers.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.soonest.retain(|(_, item)| keep(item));
        self.later.retain(|_, bucket| {
            bucket.entries.retain(|(_, item)| keep(item));
            bucket.earliest = bucket
                .entries
                .iter()
                .map(|&(deadline, _)| deadline)
                .min()
                .unwrap_or(bucket.earliest);
            !bucket.entries.is_empty()
        });
        self.len = self.soonest.len()
            + self
                .later
                .values()
                .map(|bucket| bucket.entries.len())
                .sum::<usize>();
    }

    /// How many entries are waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no entry is left.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first tick that ends at or after `deadline`. Any rounding would
    /// do, as long as a later deadline never gets an earlier tick: entries
    /// fire at their own deadline, not at their tick's.
    fn tick_of(&self, deadline: Instant) -> u64 {
        let since = deadline.saturating_duration_since(self.origin);
        let whole_ms = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
        if Duration::from_millis(whole_ms) < since {
            whole_ms.saturating_add(1)
        } else {
            whole_ms
        }
    }
}

impl<T> Default for Buckets<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deadlines `delays_us` after `start`, set in that order; each item is
    /// its index and its deadline.
    fn filled(start: Instant, delays_us: &[u64]) -> Buckets<(usize, Instant)> {
        let mut buckets = Buckets::starting_at(start);
        for (i, &us) in delays_us.iter().enumerate() {
            let deadline = start + Duration::from_micros(us);
            buckets.push(deadline, (i, deadline));
        }
        buckets
    }

    /// Pops everything, stepping the clock `stride_us` at a time, and
    /// returns the items in the order they came out.
    fn drain(
        buckets: &mut Buckets<(usize, Instant)>,
        start: Instant,
        stride_us: u64,
    ) -> Vec<usize> {
        let mut now = start;
        let mut order = Vec::new();
        while !buckets.is_empty() {
            if let Some(earliest) = buckets.earliest() {
                assert!(earliest >= start, "a deadline before the first");
            }
            now += Duration::from_micros(stride_us);
            while let Some((i, deadline)) = buckets.pop_due(now) {
                assert!(deadline <= now, "item {i} came out early");
                assert!(
                    now - deadline <= Duration::from_micros(stride_us),
                    "item {i} came out late"
                );
                order.push(i);
            }
        }
        order
    }

    #[test]
    fn entries_come_out_in_deadline_order_never_early_never_a_step_late() {
        let start = Instant::now();
        let delays: Vec<u64> = (0..3_000).map(|i| (i * 7_919) % 20_000).collect();
        let mut buckets = filled(start, &delays);
        let order = drain(&mut buckets, start, 37);
        let mut by_deadline: Vec<usize> = (0..delays.len()).collect();
        by_deadline.sort_by_key(|&i| delays[i]); // stable: ties keep their order
        assert_eq!(order, by_deadline);
    }

    #[test]
    fn equal_deadlines_come_out_in_the_order_they_were_pushed() {
        let start = Instant::now();
        let mut buckets = filled(start, &[3_000, 1_500, 3_000, 1_500, 3_000]);
        assert_eq!(drain(&mut buckets, start, 100), [1, 3, 0, 2, 4]);
    }

    #[test]
    fn an_entry_pushed_into_the_tick_being_fired_takes_its_place_in_order() {
        let start = Instant::now();
        let mut buckets = filled(start, &[2_100, 2_900]);
        let now = start + Duration::from_micros(2_200);
        assert_eq!(buckets.pop_due(now).map(|(i, _)| i), Some(0));
        // Tick 3 is being fired: a new deadline in it goes among the soonest.
        buckets.push(start + Duration::from_micros(2_500), (2, start));
        assert_eq!(
            buckets.earliest(),
            Some(start + Duration::from_micros(2_500))
        );
        let later = start + Duration::from_millis(3);
        assert_eq!(buckets.pop_due(later).map(|(i, _)| i), Some(2));
        assert_eq!(buckets.pop_due(later).map(|(i, _)| i), Some(1));
        assert!(buckets.is_empty());
    }

    #[test]
    fn the_sweep_keeps_only_what_it_is_told() {
        let start = Instant::now();
        let delays: Vec<u64> = (0..300).map(|i| i * 100).collect();
        let mut buckets = filled(start, &delays);
        buckets.retain(|&(i, _)| i % 3 == 0);
        assert_eq!(buckets.len(), 100);
        assert_eq!(
            drain(&mut buckets, start, 50),
            (0..300).step_by(3).collect::<Vec<_>>()
        );
    }
}
