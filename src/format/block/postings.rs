//! Posting blocks: the ids of each fingerprint, ordered by `(fingerprint, id)`.
//!
//! An entry block (see [`super::entries`]) whose key is the fingerprint. Its payload is, in a
//! block without sketch flags, `LEB128(batch)`, the batch that inserted the document (format 3
//! on; format 2's payload was empty). The batch is the docs entry's, copied: the posting is
//! the document's second copy, from which repair restores a lost docs entry exactly.
//!
//! In a store with sketches, format 7 writes its postings blocks with sketch flags (bit 14 of
//! the entry count): the payload is `LEB128(batch << 1 | s)`, then, when s = 1, the
//! document's sketch as `LEB128(n)` and n bytes. The sketch lives with the posting instead of
//! in an entry of its own that repeats the fingerprint and the id (formats 4 to 6).

use super::entries::{Payload, PayloadReader};
use super::sketches::{MAX_BYTES, MIN_BYTES};
use crate::error::{Error, Result};

/// A posting's payload: the batch of the document `(fingerprint, id)`. It reads blocks with
/// sketch flags too, passing over their sketches; it writes blocks without them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    pub batch: u64,
}

impl Payload for Posting {
    fn encode(&self, out: &mut Vec<u8>) {
        super::varint::encode(self.batch, out);
    }

    fn decode(reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
        Ok(Posting {
            batch: read_borrowed(reader)?.0,
        })
    }
}

/// A posting with its document's sketch, where it has one: the payload of postings blocks
/// with sketch flags (format 7), which it must be written into (see
/// [`super::entry_writer::EntryWriter::with_sketch_flags`]). It reads any postings block (one
/// without flags has no sketches).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SketchedPosting {
    pub batch: u64,
    pub sketch: Option<Vec<u8>>,
}

impl Payload for SketchedPosting {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_sketched(self.batch, self.sketch.as_deref(), out);
    }

    fn decode(reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
        let (batch, sketch) = read_borrowed(reader)?;
        Ok(SketchedPosting {
            batch,
            sketch: sketch.map(<[u8]>::to_vec),
        })
    }
}

/// Appends the payload of a posting with sketch flags.
fn encode_sketched(batch: u64, sketch: Option<&[u8]>, out: &mut Vec<u8>) {
    debug_assert!(batch < 1 << 63, "batch numbers leave the flag's bit free");
    super::varint::encode(batch << 1 | u64::from(sketch.is_some()), out);
    if let Some(sketch) = sketch {
        super::varint::encode(sketch.len() as u64, out);
        out.extend_from_slice(sketch);
    }
}

/// The bytes a sketch of `len` bytes adds to a posting with sketch flags: its length and
/// itself (what a run's catalog entry counts as its sketches' bytes in format 7).
pub fn sketch_bytes_in_posting(len: usize) -> u64 {
    let mut length = Vec::new();
    super::varint::encode(len as u64, &mut length);
    (length.len() + len) as u64
}

/// A posting's payload `(batch, sketch)` in any postings block, the sketch borrowed from the
/// block: None in a block without sketch flags or for a posting without one.
pub fn read_borrowed<'a>(reader: &mut PayloadReader<'_, 'a>) -> Result<(u64, Option<&'a [u8]>)> {
    let value = reader.varint()?;
    if !reader.sketch_flags() {
        return Ok((value, None));
    }
    if value & 1 == 0 {
        return Ok((value >> 1, None));
    }
    let len = reader.varint()?;
    if !(u64::from(MIN_BYTES)..=u64::from(MAX_BYTES)).contains(&len) {
        return Err(Error::corrupt(format!(
            "posting with a sketch of {len} bytes (a sketch has {MIN_BYTES} to {MAX_BYTES})"
        )));
    }
    Ok((value >> 1, Some(reader.take(len as usize)?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::block::entries::{self, Keys};
    use crate::format::block::entry_writer::EntryWriter;

    /// Postings written with sketch flags read back with their sketches, and as plain
    /// postings with their batches; a block without flags reads as postings without sketches.
    #[test]
    fn sketched_postings_read_back_either_way() {
        let sketch = vec![7u8; 128];
        let entries = [
            (1u64, "a", 0u64, Some(sketch.clone())),
            (1, "b", 63, None),
            (2, "a", 64, Some(sketch.clone())),
            (u64::MAX, "z", 1 << 40, None),
        ];
        for flags in [true, false] {
            let mut writer = EntryWriter::new(Keys::Stored);
            if flags {
                writer = writer.with_sketch_flags();
            }
            let mut blocks = Vec::new();
            let mut emit = |_: &[u8], block: &[u8]| {
                blocks.push(block.to_vec());
                Ok(())
            };
            for (fp, id, batch, sketch) in &entries {
                if flags {
                    let payload = SketchedPosting {
                        batch: *batch,
                        sketch: sketch.clone(),
                    };
                    writer
                        .push(*fp, id.as_bytes(), &payload, &mut emit)
                        .unwrap();
                } else {
                    let payload = Posting { batch: *batch };
                    writer
                        .push(*fp, id.as_bytes(), &payload, &mut emit)
                        .unwrap();
                }
            }
            writer.finish(&mut emit).unwrap();
            assert_eq!(blocks.len(), 1);
            let (mut sketched, mut plain) = (Vec::new(), Vec::new());
            entries::decode::<SketchedPosting>(&blocks[0], |fp, id, p| {
                sketched.push((fp, id.to_string(), p.batch, p.sketch));
                true
            })
            .unwrap();
            entries::decode::<Posting>(&blocks[0], |fp, id, p| {
                plain.push((fp, id.to_string(), p.batch));
                true
            })
            .unwrap();
            let want: Vec<_> = entries
                .iter()
                .map(|(fp, id, batch, sketch)| {
                    (
                        *fp,
                        id.to_string(),
                        *batch,
                        sketch.clone().filter(|_| flags),
                    )
                })
                .collect();
            assert_eq!(sketched, want, "flags {flags}");
            let want: Vec<_> = entries
                .iter()
                .map(|(fp, id, batch, _)| (*fp, id.to_string(), *batch))
                .collect();
            assert_eq!(plain, want, "flags {flags}");
        }
        assert_eq!(sketch_bytes_in_posting(128), 130);
        assert_eq!(sketch_bytes_in_posting(64), 65);
    }
}
