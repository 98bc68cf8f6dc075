//! Sorting u64 keys that are already ordered by their leading bits.
//!
//! A derived table's keys, computed from its sort parent's sorted keys, are already ordered by
//! the leading bits the two tables share (see [`crate::tables::permutation::Permutations::sort_parent`]).
//! [`sort_below`] finishes the job with most-significant-digit radix passes inside each group
//! of equal leading bits, and an insertion sort once a group is small. It never compares keys
//! across groups, so its cost follows the group sizes, whatever the data. Measured on 1e7
//! random keys at m = 6 (docs/benchmarks.md): with [`crate::tables::permutation::Rekey`], deriving a
//! table sharing 22 leading bits with its parent takes half the time it took with
//! `sort_unstable` on each group.

/// Groups up to this size are insertion-sorted.
const SMALL: usize = 32;
/// Bits per radix pass at most: 2^11 counters fit in L1.
const MAX_DIGIT_BITS: u32 = 11;

/// Sorts `keys` ascending, given that they are already in ascending order of their leading
/// `sorted_bits` bits. `scratch` is working space (its contents are overwritten; passing the
/// same buffer again saves allocating it).
pub fn sort_below(keys: &mut [u64], sorted_bits: u32, scratch: &mut Vec<u64>) {
    // When groups are a few keys long, one insertion pass over all of them is cheapest; it
    // gives up (leaving the keys still grouped) if the data makes some group long after all.
    let expected_group = keys.len().checked_shr(sorted_bits).unwrap_or(0);
    if expected_group <= 4 && insertion_sort_within(keys, SMALL) {
        return;
    }
    for group in groups(keys, sorted_bits) {
        sort_group(group, sorted_bits, scratch);
    }
}

/// The runs of `keys` that share their leading `bits` bits (all of them when `bits` is 0).
fn groups(keys: &mut [u64], bits: u32) -> impl Iterator<Item = &mut [u64]> {
    let shift = 64 - bits.min(64);
    keys.chunk_by_mut(move |a, b| shift >= 64 || (a ^ b) >> shift == 0)
}

/// Sorts a group whose keys all share their leading `sorted_bits` bits.
fn sort_group(group: &mut [u64], sorted_bits: u32, scratch: &mut Vec<u64>) {
    if group.len() <= SMALL || sorted_bits >= 64 {
        insertion_sort_within(group, usize::MAX);
        return;
    }
    // About one key in four buckets, so that this one pass leaves few keys out of order.
    let wanted = usize::BITS - (group.len() * 4).leading_zeros();
    let digit_bits = wanted.min(MAX_DIGIT_BITS).min(64 - sorted_bits);
    let shift = 64 - sorted_bits - digit_bits;
    let digit_mask = (1u64 << digit_bits) - 1;
    let digit = |k: u64| ((k >> shift) & digit_mask) as usize;

    let mut starts = vec![0usize; 1 << digit_bits];
    for &k in group.iter() {
        starts[digit(k)] += 1;
    }
    let mut total = 0;
    for slot in starts.iter_mut() {
        let count = *slot;
        *slot = total;
        total += count;
    }
    scratch.clear();
    scratch.resize(group.len(), 0);
    for &k in group.iter() {
        let slot = &mut starts[digit(k)];
        scratch[*slot] = k;
        *slot += 1;
    }
    group.copy_from_slice(scratch);
    // After the scatter, starts[d] is where bucket d ends. Long buckets take another pass;
    // one insertion pass then sorts all the short ones (it never moves a key out of its
    // bucket, as every key of a later bucket is greater).
    let mut begin = 0;
    for &end in &starts {
        if end - begin > SMALL {
            sort_group(&mut group[begin..end], sorted_bits + digit_bits, scratch);
        }
        begin = end;
    }
    insertion_sort_within(group, usize::MAX);
}

/// Insertion-sorts `keys`, giving up (and returning false) before moving any key more than
/// `max_shift` places. Keys stay a permutation of the input either way.
fn insertion_sort_within(keys: &mut [u64], max_shift: usize) -> bool {
    for i in 1..keys.len() {
        let key = keys[i];
        if keys[i - 1] <= key {
            continue;
        }
        let floor = i.saturating_sub(max_shift);
        let mut j = i;
        while j > 0 && keys[j - 1] > key {
            if j == floor {
                keys[j] = key;
                return false;
            }
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = key;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Keys ordered by their leading `bits` bits only: the input `sort_below` expects.
    fn grouped(mut keys: Vec<u64>, bits: u32) -> Vec<u64> {
        let shift = 64 - bits;
        keys.sort_by_key(|&k| if bits == 0 { 0 } else { k >> shift });
        keys
    }

    proptest! {
        #[test]
        fn sorts_like_the_standard_sort(
            keys in proptest::collection::vec(any::<u64>(), 0..5000),
            bits in 0u32..=64,
            narrow in any::<bool>(),
        ) {
            // Narrow keys collide in their low bits and repeat, exercising deep passes.
            let keys: Vec<u64> = if narrow {
                keys.iter().map(|k| k & 0xf00f_0000_0000_00ff).collect()
            } else {
                keys
            };
            let mut ours = grouped(keys, bits);
            let mut expected = ours.clone();
            expected.sort_unstable();
            sort_below(&mut ours, bits, &mut vec![1, 2, 3]);
            prop_assert_eq!(ours, expected);
        }
    }

    #[test]
    fn sorts_a_large_random_table() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut keys: Vec<u64> = (0..200_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            })
            .collect();
        let mut expected = keys.clone();
        expected.sort_unstable();
        sort_below(&mut keys, 0, &mut Vec::new());
        assert_eq!(keys, expected);
    }
}
