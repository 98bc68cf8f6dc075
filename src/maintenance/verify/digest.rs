//! Multiset digests: what `verify` compares where two copies must hold the same items (every
//! permuted table the same fingerprints, the postings the live documents).

/// A multiset digest: equal multisets give equal digests; different ones collide with
/// probability about 2^-64 per component.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Digest {
    pub(super) count: u64,
    sum: u64,
    sum_of_squares: u64,
}

impl Digest {
    pub(super) fn add(&mut self, item: u64) {
        let h = mix(item);
        self.count += 1;
        self.sum = self.sum.wrapping_add(h);
        self.sum_of_squares = self.sum_of_squares.wrapping_add(h.wrapping_mul(h | 1));
    }
}

/// The splitmix64 finalizer: a bijection that spreads every input bit over the output.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A document as both of its copies hold it: `(fingerprint, id, batch)`.
pub(super) fn document_hash(fingerprint: u64, id: &str, batch: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(id.as_bytes(), fingerprint) ^ batch
}
