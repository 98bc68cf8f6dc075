//! Sketch blocks: each document's verification sketch (see [`crate::similarity::sketch`]),
//! ordered by `(fingerprint, id)` as postings are.
//!
//! An entry block (see [`super::entries`]) whose key is the fingerprint and whose payload is
//! `LEB128(batch)`, `LEB128(n)`, then the n sketch bytes (format 4). The batch is the
//! posting's: a sketch belongs to the posting `(fingerprint, id, batch)` of the same run, and a
//! run's sketches are those of a subset of its postings (documents inserted as bare
//! fingerprints have none).

use super::entries::{Payload, PayloadReader};
use crate::error::{Error, Result};

/// The fewest bytes a sketch may have.
pub const MIN_BYTES: u16 = 64;
/// The most bytes a sketch may have.
pub const MAX_BYTES: u16 = 1024;

/// A sketch entry's payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SketchEntry {
    pub batch: u64,
    pub sketch: Vec<u8>,
}

impl Payload for SketchEntry {
    fn encode(&self, out: &mut Vec<u8>) {
        super::varint::encode(self.batch, out);
        super::varint::encode(self.sketch.len() as u64, out);
        out.extend_from_slice(&self.sketch);
    }

    fn decode(reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
        let (batch, sketch) = read_borrowed(reader)?;
        Ok(SketchEntry {
            batch,
            sketch: sketch.to_vec(),
        })
    }
}

/// Refuses a stored sketch that is not of the store's size, `bytes`.
pub fn check_size(sketch: &[u8], bytes: usize) -> Result<()> {
    if sketch.len() == bytes {
        return Ok(());
    }
    Err(Error::corrupt(format!(
        "a sketch of {} bytes in a store of {bytes}-byte sketches",
        sketch.len()
    )))
}

/// A sketch entry's payload `(batch, sketch)`, the sketch borrowed from the block (for
/// [`super::entries::decode_each`], which copies only what is kept).
pub fn read_borrowed<'a>(reader: &mut PayloadReader<'_, 'a>) -> Result<(u64, &'a [u8])> {
    let batch = reader.varint()?;
    let len = reader.varint()?;
    if !(u64::from(MIN_BYTES)..=u64::from(MAX_BYTES)).contains(&len) {
        return Err(Error::corrupt(format!(
            "sketch entry of {len} bytes (a sketch has {MIN_BYTES} to {MAX_BYTES})"
        )));
    }
    Ok((batch, reader.take(len as usize)?))
}
