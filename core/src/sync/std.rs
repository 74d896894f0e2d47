//! The real backend: std and core types, wrapped in types of the facade's own.
//!
//! The wrappers are what make the clippy gate work: `disallowed-types` resolves a path to its
//! definition, so a plain re-export of `core::sync::atomic::AtomicUsize` would be flagged at
//! every use. A newtype is a different definition; it costs nothing (`repr(transparent)`, every
//! method `#[inline]`).

pub(crate) type InnerMutex<T> = ::std::sync::Mutex<T>;
pub(crate) type InnerGuard<'a, T> = ::std::sync::MutexGuard<'a, T>;
pub(crate) type InnerCondvar = ::std::sync::Condvar;

pub(crate) mod atomic {
    pub(crate) use ::core::sync::atomic::Ordering;

    /// An atomic fence (`core::sync::atomic::fence`).
    #[inline]
    pub(crate) fn fence(order: Ordering) {
        ::core::sync::atomic::fence(order)
    }

    /// A compiler-only fence (`core::sync::atomic::compiler_fence`): no instruction, but the
    /// compiler keeps this thread's accesses on their side of it.
    #[inline]
    pub(crate) fn compiler_fence(order: Ordering) {
        ::core::sync::atomic::compiler_fence(order)
    }

    macro_rules! atomic_int {
        ($name:ident, $int:ty) => {
            #[doc = concat!("`core::sync::atomic::", stringify!($name), "`, behind the facade.")]
            #[derive(Debug, Default)]
            #[repr(transparent)]
            pub(crate) struct $name(::core::sync::atomic::$name);

            #[allow(dead_code)]
            impl $name {
                #[inline]
                pub(crate) const fn new(v: $int) -> Self {
                    $name(::core::sync::atomic::$name::new(v))
                }
                #[inline]
                pub(crate) fn load(&self, order: Ordering) -> $int {
                    self.0.load(order)
                }
                #[inline]
                pub(crate) fn store(&self, v: $int, order: Ordering) {
                    self.0.store(v, order)
                }
                #[inline]
                pub(crate) fn swap(&self, v: $int, order: Ordering) -> $int {
                    self.0.swap(v, order)
                }
                #[inline]
                pub(crate) fn compare_exchange(
                    &self,
                    current: $int,
                    new: $int,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$int, $int> {
                    self.0.compare_exchange(current, new, success, failure)
                }
                #[inline]
                pub(crate) fn compare_exchange_weak(
                    &self,
                    current: $int,
                    new: $int,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$int, $int> {
                    self.0.compare_exchange_weak(current, new, success, failure)
                }
                #[inline]
                pub(crate) fn fetch_add(&self, v: $int, order: Ordering) -> $int {
                    self.0.fetch_add(v, order)
                }
                #[inline]
                pub(crate) fn fetch_sub(&self, v: $int, order: Ordering) -> $int {
                    self.0.fetch_sub(v, order)
                }
                #[inline]
                pub(crate) fn fetch_or(&self, v: $int, order: Ordering) -> $int {
                    self.0.fetch_or(v, order)
                }
                #[inline]
                pub(crate) fn fetch_and(&self, v: $int, order: Ordering) -> $int {
                    self.0.fetch_and(v, order)
                }
                /// The address of the value, for system calls that take it (futex).
                #[inline]
                pub(crate) fn as_ptr(&self) -> *mut $int {
                    self.0.as_ptr()
                }
            }
        };
    }

    /// `core::sync::atomic::AtomicPtr`, behind the facade.
    #[derive(Debug)]
    #[repr(transparent)]
    pub(crate) struct AtomicPtr<T>(::core::sync::atomic::AtomicPtr<T>);

    #[allow(dead_code)]
    impl<T> AtomicPtr<T> {
        #[inline]
        pub(crate) fn new(p: *mut T) -> Self {
            AtomicPtr(::core::sync::atomic::AtomicPtr::new(p))
        }
        #[inline]
        pub(crate) fn load(&self, order: Ordering) -> *mut T {
            self.0.load(order)
        }
        #[inline]
        pub(crate) fn store(&self, p: *mut T, order: Ordering) {
            self.0.store(p, order)
        }
        #[inline]
        pub(crate) fn swap(&self, p: *mut T, order: Ordering) -> *mut T {
            self.0.swap(p, order)
        }
    }

    atomic_int!(AtomicU32, u32);
    atomic_int!(AtomicUsize, usize);
    atomic_int!(AtomicU64, u64);
    atomic_int!(AtomicI64, i64);
}

#[path = "cell.rs"]
pub(crate) mod cell;

#[path = "arc.rs"]
mod arc;
pub(crate) use arc::Arc;

pub(crate) mod thread {
    #[allow(unused_imports)]
    pub(crate) use ::std::thread::JoinHandle;
    pub(crate) use ::std::thread_local;

    /// `std::thread::spawn`, behind the facade.
    #[allow(dead_code)]
    #[inline]
    pub(crate) fn spawn<F, T>(f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        ::std::thread::spawn(f)
    }

    /// Spawns a thread with an optional name and stack size (`std::thread::Builder`), behind the
    /// facade.
    #[allow(dead_code)]
    pub(crate) fn spawn_with<F, T>(
        name: Option<String>,
        stack_size: Option<usize>,
        f: F,
    ) -> ::std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let mut b = ::std::thread::Builder::new();
        if let Some(name) = name {
            b = b.name(name);
        }
        if let Some(size) = stack_size {
            b = b.stack_size(size);
        }
        b.spawn(f)
    }

    /// `std::thread::yield_now`, behind the facade.
    #[inline]
    pub(crate) fn yield_now() {
        ::std::thread::yield_now()
    }
}

pub(crate) mod hint {
    /// `core::hint::spin_loop`, behind the facade.
    #[inline]
    pub(crate) fn spin_loop() {
        ::core::hint::spin_loop()
    }
}

/// Whether this build runs under a model checker (it does not).
pub(crate) const MODEL: bool = false;
