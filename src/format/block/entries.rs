//! Entry blocks: a strictly increasing run of `(key, id)` pairs, each with a payload. Documents
//! and postings are both stored this way (see [`super::docs`] and [`super::postings`]).
//!
//! ```text
//! offset  size  field
//! 0       4     crc32 (IEEE) of bytes 4..end, little-endian
//! 4       2     n: number of entries (u16 LE), >= 1, in the low 12 bits; bit 15 set
//!               (format 6): the keys are not stored, each key is the id's hash; bit 14 set
//!               (format 7 on): each payload says whether a sketch follows (postings of
//!               formats 7 and 8, docs of format 9 on, in a store with sketches);
//!               bit 13 clear (set: named postings, not entries; set with bit 14, format 10:
//!               docs whose sketches are in the run's sketch area); bit 12 set (format 8):
//!               the entries that follow are compressed (see [`super::compressed`])
//! 6       10    with bits 13 and 14 set only: the ordinal of the block's first sketch in the
//!               sketch area (u64 LE) and how many of its entries have one (u16 LE)
//! 6 (16)  ...   n entries, each:
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

use super::compressed::{self, COMPRESSED};
use super::id_hash::id_hash;
use super::named_postings::NAMED;
use super::{unseal, Reader};
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
pub(super) const ID_HASH_KEYS: u16 = 1 << 15;
/// Bit 14 of a block's entry count: each payload says whether a sketch follows it (in a store
/// with sketches, postings of formats 7 and 8, see [`super::postings`]; docs of format 9 on,
/// see [`super::docs`]).
pub(super) const SKETCH_FLAGS: u16 = 1 << 14;
/// Bits 13 and 14 of a docs block's entry count (format 10, a store with sketches): each live
/// entry says whether its document has a sketch, which is the next one of the run's sketch
/// area (see [`super::sketch_area`]). Bit 13 alone marks a block of named postings.
pub(super) const IN_AREA: u16 = SKETCH_FLAGS | NAMED;
/// Bytes after the count of a block with [`IN_AREA`]: the ordinal of its first sketch in the
/// sketch area (u64) and how many of its entries have one (u16).
pub(super) const AREA_HEADER_BYTES: usize = 10;
/// The most entries a block holds: its count leaves bits 12 to 15 clear (bit 13 marks a block
/// of named postings, format 8, which is not an entry block; bit 12 a compressed one, see
/// [`super::compressed`]).
pub(super) const MOST_ENTRIES: u16 = COMPRESSED - 1;

/// What an entry carries besides its key and id.
pub trait Payload: Sized {
    /// Whether a decode into it reads the sketches a docs block keeps in the sketch area
    /// (format 10): it carries them.
    const READS_SKETCHES: bool = false;
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
    /// The sketch the entry keeps in its run's sketch area, in a block written with
    /// [`EntryWriter::with_sketch_area`] (docs, format 10).
    fn area_sketch(&self) -> Option<&[u8]> {
        None
    }
    /// Appends the payload as a block with a sketch area holds it, its
    /// [`Payload::area_sketch`] left out.
    fn encode_in_area(&self, out: &mut Vec<u8>) {
        self.encode(out)
    }
}

/// Where a decode finds the sketches of a block whose entries keep them in the run's sketch
/// area (format 10): that area.
pub trait SketchSource {
    /// Appends to `out` the `count` sketches from ordinal `first` on.
    fn read(&self, first: u64, count: usize, out: &mut Vec<u8>) -> Result<()>;
    /// The bytes of each sketch.
    fn sketch_bytes(&self) -> usize;
}

/// The sketches of a block with a sketch area, as read for one decode of it.
struct AreaSketches<'a> {
    bytes: &'a [u8],
    each: usize,
}

/// The part of a block reader a payload may use.
pub struct PayloadReader<'r, 'a> {
    reader: &'r mut Reader<'a>,
    sketch_flags: bool,
    /// Whether the block keeps its sketches in the sketch area (format 10), and those read
    /// for this decode, if they were.
    in_area: bool,
    sketches: Option<&'r mut AreaSketches<'a>>,
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
    /// Whether the block's sketches are in the run's sketch area (format 10): then a payload
    /// marks those that have one, and [`PayloadReader::area_sketch`] reads it.
    pub fn in_area(&self) -> bool {
        self.in_area
    }
    /// The next of the block's sketches in the sketch area: None when they were not read
    /// for this decode; an error past the block's count of them.
    pub fn area_sketch(&mut self) -> Result<Option<&'a [u8]>> {
        let Some(sketches) = self.sketches.as_mut() else {
            return Ok(None);
        };
        if sketches.bytes.len() < sketches.each {
            return Err(Error::corrupt(
                "docs block marks more sketches than its count of them",
            ));
        }
        let (sketch, rest) = sketches.bytes.split_at(sketches.each);
        sketches.bytes = rest;
        Ok(Some(sketch))
    }
}

/// The redb key of a block whose last entry is `(key, id)`.
pub fn block_key(key: u64, id: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + id.len());
    out.extend_from_slice(&key.to_be_bytes());
    out.extend_from_slice(id);
    out
}

/// Decodes a block, calling `f(key, id, payload)` on each entry until it returns false.
/// Checks the checksum, the entry count, UTF-8 ids and the order of entries.
pub fn decode<P: Payload>(block: &[u8], f: impl FnMut(u64, &str, P) -> bool) -> Result<()> {
    decode_from(block, None, f)
}

/// [`decode`] with the sketches of a block that keeps them in the run's sketch area read from
/// `sketches` (format 10 docs; without it such a payload has no sketch to read).
pub fn decode_from<P: Payload>(
    block: &[u8],
    sketches: Option<&dyn SketchSource>,
    mut f: impl FnMut(u64, &str, P) -> bool,
) -> Result<()> {
    decode_each_from(block, sketches, |key, id, reader| {
        Ok(f(key, id, P::decode(reader)?))
    })
}

/// [`decode`] for readers that read each payload themselves, borrowing from the block (or its
/// decompressed entries) instead of copying (`read` must consume exactly the entry's
/// payload; it returns whether to go on).
pub fn decode_each(
    block: &[u8],
    read: impl for<'a> FnMut(u64, &'a str, &mut PayloadReader<'_, 'a>) -> Result<bool>,
) -> Result<()> {
    decode_each_from(block, None, read)
}

/// [`decode_each`] with the block's sketches in the sketch area read from `sketches`, as
/// [`decode_from`].
pub fn decode_each_from(
    block: &[u8],
    sketches: Option<&dyn SketchSource>,
    mut read: impl for<'a> FnMut(u64, &'a str, &mut PayloadReader<'_, 'a>) -> Result<bool>,
) -> Result<()> {
    let (head, entries) = entries_area(block)?;
    let area = head.read_sketches(sketches)?;
    let area = area.as_ref().map(|(bytes, each)| (&bytes[..], *each));
    decode_entries(head, Reader::new(&entries), area, &mut read)
}

/// What a block says of itself before its entries.
#[derive(Clone, Copy)]
struct Head {
    /// Its count and flags.
    count: u16,
    /// With a sketch area: the ordinal of its first sketch there and how many it has.
    area: Option<(u64, u16)>,
}

impl Head {
    /// The block's sketches in the sketch area, read from `source` where it has some and
    /// `source` is given.
    fn read_sketches(&self, source: Option<&dyn SketchSource>) -> Result<Option<(Vec<u8>, usize)>> {
        let (Some((first, count)), Some(source)) = (self.area, source) else {
            return Ok(None);
        };
        if count > self.count & MOST_ENTRIES {
            return Err(Error::corrupt(format!(
                "docs block counts {count} sketches in the sketch area for {} entries",
                self.count & MOST_ENTRIES
            )));
        }
        let each = source.sketch_bytes();
        let mut out = Vec::with_capacity(usize::from(count) * each);
        source.read(first, usize::from(count), &mut out)?;
        Ok(Some((out, each)))
    }
}

/// Where the sketches of a docs block that keeps them in the sketch area (format 10) are: the
/// ordinal of its first and how many it has; None for any other entry block. Its checksum is
/// checked, its entries are not read.
pub fn sketch_area_of(block: &[u8]) -> Result<Option<(u64, u16)>> {
    let mut reader = Reader::new(unseal(block)?);
    let count = reader.u16()?;
    if count & IN_AREA != IN_AREA {
        return Ok(None);
    }
    Ok(Some((reader.u64()?, reader.u16()?)))
}

/// A stored entry block's head and its entries, checked against its checksum and
/// decompressed where they were compressed (borrowed where they were not).
fn entries_area(block: &[u8]) -> Result<(Head, Cow<'_, [u8]>)> {
    let body = unseal(block)?;
    let mut reader = Reader::new(body);
    let count = reader.u16()?;
    let area = if count & IN_AREA == IN_AREA {
        Some((reader.u64()?, reader.u16()?))
    } else if count & NAMED != 0 {
        return Err(Error::corrupt(
            "block of named postings (bit 13 of its count) read as an entry block",
        ));
    } else {
        None
    };
    let at = reader.pos;
    let entries = match count & COMPRESSED {
        0 => Cow::Borrowed(&body[at..]),
        _ => Cow::Owned(compressed::expand(&body[at..])?),
    };
    Ok((Head { count, area }, entries))
}

/// An entry block checked against its checksum and, when compressed, decompressed: what a
/// reader keeps to walk again with neither repeated (see [`Expanded::decode_each_from`]). Walking its
/// entries again (hashing each id) took less time than a binary search of an index of their
/// keys: the walk reads one buffer in order, the search three in no order.
pub struct Expanded {
    head: Head,
    entries: Vec<u8>,
}

impl Expanded {
    /// The entries of the stored block `block`, its checksum checked.
    pub fn of(block: &[u8]) -> Result<Self> {
        let (head, entries) = entries_area(block)?;
        Ok(Expanded {
            head,
            entries: entries.into_owned(),
        })
    }

    /// [`decode_each_from`] of the block, but for its checksum and decompression, done once
    /// by [`Expanded::of`].
    pub fn decode_each_from(
        &self,
        sketches: Option<&dyn SketchSource>,
        mut read: impl for<'a> FnMut(u64, &'a str, &mut PayloadReader<'_, 'a>) -> Result<bool>,
    ) -> Result<()> {
        let area = self.head.read_sketches(sketches)?;
        let area = area.as_ref().map(|(bytes, each)| (&bytes[..], *each));
        decode_entries(self.head, Reader::new(&self.entries), area, &mut read)
    }

    /// The bytes it holds.
    pub fn bytes(&self) -> usize {
        self.entries.capacity()
    }

    /// Where its sketches are in the sketch area, as [`sketch_area_of`] says.
    pub fn sketch_area(&self) -> Option<(u64, u16)> {
        self.head.area
    }
}

/// Decodes the `n` (with the block's flags) entries `reader` holds, as [`decode_each`].
fn decode_entries<'a>(
    head: Head,
    mut reader: Reader<'a>,
    sketches: Option<(&'a [u8], usize)>,
    read: &mut impl FnMut(u64, &'a str, &mut PayloadReader<'_, 'a>) -> Result<bool>,
) -> Result<()> {
    let n = head.count;
    let hashed = n & ID_HASH_KEYS != 0;
    let flags = (n & SKETCH_FLAGS != 0, head.area.is_some());
    let mut sketches = sketches.map(|(bytes, each)| AreaSketches { bytes, each });
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
            if !read(key, id_str, &mut payload(&mut reader, flags, &mut sketches))? {
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
        if !read(key, id_str, &mut payload(&mut reader, flags, &mut sketches))? {
            return Ok(());
        }
        prev_id = id;
    }
    if !reader.is_empty() {
        return Err(Error::corrupt("entry block has trailing bytes"));
    }
    if sketches.is_some_and(|s| !s.bytes.is_empty()) {
        return Err(Error::corrupt(
            "docs block counts more sketches in the sketch area than its entries mark",
        ));
    }
    Ok(())
}

fn payload<'r, 'a>(
    reader: &'r mut Reader<'a>,
    (sketch_flags, in_area): (bool, bool),
    sketches: &'r mut Option<AreaSketches<'a>>,
) -> PayloadReader<'r, 'a> {
    PayloadReader {
        reader,
        sketch_flags,
        in_area,
        sketches: sketches.as_mut(),
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
