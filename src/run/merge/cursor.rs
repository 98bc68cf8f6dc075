//! The heads of a merge's sorted inputs: each input read a block at a time, and the inputs
//! whose heads are least.

use crate::error::Result;
use crate::format::block::entries::Payload;
use crate::format::block::sketches::SketchEntry;
use crate::run::{EntryScan, KeyScan};

/// A source of sorted items, a block at a time.
pub(super) trait Blocks<T> {
    /// Replaces `out` with the next block's items; false at the end.
    fn next_block(&mut self, out: &mut Vec<T>) -> Result<bool>;
}

impl<P: Payload> Blocks<(u64, String, P)> for EntryScan<P> {
    fn next_block(&mut self, out: &mut Vec<(u64, String, P)>) -> Result<bool> {
        EntryScan::next_block(self, out)
    }
}

/// One run's keys of a table over several shard files, in order.
pub(super) struct KeyChain(
    pub(super) std::vec::IntoIter<KeyScan>,
    pub(super) Option<KeyScan>,
);

impl Blocks<u64> for KeyChain {
    fn next_block(&mut self, out: &mut Vec<u64>) -> Result<bool> {
        loop {
            if let Some(scan) = &mut self.1 {
                if scan.next_block(out)? {
                    return Ok(true);
                }
            }
            match self.0.next() {
                Some(scan) => self.1 = Some(scan),
                None => return Ok(false),
            }
        }
    }
}

/// The head of one sorted input.
pub(super) struct Cursor<B, T> {
    source: B,
    pub(super) block: Vec<T>,
    pub(super) at: usize,
}

impl<B: Blocks<T>, T> Cursor<B, T> {
    pub(super) fn new(source: B) -> Result<Self> {
        let mut cursor = Cursor {
            source,
            block: Vec::new(),
            at: 0,
        };
        cursor.fill()?;
        Ok(cursor)
    }

    pub(super) fn peek(&self) -> Option<&T> {
        self.block.get(self.at)
    }

    pub(super) fn advance(&mut self) -> Result<()> {
        self.at += 1;
        self.fill()
    }

    /// Skips empty blocks so that `peek` is None only at the end.
    pub(super) fn fill(&mut self) -> Result<()> {
        while self.at >= self.block.len() {
            self.at = 0;
            if !self.source.next_block(&mut self.block)? {
                self.block.clear();
                return Ok(());
            }
        }
        Ok(())
    }
}

/// The indices of the entry cursors whose heads are smallest by `(key, id)` (equal heads of
/// several inputs), in input order; empty when every cursor is exhausted.
pub(super) fn smallest<B, P>(cursors: &[Cursor<B, (u64, String, P)>], out: &mut Vec<usize>)
where
    B: Blocks<(u64, String, P)>,
{
    out.clear();
    let mut best: Option<(u64, &str)> = None;
    for (i, c) in cursors.iter().enumerate() {
        let Some((key, id, _)) = c.peek() else {
            continue;
        };
        let k = (*key, id.as_str());
        match best {
            Some(b) if k > b => {}
            Some(b) if k == b => out.push(i),
            _ => {
                best = Some(k);
                out.clear();
                out.push(i);
            }
        }
    }
}

impl Cursor<EntryScan<SketchEntry>, (u64, String, SketchEntry)> {
    /// Moves past the entries before `(key, id)`; returns the entry at it, if there is one.
    pub(super) fn seek(&mut self, key: u64, id: &str) -> Result<Option<&SketchEntry>> {
        while let Some((k, i, _)) = self.peek() {
            if (*k, i.as_str()) >= (key, id) {
                break;
            }
            self.advance()?;
        }
        Ok(match self.peek() {
            Some((k, i, entry)) if *k == key && i == id => Some(entry),
            _ => None,
        })
    }
}
