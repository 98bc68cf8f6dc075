//! The fingerprints a merge drops from the tables (their every posting is gone), and the
//! hasher of the merge's sets of fingerprints and ids.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Fingerprints to drop from the tables: a hash set behind a bitmap of their leading bits.
/// Every table key is looked up, and the bitmap (about 16 bits per dead fingerprint, so it
/// stays in cache) turns away all but about 1 in 16 live ones without touching the set.
pub(super) struct DeadSet {
    bitmap: Vec<u64>,
    shift: u32,
    set: HashSet<u64, BuildHasherDefault<MulHasher>>,
}

impl DeadSet {
    pub(super) fn new(dead: Vec<u64>) -> Self {
        let bits = (dead.len() * 16)
            .next_power_of_two()
            .clamp(1 << 12, 1 << 30);
        let shift = 64 - bits.trailing_zeros();
        let mut bitmap = vec![0u64; bits / 64];
        for &fp in &dead {
            let i = (fp >> shift) as usize;
            bitmap[i / 64] |= 1 << (i % 64);
        }
        DeadSet {
            bitmap,
            shift,
            set: dead.into_iter().collect(),
        }
    }

    pub(super) fn contains(&self, fingerprint: u64) -> bool {
        let i = (fingerprint >> self.shift) as usize;
        self.bitmap[i / 64] >> (i % 64) & 1 == 1 && self.set.contains(&fingerprint)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// Fingerprints and ids hash by multiplication: fingerprints are uniform hashes already.
#[derive(Default)]
pub(super) struct MulHasher(u64);

impl Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The fingerprints a merge's postings walk finds dead: those whose every posting it saw
/// (in fingerprint order) was dropped.
#[derive(Default)]
pub(super) struct Dead {
    /// The fingerprint being walked, and whether it has a live posting so far.
    current: Option<(u64, bool)>,
    dead: Vec<u64>,
}

impl Dead {
    /// Notes a posting of `fingerprint` (at or after the last one noted), kept if `live`.
    pub(super) fn see(&mut self, fingerprint: u64, live: bool) {
        match &mut self.current {
            Some((current, any)) if *current == fingerprint => *any |= live,
            _ => {
                if let Some((current, false)) = self.current {
                    self.dead.push(current);
                }
                self.current = Some((fingerprint, live));
            }
        }
    }

    /// The dead fingerprints, ascending.
    pub(super) fn finish(mut self) -> Vec<u64> {
        if let Some((current, false)) = self.current {
            self.dead.push(current);
        }
        self.dead
    }
}
