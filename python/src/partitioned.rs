//! The Spark jobs' work inside each task, on Arrow columns: fingerprinting texts, cutting a
//! partition into slices, finding what slices hold, expanding fingerprint pairs into document
//! pairs, and the components of a fingerprint graph (simhashdb::partitioned does the work;
//! this module only converts).

use arrow_array::builder::{BinaryBuilder, ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;

use arrow_array::{Array, BooleanArray, Float64Array, Int32Array, Int64Array, Int8Array};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use simhashdb::partitioned::{
    self, components as graph_components, Against, Blocks, Half, PartSlices, Plan, Router, Row,
};
use simhashdb::Scheme;

use crate::arrow::{bools, export, import, int64s, python_repr, Column, Exported};
use crate::errors::{guard, py_err};
use crate::work::detached;

/// The fingerprints (int64 holding the 64 bits) of the texts of a batch, in parallel with the
/// GIL released; an error names the first document at fault by its id: a null text, one that
/// is not UTF-8, one with no token, one past the size a document may have.
#[pyfunction]
pub fn fingerprint_arrow(
    py: Python<'_>,
    ids: &Bound<'_, PyAny>,
    texts: &Bound<'_, PyAny>,
    scheme: &str,
    text_column: &str,
) -> PyResult<Exported> {
    guard(|| {
        let scheme = Scheme::from_name(scheme).map_err(py_err)?;
        let documents = documents_of_texts(py, ids, texts, &scheme, text_column)?;
        Ok(export(Int64Array::from_iter_values(
            documents.iter().map(|&(fp, _)| fp as i64),
        )))
    })
}

/// [`fingerprint_arrow`] with each text's verification sketch of `sketch_bytes` bytes, as a
/// store made with `init --sketch --sketch-bytes N` keeps it (one tokenizing for both):
/// `(fingerprints, sketches)`.
#[pyfunction]
pub fn fingerprint_sketch_arrow(
    py: Python<'_>,
    ids: &Bound<'_, PyAny>,
    texts: &Bound<'_, PyAny>,
    scheme: &str,
    sketch_bytes: u16,
    text_column: &str,
) -> PyResult<(Exported, Exported)> {
    guard(|| {
        let scheme = Scheme::from_name(scheme)
            .and_then(|s| s.with_sketch(sketch_bytes))
            .map_err(py_err)?;
        let documents = documents_of_texts(py, ids, texts, &scheme, text_column)?;
        let fps = Int64Array::from_iter_values(documents.iter().map(|&(fp, _)| fp as i64));
        let mut sketches = BinaryBuilder::new();
        for (_, sketch) in &documents {
            sketches.append_option(sketch.as_deref());
        }
        Ok((export(fps), export(sketches.finish())))
    })
}

/// Each text's fingerprint and sketch (when `scheme` has one), in parallel with the GIL
/// released; an error names the first document at fault by its id.
fn documents_of_texts(
    py: Python<'_>,
    ids: &Bound<'_, PyAny>,
    texts: &Bound<'_, PyAny>,
    scheme: &Scheme,
    text_column: &str,
) -> PyResult<Vec<(u64, Option<Vec<u8>>)>> {
    let ids = Column::new(import(ids, "ids")?, "the id column")?;
    let column = python_repr(text_column);
    let texts = Column::new(import(texts, "texts")?, &format!("column {column}"))?;
    if ids.len() != texts.len() {
        return Err(PyValueError::new_err(format!(
            "{} ids for {} texts",
            ids.len(),
            texts.len()
        )));
    }
    type Fingerprinted = Result<(u64, Option<Vec<u8>>), (usize, String)>;
    let results: Vec<Fingerprinted> = detached(py, || {
        (0..texts.len())
            .into_par_iter()
            .map(|i| {
                let fail = |what: String| (i, what);
                let bytes = texts
                    .bytes(i)
                    .ok_or_else(|| fail(format!("null {column}")))?;
                let text = std::str::from_utf8(&bytes)
                    .map_err(|e| fail(format!("{column} is not valid UTF-8 ({e})")))?;
                scheme.document(text).map_err(|e| fail(e.to_string()))
            })
            .collect()
    });
    results
        .into_iter()
        .map(|result| {
            result.map_err(|(i, what)| {
                PyValueError::new_err(format!("document {}: {what}", ids.show(i)))
            })
        })
        .collect()
}

/// The keep rule over a task's rows (simhashdb::partitioned::keep_rule): whole components of
/// the fingerprint graph, the documents to decide in the rule's order; rows marked in
/// `references` (with their `batches`, null as 0) are reference documents, never dropped.
/// Verified with `sketches` at `min_jaccard` when given, the GIL released. Returns the
/// dropped rows in row order: `(row, kept_row, distance, jaccard)` (indices into the rows;
/// jaccard null where not verified).
#[pyfunction]
#[pyo3(signature = (ids, fps, distance, sketches=None, min_jaccard=None, references=None, batches=None))]
#[allow(clippy::too_many_arguments)]
pub fn keep_rule(
    py: Python<'_>,
    ids: &Bound<'_, PyAny>,
    fps: &Bound<'_, PyAny>,
    distance: u8,
    sketches: Option<&Bound<'_, PyAny>>,
    min_jaccard: Option<f64>,
    references: Option<&Bound<'_, PyAny>>,
    batches: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Exported, Exported, Exported, Exported)> {
    guard(|| {
        let column = Column::new(import(ids, "ids")?, "the id column")?;
        let rows = column.len();
        let equal = |n: usize| {
            if n == rows {
                Ok(())
            } else {
                Err(PyValueError::new_err("columns of unequal lengths"))
            }
        };
        let mut ids = Vec::with_capacity(rows);
        for i in 0..rows {
            let bytes = column
                .bytes(i)
                .ok_or_else(|| PyValueError::new_err("a null id"))?;
            let id = String::from_utf8(bytes.into_owned())
                .map_err(|e| PyValueError::new_err(format!("an id that is not UTF-8: {e}")))?;
            ids.push(id);
        }
        let fps: Vec<u64> = int64s(&import(fps, "fps")?, "fps")?
            .into_iter()
            .collect::<Option<_>>()
            .ok_or_else(|| PyValueError::new_err("a null fingerprint"))?;
        equal(fps.len())?;
        let sketches: Vec<Option<Vec<u8>>> = match sketches {
            None => vec![None; rows],
            Some(sketches) => {
                let column = Column::new(import(sketches, "sketches")?, "the sketch column")?;
                equal(column.len())?;
                (0..rows)
                    .map(|i| column.bytes(i).map(|b| b.into_owned()))
                    .collect()
            }
        };
        let is_reference = match references {
            None => vec![false; rows],
            Some(r) => bools(&import(r, "references")?, "references")?,
        };
        equal(is_reference.len())?;
        let batches: Vec<u64> = match batches {
            None => vec![0; rows],
            Some(b) => int64s(&import(b, "batches")?, "batches")?
                .into_iter()
                .map(|b| b.unwrap_or(0))
                .collect(),
        };
        equal(batches.len())?;
        let decided = detached(py, || {
            let rows: Vec<Row<'_>> = (0..rows)
                .map(|i| Row {
                    id: &ids[i],
                    fingerprint: fps[i],
                    sketch: sketches[i].as_deref(),
                    reference: is_reference[i],
                    batch: batches[i],
                })
                .collect();
            let mut dropped = Vec::new();
            partitioned::keep_rule(&rows, distance, min_jaccard, |r, k, d, j| {
                dropped.push((r, k, d, j))
            })
            .map(|()| dropped)
        })
        .map_err(py_err)?;
        let row = Int64Array::from_iter_values(decided.iter().map(|d| d.0 as i64));
        let kept = Int64Array::from_iter_values(decided.iter().map(|d| d.1 as i64));
        let at = Int32Array::from_iter_values(decided.iter().map(|d| d.2 as i32));
        let jaccard = Float64Array::from(decided.iter().map(|d| d.3).collect::<Vec<_>>());
        Ok((export(row), export(kept), export(at), export(jaccard)))
    })
}

/// The new side's distinct fingerprints as permuted tables (simhashdb::partitioned::Against),
/// which a task matches its part of a reference corpus against.
#[pyclass(module = "simhashdb._native", frozen)]
pub struct NativeAgainst {
    inner: Against,
}

#[pymethods]
impl NativeAgainst {
    /// The tables of `fps` (int64 bits; nulls are not fingerprints) within `distance`, with
    /// `blocks` blocks (None: the audit's choice for that many).
    #[new]
    #[pyo3(signature = (fps, distance, blocks=None))]
    fn new(
        py: Python<'_>,
        fps: &Bound<'_, PyAny>,
        distance: u8,
        blocks: Option<u8>,
    ) -> PyResult<Self> {
        guard(|| {
            let fps: Vec<u64> = int64s(&import(fps, "fps")?, "fps")?
                .into_iter()
                .flatten()
                .collect();
            let inner = detached(py, || Against::new(&fps, distance, blocks)).map_err(py_err)?;
            Ok(NativeAgainst { inner })
        })
    }

    /// `(reference_fp, fp, distance)`: every pair of a fingerprint of `fps` (a reference
    /// part's; nulls skipped) and a new one within the distance, each once, the GIL released.
    fn pairs(
        &self,
        py: Python<'_>,
        fps: &Bound<'_, PyAny>,
    ) -> PyResult<(Exported, Exported, Exported)> {
        guard(|| {
            let fps: Vec<u64> = int64s(&import(fps, "fps")?, "fps")?
                .into_iter()
                .flatten()
                .collect();
            let (mut reference, mut fp, mut at) = (Vec::new(), Vec::new(), Vec::new());
            detached(py, || {
                self.inner.pairs(&fps, |r, f, d| {
                    reference.push(r as i64);
                    fp.push(f as i64);
                    at.push(d as i32);
                })
            })
            .map_err(py_err)?;
            Ok((
                export(Int64Array::from(reference)),
                export(Int64Array::from(fp)),
                export(Int32Array::from(at)),
            ))
        })
    }

    /// How many distinct new fingerprints it holds.
    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// The plan of a partitioned audit: `(blocks, range_bits)` for `fingerprints` documents at
/// `distance` and about `tasks` reduce tasks, with `blocks` when given (else the cheapest).
#[pyfunction]
#[pyo3(signature = (fingerprints, distance, tasks, blocks=None))]
pub fn plan(
    fingerprints: u64,
    distance: u8,
    tasks: usize,
    blocks: Option<u8>,
) -> PyResult<(u8, u8)> {
    guard(|| {
        let plan = match blocks {
            Some(blocks) => Plan::for_blocks(blocks, distance, tasks),
            None => Plan::for_size(fingerprints, distance, tasks),
        }
        .map_err(py_err)?;
        Ok((plan.blocks(), plan.range_bits()))
    })
}

/// One Spark partition's documents, cut into slices (simhashdb::partitioned::PartSlices), fed
/// a batch at a time.
#[pyclass(module = "simhashdb._native")]
pub struct PartSlicer {
    slices: Option<PartSlices>,
}

#[pymethods]
impl PartSlicer {
    #[new]
    fn new(blocks: u8, distance: u8, range_bits: u8) -> PyResult<Self> {
        let plan = Plan::new(blocks, distance, range_bits).map_err(py_err)?;
        Ok(PartSlicer {
            slices: Some(PartSlices::new(&plan)),
        })
    }

    /// Adds a batch of documents: ids, fingerprints (int64, null where the input's was null
    /// or not a fingerprint) and `missing` (true where the input's fingerprint was null), the
    /// columns named as the input names them. Checked here, so the job needs no pass of its
    /// own: a null id, a null or bad fingerprint each fail naming the document.
    #[pyo3(signature = (ids, fingerprints, missing, id_column, fingerprint_column))]
    fn add(
        &mut self,
        ids: &Bound<'_, PyAny>,
        fingerprints: &Bound<'_, PyAny>,
        missing: &Bound<'_, PyAny>,
        id_column: &str,
        fingerprint_column: &str,
    ) -> PyResult<()> {
        guard(|| {
            let slices = self
                .slices
                .as_mut()
                .ok_or_else(|| PyValueError::new_err("the part was already finished"))?;
            let ids = Column::new(
                import(ids, "ids")?,
                &format!("column {}", python_repr(id_column)),
            )?;
            let fps = int64s(&import(fingerprints, "fingerprints")?, "the fingerprints")?;
            let missing = bools(&import(missing, "missing")?, "missing")?;
            if fps.len() != ids.len() || missing.len() != ids.len() {
                return Err(PyValueError::new_err("columns of unequal lengths"));
            }
            ids.for_each(|i, id| {
                let id = id.ok_or_else(|| {
                    PyValueError::new_err(format!("a null {}", python_repr(id_column)))
                })?;
                let Some(fp) = fps[i] else {
                    let what = if missing[i] {
                        format!("null {}", python_repr(fingerprint_column))
                    } else {
                        "not a fingerprint".to_string()
                    };
                    return Err(PyValueError::new_err(format!(
                        "document {}: {what}",
                        ids.show(i)
                    )));
                };
                slices.push(fp, id);
                Ok(())
            })
        })
    }

    /// The part's slices: (slice numbers, their bytes), as Arrow arrays.
    fn finish(&mut self, py: Python<'_>) -> PyResult<(Exported, Exported)> {
        guard(|| {
            let slices = self
                .slices
                .take()
                .ok_or_else(|| PyValueError::new_err("the part was already finished"))?;
            let out = std::sync::Mutex::new(Vec::new());
            detached(py, || {
                slices.finish(|s, bytes| {
                    out.lock()
                        .expect("no emit panicked")
                        .push((s, bytes.to_vec()));
                    Ok(())
                })
            })
            .map_err(py_err)?;
            let mut out = out.into_inner().expect("no emit panicked");
            out.sort_unstable_by_key(|(s, _)| *s);
            let numbers = Int32Array::from_iter_values(out.iter().map(|(s, _)| *s as i32));
            let mut blobs =
                BinaryBuilder::with_capacity(out.len(), out.iter().map(|b| b.1.len()).sum());
            for (_, bytes) in &out {
                blobs.append_value(bytes);
            }
            Ok((export(numbers), export(blobs.finish())))
        })
    }
}

/// What the slices of one Spark partition hold (every row's slice number and bytes; rows of
/// one number may be anywhere among them), found slice by slice in parallel: rows (kind, a, b,
/// c) with kind 0 a fingerprint pair (a, b, distance c), kind 1 a fingerprint of two or more
/// documents (a, c documents), kind 2 an id hash of two or more documents (a).
#[pyfunction]
pub fn find_slices(
    py: Python<'_>,
    blocks: u8,
    distance: u8,
    range_bits: u8,
    numbers: &Bound<'_, PyAny>,
    blobs: &Bound<'_, PyAny>,
) -> PyResult<(Exported, Exported, Exported, Exported)> {
    guard(|| {
        let plan = Plan::new(blocks, distance, range_bits).map_err(py_err)?;
        let numbers = import(numbers, "slice numbers")?;
        let blobs = import(blobs, "slices")?;
        let numbers: Vec<u32> = match numbers.as_primitive_opt::<arrow_array::types::Int32Type>() {
            Some(n) if n.null_count() == 0 => n.values().iter().map(|&v| v as u32).collect(),
            _ => {
                return Err(PyValueError::new_err(
                    "slice numbers: expected int32, no nulls",
                ))
            }
        };
        let blobs = match blobs.as_binary_opt::<i32>() {
            Some(b) if b.null_count() == 0 => b,
            _ => return Err(PyValueError::new_err("slices: expected binary, no nulls")),
        };
        let found = detached(py, || {
            let mut rows: Vec<usize> = (0..numbers.len()).collect();
            rows.sort_unstable_by_key(|&r| numbers[r]);
            let groups: Vec<&[usize]> = rows.chunk_by(|&x, &y| numbers[x] == numbers[y]).collect();
            groups
                .par_iter()
                .map(|group| plan.find(numbers[group[0]], group.iter().map(|&r| blobs.value(r))))
                .collect::<simhashdb::Result<Vec<_>>>()
        })
        .map_err(py_err)?;
        let (mut kind, mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for f in found {
            for p in f.pairs {
                kind.push(0i8);
                a.push(p.a as i64);
                b.push(p.b as i64);
                c.push(i64::from(p.distance));
            }
            for (fp, documents) in f.copies {
                kind.push(1);
                a.push(fp as i64);
                b.push(0);
                c.push(documents as i64);
            }
            for hash in f.repeated_ids {
                kind.push(2);
                a.push(hash as i64);
                b.push(0);
                c.push(0);
            }
        }
        Ok((
            export(Int8Array::from(kind)),
            export(Int64Array::from(a)),
            export(Int64Array::from(b)),
            export(Int64Array::from(c)),
        ))
    })
}

/// The hash of each id that id slices carry (simhashdb::partitioned::PartSlices::id_hash), as
/// int64: for finding the documents of a repeated hash.
#[pyfunction]
pub fn id_hashes(ids: &Bound<'_, PyAny>) -> PyResult<Exported> {
    guard(|| {
        let ids = Column::new(import(ids, "ids")?, "the id column")?;
        let hashes: Vec<Option<i64>> = (0..ids.len())
            .map(|i| ids.bytes(i).map(|b| PartSlices::id_hash(&b) as i64))
            .collect();
        Ok(export(Int64Array::from(hashes)))
    })
}

/// The first round of turning fingerprint pairs into document pairs, for one Spark partition
/// (simhashdb::partitioned::Router): fed rows (kind, key, other, distance, id) where kind 0 is
/// a document (key its fingerprint), 1 a pair's end at key, 2 a fingerprint whose copies pair.
#[pyclass(module = "simhashdb._native")]
pub struct NativeRouter {
    router: Option<Router>,
}

#[pymethods]
impl NativeRouter {
    /// A router cutting documents into chunks of `chunk_rows`, given the fingerprints with
    /// copies and their documents.
    #[new]
    fn new(
        chunk_rows: usize,
        fingerprints: &Bound<'_, PyAny>,
        documents: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        guard(|| {
            let fps = int64s(&import(fingerprints, "fingerprints")?, "fingerprints")?;
            let docs = int64s(&import(documents, "documents")?, "documents")?;
            let copies = fps
                .into_iter()
                .zip(docs)
                .filter_map(|(f, d)| Some((f?, d?)));
            Ok(NativeRouter {
                router: Some(Router::new(chunk_rows, copies)),
            })
        })
    }

    /// Adds a batch of rows.
    fn add(
        &mut self,
        kind: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        other: &Bound<'_, PyAny>,
        distance: &Bound<'_, PyAny>,
        id: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        guard(|| {
            let router = self
                .router
                .as_mut()
                .ok_or_else(|| PyValueError::new_err("the router was already finished"))?;
            let kind = import(kind, "kind")?;
            let kind = kind
                .as_primitive_opt::<arrow_array::types::Int8Type>()
                .ok_or_else(|| PyValueError::new_err("kind: expected int8"))?;
            let key = int64s(&import(key, "key")?, "key")?;
            let other = int64s(&import(other, "other")?, "other")?;
            let distance = import(distance, "distance")?;
            let distance = distance
                .as_primitive_opt::<arrow_array::types::Int32Type>()
                .ok_or_else(|| PyValueError::new_err("distance: expected int32"))?;
            let ids = Column::new(import(id, "id")?, "id")?;
            if [key.len(), kind.len(), other.len(), distance.len()]
                .iter()
                .any(|&n| n != ids.len())
            {
                return Err(PyValueError::new_err("columns of unequal lengths"));
            }
            ids.for_each(|r, id| {
                let key = key[r].ok_or_else(|| PyValueError::new_err("a row without a key"))?;
                match kind.value(r) {
                    0 => {
                        let id = id.ok_or_else(|| PyValueError::new_err("a null id"))?;
                        let id = std::str::from_utf8(id)
                            .map_err(|_| PyValueError::new_err("an id that is not UTF-8"))?;
                        router.add_document(key, id);
                    }
                    1 => {
                        let other = other[r]
                            .ok_or_else(|| PyValueError::new_err("an end without its other"))?;
                        router.add_end(key, other, distance.value(r) as u32);
                    }
                    2 => router.add_copies(key),
                    k => return Err(PyValueError::new_err(format!("row kind {k}"))),
                }
                Ok(())
            })
        })
    }

    /// The halves, as Arrow arrays (a, b, i, j, of_b, ids, distance).
    fn finish(&mut self, py: Python<'_>) -> PyResult<HalfArrays> {
        guard(|| {
            let router = self
                .router
                .take()
                .ok_or_else(|| PyValueError::new_err("the router was already finished"))?;
            // The columns are built as the halves come: no copy of them is held.
            let mut columns = HalfColumns::default();
            detached(py, || {
                router.finish(|h| {
                    columns.push(h);
                    Ok(())
                })
            })
            .map_err(py_err)?;
            Ok(columns.export())
        })
    }
}

/// Halves as Arrow arrays: a, b, i, j, of_b, ids, distance.
type HalfArrays = (
    Exported,
    Exported,
    Exported,
    Exported,
    Exported,
    Exported,
    Exported,
);

/// Halves as Arrow columns (a, b, i, j, of_b, ids, distance), built one half at a time.
#[derive(Default)]
struct HalfColumns {
    a: Vec<i64>,
    b: Vec<i64>,
    i: Vec<i32>,
    j: Vec<i32>,
    of_b: Vec<bool>,
    ids: ListBuilder<StringBuilder>,
    distance: Vec<i32>,
}

impl HalfColumns {
    fn push(&mut self, h: &Half) {
        self.a.push(h.a as i64);
        self.b.push(h.b as i64);
        self.i.push(h.i as i32);
        self.j.push(h.j as i32);
        self.of_b.push(h.of_b);
        for id in &h.ids {
            self.ids.values().append_value(id);
        }
        self.ids.append(true);
        self.distance.push(h.distance as i32);
    }

    fn export(mut self) -> HalfArrays {
        (
            export(Int64Array::from(self.a)),
            export(Int64Array::from(self.b)),
            export(Int32Array::from(self.i)),
            export(Int32Array::from(self.j)),
            export(BooleanArray::from(self.of_b)),
            export(self.ids.finish()),
            export(Int32Array::from(self.distance)),
        )
    }
}

/// The second round (simhashdb::partitioned::Blocks): one Spark partition's halves, their
/// document pairs handed out a batch at a time.
#[pyclass(module = "simhashdb._native")]
pub struct NativeBlocks {
    blocks: Blocks,
}

#[pymethods]
impl NativeBlocks {
    #[new]
    fn new() -> Self {
        NativeBlocks {
            blocks: Blocks::new(),
        }
    }

    /// Adds a batch of halves (a, b, i, j, of_b, ids, distance).
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        i: &Bound<'_, PyAny>,
        j: &Bound<'_, PyAny>,
        of_b: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyAny>,
        distance: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        guard(|| {
            let a = int64s(&import(a, "a")?, "a")?;
            let b = int64s(&import(b, "b")?, "b")?;
            let int32 = |o: &Bound<'_, PyAny>, what: &str| -> PyResult<Vec<i32>> {
                let array = import(o, what)?;
                Ok(array
                    .as_primitive_opt::<arrow_array::types::Int32Type>()
                    .ok_or_else(|| PyValueError::new_err(format!("{what}: expected int32")))?
                    .values()
                    .to_vec())
            };
            let (i, j, distance) = (int32(i, "i")?, int32(j, "j")?, int32(distance, "distance")?);
            let of_b = bools(&import(of_b, "of_b")?, "of_b")?;
            let ids = import(ids, "ids")?;
            let ids = ids
                .as_list_opt::<i32>()
                .ok_or_else(|| PyValueError::new_err("ids: expected lists of strings"))?;
            if [
                b.len(),
                i.len(),
                j.len(),
                of_b.len(),
                ids.len(),
                distance.len(),
            ]
            .iter()
            .any(|&n| n != a.len())
            {
                return Err(PyValueError::new_err("columns of unequal lengths"));
            }
            for r in 0..a.len() {
                let list = ids.value(r);
                let list = list
                    .as_string_opt::<i32>()
                    .ok_or_else(|| PyValueError::new_err("ids: expected lists of strings"))?;
                let (Some(a), Some(b)) = (a[r], b[r]) else {
                    return Err(PyValueError::new_err("a half without its fingerprints"));
                };
                self.blocks.push(Half {
                    a,
                    b,
                    i: i[r] as u32,
                    j: j[r] as u32,
                    of_b: of_b[r],
                    ids: list.iter().flatten().map(str::to_string).collect(),
                    distance: distance[r] as u32,
                });
            }
            Ok(())
        })
    }

    /// The next document pairs, at most `most`, as (id_a, id_b, distance); None when done.
    fn next(
        &mut self,
        py: Python<'_>,
        most: usize,
    ) -> PyResult<Option<(Exported, Exported, Exported)>> {
        guard(|| {
            let (mut x, mut y, mut d) = (StringBuilder::new(), StringBuilder::new(), Vec::new());
            let given = detached(py, || {
                self.blocks.next_pairs(most, |a, b, distance| {
                    x.append_value(a);
                    y.append_value(b);
                    d.push(distance as i32);
                })
            })
            .map_err(py_err)?;
            if given == 0 {
                return Ok(None);
            }
            Ok(Some((
                export(x.finish()),
                export(y.finish()),
                export(Int32Array::from(d)),
            )))
        })
    }
}

/// The connected components of a fingerprint graph (edges a[i]-b[i], int64 bits): each node
/// with the least node of its component (both as int64 bits, by unsigned order).
#[pyfunction]
pub fn components(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<(Exported, Exported)> {
    guard(|| {
        let a = int64s(&import(a, "a")?, "a")?;
        let b = int64s(&import(b, "b")?, "b")?;
        let edges: Vec<(u64, u64)> = a
            .into_iter()
            .zip(b)
            .map(|(x, y)| match (x, y) {
                (Some(x), Some(y)) => Ok((x, y)),
                _ => Err(PyValueError::new_err("an edge with a null end")),
            })
            .collect::<PyResult<_>>()?;
        let labels = detached(py, || graph_components(&edges));
        let nodes = Int64Array::from_iter_values(labels.iter().map(|&(n, _)| n as i64));
        let least = Int64Array::from_iter_values(labels.iter().map(|&(_, l)| l as i64));
        Ok((export(nodes), export(least)))
    })
}

/// The connected components of a graph of document ids (edges a[i]-b[i], strings): each id
/// with the least id (by bytes) of its component.
#[pyfunction]
pub fn id_components(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<(Exported, Exported)> {
    guard(|| {
        let a = Column::new(import(a, "a")?, "id_a")?;
        let b = Column::new(import(b, "b")?, "id_b")?;
        if a.len() != b.len() {
            return Err(PyValueError::new_err("columns of unequal lengths"));
        }
        let mut edges: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(a.len());
        for i in 0..a.len() {
            match (a.bytes(i), b.bytes(i)) {
                (Some(x), Some(y)) => edges.push((x.into_owned(), y.into_owned())),
                _ => return Err(PyValueError::new_err("a pair with a null id")),
            }
        }
        let labels = detached(py, || graph_components(&edges));
        let mut ids = BinaryBuilder::new();
        let mut least = BinaryBuilder::new();
        for (id, l) in &labels {
            ids.append_value(id);
            least.append_value(l);
        }
        let utf8 = |b: arrow_array::BinaryArray| {
            arrow_array::StringArray::try_from_binary(b)
                .map_err(|e| PyValueError::new_err(format!("an id that is not UTF-8: {e}")))
        };
        Ok((export(utf8(ids.finish())?), export(utf8(least.finish())?)))
    })
}
