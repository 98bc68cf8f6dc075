//! 1-bit one-permutation minhash: 64 bits whose Hamming distance estimates the Jaccard
//! distance of two feature sets.
//!
//! Each feature hash h falls in bin `h >> 58` (64 bins) and each bin keeps its least
//! `h mod 2^58` (one-permutation hashing, Li, Owen and Zhang 2012). Two sets of Jaccard J
//! share a bin's minimum with probability ~J; bit i is one bit of a mix of bin i's minimum,
//! so it differs with probability ~(1 - J) / 2 (b-bit minwise hashing with b = 1, Li and
//! König 2010). A bin no feature fell in takes the minimum of the next non-empty bin to its
//! right (circularly), mixed with the distance, so empty bins agree only where the sets do
//! (densification, Shrivastava and Li 2014). No feature gives 0. Duplicates do not matter.

/// Bits of a feature hash that choose its bin.
const BIN_BITS: u32 = 6;
const VALUE_MASK: u64 = (1 << (64 - BIN_BITS)) - 1;

/// The 1-bit one-permutation minhash of a multiset of feature hashes.
pub fn one_bit(hashes: &[u64]) -> u64 {
    if hashes.is_empty() {
        return 0;
    }
    let mut mins = [u64::MAX; 64];
    for &h in hashes {
        let bin = (h >> (64 - BIN_BITS)) as usize;
        mins[bin] = mins[bin].min(h & VALUE_MASK);
    }
    let mut fingerprint = 0;
    for i in 0..64 {
        let (mut j, mut hops) = (i, 0u64);
        while mins[j] == u64::MAX {
            j = (j + 1) % 64;
            hops += 1;
        }
        let bit = mix(mins[j] ^ hops.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 63;
        fingerprint |= bit << i;
    }
    fingerprint
}

/// A fixed 64-bit finaliser (splitmix64's): every input bit moves every output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features(range: std::ops::Range<u64>) -> Vec<u64> {
        range.map(|i| mix(i ^ 0x5EED)).collect()
    }

    #[test]
    fn only_the_set_counts() {
        assert_eq!(one_bit(&[]), 0);
        let a = features(0..500);
        let mut shuffled_with_repeats = a.clone();
        shuffled_with_repeats.reverse();
        shuffled_with_repeats.extend_from_slice(&a[..100]);
        assert_eq!(one_bit(&a), one_bit(&shuffled_with_repeats));
        // One feature fills every bin from one minimum, each mixed with its own distance.
        let one = one_bit(&[12345]);
        assert!((16..=48).contains(&one.count_ones()), "{one:064b}");
    }

    #[test]
    fn bits_differ_in_about_half_the_jaccard_distance() {
        // Sets of 2,000 features sharing `common`: J = common / (4000 - common). Averaged over
        // 40 disjoint pairs, the differing bits stay near 64 * (1 - J) / 2.
        for (common, j) in [
            (2000u64, 1.0),
            (1800, 1800.0 / 2200.0),
            (1000, 1000.0 / 3000.0),
        ] {
            let mut total = 0u32;
            for round in 0..40u64 {
                let base = round * 1_000_000;
                let mut a = features(base..base + 2000);
                let mut b = features(base..base + common);
                b.extend(features(base + 500_000..base + 500_000 + 2000 - common));
                a.sort_unstable();
                b.sort_unstable();
                total += (one_bit(&a) ^ one_bit(&b)).count_ones();
            }
            let mean = f64::from(total) / 40.0;
            let expected = 64.0 * (1.0 - j) / 2.0;
            assert!(
                (mean - expected).abs() <= 2.0,
                "J = {j}: mean {mean}, expected {expected}"
            );
        }
    }
}
