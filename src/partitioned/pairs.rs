//! The second round of expanding fingerprint pairs into document pairs: the two halves of a
//! block meet in one task and give out its document pairs, a batch at a time.

use super::routing::Half;
use crate::error::{Error, Result};

/// The second round: the halves of one part of the work (every half of a block in the same
/// part), their document pairs handed out a batch at a time ([`Blocks::next_pairs`]).
#[derive(Debug, Default)]
pub struct Blocks {
    halves: Vec<Half>,
    /// Where the hand-out stands: the next block (its first half), and the pairs of it done.
    block: usize,
    done: u64,
    sorted: bool,
}

impl Blocks {
    /// No halves yet.
    pub fn new() -> Self {
        Blocks::default()
    }

    /// Adds a half.
    pub fn push(&mut self, half: Half) {
        self.halves.push(half);
        self.sorted = false;
    }

    /// Calls `f(a, b, distance)` (`a < b` by bytes) on at most `most` more document pairs;
    /// returns how many (fewer than `most` only at the end). Fails when a block misses a half.
    pub fn next_pairs(&mut self, most: usize, mut f: impl FnMut(&str, &str, u32)) -> Result<usize> {
        if !self.sorted {
            self.halves
                .sort_unstable_by_key(|h| (h.a, h.b, h.i, h.j, h.of_b));
            self.sorted = true;
        }
        let mut given = 0usize;
        while self.block < self.halves.len() && given < most {
            let first = &self.halves[self.block];
            let own_chunk = first.a == first.b && first.i == first.j;
            let (other, width) = if own_chunk {
                (None, 1)
            } else {
                match self.halves.get(self.block + 1) {
                    Some(h) if h.block() == first.block() && h.of_b && !first.of_b => (Some(h), 2),
                    _ => {
                        return Err(Error::input(format!(
                            "block ({:016x}, {:016x}, {}, {}) misses a half",
                            first.a, first.b, first.i, first.j
                        )))
                    }
                }
            };
            let xs: Vec<&str> = first.ids.iter().map(String::as_str).collect();
            let ys: Option<Vec<&str>> = other.map(|h| h.ids.iter().map(String::as_str).collect());
            let mut index = 0u64;
            let skip = self.done;
            let finished = document_pairs(&xs, ys.as_deref(), first.distance, |x, y, d| {
                if index >= skip {
                    if given == most {
                        return Err(());
                    }
                    f(x, y, d);
                    given += 1;
                }
                index += 1;
                Ok(())
            });
            match finished {
                Ok(()) => {
                    self.block += width;
                    self.done = 0;
                }
                Err(()) => self.done = index,
            }
        }
        Ok(given)
    }
}

/// Calls `f(a, b, distance)` on every pair of documents with ids `ids_a` and `ids_b` (the
/// documents of two fingerprints at `distance`), or with `ids_b` None on every pair within
/// `ids_a` (the copies of one fingerprint, at distance 0); `a < b` by bytes.
pub(crate) fn document_pairs<E>(
    ids_a: &[&str],
    ids_b: Option<&[&str]>,
    distance: u32,
    mut f: impl FnMut(&str, &str, u32) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let mut pair = |x: &str, y: &str| {
        if x < y {
            f(x, y, distance)
        } else {
            f(y, x, distance)
        }
    };
    match ids_b {
        Some(ids_b) => {
            for x in ids_a {
                for y in ids_b {
                    pair(x, y)?;
                }
            }
        }
        None => {
            for (i, x) in ids_a.iter().enumerate() {
                for y in &ids_a[i + 1..] {
                    pair(x, y)?;
                }
            }
        }
    }
    Ok(())
}
