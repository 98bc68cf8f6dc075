//! A fingerprint as every output writes it: 16 lowercase hex digits (JSON included, where a
//! number above 2^53 would lose bits in most readers).

/// `fingerprint` as 16 lowercase hex digits.
pub(crate) fn format(fingerprint: u64) -> String {
    format!("{fingerprint:016x}")
}

/// Serializes a fingerprint field as [`format`] writes it (`#[serde(serialize_with)]`).
pub(crate) fn serialize<S: serde::Serializer>(fingerprint: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{fingerprint:016x}"))
}
