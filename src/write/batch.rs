//! A batch of documents to insert: ids and fingerprints, stored by column so 1e8 of them fit
//! in a few GiB.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::format::block::docs::id_hash;

/// The longest id accepted, in bytes.
pub(crate) const MAX_ID_BYTES: usize = 1024;

/// Documents to insert together: all of them or none.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    ids: String,
    ends: Vec<u64>,
    fingerprints: Vec<u64>,
}

impl Batch {
    /// The longest id accepted, in bytes.
    pub const MAX_ID_BYTES: usize = MAX_ID_BYTES;
    /// The longest batch label accepted, in bytes.
    pub const MAX_LABEL_BYTES: usize = MAX_LABEL_BYTES;

    /// Checks an id against the rules of [`Batch::push`]: not empty, at most
    /// [`Batch::MAX_ID_BYTES`] bytes, no tab or line end.
    pub fn check_id(id: &str) -> Result<()> {
        check_id(id)
    }

    /// Checks a batch label: at most [`Batch::MAX_LABEL_BYTES`] bytes of UTF-8 with no control
    /// character (a tab or a line end would break the batch list's columns).
    pub fn check_label(label: &str) -> Result<()> {
        check_label(label)
    }

    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a document. Ids are non-empty UTF-8 of at most [`Batch::MAX_ID_BYTES`] bytes without tab,
    /// carriage return or line feed (they would break the tab-separated output). A later
    /// document with the same id replaces an earlier one.
    pub fn push(&mut self, id: &str, fingerprint: u64) -> Result<()> {
        check_id(id)?;
        self.ids.push_str(id);
        self.ends.push(self.ids.len() as u64);
        self.fingerprints.push(fingerprint);
        Ok(())
    }

    /// Moves every document of `other` to the end of this batch.
    pub fn append(&mut self, other: Batch) {
        let base = self.ids.len() as u64;
        self.ids.push_str(&other.ids);
        self.ends.extend(other.ends.iter().map(|end| end + base));
        self.fingerprints.extend(other.fingerprints);
    }

    /// Number of documents pushed.
    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }

    /// The id of document `i`.
    pub fn id(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.ids[start..self.ends[i] as usize]
    }

    /// The fingerprint of document `i`.
    pub fn fingerprint(&self, i: usize) -> u64 {
        self.fingerprints[i]
    }

    /// `(id_hash, index)` of the last document of each distinct id, ordered by
    /// `(id_hash(id), id)`: the order documents are stored in.
    pub(crate) fn sorted_unique(&self) -> Vec<(u64, u32)> {
        let mut order: Vec<(u64, u32)> = (0..self.len())
            .into_par_iter()
            .map(|i| (id_hash(self.id(i).as_bytes()), i as u32))
            .collect();
        // Sorting (hash, index) pairs keeps equal ids in push order.
        order.par_sort_unstable();
        let mut start = 0;
        while start < order.len() {
            // Equal hashes are rare (equal ids, or a collision): scan, do not search.
            let mut end = start + 1;
            while end < order.len() && order[end].0 == order[start].0 {
                end += 1;
            }
            if end - start > 1 {
                order[start..end].sort_by(|a, b| {
                    self.id(a.1 as usize)
                        .cmp(self.id(b.1 as usize))
                        .then(a.1.cmp(&b.1))
                });
            }
            start = end;
        }
        // Keep the last of each run of equal ids.
        let mut out: Vec<(u64, u32)> = Vec::with_capacity(order.len());
        for (h, i) in order {
            match out.last_mut() {
                Some(last) if last.0 == h && self.id(last.1 as usize) == self.id(i as usize) => {
                    *last = (h, i)
                }
                _ => out.push((h, i)),
            }
        }
        out
    }
}

/// Where documents go as they are read: a [`Batch`] in memory, or an
/// [`Insertion`](crate::write::insertion::Insertion) that writes them a run at a time.
pub trait DocumentSink {
    /// Adds a document (see [`Batch::push`]).
    fn push(&mut self, id: &str, fingerprint: u64) -> Result<()>;
    /// Adds every document of `documents`, in order.
    fn append(&mut self, documents: Batch) -> Result<()>;
}

impl DocumentSink for Batch {
    fn push(&mut self, id: &str, fingerprint: u64) -> Result<()> {
        Batch::push(self, id, fingerprint)
    }

    fn append(&mut self, documents: Batch) -> Result<()> {
        Batch::append(self, documents);
        Ok(())
    }
}

/// The longest batch label accepted, in bytes.
pub(crate) const MAX_LABEL_BYTES: usize = 256;

/// Checks a batch label: at most [`MAX_LABEL_BYTES`] bytes of UTF-8 with no control character
/// (a tab or a line end would break the batch list's columns).
pub(crate) fn check_label(label: &str) -> Result<()> {
    if label.len() > MAX_LABEL_BYTES {
        return Err(Error::input(format!(
            "the label is {} bytes long; at most {MAX_LABEL_BYTES} are allowed",
            label.len()
        )));
    }
    if let Some(c) = label.chars().find(|c| c.is_control()) {
        return Err(Error::input(format!(
            "the label {label:?} contains the control character {c:?} (tabs and line ends \
             would break the batch list)"
        )));
    }
    Ok(())
}

/// Checks an id against the rules of [`Batch::push`].
pub(crate) fn check_id(id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::input("the id is empty"));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(Error::input(format!(
            "the id is {} bytes long; at most {MAX_ID_BYTES} are allowed",
            id.len()
        )));
    }
    if id.contains(['\t', '\n', '\r']) {
        return Err(Error::input(
            "the id contains a tab, carriage return or line feed",
        ));
    }
    Ok(())
}

/// What reading one input did.
/// Its JSON form (inside an insert's summary) is `{"lines", "skipped"}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ReadSummary {
    /// Non-blank lines (or documents) read.
    pub lines: u64,
    /// Documents added to the sink.
    #[serde(skip)]
    pub documents: u64,
    /// Invalid lines skipped (only with `skip_invalid`).
    pub skipped: u64,
    /// The first few skipped lines' errors, `source:line: message`.
    #[serde(skip)]
    pub first_skipped: Vec<String>,
}

/// How many skipped-line messages a [`ReadSummary`] keeps.
pub(crate) const KEPT_SKIP_MESSAGES: usize = 5;

impl ReadSummary {
    /// Counts an invalid document skipped, keeping the first few errors.
    pub(crate) fn skip(&mut self, error: Error) {
        self.skipped += 1;
        if self.first_skipped.len() < KEPT_SKIP_MESSAGES {
            self.first_skipped.push(error.to_string());
        }
    }

    /// Adds the counts of another read.
    pub fn add(&mut self, other: ReadSummary) {
        self.lines += other.lines;
        self.documents += other.documents;
        self.skipped += other.skipped;
        for msg in other.first_skipped {
            if self.first_skipped.len() < KEPT_SKIP_MESSAGES {
                self.first_skipped.push(msg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_duplicates_win_and_order_is_by_hash_then_id() {
        let mut b = Batch::new();
        for (id, fp) in [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 5)] {
            b.push(id, fp).unwrap();
        }
        let order = b.sorted_unique();
        assert_eq!(order.len(), 3);
        let mut fps: Vec<(String, u64)> = order
            .iter()
            .map(|&(_, i)| (b.id(i as usize).to_string(), b.fingerprint(i as usize)))
            .collect();
        assert!(order.windows(2).all(|w| w[0].0 <= w[1].0));
        fps.sort();
        assert_eq!(fps, vec![("a".into(), 3), ("b".into(), 5), ("c".into(), 4)]);
    }

    #[test]
    fn bad_ids_are_refused() {
        let mut b = Batch::new();
        assert!(b.push("", 1).is_err());
        assert!(b.push("a\tb", 1).is_err());
        assert!(b.push(&"x".repeat(MAX_ID_BYTES + 1), 1).is_err());
        assert!(b.is_empty());
    }
}
