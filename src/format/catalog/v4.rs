//! Format 4's catalog struct (also format 5's: the same fields), frozen; with its runs of
//! type `R`, it is also format 6's, whose runs are [`super::RunMeta`].

use super::{BatchMeta, CompactionPolicy, Settings};

#[derive(bincode::Encode, bincode::Decode)]
pub(super) struct Catalog<R> {
    settings: Settings,
    compaction: CompactionPolicy,
    scheme: Option<String>,
    next_run: u64,
    next_batch: u64,
    documents: u64,
    runs: Vec<R>,
    batches: Vec<BatchMeta>,
    sketch_bytes: u16,
}

/// A run of formats 4 and 5: no id filter.
#[derive(bincode::Encode, bincode::Decode)]
pub(super) struct RunMeta {
    id: u64,
    shard_files: u16,
    present_files: Vec<u16>,
    fingerprints: u64,
    documents: u64,
    table_bytes: Vec<u64>,
    docs_bytes: u64,
    postings_bytes: u64,
    sketches: u64,
    sketches_bytes: u64,
}

impl From<RunMeta> for super::RunMeta {
    fn from(r: RunMeta) -> Self {
        super::RunMeta {
            id: r.id,
            shard_files: r.shard_files,
            present_files: r.present_files,
            fingerprints: r.fingerprints,
            documents: r.documents,
            table_bytes: r.table_bytes,
            docs_bytes: r.docs_bytes,
            postings_bytes: r.postings_bytes,
            sketches: r.sketches,
            sketches_bytes: r.sketches_bytes,
            id_bits: 0,
            ids_bytes: 0,
        }
    }
}

impl From<super::RunMeta> for RunMeta {
    fn from(r: super::RunMeta) -> Self {
        RunMeta {
            id: r.id,
            shard_files: r.shard_files,
            present_files: r.present_files,
            fingerprints: r.fingerprints,
            documents: r.documents,
            table_bytes: r.table_bytes,
            docs_bytes: r.docs_bytes,
            postings_bytes: r.postings_bytes,
            sketches: r.sketches,
            sketches_bytes: r.sketches_bytes,
        }
    }
}

impl<R: Into<super::RunMeta>> Catalog<R> {
    /// The catalog of a store of `format` (4, 5 or 6) that this payload describes.
    pub(super) fn with_format(self, format: u32) -> super::Catalog {
        super::Catalog {
            format,
            settings: self.settings,
            compaction: self.compaction,
            scheme: self.scheme,
            next_run: self.next_run,
            next_batch: self.next_batch,
            documents: self.documents,
            runs: self.runs.into_iter().map(Into::into).collect(),
            batches: self.batches,
            sketch_bytes: self.sketch_bytes,
        }
    }
}

impl<R: From<super::RunMeta>> From<super::Catalog> for Catalog<R> {
    fn from(c: super::Catalog) -> Self {
        Catalog {
            settings: c.settings,
            compaction: c.compaction,
            scheme: c.scheme,
            next_run: c.next_run,
            next_batch: c.next_batch,
            documents: c.documents,
            runs: c.runs.into_iter().map(R::from).collect(),
            batches: c.batches,
            sketch_bytes: c.sketch_bytes,
        }
    }
}
