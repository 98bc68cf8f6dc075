//! Permuted tables held in memory: what makes a long-lived reader fast.
//!
//! A probe through redb walks B-tree pages and checks the CRC of a 4 KB block on every read
//! (docs/benchmarks.md: that is most of a query). A pinned table is read from disk once, every
//! block's checksum checked then, and kept as the blocks' bytes back to back with their last
//! keys beside them: a probe is a binary search of the last keys and a decode of the block in
//! memory, with no lock, no page lookup and no second checksum. Blocks stay delta-encoded, so
//! a pinned table costs what it costs on disk (about 6 bytes per fingerprint).
//!
//! A run's tables are immutable, so a pinned table is shared by every snapshot that reads its
//! run, and dropped with the last of them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::block::keys::KeyBlock;
use crate::error::{Error, Result};
use crate::run::RunReader;

/// One permuted table of one run, every shard file's blocks in key order.
pub(crate) struct PinnedTable {
    /// `last_keys[i]` is the last key of block i; strictly increasing.
    last_keys: Vec<u64>,
    /// Block i is `bytes[starts[i]..starts[i + 1]]` (the last one ends at `bytes.len()`).
    starts: Vec<usize>,
    bytes: Vec<u8>,
}

impl PinnedTable {
    /// Reads table `t` of `run` into memory, checking every block.
    fn load(run: &RunReader, t: usize) -> Result<Self> {
        let capacity = run.meta().table_bytes.get(t).copied().unwrap_or(0);
        let mut table = PinnedTable {
            last_keys: Vec::new(),
            starts: Vec::new(),
            bytes: Vec::with_capacity(usize::try_from(capacity).unwrap_or(0)),
        };
        // Shard files split the key space by its leading bits, in order, so their blocks
        // concatenate into one sorted sequence.
        for file in run.shard_files(0, run.shards())? {
            file.for_each_block(t, |last, block| {
                if table.last_keys.last().is_some_and(|&before| before >= last) {
                    return Err(Error::corrupt(format!(
                        "table t{t:03}: block last keys do not increase at {last:016x}"
                    )));
                }
                table.last_keys.push(last);
                table.starts.push(table.bytes.len());
                table.bytes.extend_from_slice(block);
                Ok(())
            })?;
        }
        table.bytes.shrink_to_fit();
        Ok(table)
    }

    /// Calls `f` on every key in `lo..=hi`, in order.
    pub(crate) fn probe(&self, lo: u64, hi: u64, mut f: impl FnMut(u64)) -> Result<()> {
        let first = self.last_keys.partition_point(|&last| last < lo);
        for i in first..self.last_keys.len() {
            let end = self.starts.get(i + 1).copied().unwrap_or(self.bytes.len());
            KeyBlock::parse_verified(&self.bytes[self.starts[i]..end])?
                .for_each_in(lo, hi, &mut f)?;
            if self.last_keys[i] >= hi {
                break;
            }
        }
        Ok(())
    }

    /// Bytes of memory the table holds.
    fn bytes(&self) -> u64 {
        (self.bytes.capacity() + 8 * self.last_keys.capacity() + 8 * self.starts.capacity()) as u64
    }
}

/// The tables of one run held in memory; a table that did not fit is None and is read from
/// disk.
pub(crate) struct PinnedRun {
    tables: Vec<Option<PinnedTable>>,
    /// Bytes of memory the pinned tables hold.
    bytes: u64,
    /// Their bytes on disk: what they took from the budget.
    charged: u64,
}

impl PinnedRun {
    /// Pins the tables of `run` in order while their bytes on disk fit in `budget`, which
    /// shrinks by what they take. Tables load in parallel.
    pub(crate) fn load(run: &RunReader, tables: usize, budget: &mut u64) -> Result<Arc<Self>> {
        use rayon::prelude::*;
        let chosen: Vec<bool> = (0..tables)
            .map(|t| {
                let size = run.meta().table_bytes.get(t).copied().unwrap_or(0);
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
        let bytes = tables.iter().flatten().map(PinnedTable::bytes).sum();
        let charged = (0..tables.len())
            .filter(|&t| chosen[t])
            .map(|t| run.meta().table_bytes.get(t).copied().unwrap_or(0))
            .sum();
        Ok(Arc::new(PinnedRun {
            tables,
            bytes,
            charged,
        }))
    }

    /// Table `t`, if it is pinned.
    pub(crate) fn table(&self, t: usize) -> Option<&PinnedTable> {
        self.tables.get(t).and_then(Option::as_ref)
    }

    /// Bytes of memory the pinned tables hold.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The bytes on disk of the pinned tables: what they take from a budget.
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
