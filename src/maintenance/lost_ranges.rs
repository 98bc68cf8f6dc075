//! Key ranges that damage lost, as salvage reports them, asked whether they hold a key.

/// Inclusive key ranges, sorted and merged where they overlap or touch: salvage's may not
/// ascend (a block filed under a key shorter than 8 bytes ends its range at the top), and a
/// format 10 run's lost sketches are one range per document.
pub(crate) struct LostRanges(Vec<(u64, u64)>);

impl LostRanges {
    pub(crate) fn new(ranges: &[(u64, u64)]) -> Self {
        let mut sorted = ranges.to_vec();
        sorted.sort_unstable();
        // `dedup_by` hands each range with the last one kept: merge it there if they meet.
        sorted.dedup_by(|next, kept| {
            let meets = next.0 <= kept.1.saturating_add(1);
            if meets {
                kept.1 = kept.1.max(next.1);
            }
            meets
        });
        LostRanges(sorted)
    }

    /// Whether `key` is in one of the ranges.
    pub(crate) fn contains(&self, key: u64) -> bool {
        let after = self.0.partition_point(|&(lo, _)| lo <= key);
        after > 0 && self.0[after - 1].1 >= key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges as salvage builds them (touching, one ending at the top after a short key,
    /// single keys) are found whatever their order.
    #[test]
    fn a_key_in_any_range_is_found() {
        let lost = LostRanges::new(&[(10, 20), (20, 30), (5, u64::MAX - 1), (40, 40), (2, 2)]);
        assert_eq!(lost.0, vec![(2, 2), (5, u64::MAX - 1)]);
        let lost = LostRanges::new(&[(50, 60), (7, 7), (9, 9), (10, 12), (61, 70)]);
        assert_eq!(lost.0, vec![(7, 7), (9, 12), (50, 70)]);
        for key in [7, 9, 10, 12, 50, 55, 61, 70] {
            assert!(lost.contains(key), "{key}");
        }
        for key in [0, 6, 8, 13, 49, 71, u64::MAX] {
            assert!(!lost.contains(key), "{key}");
        }
        assert!(!LostRanges::new(&[]).contains(1));
    }
}
