//! The list of the documents a dedup of files drops: `dedup --duplicates`' lines, or its
//! Parquet table.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::dedup::ingest::Verdict;
use crate::dedup::output::Target;
use crate::error::Result;

/// Whether `path` names a Parquet file (its extension says so).
pub(crate) fn is_parquet_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// Where the dropped documents go: lines, or a Parquet table (a name ending in .parquet).
pub(crate) enum DuplicateList<'w> {
    /// `ID<TAB>DUPLICATE_OF<TAB>DISTANCE[<TAB>JACCARD]<TAB>BATCH<TAB>LABEL<TAB>COMMITTED`.
    Lines(Target<'w>),
    /// [`crate::parquet::ParquetTable::dedup_duplicates`], and the path it goes to.
    #[cfg(feature = "parquet")]
    Parquet(Box<crate::parquet::ParquetTable>, PathBuf),
}

impl DuplicateList<'_> {
    /// Lists the duplicates among `verdicts`; `verified`: the dedup verifies with sketches.
    pub(crate) fn write(&mut self, verdicts: &[Verdict], verified: bool) -> Result<()> {
        let duplicates = verdicts.iter().filter(|v| !v.kept);
        match self {
            DuplicateList::Lines(out) => {
                let mut lines = Vec::new();
                for v in duplicates {
                    duplicate_line(&mut lines, v, verified);
                }
                out.write(&lines)
            }
            #[cfg(feature = "parquet")]
            DuplicateList::Parquet(table, _) => {
                for v in duplicates {
                    let of = v.duplicate_of.as_deref().unwrap_or_default();
                    let distance = v.distance.unwrap_or_default();
                    let stored_by = v.duplicate_batch.map(|batch| {
                        let label = v.duplicate_label.as_deref();
                        (
                            batch,
                            label,
                            v.duplicate_committed_utc.as_deref().unwrap_or_default(),
                        )
                    });
                    table.push_dedup_duplicate(&v.id, of, distance, v.jaccard, stored_by)?;
                }
                Ok(())
            }
        }
    }

    /// Puts the list in place (see [`Target::finish`]); returns the path of a file written.
    pub(crate) fn finish(self) -> Result<Option<PathBuf>> {
        match self {
            DuplicateList::Lines(target) => target.finish(),
            #[cfg(feature = "parquet")]
            DuplicateList::Parquet(table, path) => {
                table.finish()?;
                Ok(Some(path))
            }
        }
    }
}

/// A duplicate's line: `ID<TAB>DUPLICATE_OF<TAB>DISTANCE`, the Jaccard estimate (or
/// `unverified`) when `verified`, then the match's batch, label and commit time (empty for a
/// match of the input).
fn duplicate_line(lines: &mut Vec<u8>, v: &Verdict, verified: bool) {
    let of = v.duplicate_of.as_deref().unwrap_or_default();
    let distance = v.distance.unwrap_or_default();
    write!(lines, "{}\t{of}\t{distance}", v.id).expect("writes to memory");
    match (verified, v.jaccard) {
        (false, _) => Ok(()),
        (true, Some(j)) => write!(lines, "\t{j:.6}"),
        (true, None) => write!(lines, "\tunverified"),
    }
    .expect("writes to memory");
    let batch = v.duplicate_batch.map(|b| b.to_string()).unwrap_or_default();
    let label = v.duplicate_label.as_deref().unwrap_or_default();
    let committed = v.duplicate_committed_utc.as_deref().unwrap_or_default();
    writeln!(lines, "\t{batch}\t{label}\t{committed}").expect("writes to memory");
}
