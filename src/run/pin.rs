//! Pinning a run: reading a committed run's permuted tables and key sets into memory
//! ([`crate::run::pinned`]), every block's checksum checked, within a budget of bytes.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::block::keys::KeyBlock;
use crate::run::pinned::{keys_cost, PinnedRun, RunKeys, SortedKeys};
use crate::run::RunReader;
use crate::sys::memory::huge_page_vec;

/// Pins the tables of `run` in order while they fit in `budget` (bytes of memory), which
/// shrinks by what they take, then with `with_keys` its key sets if they fit too. Tables
/// load in parallel.
pub(crate) fn pin(
    run: &RunReader,
    tables: usize,
    with_keys: bool,
    budget: &mut u64,
) -> Result<Arc<PinnedRun>> {
    use rayon::prelude::*;
    let chosen: Vec<bool> = (0..tables)
        .map(|_| {
            let size = table_cost(run);
            // A budget of 0 pins nothing, not even empty tables.
            let fits = *budget > 0 && size <= *budget;
            if fits {
                *budget -= size;
            }
            fits
        })
        .collect();
    let tables: Vec<Option<SortedKeys>> = chosen
        .par_iter()
        .enumerate()
        .map(|(t, &pin)| pin.then(|| load_table(run, t)).transpose())
        .collect::<Result<_>>()?;
    let mut charged = chosen.iter().filter(|&&pin| pin).count() as u64 * table_cost(run);
    let keys = if with_keys && *budget > 0 && run_keys_cost(run) <= *budget {
        *budget -= run_keys_cost(run);
        charged += run_keys_cost(run);
        Some(load_keys(run)?)
    } else {
        None
    };
    Ok(Arc::new(PinnedRun::new(tables, keys, charged)))
}

/// Reads table `t` of `run` into memory, checking every block.
fn load_table(run: &RunReader, t: usize) -> Result<SortedKeys> {
    let mut keys = huge_page_vec(usize::try_from(run.meta().fingerprints).unwrap_or(0));
    // Shard files split the key space by its leading bits, in order, so their keys
    // concatenate into one sorted sequence.
    for file in run.shard_files(0, run.shards())? {
        file.for_each_block(t, |last, block| {
            let before = keys.last().copied();
            let start = keys.len();
            KeyBlock::parse(block)?.for_each(|key| keys.push(key))?;
            if before.is_some_and(|b| b >= keys[start]) || keys.last() != Some(&last) {
                return Err(Error::corrupt(format!(
                    "table t{t:03}: keys out of order at the block ending {last:016x}"
                )));
            }
            Ok(())
        })?;
    }
    keys.shrink_to_fit();
    Ok(SortedKeys::new(keys))
}

/// Reads the key sets of `run`, checking every block.
fn load_keys(run: &RunReader) -> Result<RunKeys> {
    let docs = run.docs()?;
    let mut fingerprints = Vec::new();
    docs.for_each_posting(|fp| fingerprints.push(fp))?;
    let mut ids = Vec::new();
    docs.for_each_document(|hash, _, _| ids.push(hash))?;
    Ok(RunKeys::new(fingerprints, ids))
}

/// What pinning a table of `run` takes.
fn table_cost(run: &RunReader) -> u64 {
    keys_cost(run.meta().fingerprints)
}

/// What keeping the key sets of `run` takes: a key per posting and per document entry.
fn run_keys_cost(run: &RunReader) -> u64 {
    2 * keys_cost(run.meta().documents)
}
