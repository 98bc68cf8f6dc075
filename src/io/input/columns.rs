//! Where a TSV line's id and fingerprint are: the first two fields, or where the columns a
//! header line (or `--columns`) names put them.

use crate::error::{Error, Result};
use crate::io::document::ReadOptions;

/// Where a TSV line's id and fingerprint are: the first two fields, unless
/// [`ReadOptions::columns`] (or a header line) names the columns. Other fields are the
/// record's own (passed through by dedup; `export`'s batch number is one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TsvColumns {
    id: usize,
    fingerprint: usize,
}

impl TsvColumns {
    /// The first two fields.
    pub(crate) const FIRST: TsvColumns = TsvColumns {
        id: 0,
        fingerprint: 1,
    };

    /// The columns `options` name.
    pub(crate) fn of(options: &ReadOptions) -> Result<TsvColumns> {
        let Some(names) = &options.columns else {
            return Ok(TsvColumns {
                id: 0,
                fingerprint: 1,
            });
        };
        let find = |name: &str, what: &str| {
            names.iter().position(|n| n == name).ok_or_else(|| {
                Error::input(format!(
                    "the columns ({}) name no {what} column {name:?} (say which with \
                     --{what}-field)",
                    names.join(", ")
                ))
            })
        };
        Ok(TsvColumns {
            id: find(&options.id_field, "id")?,
            fingerprint: find(&options.fingerprint_field, "fingerprint")?,
        })
    }

    /// Whether these are the first two fields.
    pub(crate) fn are_first(self) -> bool {
        self == TsvColumns {
            id: 0,
            fingerprint: 1,
        }
    }

    /// The id and the fingerprint of `line`.
    pub(crate) fn fields(self, line: &str) -> Result<(&str, &str)> {
        let (mut id, mut fingerprint) = (None, None);
        let mut count = 0;
        for (i, field) in line.split('\t').enumerate() {
            count += 1;
            if i == self.id {
                id = Some(field);
            }
            if i == self.fingerprint {
                fingerprint = Some(field);
            }
        }
        match (id, fingerprint) {
            (Some(id), Some(fingerprint)) => Ok((id, fingerprint)),
            _ => {
                let wanted = self.id.max(self.fingerprint) + 1;
                let hint = if count == 1 && line.contains(',') {
                    "; it has commas and no tab: CSV is not read, convert it to TSV or JSON \
                     Lines"
                } else if count == 1 {
                    "; plain text documents need the text format"
                } else {
                    ""
                };
                Err(Error::input(format!(
                    "expected at least {wanted} tab-separated fields (ID<TAB>FINGERPRINT, then \
                     any others), found {count}{hint}"
                )))
            }
        }
    }
}

/// Whether `line`, an input's first, is a header naming its columns: its fields include the
/// id and fingerprint field names of `options`.
pub(crate) fn is_header(line: &[u8], options: &ReadOptions) -> Option<Vec<String>> {
    let line = std::str::from_utf8(line).ok()?;
    let line = line.trim_end_matches(['\n', '\r']);
    let names: Vec<String> = line.split('\t').map(str::to_string).collect();
    let has = |name: &String| names.iter().any(|n| n == name);
    (has(&options.id_field) && has(&options.fingerprint_field)).then_some(names)
}
