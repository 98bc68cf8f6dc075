//! LEB128 unsigned varints: 7 bits per byte, least significant group first, high bit set on
//! every byte but the last.

/// Appends `value` as LEB128.
#[inline]
pub fn encode(value: u64, out: &mut Vec<u8>) {
    let at = out.len();
    out.extend_from_slice(&[0; MAX_BYTES]);
    let len = encode_into(value, &mut out[at..]);
    out.truncate(at + len);
}

/// The most bytes a u64 takes as LEB128.
pub const MAX_BYTES: usize = 10;

/// Writes `value` as LEB128 at the start of `out`, which must have room for [`MAX_BYTES`]
/// (bytes after the varint's may be overwritten); returns the bytes it takes.
#[inline]
pub fn encode_into(mut value: u64, out: &mut [u8]) -> usize {
    let out = &mut out[..MAX_BYTES];
    if value < 1 << 56 {
        // Up to eight bytes: spread the 7-bit groups one per byte, set the continuation bit
        // of every byte but the last, and store all eight at once.
        let len = encoded_len(value);
        let spread = spread_groups(value);
        let continuation = 0x8080_8080_8080_8080u64 & ((1u64 << (8 * (len - 1))) - 1);
        out[..8].copy_from_slice(&(spread | continuation).to_le_bytes());
        return len;
    }
    let mut len = 0;
    while value >= 0x80 {
        out[len] = (value as u8) | 0x80;
        value >>= 7;
        len += 1;
    }
    out[len] = value as u8;
    len + 1
}

/// Bytes `value` takes as LEB128.
#[inline]
pub fn encoded_len(value: u64) -> usize {
    // 1 + floor((bits - 1) / 7), with 0 taking one byte.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Decodes one varint from the front of `bytes`: `(value, bytes used)`, or `None` when it is
/// truncated or longer than a u64 allows.
#[inline]
pub fn decode(bytes: &[u8]) -> Option<(u64, usize)> {
    // One byte: lengths, batches and the small deltas of entries.
    if let Some(&byte) = bytes.first().filter(|&&b| b < 0x80) {
        return Some((u64::from(byte), 1));
    }
    // Eight bytes at once where they are there and the varint ends within them (deltas of
    // hashes take 5-7 bytes, whose length a byte loop mispredicts): its last byte is the first
    // without the continuation bit, and the 7-bit groups are gathered without a loop.
    if let Some(word) = bytes.first_chunk::<8>().map(|b| u64::from_le_bytes(*b)) {
        let ends = !word & 0x8080_8080_8080_8080;
        if ends != 0 {
            let len = ends.trailing_zeros() as usize / 8 + 1;
            let word = word & (u64::MAX >> (64 - 8 * len));
            return Some((gather_groups(word), len));
        }
    }
    decode_bytewise(bytes)
}

/// The 7-bit groups of `value` (below 2^56), one in each byte's low bits, least significant
/// first: moved apart in three steps (28-bit halves, 14-bit quarters, 7-bit eighths), each a
/// few operations on the whole word instead of one per group.
#[inline(always)]
fn spread_groups(value: u64) -> u64 {
    let x = (value & 0x0fff_ffff) | ((value & 0x00ff_ffff_f000_0000) << 4);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x0fff_c000_0fff_c000) << 2);
    (x & 0x007f_007f_007f_007f) | ((x & 0x3f80_3f80_3f80_3f80) << 1)
}

/// [`spread_groups`] undone: the low 7 bits of each byte of `word`, packed (the high bits,
/// continuation bits, are ignored).
#[inline(always)]
fn gather_groups(word: u64) -> u64 {
    let x = word & 0x7f7f_7f7f_7f7f_7f7f;
    let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    (x & 0x0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4)
}

/// [`decode`] a byte at a time: for varints near the end of `bytes` or longer than eight
/// bytes.
fn decode_bytewise(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate().take(10) {
        let group = u64::from(byte & 0x7f);
        if i == 9 && group > 1 {
            return None;
        }
        value |= group << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips_at_every_length(v: u64, bits in 0u32..64) {
            let v = v >> bits;
            let mut out = vec![0xaa];
            encode(v, &mut out);
            prop_assert_eq!(out.len(), 1 + encoded_len(v));
            prop_assert_eq!(decode(&out[1..]), Some((v, out.len() - 1)));
        }

        #[test]
        fn round_trips(v: u64) {
            let mut out = Vec::new();
            encode(v, &mut out);
            prop_assert_eq!(out.len(), encoded_len(v));
            prop_assert_eq!(decode(&out), Some((v, out.len())));
        }
    }

    proptest! {
        /// Word-at-a-time decoding reads what the byte loop reads, whatever follows the
        /// varint (ends of blocks included) and for any bytes at all.
        #[test]
        fn decodes_as_the_byte_loop_does(v: u64, bits in 0u32..64, after in proptest::collection::vec(any::<u8>(), 0..10)) {
            let mut out = Vec::new();
            encode(v >> bits, &mut out);
            out.extend(&after);
            prop_assert_eq!(decode(&out), decode_bytewise(&out));
            prop_assert_eq!(decode(&out), Some((v >> bits, encoded_len(v >> bits))));
        }

        #[test]
        fn decodes_any_bytes_as_the_byte_loop_does(bytes in proptest::collection::vec(any::<u8>(), 0..12)) {
            prop_assert_eq!(decode(&bytes), decode_bytewise(&bytes));
        }
    }

    proptest! {
        /// The word-wide spread and gather are the group-by-group loops.
        #[test]
        fn groups_spread_and_gather_as_one_at_a_time(v: u64, word: u64) {
            let v = v >> 8;
            let mut spread = 0u64;
            for group in 0..8 {
                spread |= (v & (0x7f << (7 * group))) << group;
            }
            prop_assert_eq!(spread_groups(v), spread);
            let mut gathered = 0u64;
            for group in 0..8 {
                gathered |= (word >> group) & (0x7f << (7 * group));
            }
            prop_assert_eq!(gather_groups(word), gathered);
            prop_assert_eq!(gather_groups(spread_groups(v)), v);
        }
    }

    #[test]
    fn rejects_truncated_and_overlong() {
        assert_eq!(decode(&[0x80]), None);
        assert_eq!(decode(&[0xff; 10]), None);
        assert_eq!(decode(&[]), None);
        assert_eq!(decode(&[0x7f]), Some((127, 1)));
    }
}
