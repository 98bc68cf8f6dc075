//! The writer lock: one process at a time may change a store.
//!
//! `LOCK` in the store directory is held with an exclusive lock (std's `File::try_lock`, an
//! flock on Linux) for as long as a [`WriterLock`] lives, and holds the holder's pid for the
//! error message of the next one. The kernel releases the lock when the process dies, so a
//! killed writer never leaves a stale lock behind.
//!
//! Readers ask whether a writer is running ([`WriterLock::holder`]) without taking the lock:
//! even a shared flock would make a writer starting at that moment fail.
//!
//! A process that spawns another holds a copy of every descriptor in the child until the
//! child's exec closes it, and with it the lock of a store the process was writing: a store
//! dropped by one thread while another spawns a process stays locked, under this process's
//! own pid, for that moment. So a lock held under our own pid is waited for a little
//! ([`OWN_PID_GRACE`]) before it is reported.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How long a lock held under this process's own pid is waited for at least: a child being
/// spawned holds it until its exec (see the module docs), a moment.
const OWN_PID_GRACE: Duration = Duration::from_secs(1);

/// Held while a process may write to a store; released on drop.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the lock of the store at `dir` by locking its lock file `path`, or fails at once
    /// naming the pid that holds it.
    pub fn acquire(dir: &Path, path: &Path) -> Result<Self> {
        Self::acquire_within(dir, path, Duration::ZERO)
    }

    /// Takes the lock, waiting up to `wait` for its holder to release it; then fails naming
    /// the pid that holds it.
    pub fn acquire_within(dir: &Path, path: &Path, wait: Duration) -> Result<Self> {
        let start = Instant::now();
        let deadline = start + wait;
        let own_pid = std::process::id().to_string();
        loop {
            match Self::try_acquire(dir, path) {
                Err(Error::Locked { .. }) if Instant::now() < deadline => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    std::thread::sleep(left.min(Duration::from_millis(50)));
                }
                Err(Error::Locked { pid, .. })
                    if pid == own_pid && start.elapsed() < OWN_PID_GRACE =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                other => return other,
            }
        }
    }

    /// The pid holding the lock file `path`, if a process holds it, read from /proc/locks (so
    /// the probe takes no lock). None where /proc/locks cannot be read.
    pub fn holder(path: &Path) -> Option<u32> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        let dev = meta.dev();
        let file = format!(
            "{:02x}:{:02x}:{}",
            libc::major(dev),
            libc::minor(dev),
            meta.ino()
        );
        // The kernel lists the locks a page at a time, one read call each, and a lock taken or
        // released between two calls shifts the list under the reader, which can skip a line:
        // read in one call where the list fits a page, and look twice before saying none.
        let read_locks = || -> Option<String> {
            let mut locks = Vec::with_capacity(1 << 16);
            std::fs::File::open("/proc/locks")
                .and_then(|mut f| f.read_to_end(&mut locks))
                .ok()?;
            String::from_utf8(locks).ok()
        };
        let find = |locks: String| {
            locks.lines().find_map(|line| {
                // "1: FLOCK  ADVISORY  WRITE 5497 fe:00:10010882 0 EOF"; waiters have "->".
                let fields: Vec<&str> = line.split_whitespace().collect();
                match fields.as_slice() {
                    [_, "FLOCK", _, _, pid, id, ..] if *id == file => pid.parse().ok(),
                    _ => None,
                }
            })
        };
        find(read_locks()?).or_else(|| find(read_locks()?))
    }

    fn try_acquire(dir: &Path, path: &Path) -> Result<Self> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                return Err(Error::Locked {
                    path: dir.to_path_buf(),
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid.into()
                    },
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
        }
        file.set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| write!(file, "{}", std::process::id()))
            .map_err(|e| Error::io(path, e))?;
        Ok(WriterLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock released soon after under our own pid (as a child being spawned releases it at
    /// its exec) is taken; one held on is reported, naming our pid.
    #[test]
    fn a_lock_held_under_our_own_pid_is_waited_for_a_moment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let held = WriterLock::acquire(dir.path(), &path).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        let taken = WriterLock::acquire(dir.path(), &path).unwrap();
        release.join().unwrap();

        let started = Instant::now();
        let err = WriterLock::acquire(dir.path(), &path).unwrap_err();
        assert!(started.elapsed() >= OWN_PID_GRACE);
        let own = std::process::id().to_string();
        assert!(
            matches!(&err, Error::Locked { pid, .. } if *pid == own),
            "{err}"
        );
        drop(taken);
    }
}
