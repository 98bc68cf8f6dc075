//! What `verify` answers: a [`Report`] of what it checked and each [`Finding`], with where it is.

use std::path::{Path, PathBuf};

use crate::error::{corruption_location, Error, Result};
use crate::read::debris::Debris;

/// One problem `verify` found: where it is, as far as known, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The file (or directory) at fault.
    pub file: Option<PathBuf>,
    /// The table of that file.
    pub table: Option<String>,
    /// The block: the key it is filed under, as 16 hex digits.
    pub block: Option<String>,
    /// What is wrong.
    pub problem: String,
}

impl Finding {
    /// Where the problem is: `FILE table TABLE block BLOCK`, with the parts that are known.
    pub fn location(&self) -> String {
        corruption_location(
            self.file.as_deref(),
            self.table.as_deref(),
            self.block.as_deref(),
        )
    }
}

/// What `verify` checked and found.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Report {
    /// Every problem found, in the order found.
    pub findings: Vec<Finding>,
    /// Runs checked.
    pub runs: usize,
    /// Blocks whose checksum and structure were checked.
    pub blocks: u64,
    /// Live documents.
    pub documents: u64,
    /// Distinct fingerprints in the tables.
    pub fingerprints: u64,
    /// Files that redb's integrity check examined (with `deep`).
    pub deep_checked: usize,
    /// What killed writers left in `runs/` (a warning, not a finding: nothing reads it, and
    /// the next writer removes it).
    pub debris: Vec<Debris>,
}

/// The report as `verify --json` prints it (and Python's `verify` answers):
/// `{"clean", "findings": [{"location", "problem"}], "runs", "blocks", "documents",
/// "fingerprints", "deep_checked_files", "debris": [{"path", "bytes"}]}`.
impl serde::Serialize for Report {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Report", 8)?;
        out.serialize_field("clean", &self.findings.is_empty())?;
        out.serialize_field("findings", &self.findings)?;
        out.serialize_field("runs", &self.runs)?;
        out.serialize_field("blocks", &self.blocks)?;
        out.serialize_field("documents", &self.documents)?;
        out.serialize_field("fingerprints", &self.fingerprints)?;
        out.serialize_field("deep_checked_files", &self.deep_checked)?;
        out.serialize_field("debris", &self.debris)?;
        out.end()
    }
}

impl serde::Serialize for Finding {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Finding", 2)?;
        out.serialize_field("location", &self.location())?;
        out.serialize_field("problem", &self.problem)?;
        out.end()
    }
}

impl Report {
    pub(super) fn find(&mut self, file: &Path, table: Option<&str>, problem: impl Into<String>) {
        self.findings.push(Finding {
            file: Some(file.to_path_buf()),
            table: table.map(str::to_string),
            block: None,
            problem: problem.into(),
        });
    }

    /// Records a corruption as a finding; any other error ends the verification.
    pub(super) fn absorb(&mut self, result: Result<()>) -> Result<()> {
        match result {
            Err(Error::Corruption {
                file,
                table,
                block,
                problem,
            }) => {
                self.findings.push(Finding {
                    file,
                    table,
                    block,
                    problem,
                });
                Ok(())
            }
            other => other,
        }
    }
}
