//! Keeping hot atomics on cache lines of their own.

use std::ops::Deref;

/// Pads and aligns a value to the length of a cache line (128 bytes on x86-64 and AArch64, whose
/// adjacent-line prefetchers pull pairs of 64-byte lines; 64 elsewhere), so that two values
/// written by different threads never share a line.
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64"), repr(align(128)))]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    repr(align(64))
)]
#[derive(Debug, Default)]
pub(crate) struct CachePadded<T> {
    value: T,
}

impl<T> CachePadded<T> {
    pub(crate) const fn new(value: T) -> Self {
        CachePadded { value }
    }
}

impl<T> Deref for CachePadded<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.value
    }
}
