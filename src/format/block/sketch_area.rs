//! The sketch area (format 10, a store with sketches): a run's sketches, raw, in the order of
//! the docs entries they belong to, a redb page of them a block.
//!
//! Its docs blocks say which of their entries have a sketch and the ordinal of their first in
//! the area (see [`super::entries`], bits 13 and 14 of the count): sketch i is in block
//! `i / per_block(n)`, so a reader finds a docs block's sketches with no index. Kept apart
//! from the docs entries, the sketches (random bits) leave the ids a docs block of their own
//! to compress in, as in a store without sketches.
//!
//! ```text
//! redb key: the block's number b (the first is 0) as 8 big-endian bytes
//! offset  size  field
//! 0       4     crc32 (IEEE) of bytes 4..end, little-endian
//! 4       c*n   sketches b * per_block(n) .. b * per_block(n) + c, n bytes each: c is
//!               per_block(n) in every block but the last, 1 ..= per_block(n) in the last
//! ```

use super::{seal, unseal, CRC_BYTES};
use crate::error::{Error, Result};

/// Sketch bytes a block holds at most: with its checksum and redb's leaf header, one block
/// fills a 4 KiB page.
const BLOCK_SKETCH_BYTES: usize = 3968;

/// The sketches of `sketch_bytes` bytes each that a block holds (all but the last block).
pub fn per_block(sketch_bytes: usize) -> usize {
    (BLOCK_SKETCH_BYTES / sketch_bytes.max(1)).max(1)
}

/// The redb key of block `number`.
pub fn block_key(number: u64) -> [u8; 8] {
    number.to_be_bytes()
}

/// Cuts a run's sketches, pushed in order, into the area's blocks.
pub struct AreaWriter {
    sketch_bytes: usize,
    per_block: usize,
    /// The running block: its checksum's room, then its sketches.
    block: Vec<u8>,
    number: u64,
    written: u64,
}

impl AreaWriter {
    /// A writer of sketches of `sketch_bytes` bytes each.
    pub fn new(sketch_bytes: usize) -> Self {
        let per_block = per_block(sketch_bytes);
        let mut block = Vec::with_capacity(CRC_BYTES + per_block * sketch_bytes);
        block.extend_from_slice(&[0; CRC_BYTES]);
        AreaWriter {
            sketch_bytes,
            per_block,
            block,
            number: 0,
            written: 0,
        }
    }

    /// Appends `sketches`, whole sketches one after another, handing each full block to
    /// `emit(key, block)`.
    pub fn push(
        &mut self,
        sketches: &[u8],
        emit: &mut impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        if !sketches.len().is_multiple_of(self.sketch_bytes) {
            return Err(Error::corrupt(format!(
                "{} bytes for the sketch area are no whole number of {}-byte sketches",
                sketches.len(),
                self.sketch_bytes
            )));
        }
        let full = CRC_BYTES + self.per_block * self.sketch_bytes;
        let mut rest = sketches;
        while !rest.is_empty() {
            let take = (full - self.block.len()).min(rest.len());
            self.block.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.block.len() == full {
                self.emit_block(emit)?;
            }
        }
        self.written += (sketches.len() / self.sketch_bytes) as u64;
        Ok(())
    }

    /// How many sketches were pushed.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Emits the last block, if it holds any sketch; returns how many sketches were pushed.
    pub fn finish(mut self, emit: &mut impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<u64> {
        if self.block.len() > CRC_BYTES {
            self.emit_block(emit)?;
        }
        Ok(self.written)
    }

    fn emit_block(&mut self, emit: &mut impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        seal(&mut self.block);
        emit(&block_key(self.number), &self.block)?;
        self.number += 1;
        self.block.truncate(CRC_BYTES);
        Ok(())
    }
}

/// The sketches of block `number`, filed under `key`, of an area of `sketch_bytes`-byte
/// sketches, its checksum and size checked.
pub fn decode<'a>(key: &[u8], block: &'a [u8], sketch_bytes: usize) -> Result<&'a [u8]> {
    let sketches = unseal(block)?;
    let count = sketches.len() / sketch_bytes.max(1);
    if key.len() != 8
        || sketch_bytes == 0
        || sketches.is_empty()
        || sketches.len() % sketch_bytes != 0
        || count > per_block(sketch_bytes)
    {
        return Err(Error::corrupt(format!(
            "sketch area block of {} bytes under a key of {} bytes (a block holds 1 to {} \
             sketches of {sketch_bytes} bytes, under 8)",
            block.len(),
            key.len(),
            per_block(sketch_bytes)
        )));
    }
    Ok(sketches)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sketches pushed in pieces of any size come back in order, a page of them a block,
    /// each block numbered and checked.
    #[test]
    fn blocks_hold_the_sketches_in_order() {
        for (each, total) in [(128usize, 100usize), (64, 62), (1024, 7), (128, 31)] {
            let sketches: Vec<u8> = (0..each * total).map(|i| (i * 7 % 251) as u8).collect();
            let mut writer = AreaWriter::new(each);
            let mut blocks: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            let mut emit = |key: &[u8], block: &[u8]| {
                blocks.push((key.to_vec(), block.to_vec()));
                Ok(())
            };
            for piece in sketches.chunks(each * 3) {
                writer.push(piece, &mut emit).unwrap();
            }
            assert_eq!(writer.finish(&mut emit).unwrap(), total as u64);
            assert_eq!(blocks.len(), total.div_ceil(per_block(each)));
            let mut read = Vec::new();
            for (number, (key, block)) in blocks.iter().enumerate() {
                assert_eq!(key[..], block_key(number as u64));
                assert!(block.len() <= 4 + BLOCK_SKETCH_BYTES);
                read.extend_from_slice(decode(key, block, each).unwrap());
            }
            assert_eq!(read, sketches);
        }
    }

    /// docs/format.md's example: 100 sketches of 64 bytes are blocks 0 and 1, of 62 and 38.
    #[test]
    fn the_format_docs_example_is_what_is_written() {
        let mut writer = AreaWriter::new(64);
        let mut blocks: Vec<(Vec<u8>, usize)> = Vec::new();
        let mut emit = |key: &[u8], block: &[u8]| {
            blocks.push((key.to_vec(), block.len()));
            Ok(())
        };
        writer.push(&[1; 64 * 100], &mut emit).unwrap();
        writer.finish(&mut emit).unwrap();
        let zero = vec![0u8; 8];
        let one = vec![0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(blocks, vec![(zero, 3972), (one, 2436)]);
    }

    /// A flipped byte, a block cut inside a sketch and an empty block are damage.
    #[test]
    fn damaged_blocks_are_refused() {
        let mut writer = AreaWriter::new(64);
        let mut block = Vec::new();
        writer
            .push(&[9; 128], &mut |_, b: &[u8]| {
                block = b.to_vec();
                Ok(())
            })
            .unwrap();
        writer
            .finish(&mut |_, b: &[u8]| {
                block = b.to_vec();
                Ok(())
            })
            .unwrap();
        assert!(decode(&block_key(0), &block, 64).is_ok());
        let mut flipped = block.clone();
        flipped[40] ^= 1;
        assert!(decode(&block_key(0), &flipped, 64).is_err());
        let mut short = block[..100].to_vec();
        seal(&mut short);
        assert!(decode(&block_key(0), &short, 64).is_err());
        let mut empty = vec![0; 4];
        seal(&mut empty);
        assert!(decode(&block_key(0), &empty, 64).is_err());
    }
}
