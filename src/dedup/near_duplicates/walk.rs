//! The pair walk: every document pair of the graph handed out one at a time, in a fixed order,
//! never held: serially ([`NearDuplicates::for_each_pair`]), in batches from a cursor
//! ([`NearDuplicates::next_pairs`]), or formatted by parallel workers and emitted in order
//! ([`NearDuplicates::for_each_pair_parallel`]).

use rayon::prelude::*;

use super::verified::Recent;
use super::NearDuplicates;

/// Candidate pairs per segment of [`NearDuplicates::for_each_pair_parallel`].
const SEGMENT: usize = 1 << 15;

/// Where a walk over the pairs of a [`NearDuplicates`] stands ([`NearDuplicates::next_pairs`]):
/// start from `PairCursor::default()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairCursor {
    /// The node whose pairs are being handed out.
    node: usize,
    /// None: the node's own pairs; Some(e): those of edge e (from this node).
    edge: Option<usize>,
    /// The next pair: the node's i-th document with the other side's j-th.
    i: usize,
    j: usize,
}

impl NearDuplicates {
    /// Calls `f(a, b, distance, jaccard)` on every document pair (a < b by bytes; `jaccard`
    /// when verified, None for a pair kept unverified), expanded one at a time, in this order: fingerprints ascending; for
    /// each, first the pairs of the documents that share it (distance 0), then its pairs with
    /// each larger fingerprint in turn, ascending; within those, the documents of each
    /// fingerprint in id order. The same store gives the same order.
    pub fn for_each_pair<E>(
        &self,
        f: impl FnMut(&str, &str, u32, Option<f64>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        self.next_pairs(&mut PairCursor::default(), usize::MAX, f)
            .map(|_| ())
    }

    /// [`NearDuplicates::for_each_pair`]'s pairs, in its order, handed out in parallel: the
    /// candidates are cut into segments of about 32,768 pairs (whole rows of a block),
    /// each segment's pairs are given to `f` on a worker thread with a buffer of its own from
    /// `new`, and the buffers are handed to `emit` in order, on the calling thread, while the
    /// next segments are being formatted. For writers whose formatting costs as much as the
    /// write (a pair list of 1e8 lines); memory: two windows of a few segments per thread.
    pub fn for_each_pair_parallel<B: Send, E: Send>(
        &self,
        new: impl Fn() -> B + Sync,
        f: impl Fn(&mut B, &str, &str, u32, Option<f64>) -> std::result::Result<(), E> + Sync,
        mut emit: impl FnMut(B) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let window = 4 * rayon::current_num_threads().max(1);
        let format = |batch: Vec<(PairCursor, usize)>| {
            batch
                .into_par_iter()
                .map(|(mut cursor, candidates)| {
                    let mut buffer = new();
                    let mut recent = Recent::new();
                    self.walk(&mut cursor, candidates, |i, j, distance| {
                        if let Some((a, b, jaccard)) = self.pair(i, j, &mut recent) {
                            f(&mut buffer, a, b, distance, jaccard)?;
                        }
                        Ok(true)
                    })?;
                    Ok(buffer)
                })
                .collect::<std::result::Result<Vec<B>, E>>()
        };
        let mut segments = self.segments();
        let mut formatted: Vec<B> = Vec::new();
        std::thread::scope(|scope| loop {
            let batch: Vec<(PairCursor, usize)> = segments.by_ref().take(window).collect();
            let last = batch.is_empty();
            let next = (!last).then(|| scope.spawn(|| format(batch)));
            let emitted = formatted.drain(..).try_for_each(&mut emit);
            let Some(next) = next else { return emitted };
            let next = next
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            emitted?;
            formatted = next?;
        })
    }

    /// The candidates cut into segments `(start, candidates)` of at least [`SEGMENT`]
    /// candidates (but the last), each starting at a row of a block, in the walk's order.
    fn segments(&self) -> impl Iterator<Item = (PairCursor, usize)> + '_ {
        let size = |n: usize| self.starts[n + 1] - self.starts[n];
        // Every row of every block, as (start of the row, candidates in it).
        let rows = (0..self.nodes.len()).flat_map(move |n| {
            let own = (0..size(n)).map(move |i| {
                let start = PairCursor {
                    node: n,
                    edge: None,
                    i,
                    j: 0,
                };
                (start, size(n) - 1 - i)
            });
            let first = self.edges.partition_point(|e| (e.0 as usize) < n);
            let edges = self.edges[first..]
                .iter()
                .take_while(move |e| e.0 as usize == n)
                .enumerate()
                .flat_map(move |(k, &(_, b, _))| {
                    (0..size(n)).map(move |i| {
                        let start = PairCursor {
                            node: n,
                            edge: Some(first + k),
                            i,
                            j: 0,
                        };
                        (start, size(b as usize))
                    })
                });
            own.chain(edges)
        });
        let mut rows = rows.filter(|&(_, candidates)| candidates > 0).peekable();
        std::iter::from_fn(move || {
            let (start, mut candidates) = rows.next()?;
            while candidates < SEGMENT {
                match rows.next() {
                    Some((_, more)) => candidates += more,
                    None => break,
                }
            }
            Some((start, candidates))
        })
    }

    /// Hands at most `max` pairs from where `cursor` stands to `f`, in
    /// [`NearDuplicates::for_each_pair`]'s order, and moves `cursor` past them; returns how
    /// many it handed out (fewer than `max` only at the end). For clients that pull pairs in
    /// batches (Python's iterator) instead of being called for each.
    pub fn next_pairs<E>(
        &self,
        cursor: &mut PairCursor,
        max: usize,
        mut f: impl FnMut(&str, &str, u32, Option<f64>) -> std::result::Result<(), E>,
    ) -> std::result::Result<usize, E> {
        let mut recent = Recent::new();
        self.walk(cursor, max, |i, j, distance| {
            match self.pair(i, j, &mut recent) {
                Some((a, b, jaccard)) => f(a, b, distance, jaccard).map(|()| true),
                None => Ok(false),
            }
        })
    }

    /// Walks the candidate pairs `(i, j, distance)` (documents i and j) from `cursor` in
    /// [`NearDuplicates::for_each_pair`]'s order, calling `f` on each until `max` of them were
    /// counted (`f` says whether a candidate counts); returns how many were.
    fn walk<E>(
        &self,
        cursor: &mut PairCursor,
        max: usize,
        mut f: impl FnMut(usize, usize, u32) -> std::result::Result<bool, E>,
    ) -> std::result::Result<usize, E> {
        let mut counted = 0;
        while cursor.node < self.nodes.len() {
            let n = cursor.node;
            let own = self.starts[n]..self.starts[n + 1];
            // The block of pairs the cursor is in: the node's own, or one edge's.
            let (other, distance) = match cursor.edge {
                None => (own.clone(), 0),
                Some(e) => {
                    let (_, b, distance) = self.edges[e];
                    (
                        self.starts[b as usize]..self.starts[b as usize + 1],
                        distance,
                    )
                }
            };
            while cursor.i < own.len() {
                let first_j = if cursor.edge.is_none() {
                    cursor.i + 1
                } else {
                    0
                };
                cursor.j = cursor.j.max(first_j);
                while cursor.j < other.len() {
                    if counted == max {
                        return Ok(counted);
                    }
                    let (i, j) = (own.start + cursor.i, other.start + cursor.j);
                    cursor.j += 1;
                    if f(i, j, distance)? {
                        counted += 1;
                    }
                }
                cursor.i += 1;
                cursor.j = 0;
            }
            cursor.i = 0;
            let next = match cursor.edge {
                None => self.edges.partition_point(|e| (e.0 as usize) < n),
                Some(e) => e + 1,
            };
            if self.edges.get(next).is_some_and(|e| e.0 as usize == n) {
                cursor.edge = Some(next);
            } else {
                cursor.edge = None;
                cursor.node += 1;
            }
        }
        Ok(counted)
    }

    /// Documents `i` and `j` as a pair `(a, b, jaccard)` with a < b, unless verification
    /// drops it.
    fn pair(&self, i: usize, j: usize, recent: &mut Recent) -> Option<(&str, &str, Option<f64>)> {
        let jaccard = match &self.verified {
            None => None,
            Some(v) => match v.jaccard(i, j, recent) {
                similarity if !v.keeps(similarity) => return None,
                similarity => similarity,
            },
        };
        let (x, y) = (&*self.docs[i].0, &*self.docs[j].0);
        let (a, b) = if x < y { (x, y) } else { (y, x) };
        Some((a, b, jaccard))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs handed out in parallel segments come in the order, and are the pairs, of the
    /// serial walk, also when a hot fingerprint's pairs span many segments and when its
    /// documents have edges of their own.
    #[test]
    fn parallel_pairs_are_the_serial_ones_in_order() {
        let mut documents: Vec<(String, u64)> = Vec::new();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // A hot page (700 copies: 244,650 pairs), near copies of it, and random pages with
        // near copies of their own.
        let hot = 0x0123_4567_89ab_cdef;
        for i in 0..700 {
            documents.push((format!("hot-{i:04}"), hot));
        }
        for i in 0..40 {
            documents.push((format!("near-{i:02}"), hot ^ (1 << (i % 64)) ^ (1 << 7)));
        }
        for i in 0..3000 {
            let fp = next();
            documents.push((format!("page-{i:04}"), fp));
            if i % 3 == 0 {
                documents.push((format!("page-{i:04}-b"), fp ^ (1 << (next() % 64))));
            }
        }
        let near = NearDuplicates::of_documents(&documents, 3, None, &()).unwrap();
        let mut serial: Vec<String> = Vec::new();
        near.for_each_pair(|a, b, d, j| {
            serial.push(format!("{a} {b} {d} {j:?}"));
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(serial.len() as u64, near.summary().pairs);
        assert!(
            serial.len() > 8 * SEGMENT,
            "many segments: {}",
            serial.len()
        );
        let mut parallel: Vec<String> = Vec::new();
        let mut buffers = 0;
        near.for_each_pair_parallel(
            Vec::new,
            |buffer: &mut Vec<String>, a, b, d, j| {
                buffer.push(format!("{a} {b} {d} {j:?}"));
                Ok::<_, ()>(())
            },
            |buffer| {
                buffers += 1;
                parallel.extend(buffer);
                Ok(())
            },
        )
        .unwrap();
        assert!(buffers > 8);
        assert_eq!(parallel, serial);

        // An error from a worker stops the walk and is returned.
        let failed = near.for_each_pair_parallel(
            || (),
            |_, a, _, _, _| {
                if a == "page-2001" {
                    Err(a.to_string())
                } else {
                    Ok(())
                }
            },
            |()| Ok(()),
        );
        assert_eq!(failed, Err("page-2001".to_string()));
    }
}
