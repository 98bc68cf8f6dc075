//! The documents a dedup has kept so far, and the nearest of them to a fingerprint.
//!
//! The same permuted tables as the store's (Manku, Jain and Das Sarma): two fingerprints
//! within `distance` bits agree on the leading blocks of at least one needed table, so each
//! table files a kept fingerprint under its leading blocks' bits, and a lookup scans the
//! fingerprints filed under its own in each table. The tables grow one fingerprint at a time
//! (dedup is greedy in input order), so they are hash tables, not sorted runs: open addressing
//! with linear probing, at most 70% full. A slot holds the document's index and a 32-bit fold
//! of its fingerprint (the two halves XORed): two fingerprints within D bits have folds within
//! D bits, so a probe rejects almost every slot it passes without reading the document's
//! fingerprint, a cache miss each, which was most of a large dedup's time
//! (docs/benchmarks.md, "The kept set's cache misses").
//!
//! Memory per kept document: its id and fingerprint (a [`Batch`]), its sketch when the dedup
//! verifies with sketches, and a slot of 8 bytes in each needed table (10 tables at m = 5,
//! K = 3), the tables 35-70% full.

use rayon::prelude::*;

use crate::tables::permutation::Permutations;
use crate::write::batch::Batch;

/// A slot no document fills (no document has index `u32::MAX`).
const EMPTY: u64 = u64::MAX;
/// Slots per table when the first document is kept.
const FIRST_CAPACITY: usize = 1 << 10;

pub(crate) struct Kept {
    /// Per needed table, the bits of its leading blocks (in the fingerprint's own order).
    leading: Vec<u64>,
    distance: u32,
    documents: Batch,
    /// `leading.len()` tables of `capacity` slots each; a slot holds a document's
    /// fingerprint's fold (high 32 bits) and its index (low 32 bits).
    slots: Vec<u64>,
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

    /// An empty set with the same tables and distance.
    pub fn empty_like(&self) -> Self {
        Kept {
            slots: vec![EMPTY; self.leading.len() * FIRST_CAPACITY],
            leading: self.leading.clone(),
            distance: self.distance,
            documents: Batch::new(),
            capacity: FIRST_CAPACITY,
        }
    }

    /// Keeps every document of `other`, after those kept already.
    pub fn absorb(&mut self, other: &Kept) {
        let first = self.documents.len();
        for i in 0..other.documents.len() {
            let (id, fingerprint) = (other.documents.id(i), other.documents.fingerprint(i));
            match other.documents.sketch(i) {
                Some(sketch) => self.documents.push_sketched(id, fingerprint, sketch),
                None => self.documents.push(id, fingerprint),
            }
            .expect("ids were checked when kept");
        }
        let wanted = (self.documents.len() * 10).div_ceil(7).next_power_of_two();
        if wanted > self.capacity {
            self.capacity = wanted;
            self.slots = vec![EMPTY; self.leading.len() * self.capacity];
            self.file(0..self.documents.len());
        } else {
            self.file(first..self.documents.len());
        }
    }

    /// The id of kept document `i`.
    pub fn id(&self, i: usize) -> &str {
        self.documents.id(i)
    }

    /// The sketch of kept document `i`, if it has one.
    pub fn sketch(&self, i: usize) -> Option<&[u8]> {
        self.documents.sketch(i)
    }

    /// The kept document nearest to `fingerprint` within the distance, as (distance, index);
    /// of several at the same distance, the one with the smallest id, then the one kept first
    /// (an id the input gives twice is kept twice).
    #[cfg(test)]
    pub fn nearest(&self, fingerprint: u64) -> Option<(u32, usize)> {
        self.nearest_where(fingerprint, |_| true)
    }

    /// [`Kept::nearest`] among the kept documents `accept` takes (by index).
    pub fn nearest_where(
        &self,
        fingerprint: u64,
        accept: impl Fn(usize) -> bool,
    ) -> Option<(u32, usize)> {
        self.touch_homes(fingerprint);
        let mut best: Option<(u32, usize)> = None;
        for (t, &leading) in self.leading.iter().enumerate() {
            let slots = &self.slots[t * self.capacity..(t + 1) * self.capacity];
            let mut slot = self.home(fingerprint & leading);
            let fold = fold(fingerprint);
            // Every document filed under these leading bits lies before the next empty slot.
            while slots[slot] != EMPTY {
                let (tag, i) = ((slots[slot] >> 32) as u32, slots[slot] as u32 as usize);
                // The folds' distance is at most the fingerprints'.
                if (tag ^ fold).count_ones() > self.distance {
                    slot = (slot + 1) & (self.capacity - 1);
                    continue;
                }
                let d = (self.documents.fingerprint(i) ^ fingerprint).count_ones();
                if d <= self.distance {
                    let better = match best {
                        _ if !accept(i) => false,
                        None => true,
                        Some((bd, bi)) => {
                            (d, self.documents.id(i), i) < (bd, self.documents.id(bi), bi)
                        }
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

    /// Reads the first slot of `fingerprint` in every table: the reads are independent, so
    /// the CPU overlaps their cache misses, and the probes that follow find the slots cached
    /// (the store's queries do the same, see `Snapshot::query`).
    fn touch_homes(&self, fingerprint: u64) {
        let mut touched = 0;
        for (t, &leading) in self.leading.iter().enumerate() {
            touched ^= self.slots[t * self.capacity + self.home(fingerprint & leading)];
        }
        std::hint::black_box(touched);
    }

    /// Keeps a document (its id already checked), with its sketch if it has one.
    pub fn push(&mut self, id: &str, fingerprint: u64, sketch: Option<&[u8]>) {
        let i = self.documents.len();
        match sketch {
            Some(sketch) => self.documents.push_sketched(id, fingerprint, sketch),
            None => self.documents.push(id, fingerprint),
        }
        .expect("ids are checked as they are read");
        if (i + 1) * 10 > self.capacity * 7 {
            // Double every table and file every document again.
            self.capacity *= 2;
            self.slots = vec![EMPTY; self.leading.len() * self.capacity];
            self.file(0..i + 1);
        } else {
            self.file(i..i + 1);
        }
    }

    /// Files documents `range` in every table, the tables in parallel (each is its own slice
    /// of slots) when there are many documents.
    fn file(&mut self, range: std::ops::Range<usize>) {
        assert!(
            range.end < u32::MAX as usize,
            "fewer than 2^32 - 1 kept documents"
        );
        let (capacity, documents) = (self.capacity, &self.documents);
        let file_table = |(slots, &leading): (&mut [u64], &u64)| {
            for i in range.clone() {
                let fingerprint = documents.fingerprint(i);
                let mut slot = home(capacity, fingerprint & leading);
                while slots[slot] != EMPTY {
                    slot = (slot + 1) & (capacity - 1);
                }
                slots[slot] = u64::from(fold(fingerprint)) << 32 | i as u64;
            }
        };
        let tables = self.slots.chunks_mut(capacity).zip(&self.leading);
        if range.len() < 1024 {
            tables.for_each(file_table);
        } else {
            tables.par_bridge().for_each(file_table);
        }
    }

    /// The slot where the documents with these leading bits start.
    fn home(&self, leading_bits: u64) -> usize {
        home(self.capacity, leading_bits)
    }
}

/// The slot where documents with these leading bits start in a table of `capacity` (a power
/// of two) slots.
fn home(capacity: usize, leading_bits: u64) -> usize {
    // Fibonacci hashing: the product's top bits depend on every bit of the key.
    let bits = capacity.trailing_zeros();
    (leading_bits.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
}

/// The two halves of a fingerprint XORed: `fold(a ^ b)` has at most the bits of `a ^ b`.
fn fold(fingerprint: u64) -> u32 {
    (fingerprint ^ (fingerprint >> 32)) as u32
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
                    // Ids repeat: an input may give one twice, and both are kept.
                    let id = format!("d{:05}", (fps.len() - n) % 40);
                    kept.push(&id, fp, None);
                    model.push((id, fp));
                }
            }
        }
    }

    #[test]
    fn absorbing_groups_equals_keeping_one_at_a_time() {
        let perms = Permutations::new(&Settings::default());
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut one_by_one = Kept::new(&perms, 3);
        let mut grouped = Kept::new(&perms, 3);
        let mut n = 0;
        for group_size in [1, 5000, 3, 1023, 1024, 20_000, 7] {
            let mut group = grouped.empty_like();
            for _ in 0..group_size {
                let fp = next();
                let id = format!("d{n}");
                n += 1;
                one_by_one.push(&id, fp, None);
                group.push(&id, fp, None);
            }
            grouped.absorb(&group);
        }
        for _ in 0..20_000 {
            // Near a kept fingerprint, or anywhere.
            let q = match next() % 2 {
                0 => one_by_one.documents.fingerprint((next() % n) as usize) ^ (1 << (next() % 64)),
                _ => next(),
            };
            assert_eq!(grouped.nearest(q), one_by_one.nearest(q), "{q:016x}");
        }
    }
}
