//! Entry blocks: a strictly increasing run of `(key, id)` pairs, each with a payload. Documents
//! and postings are both stored this way (see [`super::docs`] and [`super::postings`]).
//!
//! ```text
//! offset  size  field
//! 0       4     crc32 (IEEE) of bytes 4..end, little-endian
//! 4       2     n: number of entries (u16 LE), >= 1
//! 6       ...   n entries, each:
//!                 LEB128(key - previous key; the first entry's previous key is 0)
//!                 LEB128(id length in bytes), then the id (UTF-8)
//!                 payload (its layout belongs to the block kind)
//! ```
//! Entries are ordered by `(key, id bytes)`; the redb key of a block is its last entry's
//! `key` as 8 big-endian bytes followed by its id, so redb's byte order is the entries' order.

use super::{seal, unseal, varint, Reader, CRC_BYTES, TARGET_BYTES};
use crate::error::{Error, Result};

/// What an entry carries besides its key and id.
pub trait Payload: Sized {
    /// Appends the payload.
    fn encode(&self, out: &mut Vec<u8>);
    /// Reads the payload back.
    fn decode(reader: &mut PayloadReader<'_, '_>) -> Result<Self>;
}

/// The part of a block reader a payload may use.
pub struct PayloadReader<'r, 'a>(&'r mut Reader<'a>);

impl PayloadReader<'_, '_> {
    /// A LEB128 varint.
    pub fn varint(&mut self) -> Result<u64> {
        self.0.varint()
    }
    /// A little-endian u64.
    pub fn u64(&mut self) -> Result<u64> {
        self.0.u64()
    }
}

/// The redb key of a block whose last entry is `(key, id)`.
pub fn block_key(key: u64, id: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + id.len());
    out.extend_from_slice(&key.to_be_bytes());
    out.extend_from_slice(id);
    out
}

/// Cuts entries, which must be strictly increasing by `(key, id)`, into blocks and hands each
/// to `emit(block_key, block)`.
pub fn encode<'e, P: Payload + 'e>(
    entries: impl IntoIterator<Item = (u64, &'e [u8], P)>,
    mut emit: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    let mut writer = EntryWriter::new();
    for (key, id, payload) in entries {
        writer.push(key, id, &payload, &mut emit)?;
    }
    writer.finish(&mut emit)
}

/// Builds entry blocks one entry at a time, for writers that produce entries as a stream.
pub struct EntryWriter {
    block: Vec<u8>,
    entry: Vec<u8>,
    count: u16,
    prev_key: u64,
    last_id: Vec<u8>,
}

impl Default for EntryWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl EntryWriter {
    pub fn new() -> Self {
        let mut block = Vec::with_capacity(TARGET_BYTES + 64);
        block.extend_from_slice(&[0; CRC_BYTES + 2]);
        EntryWriter {
            block,
            entry: Vec::with_capacity(64),
            count: 0,
            prev_key: 0,
            last_id: Vec::new(),
        }
    }

    /// Appends an entry, greater by `(key, id)` than the one before; hands a block that is
    /// full to `emit(block_key, block)`.
    pub fn push(
        &mut self,
        key: u64,
        id: &[u8],
        payload: &impl Payload,
        emit: &mut impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        // Encode against the running block; if it does not fit, close the block and re-encode
        // against a fresh one (the delta base changes).
        self.entry.clear();
        encode_entry(key - self.prev_key, id, payload, &mut self.entry);
        if self.count > 0
            && (self.block.len() + self.entry.len() > TARGET_BYTES || self.count == u16::MAX)
        {
            self.emit_block(emit)?;
            self.entry.clear();
            encode_entry(key, id, payload, &mut self.entry);
        }
        self.block.extend_from_slice(&self.entry);
        self.count += 1;
        self.prev_key = key;
        self.last_id.clear();
        self.last_id.extend_from_slice(id);
        Ok(())
    }

    /// Emits the last, partly filled block.
    pub fn finish(mut self, emit: &mut impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        if self.count > 0 {
            self.emit_block(emit)?;
        }
        Ok(())
    }

    fn emit_block(&mut self, emit: &mut impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        self.block[CRC_BYTES..CRC_BYTES + 2].copy_from_slice(&self.count.to_le_bytes());
        seal(&mut self.block);
        emit(&block_key(self.prev_key, &self.last_id), &self.block)?;
        self.block.clear();
        self.block.extend_from_slice(&[0; CRC_BYTES + 2]);
        self.count = 0;
        self.prev_key = 0;
        Ok(())
    }
}

fn encode_entry(delta: u64, id: &[u8], payload: &impl Payload, out: &mut Vec<u8>) {
    varint::encode(delta, out);
    varint::encode(id.len() as u64, out);
    out.extend_from_slice(id);
    payload.encode(out);
}

/// Decodes a block, calling `f(key, id, payload)` on each entry until it returns false.
/// Checks the checksum, the entry count, UTF-8 ids and the order of entries.
pub fn decode<P: Payload>(block: &[u8], mut f: impl FnMut(u64, &str, P) -> bool) -> Result<()> {
    let body = unseal(block)?;
    let mut reader = Reader::new(body);
    let n = reader.u16()?;
    if n == 0 {
        return Err(Error::corrupt("entry block holds no entries"));
    }
    let mut key = 0u64;
    let mut prev_id: &[u8] = &[];
    for i in 0..n {
        let delta = reader.varint()?;
        key = key
            .checked_add(delta)
            .ok_or_else(|| Error::corrupt("entry block key overflows"))?;
        let len = usize::try_from(reader.varint()?).unwrap_or(usize::MAX);
        let id = reader.take(len)?;
        if i > 0 && delta == 0 && id <= prev_id {
            return Err(Error::corrupt("entry block entries are out of order"));
        }
        let id_str = std::str::from_utf8(id)
            .map_err(|_| Error::corrupt("entry block holds an id that is not UTF-8"))?;
        let payload = P::decode(&mut PayloadReader(&mut reader))?;
        if !f(key, id_str, payload) {
            return Ok(());
        }
        prev_id = id;
    }
    if !reader.is_empty() {
        return Err(Error::corrupt("entry block has trailing bytes"));
    }
    Ok(())
}
