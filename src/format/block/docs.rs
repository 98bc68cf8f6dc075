//! Document blocks: which fingerprint each id has, ordered by `(id_hash(id), id)`.
//!
//! An entry block (see [`super::entries`]) whose key is [`id_hash`] of the id and whose payload
//! is `LEB128(batch << 1 | deleted)` followed, when not deleted, by the fingerprint as a u64
//! little-endian.
//!
//! In a store with sketches, format 9 writes its docs blocks with sketch flags (bit 14 of the
//! entry count): a live entry's fingerprint is followed by `LEB128(n)` and the document's n
//! sketch bytes, n = 0 for a document without a sketch. The sketch lives with the only copy of
//! its id, so postings can name documents instead of holding their ids. Format 10 keeps the
//! sketch in the run's sketch area instead (bits 14 and 13): the entry says only whether it
//! has one (`LEB128(1)` or `LEB128(0)`), and the block where its first is (see
//! [`super::sketch_area`]).

use super::entries::{Payload, PayloadReader};
pub use super::id_hash::id_hash;
use super::sketches::{MAX_BYTES, MIN_BYTES};
use super::varint;
use crate::error::{Error, Result};

/// What a run says of an id: the newest run that mentions an id decides. It reads blocks with
/// sketch flags too, passing over their sketches; it writes blocks without them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocState {
    /// The id has this fingerprint, inserted by this batch.
    Live { fingerprint: u64, batch: u64 },
    /// The id was deleted by this batch.
    Deleted { batch: u64 },
}

impl Payload for DocState {
    fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            DocState::Live { fingerprint, batch } => {
                varint::encode(batch << 1, out);
                out.extend_from_slice(&fingerprint.to_le_bytes());
            }
            DocState::Deleted { batch } => varint::encode(batch << 1 | 1, out),
        }
    }

    fn decode(reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
        read_state(reader)
    }
}

/// A docs entry with its document's sketch, where it has one: the payload of docs blocks
/// with sketch flags (format 9, a store with sketches) or of a sketch area (format 10), which
/// it must be written into (see [`super::entry_writer::EntryWriter::with_sketch_flags`] and
/// [`super::entry_writer::EntryWriter::with_sketch_area`]). It reads any docs block (one
/// without flags has no sketches; one of a sketch area must be read with it, see
/// [`super::entries::decode_from`]). A deletion has no sketch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SketchedDoc {
    pub state: DocState,
    pub sketch: Option<Vec<u8>>,
}

impl Payload for SketchedDoc {
    const READS_SKETCHES: bool = true;

    fn encode(&self, out: &mut Vec<u8>) {
        self.state.encode(out);
        if let DocState::Live { .. } = self.state {
            let sketch = self.sketch.as_deref().unwrap_or_default();
            varint::encode(sketch.len() as u64, out);
            out.extend_from_slice(sketch);
        } else {
            debug_assert!(self.sketch.is_none(), "a deletion has no sketch");
        }
    }

    fn decode(reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
        let (state, sketch) = read_borrowed(reader)?;
        Ok(SketchedDoc {
            state,
            sketch: sketch.map(<[u8]>::to_vec),
        })
    }

    /// A sketch is random bits: a block of documents with sketches holds as many ids as one
    /// without, and compresses where they do.
    fn passenger_bytes(&self) -> usize {
        self.sketch.as_ref().map_or(0, Vec::len)
    }

    fn area_sketch(&self) -> Option<&[u8]> {
        match self.state {
            DocState::Live { .. } => self.sketch.as_deref(),
            DocState::Deleted { .. } => None,
        }
    }

    /// Format 10: a live entry's fingerprint is followed by `LEB128(1)` when its sketch is
    /// the next in the sketch area, `LEB128(0)` when it has none.
    fn encode_in_area(&self, out: &mut Vec<u8>) {
        self.state.encode(out);
        if let DocState::Live { .. } = self.state {
            varint::encode(u64::from(self.sketch.is_some()), out);
        }
    }
}

/// A docs entry's payload as some reader or writer needs it: its state, at least.
pub trait DocPayload: Payload {
    /// What the entry says of its id.
    fn state(&self) -> DocState;
    /// Whether it carries its document's sketch.
    fn has_sketch(&self) -> bool;
}

impl DocPayload for DocState {
    fn state(&self) -> DocState {
        *self
    }
    fn has_sketch(&self) -> bool {
        false
    }
}

impl DocPayload for SketchedDoc {
    fn state(&self) -> DocState {
        self.state
    }
    /// As [`Payload::area_sketch`]: a deletion has none.
    fn has_sketch(&self) -> bool {
        self.area_sketch().is_some()
    }
}

/// A docs entry's payload `(state, sketch)` in any docs block, the sketch borrowed from the
/// block (or from the sketches read for it from the sketch area, format 10): None in a block
/// without sketch flags, for a deletion, or for a document without one. A block whose
/// sketches are in the sketch area must be decoded with them read (see
/// [`super::entries::decode_each_from`]).
pub fn read_borrowed<'a>(
    reader: &mut PayloadReader<'_, 'a>,
) -> Result<(DocState, Option<&'a [u8]>)> {
    read_entry(reader, true)
}

/// A docs entry's state in any docs block, its sketch passed over (and the sketch area's
/// left unread).
pub fn read_state(reader: &mut PayloadReader<'_, '_>) -> Result<DocState> {
    Ok(read_entry(reader, false)?.0)
}

/// A docs entry's state in a block of a sketch area (format 10), and whether its document has
/// a sketch there; the sketches are not read.
pub fn read_mark(reader: &mut PayloadReader<'_, '_>) -> Result<(DocState, bool)> {
    let tag = reader.varint()?;
    let batch = tag >> 1;
    if tag & 1 == 1 {
        return Ok((DocState::Deleted { batch }, false));
    }
    let fingerprint = reader.u64()?;
    let state = DocState::Live { fingerprint, batch };
    if !reader.in_area() {
        return Err(Error::corrupt(
            "a docs block read for sketch marks has none",
        ));
    }
    Ok((state, area_mark(reader)?))
}

/// A live entry's mark in a block of a sketch area: whether it has a sketch there.
fn area_mark(reader: &mut PayloadReader<'_, '_>) -> Result<bool> {
    match reader.varint()? {
        0 => Ok(false),
        1 => Ok(true),
        mark => Err(Error::corrupt(format!(
            "docs entry with sketch mark {mark} (0: no sketch, 1: one in the sketch area)"
        ))),
    }
}

/// [`read_borrowed`] where `want`, else [`read_state`] with the sketch the entry holds
/// itself, if it does (format 9).
pub fn read_entry<'a>(
    reader: &mut PayloadReader<'_, 'a>,
    want: bool,
) -> Result<(DocState, Option<&'a [u8]>)> {
    let tag = reader.varint()?;
    let batch = tag >> 1;
    if tag & 1 == 1 {
        return Ok((DocState::Deleted { batch }, None));
    }
    let state = DocState::Live {
        fingerprint: reader.u64()?,
        batch,
    };
    if !reader.sketch_flags() {
        return Ok((state, None));
    }
    if reader.in_area() {
        if !area_mark(reader)? {
            return Ok((state, None));
        }
        return match reader.area_sketch()? {
            Some(sketch) => Ok((state, Some(sketch))),
            None if want => Err(Error::corrupt(
                "a docs block of a sketch area was read without its sketches",
            )),
            None => Ok((state, None)),
        };
    }
    match reader.varint()? {
        0 => Ok((state, None)),
        len if (u64::from(MIN_BYTES)..=u64::from(MAX_BYTES)).contains(&len) => {
            Ok((state, Some(reader.take(len as usize)?)))
        }
        len => Err(Error::corrupt(format!(
            "docs entry with a sketch of {len} bytes (a sketch has {MIN_BYTES} to {MAX_BYTES})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::block::entries::{self, Keys};
    use crate::format::block::entry_writer::EntryWriter;

    /// Docs entries written with sketch flags read back with their sketches, and as plain
    /// states; a block without flags reads as entries without sketches. Compressed or not.
    #[test]
    fn sketched_docs_read_back_either_way() {
        let sketch = vec![7u8; 128];
        let mut entries: Vec<(String, DocState, Option<Vec<u8>>)> = vec![
            (
                "a".into(),
                DocState::Live {
                    fingerprint: 1,
                    batch: 0,
                },
                Some(sketch.clone()),
            ),
            (
                "b".into(),
                DocState::Live {
                    fingerprint: 1,
                    batch: 63,
                },
                None,
            ),
            ("c".into(), DocState::Deleted { batch: 64 }, None),
            (
                "d".into(),
                DocState::Live {
                    fingerprint: u64::MAX,
                    batch: 1 << 40,
                },
                Some(sketch),
            ),
        ];
        entries.sort_by_key(|(id, _, _)| (id_hash(id.as_bytes()), id.clone()));
        for (flags, compressed) in [(true, false), (true, true), (false, false)] {
            let mut writer = EntryWriter::new(Keys::IdHashes);
            if flags {
                writer = writer.with_sketch_flags();
            }
            if compressed {
                writer = writer.compressed();
            }
            let mut blocks = Vec::new();
            let mut emit = |_: &[u8], block: &[u8]| {
                blocks.push(block.to_vec());
                Ok(())
            };
            for (id, state, sketch) in &entries {
                let hash = id_hash(id.as_bytes());
                if flags {
                    let payload = SketchedDoc {
                        state: *state,
                        sketch: sketch.clone(),
                    };
                    writer
                        .push(hash, id.as_bytes(), &payload, &mut emit)
                        .unwrap();
                } else {
                    writer.push(hash, id.as_bytes(), state, &mut emit).unwrap();
                }
            }
            writer.finish(&mut emit).unwrap();
            assert_eq!(blocks.len(), 1);
            let (mut sketched, mut plain) = (Vec::new(), Vec::new());
            entries::decode::<SketchedDoc>(&blocks[0], |_, id, d| {
                sketched.push((id.to_string(), d.state, d.sketch));
                true
            })
            .unwrap();
            entries::decode::<DocState>(&blocks[0], |_, id, state| {
                plain.push((id.to_string(), state));
                true
            })
            .unwrap();
            let want: Vec<_> = entries
                .iter()
                .map(|(id, state, sketch)| (id.clone(), *state, sketch.clone().filter(|_| flags)))
                .collect();
            assert_eq!(sketched, want, "flags {flags}");
            let want: Vec<_> = entries
                .iter()
                .map(|(id, state, _)| (id.clone(), *state))
                .collect();
            assert_eq!(plain, want, "flags {flags}");
        }
    }

    /// Sketches count toward neither whether compressing a block pays nor its ratio: blocks
    /// of documents with random sketches are compressed where their ids compress, and cut
    /// to about a redb page once stored.
    #[test]
    fn sketches_ride_along_in_compressed_blocks() {
        let mut docs: Vec<(u64, String)> = (0..3000)
            .map(|i| format!("https://www.example.com/news/world/{i:06}.html"))
            .map(|id| (id_hash(id.as_bytes()), id))
            .collect();
        docs.sort();
        let mut bits = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = || {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            bits as u8
        };
        let blocks = |sketched: bool, random: &mut dyn FnMut() -> u8| {
            let mut writer = EntryWriter::new(Keys::IdHashes).compressed();
            if sketched {
                writer = writer.with_sketch_flags();
            }
            let mut blocks: Vec<Vec<u8>> = Vec::new();
            let mut emit = |_: &[u8], block: &[u8]| {
                blocks.push(block.to_vec());
                Ok(())
            };
            for (i, (hash, id)) in docs.iter().enumerate() {
                let state = DocState::Live {
                    fingerprint: i as u64,
                    batch: 1,
                };
                if sketched {
                    let sketch = Some((0..128).map(|_| random()).collect());
                    let payload = SketchedDoc { state, sketch };
                    writer.push(*hash, id.as_bytes(), &payload, &mut emit)
                } else {
                    writer.push(*hash, id.as_bytes(), &state, &mut emit)
                }
                .unwrap();
            }
            writer.finish(&mut emit).unwrap();
            blocks
        };
        let (plain, sketched) = (blocks(false, &mut random), blocks(true, &mut random));
        let compressed = |b: &&Vec<u8>| b[5] & 0x10 != 0;
        assert!(plain.iter().all(|b| compressed(&b)));
        // The first block, cut before any ratio is known, may be stored as it is.
        let squeezed = sketched.iter().filter(compressed).count();
        assert!(
            squeezed + 1 >= sketched.len(),
            "{squeezed} of {}",
            sketched.len()
        );
        let most = sketched.iter().map(Vec::len).max().unwrap();
        assert!(
            most <= super::super::TARGET_BYTES + 300,
            "a block of {most} bytes"
        );
        // Compressed, they store less than their documents' sketches and ids take raw.
        let stored: usize = sketched.iter().map(Vec::len).sum();
        let raw: usize = docs.iter().map(|(_, id)| id.len() + 12 + 130).sum();
        assert!(stored < raw - raw / 10, "{stored} bytes stored of {raw}");
    }

    /// docs/format.md's example of a docs block with sketch flags, byte for byte.
    #[test]
    fn the_format_docs_example_is_what_is_written() {
        let sketch = vec![0x5a; 64];
        let block = one_sketched_entry(b"a", 3, sketch.clone());
        let mut want = vec![0x01, 0xc0, 0x01, 0x61, 0x06, 5, 0, 0, 0, 0, 0, 0, 0, 0x40];
        want.extend_from_slice(&sketch);
        assert_eq!(block[4..], want[..]);
    }

    /// An uncompressed docs block with sketch flags of one live entry: `id` of fingerprint 5
    /// inserted by `batch`, with `sketch`.
    fn one_sketched_entry(id: &[u8], batch: u64, sketch: Vec<u8>) -> Vec<u8> {
        let mut writer = EntryWriter::new(Keys::IdHashes).with_sketch_flags();
        let mut blocks = Vec::new();
        let mut emit = |_: &[u8], block: &[u8]| {
            blocks.push(block.to_vec());
            Ok(())
        };
        let state = DocState::Live {
            fingerprint: 5,
            batch,
        };
        let payload = SketchedDoc {
            state,
            sketch: Some(sketch),
        };
        writer.push(id_hash(id), id, &payload, &mut emit).unwrap();
        writer.finish(&mut emit).unwrap();
        blocks.pop().unwrap()
    }

    /// A source of sketches that holds ordinals `first..` of an area, for the tests.
    struct Area {
        first: u64,
        sketches: Vec<Vec<u8>>,
    }

    impl entries::SketchSource for Area {
        fn read(&self, first: u64, count: usize, out: &mut Vec<u8>) -> Result<()> {
            let at = (first - self.first) as usize;
            for sketch in &self.sketches[at..at + count] {
                out.extend_from_slice(sketch);
            }
            Ok(())
        }
        fn sketch_bytes(&self) -> usize {
            self.sketches[0].len()
        }
    }

    /// Docs blocks of a sketch area (format 10) hold their sketches' place, not their bytes:
    /// written in pieces (each writer counting from 0, a merge shifting the later ones), they
    /// read back with the sketches the area holds, as states without it, and a read that
    /// wants the sketches without the area is refused.
    #[test]
    fn blocks_of_a_sketch_area_read_back_their_sketches() {
        let docs: Vec<(u64, String, SketchedDoc)> = {
            let mut docs: Vec<(u64, String, SketchedDoc)> = (0..3000u64)
                .map(|i| {
                    let id = format!("https://example.com/{i}");
                    let state = match i % 7 {
                        6 => DocState::Deleted { batch: i },
                        _ => DocState::Live {
                            fingerprint: i * 31,
                            batch: i % 5,
                        },
                    };
                    let sketch = (i % 3 != 0 && i % 7 != 6).then(|| vec![(i % 251) as u8; 64]);
                    (id_hash(id.as_bytes()), id, SketchedDoc { state, sketch })
                })
                .collect();
            docs.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            docs
        };
        let (mut blocks, mut area) = (Vec::new(), Vec::new());
        for part in docs.chunks(1000) {
            let mut writer = EntryWriter::new(Keys::IdHashes)
                .with_sketch_area(64)
                .compressed();
            let before = area.len() as u64;
            let first_block = blocks.len();
            let mut emit = |_: &[u8], block: &[u8]| {
                blocks.push(block.to_vec());
                Ok(())
            };
            for (hash, id, doc) in part {
                writer.push(*hash, id.as_bytes(), doc, &mut emit).unwrap();
            }
            writer
                .drain_sketches(|s| {
                    area.extend(s.chunks(64).map(<[u8]>::to_vec));
                    Ok(())
                })
                .unwrap();
            writer.finish(&mut emit).unwrap();
            for block in &mut blocks[first_block..] {
                crate::format::block::entry_writer::shift_area(block, before).unwrap();
            }
        }
        assert!(blocks.len() > 3);
        let source = Area {
            first: 0,
            sketches: area,
        };
        let (mut sketched, mut states) = (Vec::new(), Vec::new());
        for block in &blocks {
            entries::decode_from::<SketchedDoc>(block, Some(&source), |_, id, doc| {
                sketched.push((id.to_string(), doc));
                true
            })
            .unwrap();
            entries::decode::<DocState>(block, |_, _, state| {
                states.push(state);
                true
            })
            .unwrap();
            let err = entries::decode::<SketchedDoc>(block, |_, _, _| true);
            let marked = entries::sketch_area_of(block).unwrap().unwrap().1 > 0;
            assert_eq!(err.is_err(), marked, "{err:?}");
        }
        let want: Vec<(String, SketchedDoc)> = docs
            .iter()
            .map(|(_, id, d)| (id.clone(), d.clone()))
            .collect();
        assert_eq!(sketched, want);
        let want: Vec<DocState> = docs.iter().map(|(_, _, d)| d.state).collect();
        assert_eq!(states, want);
    }

    /// docs/format.md's example of a docs block of a sketch area, byte for byte, and a mark
    /// other than 0 and 1, or a count of sketches the entries do not mark, is damage.
    #[test]
    fn a_block_of_a_sketch_area_is_as_the_format_says() {
        let write = |sketch: Option<Vec<u8>>| {
            let mut writer = EntryWriter::new(Keys::IdHashes).with_sketch_area(64);
            let mut blocks = Vec::new();
            let mut emit = |_: &[u8], block: &[u8]| {
                blocks.push(block.to_vec());
                Ok(())
            };
            let state = DocState::Live {
                fingerprint: 5,
                batch: 3,
            };
            let payload = SketchedDoc { state, sketch };
            writer
                .push(id_hash(b"a"), b"a", &payload, &mut emit)
                .unwrap();
            writer.finish(&mut emit).unwrap();
            let mut block = blocks.pop().unwrap();
            crate::format::block::entry_writer::shift_area(&mut block, 7).unwrap();
            block
        };
        let block = write(Some(vec![0x5a; 64]));
        let mut want = vec![0x01, 0xe0, 7, 0, 0, 0, 0, 0, 0, 0, 1, 0];
        want.extend_from_slice(&[0x01, 0x61, 0x06, 5, 0, 0, 0, 0, 0, 0, 0, 0x01]);
        assert_eq!(block[4..], want[..]);
        let source = Area {
            first: 7,
            sketches: vec![vec![0x5a; 64]],
        };
        let reseal = |mut block: Vec<u8>| {
            let crc = crc32fast::hash(&block[4..]);
            block[..4].copy_from_slice(&crc.to_le_bytes());
            block
        };
        let decode = |block: &[u8]| {
            entries::decode_from::<SketchedDoc>(block, Some(&source), |_, _, _| true)
        };
        assert!(decode(&block).is_ok());
        let mut bad_mark = block.clone();
        *bad_mark.last_mut().unwrap() = 2;
        let err = decode(&reseal(bad_mark)).unwrap_err();
        assert!(err.to_string().contains("sketch mark 2"), "{err}");
        // k says 0 where the entry is marked; k says 1 where it is not.
        let mut none_counted = block.clone();
        none_counted[14] = 0;
        assert!(decode(&reseal(none_counted)).is_err());
        let unmarked = write(None);
        let mut one_counted = unmarked.clone();
        one_counted[14] = 1;
        assert!(decode(&reseal(one_counted)).is_err());
        assert!(decode(&unmarked).is_ok());
    }

    /// A writer with a sketch area refuses a sketch of another size than the area's: it
    /// would move every later one from its ordinal.
    #[test]
    fn a_sketch_of_another_size_is_refused() {
        let mut writer = EntryWriter::new(Keys::IdHashes).with_sketch_area(64);
        let mut emit = |_: &[u8], _: &[u8]| Ok(());
        let doc = |len: usize| SketchedDoc {
            state: DocState::Live {
                fingerprint: 1,
                batch: 0,
            },
            sketch: Some(vec![1; len]),
        };
        let (a, b) = (b"a", b"b");
        let ((ha, a), (hb, b)) = if id_hash(a) < id_hash(b) {
            ((id_hash(a), a), (id_hash(b), b))
        } else {
            ((id_hash(b), b), (id_hash(a), a))
        };
        writer.push(ha, a, &doc(64), &mut emit).unwrap();
        let err = writer.push(hb, b, &doc(128), &mut emit).unwrap_err();
        assert!(err.to_string().contains("a sketch of 128 bytes"), "{err}");
    }

    /// A sketch length of 1 to MIN_BYTES - 1, or above MAX_BYTES, is damage, named as such.
    #[test]
    fn a_sketch_of_a_wrong_length_is_refused() {
        for len in [1usize, 63, 1025] {
            let block = one_sketched_entry(b"x", 1, vec![1; len]);
            let err = entries::decode::<DocState>(&block, |_, _, _| true).unwrap_err();
            assert!(
                err.to_string().contains(&format!("sketch of {len} bytes")),
                "{err}"
            );
        }
    }
}
