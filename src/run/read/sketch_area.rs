//! A run's sketch area (format 10) read by ordinal: what a decode of its docs blocks reads
//! their sketches from (see [`crate::format::block::sketch_area`]).

use std::path::{Path, PathBuf};

use redb::ReadOnlyTable;

use super::ascending_blocks::for_each_block;
use crate::error::{Error, Result};
use crate::format::block::entries::SketchSource;
use crate::format::block::sketch_area;
use crate::run::SKETCH_AREA_TABLE;

/// The sketch area's redb table.
pub(crate) type AreaTable = ReadOnlyTable<&'static [u8], &'static [u8]>;

/// A run's sketch area (format 10): its sketches, in the order of the docs entries that have
/// one, read by ordinal (see [`crate::format::block::sketch_area`]).
pub(crate) struct SketchArea {
    path: PathBuf,
    /// None in a run whose documents have no sketch.
    table: Option<AreaTable>,
    sketch_bytes: usize,
}

impl SketchArea {
    pub(crate) fn new(path: &Path, table: Option<AreaTable>, sketch_bytes: usize) -> Self {
        SketchArea {
            path: path.to_path_buf(),
            table,
            sketch_bytes,
        }
    }

    /// Calls `f(redb key, block)` on every block, in order, unchecked.
    pub(crate) fn for_each_block(&self, f: impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        match &self.table {
            Some(table) => for_each_block(&self.path, table, f),
            None => Ok(()),
        }
    }
}

impl SketchSource for SketchArea {
    fn read(&self, first: u64, count: usize, out: &mut Vec<u8>) -> Result<()> {
        let at = |e: Error| e.at(&self.path, SKETCH_AREA_TABLE, None);
        if count == 0 {
            return Ok(());
        }
        let Some(table) = &self.table else {
            return Err(at(Error::corrupt(
                "the docs entries name sketches in the sketch area, and the docs file has none",
            )));
        };
        let (each, per_block) = (self.sketch_bytes, sketch_area::per_block(self.sketch_bytes));
        let per = per_block as u64;
        let end = first
            .checked_add(count as u64)
            .ok_or_else(|| at(Error::corrupt("docs block names sketches past 2^64")))?;
        let mut next = first;
        while next < end {
            let number = next / per;
            let key = sketch_area::block_key(number);
            let block = table
                .get(&key[..])
                .map_err(|e| Error::redb(&self.path, e))?
                .ok_or_else(|| {
                    at(Error::corrupt(format!(
                        "the sketch area has no block {number}, which the docs name"
                    )))
                })?;
            let sketches = sketch_area::decode(&key, block.value(), each)
                .map_err(|e| e.at(&self.path, SKETCH_AREA_TABLE, Some(number.to_string())))?;
            let (from, upto) = (
                (next - number * per) as usize,
                (end - number * per).min(per) as usize,
            );
            if sketches.len() < upto * each {
                return Err(at(Error::corrupt(format!(
                    "sketch area block {number} holds {} sketches, fewer than the docs name",
                    sketches.len() / each
                ))));
            }
            out.extend_from_slice(&sketches[from * each..upto * each]);
            next = number * per + upto as u64;
        }
        Ok(())
    }

    fn sketch_bytes(&self) -> usize {
        self.sketch_bytes
    }
}
