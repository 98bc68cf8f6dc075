//! Upgrades a store's on-disk format to the one this build writes, one version at a time.
//!
//! Each step reads the catalog of version v and commits one of version v + 1; the catalog's
//! atomic replacement (see [`crate::format::catalog`]) is the step's commit point, so a crash leaves
//! the store at v or at v + 1, and running `migrate` again goes on from there. A step that
//! must rewrite run files writes new runs first and names them in the catalog it commits,
//! exactly as a compaction does. migrations/ describes every version and step.
//!
//! The structs of each older version are frozen here, byte for byte as that version wrote them.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::format::block::keys::KeyCodec;
use crate::format::catalog::{
    check_settings, commit_bytes, decode_payload, read_file, unseal, BatchKind, BatchMeta, Catalog,
    RunMeta, FORMAT_VERSION,
};
use crate::format::layout;
use crate::format::settings::CompactionPolicy;
use crate::format::settings::Settings;
use crate::read::debris;
use crate::read::snapshot::SCAN_CACHE_BYTES;
use crate::run::{reformat, FileCaches, RunReader};
use crate::sys::lock::WriterLock;
use crate::tables::permutation::Permutations;
use crate::write::commit::PendingCommit;
use crate::write::store::Store;

impl Store {
    /// Upgrades the store at `dir` from format 1 to 9 to format 10, taking the writer lock,
    /// and returns the version it had. A store of format 1 or 2 gets no sketches (the text
    /// they would be made from is not in the store). A step that changes run files writes
    /// every run anew, as a compaction does (from format 3 or 4, each run's key blocks in
    /// format 5's layout; from format 5, each run's docs file copied with an id filter added;
    /// from format 6 in a store with sketches, each run's docs file with its sketches moved
    /// into its postings; from format 7 in a store without sketches, each run's docs file
    /// with postings that name their documents; from format 8 in a store with sketches, each
    /// run's docs file with its sketches moved into its docs entries and postings that name
    /// their documents; from format 9 in a store with sketches, each run's docs file with its
    /// sketches moved into its sketch area), so it needs free disk for what it rewrites until
    /// its commit.
    pub fn migrate(dir: &Path) -> Result<u32> {
        migrate(dir, Duration::ZERO)
    }

    /// [`Store::migrate`], waiting up to `wait` for another writer to release the lock.
    pub fn migrate_waiting(dir: &Path, wait: Duration) -> Result<u32> {
        migrate(dir, wait)
    }
}

fn migrate(dir: &Path, wait: Duration) -> Result<u32> {
    let (from, _) = unseal(&read_file(dir)?, dir)?;
    if from == FORMAT_VERSION {
        return Ok(from);
    }
    let _lock = WriterLock::acquire_within(dir, &layout::lock_file(dir), wait)?;
    loop {
        // Re-read under the lock: another process may have migrated meanwhile.
        let bytes = read_file(dir)?;
        let (version, payload) = unseal(&bytes, dir)?;
        if version == FORMAT_VERSION {
            return Ok(from);
        }
        match version {
            1 => {
                let next = v1::to_v2(decode_payload(payload)?);
                check_settings(&next.settings, dir)?;
                commit_bytes(dir, &next.encode_as(2))?;
            }
            2 => {
                let catalog = Catalog::decode_version(2, payload)?;
                check_settings(&catalog.settings, dir)?;
                v2::to_v3(dir, catalog, reformat::CHUNK)?;
            }
            3 | 4 => {
                let catalog = Catalog::decode_version(version, payload)?;
                check_settings(&catalog.settings, dir)?;
                rewrite_runs(dir, catalog, 5, |old, old_dir, run_dir, id| {
                    reformat::tables_as(old, old_dir, run_dir, id, KeyCodec::EliasFano)
                })?;
            }
            5 => {
                let catalog = Catalog::decode_version(version, payload)?;
                check_settings(&catalog.settings, dir)?;
                rewrite_runs(dir, catalog, 6, |old, old_dir, run_dir, id| {
                    reformat::with_id_filter(old, old_dir, run_dir, id)
                })?;
            }
            6 => {
                let catalog = Catalog::decode_version(version, payload)?;
                check_settings(&catalog.settings, dir)?;
                if catalog.sketch_bytes == 0 {
                    // Without sketches, a run of format 6 is one of format 7.
                    commit_bytes(dir, &catalog.encode_as(7))?;
                } else {
                    rewrite_runs(dir, catalog, 7, |old, old_dir, run_dir, id| {
                        reformat::sketches_into_postings(old, old_dir, run_dir, id)
                    })?;
                }
            }
            7 => {
                let catalog = Catalog::decode_version(version, payload)?;
                check_settings(&catalog.settings, dir)?;
                if catalog.sketch_bytes > 0 {
                    // With sketches, a run of format 7 is one of format 8.
                    commit_bytes(dir, &catalog.encode_as(8))?;
                } else {
                    rewrite_runs(dir, catalog, 8, |old, old_dir, run_dir, id| {
                        reformat::named_postings(old, old_dir, run_dir, id)
                    })?;
                }
            }
            8 => {
                let catalog = Catalog::decode_version(version, payload)?;
                check_settings(&catalog.settings, dir)?;
                let sketch_bytes = catalog.sketch_bytes;
                if sketch_bytes == 0 {
                    // Without sketches, a run of format 8 is one of format 9.
                    commit_bytes(dir, &catalog.encode_as(9))?;
                } else {
                    rewrite_runs(dir, catalog, 9, |old, old_dir, run_dir, id| {
                        reformat::sketches_into_docs(old, old_dir, run_dir, id, sketch_bytes)
                    })?;
                }
            }
            9 => {
                let catalog = Catalog::decode_version(version, payload)?;
                check_settings(&catalog.settings, dir)?;
                let sketch_bytes = catalog.sketch_bytes;
                if sketch_bytes == 0 {
                    // Without sketches, a run of format 9 is one of format 10.
                    commit_bytes(dir, &catalog.encode_as(10))?;
                } else {
                    rewrite_runs(dir, catalog, 10, |old, old_dir, run_dir, id| {
                        reformat::sketches_into_area(old, old_dir, run_dir, id, sketch_bytes)
                    })?;
                }
            }
            other => {
                return Err(Error::corrupt(format!(
                    "no migration step from format version {other}"
                )))
            }
        }
    }
}

/// Format version 2 (simhashdb 0.2.0). Version 3 added each document's batch to its
/// posting; the catalog's structs are unchanged, so version 2's are the current ones.
mod v2 {
    use super::*;

    /// Rewrites every run's docs file with batches in its postings (see
    /// [`crate::run::reformat`]) and commits the catalog naming the new runs, as version 3.
    pub fn to_v3(dir: &Path, catalog: Catalog, chunk: usize) -> Result<()> {
        rewrite_runs(dir, catalog, 3, |old, old_dir, run_dir, id| {
            reformat::postings_with_batches(old, old_dir, run_dir, id, chunk)
        })
    }
}

/// Rewrites every run of the store at `dir` (whose catalog is `catalog`) with
/// `rewrite(old run, its directory, the new run's directory, the new run's id)` and commits
/// the catalog naming the new runs as format `format`. Like a compaction: a crash before the
/// commit leaves the old version and new runs that the next writer (or this step, run again)
/// removes as debris; after it, the old runs are debris.
fn rewrite_runs(
    dir: &Path,
    catalog: Catalog,
    format: u32,
    rewrite: impl Fn(&RunReader, &Path, &Path, u64) -> Result<RunMeta>,
) -> Result<()> {
    debris::remove(dir, &debris::unnamed(dir, &catalog)?)?;
    let perms = Permutations::new(&catalog.settings);
    let shards = usize::from(catalog.settings.shards);
    let caches = FileCaches {
        docs: SCAN_CACHE_BYTES,
        tables: 0,
        decoded_docs: 0,
        decoded_postings: 0,
    };
    let mut pending = PendingCommit::new(dir, &catalog);
    pending.catalog_mut().format = format;
    let mut runs = Vec::with_capacity(catalog.runs.len());
    for meta in &catalog.runs {
        let old_dir = layout::run_dir(dir, meta.id);
        let old = RunReader::new(
            meta.clone(),
            old_dir.clone(),
            (shards, perms.tables().len()),
            catalog.run_format(),
            caches,
        )?;
        runs.push(pending.write_run(|run_dir, id| rewrite(&old, &old_dir, run_dir, id))?);
    }
    pending.catalog_mut().runs = runs;
    // The new runs' directory entries are durable before a catalog names them.
    layout::sync_dir(&layout::runs_dir(dir))?;
    pending.commit()?;
    for meta in &catalog.runs {
        let _ = std::fs::remove_dir_all(layout::run_dir(dir, meta.id));
    }
    layout::sync_dir(&layout::runs_dir(dir))
}

/// Format version 1 (simhashdb 0.1.0). Version 2 added the compaction policy, the fingerprint
/// scheme, batch kinds, deletion counts and expiry to the catalog; run files are unchanged.
mod v1 {
    use super::*;

    #[derive(bincode::Decode)]
    pub struct Catalog1 {
        settings: Settings1,
        next_run: u64,
        next_batch: u64,
        documents: u64,
        runs: Vec<RunMeta1>,
        batches: Vec<BatchMeta1>,
    }

    #[derive(bincode::Decode)]
    struct Settings1 {
        blocks: u8,
        distance: u8,
        shards: u16,
    }

    #[derive(bincode::Decode)]
    struct RunMeta1 {
        id: u64,
        shard_files: u16,
        present_files: Vec<u16>,
        fingerprints: u64,
        documents: u64,
        table_bytes: Vec<u64>,
        docs_bytes: u64,
        postings_bytes: u64,
    }

    #[derive(bincode::Decode)]
    struct BatchMeta1 {
        id: u64,
        committed_unix_s: u64,
        label: Option<String>,
        inserted: u64,
        replaced: u64,
        unchanged: u64,
    }

    /// Every v1 batch was an insert; nothing was deleted or expired.
    pub fn to_v2(old: Catalog1) -> Catalog {
        Catalog {
            settings: Settings {
                blocks: old.settings.blocks,
                distance: old.settings.distance,
                shards: old.settings.shards,
            },
            compaction: CompactionPolicy::default(),
            scheme: None,
            next_run: old.next_run,
            next_batch: old.next_batch,
            documents: old.documents,
            runs: old
                .runs
                .into_iter()
                .map(|r| RunMeta {
                    id: r.id,
                    shard_files: r.shard_files,
                    present_files: r.present_files,
                    fingerprints: r.fingerprints,
                    documents: r.documents,
                    table_bytes: r.table_bytes,
                    docs_bytes: r.docs_bytes,
                    postings_bytes: r.postings_bytes,
                    sketches: 0,
                    sketches_bytes: 0,
                    id_bits: 0,
                    ids_bytes: 0,
                })
                .collect(),
            batches: old
                .batches
                .into_iter()
                .map(|b| BatchMeta {
                    id: b.id,
                    kind: BatchKind::Insert,
                    committed_unix_s: b.committed_unix_s,
                    label: b.label,
                    inserted: b.inserted,
                    replaced: b.replaced,
                    unchanged: b.unchanged,
                    deleted: 0,
                    expired_by: None,
                })
                .collect(),
            sketch_bytes: 0,
            format: 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The v2 fixture migrated a few postings at a time: every posting gets its document's
    /// batch (verify compares the two copies, batches included) and nothing else changes.
    #[test]
    fn v2_runs_get_batches_in_their_postings_chunk_by_chunk() {
        // Writes files: not while another test injects faults into writes.
        let _serial = crate::sys::file_backend::plan::SERIAL
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v2/store");
        for chunk in [1, 7, 1000] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("s");
            copy(&fixture, &dir);
            let (version, payload) = {
                let bytes = read_file(&dir).unwrap();
                let (v, p) = unseal(&bytes, &dir).unwrap();
                (v, p.to_vec())
            };
            assert_eq!(version, 2);
            let before = Catalog::decode_version(2, &payload).unwrap();
            let _lock =
                WriterLock::acquire_within(&dir, &layout::lock_file(&dir), Duration::ZERO).unwrap();
            v2::to_v3(&dir, before.clone(), chunk).unwrap();
            let report = Store::verify(&dir, false, &()).unwrap();
            assert!(
                report.findings.is_empty(),
                "chunk {chunk}: {:?}",
                report.findings
            );
            assert!(
                report.debris.is_empty(),
                "chunk {chunk}: {:?}",
                report.debris
            );
            let after = crate::read::snapshot::Snapshot::open(&dir).unwrap();
            let ids: Vec<u64> = after.catalog().runs.iter().map(|r| r.id).collect();
            assert_eq!(ids.len(), before.runs.len());
            assert!(ids.iter().all(|id| *id >= before.next_run), "{ids:?}");
            let mut docs = Vec::new();
            after
                .for_each_live_document(|id, fp, batch| docs.push((id.to_string(), fp, batch)))
                .unwrap();
            assert_eq!(docs.len() as u64, after.documents(), "chunk {chunk}");
            assert!(docs.iter().any(|d| d.2 != docs[0].2), "several batches");
        }
    }

    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &to.join(entry.file_name()));
            } else {
                std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
            }
        }
    }
}
