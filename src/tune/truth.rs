//! Which pairs of the sample are near-duplicates: the user's gold pairs, or the exact Jaccard
//! join of the texts.

use std::collections::HashSet;
use std::io::BufRead;
use std::path::Path;

use super::sample::{Found, Sample};
use crate::error::{Error, Result};
use crate::io::input::open_input;
use crate::similarity::clusters::UnionFind;

/// Two documents of the sample, by index, `a < b`.
pub type IndexPair = (u32, u32);

/// The pairs of the sample a gold file calls near-duplicates at `min_jaccard`, sorted.
///
/// Lines are `ID_A ID_B [JACCARD [INTER UNION]]`, separated by tabs or spaces (the format of
/// ../shared/eval's `gt_pairs.tsv`); blank lines and lines starting with `#` are skipped. A
/// pair is true when its exact `INTER / UNION` (five fields), else its `JACCARD` (three or
/// four), is at least `min_jaccard`; a line of two ids is a true pair. An id the corpus does
/// not hold fails with `PATH:LINE`; pairs with an id the sample left out are dropped, and
/// self pairs ignored.
pub fn read_gold(path: &Path, sample: &Sample, min_jaccard: f64) -> Result<Vec<IndexPair>> {
    let source = path.display().to_string();
    let mut pairs = HashSet::new();
    for (i, line) in open_input(path)?.lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, e))?;
        let at = |problem: String| Error::input_at(&source, Some(i as u64 + 1), problem);
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() || fields[0].starts_with('#') {
            continue;
        }
        let number = |field: &str, what: &str| {
            field
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| at(format!("{what} {field:?} is not a number")))
        };
        let similarity = match fields.len() {
            2 => None,
            3 | 4 => Some(number(fields[2], "the Jaccard similarity")?),
            5 => {
                let inter = number(fields[3], "the intersection size")?;
                let union = number(fields[4], "the union size")?;
                Some(if union > 0.0 { inter / union } else { 1.0 })
            }
            n => {
                return Err(at(format!(
                    "expected ID_A ID_B [JACCARD [INTER UNION]], found {n} fields"
                )))
            }
        };
        if similarity.is_some_and(|j| j < min_jaccard) || fields[0] == fields[1] {
            continue;
        }
        let index = |id: &str| match sample.find(id) {
            Found::Sampled(i) => Ok(Some(i)),
            Found::LeftOut => Ok(None),
            Found::NotInCorpus => Err(at(format!(
                "id {id:?} is not in the corpus (is the gold file for this corpus, and \
                 --id-field right?)"
            ))),
        };
        if let (Some(a), Some(b)) = (index(fields[0])?, index(fields[1])?) {
            pairs.insert((a.min(b), a.max(b)));
        }
    }
    let mut pairs: Vec<IndexPair> = pairs.into_iter().collect();
    pairs.sort_unstable();
    Ok(pairs)
}

/// Connected components of the graph whose edges are `pairs` over `n` vertices: a component
/// number for each pair, and the number of components with a pair. Near-duplicate pairs come
/// in such groups (nine versions of one file are 36 pairs), and they are the units a recall
/// estimate's variance is computed over.
pub fn pair_components(pairs: &[IndexPair], n: usize) -> (Vec<u32>, usize) {
    let mut sets = UnionFind::new(n);
    for &(a, b) in pairs {
        sets.union(a as usize, b as usize);
    }
    let mut number = vec![u32::MAX; n];
    let mut count = 0;
    let components = pairs
        .iter()
        .map(|&(a, _)| {
            let root = sets.find(a as usize);
            if number[root] == u32::MAX {
                number[root] = count;
                count += 1;
            }
            number[root]
        })
        .collect();
    (components, count as usize)
}
