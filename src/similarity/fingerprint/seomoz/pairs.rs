//! simhash-cpp's pair search (feature `seomoz`): `find_all` and `find_clusters`, with its
//! argument checks, on this engine's tables.

use rayon::prelude::*;

use crate::error::{Error, Result, Setting};
use crate::format::settings::Settings;
use crate::similarity::clusters::fingerprint_clusters;
use crate::similarity::find_all::{find_all_settings, FingerprintPair};

/// simhash-cpp's `find_all`: every pair of distinct values of `hashes` within
/// `different_bits` bits, sorted by (a, b). Fails as simhash-cpp does when `number_of_blocks`
/// is above 64 or not above `different_bits`.
///
/// ```
/// use simhashdb::seomoz::find_all;
/// let pairs = find_all(&[0b1111, 0b0111, 0b0111, 1 << 63], 4, 3)?;
/// assert_eq!(pairs.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>(), [(0b0111, 0b1111)]);
/// assert!(find_all(&[1, 3], 3, 3).is_err());
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub fn find_all(
    hashes: &[u64],
    number_of_blocks: usize,
    different_bits: usize,
) -> Result<Vec<FingerprintPair>> {
    if number_of_blocks > 64 {
        return Err(Error::settings(
            Setting::Blocks,
            format!("number of blocks ({number_of_blocks}) must not exceed 64"),
        ));
    }
    if number_of_blocks <= different_bits {
        return Err(Error::settings(
            Setting::Blocks,
            format!(
                "number of blocks ({number_of_blocks}) must be greater than different_bits \
                 ({different_bits})"
            ),
        ));
    }
    if different_bits == 0 {
        return Ok(Vec::new()); // distinct values are never 0 bits apart
    }
    let (blocks, distance) = (number_of_blocks as u8, different_bits as u8);
    let n = hashes.len().max(2) as f64;
    // Comparisons each way costs: every table sorts all values and compares the values that
    // share its leading blocks; the scan compares every pair. simhash-cpp always uses the
    // tables of the blocks given (C(64, 40) of them hang it); the pairs are the same.
    let table_cost = |s: &Settings| {
        let per_prefix = n / 2f64.powi(s.min_prefix_bits() as i32);
        s.table_count() as f64 * n * (n.log2() + per_prefix)
    };
    let tables = [Some(blocks), None]
        .into_iter()
        .filter_map(|b| find_all_settings(distance, hashes.len() as u64, b).ok())
        .map(|s| (table_cost(&s), s))
        .min_by(|x, y| x.0.total_cmp(&y.0))
        .filter(|(cost, _)| *cost < n * n / 2.0);
    Ok(match tables {
        Some((_, settings)) => crate::similarity::find_all::find_all_in(hashes, &settings, &()),
        None => all_pairs_within(hashes, u32::from(distance)),
    })
}

/// simhash-cpp's `find_clusters`: the groups of values that [`find_all`]'s pairs connect,
/// each sorted, ordered by their smallest value. Values in no pair are in no cluster.
///
/// ```
/// use simhashdb::seomoz::find_clusters;
/// let clusters = find_clusters(&[0b0000, 0b0011, 0b1111, 0xff00], 6, 2)?;
/// assert_eq!(clusters, [vec![0b0000, 0b0011, 0b1111]]); // a chain joins; 0xff00 is alone
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub fn find_clusters(
    hashes: &[u64],
    number_of_blocks: usize,
    different_bits: usize,
) -> Result<Vec<Vec<u64>>> {
    Ok(fingerprint_clusters(&find_all(
        hashes,
        number_of_blocks,
        different_bits,
    )?))
}

/// Every pair of distinct values within `distance` bits by comparing all pairs: for the
/// distances no permuted tables serve (their leading blocks would be too short to sort by).
fn all_pairs_within(hashes: &[u64], distance: u32) -> Vec<FingerprintPair> {
    let mut unique = hashes.to_vec();
    unique.par_sort_unstable();
    unique.dedup();
    let mut pairs: Vec<FingerprintPair> = (0..unique.len())
        .into_par_iter()
        .flat_map_iter(|i| {
            let a = unique[i];
            unique[i + 1..].iter().filter_map(move |&b| {
                let d = (a ^ b).count_ones();
                (d <= distance).then_some(FingerprintPair { a, b, distance: d })
            })
        })
        .collect();
    pairs.par_sort_unstable();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// simhash-py's own test vectors (test/test.py), at every block count it tries.
    #[test]
    fn find_all_matches_simhash_py_tests() {
        let hashes: Vec<u64> = [0xFF_u64, 0xEF, 0xEE, 0xCE, 0x33]
            .iter()
            .flat_map(|&h| (0..4).map(move |byte| h << (8 * byte)))
            .collect();
        let mut expected = Vec::new();
        for byte in 0..4 {
            for (a, b) in [
                (0xEF, 0xFF),
                (0xEE, 0xEF),
                (0xEE, 0xFF),
                (0xCE, 0xEE),
                (0xCE, 0xEF),
                (0xCE, 0xFF),
            ] {
                expected.push(((a as u64) << (8 * byte), (b as u64) << (8 * byte)));
            }
        }
        expected.sort_unstable();
        for blocks in 4..10 {
            let pairs: Vec<(u64, u64)> = find_all(&hashes, blocks, 3)
                .unwrap()
                .iter()
                .map(|p| (p.a, p.b))
                .collect();
            assert_eq!(pairs, expected, "blocks {blocks}");
        }
    }

    #[test]
    fn find_all_agrees_with_all_pairs_wherever_simhash_cpp_runs() {
        let mut state = 7_u64;
        let mut hashes = Vec::new();
        for _ in 0..300 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            hashes.push(state);
            hashes.push(state ^ (1 << (state % 64)) ^ (1 << (state >> 58)));
        }
        for (blocks, bits) in [
            (2, 1),
            (4, 3),
            (9, 3),
            (64, 3),
            (64, 40),
            (64, 63),
            (30, 20),
        ] {
            let got = find_all(&hashes, blocks, bits).unwrap();
            assert_eq!(
                got,
                all_pairs_within(&hashes, bits as u32),
                "{blocks} {bits}"
            );
        }
        assert!(find_all(&hashes, 1, 0).unwrap().is_empty());
        assert!(find_all(&hashes, 65, 3).is_err());
        assert!(find_all(&hashes, 0, 0).is_err());
    }

    #[test]
    fn find_clusters_joins_chains() {
        let far = u64::MAX ^ 0xff;
        let clusters = find_clusters(&[0b0, 0b1, 0b11, 0b111, far, far ^ 1, u64::MAX], 4, 1);
        assert_eq!(
            clusters.unwrap(),
            [vec![0b0, 0b1, 0b11, 0b111], vec![far, far ^ 1]]
        );
    }
}
