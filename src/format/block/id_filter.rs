//! Id filters (format 6): each run's set of id-hash prefixes, so that a lookup of an id the run
//! does not mention can skip its docs blocks.
//!
//! A run of n document entries keeps the distinct top [`bits_for`]`(n)` bits of the
//! [`id_hash`](super::id_hash::id_hash) of every id it mentions (live or deleted), as a key
//! table ("ids" in the docs file, key blocks of the Elias-Fano layout). An id whose prefix is
//! absent is not in the run; one whose prefix is present may be, and is looked up. With 8
//! bits more than log2(n), about one id in 256 that the run does not mention is looked up
//! anyway, and the filter costs about 10 bits an id.

/// Prefix bits of a filter for a run of `documents` entries: 8 more than needed to tell
/// `documents` values apart, at most 64.
pub fn bits_for(documents: u64) -> u8 {
    let distinct = 64 - documents.max(1).leading_zeros() as u8; // ceil(log2(n + 1))
    (distinct + 8).min(64)
}

/// The prefix of `id_hash` that a filter of `bits` bits (1 to 64) keeps.
#[inline]
pub fn prefix(id_hash: u64, bits: u8) -> u64 {
    debug_assert!((1..=64).contains(&bits));
    id_hash >> (64 - u32::from(bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_keep_the_order_of_hashes() {
        assert_eq!(bits_for(0), 9);
        assert_eq!(bits_for(1), 9);
        assert_eq!(bits_for(1000), 18);
        assert_eq!(bits_for(1 << 20), 29);
        assert_eq!(bits_for(u64::MAX), 64);
        for bits in [1, 9, 29, 63, 64] {
            let hashes = [0, 1, 0x8000_0000_0000_0000, u64::MAX - 1, u64::MAX];
            for pair in hashes.windows(2) {
                assert!(prefix(pair[0], bits) <= prefix(pair[1], bits));
            }
            assert_eq!(prefix(u64::MAX, bits), u64::MAX >> (64 - u32::from(bits)));
        }
    }
}
