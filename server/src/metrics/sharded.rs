//! Counts that the hot paths add to without sharing a cache line between threads.
//!
//! A counter of the exporter is one atomic that every thread adds to: on a server whose workers
//! each handle actions, the cache line holding it moves from core to core on nearly every
//! message, and each move costs more than the addition. [`Tally`] and [`Timings`] give each
//! thread a slot of its own (threads beyond [`SLOTS`] share one), and add the slots up into the
//! exporter's series only when they are published: before every scrape and at every upkeep
//! ([`super::Metrics::render`], [`super::Metrics::upkeep`]). A scrape therefore sees every value
//! recorded before it began, as with the exporter's own handles.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use metrics::{Counter, Histogram};

/// How many slots a count is spread over: more than the threads that add to it on most
/// machines (a worker a core, and the store's writer).
pub(super) const SLOTS: usize = 16;

thread_local! {
    /// This thread's slot, chosen on its first count.
    static SLOT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The slot of the calling thread: threads take the slots in turn as they first count.
fn slot() -> usize {
    SLOT.with(|slot| {
        slot.get().unwrap_or_else(|| {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let mine = NEXT.fetch_add(1, Ordering::Relaxed) % SLOTS;
            slot.set(Some(mine));
            mine
        })
    })
}

/// One thread's part of a count, alone on its cache lines (two, for the neighbouring line the
/// processor fetches with it).
#[derive(Debug, Default)]
#[repr(align(128))]
struct Part(AtomicU64);

/// A counter whose additions stay on the adding thread's core: the sum of its slots, published
/// into the exporter's counter of the same series.
#[derive(Debug)]
pub struct Tally {
    /// Each thread's additions.
    parts: Box<[Part]>,
    /// The exporter's counter, set to the sum when published.
    counter: Counter,
}

impl Tally {
    /// A tally published into `counter`.
    pub(super) fn new(counter: Counter) -> Tally {
        Tally {
            parts: (0..SLOTS).map(|_| Part::default()).collect(),
            counter,
        }
    }

    /// Adds `n`.
    pub fn increment(&self, n: u64) {
        self.parts[slot()].0.fetch_add(n, Ordering::Relaxed);
    }

    /// The sum of every slot.
    fn sum(&self) -> u64 {
        self.parts.iter().map(|p| p.0.load(Ordering::Relaxed)).sum()
    }

    /// Sets the exporter's counter to the sum (a counter only rises: the exporter keeps the
    /// larger of the two).
    pub(super) fn publish(&self) {
        self.counter.absolute(self.sum());
    }
}

/// The most buckets a [`Timings`] has: its bounds and the one above them.
const MOST_BUCKETS: usize = 24;

/// One thread's part of a [`Timings`], alone on its cache lines: for each bucket, the durations
/// counted and their nanoseconds side by side, so that a recording touches one line of memory
/// the thread owns (two lists of their own each, allocated one after another, had one thread's
/// last line shared with the next thread's first).
#[derive(Debug)]
#[repr(align(128))]
struct Buckets {
    /// By bucket (the last one is above every bound): the durations counted, and their
    /// nanoseconds, added before the count, so that a publisher that reads the count first
    /// finds at least the sum of what it counted.
    counted: [[AtomicU64; 2]; MOST_BUCKETS],
}

impl Buckets {
    /// Nothing counted.
    fn new() -> Buckets {
        Buckets {
            counted: [const { [AtomicU64::new(0), AtomicU64::new(0)] }; MOST_BUCKETS],
        }
    }
}

/// A histogram of durations whose recordings stay on the recording thread's core: each slot
/// counts its durations by bucket, and publishing records into the exporter's histogram, for
/// each bucket, the durations counted since the last time, each at their mean. The exporter's
/// buckets, count and sum are then the same as if every duration had been recorded there (the
/// mean of durations in one bucket is in that bucket).
#[derive(Debug)]
pub struct Timings {
    /// The buckets' upper bounds, in nanoseconds: the exporter's bounds for the series.
    bounds: Box<[u64]>,
    /// Each thread's counts.
    parts: Box<[Buckets]>,
    /// What was published so far, from each slot's counts and sums, bucket by bucket.
    published: Mutex<Vec<(u64, u64)>>,
    /// The exporter's histogram.
    histogram: Histogram,
}

impl Timings {
    /// Timings in buckets up to each of `bounds` (in seconds, rising) and one above them,
    /// published into `histogram`, whose buckets must be the same.
    ///
    /// # Panics
    ///
    /// If there are more bounds than a [`Timings`] holds buckets for (`MOST_BUCKETS`).
    pub(super) fn new(bounds: &[f64], histogram: Histogram) -> Timings {
        let buckets = bounds.len() + 1;
        assert!(
            buckets <= MOST_BUCKETS,
            "{buckets} buckets, at most {MOST_BUCKETS}"
        );
        Timings {
            // Bounds are whole nanoseconds (10 µs and up); the conversion is exact.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            bounds: bounds.iter().map(|b| (b * 1e9).round() as u64).collect(),
            parts: (0..SLOTS).map(|_| Buckets::new()).collect(),
            published: Mutex::new(vec![(0, 0); SLOTS * buckets]),
            histogram,
        }
    }

    /// Records one duration.
    pub fn record(&self, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        let bucket = self.bounds.partition_point(|&bound| bound < nanos);
        let [count, sum] = &self.parts[slot()].counted[bucket];
        sum.fetch_add(nanos, Ordering::Relaxed);
        count.fetch_add(1, Ordering::Release);
    }

    /// Records into the exporter's histogram what was counted since the last time: for each
    /// slot and bucket, the new durations at their mean, kept within the bucket's bounds (a
    /// duration whose nanoseconds were added but not yet counted is left to the next time).
    pub(super) fn publish(&self) {
        let mut published = self
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let buckets = self.bounds.len() + 1;
        for (s, part) in self.parts.iter().enumerate() {
            for b in 0..buckets {
                let [count, sum] = &part.counted[b];
                let count = count.load(Ordering::Acquire);
                let nanos = sum.load(Ordering::Relaxed);
                let (counted, summed) = &mut published[s * buckets + b];
                let new = count - *counted;
                if new == 0 {
                    continue;
                }
                let mut mean = (nanos - *summed) / new;
                if let Some(&bound) = self.bounds.get(b) {
                    mean = mean.min(bound);
                }
                *counted = count;
                *summed += mean * new;
                // A mean is at most a bound (≤ 2^53 ns) or a sum of real durations: exact
                // enough, in seconds.
                #[allow(clippy::cast_precision_loss)]
                let seconds = mean as f64 / 1e9;
                self.histogram
                    .record_many(seconds, usize::try_from(new).unwrap_or(usize::MAX));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Arc;

    use metrics::{CounterFn, HistogramFn};

    /// A counter handle that keeps what it is set to.
    #[derive(Debug, Default)]
    struct Kept(AtomicU64);

    impl CounterFn for Kept {
        fn increment(&self, value: u64) {
            self.0.fetch_add(value, Ordering::Relaxed);
        }
        fn absolute(&self, value: u64) {
            self.0.fetch_max(value, Ordering::Relaxed);
        }
    }

    /// A histogram handle that keeps every value recorded.
    #[derive(Debug, Default)]
    struct Values(Mutex<Vec<f64>>);

    impl HistogramFn for Values {
        fn record(&self, value: f64) {
            self.0.lock().unwrap().push(value);
        }
    }

    #[test]
    fn a_tally_sums_what_every_thread_added() {
        let kept = Arc::new(Kept::default());
        let tally = Arc::new(Tally::new(Counter::from_arc(Arc::clone(&kept))));
        let threads: Vec<_> = (0..24)
            .map(|n| {
                let tally = Arc::clone(&tally);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        tally.increment(n);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        tally.publish();
        assert_eq!(kept.0.load(Ordering::Relaxed), 1000 * (0..24).sum::<u64>());
        // Published again with nothing new: the same.
        tally.publish();
        assert_eq!(kept.0.load(Ordering::Relaxed), 1000 * (0..24).sum::<u64>());
    }

    #[test]
    fn timings_publish_each_duration_once_in_its_bucket_with_the_exact_sum() {
        let values = Arc::new(Values::default());
        let bounds = [0.000_01, 0.000_1, 0.001];
        let timings = Arc::new(Timings::new(
            &bounds,
            Histogram::from_arc(Arc::clone(&values)),
        ));
        let micros: Vec<u64> = vec![3, 10, 11, 40, 99, 100, 101, 500, 1000, 1001, 7000];
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let timings = Arc::clone(&timings);
                let micros = micros.clone();
                std::thread::spawn(move || {
                    for m in micros {
                        timings.record(Duration::from_micros(m));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        timings.publish();
        timings.record(Duration::from_micros(20));
        timings.publish();
        timings.publish();
        let recorded = values.0.lock().unwrap().clone();
        assert_eq!(recorded.len(), 4 * micros.len() + 1);
        let in_bucket = |lo: f64, hi: f64| recorded.iter().filter(|&&v| v > lo && v <= hi).count();
        // 3 and 10 µs; 11, 40, 99 and 100; 101, 500 and 1000; 1001 and 7000 — from four
        // threads — and the 20 µs after the first publishing.
        assert_eq!(in_bucket(0.0, 0.000_01), 4 * 2);
        assert_eq!(in_bucket(0.000_01, 0.000_1), 4 * 4 + 1);
        assert_eq!(in_bucket(0.000_1, 0.001), 4 * 3);
        assert_eq!(in_bucket(0.001, f64::INFINITY), 4 * 2);
        let sum: f64 = recorded.iter().sum();
        let expected = (4 * micros.iter().sum::<u64>() + 20) as f64 / 1e6;
        // Each bucket of each slot leaves less than a nanosecond a duration for later.
        assert!((sum - expected).abs() < 1e-7, "{sum} against {expected}");
    }
}
