//! Key blocks of format 5: the first key in full, the rest Elias-Fano coded.
//!
//! ```text
//! offset  size  field
//! 0       4     crc32 (IEEE) of bytes 4..end, little-endian
//! 4       2     n: number of keys (u16 LE), >= 1
//! 6       2     0: the layout's mark (a restart block counts its groups here, never 0)
//! 8       8     the first key (u64 LE)
//! 16      1     l: low bits of each later key, 0..=63
//! 17      L     low bits, L = ceil((n - 1) * l / 8): for keys i = 1..n, the low l bits of
//!               v_i = key_i - first - 1, packed from the least significant bit of byte 17 on
//! 17+L    H     high bits: for i = 1..n, bit (v_i >> l) + (i - 1) is set, every other bit
//!               is 0 (bits counted from the least significant of the area's first byte); the
//!               area ends with the byte that holds the last set bit (H = 0 when n = 1)
//! ```
//! With l = floor(log2((v_last + 1) / (n - 1))), a key costs at most log2 of the mean gap
//! plus 2 bits: within a bit of the entropy of a random sorted set. A probe skips to its bucket by counting the
//! zeros of the high bits a word at a time, then decodes forward.

use crate::error::{Error, Result};
use crate::format::block::{seal, Reader, CRC_BYTES, TARGET_BYTES};

/// Checksum, n, the mark, the first key and l.
const HEADER_BYTES: usize = CRC_BYTES + 2 + 2 + 8 + 1;

/// Low bits per value for `m` values of which the largest is `v_last`.
fn low_bits(m: usize, v_last: u64) -> u32 {
    if m == 0 {
        return 0;
    }
    // Values are distinct, so v_last + 1 >= m and the ratio is at least 1.
    let ratio = (v_last + 1) / m as u64;
    63 - ratio.leading_zeros()
}

/// Bytes of the high-bit area for `m` values of which the largest is `v_last`.
fn high_bytes(m: usize, v_last: u64, l: u32) -> usize {
    if m == 0 {
        0
    } else {
        ((v_last >> l) as usize + m - 1) / 8 + 1
    }
}

/// Bytes of a block of a first key and `m` more, the last `v_last + 1` above the first.
fn block_bytes(m: usize, v_last: u64) -> usize {
    let l = low_bits(m, v_last);
    HEADER_BYTES + (m * l as usize).div_ceil(8) + high_bytes(m, v_last, l)
}

/// Cuts strictly increasing `keys` into blocks and hands each to `emit(last_key, block)`.
/// Each block fits in [`TARGET_BYTES`] and, but for the last, would not with its next key. A
/// block grows by about a key's bits with each key, so its end is found by doubling, then
/// halving, a step of keys: a few dozen size computations a block, not one a key.
pub fn encode(keys: &[u64], mut emit: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
    let mut block = Vec::with_capacity(TARGET_BYTES + 16);
    let mut start = 0;
    while start < keys.len() {
        let first = keys[start];
        let max_end = keys.len().min(start + usize::from(u16::MAX));
        // Key e fits when the block of keys[start..=e] does. The block ending at key lo - 1
        // fits (one key always does); `hi` is max_end or a key that does not fit. Size is not
        // quite monotone in e (l can drop by one as a key comes), so this finds a full block,
        // not always the shortest one.
        let fits = |e: usize| block_bytes(e - start, keys[e] - first - 1) <= TARGET_BYTES;
        let (mut lo, mut step) = (start + 1, 64);
        let mut hi = loop {
            let probe = (lo + step - 1).min(max_end);
            if probe == max_end || !fits(probe) {
                break probe;
            }
            lo = probe + 1;
            step *= 2;
        };
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let end = lo;
        write_block(&keys[start..end], &mut block);
        emit(keys[end - 1], &block)?;
        start = end;
    }
    Ok(())
}

/// Writes the block of `keys` (strictly increasing, 1..=u16::MAX of them) into `block`. Both
/// bit areas are filled in order, a word at a time.
fn write_block(keys: &[u64], block: &mut Vec<u8>) {
    let first = keys[0];
    let m = keys.len() - 1;
    let v_last = if m == 0 { 0 } else { keys[m] - first - 1 };
    let l = low_bits(m, v_last);
    block.clear();
    block.extend_from_slice(&[0; CRC_BYTES]);
    block.extend_from_slice(&(keys.len() as u16).to_le_bytes());
    block.extend_from_slice(&[0, 0]);
    block.extend_from_slice(&first.to_le_bytes());
    block.push(l as u8);
    let lows = block.len();
    let highs = lows + (m * l as usize).div_ceil(8);
    let end = highs + high_bytes(m, v_last, l);
    // Room for a whole last word past either area. The low area must be written first: its
    // last word spills zeros into the high area, which then overwrites them.
    block.resize(end + 8, 0);
    let put = |block: &mut Vec<u8>, at: usize, word: u64| {
        block[at..at + 8].copy_from_slice(&word.to_le_bytes());
    };
    let mask = (1u64 << l) - 1;
    let (mut at, mut word, mut used) = (lows, 0u64, 0u32);
    if l > 0 {
        for &key in &keys[1..] {
            let low = (key - first - 1) & mask;
            word |= low << used;
            used += l;
            if used >= 64 {
                put(block, at, word);
                at += 8;
                used -= 64;
                // The bits of `low` that did not fit (none when used is now 0: low < 2^l).
                word = low >> (l - used);
            }
        }
        if used > 0 {
            put(block, at, word);
        }
    }
    let (mut w, mut word) = (0usize, 0u64);
    for (i, &key) in keys[1..].iter().enumerate() {
        let high = ((key - first - 1) >> l) as usize + i;
        if high / 64 != w {
            put(block, highs + w * 8, word);
            (w, word) = (high / 64, 0);
        }
        word |= 1 << (high % 64);
    }
    if m > 0 {
        put(block, highs + w * 8, word);
    }
    block.truncate(end);
    debug_assert_eq!(block.len(), block_bytes(m, v_last));
    seal(block);
}

/// A checked view of one Elias-Fano key block.
pub struct EliasFanoBlock<'a> {
    n: usize,
    first: u64,
    l: u32,
    lows: &'a [u8],
    highs: &'a [u8],
}

impl<'a> EliasFanoBlock<'a> {
    /// The block's first key.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// Checks the header and the bit areas of a block's bytes after its checksum.
    pub fn parse(body: &'a [u8]) -> Result<Self> {
        let mut reader = Reader::new(body);
        let n = usize::from(reader.u16()?);
        let mark = reader.u16()?;
        let first = reader.u64()?;
        let l = u32::from(reader.take(1)?[0]);
        if n == 0 || mark != 0 || l > 63 || (n > 1 && first == u64::MAX) {
            return Err(Error::corrupt(format!(
                "Elias-Fano key block header says {n} keys of {l} low bits (mark {mark})"
            )));
        }
        let m = n - 1;
        let lows = reader.take((m * l as usize).div_ceil(8))?;
        let highs = &body[reader.pos..];
        let words = highs.chunks_exact(8);
        let tail: u32 = words.remainder().iter().map(|b| b.count_ones()).sum();
        let ones = words
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")).count_ones())
            .sum::<u32>()
            + tail;
        let ones = ones as usize;
        if ones != m || highs.last().is_some_and(|&b| b == 0) {
            return Err(Error::corrupt(format!(
                "Elias-Fano key block of {n} keys has {ones} high bits set in {} bytes",
                highs.len()
            )));
        }
        Ok(EliasFanoBlock {
            n,
            first,
            l,
            lows,
            highs,
        })
    }

    /// Number of keys in the block.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Calls `f` on every key in `lo..=hi`, in order.
    pub fn for_each_in(&self, lo: u64, hi: u64, mut f: impl FnMut(u64)) -> Result<()> {
        if hi < self.first {
            return Ok(());
        }
        if lo <= self.first {
            f(self.first);
        }
        if self.n == 1 {
            return Ok(());
        }
        // The least value whose key can be >= lo, and its bucket (its high part).
        let target = lo.saturating_sub(self.first.saturating_add(1));
        let Some((mut w, mut word, mut i)) = self.seek(target >> self.l) else {
            return Ok(());
        };
        let words = self.highs.len().div_ceil(8);
        // Keys strictly increase from the first (parse made sure a later key can exist, so
        // the first is below u64::MAX).
        let (base, mut previous) = (self.first + 1, self.first);
        let corrupt = || Error::corrupt("Elias-Fano key block keys do not increase");
        while i < self.n - 1 {
            while word == 0 {
                w += 1;
                if w >= words {
                    return Ok(());
                }
                word = self.word(w);
            }
            let bit = w * 64 + word.trailing_zeros() as usize;
            word &= word - 1;
            // Every set bit at or after the seek is value i's, at bit high + i.
            let high = (bit - i) as u64;
            let shifted = high << self.l;
            if shifted >> self.l != high {
                return Err(corrupt());
            }
            let key = base
                .checked_add(shifted | self.low(i))
                .filter(|&key| key > previous)
                .ok_or_else(corrupt)?;
            i += 1;
            previous = key;
            if key > hi {
                break;
            }
            if key >= lo {
                f(key);
            }
        }
        Ok(())
    }

    /// Where the values of bucket `bucket` and above start: the high-bit word, that word's
    /// bits from there on, and the index of the first such value. None when no value is in
    /// or above the bucket.
    fn seek(&self, bucket: u64) -> Option<(usize, u64, usize)> {
        if bucket == 0 {
            return Some((0, self.word(0), 0));
        }
        // Bucket b starts after the b-th zero.
        let mut zeros = bucket;
        for w in 0..self.highs.len().div_ceil(8) {
            let word = self.word(w);
            let here = u64::from((!word).count_ones());
            if here < zeros {
                zeros -= here;
                continue;
            }
            let mut unset = !word;
            for _ in 1..zeros {
                unset &= unset - 1;
            }
            let at = unset.trailing_zeros() as usize;
            let rest = if at == 63 {
                0
            } else {
                word & u64::MAX << (at + 1)
            };
            let ones_before = (w * 64 + at + 1) - bucket as usize;
            return Some((w, rest, ones_before));
        }
        None
    }

    /// High-bit word `w`, zero past the area's end.
    fn word(&self, w: usize) -> u64 {
        le_u64(self.highs, w * 8)
    }

    /// The low bits of value `i`.
    fn low(&self, i: usize) -> u64 {
        let bit = i * self.l as usize;
        let (start, shift) = (bit / 8, bit % 8);
        let mask = (1u64 << self.l) - 1;
        if shift + self.l as usize <= 64 {
            (le_u64(self.lows, start) >> shift) & mask
        } else {
            // Bits past the first 8 bytes: l > 56 and an odd start.
            let high = le_u64(self.lows, start + 8);
            ((le_u64(self.lows, start) >> shift) | (high << (64 - shift))) & mask
        }
    }
}

/// The little-endian u64 at `bytes[start..start + 8]`, zero where that passes the end.
#[inline]
fn le_u64(bytes: &[u8], start: usize) -> u64 {
    match bytes.get(start..start + 8) {
        Some(eight) => u64::from_le_bytes(eight.try_into().expect("8 bytes")),
        None => {
            let tail = bytes.get(start..).unwrap_or(&[]);
            let mut word = [0; 8];
            word[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(word)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::block::keys::{self, KeyBlock, KeyCodec};
    use proptest::prelude::*;

    fn blocks_of(codec: KeyCodec, keys: &[u64]) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        keys::encode(codec, keys, |last, b| {
            out.push((last, b.to_vec()));
            Ok(())
        })
        .unwrap();
        out
    }

    /// Sorted distinct keys: spread at random, dense (gaps of 1..=200), or with a cluster of
    /// close keys among spread ones.
    fn key_set() -> impl Strategy<Value = Vec<u64>> {
        (
            proptest::collection::vec(any::<u64>(), 1..5000),
            0u8..3,
            0usize..5000,
        )
            .prop_map(|(mut keys, shape, cluster)| {
                match shape {
                    0 => {}
                    1 => {
                        let mut sum = 0u64;
                        keys.iter_mut().for_each(|k| {
                            sum += *k % 200 + 1;
                            *k = sum;
                        });
                    }
                    _ => {
                        let cluster = cluster.min(keys.len());
                        keys[..cluster].iter_mut().for_each(|k| *k %= 100_000);
                    }
                }
                keys.sort_unstable();
                keys.dedup();
                keys
            })
    }

    proptest! {
        #[test]
        fn decodes_what_it_encodes_as_restart_blocks_do(keys in key_set(), lo: u64, hi: u64) {
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            // A range starting inside the keys, so that probes land within blocks.
            let inner = keys[keys.len() / 3]..=keys[keys.len() / 3].saturating_add(hi >> 20);
            for (lo, hi) in [(lo, hi), (*inner.start(), *inner.end()), (0, u64::MAX)] {
                let mut ranged = Vec::new();
                let mut all = Vec::new();
                for (last, bytes) in blocks_of(KeyCodec::EliasFano, &keys) {
                    prop_assert!(bytes.len() <= TARGET_BYTES);
                    let block = KeyBlock::parse(&bytes).unwrap();
                    prop_assert!(matches!(block, KeyBlock::EliasFano(_)));
                    prop_assert_eq!(block.for_each(|k| all.push(k)).unwrap(), last);
                    block.for_each_in(lo, hi, |k| ranged.push(k)).unwrap();
                }
                prop_assert_eq!(&all, &keys);
                let expected: Vec<u64> =
                    keys.iter().copied().filter(|k| (lo..=hi).contains(k)).collect();
                prop_assert_eq!(&ranged, &expected);
                let mut restarts = Vec::new();
                for (_, bytes) in blocks_of(KeyCodec::Restarts, &keys) {
                    let block = KeyBlock::parse(&bytes).unwrap();
                    prop_assert!(matches!(block, KeyBlock::Restarts(_)));
                    block.for_each_in(lo, hi, |k| restarts.push(k)).unwrap();
                }
                prop_assert_eq!(restarts, ranged);
            }
        }

        #[test]
        fn any_flipped_byte_is_detected(keys in key_set(), at: usize, bit in 0u8..8) {
            let (_, mut bytes) = blocks_of(KeyCodec::EliasFano, &keys).remove(0);
            let at = at % bytes.len();
            bytes[at] ^= 1 << bit;
            prop_assert!(KeyBlock::parse(&bytes).is_err());
        }

        #[test]
        fn blocks_are_full(keys in key_set()) {
            // Every block but the last would pass the target with the next key.
            let blocks = blocks_of(KeyCodec::EliasFano, &keys);
            let mut start = 0;
            for (_, bytes) in &blocks[..blocks.len() - 1] {
                let n = KeyBlock::parse(bytes).unwrap().len();
                let next = start + n;
                prop_assert!(
                    n == usize::from(u16::MAX)
                        || block_bytes(n, keys[next] - keys[start] - 1) > TARGET_BYTES
                );
                start = next;
            }
        }
    }

    #[test]
    fn the_example_of_the_format_docs() {
        // docs/format.md, "Key blocks".
        let blocks = blocks_of(KeyCodec::EliasFano, &[10, 11, 20, 40]);
        let body = &blocks[0].1[CRC_BYTES..];
        let expected = [4, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 3, 0x48, 0x01, 0x25];
        assert_eq!(body, expected);
    }

    #[test]
    fn extreme_and_single_keys_round_trip() {
        for keys in [
            vec![0, 1, u64::MAX - 1, u64::MAX],
            vec![u64::MAX],
            vec![0],
            vec![0, u64::MAX],
            (0..70_000).collect(),
        ] {
            let mut all = Vec::new();
            for (_, b) in blocks_of(KeyCodec::EliasFano, &keys) {
                let block = KeyBlock::parse(&b).unwrap();
                block.for_each(|k| all.push(k)).unwrap();
                let mut top = Vec::new();
                block
                    .for_each_in(u64::MAX, u64::MAX, |k| top.push(k))
                    .unwrap();
                assert!(top.iter().all(|&k| k == u64::MAX));
            }
            assert_eq!(all, keys);
        }
    }

    #[test]
    fn random_keys_cost_about_two_bits_more_than_their_gaps() {
        // 1e6 random keys: gaps of about 2^44, 44 + 2 bits a key at most.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut keys: Vec<u64> = (0..1_000_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let bytes: usize = blocks_of(KeyCodec::EliasFano, &keys)
            .iter()
            .map(|(_, b)| b.len())
            .sum();
        let bits_per_key = bytes as f64 * 8.0 / keys.len() as f64;
        let gap_bits = (u64::MAX as f64 / keys.len() as f64).log2();
        assert!(bits_per_key < gap_bits + 2.5, "{bits_per_key} bits a key");
    }
}
