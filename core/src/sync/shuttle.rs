//! The shuttle backend: threads and synchronisation are scheduled by shuttle's random or PCT
//! scheduler. Shuttle does not model weak memory, so its atomics behave sequentially consistently;
//! it reaches thread counts and operation counts that loom cannot.

#[path = "arc.rs"]
mod arc;
pub(crate) use arc::Arc;
pub(crate) type InnerMutex<T> = ::shuttle::sync::Mutex<T>;
pub(crate) type InnerGuard<'a, T> = ::shuttle::sync::MutexGuard<'a, T>;
pub(crate) type InnerCondvar = ::shuttle::sync::Condvar;

pub(crate) mod atomic {
    #[allow(unused_imports)]
    pub(crate) use ::shuttle::sync::atomic::{
        fence, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };
}

pub(crate) mod cell {
    /// Shuttle has no cell tracking: the std cell with loom's closure-based accessors.
    #[derive(Debug)]
    #[repr(transparent)]
    pub(crate) struct UnsafeCell<T: ?Sized>(::core::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        #[inline]
        pub(crate) fn new(value: T) -> Self {
            UnsafeCell(::core::cell::UnsafeCell::new(value))
        }

        #[allow(dead_code)]
        #[inline]
        pub(crate) fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }

    impl<T: ?Sized> UnsafeCell<T> {
        #[inline]
        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        #[inline]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

pub(crate) mod thread {
    #[allow(unused_imports)]
    pub(crate) use ::shuttle::thread::{spawn, yield_now, JoinHandle};
    pub(crate) use ::shuttle::thread_local;
}

pub(crate) mod hint {
    /// A spin hint is a yield under shuttle, for the same reason as under loom.
    #[inline]
    pub(crate) fn spin_loop() {
        ::shuttle::thread::yield_now();
    }
}

/// Whether this build runs under a model checker.
pub(crate) const MODEL: bool = true;
