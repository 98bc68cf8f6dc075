//! Asking the CPU for memory a few steps before it is read: writing a run visits the ids of a
//! batch in id-hash order and again in fingerprint order, each a jump to a random place in
//! the batch's id buffer, and a cache miss per id cost more than encoding it; the check before
//! it reads the batch's fingerprints and id ends in id-hash order.

/// How many items ahead [`ahead`] asks for: far enough to cover a miss that is a page walk
/// and a memory read (docs/benchmarks.md, "Prefetch distance", says how it was chosen).
pub(crate) const AHEAD: usize = 48;

/// The items of `items`, in order; as each is handed out, the first bytes of `bytes(item)` of
/// the item [`AHEAD`] places later are asked into the cache (a hint that changes no result).
pub(crate) fn ahead<'a, T>(
    items: &'a [T],
    bytes: impl Fn(&T) -> &[u8] + 'a,
) -> impl Iterator<Item = &'a T> + 'a {
    items.iter().enumerate().map(move |(i, item)| {
        if let Some(later) = items.get(i + AHEAD) {
            prefetch(bytes(later).as_ptr());
        }
        item
    })
}

/// Asks the CPU for the cache line of `value` (a hint that changes no result).
#[inline(always)]
pub(crate) fn value<T>(value: &T) {
    prefetch((value as *const T).cast())
}

/// Asks the CPU for the cache lines where `bytes` begin and end (a hint that changes no
/// result): a sketch of 128 bytes spans two or three lines.
#[inline(always)]
pub(crate) fn slice(bytes: &[u8]) {
    if let Some(last) = bytes.last() {
        prefetch(bytes.as_ptr());
        prefetch(last);
    }
}

#[inline(always)]
fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing the program sees and cannot fault, whatever the
        // address; SSE, which it needs, is part of every x86-64 CPU.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
