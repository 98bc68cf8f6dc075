//! The sketches a store keeps for its documents (a store made with `init --sketch`): read
//! for a query's or an audit's candidates, checked for size and completeness.

use rayon::prelude::*;

use super::*;
use crate::sys::progress::{share, Progress};

impl Snapshot {
    /// Bytes of each document's verification sketch, when the store keeps them (`init
    /// --sketch`, format 4).
    pub fn sketch_bytes(&self) -> Option<u16> {
        (self.catalog.sketch_bytes > 0).then_some(self.catalog.sketch_bytes)
    }

    /// Whether this store's docs entries hold its sketches or name them in the sketch area
    /// (format 9 on, `init --sketch`), so that a document's sketch comes with its entry.
    pub(crate) fn sketches_in_docs(&self) -> bool {
        self.catalog.run_format().sketches_in_docs
    }

    /// Whether `--min-jaccard J` can be verified with this store's sketches: J within 0..=1
    /// and a store that keeps sketches (else an error that says how to get them). Clients
    /// check before they read input or write output.
    pub fn check_sketch_verification(&self, min_jaccard: f64) -> Result<()> {
        check_min_jaccard(min_jaccard)?;
        self.check_sketches()
    }

    /// Refuses verification with sketches of a store that keeps none, saying how to get them.
    pub(crate) fn check_sketches(&self) -> Result<()> {
        if self.sketch_bytes().is_some() {
            return Ok(());
        }
        Err(Error::settings(
            Setting::MinJaccard,
            format!(
                "{} keeps no sketches, so a Jaccard similarity needs the text (audit \
                 --verify-text); to verify from the store, make one with `simhashdb init \
                 STORE --sketch` and insert the documents as text",
                self.dir.display()
            ),
        ))
    }

    /// The sketches of live documents `(fingerprint, id, batch)`, ordered by `(fingerprint,
    /// id)`: None for a document inserted as a bare fingerprint (or whose sketch was lost).
    pub(crate) fn sketches_of(
        &self,
        documents: &[(u64, &str, u64)],
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let (table, found) = self.sketch_table_of(documents)?;
        Ok((0..documents.len())
            .map(|i| found[i].then(|| table.sketch(i).to_vec()))
            .collect())
    }

    /// [`Snapshot::sketches_of`] as one table, row i document i's sketch where `found[i]`
    /// (all zero where not): no allocation per document, for the audit's many.
    pub(crate) fn sketch_table_of(
        &self,
        documents: &[(u64, &str, u64)],
    ) -> Result<(SketchTable, Vec<bool>)> {
        let bytes = usize::from(self.sketch_bytes().unwrap_or(0));
        let mut table = SketchTable::new(bytes, documents.len());
        let mut found = vec![false; documents.len()];
        if bytes > 0 {
            let (rows, stride) = table.rows_mut();
            for run in self.runs.iter().rev() {
                if run.meta().sketches > 0 {
                    run.docs()?
                        .sketches_sorted(documents, rows, (stride, bytes), &mut found)?;
                }
            }
        }
        Ok((table, found))
    }

    /// Whether every run keeps a sketch for each of its postings, so that the sketches
    /// tables list every live document with its sketch (see
    /// [`Snapshot::live_documents_with_sketches`]). A run's sketches are those of its live
    /// postings, and each posting has its document's entry, so `sketches == documents`
    /// means every entry is a posting with a sketch; a run of deletions has no postings.
    pub(crate) fn sketches_complete(&self) -> bool {
        self.sketch_bytes().is_some()
            && self.runs.iter().all(|run| {
                let meta = run.meta();
                meta.postings_bytes == 0 || meta.sketches == meta.documents
            })
    }

    /// Calls `f(fingerprint, id, batch, sketch)` on every live document with one of the
    /// `fingerprints`, as [`Snapshot::live_documents_of`] does for each, with its sketch (None
    /// where it has none: inserted as a bare fingerprint, or in a store without sketches). A
    /// run whose docs entries hold the sketches (format 9) gives each with its document, lent
    /// as it is read; the other runs' documents are looked up in their sketches after, all
    /// together. Memory: the ids of those other runs' documents, and their sketches.
    pub(crate) fn live_sketched_documents_of(
        &self,
        fingerprints: &[u64],
        mut f: impl FnMut(u64, &str, u64, Option<&[u8]>),
    ) -> Result<()> {
        let bytes = usize::from(self.sketch_bytes().unwrap_or(0));
        let mut elsewhere: Vec<(u64, String, u64)> = Vec::new();
        for (r, run) in self.runs.iter().enumerate() {
            let docs = run.docs()?;
            let in_docs = docs.sketches_in_docs();
            for &fp in fingerprints {
                if !run.may_list(fp) {
                    continue;
                }
                docs.sketched_ids_of(fp, bytes, |id, batch, sketch| {
                    if !self.named_after(r, id)? {
                        match in_docs {
                            true => f(fp, id, batch, sketch),
                            false => elsewhere.push((fp, id.to_string(), batch)),
                        }
                    }
                    Ok(())
                })?;
            }
        }
        if elsewhere.is_empty() {
            return Ok(());
        }
        elsewhere.sort_unstable();
        let keys: Vec<(u64, &str, u64)> = (elsewhere.iter())
            .map(|(fp, id, batch)| (*fp, id.as_str(), *batch))
            .collect();
        for ((fp, id, batch), sketch) in elsewhere.iter().zip(self.sketches_of(&keys)?) {
            f(*fp, id, *batch, sketch.as_deref());
        }
        Ok(())
    }

    /// Every live document with a sketch under one of the fingerprints `wanted` (ascending,
    /// distinct), read in parallel parts: `add(part, fingerprint, id, batch, sketch)` puts a
    /// document in a part that `new_part` made. Where [`Snapshot::sketches_complete`], these
    /// are all the live documents under `wanted`, read in one pass instead of a postings
    /// lookup per fingerprint and a sketch lookup per document. A run that keeps its sketches
    /// in a table of their own or in its postings (formats 4 to 8) is read a chunk of
    /// `wanted` at a time, each part in `(fingerprint, id)` order; one that keeps them in its
    /// docs entries (format 9 on) has its postings' names sorted together and read a chunk of
    /// names at a time, each part in id hash order, so that each docs block is read once in
    /// all. Parts are about a quarter of a thread's share (fewer, larger tasks read fewer
    /// blocks twice). `progress` advances by `wanted.len()` in all, a share of it as each part
    /// is read. Memory: the parts, and while a format 9 or 10 run is read, its names (16 bytes each,
    /// twice while they are gathered).
    pub(crate) fn live_documents_with_sketches<P: Send>(
        &self,
        wanted: &[u64],
        new_part: impl Fn() -> P + Sync,
        add: impl Fn(&mut P, u64, &str, u64, &[u8]) + Sync,
        progress: &dyn Progress,
    ) -> Result<Vec<P>> {
        /// The fewest fingerprints, or names, per part.
        const CHUNK: usize = 1 << 12;
        let chunk_of = |len: usize| (len / (4 * rayon::current_num_threads())).max(CHUNK);
        let bytes = usize::from(self.sketch_bytes().unwrap_or(0));
        let mut parts = Vec::new();
        for (r, run) in self.runs.iter().enumerate() {
            let steps = share(wanted.len() as u64, r, self.runs.len());
            if run.meta().sketches == 0 {
                progress.advance(steps);
                continue;
            }
            let docs = run.docs()?;
            let keep = |part: &mut P, fp: u64, id: &str, batch: u64, sketch: &[u8]| {
                check_size(sketch, bytes)?;
                if !self.named_after(r, id)? {
                    add(part, fp, id, batch, sketch);
                }
                Ok(())
            };
            let read: Vec<P> = if docs.sketches_in_docs() {
                let names = docs.names_sorted(wanted)?;
                let chunks: Vec<&[(u32, u64)]> = names.chunks(chunk_of(names.len())).collect();
                (chunks.par_iter().enumerate())
                    .map(|(k, names)| {
                        let mut part = new_part();
                        docs.sketched_documents_named_by(
                            names,
                            |fp, id, batch, sketch| match sketch {
                                Some(sketch) => keep(&mut part, fp, id, batch, sketch),
                                None => Ok(()),
                            },
                        )?;
                        progress.advance(share(steps, k, chunks.len()));
                        Ok(part)
                    })
                    .collect::<Result<_>>()?
            } else {
                let chunks: Vec<&[u64]> = wanted.chunks(chunk_of(wanted.len())).collect();
                (chunks.par_iter().enumerate())
                    .map(|(k, wanted)| {
                        let mut part = new_part();
                        docs.sketched_documents_of(wanted, |fp, id, batch, sketch| {
                            keep(&mut part, fp, id, batch, sketch)
                        })?;
                        progress.advance(share(steps, k, chunks.len()));
                        Ok(part)
                    })
                    .collect::<Result<_>>()?
            };
            if read.is_empty() {
                progress.advance(steps);
            }
            parts.extend(read);
        }
        Ok(parts)
    }

    /// Calls `f(id, fingerprint, batch, sketch)` on every live document, run by run, with its
    /// verification sketch when it has one (`export --sketch`). The sketches are looked up
    /// a chunk of documents at a time.
    pub fn for_each_live_document_with_sketch(
        &self,
        mut f: impl FnMut(&str, u64, u64, Option<&[u8]>),
    ) -> Result<()> {
        /// Documents whose sketches are looked up together.
        const CHUNK: usize = 1 << 14;
        let mut chunk: Vec<(String, u64, u64)> = Vec::with_capacity(CHUNK);
        let mut flush = |chunk: &mut Vec<(String, u64, u64)>| -> Result<()> {
            let mut order: Vec<usize> = (0..chunk.len()).collect();
            order.sort_unstable_by(|&a, &b| {
                (chunk[a].1, &chunk[a].0).cmp(&(chunk[b].1, &chunk[b].0))
            });
            let keys: Vec<(u64, &str, u64)> = order
                .iter()
                .map(|&i| (chunk[i].1, chunk[i].0.as_str(), chunk[i].2))
                .collect();
            let found = self.sketches_of(&keys)?;
            let mut sketches = vec![None; chunk.len()];
            for (i, sketch) in order.into_iter().zip(found) {
                sketches[i] = sketch;
            }
            for ((id, fp, batch), sketch) in chunk.drain(..).zip(sketches) {
                f(&id, fp, batch, sketch.as_deref());
            }
            Ok(())
        };
        let mut failure = None;
        self.for_each_live_document(|id, fp, batch| {
            if failure.is_some() {
                return;
            }
            chunk.push((id.to_string(), fp, batch));
            if chunk.len() == CHUNK {
                failure = flush(&mut chunk).err();
            }
        })?;
        match failure {
            Some(e) => Err(e),
            None => guard_redb(&self.dir, || flush(&mut chunk)),
        }
    }

    /// The verification sketch of the stored document `id`: None when it is not stored, was
    /// inserted as a bare fingerprint, or the store keeps no sketches.
    pub fn sketch(&self, id: &str) -> Result<Option<Vec<u8>>> {
        let Some(document) = self.document(id)? else {
            return Ok(None);
        };
        if self.sketch_bytes().is_none() {
            return Ok(None);
        }
        let key = [(document.fingerprint, id, document.batch)];
        guard_redb(&self.dir, || Ok(self.sketches_of(&key)?.pop().flatten()))
    }
}
