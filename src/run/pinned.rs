//! Permuted tables held in memory: what makes a long-lived reader fast.
//!
//! A probe through redb walks B-tree pages and checks the CRC of a 4 KB block on every read
//! (docs/benchmarks.md: that is most of a query). A pinned table is read from disk once, every
//! block's checksum checked then, and kept decoded as one sorted array of keys: a probe is a
//! binary search and a scan of the keys that share the query's prefix, with no lock, no page
//! lookup, no decoding and no second checksum. A pinned key costs its 8 bytes and a share of
//! the directory, more than on disk (delta-encoded): keeping the blocks encoded instead made
//! probes no faster than redb's cache (docs/benchmarks.md, "serve").
//!
//! A run's tables are immutable, so a pinned table is shared by every snapshot that reads its
//! run, and dropped with the last of them.
//!
//! Runs newer than the oldest also keep the sets of fingerprints they list and ids they mention
//! ([`RunKeys`]): a match's ids are looked up in every run, and each id checked in every newer
//! run, so with the runs a week of daily batches leaves most of a query was redb lookups that
//! find nothing; the sets answer those from memory.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::format::catalog::Catalog;

/// A sorted array of distinct-or-repeated u64 keys with a directory by their leading bits:
/// a pinned permuted table (every key of one table of one run) and a run's key sets.
pub(crate) struct SortedKeys {
    keys: Vec<u64>,
    /// `directory[p]` is the index of the first key whose leading `bits` bits are >= p (one
    /// more entry holds `keys.len()`). A binary search of tens of millions of keys misses
    /// the CPU cache at nearly every step; the directory narrows it to about
    /// [`KEYS_PER_BUCKET`] keys with two reads.
    directory: Vec<u32>,
    bits: u32,
}

/// Keys per directory entry, on average: the directory costs 4 / 16 of the keys' memory at
/// most (a bucket is a power of two, so between 1/16 and 1/8).
const KEYS_PER_BUCKET: usize = 16;

impl SortedKeys {
    /// Indexes `keys`, which must be sorted.
    pub(crate) fn new(keys: Vec<u64>) -> Self {
        debug_assert!(keys.is_sorted());
        // No directory (bits = 0: one bucket) for arrays too small to need one or too large
        // for u32 indices.
        let buckets = (keys.len() / KEYS_PER_BUCKET).next_power_of_two();
        let bits = if keys.len() < 1024 || keys.len() >= u32::MAX as usize {
            0
        } else {
            buckets.trailing_zeros().min(32)
        };
        let mut directory = Vec::new();
        if bits > 0 {
            directory = crate::sys::memory::huge_page_vec((1 << bits) + 1);
            let mut i = 0;
            for p in 0..(1u64 << bits) {
                while i < keys.len() && keys[i] >> (64 - bits) < p {
                    i += 1;
                }
                directory.push(i as u32);
            }
            directory.push(keys.len() as u32);
        }
        SortedKeys {
            keys,
            directory,
            bits,
        }
    }

    /// The keys of the directory buckets that `lo..=hi` spans: a superset of the keys in
    /// `lo..=hi`, found by reading the directory only (the keys themselves are not touched).
    pub(crate) fn candidates(&self, lo: u64, hi: u64) -> &[u64] {
        if self.bits == 0 {
            return &self.keys;
        }
        let bucket = |key: u64| (key >> (64 - self.bits)) as usize;
        let start = self.directory[bucket(lo)] as usize;
        let end = self.directory[bucket(hi) + 1] as usize;
        &self.keys[start..end]
    }

    /// Whether `key` is one of the keys.
    pub(crate) fn contains(&self, key: u64) -> bool {
        self.candidates(key, key).binary_search(&key).is_ok()
    }

    /// Bytes of memory the keys and directory hold.
    pub(crate) fn bytes(&self) -> u64 {
        8 * self.keys.capacity() as u64 + 4 * self.directory.capacity() as u64
    }
}

/// Calls `f` on every key of the sorted `keys` within `lo..=hi`, in order.
pub(crate) fn for_each_in(keys: &[u64], lo: u64, hi: u64, mut f: impl FnMut(u64)) {
    // Where the directory is finer than the prefix, the candidates start at `lo` and the
    // binary search (a cache miss a step) is not needed.
    let first = if keys.first().is_some_and(|&k| k >= lo) {
        0
    } else {
        keys.partition_point(|&k| k < lo)
    };
    for &key in keys[first..].iter().take_while(|&&k| k <= hi) {
        f(key);
    }
}

/// Reads a key from every cache line of `keys`, so that a later scan finds them in the CPU
/// cache: reads of many slices in one go overlap their misses, where a scan waits for each.
pub(crate) fn touch(keys: &[u64]) -> u64 {
    /// u64 keys per 64-byte cache line.
    const PER_LINE: usize = 8;
    let last = keys.last().copied().unwrap_or(0);
    keys.iter().step_by(PER_LINE).fold(last, |acc, &k| acc ^ k)
}

/// What pinning `n` keys takes: 8 bytes per key, and the directory at its largest.
pub(crate) fn keys_cost(n: u64) -> u64 {
    8 * n + 4 * n / (KEYS_PER_BUCKET as u64 / 2)
}

/// What pinning every table of every run of `catalog` takes.
pub(crate) fn tables_cost(catalog: &Catalog) -> u64 {
    let tables = catalog.settings.table_count() as u64;
    catalog
        .runs
        .iter()
        .map(|run| tables * keys_cost(run.fingerprints))
        .sum()
}

/// The fingerprints a run lists postings under and the hashes of the ids it mentions (live,
/// replaced or deleted), each sorted and distinct. Exact sets of 64-bit values: a hash that
/// two ids share costs a lookup in the run's docs file, never a wrong answer.
pub(crate) struct RunKeys {
    fingerprints: SortedKeys,
    ids: SortedKeys,
}

impl RunKeys {
    /// The key sets of a run: `fingerprints` it lists postings under and the hashes of the
    /// `ids` it mentions, in any order.
    pub(crate) fn new(fingerprints: Vec<u64>, ids: Vec<u64>) -> Self {
        let set = |mut keys: Vec<u64>| {
            keys.sort_unstable(); // already in order: a check, in effect
            keys.dedup();
            keys.shrink_to_fit();
            SortedKeys::new(keys)
        };
        RunKeys {
            fingerprints: set(fingerprints),
            ids: set(ids),
        }
    }

    /// Whether the run lists postings under `fingerprint`.
    pub(crate) fn lists(&self, fingerprint: u64) -> bool {
        self.fingerprints.contains(fingerprint)
    }

    /// Whether the run may mention an id with this hash.
    pub(crate) fn mentions(&self, id_hash: u64) -> bool {
        self.ids.contains(id_hash)
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.fingerprints.bytes() + self.ids.bytes()
    }
}

/// The tables of one run held in memory; a table that did not fit is None and is read from
/// disk.
pub(crate) struct PinnedRun {
    tables: Vec<Option<SortedKeys>>,
    /// The run's key sets, when asked for and within the budget.
    keys: Option<RunKeys>,
    /// Bytes of memory the pinned tables hold.
    bytes: u64,
    /// What they took from the budget.
    charged: u64,
}

impl PinnedRun {
    /// A run's pinned tables (None where a table is read from disk) and key sets, which
    /// took `charged` bytes from a budget.
    pub(crate) fn new(
        tables: Vec<Option<SortedKeys>>,
        keys: Option<RunKeys>,
        charged: u64,
    ) -> Self {
        let bytes = tables.iter().flatten().map(SortedKeys::bytes).sum::<u64>()
            + keys.as_ref().map_or(0, RunKeys::bytes);
        PinnedRun {
            tables,
            keys,
            bytes,
            charged,
        }
    }

    /// Table `t`, if it is pinned.
    pub(crate) fn table(&self, t: usize) -> Option<&SortedKeys> {
        self.tables.get(t).and_then(Option::as_ref)
    }

    /// The run's key sets, if they are held.
    pub(crate) fn keys(&self) -> Option<&RunKeys> {
        self.keys.as_ref()
    }

    /// Bytes of memory the pinned tables (and key sets) hold.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// What the pinned tables take from a budget.
    pub(crate) fn charged(&self) -> u64 {
        self.charged
    }

    /// Tables pinned and tables left on disk.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let pinned = self.tables.iter().filter(|t| t.is_some()).count();
        (pinned, self.tables.len() - pinned)
    }
}

/// How many probes read a pinned table and how many read a file: a reader's hit rate.
#[derive(Default)]
pub(crate) struct ProbeCounts {
    pub(crate) memory: AtomicU64,
    pub(crate) disk: AtomicU64,
}

impl ProbeCounts {
    pub(crate) fn add(&self, memory: u64, disk: u64) {
        if memory > 0 {
            self.memory.fetch_add(memory, Ordering::Relaxed);
        }
        if disk > 0 {
            self.disk.fetch_add(disk, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Sorted keys with repeats, clustered under a few prefixes and spread over the rest,
    /// from none to past the size where a directory is built.
    fn sorted_keys() -> impl Strategy<Value = Vec<u64>> {
        let key = prop_oneof![
            any::<u64>(),
            (0u64..4, any::<u16>()).prop_map(|(prefix, low)| prefix << 62 | u64::from(low)),
            Just(u64::MAX),
            Just(0),
        ];
        proptest::collection::vec(key, 0..5000).prop_map(|mut keys| {
            keys.sort_unstable();
            keys
        })
    }

    proptest! {
        #[test]
        fn ranges_and_membership_equal_a_scan(keys in sorted_keys(), probes in proptest::collection::vec((any::<u64>(), 0u32..40), 1..50)) {
            let sorted = SortedKeys::new(keys.clone());
            if keys.len() >= 1024 {
                prop_assert!(sorted.bits > 0);
            }
            // Probe both the keys themselves and arbitrary values.
            let probes = probes
                .into_iter()
                .chain(keys.iter().step_by(97).map(|&k| (k, 3)));
            for (at, width) in probes {
                let lo = at & !((1u64 << width) - 1);
                let hi = lo | ((1u64 << width) - 1);
                let mut found = Vec::new();
                for_each_in(sorted.candidates(lo, hi), lo, hi, |k| found.push(k));
                let expected: Vec<u64> = keys.iter().copied().filter(|k| (lo..=hi).contains(k)).collect();
                prop_assert_eq!(found, expected);
                prop_assert_eq!(sorted.contains(at), keys.contains(&at));
            }
        }
    }
}
