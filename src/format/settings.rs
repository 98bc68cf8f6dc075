//! A store's settings: how fingerprints are split into blocks, how far a query may reach, and how
//! the permuted tables are sharded. Fixed at `init`, recorded in the catalog.

use crate::error::{Error, Result, Setting};

/// Bits in a fingerprint.
pub const FINGERPRINT_BITS: u32 = 64;

/// The least number of leading bits a table may sort by: fewer and a probe scans 1/256 of the
/// table or more, which is a scan, not a lookup.
pub const MIN_PREFIX_BITS: u32 = 8;

/// The settings a store is created with.
///
/// Invariants (checked by [`Settings::validate`]):
/// 1. `1 <= distance < blocks <= 64`;
/// 2. every table's leading `blocks - distance` blocks span at least 8 bits;
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
    /// K = 3 as in Manku et al., and m = 5, what [`Settings::for_size`] picks for K = 3 at
    /// 1e8..1e10 fingerprints: C(5,3) = 10 tables whose leading 2 blocks span 25-26 bits, so a
    /// probe expects 3..300 keys, within the one block it reads anyway. Measured against
    /// Manku's m = 6 (20 tables): half the disk, twice the query rate (docs/benchmarks.md).
    /// 256 shards by the leading byte.
    fn default() -> Self {
        Settings {
            blocks: 5,
            distance: 3,
            shards: 256,
        }
    }
}

impl Settings {
    /// The store size [`Settings::for_size`] plans for when none is given: the billions this
    /// engine is built for.
    pub const DEFAULT_EXPECTED_SIZE: u64 = DEFAULT_EXPECTED_SIZE;

    /// Checks the invariants above, naming the setting that breaks one.
    pub fn validate(&self) -> Result<()> {
        let (m, k) = (u32::from(self.blocks), u32::from(self.distance));
        if !(2..=FINGERPRINT_BITS).contains(&m) {
            return Err(Error::settings(
                Setting::Blocks,
                format!("{m} is out of range: it must be between 2 and 64"),
            ));
        }
        if k < 1 || k >= m {
            return Err(Error::settings(
                Setting::Distance,
                format!(
                    "{k} must be at least 1 and less than the number of blocks, {m} (two \
                     fingerprints within K bits agree on at least M-K blocks, so M-K must be >= 1)"
                ),
            ));
        }
        let prefix = self.min_prefix_bits();
        if prefix < MIN_PREFIX_BITS {
            return Err(Error::settings(
                Setting::Blocks,
                format!(
                    "{m} blocks at distance {k} leave a leading prefix of only {prefix} bits \
                     (M-K = {} blocks of {} bits); at least {MIN_PREFIX_BITS} are needed, so use \
                     fewer blocks or a smaller distance",
                    m - k,
                    FINGERPRINT_BITS / m
                ),
            ));
        }
        let s = u32::from(self.shards);
        if s == 0 || s > 256 || !s.is_power_of_two() {
            return Err(Error::settings(
                Setting::Shards,
                format!("{s} must be a power of two between 1 and 256"),
            ));
        }
        if self.shard_bits() > prefix {
            return Err(Error::settings(
                Setting::Shards,
                format!(
                    "{s} shards need {} leading bits but the tables share only {prefix}",
                    self.shard_bits()
                ),
            ));
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

/// The store size [`Settings::for_size`] plans for when none is given: the billions this
/// engine is built for.
pub(crate) const DEFAULT_EXPECTED_SIZE: u64 = 1_000_000_000;

/// Keys in one table block: [`crate::format::block::TARGET_BYTES`] at the bytes per key
/// measured for random fingerprints (docs/benchmarks.md, "Disk").
pub const KEYS_PER_BLOCK: f64 = crate::format::block::TARGET_BYTES as f64 / 6.0;

/// Past this many tables a store is impractical at scale: each fingerprint is stored once per
/// table, and a query probes every table of every run.
pub const PRACTICAL_TABLES: usize = 100;

/// Past this many expected candidates per probe (~15 blocks), a query scans rather than
/// looks up.
pub const PRACTICAL_CANDIDATES: f64 = 10_000.0;

impl Settings {
    /// The settings for distance K at about `expected` fingerprints: the number of blocks m
    /// that minimises the work of a query. A query makes C(m, K) probes; each reads the block
    /// that holds its prefix, and one more block per ~667 keys (a 4 KB block of ~6-byte keys) that share the
    /// prefix: `C(m, K) * (1 + expected / 2^p / KEYS_PER_BLOCK)`, p the narrowest leading
    /// prefix. This is Manku et al.'s trade-off (longer prefixes, fewer candidates, more
    /// tables) with the candidates priced as this store reads them: a block at a time.
    /// Ties go to fewer tables (less disk). K = 3 at 1e9 gives the default m = 5; see
    /// docs/design.md for the table and the measurements behind it.
    ///
    /// ```
    /// use simhashdb::Settings;
    /// assert_eq!(Settings::for_size(3, 1_000_000_000).unwrap(), Settings::default());
    /// assert_eq!(Settings::for_size(3, 10_000_000).unwrap().blocks, 4);
    /// ```
    pub fn for_size(distance: u8, expected: u64) -> Result<Settings> {
        if distance == 0 {
            return Err(Error::settings(
                Setting::Distance,
                "0 finds only equal fingerprints: use at least 1",
            ));
        }
        let mut best: Option<(f64, Settings)> = None;
        for blocks in distance.saturating_add(1)..=FINGERPRINT_BITS as u8 {
            let candidate = Settings {
                blocks,
                distance,
                shards: Settings::default().shards,
            };
            let candidate = candidate.with_shards_that_fit();
            if candidate.validate().is_err() {
                continue;
            }
            let cost = candidate.query_cost(expected);
            if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                best = Some((cost, candidate));
            }
        }
        best.map(|(_, s)| s).ok_or_else(|| {
            Error::settings(
                Setting::Distance,
                format!(
                    "no number of blocks works for distance {distance}: the leading prefix \
                     would be under {MIN_PREFIX_BITS} bits (the largest possible distance is 56)"
                ),
            )
        })
    }

    /// The same settings with the shard count lowered, if needed, to what the prefix allows.
    fn with_shards_that_fit(mut self) -> Settings {
        while self.shards > 1 && self.shard_bits() > self.min_prefix_bits() {
            self.shards /= 2;
        }
        self
    }

    /// The blocks a query reads at `fingerprints` random fingerprints, by the model of
    /// [`Settings::for_size`].
    pub fn query_cost(&self, fingerprints: u64) -> f64 {
        self.table_count() as f64 * (1.0 + self.candidates_per_probe(fingerprints) / KEYS_PER_BLOCK)
    }

    /// The keys a probe of the narrowest table is expected to read at `fingerprints` random
    /// fingerprints: `fingerprints / 2^p`.
    pub fn candidates_per_probe(&self, fingerprints: u64) -> f64 {
        fingerprints as f64 / 2f64.powi(self.min_prefix_bits() as i32)
    }

    /// Why these settings are impractical at `expected` fingerprints, if they are: too many
    /// tables (disk and probes) or too many candidates per probe (a scan, not a lookup).
    pub fn warnings(&self, expected: u64) -> Vec<String> {
        let mut warnings = Vec::new();
        let tables = self.table_count();
        if tables > PRACTICAL_TABLES {
            warnings.push(format!(
                "M={} K={} keeps {tables} tables: each fingerprint is stored {tables} times \
                 (~{} bytes on disk) and each query makes {tables} probes per run; that is \
                 practical only for small stores. For quality at scale prefer a small K and \
                 verify the pairs by their text's Jaccard similarity (docs/quality.md)",
                self.blocks,
                self.distance,
                tables * 6
            ));
        }
        let candidates = self.candidates_per_probe(expected);
        if candidates > PRACTICAL_CANDIDATES {
            warnings.push(format!(
                "M={} K={} sorts by a {}-bit prefix: at {expected} fingerprints each probe reads \
                 ~{candidates:.0} keys, so queries scan rather than look up; use more blocks \
                 (or let the blocks be chosen for the expected size)",
                self.blocks,
                self.distance,
                self.min_prefix_bits()
            ));
        }
        warnings
    }
}

/// Disk bytes per fingerprint per table, as measured at 1e8 (docs/benchmarks.md, "Disk").
pub const TABLE_BYTES_PER_FINGERPRINT: f64 = 6.2;

/// Disk bytes per document outside the tables (its id, posting and fingerprint rows): a 1e8
/// store's bytes per document less its tables' (docs/benchmarks.md, "Disk").
pub const DOCUMENT_BYTES: f64 = 52.0;

/// Microseconds per block a query reads: a compacted 1e8 store's p50 query time over its
/// probes (docs/benchmarks.md, "Queries at 1e8 after compaction").
pub const MICROS_PER_BLOCK_READ: f64 = 3.8;

/// Disk bytes per sketch beyond its own N bytes: its length and redb's pages, as measured
/// (docs/benchmarks.md, "Sketches in postings"). Format 7 keeps a sketch in its posting, so
/// this does not grow with the ids' length.
pub const SKETCH_OVERHEAD_BYTES: f64 = 12.0;

impl Settings {
    /// Disk bytes per document a sketch of `bytes` bytes costs, by the measured figure above.
    pub fn sketch_disk_bytes(bytes: u16) -> f64 {
        f64::from(bytes) + SKETCH_OVERHEAD_BYTES
    }

    /// Disk bytes per document these settings cost, by the measured figures above.
    pub fn disk_bytes_per_document(&self) -> f64 {
        DOCUMENT_BYTES + TABLE_BYTES_PER_FINGERPRINT * self.table_count() as f64
    }

    /// A warm single query's expected time at `fingerprints` in one run, in microseconds:
    /// [`Settings::query_cost`] blocks at the measured time per block. An estimate to compare
    /// settings by, not a promise: more runs add their probes, a cold cache adds disk reads.
    pub fn estimated_query_micros(&self, fingerprints: u64) -> f64 {
        self.query_cost(fingerprints) * MICROS_PER_BLOCK_READ
    }
}

/// C(n, k), exact for the sizes used here (n <= 64).
pub fn binomial(n: u32, k: u32) -> u64 {
    let k = k.min(n - k);
    (0..k).fold(1u64, |acc, i| acc * u64::from(n - i) / u64::from(i + 1))
}

/// When a store merges runs by itself (after each insert).
///
/// The policy is size-tiered: a run of `s` entries is in tier `floor(log_F(s))`, F the merge
/// factor. A merge is due when F runs of one tier sit among the newest runs (the suffix of
/// smaller runs goes along), or when there are more than `max_runs` runs; equal daily batches
/// thus merge 4 into 1, four of those into 1, and so on. Only the newest runs are ever merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct CompactionPolicy {
    /// Past this many runs, an insert merges the newest ones; 0 never merges automatically.
    pub max_runs: u16,
    /// Merge this many runs of about the same size into one (a size tier spans this factor).
    pub merge_factor: u16,
}

impl Default for CompactionPolicy {
    /// Queries probe every run, so keep them few; merging 4 at a time rewrites a fingerprint
    /// about log4(N / batch) times over its life.
    fn default() -> Self {
        CompactionPolicy {
            max_runs: 12,
            merge_factor: 4,
        }
    }
}

impl CompactionPolicy {
    /// Checks that the policy can work: a merge factor of at least 2.
    pub fn validate(&self) -> Result<()> {
        if self.merge_factor < 2 {
            return Err(Error::settings(
                Setting::MergeFactor,
                format!(
                    "{} cannot merge runs: at least 2 runs go into one",
                    self.merge_factor
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_settings_are_valid_and_have_ten_tables() {
        let s = Settings::default();
        s.validate().unwrap();
        assert_eq!(s.table_count(), 10);
        assert_eq!(s.block_widths(), vec![13, 13, 13, 13, 12]);
        assert_eq!(s.min_prefix_bits(), 25);
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
    fn blocks_for_size_follow_the_cost_rule() {
        let blocks = |k, n| Settings::for_size(k, n).unwrap().blocks;
        assert_eq!(blocks(3, DEFAULT_EXPECTED_SIZE), 5, "the default store");
        assert_eq!(blocks(3, 10_000_000), 4);
        assert_eq!(blocks(3, 100_000_000), 5);
        assert_eq!(blocks(3, 100_000_000_000), 6);
        assert_eq!(blocks(8, 10_000), 10, "the eval corpus's store");
        assert_eq!(blocks(1, 1_000_000_000), 2);
        // The chosen m is never beaten by another valid m under the same cost.
        for k in 1..=10u8 {
            for n in [1_000u64, 1_000_000, 1_000_000_000, 10_000_000_000] {
                let best = Settings::for_size(k, n).unwrap();
                best.validate().unwrap();
                for m in k + 1..=64 {
                    let other = Settings {
                        blocks: m,
                        distance: k,
                        shards: 1,
                    };
                    if other.validate().is_ok() {
                        assert!(
                            best.query_cost(n) <= other.query_cost(n),
                            "k={k} n={n} m={m}"
                        );
                    }
                }
            }
        }
        assert!(Settings::for_size(56, 1000).is_ok());
        assert!(Settings::for_size(57, 1000).is_err());
    }

    #[test]
    fn impractical_settings_are_named() {
        assert!(Settings::default()
            .warnings(DEFAULT_EXPECTED_SIZE)
            .is_empty());
        let wide = Settings {
            blocks: 16,
            distance: 8,
            shards: 256,
        };
        assert!(wide.warnings(1000)[0].contains("12870 tables"));
        let short = Settings {
            blocks: 4,
            distance: 3,
            shards: 256,
        };
        assert!(short.warnings(DEFAULT_EXPECTED_SIZE)[0].contains("16-bit prefix"));
    }

    #[test]
    fn binomial_matches_pascal() {
        assert_eq!(binomial(6, 3), 20);
        assert_eq!(binomial(7, 4), 35);
        assert_eq!(binomial(64, 1), 64);
        assert_eq!(binomial(10, 0), 1);
    }
}
