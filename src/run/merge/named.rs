//! The named postings of a merge (format 8): the inputs' postings merged as sets, each kept
//! where a live document of the merged run still makes it.

use super::cursor::{Blocks, Cursor};
use super::dead::Dead;
use super::entries::{ChangedGroups, Emit, EntryCounts};
use crate::error::Result;
use crate::format::block::named_postings::{NamedPosting, NamedWriter};
use crate::run::{NamedScan, RunReader};

impl Blocks<NamedPosting> for NamedScan {
    fn next_block(&mut self, out: &mut Vec<NamedPosting>) -> Result<bool> {
        NamedScan::next_block(self, out)
    }
}

/// Writes the postings of fingerprints within `lo..=hi` that the merged documents make;
/// returns their counts and the dead fingerprints (no posting left), ascending.
///
/// A posting `(fingerprint, prefix)` of an input stands for that input's live documents of
/// the fingerprint and prefix. Where no input's id of the prefix is mentioned by another
/// input (`changed` lacks it), every such document is still live, and documents of two inputs
/// are different documents: the posting is kept, shared if it was or if two inputs have it.
/// Elsewhere `changed` holds the fingerprints of the prefix's live documents after the merge,
/// which decide.
pub(super) fn merge_named_postings(
    inputs: &[RunReader],
    changed: &ChangedGroups,
    (lo, hi): (u64, u64),
    emit: &mut Emit<'_>,
) -> Result<(EntryCounts, Vec<u64>)> {
    let mut cursors = inputs
        .iter()
        .map(|r| Cursor::new(r.docs()?.scan_named_postings_in(lo, hi)?))
        .collect::<Result<Vec<_>>>()?;
    let mut writer = NamedWriter::default();
    let mut bytes = 0u64;
    let mut counted = |key: &[u8], block: &[u8]| {
        bytes += block.len() as u64;
        emit(key, block)
    };
    let mut dead = Dead::default();
    let mut written = 0u64;
    let mut read = 0u64;
    loop {
        // The least (fingerprint, prefix) at the inputs' heads, and the inputs holding it.
        let mut least: Option<NamedPosting> = None;
        let mut holders = 0usize;
        let mut shared = false;
        for cursor in &cursors {
            let Some(&p) = cursor.peek() else { continue };
            match least {
                Some(l) if (p.fingerprint, p.prefix) > (l.fingerprint, l.prefix) => {}
                Some(l) if (p.fingerprint, p.prefix) == (l.fingerprint, l.prefix) => {
                    holders += 1;
                    shared |= p.shared;
                }
                _ => {
                    least = Some(p);
                    holders = 1;
                    shared = p.shared;
                }
            }
        }
        let Some(head) = least else { break };
        let (fp, prefix) = (head.fingerprint, head.prefix);
        let live_documents = match changed.get(&u64::from(prefix)) {
            None => {
                if holders > 1 || shared {
                    2
                } else {
                    1
                }
            }
            Some(fingerprints) => {
                let at = fingerprints.partition_point(|&f| f < fp);
                fingerprints[at..]
                    .iter()
                    .take_while(|&&f| f == fp)
                    .take(2)
                    .count()
            }
        };
        let live = live_documents > 0;
        dead.see(fp, live);
        if live {
            let posting = NamedPosting {
                fingerprint: fp,
                prefix,
                shared: live_documents > 1,
            };
            writer.push(posting, &mut counted)?;
            written += 1;
        }
        for cursor in &mut cursors {
            if cursor
                .peek()
                .is_some_and(|p| (p.fingerprint, p.prefix) == (fp, prefix))
            {
                read += 1;
                cursor.advance()?;
            }
        }
    }
    let dead = dead.finish();
    writer.finish(&mut counted)?;
    let counts = EntryCounts {
        read,
        written,
        bytes,
    };
    Ok((counts, dead))
}
