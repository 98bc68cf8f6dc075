//! One open shard file of a run: its permuted tables, scanned, probed or walked a block at a
//! time.

use std::path::{Path, PathBuf};

use redb::{ReadOnlyDatabase, ReadOnlyTable, ReadableDatabase, TableDefinition, TableError};

use super::ascending_blocks::{for_each_block, AscendingBlocks};
use crate::error::{Error, Result};
use crate::format::block::keys::KeyBlock;
use crate::run::{table_name, KeyScan};

/// One open shard file of a run.
pub struct ShardFile {
    path: PathBuf,
    tables: Vec<Option<ReadOnlyTable<u64, &'static [u8]>>>,
    _db: ReadOnlyDatabase,
}

impl ShardFile {
    /// The shard file at `path`, open in `db`, with its `tables` permuted tables (those it
    /// lacks are None).
    pub(super) fn open(path: &Path, db: ReadOnlyDatabase, tables: usize) -> Result<ShardFile> {
        let txn = db.begin_read().map_err(|e| Error::redb(path, e))?;
        let tables = (0..tables)
            .map(
                |t| match txn.open_table(TableDefinition::<u64, &[u8]>::new(&table_name(t))) {
                    Ok(table) => Ok(Some(table)),
                    Err(TableError::TableDoesNotExist(_)) => Ok(None),
                    Err(e) => Err(Error::redb(path, e)),
                },
            )
            .collect::<Result<_>>()?;
        Ok(ShardFile {
            path: path.to_path_buf(),
            tables,
            _db: db,
        })
    }

    /// The keys of table `t` in `lo..=hi`, a block at a time.
    pub fn scan(&self, t: usize, lo: u64, hi: u64) -> Result<KeyScan> {
        KeyScan::new(
            self.path.clone(),
            table_name(t),
            self.tables[t].as_ref(),
            lo,
            hi,
        )
    }

    /// Calls `f` on every key of table `t` in `lo..=hi`, in order.
    pub fn probe(&self, t: usize, lo: u64, hi: u64, mut f: impl FnMut(u64)) -> Result<()> {
        let Some(table) = &self.tables[t] else {
            return Ok(());
        };
        let range = table.range(lo..).map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (last, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let last = last.value();
            KeyBlock::parse(block.value())
                .and_then(|b| b.for_each_in(lo, hi, &mut f))
                .map_err(|e| e.at(&self.path, &table_name(t), Some(format!("{last:016x}"))))?;
            if last >= hi {
                break;
            }
        }
        Ok(())
    }

    /// For key ranges ascending by their low end, calls `f(i, key)` on every key of table
    /// `t` in range i (`lo..=hi`). Each block that holds a range's low end is read and
    /// checked once for all the ranges that start in it; a range running past its block
    /// reads on from there. The next range's block is looked for by stepping along from the
    /// last one only when its low end is within a few blocks' span of keys: sparse ranges (a
    /// few queries against a large store) are each searched for, as one query's probe is.
    pub fn probe_sorted(
        &self,
        t: usize,
        ranges: &[(u64, u64)],
        mut f: impl FnMut(usize, u64),
    ) -> Result<()> {
        let Some(table) = &self.tables[t] else {
            return Ok(());
        };
        let mut blocks = AscendingBlocks::new(table);
        let mut i = 0;
        while i < ranges.len() {
            let lo = ranges[i].0;
            let item = blocks
                .at_least(lo, |last| last.value() >= lo)
                .map_err(|e| Error::redb(&self.path, e))?;
            let Some((last, block)) = item else { break };
            let last = last.value();
            let end = i + ranges[i..].partition_point(|&(lo, _)| lo <= last);
            let block = KeyBlock::parse(block.value())
                .map_err(|e| e.at(&self.path, &table_name(t), Some(format!("{last:016x}"))))?;
            for (j, &(lo, hi)) in ranges.iter().enumerate().take(end).skip(i) {
                block
                    .for_each_in(lo, hi.min(last), |key| f(j, key))
                    .map_err(|e| e.at(&self.path, &table_name(t), Some(format!("{last:016x}"))))?;
                if hi > last {
                    self.probe(t, last + 1, hi, |key| f(j, key))?;
                }
            }
            search_if_far(&mut blocks, (&block, last), ranges.get(end).map(|r| r.0));
            i = end;
        }
        Ok(())
    }

    /// Calls `f(last_key, block)` on every block of table `t`, in order, each block's
    /// checksum and header checked first.
    pub fn for_each_block(
        &self,
        t: usize,
        mut f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let Some(table) = &self.tables[t] else {
            return Ok(());
        };
        for_each_block(&self.path, table, |last, block| {
            KeyBlock::parse(block)
                .map_err(|e| e.at(&self.path, &table_name(t), Some(format!("{last:016x}"))))?;
            f(last, block)
        })
    }

    /// For fingerprints ascending, marks in `found` those present in table 0 (whose keys are
    /// the fingerprints themselves). Each block that covers a fingerprint is read once and
    /// walked beside the fingerprints it covers.
    pub fn contains_sorted(&self, fingerprints: &[u64], found: &mut [bool]) -> Result<()> {
        let Some(table) = &self.tables[0] else {
            return Ok(());
        };
        let mut blocks = AscendingBlocks::new(table);
        let mut i = 0;
        while i < fingerprints.len() {
            let wanted = fingerprints[i];
            let item = blocks
                .at_least(wanted, |last| last.value() >= wanted)
                .map_err(|e| Error::redb(&self.path, e))?;
            let Some((last, block)) = item else { break };
            let last = last.value();
            let end = i + fingerprints[i..].partition_point(|&fp| fp <= last);
            let at = |e: Error| e.at(&self.path, "t000", Some(format!("{last:016x}")));
            let block = KeyBlock::parse(block.value()).map_err(at)?;
            // Only the keys from the first fingerprint to the last one it covers are decoded.
            block
                .for_each_in(wanted, fingerprints[end - 1], |key| {
                    while i < end && fingerprints[i] < key {
                        i += 1;
                    }
                    while i < end && fingerprints[i] == key {
                        found[i] = true;
                        i += 1;
                    }
                })
                .map_err(at)?;
            search_if_far(&mut blocks, (&block, last), fingerprints.get(end).copied());
            i = end;
        }
        Ok(())
    }
}

/// Makes `blocks` search for the `next` key asked for instead of stepping along the leaves to
/// it, when it lies beyond [`AscendingBlocks::STEPS`] blocks' span of keys past `block` (whose
/// last key is `last`): blocks hold about the same span of keys, the keys being hashes, so a
/// key that far would cost a page read for every block stepped over.
fn search_if_far(
    blocks: &mut AscendingBlocks<'_, u64>,
    (block, last): (&KeyBlock<'_>, u64),
    next: Option<u64>,
) {
    // A damaged block filed under a key below its first one is no reason to panic.
    let span = last.saturating_sub(block.first());
    let reach = last.saturating_add(span.saturating_mul(AscendingBlocks::<u64>::STEPS));
    if next.is_some_and(|key| key > reach) {
        blocks.search_next();
    }
}
