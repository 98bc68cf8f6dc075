//! Where a run keeps its documents' sketches (a sketches table, formats 4 to 6; its
//! postings, formats 7 and 8; its docs entries, format 9; its sketch area, which its docs
//! entries name, format 10) and reading them: for chosen documents, or for every document
//! under chosen fingerprints.

use rayon::prelude::*;

use super::ascending_blocks::{split_block_key, AscendingBlocks};
use super::docs_file::{EntryTable, SketchesAt};
use super::DocsFile;
use crate::error::{Error, Result};
use crate::format::block::docs::{id_hash, DocState};
use crate::format::block::entries::{self, block_key, PayloadReader};
use crate::format::block::postings;
use crate::format::block::sketches::{self, SketchEntry};
use crate::run::{EntryScan, DOCS_TABLE, POSTINGS_TABLE, SKETCHES_TABLE};

impl DocsFile {
    /// The entries of the sketches table within `lo..=hi`, a block at a time; None when the
    /// run has no such table (it holds no sketches, or they are in its postings).
    pub fn scan_sketches_in(&self, lo: u64, hi: u64) -> Result<Option<EntryScan<SketchEntry>>> {
        match &self.sketches {
            SketchesAt::Table(table) => {
                EntryScan::new(self.path.clone(), SKETCHES_TABLE, table, lo, hi).map(Some)
            }
            SketchesAt::Nowhere | SketchesAt::Postings | SketchesAt::Docs => Ok(None),
        }
    }

    /// Whether the run's sketches are in its postings (formats 7 and 8).
    pub fn sketches_in_postings(&self) -> bool {
        matches!(self.sketches, SketchesAt::Postings)
    }

    /// Whether the run's sketches are in its docs entries (format 9), or reached through
    /// them (format 10).
    pub fn sketches_in_docs(&self) -> bool {
        matches!(self.sketches, SketchesAt::Docs)
    }

    /// Whether the run's docs entries keep their sketches in its sketch area (format 10).
    pub fn has_sketch_area(&self) -> bool {
        self.area.is_some()
    }

    /// Calls `f(redb key, block)` on every block of the sketch area (format 10), in order,
    /// unchecked; none where the run has no area.
    pub(crate) fn for_each_sketch_area_block(
        &self,
        f: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        match &self.area {
            Some(area) => area.for_each_block(f),
            None => Ok(()),
        }
    }

    /// Calls `f(id, batch, sketch)` on every document this run lists under `fingerprint`, as
    /// [`DocsFile::ids_of`] does, with the sketch its docs entry holds where the entries hold
    /// them ([`DocsFile::sketches_in_docs`]; else always None), which must have `bytes`
    /// bytes (else an error naming the docs table). The first error `f` returns ends it.
    pub fn sketched_ids_of(
        &self,
        fingerprint: u64,
        bytes: usize,
        mut f: impl FnMut(&str, u64, Option<&[u8]>) -> Result<()>,
    ) -> Result<()> {
        let mut failure = None;
        let mut call = |id: &str, batch: u64, sketch: Option<&[u8]>| {
            if failure.is_none() {
                failure = (sketch.map_or(Ok(()), |s| sketches::check_size(s, bytes)))
                    .map_err(|e| e.at(&self.path, DOCS_TABLE, None))
                    .and_then(|()| f(id, batch, sketch))
                    .err();
            }
        };
        match self.sketches_in_docs() {
            true => self.named_ids_of(fingerprint, true, &mut call)?,
            false => self.ids_of(fingerprint, |id, batch| call(id, batch, None))?,
        }
        failure.map_or(Ok(()), Err)
    }

    /// The table of entries ordered by `(fingerprint, id)` that holds the run's sketches and
    /// its name, if any (none where the docs entries hold them).
    fn sketch_table(&self) -> Option<(&EntryTable, &'static str)> {
        match &self.sketches {
            SketchesAt::Nowhere | SketchesAt::Docs => None,
            SketchesAt::Table(table) => Some((table, SKETCHES_TABLE)),
            SketchesAt::Postings => Some((&self.postings, POSTINGS_TABLE)),
        }
    }

    /// For documents `(fingerprint, id, batch)` ordered by `(fingerprint, id)`, copies
    /// document i's sketch from this run (the entry of its fingerprint and id with its batch),
    /// which must have `bytes` bytes, to the start of row i of `rows` (rows of `stride`
    /// bytes) and sets `found[i]`, where it is not set yet. Each block is read once for the
    /// documents it covers; chunks of the documents are looked up in parallel.
    pub fn sketches_sorted(
        &self,
        documents: &[(u64, &str, u64)],
        rows: &mut [u8],
        (stride, bytes): (usize, usize),
        found: &mut [bool],
    ) -> Result<()> {
        /// Documents per parallel lookup task.
        const CHUNK: usize = 1 << 12;
        if self.sketches_in_docs() {
            return self.sketches_in_docs_of(documents, rows, (stride, bytes), found);
        }
        let Some((table, name)) = self.sketch_table() else {
            return Ok(());
        };
        let in_postings = self.sketches_in_postings();
        documents
            .par_chunks(CHUNK)
            .zip(rows.par_chunks_mut(CHUNK * stride))
            .zip(found.par_chunks_mut(CHUNK))
            .try_for_each(|((documents, rows), found)| {
                let mut blocks = AscendingBlocks::new(table);
                let mut i = 0;
                while i < documents.len() {
                    let (fp, id, _) = documents[i];
                    let key = block_key(fp, id.as_bytes());
                    let item = blocks
                        .at_least(&key[..], |last| last.value() >= &key[..])
                        .map_err(|e| Error::redb(&self.path, e))?;
                    let Some((last, block)) = item else { break };
                    let last = split_block_key(last.value()).ok_or_else(|| {
                        Error::corrupt("block key is shorter than 8 bytes")
                            .at(&self.path, name, None)
                    })?;
                    // The documents this block covers: i..end.
                    let end = i + documents[i..]
                        .partition_point(|&(fp, id, _)| (fp, id.as_bytes()) <= (last.0, last.1));
                    let mut j = i;
                    // Entries are read in place; only the wanted sketches are copied.
                    entries::decode_each(block.value(), |fp, id, reader| {
                        let (batch, sketch) = read_sketch(reader, in_postings)?;
                        while j < end && (documents[j].0, documents[j].1) < (fp, id) {
                            j += 1;
                        }
                        while j < end && (documents[j].0, documents[j].1) == (fp, id) {
                            let Some(sketch) = sketch else {
                                j += 1;
                                continue;
                            };
                            if documents[j].2 == batch && !found[j] {
                                sketches::check_size(sketch, bytes)?;
                                rows[j * stride..][..bytes].copy_from_slice(sketch);
                                found[j] = true;
                            }
                            j += 1;
                        }
                        Ok(j < end)
                    })
                    .map_err(|e| e.at(&self.path, name, None))?;
                    i = end.max(i + 1);
                }
                Ok(())
            })
    }

    /// Calls `f(fingerprint, id, batch, sketch)` on every sketch of this run under one of the
    /// fingerprints `wanted` (ascending, distinct), in `(fingerprint, id)` order, where the
    /// run keeps its sketches in a table ordered by `(fingerprint, id)` (a sketches table or
    /// its postings, formats 4 to 8; format 9's and 10's docs entries are read with the documents
    /// their postings name, [`DocsFile::sketched_documents_named_by`]). Each block is read
    /// once; a run whose catalog entry counts sketches must have them (else an error). Where
    /// the run keeps a sketch for each of its postings (its `sketches` equal its
    /// `documents`), these are its postings under `wanted`, with their sketches: one pass
    /// instead of two.
    pub fn sketched_documents_of(
        &self,
        wanted: &[u64],
        mut f: impl FnMut(u64, &str, u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let Some((table, name)) = self.sketch_table() else {
            return Err(Error::corrupt(
                "the catalog counts sketches in this run, but its docs file keeps none in a \
                 sketches table or its postings",
            )
            .in_file(&self.path));
        };
        let in_postings = self.sketches_in_postings();
        let mut blocks = AscendingBlocks::new(table);
        let mut next = 0; // wanted[next] is the least fingerprint not yet passed
        let mut after: Vec<u8> = Vec::new(); // just above the last block read
        while next < wanted.len() {
            let key = block_key(wanted[next], b"").max(std::mem::take(&mut after));
            let item = blocks
                .at_least(&key[..], |last| last.value() >= &key[..])
                .map_err(|e| Error::redb(&self.path, e))?;
            let Some((last, block)) = item else { break };
            entries::decode_each(block.value(), |fp, id, reader| {
                let (batch, sketch) = read_sketch(reader, in_postings)?;
                while next < wanted.len() && wanted[next] < fp {
                    next += 1;
                }
                if let Some(sketch) = sketch.filter(|_| wanted.get(next) == Some(&fp)) {
                    f(fp, id, batch, sketch)?;
                }
                Ok(next < wanted.len())
            })
            .map_err(|e| e.at(&self.path, name, None))?;
            // The block's last fingerprint may go on in the next block: look from just above
            // its last key (a key followed by a zero byte is the least key above it).
            after = last.value().to_vec();
            after.push(0);
        }
        Ok(())
    }

    /// [`DocsFile::sketches_sorted`] where the docs entries hold the sketches (format 9): the
    /// documents not found yet, sorted by id hash as the docs are, looked up in chunks in
    /// parallel (each block read once per chunk that needs it, which a sort by id hash makes
    /// once in all), each chunk's sketches then copied to their rows. Memory: the documents
    /// sorted (32 bytes each) and the sketches found.
    fn sketches_in_docs_of(
        &self,
        documents: &[(u64, &str, u64)],
        rows: &mut [u8],
        (stride, bytes): (usize, usize),
        found: &mut [bool],
    ) -> Result<()> {
        /// Documents per parallel lookup task.
        const CHUNK: usize = 1 << 12;
        let mut by_hash: Vec<(u64, &str, usize)> = (documents.iter().enumerate())
            .filter(|&(i, _)| !found[i])
            .map(|(i, &(_, id, _))| (id_hash(id.as_bytes()), id, i))
            .collect();
        by_hash.par_sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        // Each chunk's (document, where its sketch is in the chunk's bytes).
        let parts: Vec<(Vec<usize>, Vec<u8>)> = by_hash
            .par_chunks(CHUNK)
            .map(|chunk| self.sketches_by_hash(chunk, documents, bytes))
            .collect::<Result<_>>()?;
        for (indices, sketches) in parts {
            for (i, sketch) in indices.into_iter().zip(sketches.chunks_exact(bytes)) {
                rows[i * stride..][..bytes].copy_from_slice(sketch);
                found[i] = true;
            }
        }
        Ok(())
    }

    /// The sketches of `by_hash`'s documents (`(id hash, id, index in documents)`, sorted)
    /// that this run's docs entries hold with the documents' fingerprints and batches: their
    /// indices, and their sketches of `bytes` bytes one after another.
    fn sketches_by_hash(
        &self,
        by_hash: &[(u64, &str, usize)],
        documents: &[(u64, &str, u64)],
        bytes: usize,
    ) -> Result<(Vec<usize>, Vec<u8>)> {
        // Each id once; `starts[k]..starts[k + 1]` are id k's documents in `by_hash`.
        let (mut keys, mut starts) = (Vec::new(), Vec::new());
        for (at, &(hash, id, _)) in by_hash.iter().enumerate() {
            if keys.last() != Some(&(hash, id)) {
                keys.push((hash, id));
                starts.push(at);
            }
        }
        starts.push(by_hash.len());
        let candidates = match self.mentioned(&keys, |_| true)? {
            Some(candidates) => candidates,
            None => (0..keys.len()).collect(),
        };
        let wanted: Vec<(u64, &str)> = candidates.iter().map(|&k| keys[k]).collect();
        let (mut indices, mut sketches) = (Vec::new(), Vec::new());
        self.entries_sorted(&wanted, true, |c, state, sketch| {
            let (DocState::Live { fingerprint, batch }, Some(sketch)) = (state, sketch) else {
                return Ok(());
            };
            let k = candidates[c];
            for &(_, _, i) in &by_hash[starts[k]..starts[k + 1]] {
                if (documents[i].0, documents[i].2) == (fingerprint, batch) {
                    sketches::check_size(sketch, bytes)?;
                    indices.push(i);
                    sketches.extend_from_slice(sketch);
                }
            }
            Ok(())
        })?;
        Ok((indices, sketches))
    }
}

/// The batch and sketch of an entry of a sketches table, or (`in_postings`, format 7) of a
/// posting, which may have no sketch.
fn read_sketch<'a>(
    reader: &mut PayloadReader<'_, 'a>,
    in_postings: bool,
) -> Result<(u64, Option<&'a [u8]>)> {
    if in_postings {
        postings::read_borrowed(reader)
    } else {
        sketches::read_borrowed(reader).map(|(batch, sketch)| (batch, Some(sketch)))
    }
}
