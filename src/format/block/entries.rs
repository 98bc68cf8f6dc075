//! Entry blocks: a strictly increasing run of `(key, id)` pairs, each with a payload. Documents
//! and postings are both stored this way (see [`super::docs`] and [`super::postings`]).
//!
//! ```text
//! offset  size  field
//! 0       4     crc32 (IEEE) of bytes 4..end, little-endian
//! 4       2     n: number of entries (u16 LE), >= 1, in the low 12 bits; bit 15 set
//!               (format 6): the keys are not stored, each key is the id's hash; bit 14 set
//!               (format 7 on): each payload says whether a sketch follows (postings of
//!               formats 7 and 8, docs of format 9, in a store with sketches);
//!               bit 13 clear (set: named postings, not entries); bit 12 set (format 8): the
//!               entries that follow are compressed (see [`super::compressed`])
//! 6       ...   n entries, each:
//!                 LEB128(key - previous key; the first entry's previous key is 0), unless
//!                   bit 15 of n is set
//!                 LEB128(id length in bytes), then the id (UTF-8)
//!                 payload (its layout belongs to the block kind)
//! ```
//! Entries are ordered by `(key, id bytes)`; the redb key of a block is its last entry's
//! `key` as 8 big-endian bytes followed by its id, so redb's byte order is the entries' order.
//! A docs entry's key is [`id_hash`] of its id: format 6 computes it instead of storing it
//! ([`Keys::IdHashes`]), about 6 bytes a document.

use std::borrow::Cow;

use super::compressed::{self, Squeezer, COMPRESSED};
use super::id_hash::id_hash;
use super::{seal, unseal, varint, Reader, CRC_BYTES, TARGET_BYTES};
use crate::error::{Error, Result};

/// Where the keys of an entry block come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keys {
    /// Stored with each entry as a delta (postings and sketches; docs before format 6).
    Stored,
    /// Not stored: each entry's key is [`id_hash`] of its id (docs, format 6 on).
    IdHashes,
}

/// Bit 15 of a block's entry count: its keys are the ids' hashes.
const ID_HASH_KEYS: u16 = 1 << 15;
/// Bit 14 of a block's entry count: each payload says whether a sketch follows it (in a store
/// with sketches, postings of formats 7 and 8, see [`super::postings`]; docs of format 9 on,
/// see [`super::docs`]).
const SKETCH_FLAGS: u16 = 1 << 14;
/// The most entries a block holds: its count leaves bits 12 to 15 clear (bit 13 marks a block
/// of named postings, format 8, which is not an entry block; bit 12 a compressed one, see
/// [`super::compressed`]).
const MOST_ENTRIES: u16 = COMPRESSED - 1;

/// What an entry carries besides its key and id.
pub trait Payload: Sized {
    /// Appends the payload.
    fn encode(&self, out: &mut Vec<u8>);
    /// Reads the payload back.
    fn decode(reader: &mut PayloadReader<'_, '_>) -> Result<Self>;
    /// Bytes of the encoded payload that neither compress nor count toward where a block is
    /// cut or whether compressing it pays (a document's sketch: random bits), so that a
    /// block holds as many ids with them as without.
    fn passenger_bytes(&self) -> usize {
        0
    }
}

/// The part of a block reader a payload may use.
pub struct PayloadReader<'r, 'a> {
    reader: &'r mut Reader<'a>,
    sketch_flags: bool,
}

impl<'a> PayloadReader<'_, 'a> {
    /// Whether the block's payloads start with a sketch flag (bit 14 of its entry count).
    pub fn sketch_flags(&self) -> bool {
        self.sketch_flags
    }
    /// A LEB128 varint.
    pub fn varint(&mut self) -> Result<u64> {
        self.reader.varint()
    }
    /// A little-endian u64.
    pub fn u64(&mut self) -> Result<u64> {
        self.reader.u64()
    }
    /// The next `n` bytes, borrowed from the block.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        self.reader.take(n)
    }
}

/// The redb key of a block whose last entry is `(key, id)`.
pub fn block_key(key: u64, id: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + id.len());
    out.extend_from_slice(&key.to_be_bytes());
    out.extend_from_slice(id);
    out
}

/// Cuts entries, which must be strictly increasing by `(key, id)`, into blocks whose keys are
/// as `keys` says and hands each to `emit(block_key, block)`.
pub fn encode<'e, P: Payload + 'e>(
    keys: Keys,
    entries: impl IntoIterator<Item = (u64, &'e [u8], P)>,
    mut emit: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    let mut writer = EntryWriter::new(keys);
    for (key, id, payload) in entries {
        writer.push(key, id, &payload, &mut emit)?;
    }
    writer.finish(&mut emit)
}

/// Builds entry blocks one entry at a time, for writers that produce entries as a stream.
pub struct EntryWriter {
    keys: Keys,
    sketch_flags: bool,
    /// Compresses each block's entries where that pays (docs blocks, format 8).
    squeezer: Option<Squeezer>,
    /// Bytes at which a block is cut: [`TARGET_BYTES`], or with compression what the last
    /// block's ratio says will compress to half of that.
    cut_at: usize,
    block: Vec<u8>,
    /// The passenger bytes (see [`Payload::passenger_bytes`]) of the block's entries.
    passengers: usize,
    /// The last block's ratio of stored to uncompressed bytes, passengers left out (1 for a
    /// block stored as it was): what a block with passengers is cut by, so that it fills
    /// about [`TARGET_BYTES`] once stored, one redb page.
    ratio: f64,
    count: u16,
    prev_key: u64,
    /// Where the last entry's id is in `block`: its block key needs it.
    last_id: std::ops::Range<usize>,
}

impl EntryWriter {
    /// A writer of blocks whose keys are as `keys` says (with [`Keys::IdHashes`], every key
    /// pushed must be its id's hash).
    pub fn new(keys: Keys) -> Self {
        let mut block = Vec::with_capacity(TARGET_BYTES + 64);
        block.extend_from_slice(&[0; CRC_BYTES + 2]);
        EntryWriter {
            keys,
            sketch_flags: false,
            squeezer: None,
            cut_at: TARGET_BYTES,
            block,
            passengers: 0,
            ratio: 1.0,
            count: 0,
            prev_key: 0,
            last_id: 0..0,
        }
    }

    /// Marks every block as one whose payloads say whether a sketch follows (bit 14), in a
    /// store with sketches: postings of formats 7 and 8, written with
    /// [`super::postings::SketchedPosting`], or docs of format 9 on, written with
    /// [`super::docs::SketchedDoc`].
    pub fn with_sketch_flags(mut self) -> Self {
        self.sketch_flags = true;
        self
    }

    /// Stores each block's entries compressed where that saves an eighth of them (docs
    /// blocks, format 8; see [`super::compressed`]). Blocks are cut so that they compress to
    /// about half of [`TARGET_BYTES`] (two to a redb page): each takes the entry bytes the
    /// block before it would have needed, from half the target to
    /// [`super::compressed::MOST_RATIO`] times it.
    pub fn compressed(mut self) -> Self {
        self.squeezer = Some(Squeezer::new());
        self
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
        // Encode onto the running block; if it does not fit, take it back, close the block and
        // encode again onto a fresh one (the delta base changes).
        let delta = match self.keys {
            Keys::Stored => Some(key - self.prev_key),
            Keys::IdHashes => {
                debug_assert_eq!(key, id_hash(id), "a docs entry's key is its id's hash");
                None
            }
        };
        let end = self.block.len();
        let mut id_at = encode_entry(delta, id, payload, &mut self.block);
        let passengers = payload.passenger_bytes();
        let counted = self.block.len() - self.passengers - passengers;
        // Passengers do not compress: a block that has some is cut where it would pass the
        // target once stored, at the last block's ratio.
        let passengers = self.passengers + passengers;
        let stored = passengers as f64 + counted as f64 * self.ratio;
        let full = counted > self.cut_at || (passengers > 0 && stored > TARGET_BYTES as f64);
        if self.count > 0 && (full || self.count == MOST_ENTRIES) {
            self.block.truncate(end);
            self.emit_block(emit)?;
            id_at = encode_entry(delta.map(|_| key), id, payload, &mut self.block);
        }
        self.passengers += payload.passenger_bytes();
        self.count += 1;
        self.prev_key = key;
        self.last_id = id_at..id_at + id.len();
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
        let mut n = match self.keys {
            Keys::Stored => self.count,
            Keys::IdHashes => self.count | ID_HASH_KEYS,
        };
        if self.sketch_flags {
            n |= SKETCH_FLAGS;
        }
        let key = block_key(self.prev_key, &self.block[self.last_id.clone()]);
        let passengers = self.passengers;
        let squeezed = (self.squeezer.as_mut())
            .and_then(|s| s.squeeze(&self.block[CRC_BYTES + 2..], passengers));
        if self.squeezer.is_some() {
            // Whole blocks' bytes but the passengers', as the cut compares them.
            let stored = squeezed
                .as_ref()
                .map(|entries| (CRC_BYTES + 2 + entries.len()).saturating_sub(passengers));
            let raw = self.block.len() - passengers;
            self.cut_at = compressed::next_cut(raw, stored);
            self.ratio = stored.map_or(1.0, |stored| stored as f64 / raw.max(1) as f64);
        }
        if let Some(entries) = squeezed {
            n |= COMPRESSED;
            self.block.truncate(CRC_BYTES + 2);
            self.block.extend_from_slice(&entries);
        }
        self.block[CRC_BYTES..CRC_BYTES + 2].copy_from_slice(&n.to_le_bytes());
        seal(&mut self.block);
        emit(&key, &self.block)?;
        self.block.clear();
        self.block.extend_from_slice(&[0; CRC_BYTES + 2]);
        self.passengers = 0;
        self.count = 0;
        self.prev_key = 0;
        Ok(())
    }
}

/// Appends one entry to `out`, its key's delta first where keys are stored; returns where its
/// id starts.
fn encode_entry(delta: Option<u64>, id: &[u8], payload: &impl Payload, out: &mut Vec<u8>) -> usize {
    if let Some(delta) = delta {
        varint::encode(delta, out);
    }
    varint::encode(id.len() as u64, out);
    let id_at = out.len();
    out.extend_from_slice(id);
    payload.encode(out);
    id_at
}

/// Decodes a block, calling `f(key, id, payload)` on each entry until it returns false.
/// Checks the checksum, the entry count, UTF-8 ids and the order of entries.
pub fn decode<P: Payload>(block: &[u8], mut f: impl FnMut(u64, &str, P) -> bool) -> Result<()> {
    decode_each(block, |key, id, reader| Ok(f(key, id, P::decode(reader)?)))
}

/// [`decode`] for readers that read each payload themselves, borrowing from the block (or its
/// decompressed entries) instead of copying (`read` must consume exactly the entry's
/// payload; it returns whether to go on).
pub fn decode_each(
    block: &[u8],
    mut read: impl for<'a> FnMut(u64, &'a str, &mut PayloadReader<'_, 'a>) -> Result<bool>,
) -> Result<()> {
    let (count, entries) = entries_area(block)?;
    decode_entries(count, Reader::new(&entries), &mut read)
}

/// A stored entry block's count (with its flags) and its entries, checked against its
/// checksum and decompressed where they were compressed (borrowed where they were not).
fn entries_area(block: &[u8]) -> Result<(u16, Cow<'_, [u8]>)> {
    let body = unseal(block)?;
    let count = Reader::new(body).u16()?;
    if count & super::named_postings::NAMED != 0 {
        return Err(Error::corrupt(
            "block of named postings (bit 13 of its count) read as an entry block",
        ));
    }
    let entries = match count & COMPRESSED {
        0 => Cow::Borrowed(&body[2..]),
        _ => Cow::Owned(compressed::expand(&body[2..])?),
    };
    Ok((count, entries))
}

/// An entry block checked against its checksum and, when compressed, decompressed: what a
/// reader keeps to walk again with neither repeated (see [`Expanded::decode_each`]). Walking its
/// entries again (hashing each id) took less time than a binary search of an index of their
/// keys: the walk reads one buffer in order, the search three in no order.
pub struct Expanded {
    /// The block's count and flags.
    count: u16,
    entries: Vec<u8>,
}

impl Expanded {
    /// The entries of the stored block `block`, its checksum checked.
    pub fn of(block: &[u8]) -> Result<Self> {
        let (count, entries) = entries_area(block)?;
        Ok(Expanded {
            count,
            entries: entries.into_owned(),
        })
    }

    /// [`decode_each`] of the block, but for its checksum and decompression, done once by
    /// [`Expanded::of`].
    pub fn decode_each(
        &self,
        mut read: impl for<'a> FnMut(u64, &'a str, &mut PayloadReader<'_, 'a>) -> Result<bool>,
    ) -> Result<()> {
        decode_entries(self.count, Reader::new(&self.entries), &mut read)
    }

    /// The bytes it holds.
    pub fn bytes(&self) -> usize {
        self.entries.capacity()
    }
}

/// Decodes the `n` (with the block's flags) entries `reader` holds, as [`decode_each`].
fn decode_entries<'a>(
    n: u16,
    mut reader: Reader<'a>,
    read: &mut impl FnMut(u64, &'a str, &mut PayloadReader<'_, 'a>) -> Result<bool>,
) -> Result<()> {
    let hashed = n & ID_HASH_KEYS != 0;
    let sketch_flags = n & SKETCH_FLAGS != 0;
    let n = n & MOST_ENTRIES;
    if n == 0 {
        return Err(Error::corrupt("entry block holds no entries"));
    }
    let mut key = 0u64;
    let mut prev_id: &[u8] = &[];
    for i in 0..n {
        if hashed {
            let len = usize::try_from(reader.varint()?).unwrap_or(usize::MAX);
            let id = reader.take(len)?;
            let prev_key = key;
            key = id_hash(id);
            if i > 0 && (key, id) <= (prev_key, prev_id) {
                return Err(Error::corrupt("entry block entries are out of order"));
            }
            let id_str = utf8(id)?;
            if !read(key, id_str, &mut payload(&mut reader, sketch_flags))? {
                return Ok(());
            }
            prev_id = id;
            continue;
        }
        let delta = reader.varint()?;
        key = key
            .checked_add(delta)
            .ok_or_else(|| Error::corrupt("entry block key overflows"))?;
        let len = usize::try_from(reader.varint()?).unwrap_or(usize::MAX);
        let id = reader.take(len)?;
        if i > 0 && delta == 0 && id <= prev_id {
            return Err(Error::corrupt("entry block entries are out of order"));
        }
        let id_str = utf8(id)?;
        if !read(key, id_str, &mut payload(&mut reader, sketch_flags))? {
            return Ok(());
        }
        prev_id = id;
    }
    if !reader.is_empty() {
        return Err(Error::corrupt("entry block has trailing bytes"));
    }
    Ok(())
}

fn payload<'r, 'a>(reader: &'r mut Reader<'a>, sketch_flags: bool) -> PayloadReader<'r, 'a> {
    PayloadReader {
        reader,
        sketch_flags,
    }
}

/// `id` as text. Ids are short and mostly ASCII: an inlined check of that spares the call
/// into the general validation, once per entry decoded (an audit decodes every entry).
#[inline]
fn utf8(id: &[u8]) -> Result<&str> {
    if id.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(id) });
    }
    std::str::from_utf8(id).map_err(|_| Error::corrupt("entry block holds an id that is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A payload of no bytes, as postings have.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Empty;

    impl Payload for Empty {
        fn encode(&self, _out: &mut Vec<u8>) {}

        fn decode(_reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
            Ok(Empty)
        }
    }

    proptest! {
        /// Blocks decode to the entries pushed, in order, each filed under its last entry,
        /// with keys stored or computed from the ids.
        #[test]
        fn decodes_what_it_encodes(
            mut entries in proptest::collection::btree_set(
                (any::<u64>(), "[a-z0-9]{0,40}"),
                1..2000,
            ).prop_map(|s| s.into_iter().collect::<Vec<_>>()),
            hashed: bool,
        ) {
            let keys = if hashed {
                // Keys are the ids' hashes: one entry per id.
                for (key, id) in entries.iter_mut() {
                    *key = id_hash(id.as_bytes());
                }
                entries.sort();
                entries.dedup();
                Keys::IdHashes
            } else {
                Keys::Stored
            };
            entries.sort();
            let mut blocks: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            encode(
                keys,
                entries.iter().map(|(k, id)| (*k, id.as_bytes(), Empty)),
                |key, block| {
                    blocks.push((key.to_vec(), block.to_vec()));
                    Ok(())
                },
            )
            .unwrap();
            let mut decoded = Vec::new();
            for (filed_under, block) in &blocks {
                let mut last = None;
                decode::<Empty>(block, |k, id, _| {
                    decoded.push((k, id.to_string()));
                    last = Some(block_key(k, id.as_bytes()));
                    true
                })
                .unwrap();
                prop_assert_eq!(last.as_ref(), Some(filed_under));
                prop_assert!(block.len() <= TARGET_BYTES);
            }
            prop_assert_eq!(decoded, entries);
        }

        /// Compressed blocks decode to the entries pushed, each filed under its last entry,
        /// whether their ids compress well (numbered) or less (hex digits of a hash).
        #[test]
        fn compressed_blocks_decode_to_what_was_pushed(
            count in 1usize..6000,
            random_ids: bool,
            seed: u64,
        ) {
            let mut state = seed;
            let mut entries: Vec<(u64, String)> = (0..count)
                .map(|i| {
                    state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                    let id = if random_ids {
                        format!("{:016x}{:08x}", state.wrapping_mul(0xBF58_476D_1CE4_E5B9), i)
                    } else {
                        format!("https://www.example.org/page/{i:08}.html")
                    };
                    (id_hash(id.as_bytes()), id)
                })
                .collect();
            entries.sort();
            let mut writer = EntryWriter::new(Keys::IdHashes).compressed();
            let mut blocks: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            let mut emit = |key: &[u8], block: &[u8]| {
                blocks.push((key.to_vec(), block.to_vec()));
                Ok(())
            };
            for (key, id) in &entries {
                writer.push(*key, id.as_bytes(), &Empty, &mut emit).unwrap();
            }
            writer.finish(&mut emit).unwrap();
            let mut decoded = Vec::new();
            for (filed_under, block) in &blocks {
                let (mut last, mut held) = (None, 0);
                decode::<Empty>(block, |k, id, _| {
                    decoded.push((k, id.to_string()));
                    last = Some(block_key(k, id.as_bytes()));
                    held += 1;
                    true
                })
                .unwrap();
                prop_assert_eq!(last.as_ref(), Some(filed_under));
                // Numbered URLs compress by far more than an eighth, but for a last block of
                // a few.
                let compressed = u16::from_le_bytes([block[4], block[5]]) & COMPRESSED != 0;
                prop_assert!(compressed || random_ids || held < 16);
            }
            prop_assert_eq!(decoded, entries);
        }
    }
}
