//! The first round of expanding fingerprint pairs into document pairs: a part's documents meet
//! the ends of the pairs by fingerprint, and go out as halves of blocks ([`Half`]), a hot
//! fingerprint's documents cut into chunks.

use crate::error::{Error, Result};

/// A block of document pairs and one side of it, as the first round of expanding fingerprint
/// pairs into document pairs routes it ([`Router`]). The block `(a, b, i, j)` holds the pairs
/// of chunk `i` of fingerprint `a`'s documents with chunk `j` of fingerprint `b`'s; with `a ==
/// b` it is a fingerprint's copies: chunk `i` with chunk `j > i`, or with `i == j` the pairs
/// within chunk `i` (a block of one half). A fingerprint's documents are sorted by id and cut
/// into [`Router::chunks_of`] chunks of equal size, so no block holds more than about
/// `chunk_rows`^2 pairs, and the blocks of a hot page spread over many tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Half {
    /// The block's first fingerprint (`a <= b`).
    pub a: u64,
    /// The block's second fingerprint.
    pub b: u64,
    /// The chunk of `a`'s documents.
    pub i: u32,
    /// The chunk of `b`'s documents.
    pub j: u32,
    /// Whose ids these are: `b`'s chunk `j` (true) or `a`'s chunk `i` (false).
    pub of_b: bool,
    /// The ids of the chunk.
    pub ids: Vec<String>,
    /// The distance between `a` and `b`.
    pub distance: u32,
}

impl Half {
    /// The block this half belongs to: rows of one block must meet in one task.
    pub fn block(&self) -> (u64, u64, u32, u32) {
        (self.a, self.b, self.i, self.j)
    }
}

/// The first round of expanding fingerprint pairs into document pairs, in one part of the
/// work: the part's documents, the ends of the fingerprint pairs whose fingerprint falls in the
/// part (each pair has an end at each of its fingerprints), and the fingerprints whose copies
/// pair among themselves; out come [`Half`]s. Parts are cut by fingerprint, so every document
/// of a fingerprint is in the part its ends are.
#[derive(Debug, Default)]
pub struct Router {
    /// Chunks of the fingerprints of more than `chunk_rows` documents.
    hot: std::collections::HashMap<u64, u32>,
    /// The part's documents: fingerprint and the range of its id in `ids` (no allocation per
    /// document: a part holds millions, and most have no pair).
    documents: Vec<(u64, usize, usize)>,
    ids: Vec<u8>,
    ends: Vec<(u64, u64, u32)>,
    copied: Vec<u64>,
}

impl Router {
    /// A router cutting documents into chunks of about `chunk_rows`, given `(fingerprint,
    /// documents)` for (at least) every fingerprint of more than `chunk_rows` documents (what
    /// [`Found::copies`](super::Found::copies) lists), the same in every part.
    pub fn new(chunk_rows: usize, copies: impl IntoIterator<Item = (u64, u64)>) -> Router {
        let chunk_rows = chunk_rows.max(1);
        let hot = copies
            .into_iter()
            .filter(|&(_, n)| n > chunk_rows as u64)
            .map(|(fp, n)| {
                (
                    fp,
                    n.div_ceil(chunk_rows as u64).min(u64::from(u32::MAX)) as u32,
                )
            })
            .collect();
        Router {
            hot,
            ..Router::default()
        }
    }

    /// The chunks fingerprint `fp`'s documents are cut into.
    pub fn chunks_of(&self, fp: u64) -> u32 {
        self.hot.get(&fp).copied().unwrap_or(1)
    }

    /// Adds a document of the part.
    pub fn add_document(&mut self, fingerprint: u64, id: &str) {
        let start = self.ids.len();
        self.ids.extend_from_slice(id.as_bytes());
        self.documents.push((fingerprint, start, self.ids.len()));
    }

    /// Adds the end at `fingerprint` of the pair (`fingerprint`, `other`) at `distance`.
    pub fn add_end(&mut self, fingerprint: u64, other: u64, distance: u32) {
        self.ends.push((fingerprint, other, distance));
    }

    /// Adds a fingerprint whose documents pair among themselves (at distance 0).
    pub fn add_copies(&mut self, fingerprint: u64) {
        self.copied.push(fingerprint);
    }

    /// Calls `emit` on every half the part's ends and copies make (documents no end or copy
    /// names are dropped). Fails when an end's fingerprint has no document in the part (the
    /// part was not cut by fingerprint).
    pub fn finish(mut self, mut emit: impl FnMut(&Half) -> Result<()>) -> Result<()> {
        self.ends.sort_unstable();
        self.copied.sort_unstable();
        self.copied.dedup();
        // Only the documents of a fingerprint with an end or copies, by fingerprint and id.
        let named: std::collections::HashSet<u64> = self
            .ends
            .iter()
            .map(|e| e.0)
            .chain(self.copied.iter().copied())
            .collect();
        let ids = &self.ids;
        let text = |&(_, start, end): &(u64, usize, usize)| {
            std::str::from_utf8(&ids[start..end]).expect("ids are added as strings")
        };
        let mut documents: Vec<(u64, &str)> = self
            .documents
            .iter()
            .filter(|d| named.contains(&d.0))
            .map(|d| (d.0, text(d)))
            .collect();
        documents.sort_unstable();
        let documents = &documents;
        let chunks = |fp: u64| -> Result<Vec<Vec<String>>> {
            let start = documents.partition_point(|d| d.0 < fp);
            let end = documents.partition_point(|d| d.0 <= fp);
            if start == end {
                return Err(Error::input(format!(
                    "no document of fingerprint {fp:016x} in the part that holds its pairs"
                )));
            }
            let n = self.chunks_of(fp) as usize;
            let size = (end - start).div_ceil(n).max(1);
            let mut out: Vec<Vec<String>> = documents[start..end]
                .chunks(size)
                .map(|chunk| chunk.iter().map(|d| d.1.to_string()).collect())
                .collect();
            out.resize(n, Vec::new());
            Ok(out)
        };
        for run in self.ends.chunk_by(|x, y| x.0 == y.0) {
            let fp = run[0].0;
            let mine = chunks(fp)?;
            for &(_, other, distance) in run {
                let (a, b) = (fp.min(other), fp.max(other));
                let of_b = fp == b;
                let theirs = self.chunks_of(other);
                for (c, ids) in mine.iter().enumerate() {
                    for o in 0..theirs {
                        let (i, j) = if of_b { (o, c as u32) } else { (c as u32, o) };
                        emit(&Half {
                            a,
                            b,
                            i,
                            j,
                            of_b,
                            ids: ids.clone(),
                            distance,
                        })?;
                    }
                }
            }
        }
        for &fp in &self.copied {
            let mine = chunks(fp)?;
            for (i, ids) in mine.iter().enumerate() {
                for (j, theirs) in mine.iter().enumerate().skip(i) {
                    let half = |of_b, ids: &Vec<String>| Half {
                        a: fp,
                        b: fp,
                        i: i as u32,
                        j: j as u32,
                        of_b,
                        ids: ids.clone(),
                        distance: 0,
                    };
                    emit(&half(false, ids))?;
                    if j > i {
                        emit(&half(true, theirs))?;
                    }
                }
            }
        }
        Ok(())
    }
}
