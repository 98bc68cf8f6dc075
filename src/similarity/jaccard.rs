//! Exact verification of candidate pairs: the Jaccard similarity of the documents' word
//! 3-shingle sets, the second stage after simhash candidates.
//!
//! Shingles are taken with the tokenizer of [`crate::similarity::fingerprint`] (lower-cased maximal runs of
//! alphanumerics) and stored as XXH3-64 hashes: two different shingles collide with
//! probability ~2^-64 per pair, far below any threshold's resolution.

use crate::error::{Error, Result, Setting};
use crate::similarity::fingerprint::{shingle_hashes, Features};
pub use crate::similarity::sketch::SHINGLE_WORDS;

/// The sorted, distinct shingle hashes of `text`.
pub fn shingle_set(text: &str) -> Vec<u64> {
    let mut set = Vec::new();
    shingle_hashes(text, Features::Words(SHINGLE_WORDS), |h| set.push(h));
    set.sort_unstable();
    set.dedup();
    set
}

/// |a ∩ b| / |a ∪ b| of two sorted, distinct sets; 1 when both are empty.
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    if union == 0 {
        1.0
    } else {
        common as f64 / union as f64
    }
}

/// Refuses a least Jaccard similarity outside 0..=1.
pub(crate) fn check_min_jaccard(min_jaccard: f64) -> Result<()> {
    if (0.0..=1.0).contains(&min_jaccard) {
        return Ok(());
    }
    Err(Error::settings(
        Setting::MinJaccard,
        format!("{min_jaccard} is not between 0 and 1"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaccard_of_sets() {
        assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
        assert_eq!(jaccard(&[], &[]), 1.0);
        assert_eq!(jaccard(&[1], &[]), 0.0);
        let a = shingle_set("one two three four five");
        let b = shingle_set("ONE two three four six");
        assert_eq!(a.len(), 3);
        assert_eq!(jaccard(&a, &b), 0.5); // {1 2 3, 2 3 4} of 4 shingles
    }

    #[test]
    fn sketches_estimate_the_jaccard_verification_computes() {
        let scheme = crate::Scheme::default().with_sketch(1024).unwrap();
        let a = "one two three four five six seven eight nine ten eleven twelve";
        let b = "ONE two three, four five six seven eight nine ten eleven TWELVE!";
        let c = "one two three four five six seven eight nine ten eleven thirteen";
        let (sa, sb, sc) = (
            scheme.sketch(a).unwrap(),
            scheme.sketch(b).unwrap(),
            scheme.sketch(c).unwrap(),
        );
        assert_eq!(sa, sb, "case and punctuation are not tokens");
        let exact = jaccard(&shingle_set(a), &shingle_set(c)); // 9 of 11
        let estimate = crate::Scheme::estimate_jaccard(&sa, &sc);
        assert!((estimate - exact).abs() < 0.06, "{estimate} vs {exact}");
        // Fewer tokens than a shingle: one shingle of them all, as verification counts.
        let two = |t: &str| scheme.sketch(t).unwrap();
        assert_eq!(two("two words"), two("Two, words."));
        assert_ne!(two("two words"), two("words two"));
        assert_eq!(shingle_set("two words").len(), 1);
        assert_eq!(two(""), vec![0; 1024]);
    }
}
