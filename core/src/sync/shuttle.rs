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
        fence, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };

    /// A compiler-only fence: nothing under the model, which never reorders a thread's own
    /// accesses at compile time (what a compiler fence forbids) and models the CPU's reordering
    /// through the orderings of the accesses themselves.
    #[allow(dead_code)]
    #[inline]
    pub(crate) fn compiler_fence(_order: Ordering) {}
}

#[path = "cell.rs"]
pub(crate) mod cell;

pub(crate) mod thread {
    #[allow(unused_imports)]
    pub(crate) use ::shuttle::thread::{spawn, yield_now, JoinHandle};
    pub(crate) use ::shuttle::thread_local;

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
        let mut b = ::shuttle::thread::Builder::new();
        if let Some(name) = name {
            b = b.name(name);
        }
        if let Some(size) = stack_size {
            b = b.stack_size(size);
        }
        b.spawn(f)
    }
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
