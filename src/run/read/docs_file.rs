//! One open docs file of a run: its documents and postings, scanned, walked or looked up
//! (one at a time, or many in order a block at a time); its sketches are sketches.rs'.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use redb::{ReadOnlyDatabase, ReadOnlyTable, ReadableDatabase, TableDefinition, TableError};

use super::ascending_blocks::{for_each_block, split_block_key, AscendingBlocks};
use super::decoded_blocks::DecodedBlocks;
use super::sketch_area::SketchArea;
use super::FileCaches;
use crate::error::{Error, Result};
use crate::format::block::docs::{self, id_hash, DocState};
use crate::format::block::entries::Expanded;
use crate::format::block::entries::SketchSource;
use crate::format::block::entries::{self, block_key};
use crate::format::block::id_filter;
use crate::format::block::keys::KeyBlock;
use crate::format::block::named_postings;
use crate::format::block::postings::Posting;
use crate::format::catalog::RunFormat;
use crate::run::{
    EntryScan, DOCS, DOCS_TABLE, IDS, POSTINGS, POSTINGS_TABLE, SKETCHES, SKETCH_AREA,
};
use std::sync::Arc;

/// One open docs file of a run.
pub struct DocsFile {
    pub(super) path: PathBuf,
    pub(super) docs: ReadOnlyTable<&'static [u8], &'static [u8]>,
    pub(super) postings: EntryTable,
    /// Whether the postings name their documents (format 8 without sketches, format 9 on)
    /// instead of holding their ids.
    named: bool,
    pub(super) sketches: SketchesAt,
    /// The sketch area (format 10, a run with sketches), which its docs entries name.
    pub(super) area: Option<Arc<SketchArea>>,
    /// The id filter and its prefix bits (format 6); None in a run of an earlier format.
    ids: Option<(ReadOnlyTable<u64, &'static [u8]>, u8)>,
    /// Docs blocks kept decoded, for a long-lived reader's lookups.
    pub(super) decoded_docs: Option<DecodedBlocks<Expanded>>,
    /// Named postings blocks kept checked, likewise.
    pub(super) decoded_postings: Option<DecodedBlocks<named_postings::Checked>>,
    _db: ReadOnlyDatabase,
}

/// A table of entry blocks.
pub(crate) type EntryTable = ReadOnlyTable<&'static [u8], &'static [u8]>;

/// Where a run's sketches are.
pub(super) enum SketchesAt {
    /// Nowhere: the run holds none.
    Nowhere,
    /// In its sketches table (formats 4 to 6).
    Table(EntryTable),
    /// In its postings (formats 7 and 8).
    Postings,
    /// In its docs entries (format 9), or reached through them, in its sketch area (format
    /// 10).
    Docs,
}

impl DocsFile {
    /// The docs file at `path`, open in `db`: its docs and postings tables (laid out as
    /// `format` says), its sketches table where it has one (in formats 7 and 8 the postings
    /// hold them, in format 9 the docs entries, in format 10 the sketch area they name), and
    /// its id filter of `id_bits` bits where the run has one (`id_bits` > 0); lookups keep as
    /// many blocks decoded as `caches` says.
    pub(super) fn open(
        path: &Path,
        db: ReadOnlyDatabase,
        id_bits: u8,
        format: RunFormat,
        caches: FileCaches,
    ) -> Result<DocsFile> {
        let txn = db.begin_read().map_err(|e| Error::redb(path, e))?;
        let open = |def| txn.open_table(def).map_err(|e| Error::redb(path, e));
        let sketches = match txn.open_table(SKETCHES) {
            _ if format.sketches_in_postings => SketchesAt::Postings,
            _ if format.sketches_in_docs => SketchesAt::Docs,
            Ok(table) => SketchesAt::Table(table),
            Err(TableError::TableDoesNotExist(_)) => SketchesAt::Nowhere,
            Err(e) => return Err(Error::redb(path, e)),
        };
        let area = format.sketch_area.then(|| {
            let table = match txn.open_table(SKETCH_AREA) {
                Ok(table) => Some(table),
                // Tolerated: a run whose documents have no sketch needs no area (the writer
                // leaves an empty one).
                Err(TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(Error::redb(path, e)),
            };
            let bytes = usize::from(format.sketch_bytes);
            Ok(Arc::new(SketchArea::new(path, table, bytes)))
        });
        let area = area.transpose()?;
        let ids = match id_bits {
            0 => None,
            bits => match txn.open_table(TableDefinition::<u64, &[u8]>::new(IDS)) {
                Ok(table) => Some((table, bits)),
                Err(TableError::TableDoesNotExist(_) | TableError::TableTypeMismatch { .. }) => {
                    return Err(Error::corrupt(
                        "the catalog gives this run an id filter, and its docs file has no \
                         ids table of keys",
                    )
                    .at(path, IDS, None))
                }
                Err(e) => return Err(Error::redb(path, e)),
            },
        };
        Ok(DocsFile {
            docs: open(DOCS)?,
            postings: open(POSTINGS)?,
            named: format.named_postings,
            sketches,
            area,
            ids,
            decoded_docs: DecodedBlocks::new(caches.decoded_docs),
            decoded_postings: DecodedBlocks::new(caches.decoded_postings),
            path: path.to_path_buf(),
            _db: db,
        })
    }

    /// Every document entry, a block at a time, ordered by `(id_hash, id)`.
    pub fn scan_documents(&self) -> Result<EntryScan<DocState>> {
        self.scan_documents_in(0, u64::MAX)
    }

    /// The documents whose id hashes are within `lo..=hi`, a block at a time.
    pub fn scan_documents_in(&self, lo: u64, hi: u64) -> Result<EntryScan<DocState>> {
        self.scan_documents_as(lo, hi)
    }

    /// The documents within `lo..=hi` as payload `P`: with their sketches, for a merge or a
    /// migration.
    pub(crate) fn scan_documents_as<P: entries::Payload>(
        &self,
        lo: u64,
        hi: u64,
    ) -> Result<EntryScan<P>> {
        let scan = EntryScan::new(self.path.clone(), DOCS_TABLE, &self.docs, lo, hi)?;
        Ok(scan.with_sketch_area(self.area.clone()))
    }

    /// Where a decode of docs blocks finds the sketches of their entries in the sketch area
    /// (format 10), when it `wants` them.
    pub(super) fn area_source(&self, wants: bool) -> Option<&dyn SketchSource> {
        match &self.area {
            Some(area) if wants => Some(area.as_ref()),
            _ => None,
        }
    }

    /// Whether the postings name their documents by id-hash prefix (format 8; see
    /// [`crate::format::block::named_postings`]) instead of holding their ids: then they are
    /// read with [`DocsFile::scan_named_postings_in`], not as entries.
    pub fn names_documents(&self) -> bool {
        self.named
    }

    /// Every posting, a block at a time, ordered by `(fingerprint, id)`.
    pub fn scan_postings(&self) -> Result<EntryScan<Posting>> {
        self.scan_postings_in(0, u64::MAX)
    }

    /// The postings of fingerprints within `lo..=hi`, a block at a time.
    pub fn scan_postings_in(&self, lo: u64, hi: u64) -> Result<EntryScan<Posting>> {
        self.scan_postings_as(lo, hi)
    }

    /// The postings as payload `P`: an older format's, for a migration.
    pub(crate) fn scan_postings_as<P: entries::Payload>(
        &self,
        lo: u64,
        hi: u64,
    ) -> Result<EntryScan<P>> {
        EntryScan::new(self.path.clone(), POSTINGS_TABLE, &self.postings, lo, hi)
    }

    /// Calls `f(redb_key, block)` on every block of the docs table, in order, as stored.
    pub(crate) fn for_each_docs_block(
        &self,
        f: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        for_each_block(&self.path, &self.docs, f)
    }

    /// Calls `f(redb key, block)` on every postings block, in order, unchecked: for a
    /// migration that copies them.
    pub(crate) fn for_each_postings_block(
        &self,
        f: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        for_each_block(&self.path, &self.postings, f)
    }

    /// Calls `f(id, batch)` on every document this run lists under `fingerprint`.
    pub fn ids_of(&self, fingerprint: u64, mut f: impl FnMut(&str, u64)) -> Result<()> {
        if self.named {
            return self.named_ids_of(fingerprint, false, |id, batch, _| f(id, batch));
        }
        let from = fingerprint.to_be_bytes();
        self.walk_from(&self.postings, POSTINGS_TABLE, fingerprint, |key, block| {
            let mut past = false;
            entries::decode::<Posting>(block, |fp, id, posting| {
                if fp == fingerprint {
                    f(id, posting.batch);
                }
                past = fp > fingerprint;
                !past
            })?;
            Ok(past || key[..8] != from[..])
        })
    }

    /// Calls `f` on every document entry of this run, ordered by `(id_hash, id)`.
    pub fn for_each_document(&self, mut f: impl FnMut(u64, &str, DocState)) -> Result<()> {
        self.for_each_entry(&self.docs, DOCS_TABLE, |hash, id, state| f(hash, id, state))
    }

    /// Calls `f` on the fingerprint of every posting of this run, in order: once per document,
    /// but (format 8) at most twice for documents that share a named posting.
    pub fn for_each_posting(&self, mut f: impl FnMut(u64)) -> Result<()> {
        if self.named {
            return self.for_each_named_posting(|p| {
                f(p.fingerprint);
                if p.shared {
                    f(p.fingerprint);
                }
            });
        }
        self.for_each_entry::<Posting>(&self.postings, POSTINGS_TABLE, |fp, _, _| f(fp))
    }

    /// Decodes every block of `table` (named `name` in errors), calling `f` on each entry.
    fn for_each_entry<P: entries::Payload>(
        &self,
        table: &ReadOnlyTable<&'static [u8], &'static [u8]>,
        name: &str,
        mut f: impl FnMut(u64, &str, P),
    ) -> Result<()> {
        let range = table
            .range::<&[u8]>(..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (_, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            entries::decode::<P>(block.value(), |key, id, payload| {
                f(key, id, payload);
                true
            })
            .map_err(|e| e.at(&self.path, name, None))?;
        }
        Ok(())
    }

    /// Whether the run's id filter lets an id of hash `id_hash` be in the run (always, in a run
    /// without a filter).
    pub fn may_mention(&self, id_hash: u64) -> Result<bool> {
        let Some((table, bits)) = &self.ids else {
            return Ok(true);
        };
        let prefix = id_filter::prefix(id_hash, *bits);
        let mut range = table
            .range(prefix..)
            .map_err(|e| Error::redb(&self.path, e))?;
        let Some(item) = range.next() else {
            return Ok(false);
        };
        let (_, block) = item.map_err(|e| Error::redb(&self.path, e))?;
        let mut found = false;
        match KeyBlock::parse(block.value())
            .and_then(|b| b.for_each_in(prefix, prefix, |_| found = true))
        {
            Ok(()) => Ok(found),
            // The filter only saves reads: a damaged block lets every id through (verify
            // reports it, repair rebuilds it).
            Err(Error::Corruption { .. }) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// Calls `f(last_key, block)` on every block of the id filter, in order, unchecked;
    /// returns the filter's prefix bits, or None (and calls nothing) in a run without one.
    pub fn for_each_id_filter_block(
        &self,
        mut f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<Option<u8>> {
        let Some((table, bits)) = &self.ids else {
            return Ok(None);
        };
        let range = table
            .range::<u64>(..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (last, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            f(last.value(), block.value())?;
        }
        Ok(Some(*bits))
    }

    /// What this run says of `id`, if anything.
    pub fn state_of(&self, id: &str) -> Result<Option<DocState>> {
        let hash = id_hash(id.as_bytes());
        if !self.may_mention(hash)? {
            return Ok(None);
        }
        let mut found = None;
        self.entries_in(hash, hash, |_, other, state| {
            if other == id {
                found = Some(state);
            }
        })?;
        Ok(found)
    }

    /// For documents ordered by `(id_hash, id)`, fills `states[i]` with what this run says of
    /// document i, where `states[i]` is still None. Chunks of the documents are looked up in
    /// parallel; within a chunk each block is read once and merged with the documents it
    /// covers, with no copy of its entries. Where the run has an id filter, only the
    /// documents still None that it may mention are looked up.
    pub fn states_sorted(
        &self,
        documents: &[(u64, &str)],
        states: &mut [Option<DocState>],
    ) -> Result<()> {
        /// Documents per parallel lookup task: enough to amortise a task, few enough to share.
        const CHUNK: usize = 1 << 14;
        documents
            .par_chunks(CHUNK)
            .zip(states.par_chunks_mut(CHUNK))
            .try_for_each(|(documents, states)| {
                match self.mentioned(documents, |i| states[i].is_none())? {
                    None => self.states_sorted_chunk(documents, states),
                    Some(candidates) => {
                        let wanted: Vec<(u64, &str)> =
                            candidates.iter().map(|&i| documents[i]).collect();
                        let mut found = vec![None; wanted.len()];
                        self.states_sorted_chunk(&wanted, &mut found)?;
                        for (&i, state) in candidates.iter().zip(found) {
                            if state.is_some() {
                                states[i] = state;
                            }
                        }
                        Ok(())
                    }
                }
            })
    }

    /// The documents (ordered by `(id_hash, id)`) still `pending` that the id filter may
    /// mention, by index; None in a run without a filter. Each filter block that
    /// covers a document is read once and walked beside the documents it covers.
    pub(super) fn mentioned(
        &self,
        documents: &[(u64, &str)],
        pending: impl Fn(usize) -> bool,
    ) -> Result<Option<Vec<usize>>> {
        let Some((table, bits)) = &self.ids else {
            return Ok(None);
        };
        let prefix = |i: usize| id_filter::prefix(documents[i].0, *bits);
        let mut blocks = AscendingBlocks::new(table);
        let mut out = Vec::new();
        let mut i = 0;
        while i < documents.len() {
            if !pending(i) {
                i += 1;
                continue;
            }
            let wanted = prefix(i);
            let item = blocks
                .at_least(wanted, |last| last.value() >= wanted)
                .map_err(|e| Error::redb(&self.path, e))?;
            let Some((last, block)) = item else { break };
            let last = last.value();
            // The documents this block covers, i..end, merged with its keys as they decode.
            let end =
                i + documents[i..].partition_point(|&(h, _)| id_filter::prefix(h, *bits) <= last);
            // Only the keys from the first document's prefix to the last one's are decoded.
            let span = (wanted, prefix(end - 1));
            let (first, start) = (i, out.len());
            let walked = KeyBlock::parse(block.value()).and_then(|b| {
                b.for_each_in(span.0, span.1, |key| {
                    while i < end && prefix(i) < key {
                        i += 1;
                    }
                    while i < end && prefix(i) == key {
                        if pending(i) {
                            out.push(i);
                        }
                        i += 1;
                    }
                })
            });
            match walked {
                Ok(()) => {}
                // A damaged block lets every document it covers through, as `may_mention`.
                Err(Error::Corruption { .. }) => {
                    out.truncate(start);
                    out.extend((first..end).filter(|&j| pending(j)));
                }
                Err(e) => return Err(e),
            }
            i = end;
        }
        Ok(Some(out))
    }

    fn states_sorted_chunk(
        &self,
        documents: &[(u64, &str)],
        states: &mut [Option<DocState>],
    ) -> Result<()> {
        self.entries_sorted(documents, false, |j, state, _| {
            states[j].get_or_insert(state);
            Ok(())
        })
    }

    /// For documents ordered by `(id_hash, id)`, calls `f(i, state, sketch)` with document
    /// i's docs entry in this run, if it has one: each block is read once and merged with
    /// the documents it covers, with no copy of its entries. The sketch is read where the
    /// entries hold one and, from the sketch area (format 10), where `sketches` asks for it.
    pub(super) fn entries_sorted(
        &self,
        documents: &[(u64, &str)],
        sketches: bool,
        mut f: impl FnMut(usize, DocState, Option<&[u8]>) -> Result<()>,
    ) -> Result<()> {
        let mut blocks = AscendingBlocks::new(&self.docs);
        let mut i = 0;
        while i < documents.len() {
            let (hash, id) = documents[i];
            let key = block_key(hash, id.as_bytes());
            let item = blocks
                .at_least(&key[..], |last| last.value() >= &key[..])
                .map_err(|e| Error::redb(&self.path, e))?;
            let Some((last, block)) = item else { break };
            let last = split_block_key(last.value()).ok_or_else(|| {
                Error::corrupt("docs block key is shorter than 8 bytes")
                    .at(&self.path, DOCS_TABLE, None)
            })?;
            // The documents this block covers: i..end (at least i, since its last key >= key).
            let end = i + documents[i..]
                .partition_point(|&(h, id)| (h, id.as_bytes()) <= (last.0, last.1));
            let mut j = i;
            entries::decode_each_from(
                block.value(),
                self.area_source(sketches),
                |h, other, reader| {
                    let (state, sketch) = docs::read_entry(reader, sketches)?;
                    while j < end && (documents[j].0, documents[j].1) < (h, other) {
                        j += 1;
                    }
                    if j < end && (documents[j].0, documents[j].1) == (h, other) {
                        f(j, state, sketch)?;
                        j += 1;
                    }
                    Ok(j < end)
                },
            )
            .map_err(|e| e.at(&self.path, DOCS_TABLE, None))?;
            i = end.max(i + 1);
        }
        Ok(())
    }
}
