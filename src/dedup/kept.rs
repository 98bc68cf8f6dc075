//! The documents a dedup has kept so far, and the nearest of them to a fingerprint.
//!
//! The same permuted tables as the store's (Manku, Jain and Das Sarma): two fingerprints
//! within `distance` bits agree on the leading blocks of at least one needed table, so each
//! table files a kept fingerprint under its leading blocks' bits, and a lookup scans the
//! fingerprints filed under its own in each table. The tables grow one fingerprint at a time
//! (dedup is greedy in input order), so they are hash tables, not sorted runs: open addressing
//! with linear probing, one `u32` slot per kept document per table, at most 70% full.
//!
//! Memory per kept document: its id and fingerprint (a [`Batch`]) and 6 to 11 bytes per
//! needed table (10 tables at m = 5, K = 3).

use crate::tables::permutation::Permutations;
use crate::write::batch::Batch;

/// A slot no document fills.
const EMPTY: u32 = u32::MAX;
/// Slots per table when the first document is kept.
const FIRST_CAPACITY: usize = 1 << 10;

pub(crate) struct Kept {
    /// Per needed table, the bits of its leading blocks (in the fingerprint's own order).
    leading: Vec<u64>,
    distance: u32,
    documents: Batch,
    /// `leading.len()` tables of `capacity` slots each; a slot holds a document's index.
    slots: Vec<u32>,
    capacity: usize,
}

impl Kept {
    /// An empty set, answering lookups within `distance` bits, which may not exceed the K of
    /// `perms`.
    pub fn new(perms: &Permutations, distance: u32) -> Self {
        let leading = (0..perms.tables().len())
            .filter(|&t| perms.is_needed(t, distance))
            .map(|t| {
                let table = &perms.tables()[t];
                table.unpermute(!(u64::MAX >> table.prefix_bits()))
            })
            .collect::<Vec<_>>();
        Kept {
            slots: vec![EMPTY; leading.len() * FIRST_CAPACITY],
            leading,
            distance,
            documents: Batch::new(),
            capacity: FIRST_CAPACITY,
        }
    }

    /// The id of kept document `i`.
    pub fn id(&self, i: usize) -> &str {
        self.documents.id(i)
    }

    /// The kept document nearest to `fingerprint` within the distance, as (distance, index);
    /// of several at the same distance, the one with the smallest id.
    pub fn nearest(&self, fingerprint: u64) -> Option<(u32, usize)> {
        let mut best: Option<(u32, usize)> = None;
        for (t, &leading) in self.leading.iter().enumerate() {
            let slots = &self.slots[t * self.capacity..(t + 1) * self.capacity];
            let mut slot = self.home(fingerprint & leading);
            // Every document filed under these leading bits lies before the next empty slot.
            while slots[slot] != EMPTY {
                let i = slots[slot] as usize;
                let d = (self.documents.fingerprint(i) ^ fingerprint).count_ones();
                if d <= self.distance {
                    let better = match best {
                        None => true,
                        Some((bd, bi)) => (d, self.documents.id(i)) < (bd, self.documents.id(bi)),
                    };
                    if better {
                        best = Some((d, i));
                    }
                }
                slot = (slot + 1) & (self.capacity - 1);
            }
        }
        best
    }

    /// Keeps a document (its id already checked).
    pub fn push(&mut self, id: &str, fingerprint: u64) {
        let i = self.documents.len();
        self.documents
            .push(id, fingerprint)
            .expect("ids are checked as they are read");
        if (i + 1) * 10 > self.capacity * 7 {
            self.grow();
        } else {
            self.file(i);
        }
    }

    /// Doubles every table and files every document again.
    fn grow(&mut self) {
        self.capacity *= 2;
        self.slots = vec![EMPTY; self.leading.len() * self.capacity];
        for i in 0..self.documents.len() {
            self.file(i);
        }
    }

    /// Files document `i` in every table.
    fn file(&mut self, i: usize) {
        let fingerprint = self.documents.fingerprint(i);
        for t in 0..self.leading.len() {
            let mut slot = self.home(fingerprint & self.leading[t]);
            let slots = &mut self.slots[t * self.capacity..(t + 1) * self.capacity];
            while slots[slot] != EMPTY {
                slot = (slot + 1) & (self.capacity - 1);
            }
            slots[slot] = u32::try_from(i).expect("fewer than 2^32 kept documents");
        }
    }

    /// The slot where the documents with these leading bits start.
    fn home(&self, leading_bits: u64) -> usize {
        // Fibonacci hashing: the product's top bits depend on every bit of the key.
        let bits = self.capacity.trailing_zeros();
        (leading_bits.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::settings::Settings;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn nearest_is_the_brute_force_nearest(
            fingerprints in proptest::collection::vec(any::<u64>(), 1..3000),
            flips in proptest::collection::vec((0usize..3000, any::<u64>()), 0..3000),
            distance in 0u32..=3,
        ) {
            // Near fingerprints: copies of earlier ones with a few bits flipped.
            let mut fps = fingerprints.clone();
            for (from, bits) in flips {
                let base = fps[from % fps.len()];
                let mask = (1u64 << (bits % 64)) | (1u64 << ((bits >> 6) % 64));
                fps.push(if bits % 3 == 0 { base } else { base ^ mask });
            }
            let perms = Permutations::new(&Settings::default());
            let mut kept = Kept::new(&perms, distance);
            let mut model: Vec<(String, u64)> = Vec::new();
            for (n, &fp) in fps.iter().enumerate() {
                let expected = model
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, k))| (k ^ fp).count_ones() <= distance)
                    .min_by(|a, b| {
                        let key = |(_, (id, k)): &(usize, &(String, u64))| ((*k ^ fp).count_ones(), id.clone());
                        key(a).cmp(&key(b))
                    })
                    .map(|(i, (_, k))| ((k ^ fp).count_ones(), i));
                prop_assert_eq!(kept.nearest(fp), expected);
                if expected.is_none() || n % 7 == 0 {
                    let id = format!("d{:05}", fps.len() - n);
                    kept.push(&id, fp);
                    model.push((id, fp));
                }
            }
        }
    }
}
