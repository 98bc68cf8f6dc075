//! Lookups of a docs file's entries and named postings by key range: through the blocks a
//! long-lived reader keeps decoded (see decoded_blocks.rs), else from the file.

use super::decoded_blocks::{self, Before, Decoded, DecodedBlocks};
use super::docs_file::EntryTable;
use super::DocsFile;
use crate::error::{Error, Result};
use crate::format::block::docs::{self, DocState};
use crate::format::block::entries::{self, Expanded, PayloadReader, SketchSource};

/// What a walk of a docs block's entries calls on each.
type Walk<'w> = dyn for<'a> FnMut(u64, &'a str, &mut PayloadReader<'_, 'a>) -> Result<bool> + 'w;
use crate::run::DOCS_TABLE;

impl DocsFile {
    /// Calls `f(hash, id, state)` on every docs entry whose id hash is within `lo..=hi`, in
    /// order: from the decoded blocks where they hold the range, else from the file (and
    /// then kept decoded, where this reader keeps them).
    pub(super) fn entries_in(
        &self,
        lo: u64,
        hi: u64,
        mut f: impl FnMut(u64, &str, DocState),
    ) -> Result<()> {
        self.sketched_entries_in(lo, hi, false, |hash, id, state, _| f(hash, id, state))
    }

    /// [`DocsFile::entries_in`] with each entry's sketch, where the docs entries hold them
    /// (format 9; None for an entry without one, and in every other docs block) or, where
    /// `sketches` asks for them, name them in the sketch area (format 10).
    pub(super) fn sketched_entries_in(
        &self,
        lo: u64,
        hi: u64,
        sketches: bool,
        mut f: impl FnMut(u64, &str, DocState, Option<&[u8]>),
    ) -> Result<()> {
        let Some(decoded) = &self.decoded_docs else {
            return self.entries_in_file(lo, hi, sketches, f);
        };
        let area = self.area_source(sketches);
        self.decoded_in(&self.docs, DOCS_TABLE, decoded, lo, hi, |b: &Expanded| {
            if let (Some(_), Some(place)) = (area, b.sketch_area()) {
                let walk = |read: &mut Walk<'_>| b.decode_each_from(None, read);
                return self
                    .area_entries_in((lo, hi), place, walk, &mut f)
                    .map(drop);
            }
            b.decode_each_from(area, |hash, id, reader| {
                let (state, sketch) = docs::read_entry(reader, sketches)?;
                if hash >= lo && hash <= hi {
                    f(hash, id, state, sketch);
                }
                Ok(hash <= hi)
            })
        })
    }

    /// Calls `visit` on the decoded blocks of `table` that hold every entry whose key is
    /// within `lo..=hi`, in order: those `decoded` holds when it holds them all, else the ones
    /// read from the file (from the first whose key reaches `lo`), which it then keeps where
    /// they fit its budget. Errors name the table.
    pub(super) fn decoded_in<B: Decoded>(
        &self,
        table: &EntryTable,
        table_name: &'static str,
        decoded: &DecodedBlocks<B>,
        lo: u64,
        hi: u64,
        mut visit: impl FnMut(&B) -> Result<()>,
    ) -> Result<()> {
        let at = |e: Error| e.at(&self.path, table_name, None);
        if let Some(blocks) = decoded.holding(lo, hi) {
            return blocks.iter().try_for_each(|b| visit(b)).map_err(at);
        }
        let from = lo.to_be_bytes();
        let range = table
            .range(&from[..]..)
            .map_err(|e| Error::redb(&self.path, e))?;
        let mut before = Before::EndsBelow(lo);
        for item in range {
            let (key, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let key = decoded_blocks::parse_key(key.value())
                .ok_or_else(|| at(Error::corrupt("block key shorter than 8 bytes")))?;
            let block = decoded.keep(key.clone(), before, B::read(block.value()).map_err(at)?);
            visit(&block).map_err(at)?;
            if block.last_key() > hi {
                break;
            }
            before = Before::Block(key);
        }
        Ok(())
    }

    /// [`DocsFile::sketched_entries_in`] read from the file alone, each block walked only as
    /// far as the range.
    fn entries_in_file(
        &self,
        lo: u64,
        hi: u64,
        sketches: bool,
        mut f: impl FnMut(u64, &str, DocState, Option<&[u8]>),
    ) -> Result<()> {
        let area = self.area_source(sketches);
        self.walk_from(&self.docs, DOCS_TABLE, lo, |_, block| {
            if let (Some(_), Some(place)) = (area, entries::sketch_area_of(block)?) {
                let walk = |read: &mut Walk<'_>| entries::decode_each(block, read);
                return self.area_entries_in((lo, hi), place, walk, &mut f);
            }
            let mut past = false;
            entries::decode_each_from(block, area, |hash, id, reader| {
                let (state, sketch) = docs::read_entry(reader, sketches)?;
                past = hash > hi;
                if hash >= lo && !past {
                    f(hash, id, state, sketch);
                }
                Ok(!past)
            })?;
            Ok(past)
        })
    }

    /// [`DocsFile::sketched_entries_in`] of one docs block whose sketches are in the sketch
    /// area (format 10), which `walk` decodes: the entries within `lo..=hi` gathered first,
    /// then only their sketches read from the area (a lookup wants one or two of a block's
    /// hundred): the block's `count` sketches are from ordinal `first` on. Returns whether
    /// the block reaches past `hi`.
    fn area_entries_in(
        &self,
        (lo, hi): (u64, u64),
        (first, count): (u64, u16),
        walk: impl FnOnce(&mut Walk<'_>) -> Result<()>,
        f: &mut impl FnMut(u64, &str, DocState, Option<&[u8]>),
    ) -> Result<bool> {
        let Some(area) = self.area.as_deref() else {
            return Err(Error::corrupt(
                "a docs block of a sketch area in a run without one",
            ));
        };
        // The entries in range, each with its sketch's place among the block's.
        let mut found: Vec<(u64, String, DocState, Option<u64>)> = Vec::new();
        let (mut marked, mut past) = (0u64, false);
        walk(&mut |hash, id, reader| {
            let (state, has) = docs::read_mark(reader)?;
            past = hash > hi;
            if hash >= lo && !past {
                found.push((hash, id.to_string(), state, has.then_some(marked)));
            }
            marked += u64::from(has);
            Ok(!past)
        })?;
        let places = found.iter().filter_map(|e| e.3);
        let (from, to) = (places.clone().min(), places.max());
        if to.is_some_and(|to| to >= u64::from(count)) {
            return Err(Error::corrupt(format!(
                "docs block marks more entries than its {count} sketches in the sketch area"
            )));
        }
        let mut sketches = Vec::new();
        if let (Some(from), Some(to)) = (from, to) {
            let start = first
                .checked_add(from)
                .ok_or_else(|| Error::corrupt("docs block names sketches past 2^64"))?;
            area.read(start, (to - from + 1) as usize, &mut sketches)?;
        }
        let each = area.sketch_bytes();
        for (hash, id, state, place) in &found {
            let sketch =
                place.map(|p| &sketches[(p - from.unwrap_or(0)) as usize * each..][..each]);
            f(*hash, id, *state, sketch);
        }
        Ok(past)
    }

    /// Calls `visit(key, block)` on the blocks of `table` in order, from the first whose redb
    /// key reaches `from`'s 8 bytes, until it says the walk is past what it wants (true).
    /// Errors name the table.
    pub(super) fn walk_from(
        &self,
        table: &EntryTable,
        table_name: &'static str,
        from: u64,
        mut visit: impl FnMut(&[u8], &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let from = from.to_be_bytes();
        let range = table
            .range(&from[..]..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (key, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let past = visit(key.value(), block.value())
                .map_err(|e| e.at(&self.path, table_name, None))?;
            if past {
                break;
            }
        }
        Ok(())
    }
}
