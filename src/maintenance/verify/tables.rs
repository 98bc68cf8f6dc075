//! The checks of a run's permuted tables: every block, every key in its shard file, every
//! table holding table 0's fingerprints, the catalog's sizes.

use std::path::Path;

use super::digest::Digest;
use super::report::Report;
use crate::error::Result;
use crate::format::layout::shard_file;
use crate::run::{table_name, RunReader};
use crate::tables::permutation::Permutations;

/// The permuted tables of one run; appends the run's table-0 fingerprints to `fingerprints`.
pub(super) fn check_tables(
    run: &RunReader,
    run_dir: &Path,
    perms: &Permutations,
    shards: usize,
    report: &mut Report,
    fingerprints: &mut Vec<u64>,
) -> Result<()> {
    let meta = run.meta();
    let files = usize::from(meta.shard_files).clamp(1, shards);
    let per_file = shards / files;
    let tables = perms.tables();
    let mut digests = vec![Digest::default(); tables.len()];
    let mut bytes = vec![0u64; tables.len()];
    for f in 0..files {
        let path = shard_file(run_dir, f);
        let listed = meta.present_files.contains(&(f as u16));
        if !listed {
            if path.exists() {
                report.find(
                    &path,
                    None,
                    "the file exists but the catalog does not list it",
                );
            }
            continue;
        }
        let Some(file) = run.shard(f * per_file)? else {
            continue;
        };
        let (lo, hi) = perms.shard_keys(f * per_file, (f + 1) * per_file);
        for (t, table) in tables.iter().enumerate() {
            // Scan the whole table to catch keys outside the file's shards too.
            let mut scan = file.scan(t, 0, u64::MAX)?;
            let mut keys = Vec::new();
            let mut previous: Option<u64> = None;
            let mut misplaced = 0u64;
            loop {
                match scan.next_block(&mut keys) {
                    Ok(false) => break,
                    Ok(true) => {}
                    Err(e) => {
                        report.blocks += 1;
                        report.absorb(Err(e))?;
                        continue;
                    }
                }
                report.blocks += 1;
                if let (Some(p), Some(&first)) = (previous, keys.first()) {
                    if first <= p {
                        report.find(
                            &path,
                            Some(&table_name(t)),
                            format!("key {first:016x} is out of order after {p:016x}"),
                        );
                    }
                }
                for &key in &keys {
                    if !(lo..=hi).contains(&key) {
                        misplaced += 1;
                    }
                    let fp = table.unpermute(key);
                    digests[t].add(fp);
                    if t == 0 {
                        fingerprints.push(fp);
                    }
                }
                previous = keys.last().copied().or(previous);
            }
            bytes[t] += scan.bytes;
            if misplaced > 0 {
                report.find(
                    &path,
                    Some(&table_name(t)),
                    format!("{misplaced} keys belong to shards outside this file"),
                );
            }
        }
    }
    for (t, digest) in digests.iter().enumerate() {
        if digest.count != meta.fingerprints {
            report.find(
                run_dir,
                Some(&table_name(t)),
                format!(
                    "holds {} keys; the catalog says the run has {} fingerprints",
                    digest.count, meta.fingerprints
                ),
            );
        } else if *digest != digests[0] {
            report.find(
                run_dir,
                Some(&table_name(t)),
                "holds a different set of fingerprints than table t000",
            );
        }
        if meta.table_bytes.get(t) != Some(&bytes[t]) {
            report.find(
                run_dir,
                Some(&table_name(t)),
                match meta.table_bytes.get(t) {
                    Some(listed) => {
                        format!("holds {} block bytes; the catalog says {listed}", bytes[t])
                    }
                    None => format!(
                        "holds {} block bytes; the catalog lists no size for this table",
                        bytes[t]
                    ),
                },
            );
        }
    }
    Ok(())
}
