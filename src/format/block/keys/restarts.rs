//! Key blocks of formats 3 and 4: LEB128 deltas with a full key every 64 keys.
//!
//! ```text
//! offset      size  field
//! 0           4     crc32 (IEEE) of bytes 4..end, little-endian
//! 4           2     n: number of keys (u16 LE), >= 1
//! 6           2     r: number of restart points = ceil(n / RESTART_INTERVAL) (u16 LE)
//! 8           8*r   restart keys: keys 0, 64, 128, ... in full (u64 LE each)
//! 8+8r        2*r   restart offsets: where each group's deltas start in the delta area (u16 LE)
//! 8+10r       ...   delta area: for every key that is not a restart key, LEB128(key - previous key)
//! ```
//! A probe binary-searches the restart keys and decodes at most one group of 64 keys before
//! reaching its range.

use crate::error::{Error, Result};
use crate::format::block::{seal, varint, Reader, CRC_BYTES, TARGET_BYTES};

/// Keys per restart group.
pub const RESTART_INTERVAL: usize = 64;

const HEADER_BYTES: usize = CRC_BYTES + 4;
const RESTART_BYTES: usize = 10;

/// Cuts strictly increasing `keys` into blocks and hands each to `emit(last_key, block)`.
/// A block takes keys while they fit in [`TARGET_BYTES`] (and at least one).
pub fn encode(keys: &[u64], mut emit: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
    let mut block = Vec::with_capacity(TARGET_BYTES + 16);
    // Varints are written in place, each with room for its longest form after it.
    let mut deltas = vec![0u8; TARGET_BYTES + varint::MAX_BYTES];
    let mut restarts: Vec<(u64, u16)> = Vec::with_capacity(TARGET_BYTES / RESTART_BYTES + 1);
    let mut start = 0;
    while start < keys.len() {
        restarts.clear();
        let max_end = keys.len().min(start + usize::from(u16::MAX));
        // Bytes of deltas written, and the most the block has room for with the restart
        // points so far.
        let mut used = 0;
        let room =
            |restarts: usize| TARGET_BYTES.saturating_sub(HEADER_BYTES + RESTART_BYTES * restarts);
        let mut end = start;
        'block: while end < max_end {
            // A restart point: the group's first key in full.
            if end > start && used > room(restarts.len() + 1) {
                break;
            }
            restarts.push((keys[end], used as u16));
            let limit = room(restarts.len());
            end += 1;
            let group_end = max_end.min(end + RESTART_INTERVAL - 1);
            if limit - used >= (group_end - end) * varint::MAX_BYTES {
                // The whole group fits whatever its deltas: no check per key.
                for i in end..group_end {
                    used += varint::encode_into(keys[i] - keys[i - 1], &mut deltas[used..]);
                }
                end = group_end;
            } else {
                while end < group_end {
                    let len = varint::encode_into(keys[end] - keys[end - 1], &mut deltas[used..]);
                    if used + len > limit {
                        break 'block;
                    }
                    used += len;
                    end += 1;
                }
            }
        }
        block.clear();
        block.extend_from_slice(&[0; CRC_BYTES]);
        block.extend_from_slice(&((end - start) as u16).to_le_bytes());
        block.extend_from_slice(&(restarts.len() as u16).to_le_bytes());
        for &(key, _) in &restarts {
            block.extend_from_slice(&key.to_le_bytes());
        }
        for &(_, offset) in &restarts {
            block.extend_from_slice(&offset.to_le_bytes());
        }
        block.extend_from_slice(&deltas[..used]);
        seal(&mut block);
        emit(keys[end - 1], &block)?;
        start = end;
    }
    Ok(())
}

/// A checked view of one key block.
pub struct RestartBlock<'a> {
    n: usize,
    restart_keys: &'a [u8],
    restart_offsets: &'a [u8],
    deltas: &'a [u8],
}

impl<'a> RestartBlock<'a> {
    /// Checks the header of a block's bytes after its checksum.
    pub fn parse(body: &'a [u8]) -> Result<Self> {
        let mut reader = Reader::new(body);
        let n = usize::from(reader.u16()?);
        let r = usize::from(reader.u16()?);
        if n == 0 || r != n.div_ceil(RESTART_INTERVAL) {
            return Err(Error::corrupt(format!(
                "key block header says {n} keys in {r} restart groups"
            )));
        }
        let restart_keys = reader.take(8 * r)?;
        let restart_offsets = reader.take(2 * r)?;
        let deltas = &body[reader.pos..];
        Ok(RestartBlock {
            n,
            restart_keys,
            restart_offsets,
            deltas,
        })
    }

    /// Number of keys in the block.
    pub fn len(&self) -> usize {
        self.n
    }

    /// The block's first key.
    pub fn first(&self) -> u64 {
        self.restart_key(0)
    }

    fn restart_key(&self, g: usize) -> u64 {
        u64::from_le_bytes(self.restart_keys[8 * g..8 * g + 8].try_into().expect("8"))
    }

    /// Calls `f` on every key in `lo..=hi`, in order.
    pub fn for_each_in(&self, lo: u64, hi: u64, mut f: impl FnMut(u64)) -> Result<()> {
        let groups = self.restart_offsets.len() / 2;
        // Binary search for the last group whose first key is <= lo (or group 0).
        let (mut below, mut above) = (0, groups);
        while below < above {
            let mid = (below + above) / 2;
            if self.restart_key(mid) <= lo {
                below = mid + 1;
            } else {
                above = mid;
            }
        }
        for g in below.saturating_sub(1)..groups {
            let whole = self.decode_group(g, |key| {
                if key > hi {
                    return false;
                }
                if key >= lo {
                    f(key);
                }
                true
            })?;
            if !whole {
                break;
            }
        }
        Ok(())
    }

    /// Decodes group `g`, calling `f` until it returns false; returns whether the whole group
    /// was visited.
    fn decode_group(&self, g: usize, mut f: impl FnMut(u64) -> bool) -> Result<bool> {
        let groups = self.restart_offsets.len() / 2;
        let offset = |g: usize| {
            usize::from(u16::from_le_bytes(
                self.restart_offsets[2 * g..2 * g + 2]
                    .try_into()
                    .expect("2"),
            ))
        };
        let start = offset(g);
        let end = if g + 1 < groups {
            offset(g + 1)
        } else {
            self.deltas.len()
        };
        if start > end || end > self.deltas.len() {
            return Err(Error::corrupt("key block restart offsets out of order"));
        }
        let count = (self.n - g * RESTART_INTERVAL).min(RESTART_INTERVAL);
        let mut key = self.restart_key(g);
        if g > 0 && key <= self.restart_key(g - 1) {
            return Err(Error::corrupt("key block restart keys do not increase"));
        }
        if !f(key) {
            return Ok(false);
        }
        let mut reader = Reader::new(&self.deltas[start..end]);
        for _ in 1..count {
            let delta = reader.varint()?;
            key = key
                .checked_add(delta)
                .filter(|_| delta > 0)
                .ok_or_else(|| Error::corrupt("key block deltas do not increase"))?;
            if !f(key) {
                return Ok(false);
            }
        }
        if !reader.is_empty() {
            return Err(Error::corrupt("key block group has trailing bytes"));
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::block::keys::KeyBlock;
    use proptest::prelude::*;

    fn blocks_of(keys: &[u64]) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        encode(keys, |last, b| {
            out.push((last, b.to_vec()));
            Ok(())
        })
        .unwrap();
        out
    }

    /// The encoder as first written, a check per key: the blocks `encode` must write.
    fn blocks_checking_every_key(keys: &[u64]) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        let mut start = 0;
        while start < keys.len() {
            let (mut restarts, mut deltas) = (Vec::new(), Vec::new());
            let size = |r: usize, d: usize| HEADER_BYTES + RESTART_BYTES * r + d;
            let mut end = start;
            while end < keys.len().min(start + usize::from(u16::MAX)) {
                if (end - start) % RESTART_INTERVAL == 0 {
                    if end > start && size(restarts.len() + 1, deltas.len()) > TARGET_BYTES {
                        break;
                    }
                    restarts.push((keys[end], deltas.len() as u16));
                } else {
                    let before = deltas.len();
                    varint::encode(keys[end] - keys[end - 1], &mut deltas);
                    if size(restarts.len(), deltas.len()) > TARGET_BYTES {
                        deltas.truncate(before);
                        break;
                    }
                }
                end += 1;
            }
            let mut block = vec![0; CRC_BYTES];
            block.extend_from_slice(&((end - start) as u16).to_le_bytes());
            block.extend_from_slice(&(restarts.len() as u16).to_le_bytes());
            restarts
                .iter()
                .for_each(|(k, _)| block.extend_from_slice(&k.to_le_bytes()));
            restarts
                .iter()
                .for_each(|(_, o)| block.extend_from_slice(&o.to_le_bytes()));
            block.extend_from_slice(&deltas);
            seal(&mut block);
            out.push((keys[end - 1], block));
            start = end;
        }
        out
    }

    proptest! {
        #[test]
        fn blocks_are_those_of_a_check_per_key(
            mut keys in proptest::collection::vec(any::<u64>(), 1..5000),
            dense in any::<bool>(),
            cluster in 0usize..5000,
        ) {
            // Dense keys have one-byte deltas (blocks of many groups); a cluster of close keys
            // among spread ones changes delta sizes within a block.
            if dense {
                let mut sum = 0u64;
                keys.iter_mut().for_each(|k| { sum += *k % 200 + 1; *k = sum; });
            }
            let cluster = cluster.min(keys.len());
            keys[..cluster].iter_mut().for_each(|k| *k %= 100_000);
            keys.sort_unstable();
            keys.dedup();
            prop_assert_eq!(blocks_of(&keys), blocks_checking_every_key(&keys));
        }

        #[test]
        fn decodes_what_it_encodes(mut keys in proptest::collection::vec(any::<u64>(), 1..3000), lo: u64, hi: u64) {
            keys.sort_unstable();
            keys.dedup();
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            let blocks = blocks_of(&keys);
            let mut all = Vec::new();
            let mut ranged = Vec::new();
            for (last, bytes) in &blocks {
                prop_assert!(bytes.len() <= TARGET_BYTES);
                let block = KeyBlock::parse(bytes).unwrap();
                prop_assert_eq!(block.for_each(|k| all.push(k)).unwrap(), *last);
                block.for_each_in(lo, hi, |k| ranged.push(k)).unwrap();
            }
            prop_assert_eq!(&all, &keys);
            let expected: Vec<u64> = keys.iter().copied().filter(|k| (lo..=hi).contains(k)).collect();
            prop_assert_eq!(ranged, expected);
        }

        #[test]
        fn any_flipped_byte_is_detected(mut keys in proptest::collection::vec(any::<u64>(), 1..500), at: usize, bit in 0u8..8) {
            keys.sort_unstable();
            keys.dedup();
            let (_, mut bytes) = blocks_of(&keys).remove(0);
            let at = at % bytes.len();
            bytes[at] ^= 1 << bit;
            prop_assert!(KeyBlock::parse(&bytes).is_err());
        }
    }

    #[test]
    fn extreme_keys_round_trip() {
        let keys = [0, 1, u64::MAX - 1, u64::MAX];
        let blocks = blocks_of(&keys);
        let mut all = Vec::new();
        for (_, b) in &blocks {
            KeyBlock::parse(b)
                .unwrap()
                .for_each(|k| all.push(k))
                .unwrap();
        }
        assert_eq!(all, keys);
    }
}
