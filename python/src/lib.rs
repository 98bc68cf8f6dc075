//! `simhashdb._native`: the engine as Python calls it.
//!
//! Everything here converts: Python values in, one library call with the GIL released, Python
//! values out. The package's Python modules shape the API users see (numpy arrays, generators,
//! simhash-py's names); fingerprint arrays cross this boundary as little-endian `u64` bytes so
//! the extension needs no numpy at build time and one abi3 wheel serves every CPython >= 3.9.
//!
//! Every entry point runs under [`guard`]: a Rust panic becomes a `RuntimeError`, never a
//! `pyo3_runtime.PanicException` (which is not an `Exception` and escapes `except Exception`).

mod arrow;
mod errors;
mod partitioned;
mod store;
mod work;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PySet};
use rayon::prelude::*;
use simhashdb::{seomoz, Scheme};

use crate::errors::{guard, py_err, CorruptionError, StoreLockedError};
use crate::work::detached;

/// The fingerprints of `data`: little-endian `u64`s, 8 bytes each.
pub(crate) fn u64s_from_bytes(data: &[u8], what: &str) -> PyResult<Vec<u64>> {
    if !data.len().is_multiple_of(8) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{what}: {} bytes is not a whole number of 8-byte fingerprints",
            data.len()
        )));
    }
    Ok(data
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect())
}

/// `values` as little-endian bytes, for `numpy.frombuffer`.
pub(crate) fn bytes_of<'py, T: Copy>(
    py: Python<'py>,
    values: &[T],
    to_le: impl Fn(T) -> [u8; 8],
) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(values.len() * 8);
    for &v in values {
        out.extend_from_slice(&to_le(v));
    }
    PyBytes::new(py, &out)
}

/// Every item of `iterable` as a `u64`, as simhash-py converts its arguments: a negative or too
/// large integer raises OverflowError, anything else not an integer TypeError. `packed`: the
/// values come as little-endian `u64` bytes instead (the package's numpy fast path).
fn u64s_of(iterable: &Bound<'_, PyAny>, packed: bool) -> PyResult<Vec<u64>> {
    if packed {
        return u64s_from_bytes(iterable.cast::<PyBytes>()?.as_bytes(), "hashes");
    }
    // `len()` is only a hint: a lazy sequence may claim more than memory holds.
    let mut out = Vec::with_capacity(iterable.len().unwrap_or(0).min(1 << 20));
    for item in iterable.try_iter()? {
        out.push(item?.extract::<u64>()?);
    }
    Ok(out)
}

/// The scheme named `name` (`words`, `chars`, `seomoz`, or a stored name such as
/// `words-2-minhash`) with `shingle` and `weight`; None and no parts is the default scheme.
pub(crate) fn scheme_of(
    name: Option<&str>,
    shingle: Option<u8>,
    weight: Option<&str>,
) -> PyResult<Scheme> {
    Scheme::parse(name, shingle, weight)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

/// Fingerprints written as text, read as one input as every client reads them (the
/// library's one parser), in `format`: auto (hex or decimal decided from all of them), hex or
/// decimal. Returns the fingerprints and a warning when either notation could have written
/// them.
#[pyfunction]
#[pyo3(signature = (texts, format="auto"))]
fn parse_fingerprints(texts: Vec<String>, format: &str) -> PyResult<(Vec<u64>, Option<String>)> {
    guard(|| {
        let format = simhashdb::FingerprintFormat::parse(format).map_err(crate::errors::py_err)?;
        format
            .read_many(texts.iter().map(String::as_str))
            .map_err(crate::errors::py_err)
    })
}

/// simhash-py's `unsigned_hash`: the first 8 bytes of MD5(data), big-endian.
#[pyfunction]
fn unsigned_hash(data: &[u8]) -> PyResult<u64> {
    guard(|| Ok(seomoz::unsigned_hash(data)))
}

/// simhash-py's `compute`: the bit vote over an iterable of 64-bit hashes.
#[pyfunction]
#[pyo3(signature = (hashes, packed=false))]
fn compute(py: Python<'_>, hashes: &Bound<'_, PyAny>, packed: bool) -> PyResult<u64> {
    guard(|| {
        let hashes = u64s_of(hashes, packed)?;
        Ok(detached(py, || seomoz::compute(&hashes)))
    })
}

/// The number of bits in which `a` and `b` differ.
#[pyfunction]
fn num_differing_bits(a: u64, b: u64) -> u64 {
    u64::from((a ^ b).count_ones())
}

/// simhash-cpp's `find_all`: (smaller, larger) pairs of distinct values within
/// `different_bits`, sorted.
#[pyfunction]
#[pyo3(signature = (hashes, number_of_blocks, different_bits, packed=false))]
fn find_all<'py>(
    py: Python<'py>,
    hashes: &Bound<'py, PyAny>,
    number_of_blocks: usize,
    different_bits: usize,
    packed: bool,
) -> PyResult<Bound<'py, PyList>> {
    guard(|| {
        let pairs = pairs_within(py, hashes, packed, number_of_blocks, different_bits)?;
        PyList::new(py, pairs.iter().map(|p| (p.a, p.b)))
    })
}

/// simhash-cpp's `find_clusters`: the groups of values the pairs connect, as sets, ordered by
/// their smallest value.
#[pyfunction]
#[pyo3(signature = (hashes, number_of_blocks, different_bits, packed=false))]
fn find_clusters<'py>(
    py: Python<'py>,
    hashes: &Bound<'py, PyAny>,
    number_of_blocks: usize,
    different_bits: usize,
    packed: bool,
) -> PyResult<Bound<'py, PyList>> {
    guard(|| {
        let hashes = u64s_of(hashes, packed)?;
        let clusters = detached(py, || {
            seomoz::find_clusters(&hashes, number_of_blocks, different_bits)
        })
        .map_err(py_err)?;
        let sets = clusters
            .iter()
            .map(|c| PySet::new(py, c))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, sets)
    })
}

/// [`seomoz::find_all`] of the values of `hashes`, with the GIL released.
fn pairs_within(
    py: Python<'_>,
    hashes: &Bound<'_, PyAny>,
    packed: bool,
    number_of_blocks: usize,
    different_bits: usize,
) -> PyResult<Vec<simhashdb::Pair<u64>>> {
    let hashes = u64s_of(hashes, packed)?;
    detached(py, || {
        seomoz::find_all(&hashes, number_of_blocks, different_bits)
    })
    .map_err(py_err)
}

/// The fingerprint of `text` under a scheme, as `simhashdb fingerprint` gives it.
#[pyfunction]
#[pyo3(signature = (text, scheme=None, shingle=None, weight=None))]
fn fingerprint(
    py: Python<'_>,
    text: &str,
    scheme: Option<&str>,
    shingle: Option<u8>,
    weight: Option<&str>,
) -> PyResult<u64> {
    guard(|| {
        let scheme = scheme_of(scheme, shingle, weight)?;
        detached(py, || scheme.fingerprint_document(text))
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    })
}

/// The fingerprints of `texts` (a list of str), computed in parallel with the GIL released,
/// as little-endian bytes.
#[pyfunction]
#[pyo3(signature = (texts, scheme=None, shingle=None, weight=None))]
fn fingerprint_many<'py>(
    py: Python<'py>,
    texts: Vec<String>,
    scheme: Option<&str>,
    shingle: Option<u8>,
    weight: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    guard(|| {
        let scheme = scheme_of(scheme, shingle, weight)?;
        let fingerprints = detached(py, || fingerprint_all(&scheme, &texts, "texts", 0))?;
        Ok(bytes_of(py, &fingerprints, u64::to_le_bytes))
    })
}

/// The fingerprints of `texts`, in parallel; an error names the first text that has none as
/// `what[first + i]`.
pub(crate) fn fingerprint_all(
    scheme: &Scheme,
    texts: &[String],
    what: &str,
    first: usize,
) -> PyResult<Vec<u64>> {
    texts
        .par_iter()
        .enumerate()
        .map(|(i, text)| {
            scheme.fingerprint_document(text).map_err(|e| {
                pyo3::exceptions::PyValueError::new_err(format!("{what}[{}]: {e}", first + i))
            })
        })
        .collect()
}

/// The fingerprints and sketches of `texts` (as [`Scheme::document`] makes them: sketches
/// only for a scheme that sketches), in parallel; an error names `what[first + i]`.
pub(crate) fn digest_all(
    scheme: &Scheme,
    texts: &[String],
    what: &str,
    first: usize,
) -> PyResult<Vec<(u64, Option<Vec<u8>>)>> {
    texts
        .par_iter()
        .enumerate()
        .map(|(i, text)| {
            scheme.document(text).map_err(|e| {
                pyo3::exceptions::PyValueError::new_err(format!("{what}[{}]: {e}", first + i))
            })
        })
        .collect()
}

/// The scheme's name as stores record it (`words-2-minhash`, `seomoz`...).
#[pyfunction]
#[pyo3(signature = (scheme=None, shingle=None, weight=None))]
fn scheme_name(
    scheme: Option<&str>,
    shingle: Option<u8>,
    weight: Option<&str>,
) -> PyResult<String> {
    guard(|| Ok(scheme_of(scheme, shingle, weight)?.name()))
}

/// `simhashdb tune`: every scheme and distance measured on a corpus, as the JSON lines of
/// `tune --json` (Python joins them into one dict), with the GIL released. Draws the plot to
/// `plot` when given.
#[pyfunction]
#[pyo3(signature = (corpus, min_jaccard, sample, seed, schemes, max_distance, expected_size, gold, plot, format, id_field, text_field, skip_invalid, sketch_bytes))]
#[allow(clippy::too_many_arguments)]
fn tune(
    py: Python<'_>,
    corpus: Vec<std::path::PathBuf>,
    min_jaccard: f64,
    sample: Option<usize>,
    seed: u64,
    schemes: Option<Vec<String>>,
    max_distance: u8,
    expected_size: Option<u64>,
    gold: Option<std::path::PathBuf>,
    plot: Option<std::path::PathBuf>,
    format: Option<&str>,
    id_field: String,
    text_field: String,
    skip_invalid: bool,
    sketch_bytes: Option<Vec<u16>>,
) -> PyResult<Vec<String>> {
    use simhashdb::tune::{TuneOptions, Tuning};
    guard(|| {
        let schemes = match schemes {
            None => TuneOptions::candidate_schemes(),
            Some(names) => names
                .iter()
                .map(|n| Scheme::from_name(n))
                .collect::<simhashdb::Result<_>>()
                .map_err(py_err)?,
        };
        if let Some(plot) = &plot {
            Tuning::check_plot_path(plot).map_err(py_err)?;
        }
        let options = TuneOptions {
            min_jaccard,
            sample,
            seed,
            schemes,
            max_distance,
            expected_size,
            gold,
            sketch_bytes: sketch_bytes
                .unwrap_or_else(|| TuneOptions::DEFAULT_SKETCH_BYTES.to_vec()),
            read: simhashdb::ReadOptions {
                format: format
                    .map(simhashdb::InputFormat::parse)
                    .transpose()
                    .map_err(py_err)?,
                id_field,
                text_field,
                skip_invalid,
                ..simhashdb::ReadOptions::default()
            },
        };
        detached(py, || {
            let tuning = simhashdb::tune::Tuning::measure(&corpus, &options, &())?;
            if let Some(plot) = &plot {
                tuning.write_plot(plot)?;
            }
            Ok(tuning.json_lines())
        })
        .map_err(py_err)
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    work::init();
    let py = m.py();
    m.add("CorruptionError", py.get_type::<CorruptionError>())?;
    m.add("StoreLockedError", py.get_type::<StoreLockedError>())?;
    m.add("FORMAT_VERSION", simhashdb::Store::FORMAT_VERSION)?;
    m.add(
        "DEFAULT_EXPECTED_SIZE",
        simhashdb::Settings::DEFAULT_EXPECTED_SIZE,
    )?;
    m.add_function(wrap_pyfunction!(parse_fingerprints, m)?)?;
    m.add_function(wrap_pyfunction!(unsigned_hash, m)?)?;
    m.add_function(wrap_pyfunction!(compute, m)?)?;
    m.add_function(wrap_pyfunction!(num_differing_bits, m)?)?;
    m.add_function(wrap_pyfunction!(find_all, m)?)?;
    m.add_function(wrap_pyfunction!(find_clusters, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint_many, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_name, m)?)?;
    m.add_function(wrap_pyfunction!(tune, m)?)?;
    m.add_function(wrap_pyfunction!(partitioned::fingerprint_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(partitioned::fingerprint_sketch_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(partitioned::keep_rule, m)?)?;
    m.add_class::<partitioned::NativeAgainst>()?;
    m.add_function(wrap_pyfunction!(partitioned::plan, m)?)?;
    m.add_function(wrap_pyfunction!(partitioned::find_slices, m)?)?;
    m.add_function(wrap_pyfunction!(partitioned::id_hashes, m)?)?;
    m.add_function(wrap_pyfunction!(partitioned::components, m)?)?;
    m.add_function(wrap_pyfunction!(partitioned::id_components, m)?)?;
    m.add_class::<partitioned::PartSlicer>()?;
    m.add_class::<partitioned::NativeRouter>()?;
    m.add_class::<partitioned::NativeBlocks>()?;
    m.add_class::<arrow::Exported>()?;
    m.add_class::<store::NativeStore>()?;
    m.add_class::<store::NativePairs>()?;
    Ok(())
}
