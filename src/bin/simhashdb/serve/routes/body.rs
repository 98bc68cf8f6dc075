//! Request bodies: read within the limits, decompressed, parsed as JSON.

use super::*;

/// Reads a request body, refusing one over the limit (413) or one that takes too long (408).
pub(super) async fn read_body(
    service: &Service,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, ApiError> {
    let limit = service.limits.max_body;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is over the limit of {limit} bytes (--max-body-mib)"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout(
        service.limits.body_timeout,
        axum::body::to_bytes(body, limit),
    )
    .await
    {
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not arrive within {} s",
                service.limits.body_timeout.as_secs_f64()
            ),
        )),
        Ok(Err(e)) => {
            let over = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
                || e.to_string().contains("length limit");
            Err(if over {
                too_large()
            } else {
                ApiError::bad_request(format!("cannot read the request body: {e}"))
            })
        }
        Ok(Ok(bytes)) => decompressed_body(headers, bytes, limit),
    }
}

/// A body as its sender meant it: gzip or zstd decompressed (said by Content-Encoding, or
/// recognised by its first bytes, as the CLI reads files), within the body limit.
pub(super) fn decompressed_body(
    headers: &HeaderMap,
    bytes: Bytes,
    limit: usize,
) -> Result<Bytes, ApiError> {
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
    if let Some(encoding) =
        (encoding.as_ref()).filter(|e| !matches!(e.as_str(), "identity" | "gzip" | "zstd"))
    {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("Content-Encoding {encoding:?} is not read: send gzip, zstd or identity"),
        ));
    }
    // A body that is not what its Content-Encoding says is refused, not read as it is (an
    // empty one is no documents, whatever its encoding).
    let magic: &[u8] = match encoding.as_deref() {
        Some("gzip") => &[0x1f, 0x8b],
        Some("zstd") => &[0x28, 0xb5, 0x2f, 0xfd],
        _ => &[],
    };
    if !bytes.is_empty() && !bytes.starts_with(magic) {
        return Err(ApiError::bad_request(format!(
            "the body is not {}, as its Content-Encoding says",
            encoding.unwrap_or_default()
        )));
    }
    match simhashdb::Source::decompressed(&bytes, "request body", limit as u64) {
        Ok(std::borrow::Cow::Borrowed(_)) => Ok(bytes),
        Ok(std::borrow::Cow::Owned(content)) => Ok(Bytes::from(content)),
        Err(e) if e.kind() == simhashdb::ErrorKind::TooLarge => Err(ApiError {
            message: format!("{} (--max-body-mib)", e.message()),
            ..ApiError::from(e)
        }),
        Err(e) => Err(ApiError::from(e)),
    }
}

/// Parses a JSON body, an object, into `T`, naming what is wrong and where. (A derived `T`
/// would also take an array of its fields in order, which no request is documented to send.)
pub(super) fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.trim_ascii_start().first() == Some(&b'[') {
        return Err(ApiError::bad_request(
            "invalid JSON body: a JSON object is expected, not an array",
        ));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
}
