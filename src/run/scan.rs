//! Streaming reads of a run's tables, a block at a time: what merges and `verify` walk.

use std::marker::PhantomData;
use std::path::PathBuf;

use redb::{Range, ReadOnlyTable};

use crate::block::entries::{self, Payload};
use crate::block::keys::KeyBlock;
use crate::error::{Error, Result};

/// The keys of one permuted table of one shard file within `lo..=hi`, in order.
pub struct KeyScan {
    path: PathBuf,
    table: String,
    range: Option<Range<'static, u64, &'static [u8]>>,
    lo: u64,
    hi: u64,
    /// Bytes of the blocks read so far.
    pub bytes: u64,
}

impl KeyScan {
    pub(crate) fn new(
        path: PathBuf,
        table: String,
        source: Option<&ReadOnlyTable<u64, &'static [u8]>>,
        lo: u64,
        hi: u64,
    ) -> Result<Self> {
        let range = match source {
            Some(t) => Some(t.range(lo..).map_err(|e| Error::redb(&path, e))?),
            None => None,
        };
        Ok(KeyScan {
            path,
            table,
            range,
            lo,
            hi,
            bytes: 0,
        })
    }

    /// Replaces `out` with the next block's keys in range (some blocks may add none); false at
    /// the end. Every block is checked whole. After an error the scan goes on with the next
    /// block.
    pub fn next_block(&mut self, out: &mut Vec<u64>) -> Result<bool> {
        out.clear();
        let Some(range) = &mut self.range else {
            return Ok(false);
        };
        let Some(item) = range.next() else {
            self.range = None;
            return Ok(false);
        };
        let (last, block) = item.map_err(|e| Error::redb(&self.path, e))?;
        let last = last.value();
        let (lo, hi) = (self.lo, self.hi);
        self.bytes += block.value().len() as u64;
        if last >= hi {
            self.range = None;
        }
        KeyBlock::parse(block.value())
            .and_then(|b| {
                b.for_each(|k| {
                    if (lo..=hi).contains(&k) {
                        out.push(k)
                    }
                })
            })
            .and_then(|block_last| check_last(block_last, last))
            .map_err(|e| {
                e.at(format!(
                    "{} table {} block {last:016x}",
                    self.path.display(),
                    self.table
                ))
            })?;
        Ok(true)
    }
}

/// A block's redb key must be its last key.
fn check_last(block_last: u64, filed_under: u64) -> Result<()> {
    if block_last != filed_under {
        return Err(Error::corrupt(format!(
            "block is filed under key {filed_under:016x} but its last key is {block_last:016x}"
        )));
    }
    Ok(())
}

/// Every entry of a docs or postings table, in order.
pub struct EntryScan<P> {
    path: PathBuf,
    table: &'static str,
    range: Option<Range<'static, &'static [u8], &'static [u8]>>,
    /// Bytes of the blocks read so far.
    pub bytes: u64,
    _payload: PhantomData<P>,
}

impl<P: Payload> EntryScan<P> {
    pub(crate) fn new(
        path: PathBuf,
        table: &'static str,
        source: &ReadOnlyTable<&'static [u8], &'static [u8]>,
    ) -> Result<Self> {
        let range = source
            .range::<&[u8]>(..)
            .map_err(|e| Error::redb(&path, e))?;
        Ok(EntryScan {
            path,
            table,
            range: Some(range),
            bytes: 0,
            _payload: PhantomData,
        })
    }

    /// Replaces `out` with the next block's entries; false at the end.
    pub fn next_block(&mut self, out: &mut Vec<(u64, String, P)>) -> Result<bool> {
        out.clear();
        let Some(range) = &mut self.range else {
            return Ok(false);
        };
        let Some(item) = range.next() else {
            self.range = None;
            return Ok(false);
        };
        let (filed_under, block) = item.map_err(|e| Error::redb(&self.path, e))?;
        self.bytes += block.value().len() as u64;
        entries::decode::<P>(block.value(), |key, id, payload| {
            out.push((key, id.to_string(), payload));
            true
        })
        .and_then(|_| match out.last() {
            Some((key, id, _))
                if entries::block_key(*key, id.as_bytes()) != filed_under.value() =>
            {
                Err(Error::corrupt(
                    "block is filed under a key that is not its last entry's",
                ))
            }
            _ => Ok(()),
        })
        .map_err(|e| e.at(format!("{} table {}", self.path.display(), self.table)))?;
        Ok(true)
    }
}
