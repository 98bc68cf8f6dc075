//! Named postings (format 8) read back to their documents: a posting names its documents by
//! their id-hash prefix, which the docs table, ordered by id hash, finds.

use super::DocsFile;
use crate::error::{Error, Result};
use crate::format::block::docs::DocState;
use crate::format::block::entries;
use crate::format::block::named_postings::{self, NamedPosting};
use crate::run::{NamedScan, DOCS_TABLE, POSTINGS_TABLE};

impl DocsFile {
    /// The named postings of fingerprints within `lo..=hi`, a block at a time.
    pub fn scan_named_postings_in(&self, lo: u64, hi: u64) -> Result<NamedScan> {
        NamedScan::new(self.path.clone(), &self.postings, lo, hi)
    }

    /// Calls `f` on every named posting, in order.
    pub(super) fn for_each_named_posting(&self, mut f: impl FnMut(NamedPosting)) -> Result<()> {
        let range = self
            .postings
            .range::<&[u8]>(..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (_, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            named_postings::decode(block.value(), |p| {
                f(p);
                true
            })
            .map_err(|e| e.at(&self.path, POSTINGS_TABLE, None))?;
        }
        Ok(())
    }

    /// Calls `f(id, batch)` on every live document of `fingerprint`: the docs entries its
    /// postings name.
    pub(super) fn named_ids_of(
        &self,
        fingerprint: u64,
        mut f: impl FnMut(&str, u64),
    ) -> Result<()> {
        let mut prefixes = Vec::new();
        let from = fingerprint.to_be_bytes();
        let range = self
            .postings
            .range(&from[..]..)
            .map_err(|e| Error::redb(&self.path, e))?;
        for item in range {
            let (_, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let mut past = false;
            named_postings::decode(block.value(), |p| {
                if p.fingerprint == fingerprint {
                    prefixes.push(p.prefix);
                }
                past = p.fingerprint > fingerprint;
                !past
            })
            .map_err(|e| e.at(&self.path, POSTINGS_TABLE, None))?;
            if past {
                break;
            }
        }
        for prefix in prefixes {
            self.documents_named(fingerprint, prefix, &mut f)?;
        }
        Ok(())
    }

    /// Calls `f(id, batch)` on every live docs entry whose id hash starts with `prefix` and
    /// whose fingerprint is `fingerprint`. A posting without one is damage: the run's
    /// postings and docs disagree.
    fn documents_named(
        &self,
        fingerprint: u64,
        prefix: u32,
        f: &mut impl FnMut(&str, u64),
    ) -> Result<()> {
        let (lo, hi) = named_postings::hash_range(prefix);
        let from = lo.to_be_bytes();
        let range = self
            .docs
            .range(&from[..]..)
            .map_err(|e| Error::redb(&self.path, e))?;
        let mut found = false;
        for item in range {
            let (_, block) = item.map_err(|e| Error::redb(&self.path, e))?;
            let mut past = false;
            entries::decode::<DocState>(block.value(), |hash, id, state| {
                past = hash > hi;
                if let (
                    false,
                    DocState::Live {
                        fingerprint: fp,
                        batch,
                    },
                ) = (hash < lo || past, state)
                {
                    if fp == fingerprint {
                        found = true;
                        f(id, batch);
                    }
                }
                !past
            })
            .map_err(|e| e.at(&self.path, DOCS_TABLE, None))?;
            if past {
                break;
            }
        }
        if !found {
            return Err(Error::corrupt(format!(
                "the posting ({fingerprint:016x}, prefix {prefix:08x}) names no live document \
                 of the run; verify the store"
            ))
            .at(&self.path, POSTINGS_TABLE, None));
        }
        Ok(())
    }
}
