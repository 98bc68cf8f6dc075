//! What becomes of a request's invalid records: skipped up to a limit, and listed in the answer.

use super::*;

/// What becomes of a request's invalid records: `skip_invalid=true` skips them, up to
/// `max_skipped` (N or P%, default 1%), and the answer lists each in `rejects`.
#[derive(Clone)]
pub(super) struct Skips {
    skip_invalid: bool,
    max_skipped: MaxSkipped,
    rejects: Rejects,
}

impl Skips {
    pub(super) fn of(skip_invalid: bool, max_skipped: Option<&str>) -> Result<Skips, ApiError> {
        let max_skipped = max_skipped
            .map(MaxSkipped::parse)
            .transpose()
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        Ok(Skips {
            skip_invalid: skip_invalid || max_skipped.is_some(),
            max_skipped: max_skipped.unwrap_or_default(),
            rejects: Rejects::in_memory(),
        })
    }

    /// Read options for a request body in `format` (None: detected) with these skips.
    pub(super) fn options(
        &self,
        format: Option<InputFormat>,
        fingerprint_format: FingerprintFormat,
    ) -> ReadOptions {
        ReadOptions {
            format,
            fingerprint_format,
            skip_invalid: self.skip_invalid,
            max_skipped: self.max_skipped,
            rejects: Some(self.rejects.clone()),
            ..ReadOptions::default()
        }
    }

    /// Adds `rejects`: [{"line", "reason", "record"}] for every record skipped.
    pub(super) fn answer(&self, answer: &mut Value) {
        if !self.skip_invalid {
            return;
        }
        let rejects: Vec<Value> = self
            .rejects
            .lines()
            .into_iter()
            .map(|(_, line, reason, record)| {
                json!({
                    "line": line,
                    "reason": reason,
                    "record": String::from_utf8_lossy(&record),
                })
            })
            .collect();
        answer["rejects"] = json!(rejects);
    }
}
