//! seomoz simhash-py 0.4, bit for bit, so its users can bring their stored fingerprints.
//!
//! - `unsigned_hash(bytes)`: the first 8 bytes of MD5(bytes), read big-endian.
//! - `compute(hashes)`: bit i (0 = least significant) counts +1 for each hash with bit i set
//!   and -1 for each with it clear (repeats count each time); set iff the count is > 0;
//!   no hashes -> 0.
//! - text (simhash-py's README pipeline): tokens = the text split on whitespace as Python's
//!   `str.split()` does; every window of 4 consecutive tokens joined by one space, UTF-8
//!   encoded, hashed with `unsigned_hash`, then `compute`. Fewer than 4 tokens -> 0.
//! - `find_all(hashes, number_of_blocks, different_bits)`: every pair of distinct values within
//!   `different_bits` bits, as (smaller, larger); simhash-cpp's argument checks. Any valid
//!   (blocks, bits) gives the same pairs, so blocks only choose the tables (or, where this
//!   engine's tables cannot take them, a scan of all pairs gives the same answer).
//! - `find_clusters`: the connected components of `find_all`'s pairs.

use md5::{Digest, Md5};
use rayon::prelude::*;

use crate::error::{Error, Result, Setting};
use crate::format::settings::Settings;
use crate::similarity::clusters::fingerprint_clusters;
use crate::similarity::find_all::{find_all_settings, FingerprintPair};

/// Tokens per shingle in simhash-py's README pipeline.
pub(crate) const SHINGLE: usize = 4;

/// The first 8 bytes of the MD5 digest of `bytes`, big-endian.
///
/// ```
/// assert_eq!(simhashdb::seomoz::unsigned_hash(b"hello"), 0x5d41402abc4b2a76);
/// ```
pub fn unsigned_hash(bytes: &[u8]) -> u64 {
    let digest = Md5::digest(bytes);
    u64::from_be_bytes(digest[..8].try_into().expect("MD5 has 16 bytes"))
}

/// simhash-py's `compute`: the bit vote over `hashes`, repeats included.
pub fn compute(hashes: &[u64]) -> u64 {
    super::vote(hashes)
}

/// Whether Python's `str.isspace()` holds: Unicode White_Space plus the four ASCII
/// information separators U+001C..U+001F, which Python also splits on.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The fingerprint simhash-py's README pipeline gives `text`.
///
/// ```
/// let seomoz = simhashdb::Scheme::from_name("seomoz")?;
/// assert_eq!(seomoz.fingerprint("The quick brown fox jumps over the lazy dog"), 0xa103cb172b8a9085);
/// assert_eq!(seomoz.fingerprint("three tokens only"), 0);
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub(crate) fn fingerprint(text: &str) -> u64 {
    let tokens: Vec<&str> = text
        .split(is_python_space)
        .filter(|t| !t.is_empty())
        .collect();
    let hashes: Vec<u64> = tokens
        .windows(SHINGLE)
        .map(|w| unsigned_hash(w.join(" ").as_bytes()))
        .collect();
    compute(&hashes)
}

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

    #[test]
    fn splits_like_python_str_split() {
        // U+001F splits in Python, not in Rust's split_whitespace; U+200B splits in neither.
        let a = fingerprint("a\u{1f}b c d");
        assert_eq!(a, fingerprint("a b c d"));
        assert_ne!(fingerprint("a\u{200b}b c d e"), fingerprint("a b c d e"));
        assert_eq!(
            fingerprint("  a\t\tb\nc\u{3000}d  "),
            fingerprint("a b c d")
        );
    }

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

    #[test]
    fn four_tokens_are_one_shingle() {
        assert_eq!(fingerprint("a b c d"), unsigned_hash(b"a b c d"));
    }
}
