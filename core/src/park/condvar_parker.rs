//! The condvar parker: the portable fallback, and `--cfg berth_parker="condvar"` anywhere.
//!
//! The same three states as the futex parker, in an atomic beside a `Mutex<()>` and a `Condvar`.
//! The owner moves `EMPTY -> PARKED` with a CAS *while holding the mutex* and then waits on the
//! condvar, which releases the mutex atomically. `unpark` swaps in `NOTIFIED` and, only if it read
//! `PARKED`, takes the mutex and notifies.
//!
//! Why no wakeup is lost: the CAS and the swap are RMWs on one atomic, so one comes first. If the
//! swap does, the CAS fails and the owner returns. If the CAS does, `unpark` reads `PARKED` and
//! must take the mutex; the owner holds it from before the CAS until it is inside `wait`, so the
//! notification cannot fall between the CAS and the wait. A thread that is only registered, not
//! asleep, costs `unpark` no lock and no system call.

use crate::sync::atomic::{
    AtomicU32,
    Ordering::{Acquire, Relaxed, Release},
};
use crate::sync::{Condvar, Mutex};
use std::time::Instant;

const EMPTY: u32 = 0;
const NOTIFIED: u32 = 1;
const PARKED: u32 = 2;

#[derive(Debug)]
pub(crate) struct Inner {
    state: AtomicU32,
    lock: Mutex<()>,
    cond: Condvar,
}

impl Inner {
    pub(crate) fn new() -> Self {
        Inner {
            state: AtomicU32::new(EMPTY),
            lock: Mutex::new(()),
            cond: Condvar::new(),
        }
    }

    /// Takes the token if it is there, without blocking (true if it took one).
    pub(crate) fn try_park(&self) -> bool {
        self.state
            .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
            .is_ok()
    }

    /// Blocks until a token is available (true) or the deadline passes (false).
    pub(crate) fn park(&self, deadline: Option<Instant>) -> bool {
        if self
            .state
            .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
            .is_ok()
        {
            return true;
        }
        let mut guard = self.lock.lock();

        // The re-check: an RMW on the atomic `unpark` swaps, made while holding the mutex.
        #[cfg(not(berth_mutant = "park_no_recheck_rmw"))]
        if self
            .state
            .compare_exchange(EMPTY, PARKED, Acquire, Acquire)
            .is_err()
        {
            // Only `unpark` changes the state behind our back, so it holds NOTIFIED.
            consume(&self.state);
            return true;
        }
        // MUTANT park_no_recheck_rmw: a load and a separate store (see futex_parker.rs).
        #[cfg(berth_mutant = "park_no_recheck_rmw")]
        {
            if self.state.load(Acquire) == NOTIFIED {
                consume(&self.state);
                return true;
            }
            self.state.store(PARKED, Relaxed);
        }

        loop {
            let timed_out = match deadline {
                None => {
                    guard = self.cond.wait(guard);
                    false
                }
                Some(_) if crate::sync::MODEL => true,
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    None => true,
                    Some(left) => {
                        guard = self.cond.wait_timeout(guard, left);
                        false
                    }
                },
            };
            if self
                .state
                .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
                .is_ok()
            {
                return true;
            }
            if timed_out || deadline.is_some_and(|d| Instant::now() >= d) {
                return self.state.swap(EMPTY, Acquire) == NOTIFIED;
            }
        }
    }

    /// Makes a token available, waking the owner if it is asleep.
    pub(crate) fn unpark(&self) {
        if self.state.swap(NOTIFIED, Release) == PARKED {
            drop(self.lock.lock());
            self.cond.notify_one();
        }
    }
}

/// Takes a token the owner has seen, with a swap (see `futex_parker::consume` for why a store
/// loses a second unparker's token; mutant `park_consume_by_store`).
#[inline]
fn consume(state: &AtomicU32) {
    #[cfg(not(berth_mutant = "park_consume_by_store"))]
    state.swap(EMPTY, Acquire);
    #[cfg(berth_mutant = "park_consume_by_store")]
    state.store(EMPTY, Relaxed);
}
