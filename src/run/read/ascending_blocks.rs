//! The blocks of a table (entry blocks or key blocks) in order: all of them, or those for keys
//! asked for in ascending order.

use std::borrow::Borrow;
use std::path::Path;

use redb::{AccessGuard, ReadOnlyTable};

use crate::error::{Error, Result};

/// Calls `f(redb key, block)` on every block of `table` (of the redb file at `path`), in
/// order, unchecked.
pub(super) fn for_each_block<K: redb::Key + 'static>(
    path: &Path,
    table: &ReadOnlyTable<K, &'static [u8]>,
    mut f: impl FnMut(K::SelfType<'_>, &[u8]) -> Result<()>,
) -> Result<()> {
    let range = table
        .range::<K::SelfType<'_>>(..)
        .map_err(|e| Error::redb(path, e))?;
    for item in range {
        let (key, block) = item.map_err(|e| Error::redb(path, e))?;
        f(key.value(), block.value())?;
    }
    Ok(())
}

/// The blocks of a table, found for keys asked for in ascending order: a key's block is the
/// first whose redb key (its last entry's) is at least it. Each is looked for among the few
/// blocks after the last one found before the table is searched from its root again: for
/// keys as dense as a batch's or an audit's that is the next block or the one after, and a
/// step along a leaf costs less than a descent.
pub(super) struct AscendingBlocks<'t, K: redb::Key + 'static> {
    table: &'t ReadOnlyTable<K, &'static [u8]>,
    /// Positioned after the last block found.
    after: Option<redb::Range<'static, K, &'static [u8]>>,
}

/// A block's redb key and the block.
pub(super) type Block<K> = (AccessGuard<'static, K>, AccessGuard<'static, &'static [u8]>);

impl<'t, K: redb::Key + 'static> AscendingBlocks<'t, K> {
    pub(super) fn new(table: &'t ReadOnlyTable<K, &'static [u8]>) -> Self {
        AscendingBlocks { table, after: None }
    }

    /// Blocks a key is looked for among before the table is searched (see [`Self::at_least`]).
    pub(super) const STEPS: u64 = 4;

    /// Makes the next [`Self::at_least`] search the table instead of stepping along from the
    /// last block found: for a key its caller knows is farther than [`Self::STEPS`] blocks
    /// away, where each block stepped over would be a page read (cold, a disk read) for
    /// nothing.
    pub(super) fn search_next(&mut self) {
        self.after = None;
    }

    /// The first block whose key is at least `key`, or None when there is none; `key` must
    /// not be below a key asked for before. `reaches(last)` says whether a block's redb key
    /// `last` is at least `key`.
    pub(super) fn at_least<'k, KR>(
        &mut self,
        key: KR,
        reaches: impl Fn(&AccessGuard<'static, K>) -> bool,
    ) -> std::result::Result<Option<Block<K>>, redb::StorageError>
    where
        KR: Borrow<K::SelfType<'k>> + 'k,
    {
        if let Some(after) = self.after.as_mut() {
            for item in after.take(Self::STEPS as usize) {
                // A page stepped over that cannot be read is left to the search, which reads
                // only the pages a lookup of `key` needs, as a lookup of it alone would.
                let Ok((last, block)) = item else { break };
                if reaches(&last) {
                    return Ok(Some((last, block)));
                }
            }
        }
        let mut range = self.table.range::<KR>(key..)?;
        let found = range.next().transpose()?;
        self.after = Some(range);
        Ok(found)
    }
}

/// `(key, id)` of an entry block's redb key (see [`block_key`](crate::format::block::entries::block_key)).
pub(super) fn split_block_key(key: &[u8]) -> Option<(u64, &[u8])> {
    let (head, id) = key.split_at_checked(8)?;
    Some((u64::from_be_bytes(head.try_into().ok()?), id))
}
