//! What becomes of a request's invalid records: skipped up to a limit, and listed in the answer.

use super::*;

/// What becomes of a request's invalid records: `skip_invalid=true` skips them, up to
/// `max_skipped` (N or P%, default 1%), and the answer lists each in `rejects`.
#[derive(Clone)]
pub(super) struct Skips {
    /// The skips, in the options a body is read with.
    options: ReadOptions,
}

impl Skips {
    pub(super) fn of(skip_invalid: bool, max_skipped: Option<&str>) -> Result<Skips, ApiError> {
        let max_skipped = max_skipped
            .map(MaxSkipped::parse)
            .transpose()
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        // Every record a request skips is listed in its answer.
        let options = ReadOptions::default().skipping(skip_invalid, max_skipped, None);
        let rejects = options.skip_invalid.then(Rejects::in_memory);
        Ok(Skips {
            options: ReadOptions { rejects, ..options },
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
            ..self.options.clone()
        }
    }

    /// Adds `rejects`: [{"line", "reason", "record"}] for every record skipped.
    pub(super) fn answer(&self, answer: &mut Value) {
        let Some(rejects) = &self.options.rejects else {
            return;
        };
        answer["rejects"] = json!(rejects);
    }

    /// `error` with `rejects` too when records were skipped: a body refused past
    /// `max_skipped` lists every record it skipped, as its message says.
    pub(super) fn refused(&self, mut error: ApiError) -> ApiError {
        let rejects = self.options.rejects.as_ref().map(|r| json!(r));
        error.rejects = rejects.filter(|r| r.as_array().is_some_and(|a| !a.is_empty()));
        error
    }
}
