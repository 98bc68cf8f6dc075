//! Named postings (format 8) read back to their documents: a posting names its documents by
//! their id-hash prefix, which the docs table, ordered by id hash, finds.

use std::sync::Arc;

use rayon::prelude::*;
use redb::AccessGuard;

use super::ascending_blocks::{split_block_key, AscendingBlocks};
use super::decoded_blocks::{Decoded, DecodedBlocks, Kept};
use super::DocsFile;
use crate::error::{Error, Result};
use crate::format::block::docs::{self, DocState};
use crate::format::block::entries::{self, PayloadReader};
use crate::format::block::named_postings::{self, Checked, NamedPosting};
use crate::run::{NamedScan, DOCS_TABLE, POSTINGS_TABLE};

impl DocsFile {
    /// The named postings of fingerprints within `lo..=hi`, a block at a time.
    pub fn scan_named_postings_in(&self, lo: u64, hi: u64) -> Result<NamedScan> {
        NamedScan::new(self.path.clone(), &self.postings, lo, hi)
    }

    /// Calls `f` on every named posting, in order.
    pub(super) fn for_each_named_posting(&self, mut f: impl FnMut(NamedPosting)) -> Result<()> {
        let range = self
            .postings
            .range::<&[u8]>(..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (_, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            named_postings::decode(block.value(), |p| {
                f(p);
                true
            })
            .map_err(|e| e.at(&self.path, POSTINGS_TABLE, None))?;
        }
        Ok(())
    }

    /// Calls `f(id, batch, sketch)` on every live document of `fingerprint`: the docs entries
    /// its postings name, with the sketch each has (format 9 on, a store with sketches; else
    /// None), read from the sketch area (format 10) where `sketches` asks for it.
    pub(super) fn named_ids_of(
        &self,
        fingerprint: u64,
        sketches: bool,
        mut f: impl FnMut(&str, u64, Option<&[u8]>),
    ) -> Result<()> {
        let mut prefixes = Vec::new();
        if let Some(decoded) = &self.decoded_postings {
            let (table, fp) = (&self.postings, fingerprint);
            self.decoded_in(table, POSTINGS_TABLE, decoded, fp, fp, |b: &Checked| {
                b.decode(|p| {
                    if p.fingerprint == fp {
                        prefixes.push(p.prefix);
                    }
                    p.fingerprint <= fp
                })
            })?;
        } else {
            self.walk_from(&self.postings, POSTINGS_TABLE, fingerprint, |_, block| {
                let mut past = false;
                named_postings::decode(block, |p| {
                    if p.fingerprint == fingerprint {
                        prefixes.push(p.prefix);
                    }
                    past = p.fingerprint > fingerprint;
                    !past
                })?;
                Ok(past)
            })?;
        }
        for prefix in prefixes {
            self.documents_named(fingerprint, prefix, sketches, &mut f)?;
        }
        Ok(())
    }

    /// Calls `f(id, batch, sketch)` on every live docs entry whose id hash starts with
    /// `prefix` and whose fingerprint is `fingerprint`. A posting without one is damage: the
    /// run's postings and docs disagree.
    fn documents_named(
        &self,
        fingerprint: u64,
        prefix: u32,
        sketches: bool,
        f: &mut impl FnMut(&str, u64, Option<&[u8]>),
    ) -> Result<()> {
        let (lo, hi) = named_postings::hash_range(prefix);
        let mut found = false;
        self.sketched_entries_in(lo, hi, sketches, |_, id, state, sketch| {
            if let DocState::Live {
                fingerprint: fp,
                batch,
            } = state
            {
                if fp == fingerprint {
                    found = true;
                    f(id, batch, sketch);
                }
            }
        })?;
        if !found {
            return Err(Error::corrupt(format!(
                "the posting ({fingerprint:016x}, prefix {prefix:08x}) names no live document \
                 of the run; verify the store"
            ))
            .at(&self.path, POSTINGS_TABLE, None));
        }
        Ok(())
    }

    /// The names `(prefix, fingerprint)` of the postings of the fingerprints `wanted`
    /// (ascending, distinct), in fingerprint order: the postings walked once, each block
    /// read once.
    pub fn names_of(&self, wanted: &[u64]) -> Result<Vec<(u32, u64)>> {
        let mut names = Vec::new();
        let mut blocks = AscendingBlocks::new(&self.postings);
        let mut next = 0; // wanted[next] is the least fingerprint not yet passed
        let mut after: Vec<u8> = Vec::new(); // just above the last block read
        while next < wanted.len() {
            let key = wanted[next]
                .to_be_bytes()
                .to_vec()
                .max(std::mem::take(&mut after));
            let decoded = self.decoded_postings.as_ref();
            let Some((last, block)) = self.next_block(decoded, &mut blocks, &key)? else {
                break;
            };
            // The block's last fingerprint: past it, no posting of the block is wanted.
            let last_fingerprint = split_block_key(&last).map_or(u64::MAX, |k| k.0);
            let mut walk = |p: NamedPosting| {
                while next < wanted.len() && wanted[next] < p.fingerprint {
                    next += 1;
                }
                if wanted.get(next) == Some(&p.fingerprint) {
                    names.push((p.prefix, p.fingerprint));
                }
                wanted.get(next).is_some_and(|&w| w <= last_fingerprint)
            };
            match block {
                Block::Kept(kept) => kept.decode(&mut walk),
                Block::Stored(block) => named_postings::decode(block.value(), &mut walk),
            }
            .map_err(|e| e.at(&self.path, POSTINGS_TABLE, None))?;
            after = last;
            after.push(0);
        }
        Ok(names)
    }

    /// [`DocsFile::names_of`] read a chunk of `wanted` at a time in parallel, all the names
    /// then sorted (as the docs table is, by hash), so that a walk of the docs for a chunk of
    /// them reads each block once in all. Memory: 16 bytes a name, twice while they are
    /// gathered.
    pub fn names_sorted(&self, wanted: &[u64]) -> Result<Vec<(u32, u64)>> {
        /// Fingerprints per parallel task.
        const CHUNK: usize = 1 << 12;
        let names: Vec<Vec<(u32, u64)>> = wanted
            .par_chunks(CHUNK)
            .map(|chunk| self.names_of(chunk))
            .collect::<Result<_>>()?;
        let mut names: Vec<(u32, u64)> = names.into_iter().flatten().collect();
        names.par_sort_unstable();
        Ok(names)
    }

    /// Calls `f(fingerprint, id, batch)` on every live document that one of the postings
    /// `names` (ascending) names, in hash order: the docs table walked once, each block read
    /// once for all the names it holds. A name that finds no document is damage.
    pub fn documents_named_by(
        &self,
        names: &[(u32, u64)],
        mut f: impl FnMut(u64, &str, u64),
    ) -> Result<()> {
        self.walk_named(names, false, |fp, id, batch, _| {
            f(fp, id, batch);
            Ok(())
        })
    }

    /// [`DocsFile::documents_named_by`] with each document's sketch, where its docs entry
    /// has one (format 9 on, a store with sketches); the first error `f` returns ends the walk.
    pub fn sketched_documents_named_by(
        &self,
        names: &[(u32, u64)],
        f: impl FnMut(u64, &str, u64, Option<&[u8]>) -> Result<()>,
    ) -> Result<()> {
        self.walk_named(names, true, f)
    }

    /// [`DocsFile::sketched_documents_named_by`], the sketches in the sketch area (format 10)
    /// read only where `sketches` asks for them.
    fn walk_named(
        &self,
        names: &[(u32, u64)],
        sketches: bool,
        mut f: impl FnMut(u64, &str, u64, Option<&[u8]>) -> Result<()>,
    ) -> Result<()> {
        let area = self.area_source(sketches);
        let mut found = vec![false; names.len()];
        let mut blocks = AscendingBlocks::new(&self.docs);
        let mut i = 0; // names[i] is the first name whose prefix is not passed
        let mut after: Vec<u8> = Vec::new(); // just above the last block read
        while i < names.len() {
            let lo = named_postings::hash_range(names[i].0).0;
            let key = lo.to_be_bytes().to_vec().max(std::mem::take(&mut after));
            let decoded = self.decoded_docs.as_ref();
            let Some((last, block)) = self.next_block(decoded, &mut blocks, &key)? else {
                break;
            };
            // The block's last hash: past it, no entry of the block is named.
            let last_hash = split_block_key(&last).map_or(u64::MAX, |k| k.0);
            let mut walk = |hash: u64, id: &str, reader: &mut PayloadReader<'_, '_>| {
                let (state, sketch) = docs::read_entry(reader, sketches)?;
                let prefix = named_postings::prefix_of(hash);
                while i < names.len() && names[i].0 < prefix {
                    i += 1;
                }
                if let DocState::Live { fingerprint, batch } = state {
                    let mut j = i;
                    while j < names.len() && names[j].0 == prefix {
                        if names[j].1 == fingerprint {
                            found[j] = true;
                            f(fingerprint, id, batch, sketch)?;
                        }
                        j += 1;
                    }
                }
                Ok(names
                    .get(i)
                    .is_some_and(|n| named_postings::hash_range(n.0).0 <= last_hash))
            };
            match block {
                Block::Kept(kept) => kept.decode_each_from(area, &mut walk),
                Block::Stored(block) => entries::decode_each_from(block.value(), area, &mut walk),
            }
            .map_err(|e| e.at(&self.path, DOCS_TABLE, None))?;
            after = last;
            after.push(0);
        }
        if let Some(j) = found.iter().position(|&f| !f) {
            let (prefix, fingerprint) = names[j];
            return Err(Error::corrupt(format!(
                "the posting ({fingerprint:016x}, prefix {prefix:08x}) names no live document \
                 of the run; verify the store"
            ))
            .at(&self.path, POSTINGS_TABLE, None));
        }
        Ok(())
    }

    /// The first block of a table whose redb key is at least `key`, in an ascending walk of
    /// it, with its redb key: the block kept in `decoded` where that holds it (no page read),
    /// else the one `blocks` reads.
    fn next_block<B: Decoded>(
        &self,
        decoded: Option<&DecodedBlocks<B>>,
        blocks: &mut AscendingBlocks<&'static [u8]>,
        key: &[u8],
    ) -> Result<Option<(Vec<u8>, Block<B>)>> {
        if let Some(kept) = decoded.and_then(|d| d.first_at_least(key)) {
            // The next read searches from the root: stepping along from the last block read
            // would pass over the blocks kept since, a page read each.
            blocks.search_next();
            return Ok(Some((kept.redb_key(), Block::Kept(kept))));
        }
        let found = blocks
            .at_least(key, |last| last.value() >= key)
            .map_err(|e| Error::redb(&self.path, e))?;
        Ok(found.map(|(last, block)| (last.value().to_vec(), Block::Stored(block))))
    }
}

/// A block found in an ascending walk: kept decoded, or read through redb.
enum Block<B> {
    Kept(Arc<Kept<B>>),
    Stored(AccessGuard<'static, &'static [u8]>),
}
