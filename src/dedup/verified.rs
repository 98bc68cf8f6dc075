//! The verified audit: pairs of near-duplicate candidates checked against the documents'
//! text, keeping those whose word 3-shingle Jaccard reaches a threshold.
//!
//! Memory: the shingle sets of the documents that are in some pair (read from the corpus,
//! every other document skipped), and the pairs.

use std::collections::HashSet;
use std::path::Path;

use crate::error::{Error, Result};
use crate::io::document::ReadOptions;
use crate::io::input::read_corpus_shingles;
use crate::similarity::find_all::DocumentPair;
use crate::similarity::jaccard::{check_min_jaccard, verify_pairs};

/// The `pairs` whose documents' word 3-shingle Jaccard, computed from the texts of `corpus`
/// (JSON Lines, Parquet, or text files and directories, ids and texts from `options`' fields), is
/// at least `min_jaccard`, each with it, in the order given. A pair whose document the corpus
/// lacks is an error naming the corpus and the id.
pub fn verify_with_corpus(
    pairs: Vec<DocumentPair>,
    corpus: &Path,
    options: &ReadOptions,
    min_jaccard: f64,
) -> Result<Vec<(DocumentPair, f64)>> {
    // Before the corpus is read: a wrong threshold should not cost a read of it.
    check_min_jaccard(min_jaccard)?;
    let wanted: HashSet<&str> = pairs
        .iter()
        .flat_map(|p| [p.a.as_str(), p.b.as_str()])
        .collect();
    let sets = read_corpus_shingles(corpus, options, |id| wanted.contains(id))?;
    drop(wanted);
    verify_pairs(pairs, &sets, min_jaccard).map_err(|e| match e {
        Error::Input { problem, .. } => {
            Error::input_at(&corpus.display().to_string(), None, problem)
        }
        other => other,
    })
}
