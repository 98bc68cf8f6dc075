//! `tune`: the scheme and distance that find a corpus's near-duplicates best, measured.
//!
//! For every candidate scheme and every distance k = 0..=max, the pairs of the corpus (or of a
//! random sample of it) whose fingerprints are within k bits are scored against the truth, the
//! pairs whose word 3-shingle Jaccard similarity is at least J: precision, recall and F1, from
//! fingerprints alone, after verification by exact Jaccard (an audit's `--verify-text`), and
//! after verification by sketches of each size (an audit's `--min-jaccard` on a store made
//! with `init --sketch`), at the sketch threshold that does best near J.
//! The truth is the user's gold pairs, or the exact join of the texts
//! (`similar_pairs`, in the similarity wing): every pair at J or more, none sampled. Recall comes with a 95%
//! interval.
//!
//! What a sample can miss: it holds a pair only when it holds both documents, so a uniform
//! sample of n of N documents keeps about (n/N)^2 of the pairs, and kinds of near-duplicates
//! rarer than that may be absent from it; a wide interval says so.

#[cfg(feature = "plot")]
mod plot;
mod recommend;
mod report;
mod sample;
mod scores;
mod truth;

use std::collections::HashSet;
use std::path::PathBuf;

use rayon::prelude::*;

use recommend::Choice;
use scores::{SchemeScores, Score};

use recommend::recommend;
use sample::Sample;
use scores::{score_scheme, Sketches, Thresholds, Truth};
use truth::{read_gold, IndexPair};

use crate::error::{Error, Result, Setting};
use crate::io::input::ReadOptions;
use crate::similarity::fingerprint::{Features, Scheme, Weighting};
use crate::similarity::jaccard::shingle_set;
use crate::similarity::similarity_join::similar_pairs;
use crate::similarity::sketch::{self, SketchTable};
use crate::sys::progress::{Phase, Progress};

/// The largest distance [`Tuning::measure`] scores.
const MAX_DISTANCE: u8 = 24;

/// What [`Tuning::measure`] measures and how.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// J: pairs at this Jaccard similarity or more are near-duplicates; in (0, 1].
    pub min_jaccard: f64,
    /// Measure on this many documents drawn at random, instead of all.
    pub sample: Option<usize>,
    /// The seed of the sample.
    pub seed: u64,
    /// The schemes to score ([`TuneOptions::candidate_schemes`] by default).
    pub schemes: Vec<Scheme>,
    /// Score distances 0..=max_distance.
    pub max_distance: u8,
    /// The store size the recommended settings are planned for (the corpus's size if None).
    pub expected_size: Option<u64>,
    /// The gold pairs: lines `ID_A ID_B [JACCARD [INTER UNION]]` (tabs or spaces), true when
    /// their exact INTER / UNION (else JACCARD) reaches `min_jaccard`, or always when a line
    /// has two ids. None computes the truth from the texts.
    pub gold: Option<PathBuf>,
    /// How the corpus is read (its format, id and text fields).
    pub read: ReadOptions,
    /// The sketch sizes (bytes) to score verification by sketches at; empty scores none.
    pub sketch_bytes: Vec<u16>,
}

impl TuneOptions {
    /// The Jaccard similarity at which a pair is a near-duplicate unless told otherwise.
    pub const DEFAULT_MIN_JACCARD: f64 = 0.8;
    /// The largest distance scored unless told otherwise.
    pub const DEFAULT_MAX_DISTANCE: u8 = 12;
    /// The largest distance [`Tuning::measure`] scores.
    pub const MAX_DISTANCE: u8 = MAX_DISTANCE;
    /// The sketch sizes scored unless told otherwise: each `init --sketch-bytes` from the
    /// least to the most, doubling.
    pub const DEFAULT_SKETCH_BYTES: [u16; 5] = [64, 128, 256, 512, 1024];

    /// The schemes `tune` scores by default: word shingles of 1 to 5 words and character
    /// n-grams of 3 to 6 characters, each as 1-bit minhash, set vote and count vote, and
    /// seomoz.
    pub fn candidate_schemes() -> Vec<Scheme> {
        let weightings = [Weighting::MinHash, Weighting::Set, Weighting::Count];
        let features = (1..=5)
            .map(Features::Words)
            .chain((3..=6).map(Features::Chars));
        let mut schemes: Vec<Scheme> = features
            .flat_map(|features| weightings.map(|weighting| Scheme::shingles(features, weighting)))
            .collect();
        schemes.push(Scheme::SEOMOZ);
        schemes
    }
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            min_jaccard: TuneOptions::DEFAULT_MIN_JACCARD,
            sample: None,
            seed: 1,
            schemes: TuneOptions::candidate_schemes(),
            max_distance: TuneOptions::DEFAULT_MAX_DISTANCE,
            expected_size: None,
            gold: None,
            read: ReadOptions::default(),
            sketch_bytes: TuneOptions::DEFAULT_SKETCH_BYTES.to_vec(),
        }
    }
}

/// Where the truth came from, and how it compares with the exact Jaccard of the texts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TruthSource {
    /// The exact Jaccard join of the texts.
    Exact,
    /// A gold file.
    Gold {
        /// The file.
        path: PathBuf,
        /// Gold pairs the texts' exact Jaccard also puts at J or more.
        agreed: u64,
        /// Gold pairs below J by the texts.
        gold_only: u64,
        /// Pairs at J or more by the texts that the gold file does not list.
        text_only: u64,
    },
}

/// What [`Tuning::measure`] measured, and what it recommends: a report, read as text
/// ([`Tuning::write_text`], what `simhashdb tune` prints), as JSON ([`Tuning::json_lines`], what
/// `tune --json` prints and Python's `simhashdb.tune` returns) or as a picture
/// ([`Tuning::write_plot`]).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use simhashdb::tune::{TuneOptions, Tuning};
/// use simhashdb::Scheme;
///
/// let corpus = dir.path().join("corpus.jsonl");
/// let text = "the store keeps every fingerprint of every page it has seen so far";
/// std::fs::write(&corpus, format!(
///     "{{\"id\": \"a\", \"text\": \"{text}\"}}\n\
///      {{\"id\": \"b\", \"text\": \"{text} today\"}}\n\
///      {{\"id\": \"c\", \"text\": \"a page about something else entirely, with other words\"}}\n"
/// )).unwrap();
/// let options = TuneOptions {
///     min_jaccard: 0.8,
///     schemes: vec![Scheme::from_name("words-1-minhash")?],
///     max_distance: 6,
///     sketch_bytes: vec![],
///     ..TuneOptions::default()
/// };
/// let tuning = Tuning::measure(&[corpus], &options, &())?;
/// let mut report = Vec::new();
/// tuning.write_text(&mut report).unwrap(); // what `simhashdb tune` prints
/// assert!(String::from_utf8(report).unwrap().contains("words-1-minhash"));
/// # Ok::<(), simhashdb::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Tuning {
    /// Distinct documents in the corpus.
    pub(crate) corpus_documents: u64,
    /// Documents measured on (all, or the sample).
    pub(crate) documents: u64,
    /// Documents left out for holding no letter or digit (with `skip_invalid`).
    pub(crate) skipped: u64,
    /// Whether `documents` are a sample of the corpus.
    pub(crate) sampled: bool,
    /// J.
    pub(crate) min_jaccard: f64,
    /// Where the truth came from.
    pub(crate) truth: TruthSource,
    /// True pairs among the documents measured on.
    pub(crate) true_pairs: u64,
    /// Every scheme's scores.
    pub(crate) schemes: Vec<SchemeScores>,
    /// Recommended for stores that keep no text: the pairs within k bits are the answer.
    pub(crate) fingerprints_only: Choice,
    /// The corpus's files, as given (the recommended audit re-reads them).
    pub(crate) inputs: Vec<PathBuf>,
    /// Recommended for audits that can re-read the text: candidates within k bits, verified
    /// by exact Jaccard.
    pub(crate) verified: Choice,
    /// Recommended for stores that keep sketches (no text at audit time): candidates within
    /// k bits, verified by sketches; None when no sketch size was measured.
    pub(crate) sketched: Option<Choice>,
}

impl Tuning {
    /// Measures every scheme of `options` at every distance on the corpus `inputs` (read
    /// as `audit --verify-text` reads a corpus) and recommends a setting for each use. Fails
    /// on a threshold outside (0, 1], an empty corpus or sample, a gold file naming ids the
    /// corpus does not hold, and a sample without one true pair.
    pub fn measure(
        inputs: &[PathBuf],
        options: &TuneOptions,
        progress: &dyn Progress,
    ) -> Result<Tuning> {
        tune(inputs, options, progress)
    }
}

/// [`Tuning::measure`].
fn tune(inputs: &[PathBuf], options: &TuneOptions, progress: &dyn Progress) -> Result<Tuning> {
    let t = options.min_jaccard;
    if !(t > 0.0 && t <= 1.0) {
        return Err(Error::settings(
            Setting::MinJaccard,
            format!("{t} is not in (0, 1]: a pair is a near-duplicate at J >= it"),
        ));
    }
    if options.sample == Some(0) {
        return Err(Error::input("a sample of 0 documents measures nothing"));
    }
    if options.max_distance > MAX_DISTANCE {
        return Err(Error::settings(
            Setting::Distance,
            format!(
                "{} is more than tune measures ({MAX_DISTANCE}): fingerprints that far apart \
                 are mostly unrelated",
                options.max_distance
            ),
        ));
    }
    if options.schemes.is_empty() {
        return Err(Error::input("no scheme to measure"));
    }
    for &bytes in &options.sketch_bytes {
        sketch::check_bytes(bytes)?;
    }
    let mut sample = {
        let _phase = Phase::start(progress, "reading the corpus", 0);
        Sample::read(inputs, &options.read, options.sample, options.seed, || {
            progress.advance(1)
        })?
    };
    let n = sample.ids.len();
    if n == 0 {
        let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::input(format!(
            "the corpus ({}) holds no document",
            names.join(", ")
        )));
    }

    // Every scheme's fingerprint of every document, its shingle set and its sketches; the
    // texts are dropped after (the sample keeps only the ids).
    let (sets, fingerprints, sketches) = {
        let _phase = Phase::start(progress, "fingerprinting", n as u64);
        let texts = std::mem::take(&mut sample.texts);
        /// A document's shingle set, fingerprint per scheme, and sketch per size.
        type Measured = (Vec<u64>, Vec<u64>, Vec<Vec<u8>>);
        let per_document: Vec<Measured> = texts
            .into_par_iter()
            .map(|text| {
                let fps = options
                    .schemes
                    .iter()
                    .map(|s| s.fingerprint(&text))
                    .collect();
                let sketches = Scheme::sketches(&text, &options.sketch_bytes);
                progress.advance(1);
                (shingle_set(&text), fps, sketches)
            })
            .collect();
        let mut by_scheme = vec![Vec::with_capacity(n); options.schemes.len()];
        let mut sketches: Vec<Sketches> = options
            .sketch_bytes
            .iter()
            .map(|&bytes| Sketches {
                bytes,
                table: SketchTable::new(usize::from(bytes), n),
            })
            .collect();
        let mut sets = Vec::with_capacity(n);
        for (d, (set, fps, of_document)) in per_document.into_iter().enumerate() {
            sets.push(set);
            for (column, fp) in by_scheme.iter_mut().zip(fps) {
                column.push(fp);
            }
            for (size, bytes) in sketches.iter_mut().zip(of_document) {
                let (rows, stride) = size.table.rows_mut();
                rows[d * stride..][..bytes.len()].copy_from_slice(&bytes);
            }
        }
        (sets, by_scheme, sketches)
    };

    let similar: HashSet<IndexPair> = {
        let _phase = Phase::start(progress, "exact Jaccard", n as u64);
        similar_pairs(&sets, t, |d| progress.advance(d))
            .into_iter()
            .map(|p| (p.a, p.b))
            .collect()
    };
    drop(sets);
    let (pairs, source) = match &options.gold {
        None => {
            let mut pairs: Vec<IndexPair> = similar.iter().copied().collect();
            pairs.sort_unstable();
            (pairs, TruthSource::Exact)
        }
        Some(path) => {
            let pairs = read_gold(path, &sample, t)?;
            let agreed = pairs.iter().filter(|p| similar.contains(p)).count() as u64;
            let source = TruthSource::Gold {
                path: path.clone(),
                agreed,
                gold_only: pairs.len() as u64 - agreed,
                text_only: similar.len() as u64 - agreed,
            };
            (pairs, source)
        }
    };
    if pairs.is_empty() {
        return Err(Error::input(format!(
            "the {} documents measured on hold no pair at Jaccard >= {t}{}: there is nothing \
             to find; use a lower --min-jaccard{}",
            n,
            if options.gold.is_some() {
                " in the gold file"
            } else {
                ""
            },
            if sample.is_partial() {
                " or a larger --sample"
            } else {
                ""
            },
        )));
    }
    let truth = Truth::new(pairs, n, &similar);
    let thresholds = Thresholds::around(t);

    let schemes: Vec<SchemeScores> = {
        let _phase = Phase::start(progress, "scoring", options.schemes.len() as u64);
        options
            .schemes
            .iter()
            .zip(&fingerprints)
            .map(|(scheme, fps)| {
                let scores = score_scheme(
                    *scheme,
                    fps,
                    &truth,
                    &similar,
                    options.max_distance,
                    &sketches,
                    &thresholds,
                );
                progress.advance(1);
                scores
            })
            .collect()
    };
    let expected_size = options.expected_size.unwrap_or(sample.corpus_documents);
    let recommendation = recommend(&schemes, t, expected_size.max(1))?;
    Ok(Tuning {
        corpus_documents: sample.corpus_documents,
        documents: n as u64,
        skipped: sample.skipped,
        sampled: sample.is_partial(),
        min_jaccard: t,
        truth: source,
        inputs: inputs.to_vec(),
        true_pairs: truth.pairs.len() as u64,
        schemes,
        fingerprints_only: recommendation.fingerprints_only,
        verified: recommendation.verified,
        sketched: recommendation.sketched,
    })
}
