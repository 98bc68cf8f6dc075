//! Compressed entry blocks (format 8: docs blocks): the entries area of a block stored as a
//! zstd frame when that saves at least an eighth of its bytes.
//!
//! ```text
//! offset  size  field
//! 0       4     crc32 (IEEE) of bytes 4..end, little-endian
//! 4       2     n and flags as in an entry block, with bit 12 set
//! 6       ...   LEB128(raw length), then a zstd frame (level 1, content size, no checksum)
//!               that decompresses to exactly raw length bytes: the n entries as an entry
//!               block without bit 12 holds them
//! ```
//! The checksum covers the stored bytes, as in every block; the entries are checked as
//! usual once decompressed. Ids repeat what their neighbours hold (a crawl's hosts and
//! paths, a numbering's leading digits), which a block of ~60 URLs or ~200 short ids shows a
//! compressor, and zstd's entropy coding takes the digits of numbered ids down to their
//! information.

use std::cell::RefCell;

use super::{varint, TARGET_BYTES};
use crate::error::{Error, Result};

/// Bit 12 of a block's entry count: the entries are compressed.
pub(super) const COMPRESSED: u16 = 1 << 12;

/// The most bytes a compressed block's entries may take once decompressed: a reader refuses
/// more (a damaged or hostile length must not allocate at will). A writer never compresses
/// a block larger (one entry larger than a block's target makes a block of its own).
const MOST_RAW_BYTES: usize = 1 << 20;

/// zstd's fastest level: a block compresses in microseconds, and higher levels took off
/// under 3% more (docs/benchmarks.md, "Compressed docs blocks").
const LEVEL: i32 = 1;

/// The most a block's entries are let grow past [`TARGET_BYTES`] so that they compress to
/// what [`next_cut`] aims at: a lookup decompresses its whole block.
pub(super) const MOST_RATIO: usize = 3;

/// The bytes at which a writer cuts its next block, after one of `raw` bytes whose entries
/// compressed to a block of `squeezed` bytes (None: it was stored as it was): what would have
/// compressed to a little under half of [`TARGET_BYTES`] at the same ratio, so that two
/// blocks share a redb page. Blocks of a whole page each took 1% (numbered ids) to 3%
/// (URLs) fewer bytes, and a lookup, which decompresses its whole block, 2x the time to
/// decompress it (docs/benchmarks.md, "Compressed docs blocks").
pub(super) fn next_cut(raw: usize, squeezed: Option<usize>) -> usize {
    match squeezed {
        Some(squeezed) if squeezed > 0 => {
            let fits = TARGET_BYTES * 15 / 32 * raw / squeezed;
            fits.clamp(TARGET_BYTES / 2, MOST_RATIO * TARGET_BYTES)
        }
        _ => TARGET_BYTES,
    }
}

/// Compresses the entries areas of one writer's blocks.
pub(super) struct Squeezer(zstd::bulk::Compressor<'static>);

impl Squeezer {
    pub(super) fn new() -> Self {
        Squeezer(zstd::bulk::Compressor::new(LEVEL).expect("zstd level 1 exists"))
    }

    /// The bytes that replace the entries area `raw` (LEB128 of its length, then its zstd
    /// frame), if they save at least an eighth of its bytes but its `passengers` (bytes that
    /// do not compress: see [`super::entries::Payload::passenger_bytes`]).
    pub(super) fn squeeze(&mut self, raw: &[u8], passengers: usize) -> Option<Vec<u8>> {
        if raw.len() > MOST_RAW_BYTES {
            return None;
        }
        let frame = self.0.compress(raw).ok()?;
        let mut out = Vec::with_capacity(frame.len() + varint::MAX_BYTES);
        varint::encode(raw.len() as u64, &mut out);
        out.extend_from_slice(&frame);
        let counted = raw.len().saturating_sub(passengers);
        (out.len() + counted / 8 <= raw.len()).then_some(out)
    }
}

thread_local! {
    /// Each thread's decompression context: making one costs more than a block's decoding.
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// The entries area of a compressed block, from the bytes after its count.
pub(super) fn expand(stored: &[u8]) -> Result<Vec<u8>> {
    let (raw, used) = varint::decode(stored)
        .ok_or_else(|| Error::corrupt("compressed block holds a truncated length"))?;
    let raw = usize::try_from(raw)
        .ok()
        .filter(|&r| (1..=MOST_RAW_BYTES).contains(&r))
        .ok_or_else(|| {
            Error::corrupt(format!(
                "compressed block says its entries take {raw} bytes (1 to {MOST_RAW_BYTES})"
            ))
        })?;
    let frame = &stored[used..];
    let out = DECOMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.is_none() {
            let made = zstd::bulk::Decompressor::new()
                .map_err(|e| Error::corrupt(format!("zstd: {e}")))?;
            *cell = Some(made);
        }
        let decompressor = cell.as_mut().expect("made above");
        decompressor
            .decompress(frame, raw)
            .map_err(|e| Error::corrupt(format!("compressed block does not decompress: {e}")))
    })?;
    if out.len() != raw {
        return Err(Error::corrupt(format!(
            "compressed block decompresses to {} bytes, not the {raw} it says",
            out.len()
        )));
    }
    Ok(out)
}
