//! Permuted tables held in memory: what makes a long-lived reader fast.
//!
//! A probe through redb walks B-tree pages and checks the CRC of a 4 KB block on every read
//! (docs/benchmarks.md: that is most of a query). A pinned table is read from disk once, every
//! block's checksum checked then, and kept decoded as one sorted array of keys: a probe is a
//! binary search and a scan of the keys that share the query's prefix, with no lock, no page
//! lookup, no decoding and no second checksum. A pinned table costs 8.25-8.5 bytes per
//! fingerprint (6 on disk, delta-encoded): keeping the blocks encoded instead made probes no faster than
//! redb's cache (docs/benchmarks.md, "serve").
//!
//! A run's tables are immutable, so a pinned table is shared by every snapshot that reads its
//! run, and dropped with the last of them.
//!
//! Runs newer than the oldest also keep the sets of fingerprints they list and ids they mention
//! ([`RunKeys`]): a match's ids are looked up in every run, and each id checked in every newer
//! run, so with the runs a week of daily batches leaves most of a query was redb lookups that
//! find nothing; the sets answer those from memory.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::block::keys::KeyBlock;
use crate::error::{Error, Result};
use crate::run::RunReader;

/// One permuted table of one run: every key, decoded, in order (every shard file's), with a
/// directory by the keys' leading bits.
pub(crate) struct PinnedTable {
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

impl PinnedTable {
    /// Reads table `t` of `run` into memory, checking every block.
    fn load(run: &RunReader, t: usize) -> Result<Self> {
        let mut keys = Vec::with_capacity(usize::try_from(run.meta().fingerprints).unwrap_or(0));
        // Shard files split the key space by its leading bits, in order, so their keys
        // concatenate into one sorted sequence.
        for file in run.shard_files(0, run.shards())? {
            file.for_each_block(t, |last, block| {
                let before = keys.last().copied();
                let start = keys.len();
                KeyBlock::parse(block)?.for_each(|key| keys.push(key))?;
                if before.is_some_and(|b| b >= keys[start]) || keys.last() != Some(&last) {
                    return Err(Error::corrupt(format!(
                        "table t{t:03}: keys out of order at the block ending {last:016x}"
                    )));
                }
                Ok(())
            })?;
        }
        keys.shrink_to_fit();
        Ok(Self::with_directory(keys))
    }

    fn with_directory(keys: Vec<u64>) -> Self {
        // No directory (bits = 0: one bucket) for tables too small to need one or too large
        // for u32 indices.
        let buckets = (keys.len() / KEYS_PER_BUCKET).next_power_of_two();
        let bits = if keys.len() < 1024 || keys.len() >= u32::MAX as usize {
            0
        } else {
            buckets.trailing_zeros().min(32)
        };
        let mut directory = Vec::new();
        if bits > 0 {
            directory.reserve_exact((1 << bits) + 1);
            let mut i = 0;
            for p in 0..(1u64 << bits) {
                while i < keys.len() && keys[i] >> (64 - bits) < p {
                    i += 1;
                }
                directory.push(i as u32);
            }
            directory.push(keys.len() as u32);
        }
        PinnedTable {
            keys,
            directory,
            bits,
        }
    }

    /// Calls `f` on every key in `lo..=hi`, in order.
    pub(crate) fn probe(&self, lo: u64, hi: u64, mut f: impl FnMut(u64)) {
        let (start, end) = if self.bits == 0 {
            (0, self.keys.len())
        } else {
            let bucket = |key: u64| (key >> (64 - self.bits)) as usize;
            (
                self.directory[bucket(lo)] as usize,
                self.directory[bucket(hi) + 1] as usize,
            )
        };
        let keys = &self.keys[start..end];
        let first = keys.partition_point(|&k| k < lo);
        for &key in keys[first..].iter().take_while(|&&k| k <= hi) {
            f(key);
        }
    }

    /// Bytes of memory the table holds.
    fn bytes(&self) -> u64 {
        8 * self.keys.capacity() as u64 + 4 * self.directory.capacity() as u64
    }
}

/// What pinning a table of `run` takes: 8 bytes per key, and its directory.
fn table_cost(run: &RunReader) -> u64 {
    8 * run.meta().fingerprints + 4 * run.meta().fingerprints / (KEYS_PER_BUCKET as u64 / 2)
}

/// The fingerprints a run lists postings under and the hashes of the ids it mentions (live,
/// replaced or deleted), each sorted and distinct. Exact sets of 64-bit values: a hash that
/// two ids share costs a lookup in the run's docs file, never a wrong answer.
pub(crate) struct RunKeys {
    fingerprints: Vec<u64>,
    ids: Vec<u64>,
}

impl RunKeys {
    fn load(run: &RunReader) -> Result<Self> {
        let docs = run.docs()?;
        let mut fingerprints = Vec::new();
        docs.for_each_posting(|fp| fingerprints.push(fp))?;
        let mut ids = Vec::new();
        docs.for_each_document(|hash, _, _| ids.push(hash))?;
        for set in [&mut fingerprints, &mut ids] {
            set.sort_unstable(); // already in order: a check, in effect
            set.dedup();
            set.shrink_to_fit();
        }
        Ok(RunKeys { fingerprints, ids })
    }

    /// Whether the run lists postings under `fingerprint`.
    pub(crate) fn lists(&self, fingerprint: u64) -> bool {
        self.fingerprints.binary_search(&fingerprint).is_ok()
    }

    /// Whether the run may mention an id with this hash.
    pub(crate) fn mentions(&self, id_hash: u64) -> bool {
        self.ids.binary_search(&id_hash).is_ok()
    }

    fn bytes(&self) -> u64 {
        8 * (self.fingerprints.len() + self.ids.len()) as u64
    }
}

/// What keeping the key sets of `run` takes: 8 bytes per posting and per document entry.
fn keys_cost(run: &RunReader) -> u64 {
    16 * run.meta().documents
}

/// The tables of one run held in memory; a table that did not fit is None and is read from
/// disk.
pub(crate) struct PinnedRun {
    tables: Vec<Option<PinnedTable>>,
    /// The run's key sets, when asked for and within the budget.
    keys: Option<RunKeys>,
    /// Bytes of memory the pinned tables hold.
    bytes: u64,
    /// What they took from the budget.
    charged: u64,
}

impl PinnedRun {
    /// Pins the tables of `run` in order while they fit in `budget` (bytes of memory), which
    /// shrinks by what they take, then with `with_keys` its key sets if they fit too. Tables
    /// load in parallel.
    pub(crate) fn load(
        run: &RunReader,
        tables: usize,
        with_keys: bool,
        budget: &mut u64,
    ) -> Result<Arc<Self>> {
        use rayon::prelude::*;
        let chosen: Vec<bool> = (0..tables)
            .map(|_| {
                let size = table_cost(run);
                // A budget of 0 pins nothing, not even empty tables.
                let fits = *budget > 0 && size <= *budget;
                if fits {
                    *budget -= size;
                }
                fits
            })
            .collect();
        let tables: Vec<Option<PinnedTable>> = chosen
            .par_iter()
            .enumerate()
            .map(|(t, &pin)| pin.then(|| PinnedTable::load(run, t)).transpose())
            .collect::<Result<_>>()?;
        let mut charged = chosen.iter().filter(|&&pin| pin).count() as u64 * table_cost(run);
        let keys = if with_keys && *budget > 0 && keys_cost(run) <= *budget {
            *budget -= keys_cost(run);
            charged += keys_cost(run);
            Some(RunKeys::load(run)?)
        } else {
            None
        };
        let bytes = tables.iter().flatten().map(PinnedTable::bytes).sum::<u64>()
            + keys.as_ref().map_or(0, RunKeys::bytes);
        Ok(Arc::new(PinnedRun {
            tables,
            keys,
            bytes,
            charged,
        }))
    }

    /// Table `t`, if it is pinned.
    pub(crate) fn table(&self, t: usize) -> Option<&PinnedTable> {
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
