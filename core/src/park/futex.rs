//! A futex word: a `u32` a thread can sleep on while it holds an expected value.
//!
//! | build                         | `wait` / `wake_one`                                     |
//! |-------------------------------|---------------------------------------------------------|
//! | Linux                         | `futex(2)` `FUTEX_WAIT_PRIVATE` / `FUTEX_WAKE_PRIVATE`  |
//! | macOS                         | `__ulock_wait` / `__ulock_wake` (`UL_COMPARE_AND_WAIT`) |
//! | `--cfg loom`, `--cfg shuttle` | a model futex: the model's `Mutex` + `Condvar`          |
//!
//! The kernel checks the word and puts the thread to sleep as one atomic step, which is what
//! closes the gap between a waiter's last check and its sleep. The model futex gets the same
//! guarantee from its mutex: `wait` compares the word while holding it and `wake_one` takes it
//! after the waker changed the word, so a waker either finds the waiter already asleep on the
//! condvar, or the waiter's comparison happens after the change and sees it.
//!
//! Every `wait` may return spuriously; callers loop.

use crate::sync::atomic::AtomicU32;
use std::time::Instant;

/// A `u32` that threads can sleep on.
#[derive(Debug)]
pub(crate) struct Futex {
    word: AtomicU32,
    #[cfg(any(loom, shuttle))]
    lock: crate::sync::Mutex<()>,
    #[cfg(any(loom, shuttle))]
    cond: crate::sync::Condvar,
}

impl Futex {
    pub(crate) fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
            #[cfg(any(loom, shuttle))]
            lock: crate::sync::Mutex::new(()),
            #[cfg(any(loom, shuttle))]
            cond: crate::sync::Condvar::new(),
        }
    }

    /// The word itself; every change to it is made through this atomic.
    #[inline]
    pub(crate) fn word(&self) -> &AtomicU32 {
        &self.word
    }
}

#[cfg(any(loom, shuttle))]
impl Futex {
    /// Sleeps while the word holds `expected`, until `wake_one`, or returns at once when a
    /// deadline is given: the models have no clock, so a timed wait is a timeout that may race
    /// with a wake.
    pub(crate) fn wait(&self, expected: u32, deadline: Option<Instant>) {
        use crate::sync::atomic::Ordering::Relaxed;
        let guard = self.lock.lock();
        if self.word.load(Relaxed) != expected || deadline.is_some() {
            return;
        }
        let _guard = self.cond.wait(guard);
    }

    /// Wakes the thread sleeping on the word, if any. Call after changing the word.
    pub(crate) fn wake_one(&self) {
        drop(self.lock.lock());
        self.cond.notify_all();
    }
}

#[cfg(all(not(any(loom, shuttle)), target_os = "linux"))]
impl Futex {
    /// Sleeps while the word holds `expected`, until `wake_one`, the deadline, or a spurious
    /// wakeup.
    pub(crate) fn wait(&self, expected: u32, deadline: Option<Instant>) {
        let timeout = match deadline {
            None => None,
            Some(d) => match d.checked_duration_since(Instant::now()) {
                None => return,
                Some(left) if left.is_zero() => return,
                Some(left) => Some(libc::timespec {
                    tv_sec: libc::time_t::try_from(left.as_secs()).unwrap_or(libc::time_t::MAX),
                    tv_nsec: left.subsec_nanos().into(),
                }),
            },
        };
        let ts = timeout
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // Errors (EAGAIN when the word changed, EINTR, ETIMEDOUT) all mean "return and let the
        // caller re-check"; the last two arguments are ignored by FUTEX_WAIT.
        // SAFETY: the word is a live, aligned `u32` for the whole call (we hold `&self`) and is
        // only read; `ts` is null or points to a timespec on this stack frame.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                expected,
                ts,
                std::ptr::null::<u32>(),
                0u32,
            );
        }
    }

    /// Wakes one thread sleeping on the word, if any. Call after changing the word.
    pub(crate) fn wake_one(&self) {
        // SAFETY: the pointer is valid for the call (we hold `&self`); FUTEX_WAKE does not access
        // the memory, it only uses the address as the key of the kernel's wait queue.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.word.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1i32,
            );
        }
    }
}

#[cfg(all(not(any(loom, shuttle)), target_os = "macos"))]
mod ulock {
    //! The private but stable `__ulock` interface that libc++ and Rust's std use on macOS.
    pub(super) const UL_COMPARE_AND_WAIT: u32 = 1;
    pub(super) const ULF_NO_ERRNO: u32 = 0x0100_0000;
    extern "C" {
        pub(super) fn __ulock_wait(
            operation: u32,
            addr: *mut core::ffi::c_void,
            value: u64,
            timeout_us: u32,
        ) -> core::ffi::c_int;
        pub(super) fn __ulock_wake(
            operation: u32,
            addr: *mut core::ffi::c_void,
            wake_value: u64,
        ) -> core::ffi::c_int;
    }
}

#[cfg(all(not(any(loom, shuttle)), target_os = "macos"))]
impl Futex {
    /// Sleeps while the word holds `expected`, until `wake_one`, the deadline, or a spurious
    /// wakeup.
    pub(crate) fn wait(&self, expected: u32, deadline: Option<Instant>) {
        // 0 means "no timeout" to __ulock_wait; longer waits are cut to u32::MAX microseconds
        // (about 71 minutes) and end as a spurious wakeup, which callers handle.
        let timeout_us = match deadline {
            None => 0,
            Some(d) => match d.checked_duration_since(Instant::now()) {
                None => return,
                Some(left) => {
                    let us = left.as_micros().max(1);
                    u32::try_from(us).unwrap_or(u32::MAX)
                }
            },
        };
        // SAFETY: the address is a live, aligned u32 for the whole call; __ulock_wait compares it
        // with `expected` and sleeps atomically, or returns an error we treat as a spurious wake.
        unsafe {
            ulock::__ulock_wait(
                ulock::UL_COMPARE_AND_WAIT | ulock::ULF_NO_ERRNO,
                self.word.as_ptr().cast(),
                u64::from(expected),
                timeout_us,
            );
        }
    }

    /// Wakes one thread sleeping on the word, if any. Call after changing the word.
    pub(crate) fn wake_one(&self) {
        // SAFETY: the address is only used as a key by the kernel; it is valid for the call.
        unsafe {
            ulock::__ulock_wake(
                ulock::UL_COMPARE_AND_WAIT | ulock::ULF_NO_ERRNO,
                self.word.as_ptr().cast(),
                0,
            );
        }
    }
}
