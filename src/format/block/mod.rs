//! Blocks: the unit the permuted tables, documents, postings and sketches are stored in.
//!
//! A run stores each sorted sequence as blocks of about [`TARGET_BYTES`], each a redb value keyed
//! by its *last* entry, so a probe for the first entry `>= x` is one `range(x..)` step that lands
//! on the only block that can hold it. Every block starts with a CRC-32 (IEEE, as computed by
//! crc32fast) of the rest of the block, checked on every decode: redb does not verify its own
//! checksums on ordinary reads.

mod compressed;
pub mod docs;
pub mod entries;
pub mod entry_writer;
pub mod id_filter;
pub mod id_hash;
pub mod keys;
pub mod named_postings;
pub mod postings;
pub mod sketch_area;
pub mod sketches;
pub mod varint;

#[cfg(test)]
mod robustness_tests;

use crate::error::{Error, Result};

/// Blocks are cut before they would exceed this many bytes (a block holds at least one entry).
/// Measured: with redb's 4 KiB pages, values near but below 4 KiB pack one per leaf page with
/// little waste; see docs/design.md.
pub const TARGET_BYTES: usize = 4000;

/// Bytes of the checksum that starts every block.
const CRC_BYTES: usize = 4;

/// Writes the CRC-32 of `block[4..]` into `block[..4]`.
fn seal(block: &mut [u8]) {
    let crc = crc32fast::hash(&block[CRC_BYTES..]);
    block[..CRC_BYTES].copy_from_slice(&crc.to_le_bytes());
}

/// Checks a block's checksum and returns the bytes after it.
fn unseal(block: &[u8]) -> Result<&[u8]> {
    if block.len() < CRC_BYTES {
        return Err(Error::corrupt(format!(
            "block of {} bytes is shorter than its checksum",
            block.len()
        )));
    }
    let stored = u32::from_le_bytes(block[..CRC_BYTES].try_into().expect("4 bytes"));
    let actual = crc32fast::hash(&block[CRC_BYTES..]);
    if stored != actual {
        return Err(Error::corrupt(format!(
            "block checksum mismatch: stored crc32 {stored:08x}, computed {actual:08x}"
        )));
    }
    Ok(&block[CRC_BYTES..])
}

/// A forward reader over a block's bytes that turns every overrun into a corruption error.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2")))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }

    fn varint(&mut self) -> Result<u64> {
        let (value, used) = varint::decode(&self.bytes[self.pos..])
            .ok_or_else(|| Error::corrupt("block holds a truncated or overlong varint"))?;
        self.pos += used;
        Ok(value)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| Error::corrupt("block ends in the middle of an entry"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }
}
