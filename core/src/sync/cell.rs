//! `core::cell::UnsafeCell` with loom's closure-based accessors (the std and shuttle backends;
//! shuttle has no cell tracking, loom has its own cell).

/// `core::cell::UnsafeCell` with loom's closure-based accessors.
#[derive(Debug)]
#[repr(transparent)]
pub(crate) struct UnsafeCell<T: ?Sized>(::core::cell::UnsafeCell<T>);

impl<T> UnsafeCell<T> {
    #[inline]
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(::core::cell::UnsafeCell::new(value))
    }

    #[allow(dead_code)]
    #[inline]
    pub(crate) fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Runs `f` with a shared raw pointer to the contents.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a unique raw pointer to the contents.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
