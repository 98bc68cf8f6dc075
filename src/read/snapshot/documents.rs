//! The live documents: what the newest run that mentions an id says of it, one id at a
//! time or all of them.

use rayon::prelude::*;

use super::*;
use crate::sys::progress::{share, Progress};

impl Snapshot {
    /// Calls `f` on every live id of `fingerprint`: an id listed under it in run r is live
    /// unless a newer run mentions the id (with another fingerprint, the same one again, or a
    /// deletion).
    pub fn live_ids(&self, fingerprint: u64, mut f: impl FnMut(&str)) -> Result<()> {
        self.live_documents_of(fingerprint, |id, _| f(id))
    }

    /// Calls `f(id, batch)` on every live document with `fingerprint`: a posting's batch is
    /// its document's (format 3).
    pub(crate) fn live_documents_of(
        &self,
        fingerprint: u64,
        mut f: impl FnMut(&str, u64),
    ) -> Result<()> {
        for (r, run) in self.runs.iter().enumerate() {
            // Pinned key sets answer "not here" from memory (see crate::run::pinned).
            if !run.may_list(fingerprint) {
                continue;
            }
            let mut ids = Vec::new();
            run.docs()?
                .ids_of(fingerprint, |id, batch| ids.push((id.to_string(), batch)))?;
            for (id, batch) in ids {
                if !self.named_after(r, &id)? {
                    f(&id, batch);
                }
            }
        }
        Ok(())
    }

    /// Every live document `(fingerprint, id, batch)` with one of the fingerprints `wanted`
    /// (ascending, distinct), in no particular order: what [`Snapshot::live_documents_of`]
    /// gives for each, read run by run, a chunk at a time in parallel. A run whose postings
    /// name their documents (format 8) is read in two ordered walks: its postings for the
    /// names of the wanted fingerprints, then its docs blocks for the documents of those
    /// names sorted (each block read once for all of them), instead of a docs lookup per
    /// document. `progress` advances by the fingerprints read. Memory: the documents found,
    /// and a run's names (12 bytes a document) while it is read.
    pub(crate) fn live_documents_of_all(
        &self,
        wanted: &[u64],
        progress: &dyn Progress,
    ) -> Result<Vec<(u64, Box<str>, u64)>> {
        /// Fingerprints, or names, per parallel task.
        const CHUNK: usize = 1 << 12;
        let mut all = Vec::new();
        for (r, run) in self.runs.iter().enumerate() {
            let docs = run.docs()?;
            let listed: Vec<u64> = wanted
                .iter()
                .copied()
                .filter(|&fp| run.may_list(fp))
                .collect();
            let parts: Vec<Vec<(u64, Box<str>, u64)>> = if docs.names_documents() {
                docs.names_sorted(&listed)?
                    .par_chunks(CHUNK)
                    .map(|names| {
                        let mut found = Vec::new();
                        docs.documents_named_by(names, |fp, id, batch| {
                            found.push((fp, id.into(), batch))
                        })?;
                        Ok(found)
                    })
                    .collect::<Result<_>>()?
            } else {
                listed
                    .par_chunks(CHUNK)
                    .map(|chunk| {
                        let mut found = Vec::new();
                        for &fp in chunk {
                            docs.ids_of(fp, |id, batch| found.push((fp, id.into(), batch)))?;
                        }
                        Ok(found)
                    })
                    .collect::<Result<_>>()?
            };
            // Those a newer run overrides are not live.
            let parts: Vec<Vec<(u64, Box<str>, u64)>> = parts
                .into_par_iter()
                .map(|part| {
                    let mut live = Vec::with_capacity(part.len());
                    for document in part {
                        if !self.named_after(r, &document.1)? {
                            live.push(document);
                        }
                    }
                    Ok(live)
                })
                .collect::<Result<_>>()?;
            all.extend(parts.into_iter().flatten());
            progress.advance(share(wanted.len() as u64, r, self.runs.len()));
        }
        Ok(all)
    }

    /// Whether a run newer than run `r` has an entry for `id` (inserted again, replaced or
    /// deleted there), which overrides run `r`'s.
    pub(super) fn named_after(&self, r: usize, id: &str) -> Result<bool> {
        let newer = &self.runs[r + 1..];
        if newer.is_empty() {
            return Ok(false);
        }
        let hash = id_hash(id.as_bytes());
        for run in newer {
            if run.may_mention(hash) && run.docs()?.state_of(id)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Calls `f(id, fingerprint, batch)` on every live document, run by run.
    pub fn for_each_live_document(&self, f: impl FnMut(&str, u64, u64)) -> Result<()> {
        guard_redb(&self.dir, || self.for_each_live_document_unguarded(f))
    }

    pub(super) fn for_each_live_document_unguarded(
        &self,
        mut f: impl FnMut(&str, u64, u64),
    ) -> Result<()> {
        const CHUNK: usize = 1 << 16;
        for (r, run) in self.runs.iter().enumerate() {
            let newer = &self.runs[r + 1..];
            let mut chunk: Vec<(u64, String, u64, u64)> = Vec::with_capacity(CHUNK);
            let mut flush = |chunk: &mut Vec<(u64, String, u64, u64)>| -> Result<()> {
                let keys: Vec<(u64, &str)> = chunk
                    .iter()
                    .map(|(h, id, _, _)| (*h, id.as_str()))
                    .collect();
                let mut states = vec![None; keys.len()];
                for run in newer {
                    run.docs()?.states_sorted(&keys, &mut states)?;
                }
                for ((_, id, fp, batch), state) in chunk.iter().zip(states) {
                    if state.is_none() {
                        f(id, *fp, *batch);
                    }
                }
                chunk.clear();
                Ok(())
            };
            let mut failure = None;
            run.docs()?.for_each_document(|hash, id, state| {
                if failure.is_some() {
                    return;
                }
                if let DocState::Live { fingerprint, batch } = state {
                    chunk.push((hash, id.to_string(), fingerprint, batch));
                    if chunk.len() == CHUNK {
                        failure = flush(&mut chunk).err();
                    }
                }
            })?;
            if let Some(e) = failure {
                return Err(e);
            }
            flush(&mut chunk)?;
        }
        Ok(())
    }

    /// The fingerprint `id` currently has, if it is stored.
    pub fn get(&self, id: &str) -> Result<Option<u64>> {
        Ok(self.document(id)?.map(|d| d.fingerprint))
    }

    /// The stored document `id`, if it is stored: its fingerprint and the batch that set it.
    pub fn document(&self, id: &str) -> Result<Option<Document>> {
        guard_redb(&self.dir, || self.document_unguarded(id))
    }

    pub(super) fn document_unguarded(&self, id: &str) -> Result<Option<Document>> {
        for run in self.runs.iter().rev() {
            match run.docs()?.state_of(id)? {
                Some(DocState::Live { fingerprint, batch }) => {
                    return Ok(Some(Document {
                        id: id.to_string(),
                        fingerprint,
                        batch,
                    }))
                }
                Some(DocState::Deleted { .. }) => return Ok(None),
                None => {}
            }
        }
        Ok(None)
    }
}
