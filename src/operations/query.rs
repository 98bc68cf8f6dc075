//! Queries as clients ask them: many at once, given as fingerprints or texts, verified with
//! sketches when asked.

use rayon::prelude::*;

use crate::error::{guard_redb, Result};
use crate::io::input::Query;
use crate::read::snapshot::{Match, Snapshot};

impl Snapshot {
    /// Answers many queries in parallel, in the order of `queries`: each one's matches within
    /// `distance` bits, as [`Snapshot::query`] orders them.
    ///
    /// With `min_jaccard`, matches are verified with sketches (the store must keep them,
    /// `init --sketch`: else an error that says how): a match is kept when its sketch and the
    /// query's ([`Query::sketch`], from its text) estimate a word 3-shingle Jaccard similarity
    /// of at least `min_jaccard`, with that estimate; a match where either has no sketch (a
    /// query given as a fingerprint, a document inserted as one) is kept, marked
    /// [`Match::unverified`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{Batch, Query, Settings, Snapshot, Store};
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let mut batch = Batch::new();
    /// batch.push("doc-1", 0xdead_beef_0000_0000)?;
    /// store.insert(&batch, None)?;
    /// let snapshot = Snapshot::open(&path)?;
    /// let queries = [Query::from(0xdead_beef_0000_0001), Query::from(0x1234)];
    /// let answers = snapshot.query_many(&queries, 3, None)?;
    /// assert_eq!(answers[0][0].id, "doc-1");
    /// assert!(answers[1].is_empty());
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn query_many(
        &self,
        queries: &[Query],
        distance: u32,
        min_jaccard: Option<f64>,
    ) -> Result<Vec<Vec<Match>>> {
        self.check_distance(distance)?;
        if let Some(min_jaccard) = min_jaccard {
            self.check_sketch_verification(min_jaccard)?;
        }
        // The tables are probed for all the queries together, in each table's key order.
        let fingerprints: Vec<u64> = queries.iter().map(|q| q.fingerprint).collect();
        let close = guard_redb(self.dir(), || {
            self.close_fingerprints_many(&fingerprints, distance)
        })?;
        let Some(min) = min_jaccard else {
            return guard_redb(self.dir(), || self.matches_of_many(close));
        };
        let sketches: Vec<Option<&[u8]>> = queries.iter().map(|q| q.sketch.as_deref()).collect();
        if sketches.iter().all(Option::is_none) {
            // No query can be verified: every match is kept, unverified, and no sketch read.
            let matches = guard_redb(self.dir(), || self.matches_of_many(close))?;
            return Ok(matches
                .into_iter()
                .map(|m| m.into_iter().map(|m| m.verified(None)).collect())
                .collect());
        }
        // Batches read the documents of all their matches at once, with their sketches, where
        // every stored document has one; a single query looks up its own.
        if queries.len() > 1 && self.sketches_complete() {
            return guard_redb(self.dir(), || {
                self.verified_matches_of_many(close, &sketches, min)
            });
        }
        queries
            .par_iter()
            .zip(close)
            .with_min_len(64)
            .map(|(q, close)| {
                guard_redb(self.dir(), || {
                    self.verified_matches_of(close, q.sketch.as_deref(), min)
                })
            })
            .collect()
    }

    /// The query for `text`, fingerprinted (and sketched, in a store that keeps sketches) with
    /// the store's scheme; an error for a store of bare fingerprints or an unreadable text.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{InsertOptions, ReadOptions, Settings, Snapshot, Source, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?; // words-2-minhash
    /// let text = "the store keeps every fingerprint of every page it has seen";
    /// let body = format!("{{\"id\": \"a\", \"text\": \"{text}\"}}\n");
    /// let source = Source::Bytes { bytes: body.as_bytes(), name: "body" };
    /// store.insert_from([source], &InsertOptions::default(), &ReadOptions::default(), &())?;
    /// let snapshot = Snapshot::open(&path)?;
    /// let query = snapshot.text_query(text)?; // the same scheme as the stored text's
    /// let answers = snapshot.query_many(&[query], 0, None)?;
    /// assert_eq!(answers[0][0].id, "a");
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn text_query(&self, text: &str) -> Result<Query> {
        let (fingerprint, sketch) = self.text_scheme()?.document(text)?;
        Ok(Query {
            sketch,
            ..Query::from(fingerprint)
        })
    }
}
