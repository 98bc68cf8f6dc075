//! Blocks kept decoded by a long-lived reader, as a page cache keeps pages: a lookup walks a
//! block held here with no page lookup, checksum or decompression. Reading a format 8 docs
//! block (a zstd frame of a few KB of entries) and a named postings block through redb for
//! every match made a pinned query about twice filing's time (docs/benchmarks.md, "Decoded
//! blocks"). A block is kept as the reader that missed it had it (decompressed, checked),
//! so that a miss costs little more than a lookup without the cache.
//!
//! Bounded by bytes; what has not been used since the clock hand last passed it is forgotten
//! first (CLOCK). A run's blocks never change, so a block held here is never stale.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use super::ascending_blocks::split_block_key;
use crate::error::Result;
use crate::format::block::entries;
use crate::format::block::named_postings;

/// A block's key as the cache orders it: a redb block key split into its leading u64 (big
/// endian) and the rest, which orders as the bytes do and compares mostly integers.
pub(crate) type BlockKey = (u64, Box<[u8]>);

/// The redb block key `key` (8 big-endian bytes and a tail) as a [`BlockKey`]; None when
/// shorter than 8 bytes.
pub(crate) fn parse_key(key: &[u8]) -> Option<BlockKey> {
    split_block_key(key).map(|(head, tail)| (head, tail.into()))
}

/// A block as it is kept: checked, decompressed, walked again with no more work.
pub(crate) trait Decoded: Sized {
    /// The stored block `block`, checked.
    fn read(block: &[u8]) -> Result<Self>;
    /// The memory it holds, about.
    fn bytes(&self) -> usize;
}

impl Decoded for entries::Expanded {
    fn read(block: &[u8]) -> Result<Self> {
        entries::Expanded::of(block)
    }
    fn bytes(&self) -> usize {
        self.bytes()
    }
}

impl Decoded for named_postings::Checked {
    fn read(block: &[u8]) -> Result<Self> {
        named_postings::Checked::of(block)
    }
    fn bytes(&self) -> usize {
        self.bytes()
    }
}

/// What a held block knows of the blocks before it in its file.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Before {
    /// Every block before it ends below this key (the lookup that read it started there).
    EndsBelow(u64),
    /// The block right before it is the one under this key (read just before it).
    Block(BlockKey),
}

impl Before {
    /// Whether every block before this one ends below `key`.
    fn ends_below(&self, key: &BlockKey) -> bool {
        match self {
            Before::EndsBelow(bound) => *bound <= key.0,
            Before::Block(last) => last < key,
        }
    }
}

/// Decoded blocks of one table of one file, at most a budget of bytes.
pub(crate) struct DecodedBlocks<B> {
    budget: usize,
    /// Read-locked by lookups (a hit only reads the map and sets a block's `used`), written
    /// by [`Self::keep`].
    held: RwLock<Held<B>>,
}

struct Held<B> {
    /// Each block with what is known of the blocks before it.
    blocks: BTreeMap<BlockKey, (Arc<Kept<B>>, Before)>,
    /// Every block of `blocks`, in the order the clock hand visits them.
    hand: VecDeque<Arc<Kept<B>>>,
    bytes: usize,
}

/// A block held, as lookups are handed it.
pub(crate) struct Kept<B> {
    block: B,
    key: BlockKey,
    /// Used since the clock hand last passed.
    used: AtomicBool,
    /// What it counts for in [`Held::bytes`].
    cost: usize,
}

impl<B> std::ops::Deref for Kept<B> {
    type Target = B;
    fn deref(&self) -> &B {
        &self.block
    }
}

impl<B> Kept<B> {
    /// The greatest key the block holds: its key's head.
    pub(crate) fn last_key(&self) -> u64 {
        self.key.0
    }

    /// The block's redb key.
    pub(crate) fn redb_key(&self) -> Vec<u8> {
        entries::block_key(self.key.0, &self.key.1)
    }
}

/// Bytes a held block costs beyond its own: the map's node, the hand's slot, the Arc, the
/// keys' heads.
const OVERHEAD: usize = 160;

impl<B: Decoded> DecodedBlocks<B> {
    /// A cache of `budget` bytes, or None for none.
    pub(crate) fn new(budget: usize) -> Option<Self> {
        (budget > 0).then(|| DecodedBlocks {
            budget,
            held: RwLock::new(Held {
                blocks: BTreeMap::new(),
                hand: VecDeque::new(),
                bytes: 0,
            }),
        })
    }

    /// The blocks held here that together hold every entry of the file with a key within
    /// `lo..=hi`, in order, if they are all held: the first block whose last key is at least
    /// `lo` (when no block before it reaches `lo`), and each one right after it while the
    /// range goes on past the last.
    pub(crate) fn holding(&self, lo: u64, hi: u64) -> Option<Vec<Arc<Kept<B>>>> {
        let held = self.held.read().unwrap_or_else(|e| e.into_inner());
        let from: BlockKey = (lo, Box::default());
        let mut next = held
            .blocks
            .range((Bound::Included(&from), Bound::Unbounded));
        let (mut key, (first, before)) = next.next()?;
        if !before.ends_below(&from) {
            return None;
        }
        let mut blocks = vec![Arc::clone(first)];
        while blocks.last().expect("one at least").last_key() <= hi {
            let (following, (block, before)) = next.next()?;
            if !matches!(before, Before::Block(k) if k == key) {
                return None; // a block between them is not held
            }
            blocks.push(Arc::clone(block));
            key = following;
        }
        for block in &blocks {
            block.used.store(true, Ordering::Relaxed);
        }
        Some(blocks)
    }

    /// The file's first block whose redb key is at least `key`, if it is held (and known to
    /// be the first). Marks it used as [`Self::holding`] does, but a miss keeps nothing:
    /// this is for readers of many blocks in order (a batch of queries), which should not
    /// push out what single lookups come back to.
    pub(crate) fn first_at_least(&self, key: &[u8]) -> Option<Arc<Kept<B>>> {
        let key = parse_key(key)?;
        let held = self.held.read().unwrap_or_else(|e| e.into_inner());
        let (_, (block, before)) = held
            .blocks
            .range((Bound::Included(&key), Bound::Unbounded))
            .next()?;
        if !before.ends_below(&key) {
            return None;
        }
        block.used.store(true, Ordering::Relaxed);
        Some(Arc::clone(block))
    }

    /// Keeps `block`, the block stored under `key`, with what is known of the blocks
    /// `before` it, then forgets what the clock hand finds unused until the rest fits; a
    /// block larger than the whole budget is not kept. A block already held learns `before`.
    pub(crate) fn keep(&self, key: BlockKey, before: Before, block: B) -> Arc<Kept<B>> {
        let before_bytes = match &before {
            Before::Block(k) => k.1.len(),
            Before::EndsBelow(_) => 0,
        };
        let cost = block.bytes() + key.1.len() * 2 + before_bytes + OVERHEAD;
        let kept = Arc::new(Kept {
            block,
            key: key.clone(),
            used: AtomicBool::new(false),
            cost,
        });
        if cost > self.budget {
            return kept;
        }
        let mut held = self.held.write().unwrap_or_else(|e| e.into_inner());
        match held.blocks.entry(key) {
            Entry::Occupied(mut slot) => {
                // Read again by a lookup it could not answer: keep what tells more. (The key it
                // may learn is not counted: a few bytes against a block's thousands.)
                let better = match (&slot.get().1, &before) {
                    (Before::EndsBelow(old), Before::EndsBelow(new)) => new < old,
                    (Before::EndsBelow(_), Before::Block(_)) => true,
                    (Before::Block(_), _) => false,
                };
                if better {
                    slot.get_mut().1 = before;
                }
                return Arc::clone(&slot.get().0);
            }
            Entry::Vacant(slot) => {
                slot.insert((Arc::clone(&kept), before));
            }
        }
        held.bytes += cost;
        held.hand.push_back(Arc::clone(&kept));
        while held.bytes > self.budget {
            let Some(old) = held.hand.pop_front() else {
                break;
            };
            if old.used.swap(false, Ordering::Relaxed) {
                held.hand.push_back(old);
            } else {
                held.blocks.remove(&old.key);
                held.bytes -= old.cost;
            }
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::block::docs::{self, id_hash, DocState};
    use crate::format::block::entries::{Expanded, Keys};
    use crate::format::block::entry_writer::EntryWriter;

    /// The stored docs blocks of documents `ids` (fingerprint i for the i-th), with their keys,
    /// compressed as format 8 writes them.
    fn blocks_of(ids: &[String]) -> Vec<(BlockKey, Vec<u8>)> {
        let mut entries: Vec<(u64, &[u8], DocState)> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let state = match i % 7 {
                    0 => DocState::Deleted { batch: 3 },
                    _ => DocState::Live {
                        fingerprint: i as u64,
                        batch: 1,
                    },
                };
                (id_hash(id.as_bytes()), id.as_bytes(), state)
            })
            .collect();
        entries.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let mut out = Vec::new();
        let mut emit = |key: &[u8], block: &[u8]| {
            out.push((parse_key(key).unwrap(), block.to_vec()));
            Ok(())
        };
        let mut writer = EntryWriter::new(Keys::IdHashes).compressed();
        for (hash, id, state) in entries {
            writer.push(hash, id, &state, &mut emit).unwrap();
        }
        writer.finish(&mut emit).unwrap();
        out
    }

    type Found = Vec<(u64, String, DocState)>;

    /// Every entry of `blocks` with a hash within `lo..=hi`.
    fn brute_force(blocks: &[(BlockKey, Vec<u8>)], lo: u64, hi: u64) -> Found {
        let mut all = Vec::new();
        for (_, block) in blocks {
            entries::decode::<DocState>(block, |hash, id, state| {
                if (lo..=hi).contains(&hash) {
                    all.push((hash, id.to_string(), state));
                }
                true
            })
            .unwrap();
        }
        all
    }

    /// Adds the entries of `block` within `lo..=hi` to `found`.
    fn walk(block: &Expanded, lo: u64, hi: u64, found: &mut Found) {
        block
            .decode_each_from(None, |hash, id, reader| {
                let state = docs::read_state(reader)?;
                if (lo..=hi).contains(&hash) {
                    found.push((hash, id.to_string(), state));
                }
                Ok(hash <= hi)
            })
            .unwrap();
    }

    /// What the blocks `cache` holds answer for `lo..=hi`, if they hold it.
    fn held(cache: &DecodedBlocks<Expanded>, lo: u64, hi: u64) -> Option<Found> {
        let mut found = Vec::new();
        for block in cache.holding(lo, hi)? {
            walk(&block, lo, hi, &mut found);
        }
        Some(found)
    }

    /// What a reader's lookup of `lo..=hi` in the file finds, keeping the blocks it reads as
    /// the docs file does: the first block whose key reaches `lo`, then the next ones.
    fn read_through(
        cache: &DecodedBlocks<Expanded>,
        blocks: &[(BlockKey, Vec<u8>)],
        lo: u64,
        hi: u64,
    ) -> Found {
        let mut found = Vec::new();
        let mut before = Before::EndsBelow(lo);
        for (key, block) in blocks.iter().skip_while(|(key, _)| key.0 < lo) {
            let block = cache.keep(key.clone(), before, Expanded::of(block).unwrap());
            walk(&block, lo, hi, &mut found);
            if block.last_key() > hi {
                break;
            }
            before = Before::Block(key.clone());
        }
        found
    }

    /// Ranges that start and end in blocks, at their edges and across them.
    fn ranges(blocks: &[(BlockKey, Vec<u8>)], seed: u64) -> Vec<(u64, u64)> {
        let mut hashes: Vec<u64> = brute_force(blocks, 0, u64::MAX)
            .iter()
            .map(|e| e.0)
            .collect();
        hashes.dedup();
        let mut rng = seed;
        let mut next = || {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            rng >> 11
        };
        let mut out = vec![(0, u64::MAX), (0, 0), (u64::MAX, u64::MAX)];
        for _ in 0..2_000 {
            let a = hashes[next() as usize % hashes.len()];
            let width = [0, 1, 1 << 20, 1 << 40, 1 << 56][next() as usize % 5];
            let lo = a.saturating_sub(next() % (width + 1));
            out.push((lo, lo.saturating_add(width)));
            out.push((a, a));
        }
        out
    }

    #[test]
    fn answers_exactly_what_the_file_holds_or_nothing() {
        let ids: Vec<String> = (0..5_000).map(|i| format!("doc-{i:07}")).collect();
        let blocks = blocks_of(&ids);
        assert!(blocks.len() > 3, "several blocks");
        let last = blocks[blocks.len() - 1].0 .0;
        // Every block held, each knowing the one before it: every range that ends before the
        // file's last hash is answered (one past it might go on in a block not held).
        let all = DecodedBlocks::new(usize::MAX).unwrap();
        for (i, (key, block)) in blocks.iter().enumerate() {
            let before = match i {
                0 => Before::EndsBelow(0),
                _ => Before::Block(blocks[i - 1].0.clone()),
            };
            all.keep(key.clone(), before, Expanded::of(block).unwrap());
        }
        for (lo, hi) in ranges(&blocks, 1) {
            let answer = held(&all, lo, hi);
            assert!(
                answer.is_some() || hi >= last,
                "{lo:x}..={hi:x} not answered"
            );
            if let Some(found) = answer {
                assert!(found == brute_force(&blocks, lo, hi), "{lo:x}..={hi:x}");
            }
        }
        // Blocks held as lookups read them: every answer is the file's, and the ranges read
        // once are answered from memory the next time.
        let some = DecodedBlocks::new(usize::MAX).unwrap();
        let mut answered = 0;
        let mut found_first = 0;
        for (lo, hi) in ranges(&blocks, 2) {
            // A batch's lookup by key finds the file's first block at or after it, or nothing.
            if let Some(kept) = some.first_at_least(&lo.to_be_bytes()) {
                let first = blocks.iter().find(|(key, _)| key.0 >= lo).map(|b| &b.0);
                assert!(Some(&kept.key) == first, "{lo:x}");
                found_first += 1;
            }
            match held(&some, lo, hi) {
                Some(found) => {
                    assert!(found == brute_force(&blocks, lo, hi), "{lo:x}..={hi:x}");
                    answered += 1;
                }
                None => {
                    let found = read_through(&some, &blocks, lo, hi);
                    assert!(found == brute_force(&blocks, lo, hi), "{lo:x}..={hi:x}");
                    if hi < last {
                        assert!(held(&some, lo, hi) == Some(found), "{lo:x}..={hi:x} again");
                    }
                }
            }
        }
        assert!(answered > 1_000, "{answered} ranges answered");
        assert!(found_first > 1_000, "{found_first} first blocks found");
    }

    #[test]
    fn stays_within_its_budget_and_keeps_what_is_used() {
        let ids: Vec<String> = (0..20_000).map(|i| format!("doc-{i:07}")).collect();
        let blocks = blocks_of(&ids);
        let block = |i: usize| Expanded::of(&blocks[i].1).unwrap();
        let before = |i: usize| Before::Block(blocks[i - 1].0.clone());
        let one = block(1).bytes() + blocks[1].0 .1.len() * 3 + OVERHEAD;
        let cache = DecodedBlocks::new(one * 4).unwrap();
        cache.keep(blocks[1].0.clone(), before(1), block(1));
        let inside = brute_force(&blocks[1..2], 0, u64::MAX)[1].0;
        for (i, (key, _)) in blocks.iter().enumerate().skip(2) {
            cache.keep(key.clone(), before(i), block(i));
            // Block 1 is asked for between every two others: the clock keeps it.
            assert!(
                cache.holding(inside, inside).is_some(),
                "block 1 forgotten at {i}"
            );
            let held = cache.held.read().unwrap();
            assert!(held.bytes <= one * 4, "{} bytes held", held.bytes);
            assert_eq!(held.blocks.len(), held.hand.len());
        }
        // A block larger than the budget is handed back, not kept.
        let tiny = DecodedBlocks::new(1).unwrap();
        tiny.keep(blocks[1].0.clone(), before(1), block(1));
        assert!(tiny.held.read().unwrap().blocks.is_empty());
    }
}
