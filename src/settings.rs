//! A store's settings: how fingerprints are split into blocks, how far a query may reach, and how
//! the permuted tables are sharded. Fixed at `init`, recorded in the catalog.

use crate::error::{Error, Result};

/// Bits in a fingerprint.
pub const FINGERPRINT_BITS: u32 = 64;

/// The least number of leading bits a table may sort by: fewer and a probe scans 1/256 of the
/// table or more, which is a scan, not a lookup.
pub const MIN_PREFIX_BITS: u32 = 8;

/// The settings a store is created with.
///
/// Invariants (checked by [`Settings::validate`]):
/// 1. `1 <= distance < blocks <= 64`;
/// 2. every table's leading `blocks - distance` blocks span at least [`MIN_PREFIX_BITS`] bits;
/// 3. `shards` is a power of two, `1 <= shards <= 256`, and `log2(shards)` is at most that span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct Settings {
    /// m: the number of blocks a fingerprint is split into.
    pub blocks: u8,
    /// K: the largest Hamming distance a query can ask for.
    pub distance: u8,
    /// S: the number of shard files each run's tables are split into, by the leading bits of the
    /// permuted key.
    pub shards: u16,
}

impl Default for Settings {
    /// m = 6, K = 3 as in Manku et al.: C(6,3) = 20 tables whose leading 3 blocks span 31-33 bits,
    /// so a probe at 1e8..1e10 fingerprints expects 0.02..2 keys; 256 shards by the leading byte.
    fn default() -> Self {
        Settings {
            blocks: 6,
            distance: 3,
            shards: 256,
        }
    }
}

impl Settings {
    /// Checks the invariants above, naming the setting that breaks one.
    pub fn validate(&self) -> Result<()> {
        let (m, k) = (u32::from(self.blocks), u32::from(self.distance));
        if !(2..=FINGERPRINT_BITS).contains(&m) {
            return Err(Error::settings(format!(
                "--blocks {m} is out of range: it must be between 2 and 64"
            )));
        }
        if k < 1 || k >= m {
            return Err(Error::settings(format!(
                "--distance {k} must be at least 1 and less than --blocks {m} \
                 (two fingerprints within K bits agree on at least M-K blocks, so M-K must be >= 1)"
            )));
        }
        let prefix = self.min_prefix_bits();
        if prefix < MIN_PREFIX_BITS {
            return Err(Error::settings(format!(
                "--blocks {m} --distance {k} leaves a leading prefix of only {prefix} bits \
                 (M-K = {} blocks of {} bits); at least {MIN_PREFIX_BITS} are needed, so use fewer \
                 blocks or a smaller distance",
                m - k,
                FINGERPRINT_BITS / m
            )));
        }
        let s = u32::from(self.shards);
        if s == 0 || s > 256 || !s.is_power_of_two() {
            return Err(Error::settings(format!(
                "--shards {s} must be a power of two between 1 and 256"
            )));
        }
        if self.shard_bits() > prefix {
            return Err(Error::settings(format!(
                "--shards {s} needs {} leading bits but the tables share only {prefix}",
                self.shard_bits()
            )));
        }
        Ok(())
    }

    /// The width in bits of each block, most significant block first. The first `64 % m`
    /// blocks are one bit wider than the rest.
    pub fn block_widths(&self) -> Vec<u32> {
        let m = u32::from(self.blocks);
        let (base, wider) = (FINGERPRINT_BITS / m, FINGERPRINT_BITS % m);
        (0..m).map(|i| base + u32::from(i < wider)).collect()
    }

    /// The fewest leading bits any table sorts by: the sum of the `m - K` narrowest blocks.
    pub fn min_prefix_bits(&self) -> u32 {
        let mut widths = self.block_widths();
        widths.sort_unstable();
        let lead = usize::from(self.blocks - self.distance);
        widths[..lead].iter().sum()
    }

    /// The number of permuted tables, C(m, K).
    pub fn table_count(&self) -> usize {
        binomial(u32::from(self.blocks), u32::from(self.distance)) as usize
    }

    /// log2 of the shard count.
    pub fn shard_bits(&self) -> u32 {
        u32::from(self.shards).trailing_zeros()
    }
}

/// C(n, k), exact for the sizes used here (n <= 64).
pub fn binomial(n: u32, k: u32) -> u64 {
    let k = k.min(n - k);
    (0..k).fold(1u64, |acc, i| acc * u64::from(n - i) / u64::from(i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_settings_are_valid_and_have_twenty_tables() {
        let s = Settings::default();
        s.validate().unwrap();
        assert_eq!(s.table_count(), 20);
        assert_eq!(s.block_widths(), vec![11, 11, 11, 11, 10, 10]);
        assert_eq!(s.min_prefix_bits(), 31);
    }

    #[test]
    fn impossible_settings_are_refused() {
        let bad = |m, k, s| {
            Settings {
                blocks: m,
                distance: k,
                shards: s,
            }
            .validate()
            .is_err()
        };
        assert!(bad(6, 6, 256)); // K >= M
        assert!(bad(6, 0, 256));
        assert!(!bad(16, 14, 256)); // 2 leading blocks of 4 bits: exactly 8
        assert!(bad(16, 15, 1)); // 1 leading block of 4 bits
        assert!(bad(32, 30, 1)); // 2 leading blocks of 2 bits
        assert!(bad(6, 3, 3)); // not a power of two
        assert!(bad(6, 3, 512));
        assert!(bad(65, 3, 1));
    }

    #[test]
    fn binomial_matches_pascal() {
        assert_eq!(binomial(6, 3), 20);
        assert_eq!(binomial(7, 4), 35);
        assert_eq!(binomial(64, 1), 64);
        assert_eq!(binomial(10, 0), 1);
    }
}
