//! Slices: one part's fingerprints (as every permuted table's keys) and id hashes, cut by
//! table and range, sorted and delta-encoded: the bytes a cluster moves between its tasks
//! (docs/format.md, "Spark slices", draws them byte by byte).
//!
//! Slice bytes (version 1): a version byte (1), then one entry per key, ascending: LEB128 of
//! the key minus the previous one (the first: minus 0), and in table 0's slices LEB128 of the
//! number of documents holding the fingerprint minus one. Id slices hold the id hashes
//! ([`PartSlices::id_hash`]) the same way, repeats kept (as deltas of 0), without counts.

use super::plan::Plan;
use crate::error::{Error, Result};
use crate::format::block::varint;
use crate::tables::sorted_tables;

/// The version byte every slice starts with.
const SLICE_VERSION: u8 = 1;

/// One part's fingerprints and id hashes, cut into slices: see the module docs.
#[derive(Debug)]
pub struct PartSlices {
    plan: Plan,
    fingerprints: Vec<u64>,
    id_hashes: Vec<u64>,
}

impl PartSlices {
    /// An empty part of `plan`.
    pub fn new(plan: &Plan) -> Self {
        PartSlices {
            plan: plan.clone(),
            fingerprints: Vec::new(),
            id_hashes: Vec::new(),
        }
    }

    /// The hash of a document id that id slices carry (XXH3-64 of its bytes): equal ids have
    /// equal hashes, so two documents of one id meet in one slice.
    pub fn id_hash(id: &[u8]) -> u64 {
        xxhash_rust::xxh3::xxh3_64(id)
    }

    /// Adds a document.
    pub fn push(&mut self, fingerprint: u64, id: &[u8]) {
        self.fingerprints.push(fingerprint);
        self.id_hashes.push(Self::id_hash(id));
    }

    /// The documents added.
    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    /// Whether no document was added.
    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }

    /// Calls `emit(slice, bytes)` on every non-empty slice of the part, the tables' in
    /// parallel, so in no set order.
    pub fn finish(mut self, emit: impl Fn(u32, &[u8]) -> Result<()> + Sync) -> Result<()> {
        let plan = &self.plan;
        let ranges = plan.ranges();
        self.fingerprints.sort_unstable();
        let mut distinct: Vec<u64> = Vec::with_capacity(self.fingerprints.len());
        let mut counts: Vec<u64> = Vec::with_capacity(self.fingerprints.len());
        for run in self.fingerprints.chunk_by(|a, b| a == b) {
            distinct.push(run[0]);
            counts.push(run.len() as u64);
        }
        drop(std::mem::take(&mut self.fingerprints));
        let cut = |t: usize, keys: &[u64], counts: Option<&[u64]>| -> Result<()> {
            let mut start = 0;
            while start < keys.len() {
                let range = plan.range_of(keys[start]);
                let end = start + keys[start..].partition_point(|&k| plan.range_of(k) == range);
                let bytes = encode(&keys[start..end], counts.map(|c| &c[start..end]));
                emit((t * ranges + range) as u32, &bytes)?;
                start = end;
            }
            Ok(())
        };
        match &plan.perms {
            None => cut(0, &distinct, Some(&counts))?,
            Some(perms) => sorted_tables::for_each(perms, &distinct, |t, keys| {
                cut(t, keys, (t == 0).then_some(&counts[..]))
            })?,
        }
        self.id_hashes.sort_unstable();
        cut(plan.tables(), &self.id_hashes, None)
    }
}

/// A slice's bytes: see the module docs.
fn encode(keys: &[u64], counts: Option<&[u64]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + keys.len() * 7);
    out.push(SLICE_VERSION);
    let mut previous = 0;
    for (i, &key) in keys.iter().enumerate() {
        varint::encode(key - previous, &mut out);
        previous = key;
        if let Some(counts) = counts {
            varint::encode(counts[i] - 1, &mut out);
        }
    }
    out
}

/// Appends a slice's keys (and counts, when `counts` is given) to `keys` (and `counts`).
pub(super) fn decode(
    bytes: &[u8],
    keys: &mut Vec<u64>,
    mut counts: Option<&mut Vec<u64>>,
) -> Result<()> {
    let bad = |what: &str| Error::corrupt(format!("slice: {what}"));
    match bytes.first() {
        Some(&SLICE_VERSION) => {}
        Some(v) => {
            return Err(bad(&format!(
                "version {v}, this build reads {SLICE_VERSION}"
            )))
        }
        None => return Err(bad("no version byte")),
    }
    let mut rest = &bytes[1..];
    let mut key = 0u64;
    let next = |rest: &mut &[u8]| -> Result<u64> {
        let (value, used) = varint::decode(rest).ok_or_else(|| bad("a truncated number"))?;
        *rest = &rest[used..];
        Ok(value)
    };
    while !rest.is_empty() {
        key = key
            .checked_add(next(&mut rest)?)
            .ok_or_else(|| bad("a key past 2^64"))?;
        keys.push(key);
        if let Some(counts) = counts.as_deref_mut() {
            counts.push(next(&mut rest)?.saturating_add(1));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// A slice from another task is decoded to keys (and counts) or refused as corrupt,
        /// whatever its bytes: never a panic, whether or not it carries counts.
        #[test]
        fn slices_of_any_bytes_never_panic(
            body in proptest::collection::vec(any::<u8>(), 0..300),
            versioned: bool,
        ) {
            let mut bytes = Vec::new();
            if versioned {
                bytes.push(SLICE_VERSION);
            }
            bytes.extend_from_slice(&body);
            let (mut keys, mut counts) = (Vec::new(), Vec::new());
            let _ = decode(&bytes, &mut keys, None);
            let _ = decode(&bytes, &mut keys, Some(&mut counts));
        }

        /// Slices decode to what was encoded.
        #[test]
        fn slices_decode_what_they_encode(
            mut keys in proptest::collection::vec(any::<u64>(), 0..300),
            counts in proptest::collection::vec(1u64..1000, 300),
        ) {
            keys.sort_unstable();
            keys.dedup();
            let counts = &counts[..keys.len()];
            let (mut got, mut got_counts) = (Vec::new(), Vec::new());
            decode(&encode(&keys, Some(counts)), &mut got, Some(&mut got_counts)).unwrap();
            prop_assert_eq!(&got, &keys);
            prop_assert_eq!(&got_counts[..], counts);
        }
    }

    /// A part's slices are the bytes docs/format.md ("Spark slices") draws: its example, and
    /// id hashes ascending with their repeats.
    #[test]
    fn slices_are_the_bytes_format_md_draws() {
        let plan = Plan::new(2, 0, 0).unwrap();
        let mut part = PartSlices::new(&plan);
        for (fingerprint, id) in [(300, "c"), (5, "a"), (5, "b"), (7, "a")] {
            part.push(fingerprint, id.as_bytes());
        }
        let slices = std::sync::Mutex::new(std::collections::BTreeMap::new());
        part.finish(|s, bytes| {
            slices.lock().unwrap().insert(s, bytes.to_vec());
            Ok(())
        })
        .unwrap();
        let slices = slices.into_inner().unwrap();
        assert_eq!(plan.slices(), 2);
        assert_eq!(slices[&0], [0x01, 0x05, 0x01, 0x02, 0x00, 0xa5, 0x02, 0x00]);
        let mut hashes: Vec<u64> = ["c", "a", "b", "a"]
            .iter()
            .map(|id| PartSlices::id_hash(id.as_bytes()))
            .collect();
        hashes.sort_unstable();
        let mut want = vec![SLICE_VERSION];
        let mut previous = 0;
        for hash in hashes {
            varint::encode(hash - previous, &mut want);
            previous = hash;
        }
        assert_eq!(slices[&1], want);
        assert_eq!(
            PartSlices::id_hash(b"a"),
            xxhash_rust::xxh3::xxh3_64_with_seed(b"a", 0)
        );
    }
}
