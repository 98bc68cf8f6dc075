//! Named postings (format 8, a store without sketches): each posting names its document by
//! the top [`PREFIX_BITS`] bits of the id's hash instead of repeating the id, which only the
//! run's docs blocks hold.
//!
//! ```text
//! offset  size  field
//! 0       4     crc32 (IEEE) of bytes 4..end, little-endian
//! 4       2     n: number of postings (u16 LE), >= 1, in the low 13 bits; bit 13 set (the
//!               block's kind), bits 14 and 15 clear
//! 6       ...   n postings, each:
//!                 LEB128(fingerprint - previous fingerprint; 0 before the first)
//!                 name, u32 big-endian: prefix << 1 | shared
//! ```
//! Postings strictly increase by `(fingerprint, prefix)`; the redb key of a block is its last
//! posting's fingerprint as 8 big-endian bytes followed by its name's 4.
//!
//! A posting `(fingerprint, prefix)` stands for every live docs entry of the same run whose id
//! hash starts with `prefix` and whose fingerprint is `fingerprint`: its readers look the
//! prefix's hash range up in the docs table and keep the entries of that fingerprint. So a
//! run's postings are a set: two documents of one fingerprint whose hashes share a prefix (an
//! exact copy, 1 in 2^31) share a posting, which is marked `shared` so that whoever counts
//! the documents of a fingerprint without reading the docs (the audit) knows there are several.

use super::{seal, unseal, varint, Reader, CRC_BYTES, TARGET_BYTES};
use crate::error::{Error, Result};

/// Bits of the id hash a posting keeps: documents of one run and fingerprint that share them
/// are rare below 2^31 documents, and a prefix's hash range holds a document or two, in one
/// docs block or two (readers take any number).
pub const PREFIX_BITS: u32 = 31;

/// Bit 13 of a block's entry count: the block holds named postings.
pub(super) const NAMED: u16 = 1 << 13;
/// The most postings a block holds: its count leaves bits 13 to 15 clear.
const MOST_POSTINGS: u16 = NAMED - 1;

/// The prefix of `id_hash` a posting keeps.
#[inline]
pub fn prefix_of(id_hash: u64) -> u32 {
    (id_hash >> (64 - PREFIX_BITS)) as u32
}

/// The id hashes (inclusive) whose prefix is `prefix`.
pub fn hash_range(prefix: u32) -> (u64, u64) {
    let lo = u64::from(prefix) << (64 - PREFIX_BITS);
    (lo, lo | (u64::MAX >> PREFIX_BITS))
}

/// One posting: the live documents of a run with `fingerprint` whose id hashes start with
/// `prefix`; `shared` when there are several.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NamedPosting {
    pub fingerprint: u64,
    pub prefix: u32,
    pub shared: bool,
}

impl NamedPosting {
    /// The name stored: the prefix, then the shared bit.
    fn name(&self) -> u32 {
        self.prefix << 1 | u32::from(self.shared)
    }

    /// The redb key of a block whose last posting this is.
    fn block_key(&self) -> [u8; 12] {
        let mut key = [0; 12];
        key[..8].copy_from_slice(&self.fingerprint.to_be_bytes());
        key[8..].copy_from_slice(&self.name().to_be_bytes());
        key
    }
}

/// The postings of live documents `(fingerprint, id_hash)`, ordered by fingerprint (documents
/// of one fingerprint in any order): sorted by `(fingerprint, prefix)`, one per pair, marked
/// shared where documents share it.
pub fn of_documents(documents: impl IntoIterator<Item = (u64, u64)>) -> Vec<NamedPosting> {
    let mut postings: Vec<NamedPosting> = documents
        .into_iter()
        .map(|(fingerprint, hash)| NamedPosting {
            fingerprint,
            prefix: prefix_of(hash),
            shared: false,
        })
        .collect();
    // Ordered by fingerprint already: only the groups of one fingerprint need sorting. Most
    // groups hold one posting: scan, do not search.
    let mut start = 0;
    while start < postings.len() {
        let fp = postings[start].fingerprint;
        let mut end = start + 1;
        while end < postings.len() && postings[end].fingerprint == fp {
            end += 1;
        }
        if end - start > 1 {
            postings[start..end].sort_unstable();
        }
        start = end;
    }
    debug_assert!(
        postings.windows(2).all(|w| w[0] <= w[1]),
        "ordered by fingerprint"
    );
    postings.dedup_by(|next, kept| {
        let same = (next.fingerprint, next.prefix) == (kept.fingerprint, kept.prefix);
        kept.shared |= same;
        same
    });
    postings
}

/// Builds blocks of named postings one at a time.
pub struct NamedWriter {
    block: Vec<u8>,
    count: u16,
    last: Option<NamedPosting>,
}

impl Default for NamedWriter {
    fn default() -> Self {
        let mut block = Vec::with_capacity(TARGET_BYTES + 16);
        block.extend_from_slice(&[0; CRC_BYTES + 2]);
        NamedWriter {
            block,
            count: 0,
            last: None,
        }
    }
}

impl NamedWriter {
    /// Appends a posting, greater by `(fingerprint, prefix)` than the one before; hands a
    /// block that is full to `emit(block_key, block)`.
    pub fn push(
        &mut self,
        posting: NamedPosting,
        emit: &mut impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        debug_assert!(self
            .last
            .is_none_or(|l| { (l.fingerprint, l.prefix) < (posting.fingerprint, posting.prefix) }));
        let previous = self.last.map_or(0, |l| l.fingerprint);
        let end = self.block.len();
        encode(posting, previous, &mut self.block);
        if self.count > 0 && (self.block.len() > TARGET_BYTES || self.count == MOST_POSTINGS) {
            self.block.truncate(end);
            self.emit_block(emit)?;
            encode(posting, 0, &mut self.block);
        }
        self.count += 1;
        self.last = Some(posting);
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
        let n = self.count | NAMED;
        self.block[CRC_BYTES..CRC_BYTES + 2].copy_from_slice(&n.to_le_bytes());
        seal(&mut self.block);
        let last = self.last.take().expect("a posting in the block");
        emit(&last.block_key(), &self.block)?;
        self.block.truncate(CRC_BYTES + 2);
        self.count = 0;
        Ok(())
    }
}

fn encode(posting: NamedPosting, previous: u64, out: &mut Vec<u8>) {
    varint::encode(posting.fingerprint - previous, out);
    out.extend_from_slice(&posting.name().to_be_bytes());
}

/// Decodes a block of named postings, calling `f` on each until it returns false. Checks the
/// checksum, the block's kind and count, and the order of the postings.
pub fn decode(block: &[u8], f: impl FnMut(NamedPosting) -> bool) -> Result<()> {
    decode_body(unseal(block)?, f)
}

/// A block of named postings checked against its checksum: what a reader keeps to walk again
/// without checking it again (see [`Checked::decode`]).
pub struct Checked(Box<[u8]>);

impl Checked {
    /// The stored block `block`, its checksum checked.
    pub fn of(block: &[u8]) -> Result<Self> {
        Ok(Checked(unseal(block)?.into()))
    }

    /// [`decode`] of the block, but for its checksum, checked by [`Checked::of`].
    pub fn decode(&self, f: impl FnMut(NamedPosting) -> bool) -> Result<()> {
        decode_body(&self.0, f)
    }

    /// The bytes it holds.
    pub fn bytes(&self) -> usize {
        self.0.len()
    }
}

/// [`decode`] of a block's bytes after its checksum.
fn decode_body(body: &[u8], mut f: impl FnMut(NamedPosting) -> bool) -> Result<()> {
    let mut reader = Reader::new(body);
    let n = reader.u16()?;
    if n & !MOST_POSTINGS != NAMED {
        return Err(Error::corrupt(
            "postings block does not name its documents (bit 13 of its count is clear)",
        ));
    }
    let n = n & MOST_POSTINGS;
    if n == 0 {
        return Err(Error::corrupt("postings block holds no postings"));
    }
    let mut last: Option<NamedPosting> = None;
    for _ in 0..n {
        let delta = reader.varint()?;
        let fingerprint = last
            .map_or(0, |l| l.fingerprint)
            .checked_add(delta)
            .ok_or_else(|| Error::corrupt("postings block fingerprint overflows"))?;
        let name = u32::from_be_bytes(reader.take(4)?.try_into().expect("4 bytes"));
        let posting = NamedPosting {
            fingerprint,
            prefix: name >> 1,
            shared: name & 1 == 1,
        };
        if last.is_some_and(|l| (l.fingerprint, l.prefix) >= (fingerprint, posting.prefix)) {
            return Err(Error::corrupt("postings block entries are out of order"));
        }
        if !f(posting) {
            return Ok(());
        }
        last = Some(posting);
    }
    if !reader.is_empty() {
        return Err(Error::corrupt("postings block has trailing bytes"));
    }
    Ok(())
}

/// The fingerprint and the posting a block key `(fingerprint, name)` names, if it has the
/// length of a named postings block's key.
pub fn split_block_key(key: &[u8]) -> Option<NamedPosting> {
    let key: &[u8; 12] = key.try_into().ok()?;
    let name = u32::from_be_bytes(key[8..].try_into().expect("4 bytes"));
    Some(NamedPosting {
        fingerprint: u64::from_be_bytes(key[..8].try_into().expect("8 bytes")),
        prefix: name >> 1,
        shared: name & 1 == 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn blocks_of(postings: &[NamedPosting]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut blocks = Vec::new();
        let mut writer = NamedWriter::default();
        let mut emit = |key: &[u8], block: &[u8]| {
            blocks.push((key.to_vec(), block.to_vec()));
            Ok(())
        };
        for &p in postings {
            writer.push(p, &mut emit).unwrap();
        }
        writer.finish(&mut emit).unwrap();
        blocks
    }

    proptest! {
        /// Blocks decode to the postings pushed, each filed under its last posting, within
        /// the target size.
        #[test]
        fn decodes_what_it_encodes(
            documents in proptest::collection::vec((0u64..64, any::<u64>()), 0..3000),
            spread: bool,
        ) {
            let mut documents: Vec<(u64, u64)> = documents
                .into_iter()
                .map(|(fp, hash)| (if spread { fp << 57 | hash >> 7 } else { fp }, hash))
                .collect();
            documents.sort_by_key(|d| d.0);
            let postings = of_documents(documents.iter().copied());
            let blocks = blocks_of(&postings);
            let mut decoded = Vec::new();
            for (key, block) in &blocks {
                prop_assert!(block.len() <= TARGET_BYTES);
                let mut last = None;
                decode(block, |p| {
                    decoded.push(p);
                    last = Some(p);
                    true
                })
                .unwrap();
                prop_assert_eq!(split_block_key(key), last);
            }
            prop_assert_eq!(decoded, postings);
        }
    }

    /// Documents sharing a fingerprint and a prefix share a posting, marked shared; each
    /// prefix covers its hash range.
    #[test]
    fn documents_sharing_a_prefix_share_a_posting() {
        let (a, b, c) = (5u64 << 33, (5u64 << 33) | 77, 6u64 << 33);
        let postings = of_documents([(9, b), (9, c), (9, a), (10, a)]);
        let named = |fingerprint, prefix, shared| NamedPosting {
            fingerprint,
            prefix,
            shared,
        };
        assert_eq!(
            postings,
            [named(9, 5, true), named(9, 6, false), named(10, 5, false)]
        );
        assert_eq!(hash_range(5), (a, a | (u64::MAX >> 31)));
        assert_eq!(prefix_of(u64::MAX), (1 << 31) - 1);
        assert_eq!(hash_range((1 << 31) - 1).1, u64::MAX);
        // Its bytes: count 3 with bit 13, then each delta and name.
        let blocks = blocks_of(&postings);
        assert_eq!(
            &blocks[0].1[4..],
            [3, 0x20, 9, 0, 0, 0, 11, 0, 0, 0, 0, 12, 1, 0, 0, 0, 10]
        );
        assert_eq!(blocks[0].0, [0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 10]);
    }

    /// A block of another kind, out of order or cut short is refused.
    #[test]
    fn refuses_what_it_did_not_write() {
        let postings = of_documents([(1, 0), (2, 0)]);
        let block = blocks_of(&postings).remove(0).1;
        let refused = |bytes: &mut Vec<u8>| {
            seal(bytes);
            decode(bytes, |_| true).is_err()
        };
        let mut plain = block.clone();
        plain[5] = 0; // bit 13 clear
        assert!(refused(&mut plain));
        let mut swapped = block.clone();
        swapped[11] = 0; // the second posting's delta: (1, 0) twice
        assert!(refused(&mut swapped));
        let mut short = block.clone();
        short.pop();
        assert!(refused(&mut short));
    }
}
