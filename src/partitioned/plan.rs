//! The plan of a partitioned audit: how many blocks, the distance, and how many ranges each
//! permuted table (and the id hashes) is cut into; the number of every slice follows from it.

use crate::error::{Error, Result, Setting};
use crate::format::settings::{binomial, Settings};
use crate::tables::permutation::Permutations;

/// The most range bits a plan takes: 65,536 ranges per table.
const MAX_RANGE_BITS: u8 = 16;

/// How a partitioned audit is cut: the permuted tables of `blocks` blocks at `distance`, each
/// cut into `2^range_bits` ranges of keys, and as many ranges of id hashes. Distance 0 needs
/// no table: its one "table" is the fingerprints themselves, for the copies.
///
/// A whole audit in one process, as a cluster runs it: each part (a Spark partition) cuts
/// its fingerprints into slices, the slices of one number meet in one task, which finds the
/// pairs among them.
///
/// ```
/// use simhashdb::partitioned::{PartSlices, Plan};
/// use std::collections::BTreeMap;
/// use std::sync::Mutex;
///
/// let plan = Plan::for_size(4, 3, 2)?; // 4 fingerprints, distance 3, 2 tasks
/// let parts: [&[(u64, &str)]; 2] = [&[(0b0000, "a"), (0b0111, "b")], &[(0b0111, "c"), (!0, "d")]];
/// let shuffled = Mutex::new(BTreeMap::<u32, Vec<Vec<u8>>>::new());
/// for part in parts {
///     let mut slices = PartSlices::new(&plan);
///     for &(fingerprint, id) in part {
///         slices.push(fingerprint, id.as_bytes());
///     }
///     slices.finish(|number, bytes| {
///         shuffled.lock().unwrap().entry(number).or_default().push(bytes.to_vec());
///         Ok(())
///     })?;
/// }
/// let (mut pairs, mut copies) = (Vec::new(), Vec::new());
/// for (number, slices) in shuffled.into_inner().unwrap() {
///     let found = plan.find(number, slices.iter().map(|s| &s[..]))?;
///     pairs.extend(found.pairs.iter().map(|p| (p.a, p.b, p.distance)));
///     copies.extend(found.copies);
/// }
/// assert_eq!(pairs, [(0b0000, 0b0111, 3)]); // b and c share 0b0111: a copy, not a pair
/// assert_eq!(copies, [(0b0111, 2)]);
/// # Ok::<(), simhashdb::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Plan {
    pub(super) blocks: u8,
    pub(super) distance: u8,
    pub(super) range_bits: u8,
    /// The permuted tables (None at distance 0).
    pub(super) perms: Option<Permutations>,
}

impl PartialEq for Plan {
    fn eq(&self, other: &Self) -> bool {
        (self.blocks, self.distance, self.range_bits)
            == (other.blocks, other.distance, other.range_bits)
    }
}

impl Plan {
    /// The plan of `blocks` blocks at `distance`, each table cut into 2^`range_bits` key
    /// ranges. Fails for settings a store could not have (docs/design.md) and for more range
    /// bits than the narrowest table's leading blocks span (a range must never split a group
    /// of keys that share them) or than 16.
    pub fn new(blocks: u8, distance: u8, range_bits: u8) -> Result<Plan> {
        let perms = match distance {
            0 => None,
            _ => {
                let settings = Settings {
                    blocks,
                    distance,
                    shards: 1,
                };
                settings.validate()?;
                if u32::from(range_bits) > settings.min_prefix_bits() {
                    return Err(Error::settings(
                        Setting::Blocks,
                        format!(
                            "{range_bits} range bits split groups of keys that share the \
                             {} leading bits of the narrowest table",
                            settings.min_prefix_bits()
                        ),
                    ));
                }
                Some(Permutations::new(&settings))
            }
        };
        if range_bits > MAX_RANGE_BITS {
            return Err(Error::settings(
                Setting::Blocks,
                format!("{range_bits} range bits: at most {MAX_RANGE_BITS}"),
            ));
        }
        Ok(Plan {
            blocks,
            distance,
            range_bits,
            perms,
        })
    }

    /// The plan for `fingerprints` distinct fingerprints at `distance`, cut for about
    /// `tasks` reduce tasks: the blocks that move the fewest rows (each table holds every
    /// fingerprint once, and compares the pairs that share its leading blocks, about
    /// n^2 / 2^(leading bits + 1) for random fingerprints), and enough ranges that every task
    /// gets a few slices.
    pub fn for_size(fingerprints: u64, distance: u8, tasks: usize) -> Result<Plan> {
        if distance == 0 {
            return Plan::for_blocks(2, 0, tasks);
        }
        let n = fingerprints.max(1) as f64;
        let mut best: Option<(f64, u8)> = None;
        for blocks in distance.saturating_add(1)..=64u8.min(distance.saturating_add(24)) {
            let settings = Settings {
                blocks,
                distance,
                shards: 1,
            };
            if settings.validate().is_err() {
                continue;
            }
            let tables = binomial(u32::from(blocks), u32::from(distance)) as f64;
            let compared = n * n / 2f64.powi(settings.min_prefix_bits() as i32 + 1);
            let cost = tables * (n + compared);
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, blocks));
            }
        }
        let Some((_, blocks)) = best else {
            return Err(Error::settings(
                Setting::Distance,
                format!("no number of blocks works at distance {distance}"),
            ));
        };
        Plan::for_blocks(blocks, distance, tasks)
    }

    /// The plan of `blocks` blocks at `distance`, cut for about `tasks` reduce tasks (see
    /// [`Plan::for_size`]).
    pub fn for_blocks(blocks: u8, distance: u8, tasks: usize) -> Result<Plan> {
        if distance == 0 {
            return Plan::new(blocks, 0, range_bits_for(1, tasks, MAX_RANGE_BITS));
        }
        let settings = Settings {
            blocks,
            distance,
            shards: 1,
        };
        settings.validate()?;
        let most = (settings.min_prefix_bits().min(u32::from(MAX_RANGE_BITS))) as u8;
        Plan::new(
            blocks,
            distance,
            range_bits_for(settings.table_count(), tasks, most),
        )
    }

    /// m.
    pub fn blocks(&self) -> u8 {
        self.blocks
    }

    /// D.
    pub fn distance(&self) -> u8 {
        self.distance
    }

    /// log2 of the ranges each table is cut into.
    pub fn range_bits(&self) -> u8 {
        self.range_bits
    }

    /// The number of tables (1 at distance 0: the fingerprints themselves).
    pub fn tables(&self) -> usize {
        self.perms.as_ref().map_or(1, |p| p.tables().len())
    }

    /// The ranges each table (and the id hashes) is cut into.
    pub(super) fn ranges(&self) -> usize {
        1 << self.range_bits
    }

    /// The number of slices a part makes at most: every table's ranges, then the id ranges.
    pub fn slices(&self) -> u32 {
        ((self.tables() + 1) * self.ranges()) as u32
    }

    /// The range of a key (or id hash): its leading `range_bits` bits.
    pub(super) fn range_of(&self, key: u64) -> usize {
        match self.range_bits {
            0 => 0,
            bits => (key >> (64 - u32::from(bits))) as usize,
        }
    }
}

/// The range bits that give `tables` tables at least four slices per task for `tasks` tasks.
fn range_bits_for(tables: usize, tasks: usize, most: u8) -> u8 {
    let wanted = (4 * tasks.max(1)).div_ceil(tables.max(1));
    (wanted.next_power_of_two().trailing_zeros() as u8).min(most)
}
