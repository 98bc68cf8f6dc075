//! Document blocks: which fingerprint each id has, ordered by `(id_hash(id), id)`.
//!
//! An entry block (see [`super::entries`]) whose key is [`id_hash`] of the id and whose payload
//! is `LEB128(batch << 1 | deleted)` followed, when not deleted, by the fingerprint as a u64
//! little-endian.

use super::entries::{Payload, PayloadReader};
pub use super::id_hash::id_hash;
use crate::error::Result;

/// What a run says of an id: the newest run that mentions an id decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocState {
    /// The id has this fingerprint, inserted by this batch.
    Live { fingerprint: u64, batch: u64 },
    /// The id was deleted by this batch.
    Deleted { batch: u64 },
}

impl Payload for DocState {
    fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            DocState::Live { fingerprint, batch } => {
                super::varint::encode(batch << 1, out);
                out.extend_from_slice(&fingerprint.to_le_bytes());
            }
            DocState::Deleted { batch } => super::varint::encode(batch << 1 | 1, out),
        }
    }

    fn decode(reader: &mut PayloadReader<'_, '_>) -> Result<Self> {
        let tag = reader.varint()?;
        let batch = tag >> 1;
        Ok(if tag & 1 == 1 {
            DocState::Deleted { batch }
        } else {
            DocState::Live {
                fingerprint: reader.u64()?,
                batch,
            }
        })
    }
}
