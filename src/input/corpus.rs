//! The texts of a corpus, for readers that need the words and not a fingerprint (the
//! Jaccard verification of an audit's pairs).

use std::io::BufRead;

use super::{json_id, ReadOptions};
use crate::error::{Error, Result};

/// Calls `f(id, text)` on every document of a JSON Lines corpus read from `reader`, whose id
/// and text are in `options.id_field` and `options.text_field` (ids follow the rules of
/// [`crate::read_documents`]). Blank lines are skipped; an invalid line fails with
/// `source:line: what is wrong`.
pub fn read_texts(
    reader: impl BufRead,
    source: &str,
    options: &ReadOptions,
    mut f: impl FnMut(String, String),
) -> Result<()> {
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line.map_err(|e| Error::io(source, e))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let at = |problem: String| Error::input_at(source, Some(i as u64 + 1), problem);
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&line).map_err(|e| at(format!("not a JSON object: {e}")))?;
        let id = json_id(&object, &options.id_field).map_err(at)?;
        let text = match object.get(&options.text_field) {
            Some(serde_json::Value::String(text)) => text.clone(),
            Some(_) => {
                return Err(at(format!(
                    "the {:?} field is not a string",
                    options.text_field
                )))
            }
            None => return Err(at(format!("no {:?} field", options.text_field))),
        };
        f(id, text);
    }
    Ok(())
}
