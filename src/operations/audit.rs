//! The audit: a store's near duplicates, verified as the caller asks.

use std::path::PathBuf;

use crate::dedup::near_duplicates::NearDuplicates;
use crate::error::Result;
use crate::io::document::ReadOptions;
use crate::read::snapshot::Snapshot;
use crate::sys::progress::Progress;

/// How an audit checks its candidate pairs beyond their fingerprints' distance.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("store");
/// use simhashdb::{CompactionPolicy, InsertOptions, ReadOptions, Scheme, Settings, Source, Store, Verification};
///
/// // A store that keeps a 128-byte sketch of every text inserted.
/// let scheme = Scheme::default().with_sketch(128)?;
/// let mut store = Store::create_with(&path, Settings::default(), scheme, CompactionPolicy::default())?;
/// let text = "the store keeps every fingerprint of every page it has seen so far";
/// let body = format!("{{\"id\": \"a\", \"text\": \"{text}\"}}\n{{\"id\": \"b\", \"text\": \"{text}\"}}\n");
/// let source = Source::Bytes { bytes: body.as_bytes(), name: "body" };
/// store.insert_from([source], &InsertOptions::default(), &ReadOptions::default(), &())?;
///
/// let verification = Verification::Sketches { min_jaccard: 0.8 };
/// let near = store.snapshot()?.near_duplicates(3, &verification, &())?;
/// let mut pairs = Vec::new();
/// near.for_each_pair(|a, b, _, jaccard| {
///     pairs.push((a.to_string(), b.to_string(), jaccard));
///     Ok::<(), simhashdb::Error>(())
/// })?;
/// assert_eq!(pairs, [("a".into(), "b".into(), Some(1.0))]); // the same text: estimate 1
/// # Ok::<(), simhashdb::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub enum Verification {
    /// Every pair within the distance is a near duplicate.
    #[default]
    None,
    /// A pair is kept when the store's sketches (a store made with `init --sketch`) estimate
    /// at least `min_jaccard` word 3-shingle Jaccard (see
    /// [`NearDuplicates::verify_sketches`]).
    Sketches {
        /// The least estimated Jaccard a pair keeps.
        min_jaccard: f64,
    },
    /// A pair is kept when the exact word 3-shingle Jaccard of its documents' texts, read
    /// from `corpora` as `read` says, is at least `min_jaccard` (see
    /// [`NearDuplicates::verify_text`]).
    Text {
        /// Files or directories holding the documents' texts.
        corpora: Vec<PathBuf>,
        /// How the corpora are read (their id and text fields).
        read: ReadOptions,
        /// The least Jaccard a pair keeps.
        min_jaccard: f64,
    },
}

impl Verification {
    /// The least Jaccard a pair keeps when a client asks for verification and gives none.
    pub const DEFAULT_MIN_JACCARD: f64 = 0.8;

    /// What a client's arguments ask for: texts to verify against (with `min_jaccard`, else
    /// [`Verification::DEFAULT_MIN_JACCARD`]), else with `min_jaccard` the store's sketches,
    /// else nothing.
    pub fn asked(corpora: Vec<PathBuf>, read: ReadOptions, min_jaccard: Option<f64>) -> Self {
        match (corpora.is_empty(), min_jaccard) {
            (false, min_jaccard) => Verification::Text {
                corpora,
                read,
                min_jaccard: min_jaccard.unwrap_or(Self::DEFAULT_MIN_JACCARD),
            },
            (true, Some(min_jaccard)) => Verification::Sketches { min_jaccard },
            (true, None) => Verification::None,
        }
    }
}

impl Snapshot {
    /// The near duplicates of the live documents within `distance` bits (see
    /// [`Snapshot::distance`]), verified as `verification` says: the audit every client runs.
    ///
    /// Memory grows with the fingerprint pairs and the documents that have a near duplicate,
    /// never with the document pairs. `progress` is told of the phases "audit", "reading
    /// postings", "reading ids" (or, verified by the sketches of a store whose every document
    /// has one, "reading ids and sketches"), "clusters", and the verification's.
    pub fn near_duplicates(
        &self,
        distance: u32,
        verification: &Verification,
        progress: &dyn Progress,
    ) -> Result<NearDuplicates> {
        match verification {
            Verification::None => self.near_duplicates_unverified(distance, progress),
            Verification::Sketches { min_jaccard } => {
                self.near_duplicates_sketched(distance, *min_jaccard, progress)
            }
            Verification::Text {
                corpora,
                read,
                min_jaccard,
            } => {
                let mut near = self.near_duplicates_unverified(distance, progress)?;
                near.verify_text(corpora, read, *min_jaccard, progress)?;
                Ok(near)
            }
        }
    }
}
