//! Line-based input cut into chunks of whole lines, so they can be parsed in parallel.
//!
//! [`ChunkReader`] reads a group of chunks at a time; [`super::read_stream`] reads the next
//! group on the calling thread while the pool parses the one before, so reading and parsing
//! overlap instead of taking turns. Memory: two groups of two chunks per thread of the pool,
//! at most [`MAX_GROUP_CHUNKS`] each (32 MiB on two cores, 128 MiB at most), whatever the
//! input's size. A line that cannot be read is reported once the group after it is read:
//! at most that much input later.

use std::io::{BufRead, ErrorKind};

use crate::error::{Error, Result};
use crate::sys::progress::Progress;

/// Input is parsed in parallel in chunks of about this many bytes.
pub(super) const CHUNK_BYTES: usize = 4 << 20;

/// The most chunks in a group: beyond it, one thread reading is the bottleneck anyway, and
/// the groups' memory stops growing with the number of cores.
const MAX_GROUP_CHUNKS: usize = 16;

/// Whole lines of input (the last one may lack its line end at the end of the input).
pub(super) struct Chunk {
    /// The input's line number of the chunk's first line, counted from 0.
    pub first_line: u64,
    pub bytes: Vec<u8>,
}

/// Reads a stream as groups of [`Chunk`]s.
pub(super) struct ChunkReader<'s, R> {
    reader: R,
    /// Names the input in errors.
    source: &'s str,
    /// The start of a line that the last chunk read cut off.
    carried: Vec<u8>,
    /// Buffers of parsed chunks, filled again: fresh ones were memory the kernel cleared page
    /// by page, a quarter of the reading's CPU.
    spare: Vec<Vec<u8>>,
    next_line: u64,
    at_end: bool,
}

impl<'s, R: BufRead> ChunkReader<'s, R> {
    /// Reads `reader` from its line `first_line` (counted from 0) on.
    pub(super) fn new(reader: R, source: &'s str, first_line: u64) -> Self {
        ChunkReader {
            reader,
            source,
            carried: Vec::new(),
            spare: Vec::new(),
            next_line: first_line,
            at_end: false,
        }
    }

    /// The next chunks, as many as the pool parses well at once; none at the end of input.
    /// Each chunk's bytes are reported to `progress` as it is read.
    pub(super) fn next_group(&mut self, progress: &dyn Progress) -> Result<Vec<Chunk>> {
        let size = (rayon::current_num_threads() * 2).clamp(1, MAX_GROUP_CHUNKS);
        let mut group = Vec::with_capacity(size);
        while group.len() < size && !self.at_end {
            let mut bytes = self
                .spare
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(CHUNK_BYTES + 4096));
            bytes.append(&mut self.carried);
            self.fill(&mut bytes)?;
            if !self.at_end {
                match bytes.iter().rposition(|&b| b == b'\n') {
                    Some(end) => self.carried = bytes.split_off(end + 1),
                    // One line longer than a chunk: read on to its end.
                    None => {
                        let n = self
                            .reader
                            .read_until(b'\n', &mut bytes)
                            .map_err(|e| Error::io(self.source, e))?;
                        self.at_end = n == 0;
                    }
                }
            }
            if bytes.is_empty() {
                break;
            }
            progress.advance(bytes.len() as u64);
            let lines = newlines(&bytes) + u64::from(!bytes.ends_with(b"\n"));
            let first_line = self.next_line;
            self.next_line += lines;
            group.push(Chunk { first_line, bytes });
        }
        Ok(group)
    }

    /// Keeps the buffers of a parsed group for the groups to come.
    pub(super) fn recycle(&mut self, group: Vec<Chunk>) {
        self.spare.extend(group.into_iter().map(|chunk| {
            let mut bytes = chunk.bytes;
            bytes.clear();
            bytes
        }));
    }

    /// Reads into `bytes` until it holds [`CHUNK_BYTES`] or the input ends. A read this large
    /// bypasses the buffer of a `BufReader` whose buffer is empty: the bytes are copied once.
    fn fill(&mut self, bytes: &mut Vec<u8>) -> Result<()> {
        let mut filled = bytes.len();
        if filled >= CHUNK_BYTES {
            return Ok(());
        }
        bytes.resize(CHUNK_BYTES, 0);
        let result = loop {
            match self.reader.read(&mut bytes[filled..]) {
                Ok(0) => {
                    self.at_end = true;
                    break Ok(());
                }
                Ok(n) => {
                    filled += n;
                    if filled == CHUNK_BYTES {
                        break Ok(());
                    }
                }
                // A signal during the read: read again (as `read_until` does).
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => break Err(Error::io(self.source, e)),
            }
        };
        bytes.truncate(filled);
        result
    }
}

fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}
