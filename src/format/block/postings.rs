//! Posting blocks: the ids of each fingerprint, ordered by `(fingerprint, id)`.
//!
//! An entry block (see [`super::entries`]) whose key is the fingerprint and whose payload is
//! `LEB128(batch)`, the batch that inserted the document (format 3 on; format 2's payload was
//! empty). The batch is the docs entry's, copied: the posting is the document's second copy,
//! from which repair restores a lost docs entry exactly.

use super::entries::{Payload, PayloadReader};
use crate::error::Result;

/// A posting's payload: the batch of the document `(fingerprint, id)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    pub batch: u64,
}

impl Payload for Posting {
    fn encode(&self, out: &mut Vec<u8>) {
        super::varint::encode(self.batch, out);
    }

    fn decode(reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
        Ok(Posting {
            batch: reader.varint()?,
        })
    }
}
