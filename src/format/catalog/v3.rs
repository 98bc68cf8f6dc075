//! Format 3's catalog structs (also format 2's), frozen: format 4's without sketches.

use super::{BatchMeta, CompactionPolicy, Settings};

#[derive(bincode::Encode, bincode::Decode)]
pub(super) struct Catalog {
    settings: Settings,
    compaction: CompactionPolicy,
    scheme: Option<String>,
    next_run: u64,
    next_batch: u64,
    documents: u64,
    runs: Vec<RunMeta>,
    batches: Vec<BatchMeta>,
}

#[derive(bincode::Encode, bincode::Decode)]
struct RunMeta {
    id: u64,
    shard_files: u16,
    present_files: Vec<u16>,
    fingerprints: u64,
    documents: u64,
    table_bytes: Vec<u64>,
    docs_bytes: u64,
    postings_bytes: u64,
}

impl Catalog {
    /// The catalog of a store of `format` (2 or 3) that this payload describes.
    pub(super) fn with_format(self, format: u32) -> super::Catalog {
        super::Catalog {
            format,
            settings: self.settings,
            compaction: self.compaction,
            scheme: self.scheme,
            next_run: self.next_run,
            next_batch: self.next_batch,
            documents: self.documents,
            runs: self
                .runs
                .into_iter()
                .map(|r| super::RunMeta {
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
            batches: self.batches,
            sketch_bytes: 0,
        }
    }
}

impl From<super::Catalog> for Catalog {
    fn from(c: super::Catalog) -> Self {
        Catalog {
            settings: c.settings,
            compaction: c.compaction,
            scheme: c.scheme,
            next_run: c.next_run,
            next_batch: c.next_batch,
            documents: c.documents,
            runs: c
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
            batches: c.batches,
        }
    }
}
