//! What happens to the records a read skips (with [`crate::ReadOptions::skip_invalid`]): each is
//! counted, written to the [`Rejects`] file when there is one, and the read fails when more
//! are skipped than [`MaxSkipped`] allows, so nothing is stored from an input that is mostly
//! invalid.
//!
//! A rejects file holds a line per skipped record, in input order:
//! `SOURCE<TAB>LINE<TAB>REASON<TAB>RECORD`. SOURCE is the file (or `<stdin>`, or the name
//! the caller gave), LINE its 1-based line (a Parquet row number; empty for a whole text
//! file), REASON what is wrong (tabs and line ends in either made spaces), and RECORD the
//! line as read, byte for byte, its line end dropped (a Parquet row's read columns as a JSON
//! object; empty for a text file, which is the record itself).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::write::batch::ReadSummary;

/// Where a read's skipped records go: a file, or memory (a server answers with them).
/// Clones share it: the reads of one command write to one place.
#[derive(Clone)]
pub struct Rejects {
    /// The file's path; None in memory.
    path: Option<PathBuf>,
    out: Arc<Mutex<Target>>,
}

enum Target {
    File(std::io::BufWriter<std::fs::File>),
    Memory(Vec<u8>),
}

/// The records kept in memory, as a request's answer lists them:
/// `[{"line", "reason", "record"}]` (the record as text, invalid UTF-8 replaced); a file's
/// rejects are in the file, and its JSON form is empty.
impl serde::Serialize for Rejects {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        /// One skipped record in the answer.
        #[derive(serde::Serialize)]
        struct Reject {
            line: Option<u64>,
            reason: String,
            record: String,
        }
        serializer.collect_seq(
            self.lines()
                .into_iter()
                .map(|(_, line, reason, record)| Reject {
                    line,
                    reason,
                    record: String::from_utf8_lossy(&record).into_owned(),
                }),
        )
    }
}

impl std::fmt::Debug for Rejects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Rejects").field(&self.path).finish()
    }
}

impl Rejects {
    /// Creates (or empties) the rejects file at `path`.
    pub fn create(path: &Path) -> Result<Rejects> {
        let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
        Ok(Rejects {
            path: Some(path.to_path_buf()),
            out: Arc::new(Mutex::new(Target::File(std::io::BufWriter::new(file)))),
        })
    }

    /// Rejects kept in memory, which its JSON form lists (a request's answer).
    pub fn in_memory() -> Rejects {
        Rejects {
            path: None,
            out: Arc::new(Mutex::new(Target::Memory(Vec::new()))),
        }
    }

    /// The file's path (None in memory).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The rejects lines held in memory, each as (source, line, reason, record); empty for
    /// a file.
    fn lines(&self) -> Vec<(String, Option<u64>, String, Vec<u8>)> {
        let out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let Target::Memory(bytes) = &*out else {
            return Vec::new();
        };
        bytes
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| {
                let mut fields = line.splitn(4, |&b| b == b'\t');
                let mut text = || String::from_utf8_lossy(fields.next().unwrap_or_default());
                let (source, number, reason) = (
                    text().into_owned(),
                    text().parse().ok(),
                    text().into_owned(),
                );
                (
                    source,
                    number,
                    reason,
                    fields.next().unwrap_or_default().to_vec(),
                )
            })
            .collect()
    }

    /// Writes what is buffered to the file, and syncs it.
    pub fn finish(&self) -> Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let (Target::File(file), Some(path)) = (&mut *out, &self.path) else {
            return Ok(());
        };
        file.flush().map_err(|e| Error::io(path, e))?;
        file.get_ref().sync_all().map_err(|e| Error::io(path, e))
    }

    /// Writes the record `record` that `error` skipped.
    fn write(&self, error: &Error, record: &[u8]) -> Result<()> {
        let line = reject_line(error, record);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        match (&mut *out, &self.path) {
            (Target::File(file), Some(path)) => {
                file.write_all(&line).map_err(|e| Error::io(path, e))
            }
            (Target::File(_), None) => unreachable!("a file has a path"),
            (Target::Memory(bytes), _) => {
                bytes.extend_from_slice(&line);
                Ok(())
            }
        }
    }
}

/// The rejects line of `record`, skipped for `error`.
pub(crate) fn reject_line(error: &Error, record: &[u8]) -> Vec<u8> {
    let (source, line, problem) = match error {
        Error::Input {
            origin,
            line,
            problem,
        } => (
            origin.clone().unwrap_or_default(),
            line.map(|l| l.to_string()).unwrap_or_default(),
            problem.clone(),
        ),
        other => (String::new(), String::new(), other.to_string()),
    };
    let field = |text: &str| text.replace(['\t', '\n', '\r'], " ");
    let mut out = format!("{}\t{line}\t{}\t", field(&source), field(&problem)).into_bytes();
    let record = record.strip_suffix(b"\n").unwrap_or(record);
    out.extend_from_slice(record.strip_suffix(b"\r").unwrap_or(record));
    out.push(b'\n');
    out
}

/// How many records a read may skip before it fails: a count, or a percentage of the
/// records read. Spelled `N` or `P%` by every client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MaxSkipped {
    /// At most this many.
    Count(u64),
    /// At most this percentage of the records read, rounded up.
    Percent(f64),
}

impl Default for MaxSkipped {
    /// 1% of the records read, rounded up (so one skip in a short input is allowed).
    fn default() -> Self {
        MaxSkipped::Percent(1.0)
    }
}

impl MaxSkipped {
    /// Reads `N` (a count) or `P%` (a percentage, 0 to 100).
    ///
    /// ```
    /// use simhashdb::MaxSkipped;
    /// assert_eq!(MaxSkipped::parse("10")?, MaxSkipped::Count(10));
    /// assert_eq!(MaxSkipped::parse("0.5%")?, MaxSkipped::Percent(0.5));
    /// assert!(MaxSkipped::parse("101%").is_err());
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<MaxSkipped> {
        let bad = || {
            Error::input(format!(
                "max skipped {text:?}: expected a count (such as 100) or a percentage of the \
                 records read (such as 1%)"
            ))
        };
        match text.strip_suffix('%') {
            Some(percent) => match percent.trim().parse::<f64>() {
                Ok(p) if (0.0..=100.0).contains(&p) => Ok(MaxSkipped::Percent(p)),
                _ => Err(bad()),
            },
            None => text
                .trim()
                .parse()
                .map(MaxSkipped::Count)
                .map_err(|_| bad()),
        }
    }

    /// The most records a read of `records` records may skip.
    pub fn allowed(self, records: u64) -> u64 {
        match self {
            MaxSkipped::Count(n) => n,
            MaxSkipped::Percent(p) => (records as f64 * p / 100.0).ceil() as u64,
        }
    }
}

impl std::fmt::Display for MaxSkipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaxSkipped::Count(n) => write!(f, "{n}"),
            MaxSkipped::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// Counts a record skipped for `error` in `summary`, and writes it to `rejects`.
pub(crate) fn skip(
    summary: &mut ReadSummary,
    rejects: Option<&Rejects>,
    error: Error,
    record: &[u8],
) -> Result<()> {
    if let Some(rejects) = rejects {
        rejects.write(&error, record)?;
    }
    summary.skip(error);
    Ok(())
}

/// Fails a read that skipped more records than `max_skipped` allows; also writes the
/// rejects file out.
pub(crate) fn check(
    summary: &ReadSummary,
    max_skipped: MaxSkipped,
    rejects: Option<&Rejects>,
) -> Result<()> {
    if let Some(rejects) = rejects {
        rejects.finish()?;
    }
    let allowed = max_skipped.allowed(summary.lines);
    if summary.skipped <= allowed {
        return Ok(());
    }
    let first = summary.first_skipped.first().cloned().unwrap_or_default();
    let place = match rejects.map(Rejects::path) {
        Some(Some(path)) => format!("every one is in {} (--rejects)", path.display()),
        Some(None) => "the rejects list every one".to_string(),
        None => "--rejects FILE lists every one".to_string(),
    };
    Err(Error::input(format!(
        "{} of {} records were invalid, more than --max-skipped {} allows ({allowed}): nothing \
         was taken from the input; the first: {first}; {place}",
        summary.skipped, summary.lines, max_skipped
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert_eq!(MaxSkipped::default().allowed(3), 1);
        assert_eq!(MaxSkipped::default().allowed(100), 1);
        assert_eq!(MaxSkipped::default().allowed(101), 2);
        assert_eq!(MaxSkipped::default().allowed(0), 0);
        assert_eq!(MaxSkipped::parse("0").unwrap().allowed(1000), 0);
        assert_eq!(MaxSkipped::parse("100%").unwrap().allowed(7), 7);
        for bad in ["", "-1", "x%", "-1%", "1e3", "5 %x"] {
            assert!(MaxSkipped::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn reject_lines_keep_the_record_as_read() {
        let error = Error::input_at("a\tb.tsv", Some(3), "bad\tthing");
        let line = reject_line(&error, b"x\ty\tz\r\n");
        assert_eq!(line, b"a b.tsv\t3\tbad thing\tx\ty\tz\n");
    }
}
