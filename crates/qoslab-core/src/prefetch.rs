//! Software prefetch: a hint to start loading a cache line that an upcoming event will read.
//! It changes no result, only when memory is fetched.

/// Starts loading the cache line holding `*p` into all cache levels. Any pointer value is
/// accepted, including dangling and out-of-bounds ones: nothing is dereferenced.
#[inline(always)]
pub fn read<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: PREFETCHT0 is an SSE instruction, and SSE is part of the x86_64 baseline,
        // so the target feature `_mm_prefetch` requires is always present. A prefetch is a
        // hint with no architectural effect: it never faults, whatever the address (Intel
        // SDM vol. 2B, PREFETCHh: "does not generate an exception"), and reads nothing into
        // the program's state, so no memory safety condition applies to `p`.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
