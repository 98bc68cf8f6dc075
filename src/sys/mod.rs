//! The ground floor: what the engine asks of the operating system. The file backend every run
//! file is written through (and the faults tests inject in it) with its gathered writes,
//! writeback as files are written, the writer lock, a low-priority thread pool for work beside
//! queries, parallel work consumed in order, UTC dates, the one way long work reports
//! progress, and prefetching.
//!
//! Depends on nothing else in the crate but [`crate::error`].

pub mod background;
pub(crate) mod dates;
pub(crate) mod file_backend;
pub(crate) mod free_space;
pub(crate) mod gathered_writes;
pub(crate) mod lock;
pub(crate) mod memory;
pub(crate) mod ordered;
pub(crate) mod prefetch;
pub(crate) mod progress;
pub(crate) mod writeback;
