//! Writes gathered in memory and issued in offset order, neighbouring pages in one call.
//!
//! redb writes a transaction's pages one 4 KiB page at a time, in the order of its cache's
//! stripes: a run's tables cost one `pwrite` a page, and the kernel takes and dirties each
//! page-cache page in a call of its own (docs/benchmarks.md, "Gathered writes"). [`Gathered`]
//! holds up to [`GATHER_BYTES`] of writes and issues them sorted by offset, each stretch of
//! neighbouring pages with one `pwritev`. Larger gatherings wrote no faster.
//!
//! Invariant: what the file holds, as anyone reading it through the owner sees it, is what
//! the writes made it. So every call that reads or resizes the file or makes it durable
//! issues the gathered writes first ([`Gathered::issue`]), and a write that overlaps a
//! gathered one issues them before it is gathered, so a later write always lands after an
//! earlier one. Between two such calls the order in which pages reach the file is not
//! observable: the kernel may write dirty pages back in any order, and nothing is durable
//! before a sync.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;

/// Bytes gathered before they are issued.
pub(crate) const GATHER_BYTES: usize = 1 << 20;

/// Writes to one file, not yet issued.
#[derive(Debug, Default)]
pub(crate) struct Gathered {
    /// The written bytes, in the order they came.
    bytes: Vec<u8>,
    /// Each write's file offset, and its place in `bytes` (start, length).
    writes: BTreeMap<u64, (usize, usize)>,
}

impl Gathered {
    /// Gathers `data`, to be written at `offset`; issues what was gathered first when `data`
    /// overlaps it or would not fit beside it, and writes `data` at once when it is larger
    /// than the gathering holds. Returns the bytes issued (to count for writeback).
    pub(crate) fn write(&mut self, file: &File, offset: u64, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        let mut issued = 0;
        if self.overlaps(offset, data.len()) || self.bytes.len() + data.len() > GATHER_BYTES {
            issued += self.issue(file)?;
        }
        if data.len() > GATHER_BYTES {
            write_all_at(file, offset, data)?;
            return Ok(issued + data.len());
        }
        if self.bytes.capacity() == 0 {
            self.bytes.reserve_exact(GATHER_BYTES);
        }
        self.writes.insert(offset, (self.bytes.len(), data.len()));
        self.bytes.extend_from_slice(data);
        Ok(issued)
    }

    /// Writes everything gathered to `file`, in offset order; returns the bytes written.
    /// Nothing stays gathered, even when writing fails: the error is the caller's, as a failed
    /// write's would be.
    pub(crate) fn issue(&mut self, file: &File) -> io::Result<usize> {
        let writes = std::mem::take(&mut self.writes);
        let mut stretch: Vec<&[u8]> = Vec::new();
        let (mut stretch_offset, mut stretch_end) = (0, 0);
        let mut result = Ok(());
        for (offset, (start, len)) in writes {
            if !stretch.is_empty() && (offset != stretch_end || stretch.len() == MAX_SLICES) {
                result = result.and(write_slices_at(file, stretch_offset, &stretch));
                stretch.clear();
            }
            if stretch.is_empty() {
                stretch_offset = offset;
            }
            stretch.push(&self.bytes[start..start + len]);
            stretch_end = offset + len as u64;
        }
        if !stretch.is_empty() {
            result = result.and(write_slices_at(file, stretch_offset, &stretch));
        }
        let issued = self.bytes.len();
        self.bytes.clear();
        result.map(|()| issued)
    }

    /// Whether `len` bytes at `offset` overlap a gathered write.
    fn overlaps(&self, offset: u64, len: usize) -> bool {
        let end = offset + len as u64;
        let before = self.writes.range(..end).next_back();
        before.is_some_and(|(&at, &(_, n))| at + n as u64 > offset)
    }
}

/// Slices one `pwritev` takes at most (Linux's `IOV_MAX`).
const MAX_SLICES: usize = 1024;

/// Writes `slices`, one after another, at `offset`.
fn write_slices_at(file: &File, offset: u64, slices: &[&[u8]]) -> io::Result<()> {
    if let [one] = slices {
        return write_all_at(file, offset, one);
    }
    let total: usize = slices.iter().map(|s| s.len()).sum();
    let written = pwritev(file, offset, slices)?;
    if written == total {
        return Ok(());
    }
    // A short write (rare: a signal, a full disk): the rest slice by slice, which reports
    // the error if there is one.
    let mut at = offset;
    let mut skip = written;
    for slice in slices {
        let done = skip.min(slice.len());
        skip -= done;
        write_all_at(file, at + done as u64, &slice[done..])?;
        at += slice.len() as u64;
    }
    Ok(())
}

fn write_all_at(file: &File, offset: u64, data: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, data, offset)
}

/// One `pwritev` call; returns the bytes written.
fn pwritev(file: &File, offset: u64, slices: &[&[u8]]) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let iov: Vec<libc::iovec> = slices
        .iter()
        .map(|s| libc::iovec {
            iov_base: s.as_ptr() as *mut libc::c_void,
            iov_len: s.len(),
        })
        .collect();
    loop {
        // SAFETY: each iovec points into a slice borrowed for the call; the descriptor is open
        // for as long as `file` lives.
        let n = unsafe {
            libc::pwritev(
                file.as_raw_fd(),
                iov.as_ptr(),
                iov.len() as libc::c_int,
                offset as libc::off_t,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A write of `len` bytes of `byte` at `offset`, or (None) a call that issues.
    type Step = Option<(u64, usize, u8)>;

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            1 => Just(None),
            // Pages and odd sizes, overlapping often in a file of a few pages, and now and
            // then one larger than the gathering holds.
            8 => (0u64..40_000, 1usize..9000, any::<u8>()).prop_map(Some),
            1 => (0u64..40_000, Just(GATHER_BYTES + 1), any::<u8>()).prop_map(Some),
        ]
    }

    proptest! {
        /// Whatever the order, overlaps and sizes of the writes, the file ends as writing
        /// each at once would have made it.
        #[test]
        fn the_file_is_what_the_writes_made_it(steps in proptest::collection::vec(step(), 0..60)) {
            let dir = tempfile::tempdir().unwrap();
            let file = File::options().read(true).write(true).create_new(true)
                .open(dir.path().join("f")).unwrap();
            let mut gathered = Gathered::default();
            let mut expected: Vec<u8> = Vec::new();
            let (mut issued, mut written) = (0, 0);
            for step in steps {
                match step {
                    None => issued += gathered.issue(&file).unwrap(),
                    Some((offset, len, byte)) => {
                        let data = vec![byte; len];
                        written += len;
                        issued += gathered.write(&file, offset, &data).unwrap();
                        let end = offset as usize + len;
                        if expected.len() < end {
                            expected.resize(end, 0);
                        }
                        expected[offset as usize..end].copy_from_slice(&data);
                    }
                }
            }
            issued += gathered.issue(&file).unwrap();
            prop_assert!(gathered.writes.is_empty() && gathered.bytes.is_empty());
            prop_assert_eq!(issued, written, "every byte written is counted once");
            prop_assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), expected);
        }
    }

    /// Neighbouring pages that came in any order are written in one call, and the file holds
    /// them in place.
    #[test]
    fn neighbouring_pages_go_out_in_one_stretch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = File::create(&path).unwrap();
        let mut gathered = Gathered::default();
        for page in [3u64, 1, 0, 2, 7] {
            let issued = gathered
                .write(&file, page * 4096, &[page as u8; 4096])
                .unwrap();
            assert_eq!(issued, 0, "page {page} waits to be issued");
        }
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        assert_eq!(gathered.issue(&file).unwrap(), 5 * 4096);
        let back = std::fs::read(&path).unwrap();
        assert_eq!(back.len(), 8 * 4096);
        for (page, chunk) in back.chunks(4096).enumerate() {
            let byte = if (4..7).contains(&page) {
                0
            } else {
                page as u8
            };
            assert!(chunk.iter().all(|&b| b == byte), "page {page}");
        }
    }

    /// A write that fails is reported when the writes are issued, and nothing stays
    /// gathered to be written later.
    #[test]
    fn a_failed_write_is_reported_when_issued() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"").unwrap();
        let read_only = File::open(&path).unwrap();
        let mut gathered = Gathered::default();
        gathered.write(&read_only, 0, &[1; 4096]).unwrap();
        gathered.write(&read_only, 4096, &[2; 4096]).unwrap();
        let err = gathered.issue(&read_only).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EBADF));
        assert!(gathered.writes.is_empty() && gathered.bytes.is_empty());
        assert_eq!(gathered.issue(&read_only).unwrap(), 0);
    }
}
