//! The permuted tables of a merge: every table's keys of a shard file merged from every input,
//! the dead fingerprints dropped.

use rayon::prelude::*;

use super::cursor::{Cursor, KeyChain};
use super::dead::DeadSet;
use super::sorted::merge_sorted;
use crate::error::{all_or_cause, Result};
use crate::format::block::keys::KeyCodec;
use crate::run::run_file::RunFile;
use crate::run::RunReader;
use crate::tables::permutation::Permutations;

/// Keys gathered before they are encoded and appended: bounds the memory of a table merge.
const FLUSH_KEYS: usize = 1 << 20;

/// Merges every table's keys of shards `first..end` into the shard `file`. Returns
/// None when no key is left there, else the keys and bytes written per table.
///
/// The tables are merged in parallel, each appending to the file in its own transactions.
pub(super) fn merge_shard_file(
    inputs: &[RunReader],
    perms: &Permutations,
    shards: (usize, usize),
    dead: &DeadSet,
    (file, codec): (RunFile, KeyCodec),
) -> Result<Option<(Vec<u64>, Vec<u64>)>> {
    let results: Vec<Result<(u64, u64)>> = (0..perms.tables().len())
        .into_par_iter()
        .map(|t| merge_table(inputs, perms, t, shards, dead, (&file, codec)))
        .collect();
    let written = all_or_cause(results)?;
    Ok(file.finish()?.then(|| written.into_iter().unzip()))
}

/// Merges table `t`'s keys of shards `first..end` from every input into `file`, dropping dead
/// fingerprints; returns the keys and bytes written.
fn merge_table(
    inputs: &[RunReader],
    perms: &Permutations,
    t: usize,
    (first, end): (usize, usize),
    dead: &DeadSet,
    (file, codec): (&RunFile, KeyCodec),
) -> Result<(u64, u64)> {
    let (lo, hi) = perms.shard_keys(first, end);
    let table = &perms.tables()[t];
    let mut cursors = inputs
        .iter()
        .map(|run| {
            let scans = run
                .shard_files(first, end)?
                .into_iter()
                .map(|file| file.scan(t, lo, hi))
                .collect::<Result<Vec<_>>>()?;
            Cursor::new(KeyChain(scans.into_iter(), None))
        })
        .collect::<Result<Vec<_>>>()?;
    let (mut count, mut bytes) = (0u64, 0u64);
    let mut pending: Vec<u64> = Vec::with_capacity(FLUSH_KEYS);
    let mut flush = |pending: &mut Vec<u64>| -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        bytes += file.append_keys(t, pending, codec)?;
        count += pending.len() as u64;
        pending.clear();
        Ok(())
    };
    let (mut merged, mut scratch) = (Vec::new(), Vec::new());
    let mut ends = Vec::with_capacity(cursors.len());
    let mut previous: Option<u64> = None;
    loop {
        cursors.retain(|c| c.peek().is_some());
        // Every key up to the least of the inputs' block ends is in the blocks at hand:
        // merge those, then read on.
        let Some(bound) = cursors.iter().filter_map(|c| c.block.last()).min().copied() else {
            break;
        };
        ends.clear();
        ends.extend(
            cursors
                .iter()
                .map(|c| c.at + c.block[c.at..].partition_point(|&k| k <= bound)),
        );
        let lists: Vec<&[u64]> = cursors
            .iter()
            .zip(&ends)
            .map(|(c, &end)| &c.block[c.at..end])
            .collect();
        merge_sorted(&lists, &mut merged, &mut scratch);
        for (cursor, &end) in cursors.iter_mut().zip(&ends) {
            cursor.at = end;
            cursor.fill()?;
        }
        if !dead.is_empty() {
            merged.retain(|&key| !dead.contains(table.unpermute(key)));
        }
        // Invariant 2 says no fingerprint is in two runs; a repeat is written once.
        merged.dedup();
        let repeat = previous.is_some() && merged.first() == previous.as_ref();
        let mut rest = &merged[usize::from(repeat)..];
        previous = merged.last().copied().or(previous);
        while !rest.is_empty() {
            let take = rest.len().min(FLUSH_KEYS - pending.len());
            pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if pending.len() == FLUSH_KEYS {
                flush(&mut pending)?;
            }
        }
    }
    flush(&mut pending)?;
    Ok((count, bytes))
}
