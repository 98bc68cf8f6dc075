//! Parquet in and out: documents and queries read from Parquet files, and the tables
//! simhashdb writes (documents, audit pairs, clusters) written as Parquet.
//!
//! Fingerprints are `int64` columns holding the fingerprint's 64 bits (two's complement, so
//! fingerprints at or above 2^63 read as negative numbers): Spark, pandas' defaults and most
//! Arrow readers lack an unsigned 64-bit type. On input a fingerprint column may also be
//! `uint64`, or strings in any form [`crate::FingerprintFormat`] reads. Ids are strings;
//! integer id columns are read as their decimal text. docs/format.md lists every column.

mod read;
mod write;

pub(crate) use read::{read_parquet, read_parquet_texts};
pub use write::ParquetTable;

/// A fingerprint as an `int64` column holds it: the same 64 bits.
pub(crate) fn fingerprint_to_i64(fingerprint: u64) -> i64 {
    fingerprint as i64
}

/// The fingerprint an `int64` column holds.
pub(crate) fn fingerprint_from_i64(value: i64) -> u64 {
    value as u64
}
