//! The loom backend: every operation is a point where loom may switch threads, and every atomic
//! load may return any value the C11 memory model allows.

pub(crate) use ::loom::sync::Arc;
pub(crate) type InnerMutex<T> = ::loom::sync::Mutex<T>;
pub(crate) type InnerGuard<'a, T> = ::loom::sync::MutexGuard<'a, T>;
pub(crate) type InnerCondvar = ::loom::sync::Condvar;

pub(crate) mod atomic {
    #[allow(unused_imports)]
    pub(crate) use ::loom::sync::atomic::{
        fence, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };

    /// A compiler-only fence: nothing under the model, which never reorders a thread's own
    /// accesses at compile time (what a compiler fence forbids) and models the CPU's reordering
    /// through the orderings of the accesses themselves.
    #[allow(dead_code)]
    #[inline]
    pub(crate) fn compiler_fence(_order: Ordering) {}
}

pub(crate) mod cell {
    pub(crate) use ::loom::cell::UnsafeCell;
}

pub(crate) mod thread {
    #[allow(unused_imports)]
    pub(crate) use ::loom::thread::{spawn, yield_now, JoinHandle};
    pub(crate) use ::loom::thread_local;

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
        let mut b = ::loom::thread::Builder::new();
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
    /// A spin hint is a yield under loom: a spin that never yields would never let loom run the
    /// thread it waits for.
    #[inline]
    pub(crate) fn spin_loop() {
        ::loom::thread::yield_now();
    }
}

/// Whether this build runs under a model checker.
pub(crate) const MODEL: bool = true;
