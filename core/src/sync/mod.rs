//! The sync facade: the one place in berth that names a real atomic, lock or thread.
//!
//! Every atomic, fence, `Mutex`, `Condvar`, `Arc`, `UnsafeCell`, thread spawn, yield and spin hint
//! in berth is reached through this module. It picks one of three backends at compile time:
//!
//! | cfg              | backend      | used for                                               |
//! |------------------|--------------|--------------------------------------------------------|
//! | (none)           | [`std`]      | the code that ships                                    |
//! | `--cfg loom`     | `loom`       | exhaustive model checking of the C11 memory model      |
//! | `--cfg shuttle`  | `shuttle`    | randomised (random / PCT) scheduling of larger models  |
//!
//! Because the rest of the crate only ever imports from here, the code loom and shuttle check is
//! byte for byte the code that ships. `core/clippy.toml` forbids the std and core originals
//! everywhere else (`disallowed-types` and `disallowed-methods` resolve paths, so grouped
//! imports and `core::` spellings are caught as well), and `make test` runs clippy with
//! `-D warnings`.
//!
//! All three backends present loom's shape: `UnsafeCell::with` / `with_mut` take closures that
//! receive raw pointers, so loom can track every access to a cell.
//!
//! Under the models `hint::spin_loop` is a yield: a busy-wait that does not yield would never let
//! the model scheduler run the thread it waits for.

#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[cfg(all(loom, shuttle))]
compile_error!("`--cfg loom` and `--cfg shuttle` select different sync backends: pass only one");

#[cfg(not(any(loom, shuttle)))]
mod std;
#[cfg(not(any(loom, shuttle)))]
pub(crate) use self::std::*;

#[cfg(loom)]
mod loom;
#[cfg(loom)]
pub(crate) use self::loom::*;

#[cfg(all(shuttle, not(loom)))]
mod shuttle;
#[cfg(all(shuttle, not(loom)))]
pub(crate) use self::shuttle::*;

pub(crate) mod asymmetric;

use ::std::ops::{Deref, DerefMut};

/// `std::sync::OnceLock`, for process-wide statics (the global pool). Not modelled: the models
/// never use the global pool (each model execution must end with all its threads).
pub(crate) type OnceLock<T> = ::std::sync::OnceLock<T>;

/// A `std::task::Waker` that runs `W::wake`. `std::task::Wake` is implemented on std's `Arc`
/// only, so this reference count is the one `std::sync::Arc` berth names outside the backends;
/// it counts references to the waker itself, and whatever `wake` does (an unpark) goes through
/// the facade, where the models see it.
pub(crate) fn waker_from<W: ::std::task::Wake + Send + Sync + 'static>(w: W) -> ::std::task::Waker {
    ::std::task::Waker::from(::std::sync::Arc::new(w))
}
use ::std::time::Duration;

/// A mutex whose `lock` ignores poisoning, over the backend's mutex.
///
/// berth never runs user code while holding one of its own locks (values are moved out before
/// they are dropped, and no callback runs under a lock), so a poisoned lock can only mean a panic
/// inside berth between two consistent states; the protected data is still valid. Failing every
/// later operation would turn one panic into a cascade, so the guard is taken anyway.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(InnerMutex<T>);

/// The guard of a [`Mutex`].
#[derive(Debug)]
pub(crate) struct MutexGuard<'a, T>(InnerGuard<'a, T>);

/// A condition variable over the backend's condvar, ignoring poisoning like [`Mutex`].
#[derive(Debug, Default)]
pub(crate) struct Condvar(InnerCondvar);

impl<T> Mutex<T> {
    #[inline]
    pub(crate) fn new(value: T) -> Self {
        Mutex(InnerMutex::new(value))
    }

    #[inline]
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        MutexGuard(
            self.0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl Condvar {
    #[inline]
    pub(crate) fn new() -> Self {
        Condvar(InnerCondvar::new())
    }

    /// Waits for a notification (or a spurious wakeup).
    #[inline]
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        MutexGuard(
            self.0
                .wait(guard.0)
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }

    /// Waits for a notification, a spurious wakeup, or `timeout` (loom: no timeout).
    #[allow(dead_code)]
    #[inline]
    pub(crate) fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> MutexGuard<'a, T> {
        match self.0.wait_timeout(guard.0, timeout) {
            Ok((g, _)) => MutexGuard(g),
            Err(poisoned) => MutexGuard(poisoned.into_inner().0),
        }
    }

    #[inline]
    pub(crate) fn notify_one(&self) {
        self.0.notify_one()
    }

    #[inline]
    pub(crate) fn notify_all(&self) {
        self.0.notify_all()
    }
}
