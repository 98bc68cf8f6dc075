//! The on-disk format: where files live in a store's directory ([`layout`]), the catalog that
//! names the live runs and the settings ([`catalog`], [`settings`]), and the checksummed blocks
//! every table is stored in ([`block`]). docs/format.md documents every byte.
//!
//! Depends on [`crate::sys`].

pub(crate) mod block;
pub(crate) mod catalog;
pub(crate) mod layout;
pub(crate) mod settings;
