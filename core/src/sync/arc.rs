//! `std::sync::Arc` behind a type of the facade's own (the std and shuttle backends; loom has
//! its own `Arc`, which also checks for leaks).

use std::ops::Deref;

/// `std::sync::Arc`, behind the facade (loom's `Arc` also checks for leaks).
#[derive(Debug, Default)]
#[repr(transparent)]
pub(crate) struct Arc<T: ?Sized>(::std::sync::Arc<T>);

impl<T> Arc<T> {
    #[inline]
    pub(crate) fn new(value: T) -> Self {
        Arc(::std::sync::Arc::new(value))
    }
}

impl<T: ?Sized> Arc<T> {
    #[inline]
    pub(crate) fn ptr_eq(a: &Self, b: &Self) -> bool {
        ::std::sync::Arc::ptr_eq(&a.0, &b.0)
    }
}

impl<T: ?Sized> Clone for Arc<T> {
    #[inline]
    fn clone(&self) -> Self {
        Arc(::std::sync::Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Deref for Arc<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}
