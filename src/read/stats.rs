//! What a store holds and what it costs on disk.

use crate::error::{Error, Result};
use crate::read::disk_usage::DiskBytes;
use crate::read::snapshot::Snapshot;

/// A summary of a store, from its catalog and the sizes of its files.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// m: the blocks a fingerprint is split into.
    pub blocks: u8,
    /// K: the largest distance a query may ask for.
    pub distance: u8,
    /// The shards of each table.
    pub shards: u16,
    /// The permuted tables, C(m, K).
    pub tables: usize,
    /// The on-disk format version.
    pub format_version: u32,
    /// The fingerprint scheme text is fingerprinted with (see [`crate::similarity::fingerprint::Scheme::name`]).
    pub scheme: Option<String>,
    /// Ids with a live fingerprint.
    pub documents: u64,
    /// Committed batches.
    pub batches: usize,
    /// Live runs.
    pub runs: usize,
    /// Fingerprints held in each permuted table (live, or dead until the next compaction).
    pub fingerprints: u64,
    /// Per permuted table: its entries and block bytes.
    pub per_table: Vec<TableStats>,
    /// Block bytes of the documents (in format 9, with the sketches, compressed with them;
    /// format 10 keeps them apart).
    pub docs_bytes: u64,
    /// Block bytes of the postings (in formats 7 and 8, less the sketches' bytes in them).
    pub postings_bytes: u64,
    /// Block bytes of the runs' id filters (format 6; 0 before).
    pub id_filter_bytes: u64,
    /// Bytes of each document's verification sketch, or None when the store keeps none.
    pub sketch_bytes: Option<u16>,
    /// Sketches held (documents inserted as text; dead ones until the next compaction).
    pub sketches: u64,
    /// Block bytes of the sketches: in formats 7 and 8 the bytes they add to the postings
    /// blocks; before, the sketches tables' blocks, their ids and batches included; in
    /// format 9, 0, since they are in the docs blocks, compressed with the entries (which
    /// `docs_bytes` counts); in format 10 the blocks of the sketch areas.
    pub sketches_block_bytes: u64,
    /// sketches_block_bytes / sketches: what a sketch costs on disk before redb's pages (0
    /// in format 9).
    pub sketch_block_bytes_per_document: f64,
    /// Bytes allocated on disk to every shard file (the permuted tables, redb overhead
    /// included; redb extends files sparsely, so this is less than their length).
    pub table_file_bytes: u64,
    /// Bytes of every docs file.
    pub docs_file_bytes: u64,
    /// Bytes the store's files use on disk (allocated blocks, what `du` counts).
    pub total_bytes: u64,
    /// The sum of the store's file lengths. redb extends its files ahead of use, so this is
    /// more than they use.
    pub file_bytes: u64,
    /// Entries of `runs/` no committed catalog names, left by writers that died (see
    /// [`crate::Debris`]); 0 while a writer holds the lock, whose run in progress is unnamed.
    pub orphan_runs: usize,
    /// Bytes on disk of those entries, included in `total_bytes`.
    pub orphan_bytes: u64,
    /// table_file_bytes / (fingerprints * tables).
    pub disk_bytes_per_fingerprint_per_table: f64,
    /// total_bytes / documents.
    pub disk_bytes_per_document: f64,
}

/// One permuted table's share.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct TableStats {
    /// The table's number.
    pub table: usize,
    /// Leading bits the table groups keys by.
    pub prefix_bits: u32,
    /// Keys in the table.
    pub entries: u64,
    /// Bytes of its blocks.
    pub block_bytes: u64,
    /// block_bytes / entries.
    pub block_bytes_per_fingerprint: f64,
}

impl Stats {
    /// Reads the stats of a snapshot, walking the store's files for their sizes.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{Batch, Settings, Snapshot, Stats, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let mut batch = Batch::new();
    /// batch.push("a", 0x0123_4567_89ab_cdef)?;
    /// batch.push("b", 0x0123_4567_89ab_cdef)?; // a copy: one fingerprint, two documents
    /// store.insert(&batch, None)?;
    /// let stats = Stats::of(&Snapshot::open(&path)?)?;
    /// assert_eq!((stats.documents, stats.fingerprints, stats.tables), (2, 1, 10));
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn of(snapshot: &Snapshot) -> Result<Self> {
        let catalog = snapshot.catalog();
        let settings = &catalog.settings;
        let tables = snapshot.permutations().tables();
        let fingerprints: u64 = catalog.runs.iter().map(|r| r.fingerprints).sum();
        let per_table = tables
            .iter()
            .enumerate()
            .map(|(t, table)| {
                let block_bytes: u64 = catalog
                    .runs
                    .iter()
                    .map(|r| r.table_bytes.get(t).copied().unwrap_or(0))
                    .sum();
                TableStats {
                    table: t,
                    prefix_bits: table.prefix_bits(),
                    entries: fingerprints,
                    block_bytes,
                    block_bytes_per_fingerprint: ratio(block_bytes, fingerprints),
                }
            })
            .collect();
        let (mut table_file_bytes, mut docs_file_bytes) = (0, 0);
        for run in &catalog.runs {
            let dir = crate::format::layout::run_dir(snapshot.dir(), run.id);
            for entry in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
                let entry = entry.map_err(|e| Error::io(&dir, e))?;
                let meta = entry.metadata().map_err(|e| Error::io(entry.path(), e))?;
                let len = DiskBytes::of_file(&meta).used;
                if crate::format::layout::is_shard_file(&entry.file_name()) {
                    table_file_bytes += len;
                } else {
                    docs_file_bytes += len;
                }
            }
        }
        let DiskBytes {
            used: total_bytes,
            files: file_bytes,
        } = DiskBytes::below(snapshot.dir())?;
        let debris = crate::read::debris::seen_by_reader(snapshot.dir())?;
        let sketches: u64 = catalog.runs.iter().map(|r| r.sketches).sum();
        let sketches_block_bytes: u64 = catalog.runs.iter().map(|r| r.sketches_bytes).sum();
        Ok(Stats {
            blocks: settings.blocks,
            distance: settings.distance,
            shards: settings.shards,
            tables: tables.len(),
            format_version: catalog.format,
            scheme: catalog.scheme.clone(),
            documents: catalog.documents,
            batches: catalog.batches.len(),
            runs: catalog.runs.len(),
            fingerprints,
            per_table,
            docs_bytes: catalog.runs.iter().map(|r| r.docs_bytes).sum(),
            postings_bytes: catalog.runs.iter().map(|r| r.postings_bytes).sum(),
            id_filter_bytes: catalog.runs.iter().map(|r| r.ids_bytes).sum(),
            sketch_bytes: snapshot.sketch_bytes(),
            sketches,
            sketches_block_bytes,
            sketch_block_bytes_per_document: ratio(sketches_block_bytes, sketches),
            table_file_bytes,
            docs_file_bytes,
            total_bytes,
            file_bytes,
            orphan_runs: debris.len(),
            orphan_bytes: debris.iter().map(|d| d.bytes).sum(),
            disk_bytes_per_fingerprint_per_table: ratio(
                table_file_bytes,
                fingerprints * tables.len() as u64,
            ),
            disk_bytes_per_document: ratio(total_bytes, catalog.documents),
        })
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
