//! Input bytes as the user meant them: gzip and zstd are decompressed (recognised by their
//! magic bytes, whatever the file is called), and a UTF-8 byte-order mark is dropped.

use std::io::{BufRead, BufReader, Cursor, Read};

use crate::error::{Error, Result};

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
const BOM: &[u8] = &[0xef, 0xbb, 0xbf];

/// Buffered reads of decompressed input.
const BUFFER_BYTES: usize = 1 << 20;

/// Bytes of content read ahead to look for a byte-order mark and a format's signature.
const HEAD_BYTES: usize = 64;

/// `reader`'s content, decompressed and without a byte-order mark. `source` names the input
/// in errors.
pub(crate) fn decoded<'a>(reader: impl Read + 'a, source: &str) -> Result<Box<dyn BufRead + 'a>> {
    let (head, rest) = peek(reader, ZSTD_MAGIC.len(), source)?;
    let is_gzip = head.starts_with(GZIP_MAGIC);
    let is_zstd = head.starts_with(ZSTD_MAGIC);
    let whole = Cursor::new(head).chain(rest);
    let content: Box<dyn Read + 'a> = if is_gzip {
        Box::new(flate2::read::MultiGzDecoder::new(whole))
    } else if is_zstd {
        Box::new(zstd::stream::read::Decoder::new(whole).map_err(|e| Error::io(source, e))?)
    } else {
        Box::new(whole)
    };
    // The first read of the result returns `head` alone: long enough for every format's
    // signature (Parquet's is 4 bytes), so detection sees it whole.
    let (mut head, rest) = peek(content, HEAD_BYTES, source)?;
    if head.starts_with(BOM) {
        head.drain(..BOM.len());
    }
    Ok(Box::new(BufReader::with_capacity(
        BUFFER_BYTES,
        Cursor::new(head).chain(rest),
    )))
}

/// The whole content of `reader`, decoded as [`decoded`] does.
pub(crate) fn decoded_bytes(reader: impl Read, source: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    decoded(reader, source)?
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(source, e))?;
    Ok(bytes)
}

/// `bytes` decompressed when they are gzip or zstd (by their magic bytes, as files are
/// read), else as they are; an error naming `source` when the content is over `limit` bytes
/// (a small body must not become gigabytes) or cannot be decompressed.
pub fn decompressed<'b>(
    bytes: &'b [u8],
    source: &str,
    limit: u64,
) -> Result<std::borrow::Cow<'b, [u8]>> {
    if !bytes.starts_with(GZIP_MAGIC) && !bytes.starts_with(ZSTD_MAGIC) {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    let mut content = Vec::new();
    // Bytes handed over are an input: a stream that does not decode is the input's fault.
    let as_input = |e: Error| match e {
        Error::Io { error, .. } => Error::input_at(source, None, error.to_string()),
        other => other,
    };
    decoded(bytes, source)
        .map_err(as_input)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut content)
        .map_err(|e| Error::input_at(source, None, format!("cannot be decompressed: {e}")))?;
    if content.len() as u64 > limit {
        return Err(Error::TooLarge {
            what: source.to_string(),
            problem: format!("decompressed, it is over the limit of {limit} bytes"),
        });
    }
    Ok(std::borrow::Cow::Owned(content))
}

/// The first `n` bytes of `reader` (fewer at its end), and `reader` past them.
fn peek<R: Read>(mut reader: R, n: usize, source: &str) -> Result<(Vec<u8>, R)> {
    let mut head = Vec::with_capacity(n);
    (&mut reader)
        .take(n as u64)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(source, e))?;
    Ok((head, reader))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read(bytes: &[u8]) -> Vec<u8> {
        decoded_bytes(bytes, "test").unwrap()
    }

    #[test]
    fn gzip_zstd_and_a_bom_are_taken_off_and_plain_input_is_kept() {
        let text = "\u{feff}a\t0x1\nb\t0x2\n".as_bytes();
        let plain = &text[3..];
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        let zst = zstd::encode_all(text, 1).unwrap();
        assert_eq!(read(text), plain);
        assert_eq!(read(plain), plain);
        assert_eq!(read(&gz), plain);
        assert_eq!(read(&zst), plain);
        for short in [&b""[..], b"a", b"\xef\xbb", b"\x1f"] {
            assert_eq!(read(short), short);
        }
        let err = decoded_bytes(&gz[..gz.len() / 2], "half.gz").unwrap_err();
        assert!(err.to_string().starts_with("half.gz: "), "{err}");
    }
}
