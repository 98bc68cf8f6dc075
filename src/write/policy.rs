//! The compaction policy: which runs to merge, decided from their sizes alone.
//!
//! Queries probe every run, so runs must stay few; merging rewrites data, so a fingerprint
//! should be rewritten few times. The policy is size-tiered, like tantivy's log merge policy,
//! with one difference: it only ever merges a suffix of the runs (the newest ones), which keeps
//! the merge free of reads of other runs (see `merge.rs`).
//!
//! A run of `s` entries is in tier `floor(log_F(s))` (F = the merge factor). The plan finds the
//! smallest tier T such that the longest suffix of runs in tiers <= T holds F runs of tier T,
//! and merges that suffix (the smaller runs in it go along); and, when there are more than
//! `max_runs` runs, it merges enough of the newest to get back to `max_runs`. Equal daily
//! batches thus merge 4 into 1, four of those into 1, and so on.

use crate::format::settings::CompactionPolicy;

/// The index of the first run to merge (the merge takes it and every newer run), or None when
/// no merge is due. `sizes` are the runs' entry counts, oldest first.
pub(crate) fn plan(sizes: &[u64], policy: &CompactionPolicy) -> Option<usize> {
    let n = sizes.len();
    if policy.max_runs == 0 || n < 2 {
        return None;
    }
    let mut start: Option<usize> = None;
    let factor = u64::from(policy.merge_factor);
    if factor >= 2 {
        let tiers: Vec<u32> = sizes.iter().map(|&s| tier(s, factor)).collect();
        let mut candidates = tiers.clone();
        candidates.sort_unstable();
        candidates.dedup();
        for top in candidates {
            // The longest suffix whose runs are all in tier `top` or below, if F of them are
            // in tier `top`.
            let suffix = tiers.iter().rev().take_while(|&&t| t <= top);
            let (len, at_top) =
                suffix.fold((0, 0), |(len, at), &t| (len + 1, at + (t == top) as usize));
            if at_top >= factor as usize {
                start = Some(n - len);
                break;
            }
        }
    }
    let max = usize::from(policy.max_runs).max(1);
    if n > max {
        // Merging runs max-1.. leaves exactly max runs.
        let cap_start = max - 1;
        start = Some(start.map_or(cap_start, |s| s.min(cap_start)));
    }
    start
}

/// The size tier of a run of `size` entries: floor(log_factor(size)), with empty runs in 0.
fn tier(size: u64, factor: u64) -> u32 {
    let mut tier = 0;
    let mut bound = factor;
    while size >= bound {
        tier += 1;
        match bound.checked_mul(factor) {
            Some(b) => bound = b,
            None => break,
        }
    }
    tier
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn policy(max_runs: u16, merge_factor: u16) -> CompactionPolicy {
        CompactionPolicy {
            max_runs,
            merge_factor,
        }
    }

    /// Applies the plan after every insert of `batch` entries; returns the runs left and how
    /// many times each inserted entry was rewritten, at most.
    fn simulate(batches: &[u64], p: &CompactionPolicy) -> (Vec<u64>, u64) {
        let mut runs: Vec<(u64, u64)> = Vec::new(); // (size, rewrites of its entries)
        for &b in batches {
            runs.push((b, 0));
            while let Some(start) = plan(&runs.iter().map(|r| r.0).collect::<Vec<_>>(), p) {
                let merged: Vec<(u64, u64)> = runs.drain(start..).collect();
                let size = merged.iter().map(|r| r.0).sum();
                let rewrites = merged.iter().map(|r| r.1).max().unwrap() + 1;
                runs.push((size, rewrites));
                if runs.len() == 1 {
                    break;
                }
            }
        }
        let worst = runs.iter().map(|r| r.1).max().unwrap_or(0);
        (runs.iter().map(|r| r.0).collect(), worst)
    }

    #[test]
    fn tiers_are_log_factor() {
        assert_eq!(tier(0, 4), 0);
        assert_eq!(tier(3, 4), 0);
        assert_eq!(tier(4, 4), 1);
        assert_eq!(tier(15, 4), 1);
        assert_eq!(tier(16, 4), 2);
        assert_eq!(tier(u64::MAX, 4), 31);
    }

    #[test]
    fn merges_factor_runs_of_one_tier_and_nothing_before() {
        let p = policy(100, 4);
        assert_eq!(plan(&[1000, 10, 10, 10], &p), None);
        assert_eq!(plan(&[1000, 10, 10, 10, 10], &p), Some(1));
        // Smaller runs go along with the tier they follow, but do not count toward it.
        assert_eq!(plan(&[1000, 50, 10, 2, 1], &p), None);
        assert_eq!(plan(&[1000, 20, 20, 20, 1, 20], &p), Some(1));
        assert_eq!(plan(&[], &p), None);
        assert_eq!(plan(&[5], &p), None);
    }

    #[test]
    fn max_runs_caps_the_count_and_zero_disables() {
        assert_eq!(
            plan(&[1 << 40, 1 << 30, 1 << 20, 1 << 10], &policy(2, 4)),
            Some(1)
        );
        assert_eq!(plan(&[10, 10, 10, 10, 10], &policy(0, 4)), None);
        assert_eq!(plan(&[10, 10, 10], &policy(1, 0)), Some(0));
    }

    #[test]
    fn daily_batches_stay_few_and_are_rewritten_logarithmically() {
        let p = CompactionPolicy::default();
        let (runs, worst) = simulate(&vec![1_000_000; 1000], &p);
        assert!(runs.len() <= usize::from(p.max_runs), "{runs:?}");
        // 1000 batches, factor 4: about log4(1000) = 5 rewrites, plus the cap's merges.
        assert!(worst <= 8, "rewritten {worst} times");
        assert_eq!(runs.iter().sum::<u64>(), 1_000_000_000);
    }

    proptest! {
        #[test]
        fn a_plan_is_a_suffix_of_two_or_more_that_respects_the_cap(
            sizes in proptest::collection::vec(0u64..1_000_000, 0..40),
            max_runs in 0u16..20,
            factor in 0u16..10,
        ) {
            let p = policy(max_runs, factor);
            match plan(&sizes, &p) {
                None => prop_assert!(max_runs == 0 || sizes.len() <= usize::from(max_runs.max(1))),
                Some(start) => {
                    prop_assert!(max_runs > 0);
                    prop_assert!(start + 2 <= sizes.len());
                    let after = start + 1;
                    if sizes.len() > usize::from(max_runs.max(1)) {
                        prop_assert!(after <= usize::from(max_runs.max(1)));
                    }
                }
            }
        }
    }
}
