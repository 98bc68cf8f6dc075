//! Key blocks: a strictly increasing run of permuted u64 keys, in one of two layouts.
//!
//! Format 5 writes [`elias_fano`] blocks; formats 3 and 4 wrote [`restarts`] blocks, which
//! stores of those formats keep writing so that older builds keep opening them. A block names
//! its layout: bytes 6..8 (after the checksum and the key count) are 0 in an Elias-Fano block
//! and never 0 in a restart block, where they count its restart groups.

mod elias_fano;
mod restarts;

use self::elias_fano::EliasFanoBlock;
use self::restarts::RestartBlock;
use super::unseal;
use crate::error::Result;

/// How a writer lays out key blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyCodec {
    /// Formats 3 and 4: LEB128 deltas with a full key every 64 keys.
    Restarts,
    /// Format 5: Elias-Fano, about 2 + log2(gap) bits a key.
    EliasFano,
}

/// Cuts strictly increasing `keys` into blocks of `codec`'s layout and hands each to
/// `emit(last_key, block)`. A block holds at least one key and fits in
/// [`TARGET_BYTES`](super::TARGET_BYTES); every block but the last would pass it with its
/// next key.
pub fn encode(
    codec: KeyCodec,
    keys: &[u64],
    emit: impl FnMut(u64, &[u8]) -> Result<()>,
) -> Result<()> {
    match codec {
        KeyCodec::Restarts => restarts::encode(keys, emit),
        KeyCodec::EliasFano => elias_fano::encode(keys, emit),
    }
}

/// A checked view of one key block, of either layout.
pub enum KeyBlock<'a> {
    /// A block of formats 3 and 4.
    Restarts(RestartBlock<'a>),
    /// A block of format 5.
    EliasFano(EliasFanoBlock<'a>),
}

impl<'a> KeyBlock<'a> {
    /// Verifies the checksum and the header of a block.
    pub fn parse(block: &'a [u8]) -> Result<Self> {
        let body = unseal(block)?;
        Ok(if body.get(2..4) == Some(&[0, 0]) {
            KeyBlock::EliasFano(EliasFanoBlock::parse(body)?)
        } else {
            KeyBlock::Restarts(RestartBlock::parse(body)?)
        })
    }

    /// Number of keys in the block.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub fn len(&self) -> usize {
        match self {
            KeyBlock::Restarts(b) => b.len(),
            KeyBlock::EliasFano(b) => b.len(),
        }
    }

    /// The block's first key (stored in full in either layout).
    pub fn first(&self) -> u64 {
        match self {
            KeyBlock::Restarts(b) => b.first(),
            KeyBlock::EliasFano(b) => b.first(),
        }
    }

    /// Always false: a block holds at least one key.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Calls `f` on every key in `lo..=hi`, in order, checking that the keys it decodes
    /// strictly increase.
    pub fn for_each_in(&self, lo: u64, hi: u64, f: impl FnMut(u64)) -> Result<()> {
        match self {
            KeyBlock::Restarts(b) => b.for_each_in(lo, hi, f),
            KeyBlock::EliasFano(b) => b.for_each_in(lo, hi, f),
        }
    }

    /// Calls `f` on every key of the block, in order, checking that keys strictly increase;
    /// returns the last key.
    pub fn for_each(&self, mut f: impl FnMut(u64)) -> Result<u64> {
        let mut last = 0;
        self.for_each_in(0, u64::MAX, |key| {
            last = key;
            f(key)
        })?;
        Ok(last)
    }
}
