//! Streaming reads of a run's tables, a block at a time: what merges and `verify` walk.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use redb::{AccessGuard, Key, Range, ReadOnlyTable};

use crate::error::{Error, Result};
use crate::format::block::entries::{self, Payload, SketchSource};
use crate::format::block::keys::KeyBlock;
use crate::format::block::named_postings::{self, NamedPosting};
use crate::run::read::SketchArea;
use crate::run::POSTINGS_TABLE;
use std::sync::Arc;

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
        let Some((last, block)) = next_block(&mut self.range, &self.path)? else {
            return Ok(false);
        };
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
            .map_err(|e| e.at(&self.path, &self.table, Some(format!("{last:016x}"))))?;
        Ok(true)
    }
}

/// A block and the key it is filed under.
type Filed<K> = (AccessGuard<'static, K>, AccessGuard<'static, &'static [u8]>);

/// The next block of `range`; None at its end, after which `range` is None.
fn next_block<K: Key + 'static>(
    range: &mut Option<Range<'static, K, &'static [u8]>>,
    path: &Path,
) -> Result<Option<Filed<K>>> {
    let Some(blocks) = range else {
        return Ok(None);
    };
    match blocks.next() {
        Some(item) => item.map(Some).map_err(|e| Error::redb(path, e)),
        None => {
            *range = None;
            Ok(None)
        }
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

/// The entries of a docs or postings table whose keys are within `lo..=hi`, in order.
pub struct EntryScan<P> {
    path: PathBuf,
    table: &'static str,
    range: Option<Range<'static, &'static [u8], &'static [u8]>>,
    lo: u64,
    hi: u64,
    /// Bytes of the blocks read so far.
    pub bytes: u64,
    /// Where the docs blocks of a sketch area find their sketches (format 10), read for a
    /// payload that carries them.
    area: Option<Arc<SketchArea>>,
    _payload: PhantomData<P>,
}

impl<P: Payload> EntryScan<P> {
    pub(crate) fn new(
        path: PathBuf,
        table: &'static str,
        source: &ReadOnlyTable<&'static [u8], &'static [u8]>,
        lo: u64,
        hi: u64,
    ) -> Result<Self> {
        // Blocks are filed under their last entry's key: the first one that can hold `lo`
        // is the first filed at or after it.
        let start = lo.to_be_bytes();
        let range = source
            .range::<&[u8]>(&start[..]..)
            .map_err(|e| Error::redb(&path, e))?;
        Ok(EntryScan {
            path,
            table,
            range: Some(range),
            lo,
            hi,
            bytes: 0,
            area: None,
            _payload: PhantomData,
        })
    }

    /// The scan with the sketches of docs blocks that keep them in `area` read from it.
    pub(crate) fn with_sketch_area(mut self, area: Option<Arc<SketchArea>>) -> Self {
        self.area = area.filter(|_| P::READS_SKETCHES);
        self
    }

    /// Replaces `out` with the next block's entries in range (some blocks may add none);
    /// false at the end. Every block is checked whole. The ids are written over the strings
    /// `out` already holds: a merge reads a block after another into the same vector, and
    /// an allocation per entry was a tenth of a compaction's time.
    pub fn next_block(&mut self, out: &mut Vec<(u64, String, P)>) -> Result<bool> {
        let Some((filed_under, block)) = next_block(&mut self.range, &self.path)? else {
            out.clear();
            return Ok(false);
        };
        self.bytes += block.value().len() as u64;
        let mut filled = 0;
        let area = self.area.as_deref().map(|a| a as &dyn SketchSource);
        let decoded = entries::decode_from::<P>(block.value(), area, |key, id, payload| {
            match out.get_mut(filled) {
                Some(entry) => {
                    entry.0 = key;
                    entry.1.clear();
                    entry.1.push_str(id);
                    entry.2 = payload;
                }
                None => out.push((key, id.to_string(), payload)),
            }
            filled += 1;
            true
        });
        out.truncate(filled);
        decoded
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
            .map_err(|e| {
                let filed = filed_under.value();
                let block = filed
                    .get(..8)
                    .map(|b| b.iter().map(|x| format!("{x:02x}")).collect());
                e.at(&self.path, self.table, block)
            })?;
        let (lo, hi) = (self.lo, self.hi);
        if out.last().is_some_and(|(key, _, _)| *key > hi) {
            self.range = None;
        }
        if out.first().is_some_and(|(key, _, _)| *key < lo) || self.range.is_none() {
            out.retain(|(key, _, _)| (lo..=hi).contains(key));
        }
        Ok(true)
    }
}

/// The named postings (format 8) of a postings table whose fingerprints are within `lo..=hi`,
/// in order.
pub struct NamedScan {
    path: PathBuf,
    range: Option<Range<'static, &'static [u8], &'static [u8]>>,
    lo: u64,
    hi: u64,
    /// Bytes of the blocks read so far.
    pub bytes: u64,
}

impl NamedScan {
    pub(crate) fn new(
        path: PathBuf,
        source: &ReadOnlyTable<&'static [u8], &'static [u8]>,
        lo: u64,
        hi: u64,
    ) -> Result<Self> {
        let start = lo.to_be_bytes();
        let range = source
            .range::<&[u8]>(&start[..]..)
            .map_err(|e| Error::redb(&path, e))?;
        Ok(NamedScan {
            path,
            range: Some(range),
            lo,
            hi,
            bytes: 0,
        })
    }

    /// Replaces `out` with the next block's postings in range (some blocks may add none);
    /// false at the end. Every block is checked whole.
    pub fn next_block(&mut self, out: &mut Vec<NamedPosting>) -> Result<bool> {
        out.clear();
        let Some((filed_under, block)) = next_block(&mut self.range, &self.path)? else {
            return Ok(false);
        };
        self.bytes += block.value().len() as u64;
        named_postings::decode(block.value(), |p| {
            out.push(p);
            true
        })
        .and_then(|_| {
            if out.last().copied() != named_postings::split_block_key(filed_under.value()) {
                return Err(Error::corrupt(
                    "block is filed under a key that is not its last posting's",
                ));
            }
            Ok(())
        })
        .map_err(|e| {
            let block = filed_under
                .value()
                .get(..8)
                .map(|b| b.iter().map(|x| format!("{x:02x}")).collect());
            e.at(&self.path, POSTINGS_TABLE, block)
        })?;
        let (lo, hi) = (self.lo, self.hi);
        if out.last().is_some_and(|p| p.fingerprint > hi) {
            self.range = None;
        }
        if out.first().is_some_and(|p| p.fingerprint < lo) || self.range.is_none() {
            out.retain(|p| (lo..=hi).contains(&p.fingerprint));
        }
        Ok(true)
    }
}
