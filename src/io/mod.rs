//! Input and output as users write it: documents, queries and ids from TSV, JSON Lines, text
//! files and directories, compressed or not ([`input`]), Parquet in and out ([`parquet`]), and
//! pictures of results as SVG or PNG (`picture`, feature `plot`).
//!
//! Depends on [`crate::write`] (documents are read into a batch), [`crate::similarity`] (text
//! is fingerprinted) and below.

pub(crate) mod document;
pub(crate) mod input;
pub(crate) mod notation;
pub(crate) mod output_file;
#[cfg(feature = "parquet")]
pub mod parquet;
#[cfg(feature = "plot")]
pub(crate) mod picture;
pub(crate) mod rejects;
pub(crate) mod source;
