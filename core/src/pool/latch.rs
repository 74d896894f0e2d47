//! Latches: one-shot "done" flags that a waiting thread can sleep on.
//!
//! Every latch has the same three states and the same no-lost-wakeup argument as the parker:
//! the waiter's last step before sleeping is the CAS `UNSET -> SLEEPING`, the setter's one step
//! is the swap to `SET`. Two RMWs on one atomic are totally ordered: either the setter sees
//! `SLEEPING` and unparks the waiter (whose parker keeps the token if it has not parked yet),
//! or the waiter's CAS fails on `SET` and it does not sleep. The loom models in
//! `models/tests/loom_pool.rs` check it: `join_latch_set_races_owner_sleeping` (a thief's set
//! racing the join's owner going to sleep) and `install_wakes_worker_and_latch_wakes_installer`
//! (a worker's set racing the installer going to sleep; catches `latch_sleep_by_store`).
//!
//! A latch lives inside a job on its owner's stack, and the owner may return (freeing it) the
//! moment it sees `SET`. So `set` takes a raw pointer (a `&self` argument would be a reference
//! that outlives the memory it points to, undefined behaviour), copies out what it needs to
//! wake the owner *before* the swap, and never touches the latch after it.

use super::registry::Registry;
use crate::park::Unparker;
use crate::sync::atomic::{
    AtomicUsize,
    Ordering::{AcqRel, Acquire},
};

const UNSET: usize = 0;
const SLEEPING: usize = 1;
const SET: usize = 2;

/// Something a job sets when it finishes.
pub(crate) trait Latch {
    /// Sets the latch and wakes its waiter.
    ///
    /// # Safety
    ///
    /// `this` points to a live latch; it may be freed as soon as the state reads `SET`.
    unsafe fn set(this: *const Self);
}

/// The state shared by every latch.
#[derive(Debug)]
pub(crate) struct CoreLatch {
    state: AtomicUsize,
}

impl CoreLatch {
    pub(crate) fn new() -> Self {
        CoreLatch {
            state: AtomicUsize::new(UNSET),
        }
    }

    /// True once set (`Acquire`: the job's writes are visible).
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.state.load(Acquire) == SET
    }

    /// The waiter's last check before sleeping: false if already set (do not sleep).
    #[inline]
    pub(crate) fn get_sleepy(&self) -> bool {
        // MUTANT latch_sleep_by_store: the check and the announcement are a load and a store,
        // so a set between them is missed and the waiter sleeps forever.
        if cfg!(berth_mutant = "latch_sleep_by_store") {
            if self.state.load(Acquire) == SET {
                return false;
            }
            self.state
                .store(SLEEPING, crate::sync::atomic::Ordering::Release);
            return true;
        }
        self.state
            .compare_exchange(UNSET, SLEEPING, AcqRel, Acquire)
            .is_ok()
    }

    /// The waiter is awake again (a no-op if the latch was set meanwhile).
    #[inline]
    pub(crate) fn wake_up(&self) {
        let _ = self
            .state
            .compare_exchange(SLEEPING, UNSET, AcqRel, Acquire);
    }

    /// Sets the latch; true if its waiter was asleep (or about to be) and must be unparked.
    ///
    /// # Safety
    ///
    /// `this` points to a live latch, which may be freed once this returns.
    #[inline]
    unsafe fn set_core(this: *const Self) -> bool {
        // SAFETY: live until the swap below makes it `SET`; not touched after.
        unsafe { (*this).state.swap(SET, AcqRel) == SLEEPING }
    }
}

/// The latch of a job whose owner is a worker thread: the owner waits in
/// `WorkerThread::wait_until`, stealing other work, and sleeps on its worker parker.
#[derive(Debug)]
pub(crate) struct WorkerLatch {
    pub(crate) core: CoreLatch,
    /// The owner's registry (kept alive by the setter, itself a worker of the same registry,
    /// or by the owner, which cannot return before the latch is set).
    registry: *const Registry,
    owner: usize,
}

impl WorkerLatch {
    pub(crate) fn new(registry: &Registry, owner: usize) -> Self {
        WorkerLatch {
            core: CoreLatch::new(),
            registry,
            owner,
        }
    }
}

impl Latch for WorkerLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is live until the swap; the fields are copied out before it. The
        // registry outlives the swap: every setter is a worker of it (and holds an `Arc` to it)
        // or, for a scope's count, holds an `Arc` itself.
        unsafe {
            let registry = (*this).registry;
            let owner = (*this).owner;
            if CoreLatch::set_core(std::ptr::addr_of!((*this).core)) {
                (*registry).unpark_worker(owner);
            }
        }
    }
}

/// The latch of a job whose owner is not a worker (a thread calling `install`): the owner
/// sleeps on its own parker.
#[derive(Debug)]
pub(crate) struct LockLatch {
    core: CoreLatch,
    unparker: Unparker,
}

impl LockLatch {
    pub(crate) fn new(unparker: Unparker) -> Self {
        LockLatch {
            core: CoreLatch::new(),
            unparker,
        }
    }

    /// Blocks on `parker` (whose unparker this latch holds) until the latch is set.
    pub(crate) fn wait(&self, parker: &crate::park::Parker) {
        while !self.core.probe() {
            if self.core.get_sleepy() {
                parker.park();
                self.core.wake_up();
            }
        }
    }
}

impl Latch for LockLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is live until the swap; the unparker is cloned out before it.
        unsafe {
            let unparker = (*this).unparker.clone();
            if CoreLatch::set_core(std::ptr::addr_of!((*this).core)) {
                unparker.unpark();
            }
        }
    }
}
