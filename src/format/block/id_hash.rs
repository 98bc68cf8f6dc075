//! The id hash: the key documents are ordered by (the docs blocks' key, stored or, from format
//! 6, computed from the id), and what id filters keep the top bits of.

/// The stable 64-bit hash that orders documents: XXH3-64 with seed 0 of the id's UTF-8 bytes.
/// It spreads ids evenly so a batch sorts by radix, and it never changes between versions.
pub fn id_hash(id: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(id)
}
