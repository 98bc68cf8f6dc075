//! How a snapshot sizes the redb cache it reads through, chosen by the work the process does.

use super::{batch_cache_bytes, CacheSpread, DEFAULT_CACHE_BYTES, SCAN_CACHE_BYTES};
use crate::format::catalog::Catalog;

/// How [`Snapshot::open_with`](crate::Snapshot::open_with) sizes the cache it reads the
/// store's files through. The default suits a process that queries again and again (a
/// server, a notebook); a process that answers one batch of queries and exits, or that
/// streams every block once, does as well with less.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    cache: Cache,
    /// Whether the process reads each leaf once ([`OpenOptions::for_batch`],
    /// [`OpenOptions::for_scan`]): its cache is then spread evenly over the files, else by
    /// their bytes.
    one_pass: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Cache {
    /// [`DEFAULT_CACHE_BYTES`].
    #[default]
    Repeated,
    /// The bytes given.
    Bytes(usize),
    /// What holds the tables' branch pages ([`batch_cache_bytes`]).
    Batch,
    /// [`SCAN_CACHE_BYTES`].
    Scan,
}

impl OpenOptions {
    /// The default: a cache for repeated queries.
    pub fn new() -> Self {
        Self::default()
    }

    /// This many bytes of cache, spread over the store's files in proportion to their bytes;
    /// after [`OpenOptions::for_batch`] or [`OpenOptions::for_scan`], evenly, as theirs.
    pub fn cache_bytes(self, bytes: usize) -> Self {
        OpenOptions {
            cache: Cache::Bytes(bytes),
            ..self
        }
    }

    /// For a process that answers a batch of queries once (the `query` command): the cache
    /// that holds the tables' branch pages, 1/64 of the table bytes, 16 MiB to 1 GiB. Random
    /// queries rarely reread a leaf, so a larger cache would cost memory and no time.
    pub fn for_batch(self) -> Self {
        OpenOptions {
            cache: Cache::Batch,
            one_pass: true,
        }
    }

    /// For a process that streams every block once (an audit, an export): a scan never
    /// rereads a page, so a small cache saves memory and no time.
    pub fn for_scan(self) -> Self {
        OpenOptions {
            cache: Cache::Scan,
            one_pass: true,
        }
    }

    /// The cache for a store of `catalog` and how it is spread over the files: by their bytes
    /// for repeated queries, evenly for a process that reads each leaf once.
    pub(crate) fn spread_for(&self, catalog: &Catalog) -> CacheSpread {
        let bytes = match self.cache {
            Cache::Repeated => DEFAULT_CACHE_BYTES,
            Cache::Bytes(bytes) => bytes,
            Cache::Batch => batch_cache_bytes(catalog),
            Cache::Scan => SCAN_CACHE_BYTES,
        };
        if self.one_pass {
            CacheSpread::Even(bytes)
        } else {
            CacheSpread::ByBytes(bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Settings;

    #[test]
    fn one_pass_readers_spread_evenly_whatever_their_size_and_others_by_bytes() {
        let catalog = Catalog::new(Settings::default());
        let spread = |options: OpenOptions| options.spread_for(&catalog);
        assert_eq!(
            spread(OpenOptions::new()),
            CacheSpread::ByBytes(DEFAULT_CACHE_BYTES)
        );
        assert_eq!(
            spread(OpenOptions::new().cache_bytes(5 << 20)),
            CacheSpread::ByBytes(5 << 20)
        );
        assert_eq!(
            spread(OpenOptions::new().for_batch()),
            CacheSpread::Even(batch_cache_bytes(&catalog))
        );
        assert_eq!(
            spread(OpenOptions::new().for_batch().cache_bytes(5 << 20)),
            CacheSpread::Even(5 << 20)
        );
        assert_eq!(
            spread(OpenOptions::new().for_scan()),
            CacheSpread::Even(SCAN_CACHE_BYTES)
        );
    }
}
