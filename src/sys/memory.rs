//! What the engine asks of the OS about memory: how much the machine has, and huge pages for
//! the arrays read at random.

/// The machine's memory in bytes, where the system says (a container's memory limit is not
/// consulted).
pub(crate) fn physical_memory() -> Option<u64> {
    // SAFETY: sysconf reads system constants and has no other effect.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let bytes = u64::try_from(pages)
        .ok()?
        .checked_mul(u64::try_from(page).ok()?)?;
    (bytes > 0).then_some(bytes)
}

/// A vector for `capacity` elements whose memory the kernel may back with 2 MiB pages:
/// pinned arrays are read at random, and with 4 KiB pages nearly every probe also misses the
/// TLB (docs/benchmarks.md, "The warm read path and serve": faster loads and probes).
pub(crate) fn huge_page_vec<T>(capacity: usize) -> Vec<T> {
    let v = Vec::with_capacity(capacity);
    #[cfg(target_os = "linux")]
    {
        let bytes = capacity * std::mem::size_of::<T>();
        // The whole pages inside the allocation: madvise wants a page-aligned start.
        const PAGE: usize = 4096;
        let start = (v.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (v.as_ptr() as usize + bytes) & !(PAGE - 1);
        if bytes >= 4 << 20 && end > start {
            // SAFETY: the range lies inside memory this vector owns, and MADV_HUGEPAGE only
            // changes how the kernel backs it (never its contents); a failure is harmless.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}
