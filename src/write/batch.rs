//! A batch of documents to insert: ids, fingerprints and, for stores that keep them,
//! verification sketches, stored by column so 1e8 of them fit in a few GiB.

use rayon::prelude::*;

use crate::error::{Error, Result, Setting};
use crate::format::block::docs::id_hash;
use crate::sys::prefetch;
use crate::tables::radix;

/// The longest id accepted, in bytes.
pub(crate) const MAX_ID_BYTES: usize = 1024;

/// Documents to insert together: all of them or none.
///
/// ```
/// use simhashdb::Batch;
///
/// let mut batch = Batch::new();
/// batch.push("https://example.com/a", 0x0123_4567_89ab_cdef)?;
/// assert!(batch.push("", 1).is_err()); // ids are 1 to 1,024 bytes
/// assert_eq!(batch.len(), 1);
/// # Ok::<(), simhashdb::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Batch {
    ids: String,
    ends: Vec<u64>,
    fingerprints: Vec<u64>,
    /// Where each document's sketch starts in `sketch_bytes`, or [`NO_SKETCH`]; empty while
    /// no document has one (a batch of bare fingerprints pays nothing for them).
    sketch_starts: Vec<u64>,
    sketch_bytes: Vec<u8>,
}

/// A document without a sketch, in [`Batch::sketch_starts`].
const NO_SKETCH: u64 = u64::MAX;

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
        self.push_checked(id, fingerprint);
        Ok(())
    }

    /// [`Batch::push`] of an id that passed [`check_id`] already.
    pub(crate) fn push_checked(&mut self, id: &str, fingerprint: u64) {
        debug_assert!(check_id(id).is_ok());
        self.ids.push_str(id);
        self.ends.push(self.ids.len() as u64);
        self.fingerprints.push(fingerprint);
        if !self.sketch_starts.is_empty() {
            self.sketch_starts.push(NO_SKETCH);
        }
    }

    /// Adds a document with its verification sketch (see [`crate::Scheme::sketch`]), which a
    /// store made with sketches keeps; a store without them ignores it.
    pub fn push_sketched(&mut self, id: &str, fingerprint: u64, sketch: &[u8]) -> Result<()> {
        self.push(id, fingerprint)?;
        if self.sketch_starts.is_empty() {
            self.sketch_starts = vec![NO_SKETCH; self.len()];
        }
        *self.sketch_starts.last_mut().expect("pushed") = self.sketch_bytes.len() as u64;
        self.sketch_bytes.extend_from_slice(sketch);
        Ok(())
    }

    /// Moves every document of `other` to the end of this batch.
    pub fn append(&mut self, other: Batch) {
        let base = self.ids.len() as u64;
        self.ids.push_str(&other.ids);
        self.ends.extend(other.ends.iter().map(|end| end + base));
        if !other.sketch_starts.is_empty() || !self.sketch_starts.is_empty() {
            self.sketch_starts
                .resize(self.fingerprints.len(), NO_SKETCH);
            let base = self.sketch_bytes.len() as u64;
            match other.sketch_starts.is_empty() {
                true => self
                    .sketch_starts
                    .resize(self.fingerprints.len() + other.len(), NO_SKETCH),
                false => self
                    .sketch_starts
                    .extend(other.sketch_starts.iter().map(|&s| {
                        if s == NO_SKETCH {
                            s
                        } else {
                            s + base
                        }
                    })),
            }
            self.sketch_bytes.extend_from_slice(&other.sketch_bytes);
        }
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
        let end = self.ends[i] as usize;
        assert!(
            start <= end && end <= self.ids.len(),
            "document {i} is in the batch"
        );
        // SAFETY: every end was the length of `ids` after a whole `&str` was pushed onto it
        // (push and append only), so both are character boundaries. Checking them (what
        // `&ids[start..end]` does) reads the id's bytes, a cache miss per document when a
        // run visits ids in hash order, before anything else needs them.
        unsafe { self.ids.get_unchecked(start..end) }
    }

    /// The fingerprint of document `i`.
    pub fn fingerprint(&self, i: usize) -> u64 {
        self.fingerprints[i]
    }

    /// Replaces the fingerprint `f` of each of `documents` by `change(f)` (a reader that read
    /// them in a notation its input turned out not to be in).
    pub(crate) fn change_fingerprints(&mut self, documents: &[usize], change: fn(u64) -> u64) {
        for &i in documents {
            self.fingerprints[i] = change(self.fingerprints[i]);
        }
    }

    /// Asks the CPU for document `i`'s fingerprint and where its id is, ahead of reading
    /// them out of order (a hint: nothing changes if `i` is out of range).
    pub(crate) fn prefetch(&self, i: usize) {
        if let (Some(fingerprint), Some(end)) = (self.fingerprints.get(i), self.ends.get(i)) {
            prefetch::value(fingerprint);
            prefetch::value(end);
        }
    }

    /// The sketch of document `i`, if it was given one ([`Batch::push_sketched`]).
    pub fn sketch(&self, i: usize) -> Option<&[u8]> {
        let start = *self.sketch_starts.get(i)?;
        if start == NO_SKETCH {
            return None;
        }
        let end = self.sketch_starts[i + 1..]
            .iter()
            .find(|&&s| s != NO_SKETCH)
            .map_or(self.sketch_bytes.len() as u64, |&s| s);
        Some(&self.sketch_bytes[start as usize..end as usize])
    }

    /// `(id_hash, index)` of the last document of each distinct id, ordered by
    /// `(id_hash(id), id)`: the order documents are stored in.
    pub(crate) fn sorted_unique(&self) -> Vec<(u64, u32)> {
        let mut order: Vec<(u64, u32)> = (0..self.len())
            .into_par_iter()
            .map(|i| (id_hash(self.id(i).as_bytes()), i as u32))
            .collect();
        // Sorting (hash, index) pairs keeps equal ids in push order.
        radix::par_sort_by_key_bits(&mut order, |o| o.0, |a, b| a.cmp(b));
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
        // Keep the last of each run of equal ids, in place.
        let mut kept = 0;
        for j in 0..order.len() {
            let (h, i) = order[j];
            if kept > 0
                && order[kept - 1].0 == h
                && self.id(order[kept - 1].1 as usize) == self.id(i as usize)
            {
                order[kept - 1] = (h, i);
            } else {
                order[kept] = (h, i);
                kept += 1;
            }
        }
        order.truncate(kept);
        order
    }
}

/// Where documents go as they are read: a [`Batch`] in memory, or an
/// [`Insertion`](crate::write::insertion::Insertion) that writes them a run at a time.
pub(crate) trait DocumentSink {
    /// Adds every document of `documents`, in order.
    fn append(&mut self, documents: Batch) -> Result<()>;
}

impl DocumentSink for Batch {
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
        return Err(Error::settings(
            Setting::Label,
            format!(
                "the label is {} bytes long; at most {MAX_LABEL_BYTES} are allowed",
                label.len()
            ),
        ));
    }
    if let Some(c) = label.chars().find(|c| c.is_control()) {
        return Err(Error::settings(
            Setting::Label,
            format!(
                "the label {label:?} contains the control character {c:?} (tabs and line \
                 ends would break the batch list)"
            ),
        ));
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
    // Bytewise: each of these is one byte in UTF-8 and no part of another character.
    if id.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) {
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
    /// Of those, whole text files (a directory's binary files, say).
    #[serde(skip)]
    pub skipped_files: u64,
    /// The first few skipped lines' errors, `source:line: message`.
    #[serde(skip)]
    pub first_skipped: Vec<String>,
    /// Warnings about the input, each `warning: source:line: message` (an input whose
    /// fingerprints either notation reads, see [`crate::FingerprintFormat::Auto`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
        self.skipped_files += other.skipped_files;
        self.warnings.extend(other.warnings);
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
