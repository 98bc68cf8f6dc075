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
use crate::format::catalog::{
    commit_bytes, decode_payload, read_file, unseal, BatchKind, BatchMeta, Catalog, RunMeta,
    FORMAT_VERSION,
};
use crate::format::layout;
use crate::format::settings::CompactionPolicy;
use crate::format::settings::Settings;
use crate::sys::lock::WriterLock;
use crate::write::store::Store;

impl Store {
    /// Upgrades the store at `dir` to [`Store::FORMAT_VERSION`], taking the writer lock, and
    /// returns the version it had. A store already at the current version is left untouched.
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
        let next = match version {
            1 => v1::to_v2(decode_payload(payload)?),
            other => {
                return Err(Error::corrupt(format!(
                    "no migration step from format version {other}"
                )))
            }
        };
        crate::format::catalog::check_settings(&next.settings, dir)?;
        commit_bytes(dir, &next.encode())?;
    }
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
        }
    }
}
