//! Streaming reads of a run's tables, a block at a time: what merges and `verify` walk.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use redb::{AccessGuard, Key, Range, ReadOnlyTable};

use crate::error::{Error, Result};
use crate::format::block::entries::{self, Payload};
use crate::format::block::keys::KeyBlock;

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
            _payload: PhantomData,
        })
    }

    /// Replaces `out` with the next block's entries in range (some blocks may add none);
    /// false at the end. Every block is checked whole.
    pub fn next_block(&mut self, out: &mut Vec<(u64, String, P)>) -> Result<bool> {
        out.clear();
        let Some((filed_under, block)) = next_block(&mut self.range, &self.path)? else {
            return Ok(false);
        };
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

#[cfg(test)]
mod tests {
    use crate::format::block::docs::id_hash;
    use crate::{Batch, Settings, Store};

    /// Scans cut at any key, even inside a long run of equal keys spanning several blocks,
    /// add up to the whole scan.
    #[test]
    fn entry_scans_split_anywhere_add_up_to_the_whole() {
        // Writes a store: not while a fault test has a plan installed.
        let _serial = crate::sys::file_backend::plan::SERIAL
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create(&dir.path().join("s"), Settings::default()).unwrap();
        let mut batch = Batch::new();
        for i in 0..3000 {
            batch.push(&format!("same-{i}"), 1 << 63).unwrap();
        }
        for i in 0..3000u64 {
            let fp = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            batch.push(&format!("doc-{i}"), fp).unwrap();
        }
        store.insert(&batch, None).unwrap();
        let snapshot = store.snapshot().unwrap();
        let docs = snapshot.runs()[0].docs().unwrap();

        fn all<P: crate::format::block::entries::Payload>(
            mut scan: super::EntryScan<P>,
        ) -> Vec<(u64, String)> {
            let (mut out, mut block) = (Vec::new(), Vec::new());
            while scan.next_block(&mut block).unwrap() {
                out.extend(block.drain(..).map(|(k, id, _)| (k, id)));
            }
            out
        }
        let postings = all(docs.scan_postings().unwrap());
        let documents = all(docs.scan_documents().unwrap());
        assert_eq!(postings.len(), 6000);
        assert_eq!(documents.len(), 6000);
        let middle = id_hash(b"doc-1500");
        for split in [
            0,
            1,
            (1 << 63) - 1,
            1 << 63,
            (1 << 63) + 1,
            middle,
            u64::MAX - 1,
        ] {
            let mut parts = all(docs.scan_postings_in(0, split).unwrap());
            parts.extend(all(docs.scan_postings_in(split + 1, u64::MAX).unwrap()));
            assert_eq!(parts, postings, "postings split after {split:016x}");
            let mut parts = all(docs.scan_documents_in(0, split).unwrap());
            parts.extend(all(docs.scan_documents_in(split + 1, u64::MAX).unwrap()));
            assert_eq!(parts, documents, "documents split after {split:016x}");
        }
        let same = all(docs.scan_postings_in(1 << 63, 1 << 63).unwrap());
        assert_eq!(same.len(), 3000);
    }
}
