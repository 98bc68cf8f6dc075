//! The Spark jobs' work inside each task, on Arrow columns: fingerprinting texts, cutting a
//! partition into slices, finding what slices hold, expanding fingerprint pairs into document
//! pairs, and the components of a fingerprint graph (simhashdb::partitioned does the work;
//! this module only converts).

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, Int32Array, Int64Array, Int8Array, ListArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use simhashdb::partitioned::{components as graph_components, document_pairs, PartSlices, Plan};
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
        let results: Vec<Result<u64, (usize, String)>> = detached(py, || {
            (0..texts.len())
                .into_par_iter()
                .map(|i| {
                    let fail = |what: String| (i, what);
                    let bytes = texts
                        .bytes(i)
                        .ok_or_else(|| fail(format!("null {column}")))?;
                    let text = std::str::from_utf8(&bytes)
                        .map_err(|e| fail(format!("{column} is not valid UTF-8 ({e})")))?;
                    scheme
                        .fingerprint_document(text)
                        .map_err(|e| fail(e.to_string()))
                })
                .collect()
        });
        let mut out = Vec::with_capacity(results.len());
        for result in results {
            match result {
                Ok(fp) => out.push(fp as i64),
                Err((i, what)) => {
                    return Err(PyValueError::new_err(format!(
                        "document {}: {what}",
                        ids.show(i)
                    )))
                }
            }
        }
        Ok(export(Int64Array::from(out)))
    })
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
            for (i, fp) in fps.into_iter().enumerate() {
                let id = ids.bytes(i).ok_or_else(|| {
                    PyValueError::new_err(format!("a null {}", python_repr(id_column)))
                })?;
                let Some(fp) = fp else {
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
                slices.push(fp, &id);
            }
            Ok(())
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

/// The document pairs of a batch of work rows, at most `most` pairs per call: row i pairs the
/// ids of `ids_a[i]` with those of `ids_b[i]` at `distances[i]`, or with `ids_b[i]` null the
/// ids of `ids_a[i]` among themselves. Resumable: give back the position it returns.
#[pyclass(module = "simhashdb._native")]
pub struct PairExpander {
    ids_a: ListArray,
    ids_b: ListArray,
    distances: Vec<i32>,
    /// The next row, and where within it (the pair index in its expansion order).
    row: usize,
    skip: u64,
}

#[pymethods]
impl PairExpander {
    #[new]
    fn new(
        ids_a: &Bound<'_, PyAny>,
        ids_b: &Bound<'_, PyAny>,
        distances: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        guard(|| {
            let list = |o: &Bound<'_, PyAny>, what: &str| -> PyResult<ListArray> {
                let array = import(o, what)?;
                let list = array
                    .as_list_opt::<i32>()
                    .ok_or_else(|| PyValueError::new_err(format!("{what}: expected a list")))?;
                match list.values().data_type() {
                    arrow_schema::DataType::Utf8 => Ok(list.clone()),
                    other => Err(PyValueError::new_err(format!(
                        "{what}: expected lists of strings, got lists of {other}"
                    ))),
                }
            };
            let ids_a = list(ids_a, "ids_a")?;
            let ids_b = list(ids_b, "ids_b")?;
            let distances = import(distances, "distances")?;
            let distances: Vec<i32> = distances
                .as_primitive_opt::<arrow_array::types::Int32Type>()
                .ok_or_else(|| PyValueError::new_err("distances: expected int32"))?
                .values()
                .to_vec();
            if ids_a.len() != ids_b.len() || ids_a.len() != distances.len() {
                return Err(PyValueError::new_err("work rows of unequal lengths"));
            }
            Ok(PairExpander {
                ids_a,
                ids_b,
                distances,
                row: 0,
                skip: 0,
            })
        })
    }

    /// The next pairs, at most `most`, as (id_a, id_b, distance) arrays; None when done.
    fn next(
        &mut self,
        py: Python<'_>,
        most: usize,
    ) -> PyResult<Option<(Exported, Exported, Exported)>> {
        guard(|| {
            if self.row >= self.ids_a.len() {
                return Ok(None);
            }
            let (mut a, mut b, mut d) = (StringBuilder::new(), StringBuilder::new(), Vec::new());
            detached(py, || {
                while self.row < self.ids_a.len() && d.len() < most {
                    let (xs, ys) = (self.ids_a.value(self.row), self.ids_b.value(self.row));
                    let xs: Vec<&str> = xs.as_string::<i32>().iter().flatten().collect();
                    let ys: Option<Vec<&str>> = (!self.ids_b.is_null(self.row))
                        .then(|| ys.as_string::<i32>().iter().flatten().collect());
                    let distance = self.distances[self.row] as u32;
                    let mut index = 0u64;
                    let skip = self.skip;
                    let finished = document_pairs(&xs, ys.as_deref(), distance, |x, y, dist| {
                        if index >= skip {
                            if d.len() == most {
                                return Err(());
                            }
                            a.append_value(x);
                            b.append_value(y);
                            d.push(dist as i32);
                        }
                        index += 1;
                        Ok(())
                    });
                    match finished {
                        Ok(()) => {
                            self.row += 1;
                            self.skip = 0;
                        }
                        Err(()) => self.skip = index,
                    }
                }
            });
            Ok(Some((
                export(a.finish()),
                export(b.finish()),
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
