//! Every pair of fingerprints within K bits of a list, in memory, with the permuted tables
//! (seomoz's `find_all`); what they mean for documents is [`crate::NearDuplicates`].
//!
//! Within a table's sorted keys, two fingerprints can be within K bits only if they share the
//! table's leading blocks, so each group of keys sharing them is compared pairwise; a pair is
//! kept only by the first table whose leading blocks both share ([`Permutations::reports`]),
//! so every pair comes out once with no global set. Permuting bits keeps Hamming distances.

use std::sync::Mutex;

use rayon::prelude::*;

use crate::error::Result;
use crate::format::settings::Settings;
use crate::similarity::fingerprint::hex;
use crate::sys::progress::{Phase, Progress};
use crate::tables::permutation::Permutations;
use crate::tables::sorted_tables;

/// Two near-duplicates within the audit's distance, `a < b`: two fingerprints
/// (`Pair<u64>`, what [`find_all`] finds) or two documents' ids (`Pair<String>`). JSON:
/// `{"a", "b", "distance"}`, fingerprints as 16 hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pair<T> {
    /// The smaller one.
    pub a: T,
    /// The larger one.
    pub b: T,
    /// The Hamming distance between their fingerprints.
    pub distance: u32,
}

/// Two distinct fingerprints within the distance.
pub(crate) type FingerprintPair = Pair<u64>;

impl serde::Serialize for Pair<u64> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        Pair {
            a: hex::format(self.a),
            b: hex::format(self.b),
            distance: self.distance,
        }
        .serialize(serializer)
    }
}

impl serde::Serialize for Pair<String> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Pair", 3)?;
        out.serialize_field("a", &self.a)?;
        out.serialize_field("b", &self.b)?;
        out.serialize_field("distance", &self.distance)?;
        out.end()
    }
}

/// Appends to `out` the pairs of `keys` (table `t`'s keys, ascending, distinct) within
/// `distance` bits that table `t` reports.
pub(crate) fn close_pairs_in_sorted(
    perms: &Permutations,
    t: usize,
    keys: &[u64],
    distance: u32,
    out: &mut Vec<FingerprintPair>,
) {
    let table = &perms.tables()[t];
    let shift = 64 - table.prefix_bits();
    for group in keys.chunk_by(|a, b| a >> shift == b >> shift) {
        for (i, &x) in group.iter().enumerate() {
            for &y in &group[i + 1..] {
                let d = (x ^ y).count_ones();
                if d <= distance {
                    let (x, y) = (table.unpermute(x), table.unpermute(y));
                    if perms.reports(t, x, y) {
                        out.push(FingerprintPair {
                            a: x.min(y),
                            b: x.max(y),
                            distance: d,
                        });
                    }
                }
            }
        }
    }
}

/// The settings [`find_all`] uses for `distance` over `fingerprints` distinct fingerprints:
/// `blocks` when given, else the blocks [`Settings::for_size`] picks for that many; one shard.
pub(crate) fn find_all_settings(
    distance: u8,
    fingerprints: u64,
    blocks: Option<u8>,
) -> Result<Settings> {
    let settings = match blocks {
        Some(blocks) => Settings {
            blocks,
            distance,
            shards: 1,
        },
        None => Settings {
            shards: 1,
            ..Settings::for_size(distance, fingerprints.max(1))?
        },
    };
    settings.validate()?;
    Ok(settings)
}

/// Every pair of distinct fingerprints in `fingerprints` within `distance` bits, computed in
/// memory with permuted tables of `blocks` blocks (when None, the blocks
/// [`Settings::for_size`] picks for that many fingerprints). Equal fingerprints are one value,
/// as in seomoz's `find_all`. Sorted by (a, b). `progress` is told of each table done.
///
/// ```
/// use simhashdb::find_all;
/// let pairs = find_all(&[0b1111, 0b0111, 1 << 63], 3, Some(6), &())?;
/// assert_eq!(pairs.len(), 1);
/// assert_eq!((pairs[0].a, pairs[0].b, pairs[0].distance), (0b0111, 0b1111, 1));
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub fn find_all(
    fingerprints: &[u64],
    distance: u8,
    blocks: Option<u8>,
    progress: &dyn Progress,
) -> Result<Vec<FingerprintPair>> {
    if distance == 0 {
        return Ok(Vec::new()); // distinct fingerprints are never 0 bits apart
    }
    let settings = find_all_settings(distance, fingerprints.len() as u64, blocks)?;
    Ok(find_all_in(fingerprints, &settings, progress))
}

/// [`find_all`] with the tables of `settings`.
pub(crate) fn find_all_in(
    fingerprints: &[u64],
    settings: &Settings,
    progress: &dyn Progress,
) -> Vec<FingerprintPair> {
    let _phase = Phase::start(progress, "find-all", settings.table_count() as u64);
    let perms = Permutations::new(settings);
    let distance = u32::from(settings.distance);
    let mut unique = fingerprints.to_vec();
    unique.par_sort_unstable();
    unique.dedup();
    let parts = Mutex::new(Vec::new());
    sorted_tables::for_each(&perms, &unique, |t, keys| {
        let mut out = Vec::new();
        close_pairs_in_sorted(&perms, t, keys, distance, &mut out);
        progress.advance(1);
        parts.lock().expect("no visit panicked").push(out);
        Ok(())
    })
    .expect("the visits do not fail");
    let mut pairs: Vec<FingerprintPair> = parts
        .into_inner()
        .expect("no visit panicked")
        .into_iter()
        .flatten()
        .collect();
    pairs.par_sort_unstable();
    pairs
}
