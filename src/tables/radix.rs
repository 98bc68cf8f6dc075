//! Radix sorts: u64 keys already ordered by their leading bits ([`sort_below`]), and records
//! by a u64 key spread over its range ([`par_sort_by_key_bits`]).
//!
//! A derived table's keys, computed from its sort parent's sorted keys, are already ordered by
//! the leading bits the two tables share (see [`crate::tables::permutation::Permutations::sort_parent`]).
//! [`sort_below`] finishes the job with most-significant-digit radix passes inside each group
//! of equal leading bits, and an insertion sort once a group is small. It never compares keys
//! across groups, so its cost follows the group sizes, whatever the data: with
//! [`crate::tables::permutation::Rekey`], deriving a table from its parent takes less time than
//! `sort_unstable` on each group did, the more so the more leading bits they share
//! (docs/benchmarks.md, "Sorting the tables").

use std::cmp::Ordering;

use rayon::prelude::*;

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
    let (digit_bits, ends) = distribute(group, sorted_bits, |&k| k, scratch);
    // Long buckets take another pass; one insertion pass then sorts all the short ones (it
    // never moves a key out of its bucket, as every key of a later bucket is greater).
    let mut begin = 0;
    for &end in &ends {
        if end - begin > SMALL {
            sort_group(&mut group[begin..end], sorted_bits + digit_bits, scratch);
        }
        begin = end;
    }
    insertion_sort_within(group, usize::MAX);
}

/// One counting pass of most-significant-digit radix sort: `items`, whose keys share their
/// leading `sorted_bits` bits (fewer than 64), put in order of the key's next bits (the
/// digit), through `scratch`. Returns the digit's bits and where each digit's items end.
fn distribute<T: Copy>(
    items: &mut [T],
    sorted_bits: u32,
    key: impl Fn(&T) -> u64,
    scratch: &mut Vec<T>,
) -> (u32, Vec<usize>) {
    // About one item in four digits, so that this one pass leaves few items out of order.
    let wanted = usize::BITS - (items.len() * 4).leading_zeros();
    let digit_bits = wanted.min(MAX_DIGIT_BITS).min(64 - sorted_bits);
    let shift = 64 - sorted_bits - digit_bits;
    let digit_mask = (1u64 << digit_bits) - 1;
    let digit = |item: &T| ((key(item) >> shift) & digit_mask) as usize;

    let mut starts = vec![0usize; 1 << digit_bits];
    for item in items.iter() {
        starts[digit(item)] += 1;
    }
    let mut total = 0;
    for slot in starts.iter_mut() {
        let count = *slot;
        *slot = total;
        total += count;
    }
    scratch.clear();
    if let Some(&first) = items.first() {
        scratch.resize(items.len(), first);
    }
    for item in items.iter() {
        let slot = &mut starts[digit(item)];
        scratch[*slot] = *item;
        *slot += 1;
    }
    items.copy_from_slice(scratch);
    // After the scatter, starts[d] is where digit d's items end.
    (digit_bits, starts)
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

/// Sorts `items` by `order`, which must order them by `key` first: one parallel radix pass
/// on the key's leading bits into buckets of a few thousand, then each bucket sorted by
/// `order`, in parallel. Meant for keys spread over their range (hashes, fingerprints), where
/// it takes less time than a parallel comparison sort (docs/benchmarks.md, "Sorting the
/// tables"); a bucket that
/// skewed keys make large is sorted in parallel on its own. Holds a second buffer of
/// `items`' size while it runs.
pub(crate) fn par_sort_by_key_bits<T, K, O>(items: &mut Vec<T>, key: K, order: O)
where
    T: Copy + Send + Sync,
    K: Fn(&T) -> u64 + Sync,
    O: Fn(&T, &T) -> Ordering + Sync,
{
    if items.len() < PARALLEL_SORT {
        items.par_sort_unstable_by(order);
        return;
    }
    *items = par_sorted_by_key_bits(items, |&item| item, key, order);
}

/// Below this many items [`par_sort_by_key_bits`] leaves the job to a comparison sort.
const PARALLEL_SORT: usize = 1 << 16;

/// `source` mapped by `map` and sorted as [`par_sort_by_key_bits`] sorts, without holding the
/// mapped items unsorted first.
pub(crate) fn par_sorted_by_key_bits<S, T, M, K, O>(
    source: &[S],
    map: M,
    key: K,
    order: O,
) -> Vec<T>
where
    S: Sync,
    T: Copy + Send + Sync,
    M: Fn(&S) -> T + Sync,
    K: Fn(&T) -> u64 + Sync,
    O: Fn(&T, &T) -> Ordering + Sync,
{
    let n = source.len();
    if n < PARALLEL_SORT {
        let mut items: Vec<T> = source.par_iter().map(&map).collect();
        items.par_sort_unstable_by(order);
        return items;
    }
    // Buckets of 2048-4096 items, and at most 2^11 of them (the counters and the scatter's
    // open destinations stay in the caches): larger ones from 2^22 items on.
    let bits = (usize::BITS - (n >> 12).leading_zeros()).clamp(1, MAX_DIGIT_BITS);
    let buckets = 1usize << bits;
    let bucket = |item: &T| (key(item) >> (64 - bits)) as usize;
    let chunk = n.div_ceil(rayon::current_num_threads() * 4);
    let counts: Vec<Vec<usize>> = source
        .par_chunks(chunk)
        .map(|part| {
            let mut counts = vec![0usize; buckets];
            part.iter().for_each(|s| counts[bucket(&map(s))] += 1);
            counts
        })
        .collect();
    // The range of slots each chunk's items of each bucket go to: buckets in order, chunks in
    // order within a bucket.
    let mut ranges = vec![vec![(0usize, 0usize); buckets]; counts.len()];
    let mut bucket_ends = Vec::with_capacity(buckets);
    let mut total = 0;
    for b in 0..buckets {
        for (c, part) in counts.iter().enumerate() {
            ranges[c][b] = (total, total + part[b]);
            total += part[b];
        }
        bucket_ends.push(total);
    }
    let mut sorted: Vec<T> = Vec::with_capacity(n);
    let out = SharedOut(sorted.as_mut_ptr());
    source
        .par_chunks(chunk)
        .zip(ranges)
        .for_each(|(part, mut ranges)| {
            let out = &out;
            for s in part {
                let item = map(s);
                let (next, end) = &mut ranges[bucket(&item)];
                // Closures that answered otherwise than when counting would write outside
                // their range: refused, so that the writes below stay sound.
                assert!(
                    *next < *end,
                    "`map` and `key` answer as they did when counting"
                );
                // SAFETY: each (chunk, bucket) range lies inside `n` and apart from every
                // other, and each slot of it is written once (`next` only grows, below `end`).
                unsafe { out.0.add(*next).write(item) };
                *next += 1;
            }
        });
    // SAFETY: every item was written inside its range without passing its end, and the ranges
    // add up to `n` items: every slot below `n` was written exactly once.
    unsafe { sorted.set_len(n) };
    let mut parts = Vec::with_capacity(buckets);
    let mut rest = &mut sorted[..];
    let mut begin = 0;
    for end in bucket_ends {
        let (part, tail) = rest.split_at_mut(end - begin);
        parts.push(part);
        (rest, begin) = (tail, end);
    }
    parts
        .into_par_iter()
        .for_each_init(Vec::new, |scratch, part| {
            if part.len() > n / 16 {
                part.par_sort_unstable_by(&order);
            } else {
                sort_bucket(part, bits, (&key, &order), scratch);
            }
        });
    sorted
}

/// Sorts by `order` a bucket of `items` whose keys share their leading `sorted_bits` bits:
/// one counting pass on the key's next bits ([`distribute`]), then each group of equal
/// digits by `order`, which orders by key first, so that the groups are already in place. A
/// group that equal keys make long is sorted by `order` whole. `scratch` is working space.
fn sort_bucket<T: Copy>(
    items: &mut [T],
    sorted_bits: u32,
    (key, order): (&impl Fn(&T) -> u64, &impl Fn(&T, &T) -> Ordering),
    scratch: &mut Vec<T>,
) {
    if items.len() <= SMALL || sorted_bits >= 64 {
        insertion_sort_by(items, order);
        return;
    }
    let (_, ends) = distribute(items, sorted_bits, key, scratch);
    let mut begin = 0;
    for &end in &ends {
        let group = &mut items[begin..end];
        if group.len() > SMALL {
            group.sort_unstable_by(order);
        } else {
            insertion_sort_by(group, order);
        }
        begin = end;
    }
}

/// Insertion-sorts `items` by `order`.
fn insertion_sort_by<T: Copy>(items: &mut [T], order: &impl Fn(&T, &T) -> Ordering) {
    for i in 1..items.len() {
        let item = items[i];
        let mut j = i;
        while j > 0 && order(&items[j - 1], &item) == Ordering::Greater {
            items[j] = items[j - 1];
            j -= 1;
        }
        items[j] = item;
    }
}

/// The buffer [`par_sorted_by_key_bits`] scatters into, written from several threads at
/// disjoint places.
struct SharedOut<T>(*mut T);
// SAFETY: every thread writes only its own slots (see the scatter).
unsafe impl<T: Send> Sync for SharedOut<T> {}

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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn sorts_records_like_the_standard_sort(
            seed in any::<u64>(),
            len in prop_oneof![0usize..100, 60_000usize..140_000],
            distinct in prop_oneof![Just(u64::MAX), 1u64..50],
        ) {
            // Records (key, tag) ordered by key then tag; few distinct keys make the skewed
            // case, most records in one bucket.
            let mut state = seed | 1;
            let mut next = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let mut records: Vec<(u64, u32)> = (0..len)
                .map(|i| {
                    let key = next();
                    let key = if distinct == u64::MAX { key } else { (key % distinct) << 58 };
                    (key, i as u32 ^ (next() as u32 & 7))
                })
                .collect();
            let mut expected = records.clone();
            expected.sort_unstable();
            par_sort_by_key_bits(&mut records, |r| r.0, |a, b| a.cmp(b));
            prop_assert_eq!(records, expected);
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
