//! Integration tests: one binary (autotests = false), a module per subject.

mod architecture;
mod audit;
mod cli;
mod cli_reference;
mod compat;
mod corruption;
mod crash;
mod database;
mod dedup;
mod documents_cli;
mod engine;
#[cfg(feature = "serve")]
mod golden;
mod lifecycle;
mod lifecycle_cli;
mod notation;
#[cfg(feature = "parquet")]
mod parquet_io;
mod prefix_collisions;
mod public_api;
mod records;
mod rejects;
mod repair;
#[cfg(feature = "serve")]
mod serve;
mod server;
mod sketch;
mod tune;
mod util;
mod writers;
