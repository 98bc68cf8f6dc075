//! A store held open by a Python process: the library's [`Database`] handle, shared by every
//! thread, with the GIL released around everything that touches the store.
//!
//! The handle follows commits (any process's batch is seen within the library's default
//! refresh interval, 100 ms; this process's own at once) and opens the store for writing, taking
//! its writer lock, for each write call only: a Python process holding a store open never
//! blocks a CLI `insert` between its own writes.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use rayon::prelude::*;
use simhashdb::{
    Batch, CompactionPolicy, CreateOptions, Database, DatabaseOptions, DedupOptions,
    ExpireSelector, FingerprintFormat, InputFormat, InsertOptions, ReadOptions, Snapshot, Source,
    Store, Verification,
};

use crate::errors::{guard, py_err};
use crate::work::detached;
use crate::{bytes_of, digest_all, fingerprint_all, scheme_of, u64s_from_bytes};

/// Documents fingerprinted per step of `insert_documents` (the GIL is held only to take them).
const TEXT_CHUNK: usize = 8192;

/// `query_many`'s answer: query index, ids, fingerprints and distances, one entry per match.
type QueryColumns<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyList>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);

#[pyclass(frozen, name = "NativeStore", module = "simhashdb._native")]
pub struct NativeStore {
    dir: PathBuf,
    /// None once closed.
    database: RwLock<Option<Database>>,
}

fn closed() -> PyErr {
    PyValueError::new_err("the store is closed")
}

impl NativeStore {
    /// Opens the store at `dir`, holding at most `pin_bytes` of its tables in memory and a
    /// cache of `cache_bytes` (None: the library's defaults).
    fn new(
        dir: PathBuf,
        pin_bytes: Option<u64>,
        cache_bytes: Option<usize>,
    ) -> simhashdb::Result<Self> {
        let defaults = DatabaseOptions::default();
        let options = DatabaseOptions {
            pin_bytes: pin_bytes.unwrap_or(defaults.pin_bytes),
            cache_bytes: cache_bytes.unwrap_or(defaults.cache_bytes),
            ..defaults
        };
        let database = Database::open(&dir, options)?;
        Ok(NativeStore {
            dir: database.dir().to_path_buf(),
            database: RwLock::new(Some(database)),
        })
    }

    /// The handle, unless the store was closed.
    fn database(&self) -> PyResult<Database> {
        self.database
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(closed)
    }

    /// The committed state, looked for first if the last look is older than
    /// the library's default refresh interval, or always with `now`. Call with the GIL released.
    fn snapshot(&self, now: bool) -> PyResult<Arc<Snapshot>> {
        let database = self.database()?;
        if now {
            database.refresh().map_err(py_err)?;
        }
        database.snapshot().map_err(py_err)
    }

    /// Runs `read` on the committed state (see [`NativeStore::snapshot`]) with the GIL
    /// released.
    fn read<T: Send>(
        &self,
        py: Python<'_>,
        now: bool,
        read: impl FnOnce(&Snapshot) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        detached(py, || {
            let snapshot = self.snapshot(now)?;
            read(&snapshot)
        })
    }

    /// Runs `write` on the store opened for writing, with the GIL released; its commit is
    /// visible to this process's next read.
    fn write<T: Send>(
        &self,
        py: Python<'_>,
        write: impl FnOnce(&mut Store) -> simhashdb::Result<T> + Send,
    ) -> PyResult<T> {
        detached(py, || self.database()?.write(write).map_err(py_err))
    }

    /// Inserts `batch` as one batch labelled `label`, merging after it if `compact` and the
    /// policy asks; the summary as JSON.
    fn insert_batch(
        &self,
        py: Python<'_>,
        batch: Batch,
        label: Option<&str>,
        compact: bool,
    ) -> PyResult<String> {
        let insert = insert_options(label, compact);
        let read = ReadOptions::default();
        let summary = detached(py, || {
            self.database()?
                .insert_from([Source::Documents(batch)], &insert, &read)
                .map_err(py_err)
        })?;
        Ok(json_of(&summary))
    }

    /// `distance`, or the store's K.
    fn distance(snapshot: &Snapshot, distance: Option<i64>) -> PyResult<u32> {
        snapshot.distance(distance).map_err(py_err)
    }
}

/// A library value's JSON form, as every client answers with it (keys sorted).
fn json_of(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .expect("the library's values serialize")
        .to_string()
}

/// A batch of `ids[i]` with `fingerprints[i]` (the fingerprints of `what`: "fingerprints",
/// "texts"), naming the first bad id by its index.
fn batch_of(ids: &[String], fingerprints: &[u64], what: &str) -> PyResult<Batch> {
    if ids.len() != fingerprints.len() {
        return Err(PyValueError::new_err(format!(
            "{} ids but {} {what}: give one per id",
            ids.len(),
            fingerprints.len()
        )));
    }
    let mut batch = Batch::new();
    for (i, (id, fp)) in ids.iter().zip(fingerprints).enumerate() {
        batch
            .push(id, *fp)
            .map_err(|e| PyValueError::new_err(format!("ids[{i}]: {e}")))?;
    }
    Ok(batch)
}

/// A batch of `ids[i]` with the fingerprint and sketch of `documents[i]` (digested texts),
/// naming the first bad id by its index (`first` counts the ids before these).
fn batch_of_digests(
    batch: &mut Batch,
    ids: &[String],
    documents: Vec<(u64, Option<Vec<u8>>)>,
    what: &str,
    first: usize,
) -> PyResult<()> {
    if ids.len() != documents.len() {
        return Err(PyValueError::new_err(format!(
            "{} ids but {} {what}: give one per id",
            ids.len(),
            documents.len()
        )));
    }
    for (i, (id, (fp, sketch))) in ids.iter().zip(documents).enumerate() {
        match sketch {
            Some(sketch) => batch.push_sketched(id, fp, &sketch),
            None => batch.push(id, fp),
        }
        .map_err(|e| PyValueError::new_err(format!("{what}[{}]: {e}", first + i)))?;
    }
    Ok(())
}

/// How `insert_file` and `dedup_file` read their files: `format` (None: detected) and
/// `fingerprint_format` by their names, and the fields that hold the id, fingerprint and text.
fn files_read_options(
    format: Option<&str>,
    fingerprint_format: &str,
    id_field: String,
    fingerprint_field: String,
    text_field: String,
) -> PyResult<ReadOptions> {
    Ok(ReadOptions {
        format: format.map(InputFormat::parse).transpose().map_err(py_err)?,
        fingerprint_format: FingerprintFormat::parse(fingerprint_format).map_err(py_err)?,
        id_field,
        fingerprint_field,
        text_field,
        ..ReadOptions::default()
    })
}

/// A dedup's batch label: only with an insert (the label itself the library checks).
fn check_dedup_label(label: Option<&str>, insert: bool) -> PyResult<()> {
    match label {
        Some(_) if !insert => Err(PyValueError::new_err(
            "label: a label names the batch a dedup inserts: add insert=True",
        )),
        _ => Ok(()),
    }
}

/// A batch's insert options as Python's `label` and `compact` ask.
fn insert_options(label: Option<&str>, compact: bool) -> InsertOptions {
    InsertOptions {
        label: label.map(str::to_string),
        compact,
        ..InsertOptions::default()
    }
}

#[pymethods]
impl NativeStore {
    /// Creates a store as `simhashdb init` does; returns it with the warnings `init` prints.
    #[staticmethod]
    #[pyo3(signature = (path, distance, blocks, expected_size, shards, scheme, shingle, weight,
                        max_runs, merge_factor, sketch_bytes))]
    #[allow(clippy::too_many_arguments)]
    fn create(
        py: Python<'_>,
        path: PathBuf,
        distance: u8,
        blocks: Option<u8>,
        expected_size: Option<u64>,
        shards: Option<u16>,
        scheme: Option<&str>,
        shingle: Option<u8>,
        weight: Option<&str>,
        max_runs: Option<u16>,
        merge_factor: Option<u16>,
        sketch_bytes: Option<u16>,
    ) -> PyResult<(Self, Vec<String>)> {
        guard(|| {
            let defaults = CreateOptions::default();
            let scheme = scheme_of(scheme, shingle, weight)?
                .with_sketch(sketch_bytes.unwrap_or(0))
                .map_err(py_err)?;
            let options = CreateOptions {
                distance,
                blocks,
                expected_size: expected_size.unwrap_or(defaults.expected_size),
                shards,
                scheme,
                policy: CompactionPolicy {
                    max_runs: max_runs.unwrap_or(defaults.policy.max_runs),
                    merge_factor: merge_factor.unwrap_or(defaults.policy.merge_factor),
                },
            };
            let warnings = options.warnings().map_err(py_err)?;
            let store = detached(py, || {
                drop(Store::create_from(&path, &options)?);
                NativeStore::new(path, Some(0), None)
            })
            .map_err(py_err)?;
            Ok((store, warnings))
        })
    }

    /// Opens a store for reading (and for writes, one call at a time).
    #[staticmethod]
    #[pyo3(signature = (path, pin_bytes, cache_bytes))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        pin_bytes: Option<u64>,
        cache_bytes: Option<usize>,
    ) -> PyResult<Self> {
        guard(|| detached(py, || NativeStore::new(path, pin_bytes, cache_bytes)).map_err(py_err))
    }

    /// Releases the store's files; later calls raise ValueError.
    fn close(&self, py: Python<'_>) {
        // Waits for reads under way to take their handle.
        detached(py, || {
            self.database
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .take();
        });
    }

    /// Whether the store was closed.
    #[getter]
    fn closed(&self) -> bool {
        self.database
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// The store's directory (absolute).
    #[getter]
    fn path(&self) -> PathBuf {
        self.dir.clone()
    }

    /// (blocks, distance, shards, tables, scheme name).
    fn settings(&self, py: Python<'_>) -> PyResult<(u8, u8, u16, usize, String)> {
        guard(|| {
            self.read(py, false, |snapshot| {
                let s = snapshot.settings();
                let scheme = snapshot
                    .scheme()
                    .map_err(py_err)?
                    .map_or_else(|| "none".to_string(), |s| s.name());
                Ok((s.blocks, s.distance, s.shards, s.table_count(), scheme))
            })
        })
    }

    /// Looks at the committed catalog now; returns whether a newer state became current.
    fn refresh(&self, py: Python<'_>) -> PyResult<bool> {
        guard(|| detached(py, || self.database()?.refresh().map_err(py_err)))
    }

    /// One batch of (id, fingerprint); `fingerprints` little-endian u64 bytes.
    #[pyo3(signature = (ids, fingerprints, label, compact))]
    fn insert(
        &self,
        py: Python<'_>,
        ids: Vec<String>,
        fingerprints: &[u8],
        label: Option<&str>,
        compact: bool,
    ) -> PyResult<String> {
        guard(|| {
            let fingerprints = u64s_from_bytes(fingerprints, "fingerprints")?;
            let batch = batch_of(&ids, &fingerprints, "fingerprints")?;
            self.insert_batch(py, batch, label, compact)
        })
    }

    /// One batch of (id, text) pairs from any iterable, fingerprinted with the store's scheme.
    #[pyo3(signature = (documents, label, compact))]
    fn insert_documents(
        &self,
        py: Python<'_>,
        documents: &Bound<'_, PyAny>,
        label: Option<&str>,
        compact: bool,
    ) -> PyResult<String> {
        guard(|| {
            let scheme = self.read(py, false, |s| s.text_scheme().map_err(py_err))?;
            let mut batch = Batch::new();
            let mut items = documents.try_iter()?;
            let mut seen = 0_usize;
            loop {
                let (mut ids, mut texts) = (Vec::new(), Vec::new());
                for item in items.by_ref().take(TEXT_CHUNK) {
                    let (id, text) = id_and_text(&item?).map_err(|e| {
                        PyValueError::new_err(format!("documents[{}]: {e}", seen + ids.len()))
                    })?;
                    ids.push(id);
                    texts.push(text);
                }
                if ids.is_empty() {
                    break;
                }
                let digests = detached(py, || digest_all(&scheme, &texts, "documents", seen))?;
                batch_of_digests(&mut batch, &ids, digests, "documents", seen)?;
                seen += ids.len();
            }
            self.insert_batch(py, batch, label, compact)
        })
    }

    /// One batch from files or directories in any format `insert` reads.
    #[pyo3(signature = (paths, format, skip_invalid, label, id_field, fingerprint_field, text_field, fingerprint_format, compact, max_skipped, rejects, allow_empty))]
    #[allow(clippy::too_many_arguments)]
    fn insert_file(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        format: Option<&str>,
        skip_invalid: bool,
        label: Option<&str>,
        id_field: String,
        fingerprint_field: String,
        text_field: String,
        fingerprint_format: &str,
        compact: bool,
        max_skipped: Option<String>,
        rejects: Option<PathBuf>,
        allow_empty: bool,
    ) -> PyResult<String> {
        guard(|| {
            let mut options = files_read_options(
                format,
                fingerprint_format,
                id_field,
                fingerprint_field,
                text_field,
            )?;
            let insert = insert_options(label, compact);
            insert.check().map_err(py_err)?;
            let skips = Skips::new(skip_invalid, max_skipped.as_deref(), rejects, allow_empty)?;
            skips.apply(&mut options).map_err(py_err)?;
            let summary = self.write(py, |store| {
                store.insert_from([Source::Files(&paths)], &insert, &options, &())
            })?;
            Ok(json_of(&summary))
        })
    }

    /// Greedy dedup of (id, fingerprint) documents (`fingerprints` little-endian u64 bytes, or
    /// None with `texts` fingerprinted with the store's scheme) against the store and each
    /// other; with `insert`, the kept ones become one batch in the same write. Returns the
    /// summary as JSON: `DedupSummary`'s fields with the verdicts in `results`.
    #[pyo3(signature = (ids, fingerprints, texts, distance, insert, label, min_jaccard))]
    #[allow(clippy::too_many_arguments)]
    fn dedup(
        &self,
        py: Python<'_>,
        ids: Vec<String>,
        fingerprints: Option<&[u8]>,
        texts: Option<Vec<String>>,
        distance: Option<i64>,
        insert: bool,
        label: Option<&str>,
        min_jaccard: Option<f64>,
    ) -> PyResult<String> {
        guard(|| {
            check_dedup_label(label, insert)?;
            let batch = match (fingerprints, texts) {
                (Some(bytes), None) => batch_of(
                    &ids,
                    &u64s_from_bytes(bytes, "fingerprints")?,
                    "fingerprints",
                )?,
                (None, Some(texts)) => {
                    let scheme = self.read(py, false, |s| s.text_scheme().map_err(py_err))?;
                    let digests = detached(py, || digest_all(&scheme, &texts, "texts", 0))?;
                    let mut batch = Batch::new();
                    batch_of_digests(&mut batch, &ids, digests, "texts", 0)?;
                    batch
                }
                _ => {
                    return Err(PyValueError::new_err(
                        "give exactly one of fingerprints and texts",
                    ))
                }
            };
            let options = DedupOptions {
                distance,
                min_jaccard,
                insert: insert.then(|| insert_options(label, true)),
                ..DedupOptions::default()
            };
            let (read, source) = (ReadOptions::default(), Source::Documents(batch));
            let database = self.database()?;
            let answer = detached(py, || database.dedup_from(source, &options, &read));
            Ok(json_of(&answer.map_err(py_err)?))
        })
    }

    /// Dedup of files as `simhashdb dedup` does it; returns the summary as JSON.
    #[pyo3(signature = (paths, output, duplicates, insert, label, distance, format, skip_invalid, id_field, fingerprint_field, text_field, fingerprint_format, min_jaccard, max_skipped, rejects, allow_empty))]
    #[allow(clippy::too_many_arguments)]
    fn dedup_file(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        output: Option<PathBuf>,
        duplicates: Option<PathBuf>,
        insert: bool,
        label: Option<String>,
        distance: Option<i64>,
        format: Option<&str>,
        skip_invalid: bool,
        id_field: String,
        fingerprint_field: String,
        text_field: String,
        fingerprint_format: &str,
        min_jaccard: Option<f64>,
        max_skipped: Option<String>,
        rejects: Option<PathBuf>,
        allow_empty: bool,
    ) -> PyResult<String> {
        guard(|| {
            let read = files_read_options(
                format,
                fingerprint_format,
                id_field,
                fingerprint_field,
                text_field,
            )?;
            check_dedup_label(label.as_deref(), insert)?;
            // A dedup that only reads takes an empty input; one that inserts, when asked.
            let skips = Skips::new(
                skip_invalid,
                max_skipped.as_deref(),
                rejects,
                allow_empty || !insert,
            )?;
            // The store and the distance are checked before the rejects file is made.
            self.read(py, false, |snapshot| {
                snapshot.distance(distance).map_err(py_err)
            })?;
            let mut read = read;
            skips.apply(&mut read).map_err(py_err)?;
            let options = DedupOptions {
                distance,
                min_jaccard,
                insert: insert.then(|| insert_options(label.as_deref(), true)),
                output,
                duplicates,
            };
            let database = self.database()?;
            let summary = detached(py, || {
                database.dedup_files(&paths, &options, &read, &mut std::io::stdout())
            })
            .map_err(py_err)?;
            Ok(json_of(&summary))
        })
    }

    /// [(id, fingerprint, distance)] within `distance` of `fingerprint`, as `query` orders them.
    #[pyo3(signature = (fingerprint, distance))]
    fn query(
        &self,
        py: Python<'_>,
        fingerprint: u64,
        distance: Option<i64>,
    ) -> PyResult<Vec<(String, u64, u32)>> {
        guard(|| {
            let matches = self.read(py, false, |snapshot| {
                let distance = Self::distance(snapshot, distance)?;
                snapshot.query(fingerprint, distance).map_err(py_err)
            })?;
            Ok(matches
                .into_iter()
                .map(|m| (m.id, m.fingerprint, m.distance))
                .collect())
        })
    }

    /// The matches of many queries (little-endian u64 bytes) in parallel: (query index bytes,
    /// ids, fingerprint bytes, distance bytes), each array u64 little-endian.
    #[pyo3(signature = (queries, distance))]
    fn query_many<'py>(
        &self,
        py: Python<'py>,
        queries: &[u8],
        distance: Option<i64>,
    ) -> PyResult<QueryColumns<'py>> {
        guard(|| {
            let queries: Vec<simhashdb::Query> = u64s_from_bytes(queries, "queries")?
                .into_iter()
                .map(simhashdb::Query::from)
                .collect();
            let results = self.read(py, false, |snapshot| {
                let distance = Self::distance(snapshot, distance)?;
                snapshot
                    .query_many(&queries, distance, None)
                    .map_err(py_err)
            })?;
            let total: usize = results.iter().map(Vec::len).sum();
            let (mut index, mut fps, mut dists) = (
                Vec::with_capacity(total),
                Vec::with_capacity(total),
                Vec::with_capacity(total),
            );
            let mut ids = Vec::with_capacity(total);
            for (q, matches) in results.into_iter().enumerate() {
                for m in matches {
                    index.push(q as u64);
                    fps.push(m.fingerprint);
                    dists.push(u64::from(m.distance));
                    ids.push(m.id);
                }
            }
            Ok((
                bytes_of(py, &index, u64::to_le_bytes),
                PyList::new(py, ids)?,
                bytes_of(py, &fps, u64::to_le_bytes),
                bytes_of(py, &dists, u64::to_le_bytes),
            ))
        })
    }

    /// For each text, its matches verified with sketches at `min_jaccard`: [(id,
    /// fingerprint, distance, jaccard or None when unverified)], as `query --min-jaccard`
    /// gives them.
    #[pyo3(signature = (texts, distance, min_jaccard))]
    #[allow(clippy::type_complexity)]
    fn query_texts_verified(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        distance: Option<i64>,
        min_jaccard: f64,
    ) -> PyResult<Vec<Vec<(String, u64, u32, Option<f64>)>>> {
        guard(|| {
            let answers = self.read(py, false, |snapshot| {
                let distance = Self::distance(snapshot, distance)?;
                // A store of bare fingerprints refuses texts before any is read.
                snapshot.text_scheme().map_err(py_err)?;
                let queries = texts
                    .par_iter()
                    .enumerate()
                    .map(|(i, text)| {
                        snapshot
                            .text_query(text)
                            .map_err(|e| PyValueError::new_err(format!("texts[{i}]: {e}")))
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                snapshot
                    .query_many(&queries, distance, Some(min_jaccard))
                    .map_err(py_err)
            })?;
            Ok(answers
                .into_iter()
                .map(|matches| {
                    matches
                        .into_iter()
                        .map(|m| (m.id, m.fingerprint, m.distance, m.jaccard))
                        .collect()
                })
                .collect())
        })
    }

    /// The fingerprints of `texts` under the store's scheme, as little-endian u64 bytes.
    fn fingerprint_texts<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        guard(|| {
            let fingerprints = self.read(py, false, |snapshot| {
                let scheme = snapshot.text_scheme().map_err(py_err)?;
                fingerprint_all(&scheme, &texts, "texts", 0)
            })?;
            Ok(bytes_of(py, &fingerprints, u64::to_le_bytes))
        })
    }

    /// (fingerprint, batch) of a live id, or None.
    fn get(&self, py: Python<'_>, id: &str) -> PyResult<Option<(u64, u64)>> {
        guard(|| {
            let document = self.read(py, false, |s| s.document(id).map_err(py_err))?;
            Ok(document.map(|d| (d.fingerprint, d.batch)))
        })
    }

    /// Deletes ids in one batch (or previews it); the summary as JSON.
    fn delete(&self, py: Python<'_>, ids: Vec<String>, dry_run: bool) -> PyResult<String> {
        guard(|| {
            let ids = ids.iter().map(String::as_str);
            let summary = if dry_run {
                // A dry run reads the committed state: no lock, nothing written.
                self.read(py, true, |snapshot| {
                    snapshot.preview_delete(ids).map_err(py_err)
                })?
            } else {
                self.write(py, |store| store.delete(ids))?
            };
            Ok(json_of(&summary))
        })
    }

    /// Expires whole insert batches: committed before a date, or with a label.
    #[pyo3(signature = (before, label, dry_run))]
    fn expire(
        &self,
        py: Python<'_>,
        before: Option<&str>,
        label: Option<String>,
        dry_run: bool,
    ) -> PyResult<String> {
        guard(|| {
            let selector = match (before, label) {
                (Some(date), None) => ExpireSelector::before_date(date).map_err(py_err)?,
                (None, Some(label)) => ExpireSelector::Label(label),
                _ => {
                    return Err(PyValueError::new_err(
                        "give exactly one of before (a date) and batch (a label)",
                    ))
                }
            };
            let summary = if dry_run {
                self.read(py, true, |snapshot| {
                    snapshot.preview_expire(&selector).map_err(py_err)
                })?
            } else {
                self.write(py, |store| store.expire(&selector))?
            };
            Ok(json_of(&summary))
        })
    }

    /// Every batch, oldest first, as a JSON array of `batches --json` lines.
    fn batches(&self, py: Python<'_>) -> PyResult<String> {
        guard(|| self.read(py, true, |snapshot| Ok(json_of(&snapshot.batches()))))
    }

    /// Merges every run into one; the summary as JSON.
    fn compact(&self, py: Python<'_>) -> PyResult<String> {
        guard(|| {
            let summary = self.write(py, |store| store.compact())?;
            Ok(json_of(&summary))
        })
    }

    /// Checks every block's checksum and structure (and with `deep`, redb's own); the report
    /// as JSON.
    fn verify(&self, py: Python<'_>, deep: bool) -> PyResult<String> {
        guard(|| {
            if self.closed() {
                return Err(closed());
            }
            let report =
                detached(py, || simhashdb::Store::verify(&self.dir, deep, &())).map_err(py_err)?;
            Ok(json_of(&report))
        })
    }

    /// `stats --json`.
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        guard(|| {
            let database = self.database()?;
            let stats = detached(py, || {
                database.refresh()?;
                database.store_stats()
            });
            Ok(json_of(&stats.map_err(py_err)?))
        })
    }

    /// The audit's pairs within `distance` (verified against `verify_text` when given), to
    /// be pulled in batches: the near duplicates are found now, the pairs expanded as pulled.
    #[pyo3(signature = (distance, verify_text, min_jaccard, id_field, text_field))]
    fn audit_pairs(
        &self,
        py: Python<'_>,
        distance: Option<i64>,
        verify_text: Option<PathBuf>,
        min_jaccard: Option<f64>,
        id_field: String,
        text_field: String,
    ) -> PyResult<NativePairs> {
        guard(|| {
            let near =
                self.near_duplicates(py, distance, verify_text, min_jaccard, id_field, text_field)?;
            Ok(NativePairs {
                near: Arc::new(near),
                cursor: std::sync::Mutex::new(simhashdb::PairCursor::default()),
            })
        })
    }

    /// The keep/drop list: `(dropped ids, kept ids)`, one entry per document a dedup drops,
    /// in `audit --duplicates`' order; and the audit's summary as JSON.
    #[pyo3(signature = (distance, verify_text, min_jaccard, id_field, text_field))]
    fn audit_duplicates(
        &self,
        py: Python<'_>,
        distance: Option<i64>,
        verify_text: Option<PathBuf>,
        min_jaccard: Option<f64>,
        id_field: String,
        text_field: String,
    ) -> PyResult<(Vec<String>, Vec<String>, String)> {
        guard(|| {
            let near =
                self.near_duplicates(py, distance, verify_text, min_jaccard, id_field, text_field)?;
            let (mut dropped, mut kept) = (Vec::new(), Vec::new());
            near.for_each_duplicate(|d| {
                dropped.push(d.id.to_string());
                kept.push(d.kept.to_string());
                Ok::<_, std::convert::Infallible>(())
            })
            .unwrap_or_else(|never| match never {});
            Ok((dropped, kept, json_of(&near.summary())))
        })
    }

    /// Draws the audit's report to `path` (.svg or .png); returns the summary as JSON.
    #[pyo3(signature = (path, distance, verify_text, min_jaccard, id_field, text_field))]
    #[allow(clippy::too_many_arguments)]
    fn audit_report(
        &self,
        py: Python<'_>,
        path: PathBuf,
        distance: Option<i64>,
        verify_text: Option<PathBuf>,
        min_jaccard: Option<f64>,
        id_field: String,
        text_field: String,
    ) -> PyResult<String> {
        guard(|| {
            simhashdb::NearDuplicates::check_report_path(&path).map_err(py_err)?;
            let near =
                self.near_duplicates(py, distance, verify_text, min_jaccard, id_field, text_field)?;
            detached(py, || near.write_report(&path)).map_err(py_err)?;
            Ok(json_of(&near.summary()))
        })
    }

    /// The clusters of the audit's pairs (with `singletons`, every other live document alone);
    /// with `verify_text`, of the verified pairs only.
    #[pyo3(signature = (distance, singletons, verify_text, min_jaccard, id_field, text_field))]
    #[allow(clippy::too_many_arguments)]
    fn audit_clusters(
        &self,
        py: Python<'_>,
        distance: Option<i64>,
        singletons: bool,
        verify_text: Option<PathBuf>,
        min_jaccard: Option<f64>,
        id_field: String,
        text_field: String,
    ) -> PyResult<Vec<Vec<String>>> {
        guard(|| {
            let mut near =
                self.near_duplicates(py, distance, verify_text, min_jaccard, id_field, text_field)?;
            if singletons {
                self.read(py, true, |snapshot| {
                    near.add_singletons(snapshot).map_err(py_err)
                })?;
            }
            let mut clusters = Vec::new();
            near.for_each_cluster(|c| {
                clusters.push(c.members.iter().map(|(id, _)| id.to_string()).collect());
                Ok::<_, std::convert::Infallible>(())
            })
            .unwrap_or_else(|never| match never {});
            Ok(clusters)
        })
    }
}

impl NativeStore {
    /// The audit's near duplicates within `distance`, verified against the corpus
    /// `verify_text` (its ids and texts in `id_field` and `text_field`) when given, with the
    /// GIL released.
    fn near_duplicates(
        &self,
        py: Python<'_>,
        distance: Option<i64>,
        verify_text: Option<PathBuf>,
        min_jaccard: Option<f64>,
        id_field: String,
        text_field: String,
    ) -> PyResult<simhashdb::NearDuplicates> {
        let read = ReadOptions {
            id_field,
            text_field,
            ..ReadOptions::default()
        };
        let verification =
            Verification::asked(verify_text.into_iter().collect(), read, min_jaccard);
        let near = self.read(py, true, |snapshot| {
            let distance = Self::distance(snapshot, distance)?;
            snapshot
                .near_duplicates(distance, &verification, &())
                .map_err(py_err)
        })?;
        Ok(near)
    }
}

/// An (id, text) pair: any sequence of two str (a tuple, a list, a row).
fn id_and_text(item: &Bound<'_, PyAny>) -> PyResult<(String, String)> {
    if let Ok(pair) = item.extract::<(String, String)>() {
        return Ok(pair);
    }
    match item.extract::<Vec<String>>() {
        Ok(v) if v.len() == 2 => {
            let mut v = v.into_iter();
            Ok((v.next().expect("2 items"), v.next().expect("2 items")))
        }
        _ => Err(PyValueError::new_err(format!(
            "not an (id, text) pair of str: {}",
            item.repr().map(|r| r.to_string()).unwrap_or_default()
        ))),
    }
}

/// An audit's pairs, pulled in batches: memory holds the near duplicates (fingerprint pairs and
/// the documents that have one), never more than one batch of document pairs.
#[pyclass(frozen, name = "NativePairs", module = "simhashdb._native")]
pub struct NativePairs {
    near: Arc<simhashdb::NearDuplicates>,
    cursor: std::sync::Mutex<simhashdb::PairCursor>,
}

#[pymethods]
impl NativePairs {
    /// The audit's summary as JSON (pairs counted, not expanded).
    fn summary(&self) -> String {
        json_of(&self.near.summary())
    }

    /// Whether the pairs carry a Jaccard (verified against the texts).
    fn verified(&self) -> bool {
        self.near.is_verified()
    }

    /// The same pairs from the start, with a walk of their own.
    fn again(&self) -> NativePairs {
        NativePairs {
            near: self.near.clone(),
            cursor: std::sync::Mutex::new(simhashdb::PairCursor::default()),
        }
    }

    /// Up to `max` more pairs: (a, b, distances as u64 LE bytes, Jaccards as f64 LE bytes or
    /// None); empty lists at the end.
    #[allow(clippy::type_complexity)]
    fn next_batch<'py>(
        &self,
        py: Python<'py>,
        max: usize,
    ) -> PyResult<(
        Bound<'py, PyList>,
        Bound<'py, PyList>,
        Bound<'py, PyBytes>,
        Option<Bound<'py, PyBytes>>,
    )> {
        guard(|| {
            let (mut a, mut b, mut dists, mut jaccards) = (vec![], vec![], vec![], vec![]);
            let mut cursor = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
            self.near
                .next_pairs(&mut cursor, max, |x, y, distance, jaccard| {
                    a.push(x.to_string());
                    b.push(y.to_string());
                    dists.push(u64::from(distance));
                    jaccards.push(jaccard.unwrap_or(f64::NAN));
                    Ok::<_, std::convert::Infallible>(())
                })
                .unwrap_or_else(|never| match never {});
            let jaccards = self.near.is_verified().then_some(jaccards);
            Ok((
                PyList::new(py, a)?,
                PyList::new(py, b)?,
                bytes_of(py, &dists, u64::to_le_bytes),
                jaccards.map(|j| bytes_of(py, &j, f64::to_le_bytes)),
            ))
        })
    }
}

/// What becomes of invalid records in a read of files: as the CLI's --skip-invalid,
/// --max-skipped, --rejects and --allow-empty say it.
struct Skips {
    skip_invalid: bool,
    max_skipped: Option<simhashdb::MaxSkipped>,
    rejects: Option<PathBuf>,
    allow_empty: bool,
}

impl Skips {
    fn new(
        skip_invalid: bool,
        max_skipped: Option<&str>,
        rejects: Option<PathBuf>,
        allow_empty: bool,
    ) -> PyResult<Skips> {
        let max_skipped = max_skipped
            .map(simhashdb::MaxSkipped::parse)
            .transpose()
            .map_err(py_err)?;
        Ok(Skips {
            skip_invalid,
            max_skipped,
            rejects,
            allow_empty,
        })
    }

    /// Sets these in `options`, creating the rejects file.
    fn apply(&self, options: &mut ReadOptions) -> simhashdb::Result<()> {
        let rejects = self
            .rejects
            .as_deref()
            .map(simhashdb::Rejects::create)
            .transpose()?;
        *options = std::mem::take(options).skipping(self.skip_invalid, self.max_skipped, rejects);
        options.allow_empty = self.allow_empty;
        Ok(())
    }
}
