//! Writing entry blocks (see [`super::entries`] for their layout): cut at about a redb page,
//! compressed where that pays (docs, format 8), their sketches kept apart for the sketch area
//! (docs, format 10).

use super::compressed::{self, Squeezer, COMPRESSED};
use super::entries::{
    block_key, Keys, Payload, AREA_HEADER_BYTES, ID_HASH_KEYS, IN_AREA, MOST_ENTRIES, SKETCH_FLAGS,
};
use super::id_hash::id_hash;
use super::{seal, unseal, varint, Reader, CRC_BYTES, TARGET_BYTES};
use crate::error::{Error, Result};

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
    /// Bytes before a block's entries: its checksum, count and (with a sketch area) the
    /// area's header.
    header: usize,
    /// The sketches the entries keep in the run's sketch area (docs, format 10).
    area: Option<AreaOut>,
}

/// What an [`EntryWriter`] with a sketch area has of its sketches.
#[derive(Default)]
struct AreaOut {
    /// Those pushed and not yet taken, in order.
    sketches: Vec<u8>,
    /// Those of the blocks emitted: the ordinal of the running block's first.
    before: u64,
    /// Those of the running block's entries.
    in_block: u16,
    /// The bytes of each.
    sketch_bytes: usize,
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
            header: CRC_BYTES + 2,
            area: None,
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

    /// Marks every block as one whose entries keep their sketches in the run's sketch area
    /// (docs of format 10 on, in a store with sketches, written with
    /// [`super::docs::SketchedDoc`]): each block holds which of its entries have one, and the
    /// ordinal of its first, counted from 0 at this writer's first; the sketches themselves
    /// are taken with [`EntryWriter::drain_sketches`], for a [`super::sketch_area::AreaWriter`].
    pub fn with_sketch_area(mut self, sketch_bytes: usize) -> Self {
        self.sketch_flags = true;
        self.area = Some(AreaOut {
            sketch_bytes,
            ..AreaOut::default()
        });
        self.header = CRC_BYTES + 2 + AREA_HEADER_BYTES;
        self.block.resize(self.header, 0);
        self
    }

    /// Hands `to` the sketches of the entries pushed since the last call, in order (with a
    /// sketch area, where there are some).
    pub fn drain_sketches(&mut self, to: impl FnOnce(&[u8]) -> Result<()>) -> Result<()> {
        match self.area.as_mut() {
            Some(area) if !area.sketches.is_empty() => {
                to(&area.sketches)?;
                area.sketches.clear();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Bytes of the sketches pushed and not yet drained.
    pub fn undrained_sketch_bytes(&self) -> usize {
        self.area.as_ref().map_or(0, |a| a.sketches.len())
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
        let in_area = self.area.is_some();
        let mut id_at = encode_entry(delta, id, payload, in_area, &mut self.block);
        // A sketch in the sketch area is no passenger: the block holds as many ids as without.
        let own = if in_area {
            0
        } else {
            payload.passenger_bytes()
        };
        let counted = self.block.len() - self.passengers - own;
        // Passengers do not compress: a block that has some is cut where it would pass the
        // target once stored, at the last block's ratio.
        let passengers = self.passengers + own;
        let stored = passengers as f64 + counted as f64 * self.ratio;
        let full = counted > self.cut_at || (passengers > 0 && stored > TARGET_BYTES as f64);
        if self.count > 0 && (full || self.count == MOST_ENTRIES) {
            self.block.truncate(end);
            self.emit_block(emit)?;
            id_at = encode_entry(delta.map(|_| key), id, payload, in_area, &mut self.block);
        }
        self.passengers += own;
        if let (Some(area), Some(sketch)) = (self.area.as_mut(), payload.area_sketch()) {
            // A sketch of another size would move every later one from its ordinal.
            if sketch.len() != area.sketch_bytes {
                return Err(Error::corrupt(format!(
                    "a sketch of {} bytes for the sketch area of {}-byte sketches",
                    sketch.len(),
                    area.sketch_bytes
                )));
            }
            area.sketches.extend_from_slice(sketch);
            area.in_block += 1;
        }
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
        let header = self.header;
        let squeezed =
            (self.squeezer.as_mut()).and_then(|s| s.squeeze(&self.block[header..], passengers));
        if self.squeezer.is_some() {
            // Whole blocks' bytes but the passengers', as the cut compares them.
            let stored = squeezed
                .as_ref()
                .map(|entries| (header + entries.len()).saturating_sub(passengers));
            let raw = self.block.len() - passengers;
            self.cut_at = compressed::next_cut(raw, stored);
            self.ratio = stored.map_or(1.0, |stored| stored as f64 / raw.max(1) as f64);
        }
        if let Some(entries) = squeezed {
            n |= COMPRESSED;
            self.block.truncate(header);
            self.block.extend_from_slice(&entries);
        }
        if let Some(area) = self.area.as_mut() {
            n |= IN_AREA;
            let at = CRC_BYTES + 2;
            self.block[at..at + 8].copy_from_slice(&area.before.to_le_bytes());
            self.block[at + 8..at + 10].copy_from_slice(&area.in_block.to_le_bytes());
            area.before += u64::from(area.in_block);
            area.in_block = 0;
        }
        self.block[CRC_BYTES..CRC_BYTES + 2].copy_from_slice(&n.to_le_bytes());
        seal(&mut self.block);
        emit(&key, &self.block)?;
        self.block.clear();
        self.block.resize(header, 0);
        self.passengers = 0;
        self.count = 0;
        self.prev_key = 0;
        Ok(())
    }
}

/// Appends one entry to `out`, its key's delta first where keys are stored; returns where its
/// id starts.
fn encode_entry(
    delta: Option<u64>,
    id: &[u8],
    payload: &impl Payload,
    in_area: bool,
    out: &mut Vec<u8>,
) -> usize {
    if let Some(delta) = delta {
        varint::encode(delta, out);
    }
    varint::encode(id.len() as u64, out);
    let id_at = out.len();
    out.extend_from_slice(id);
    if in_area {
        payload.encode_in_area(out);
    } else {
        payload.encode(out);
    }
    id_at
}

/// Adds `by` to the ordinal of a block's first sketch in the sketch area, where it has one
/// (a block with [`IN_AREA`]), and seals it again: a merge writes ranges of the docs in
/// parallel, each counting its sketches from 0, and learns where a range's start in the
/// order it appends them.
pub fn shift_area(block: &mut [u8], by: u64) -> Result<()> {
    let count = Reader::new(unseal(block)?).u16()?;
    if count & IN_AREA != IN_AREA || by == 0 {
        return Ok(());
    }
    let at = CRC_BYTES + 2;
    let first = (block.get(at..at + 8))
        .and_then(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")).checked_add(by))
        .ok_or_else(|| Error::corrupt("docs block of a sketch area with no room for its place"))?;
    block[at..at + 8].copy_from_slice(&first.to_le_bytes());
    seal(block);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::block::entries::{decode, PayloadReader};
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
