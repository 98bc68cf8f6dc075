//! The setting `tune` recommends for each use, and what a store built with it costs.

use super::scores::{SchemeScores, Score};
use crate::error::Result;
use crate::format::settings::Settings;
use crate::similarity::fingerprint::Scheme;

/// How much F1 a smaller distance may give up to be chosen over the best: a smaller K is
/// fewer tables, less disk and faster queries, and F1 differences this small are within the
/// noise of a sample.
pub(crate) const F1_TOLERANCE: f64 = 0.005;

/// A recommended setting for one use.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Choice {
    /// The fingerprint scheme.
    pub scheme: Scheme,
    /// Its score at the recommended distance (`score.distance`).
    pub score: Score,
    /// For verified audits: the Jaccard similarity pairs are verified at (for sketches, the
    /// least estimate kept: `audit --min-jaccard`).
    pub min_jaccard: Option<f64>,
    /// For stores with sketches: their size in bytes (`init --sketch --sketch-bytes`).
    pub sketch_bytes: Option<u16>,
    /// The store size the settings are planned for.
    pub expected_size: u64,
    /// What `init` picks for the distance (at least 1: a store's K must be) at
    /// `expected_size`.
    pub settings: Settings,
}

impl Choice {
    /// The distance to query or audit at.
    pub fn distance(&self) -> u8 {
        self.score.distance
    }

    /// Disk bytes per document a store made for this choice costs: its tables' and its
    /// sketches', by the measured figures in [`Settings`].
    pub fn disk_bytes_per_document(&self) -> f64 {
        self.settings.disk_bytes_per_document()
            + self.sketch_bytes.map_or(0.0, Settings::sketch_disk_bytes)
    }
}

/// The recommendations for both uses.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Recommendation {
    /// For stores that keep no text: the pairs within k bits are the answer.
    pub fingerprints_only: Choice,
    /// For audits that can re-read the text: candidates within k bits, verified by exact
    /// Jaccard.
    pub verified: Choice,
    /// For stores that keep sketches: candidates within k bits, verified by the sketches.
    pub sketched: Option<Choice>,
}

/// The recommendations from `schemes`' scores: for each use, the best F1 over every scheme
/// and distance; among the settings within [`F1_TOLERANCE`] of it, the smallest distance, then
/// the highest F1, then the earlier scheme. With sketches, whose size is a cost as the
/// distance is, the fewest bytes per document on disk (tables and sketch) instead of the
/// smallest distance.
pub fn recommend(
    schemes: &[SchemeScores],
    min_jaccard: f64,
    expected_size: u64,
) -> Result<Recommendation> {
    let choose = |scores: fn(&SchemeScores) -> &[Score], min_jaccard| -> Result<Choice> {
        let all = || {
            schemes
                .iter()
                .flat_map(move |s| scores(s).iter().map(move |score| (s.scheme, *score)))
        };
        let best = all().map(|(_, s)| s.f1).fold(0.0, f64::max);
        let (scheme, score) = all()
            .filter(|(_, s)| s.f1 >= best - F1_TOLERANCE)
            .min_by(|(_, x), (_, y)| (x.distance.cmp(&y.distance)).then(y.f1.total_cmp(&x.f1)))
            .expect("at least one scheme and distance");
        let settings = Settings::for_size(score.distance.max(1), expected_size)?;
        Ok(Choice {
            scheme,
            score,
            min_jaccard,
            expected_size,
            settings,
            sketch_bytes: None,
        })
    };
    let sketched = {
        let all: Vec<(Scheme, Score)> = schemes
            .iter()
            .flat_map(|s| {
                s.sketched
                    .iter()
                    .flatten()
                    .map(move |score| (s.scheme, *score))
            })
            .collect();
        let best = all.iter().map(|(_, s)| s.f1).fold(0.0, f64::max);
        let mut near: Vec<Choice> = Vec::new();
        for (scheme, score) in all.into_iter().filter(|(_, s)| s.f1 >= best - F1_TOLERANCE) {
            let (bytes, min_jaccard) = score.sketch.expect("a sketch score");
            near.push(Choice {
                scheme,
                score,
                min_jaccard: Some(min_jaccard),
                expected_size,
                settings: Settings::for_size(score.distance.max(1), expected_size)?,
                sketch_bytes: Some(bytes),
            });
        }
        near.into_iter().min_by(|x, y| {
            (x.disk_bytes_per_document()
                .total_cmp(&y.disk_bytes_per_document()))
            .then(y.score.f1.total_cmp(&x.score.f1))
        })
    };
    Ok(Recommendation {
        fingerprints_only: choose(|s| &s.fingerprints, None)?,
        verified: choose(|s| &s.verified, Some(min_jaccard))?,
        sketched,
    })
}
