//! The permuted tables of Manku, Jain and Das Sarma (WWW 2007).
//!
//! A fingerprint is split into m blocks, block 0 being the most significant. Two fingerprints
//! within K bits differ in at most K blocks, so they agree on at least m-K. Table t moves one
//! choice of m-K blocks (its *leading set*) to the front, keeping the order of blocks within the
//! leading set and within the rest. Tables are numbered in lexicographic order of their leading
//! sets, so table 0 leads with blocks 0..m-K and is the identity permutation: its keys are the
//! fingerprints themselves.
//!
//! Every pair within K bits shares the leading blocks of at least one table; the *first* such
//! table, the one whose leading set is the m-K lowest-numbered blocks the pair agrees on, is the
//! one that reports it ([`Permutations::reports`]), so results need no de-duplication.

use crate::format::settings::Settings;

/// One permuted table: where each block moves, and the prefix its keys are grouped by.
#[derive(Clone, Debug)]
pub struct Table {
    /// (source shift, width mask, destination shift) per block, in source block order.
    moves: Vec<(u32, u64, u32)>,
    /// The leading set, ascending: the blocks the key starts with, in key order.
    leading: Vec<u32>,
    /// Bit i set iff block i is in the leading set.
    leading_set: u64,
    /// The highest block number in the leading set.
    last_leading_block: u32,
    /// Number of leading bits the table groups keys by.
    prefix_bits: u32,
}

impl Table {
    /// The permuted key of a fingerprint.
    #[inline]
    pub fn permute(&self, fingerprint: u64) -> u64 {
        self.moves.iter().fold(0, |key, &(src, mask, dst)| {
            key | (((fingerprint >> src) & mask) << dst)
        })
    }

    /// The fingerprint of a permuted key.
    #[inline]
    pub fn unpermute(&self, key: u64) -> u64 {
        self.moves.iter().fold(0, |fp, &(src, mask, dst)| {
            fp | (((key >> dst) & mask) << src)
        })
    }

    /// The inclusive range of keys that share `key`'s leading blocks.
    #[inline]
    pub fn prefix_range(&self, key: u64) -> (u64, u64) {
        let low_mask = u64::MAX >> self.prefix_bits;
        (key & !low_mask, key | low_mask)
    }

    /// Number of leading bits the table's keys are grouped by.
    pub fn prefix_bits(&self) -> u32 {
        self.prefix_bits
    }
}

/// The map from one table's keys to another's. Each block rotates from its place in one key
/// to its place in the other; blocks that rotate by the same amount move together, so a map
/// is a few rotate-and-mask steps, with no per-block shifting back and forth.
#[derive(Clone, Debug)]
pub struct Rekey {
    /// (left rotation, mask of the bits it places), one per distinct rotation.
    moves: Vec<(u32, u64)>,
}

impl Rekey {
    /// The other table's key of `key`.
    #[inline]
    pub fn apply(&self, key: u64) -> u64 {
        self.moves.iter().fold(0, |out, &(rotation, mask)| {
            out | (key.rotate_left(rotation) & mask)
        })
    }

    /// Replaces `out` with the other table's keys of `keys`, in the same order.
    pub fn apply_into(&self, keys: &[u64], out: &mut Vec<u64>) {
        out.clear();
        out.extend(keys.iter().map(|&k| self.apply(k)));
    }
}

/// The C(m, K) tables of a store, and the block layout they share.
#[derive(Clone, Debug)]
pub struct Permutations {
    tables: Vec<Table>,
    /// (shift, width mask) of each block of a fingerprint, block 0 first.
    blocks: Vec<(u32, u64)>,
    leading_blocks: u32,
    shard_bits: u32,
}

impl Permutations {
    /// The tables for valid settings (see [`Settings::validate`]).
    pub fn new(settings: &Settings) -> Self {
        let widths = settings.block_widths();
        let m = widths.len() as u32;
        let lead = m - u32::from(settings.distance);
        let mut shift = 64;
        let blocks: Vec<(u32, u64)> = widths
            .iter()
            .map(|&w| {
                shift -= w;
                (shift, width_mask(w))
            })
            .collect();
        let tables = combinations(m, lead)
            .into_iter()
            .map(|leading| {
                let order: Vec<u32> = leading
                    .iter()
                    .copied()
                    .chain((0..m).filter(|b| !leading.contains(b)))
                    .collect();
                let mut dst = 64;
                let mut moves = vec![(0, 0, 0); m as usize];
                for &b in &order {
                    dst -= widths[b as usize];
                    let (src, mask) = blocks[b as usize];
                    moves[b as usize] = (src, mask, dst);
                }
                Table {
                    moves,
                    leading: leading.clone(),
                    leading_set: leading.iter().fold(0, |s, &b| s | (1 << b)),
                    last_leading_block: *leading.last().expect("m - K >= 1"),
                    prefix_bits: leading.iter().map(|&b| widths[b as usize]).sum(),
                }
            })
            .collect();
        Permutations {
            tables,
            blocks,
            leading_blocks: lead,
            shard_bits: settings.shard_bits(),
        }
    }

    /// All tables, in order.
    pub fn tables(&self) -> &[Table] {
        &self.tables
    }

    /// For table `t > 0`, the earlier table whose keys share the most leading bits with
    /// `t`'s, and that number of bits: `t`'s keys in `parent`'s order are already sorted by
    /// those bits, so sorting them needs only a sort within each group of equal leading bits.
    /// Table 0 (the identity) is every table's fallback parent, with 0 shared bits.
    pub fn sort_parent(&self, t: usize) -> (usize, u32) {
        let child = &self.tables[t];
        (0..t)
            .map(|p| {
                let shared = child
                    .leading
                    .iter()
                    .zip(&self.tables[p].leading)
                    .take_while(|(a, b)| a == b)
                    .map(|(&b, _)| self.blocks[b as usize].1.count_ones())
                    .sum::<u32>();
                (p, shared)
            })
            .max_by_key(|&(p, shared)| (shared, std::cmp::Reverse(p)))
            .unwrap_or((0, 0))
    }

    /// The map from table `from`'s keys to table `to`'s.
    pub fn rekey(&self, from: usize, to: usize) -> Rekey {
        let mut moves: Vec<(u32, u64)> = Vec::new();
        for (&(_, mask, src), &(_, _, dst)) in
            self.tables[from].moves.iter().zip(&self.tables[to].moves)
        {
            let rotation = (64 + dst - src) % 64;
            match moves.iter_mut().find(|(r, _)| *r == rotation) {
                Some((_, placed)) => *placed |= mask << dst,
                None => moves.push((rotation, mask << dst)),
            }
        }
        Rekey { moves }
    }

    /// The shard a permuted key belongs to: its leading `log2(shards)` bits.
    #[inline]
    pub fn shard_of(&self, key: u64) -> usize {
        if self.shard_bits == 0 {
            0
        } else {
            (key >> (64 - self.shard_bits)) as usize
        }
    }

    /// The keys of shards `first..end`, as an inclusive range.
    pub fn shard_keys(&self, first: usize, end: usize) -> (u64, u64) {
        if self.shard_bits == 0 {
            return (0, u64::MAX);
        }
        let shift = 64 - self.shard_bits;
        let lo = (first as u64) << shift;
        let hi = if end as u64 >= 1 << self.shard_bits {
            u64::MAX
        } else {
            ((end as u64) << shift) - 1
        };
        (lo, hi)
    }

    /// Whether table `t` can be the reporting table of a pair within `distance` bits: the pair
    /// must disagree on every block below the table's last leading block that is not leading.
    #[inline]
    pub fn is_needed(&self, t: usize, distance: u32) -> bool {
        self.tables[t].last_leading_block + 1 - self.leading_blocks <= distance
    }

    /// Whether table `t` is the one that reports the pair `a`, `b` (which must share table
    /// `t`'s leading blocks): true iff its leading set is the `m - K` lowest-numbered blocks on
    /// which they agree.
    #[inline]
    pub fn reports(&self, t: usize, a: u64, b: u64) -> bool {
        let diff = a ^ b;
        let mut wanted = self.leading_blocks;
        let mut first_agreeing = 0u64;
        for (i, &(shift, mask)) in self.blocks.iter().enumerate() {
            if wanted == 0 {
                break;
            }
            if (diff >> shift) & mask == 0 {
                first_agreeing |= 1 << i;
                wanted -= 1;
            }
        }
        first_agreeing == self.tables[t].leading_set
    }
}

fn width_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// All `k`-subsets of `0..n` in lexicographic order.
fn combinations(n: u32, k: u32) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut current: Vec<u32> = (0..k).collect();
    loop {
        out.push(current.clone());
        // Find the rightmost position that can still move right.
        let Some(i) = (0..k as usize)
            .rev()
            .find(|&i| current[i] < n - k + i as u32)
        else {
            return out;
        };
        current[i] += 1;
        for j in i + 1..k as usize {
            current[j] = current[j - 1] + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn perms(m: u8, k: u8) -> Permutations {
        Permutations::new(&Settings {
            blocks: m,
            distance: k,
            shards: 1,
        })
    }

    #[test]
    fn table_zero_is_the_identity() {
        let p = perms(6, 3);
        for fp in [0, 1, u64::MAX, 0x0123_4567_89ab_cdef] {
            assert_eq!(p.tables()[0].permute(fp), fp);
        }
    }

    #[test]
    fn combinations_are_lexicographic_and_complete() {
        let c = combinations(5, 2);
        assert_eq!(c.len(), 10);
        assert_eq!(c[0], vec![0, 1]);
        assert_eq!(c[9], vec![3, 4]);
        let mut sorted = c.clone();
        sorted.sort();
        assert_eq!(sorted, c);
    }

    #[test]
    fn sort_parents_share_leading_blocks() {
        let p = perms(6, 3);
        // (0,1,3) derives from (0,1,2) = table 0, sharing blocks 0 and 1 (11 bits each).
        assert_eq!(p.sort_parent(1), (0, 22));
        // (1,2,3) shares no leading block with an earlier table.
        let t = p
            .tables()
            .iter()
            .position(|t| t.leading == [1, 2, 3])
            .unwrap();
        assert_eq!(p.sort_parent(t).1, 0);
    }

    proptest! {
        #[test]
        fn permute_round_trips(fp: u64, m in 2u8..=12, kk in 1u8..=11) {
            prop_assume!(kk < m);
            let p = perms(m, kk);
            for t in p.tables() {
                prop_assert_eq!(t.unpermute(t.permute(fp)), fp);
            }
        }

        #[test]
        fn rekey_maps_one_tables_keys_to_anothers(fp: u64, m in 2u8..=12, kk in 1u8..=11, from: usize, to: usize) {
            prop_assume!(kk < m);
            let p = perms(m, kk);
            let tables = p.tables();
            let (from, to) = (from % tables.len(), to % tables.len());
            let rekey = p.rekey(from, to);
            let key = tables[from].permute(fp);
            prop_assert_eq!(rekey.apply(key), tables[to].permute(fp));
            let mut out = vec![7];
            rekey.apply_into(&[key, !key], &mut out);
            prop_assert_eq!(out, vec![tables[to].permute(fp), tables[to].permute(!fp)]);
        }

        #[test]
        fn every_close_pair_has_exactly_one_reporting_table(a: u64, flips in proptest::collection::vec(0u32..64, 0..=3)) {
            let p = perms(6, 3);
            let b = flips.iter().fold(a, |x, &bit| x ^ (1 << bit));
            let reporting: Vec<usize> = (0..p.tables().len())
                .filter(|&t| {
                    let table = &p.tables()[t];
                    table.prefix_range(table.permute(a)) == table.prefix_range(table.permute(b))
                        && p.reports(t, a, b)
                })
                .collect();
            prop_assert_eq!(reporting.len(), 1);
            let d = (a ^ b).count_ones();
            prop_assert!(p.is_needed(reporting[0], d));
        }
    }
}
