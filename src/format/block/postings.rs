//! Posting blocks: the ids of each fingerprint, ordered by `(fingerprint, id)`.
//!
//! An entry block (see [`super::entries`]) whose key is the fingerprint and whose payload is
//! empty.

use super::entries::{Payload, PayloadReader};
use crate::error::Result;

/// Postings carry nothing besides `(fingerprint, id)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting;

impl Payload for Posting {
    fn encode(&self, _out: &mut Vec<u8>) {}

    fn decode(_reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
        Ok(Posting)
    }
}
