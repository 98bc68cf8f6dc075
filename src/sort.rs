//! Sorting by a u64 key, fast for the near-uniform keys this crate sorts (permuted
//! fingerprints, id hashes): one counting pass scatters by the leading bits into buckets of
//! about 16 elements, then each bucket is sorted by comparison. Stable.

/// Sorts `items` by `key`, keeping equal keys in their original order.
pub fn sort_by_u64_key<T: Copy>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    let n = items.len();
    if n < 1 << 12 {
        items.sort_by_key(|item| key(item));
        return;
    }
    // About 16 items per bucket, at most 2^22 buckets (32 MiB of counts).
    let bits = (64 - (n as u64 / 16).leading_zeros()).clamp(8, 22);
    let shift = 64 - bits;
    let mut starts = vec![0usize; (1 << bits) + 1];
    for item in items.iter() {
        starts[(key(item) >> shift) as usize + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut next = starts.clone();
    let mut out: Vec<T> = Vec::with_capacity(n);
    // SAFETY: every slot 0..n is written exactly once below (the bucket offsets partition
    // 0..n), before the length is set.
    let slots = out.spare_capacity_mut();
    for item in items.iter() {
        let b = (key(item) >> shift) as usize;
        slots[next[b]].write(*item);
        next[b] += 1;
    }
    unsafe { out.set_len(n) };
    for b in 0..1 << bits {
        let bucket = &mut out[starts[b]..starts[b + 1]];
        if bucket.len() > 1 {
            bucket.sort_by_key(|item| key(item));
        }
    }
    *items = out;
}

/// Sorts u64 keys ascending.
pub fn sort_u64(keys: &mut Vec<u64>) {
    sort_by_u64_key(keys, |&k| k);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorts_stably_like_std(v in proptest::collection::vec((any::<u64>(), any::<u16>()), 0..20_000), narrow: bool) {
            let mut v: Vec<(u64, u16)> = v;
            if narrow {
                v.iter_mut().for_each(|x| x.0 >>= 50); // many equal keys
            }
            let mut expected = v.clone();
            expected.sort_by_key(|x| x.0);
            sort_by_u64_key(&mut v, |x| x.0);
            prop_assert_eq!(v, expected);
        }
    }
}
