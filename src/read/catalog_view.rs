//! What a handle tells of the committed catalog it holds, written once for [`Store`] and
//! [`Snapshot`] (each holds a `catalog` and a `dir`), so the two cannot answer differently.
//!
//! [`Store`]: crate::Store
//! [`Snapshot`]: crate::Snapshot

/// The catalog accessors of a type with `catalog: Catalog` and `dir: PathBuf` fields.
macro_rules! catalog_accessors {
    () => {
        /// The store's settings.
        pub fn settings(&self) -> &crate::format::settings::Settings {
            &self.catalog.settings
        }

        /// Ids with a live fingerprint.
        pub fn documents(&self) -> u64 {
            self.catalog.documents
        }

        /// Live runs (each batch adds one or more; compaction merges them).
        pub fn run_count(&self) -> usize {
            self.catalog.runs.len()
        }

        /// Every committed batch, oldest first.
        pub fn batches(&self) -> Vec<crate::format::catalog::BatchInfo> {
            self.catalog
                .batches
                .iter()
                .map(crate::format::catalog::BatchInfo::from)
                .collect()
        }

        /// When inserts merge runs by themselves.
        pub fn compaction_policy(&self) -> crate::format::settings::CompactionPolicy {
            self.catalog.compaction
        }

        /// The scheme text is fingerprinted with (and sketched, in a store that keeps
        /// sketches); None for stores that never recorded one (made by format v1). A name
        /// this build does not know is an error, never a silent fallback.
        pub fn scheme(
            &self,
        ) -> crate::error::Result<Option<crate::similarity::fingerprint::Scheme>> {
            crate::similarity::fingerprint::Scheme::recorded(self.catalog.scheme.as_deref())?
                .map(|s| s.with_sketch(self.catalog.sketch_bytes))
                .transpose()
        }

        /// The scheme text given to this store is fingerprinted with (and sketched, in a
        /// store that keeps sketches): an error when the store records none (stores made by
        /// format v1 take fingerprints, not text) or one this build does not know.
        pub fn text_scheme(&self) -> crate::error::Result<crate::similarity::fingerprint::Scheme> {
            crate::similarity::fingerprint::Scheme::for_text(self.catalog.scheme.as_deref())?
                .with_sketch(self.catalog.sketch_bytes)
        }

        /// The store's directory.
        pub fn dir(&self) -> &std::path::Path {
            &self.dir
        }
    };
}

pub(crate) use catalog_accessors;
