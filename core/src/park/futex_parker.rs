//! The futex parker: the token lives in the futex word itself.
//!
//! States of the word: `EMPTY` (no token, nobody asleep), `NOTIFIED` (a token is waiting),
//! `PARKED` (the owner is asleep or about to be). Only `unpark` writes `NOTIFIED`; only the owner
//! writes `EMPTY` and `PARKED`.
//!
//! - `park`: consume a token if there is one (CAS `NOTIFIED -> EMPTY`). Otherwise announce the
//!   sleep with the CAS `EMPTY -> PARKED`: this is the re-check, and it is a read-modify-write on
//!   the word `unpark` swaps, so exactly one of the two RMWs comes first in the word's
//!   modification order. Then sleep on the futex *while the word is still `PARKED`*.
//! - `unpark`: swap in `NOTIFIED`. Only if the swap returned `PARKED` is anyone asleep, and only
//!   then is the kernel called (`wake_one`). The fast path is one uncontended swap.
//!
//! Why no wakeup is lost: if `unpark`'s swap comes first, the owner's CAS fails (it reads
//! `NOTIFIED`) and it returns without sleeping. If the CAS comes first, the swap reads `PARKED`
//! and calls `wake_one`; the owner either is already asleep (woken) or has not yet entered the
//! kernel, in which case the kernel's compare sees `NOTIFIED`, not `PARKED`, and does not sleep.
//! The swap is `Release` and the token is consumed with `Acquire`, so whatever the unparker wrote
//! before `unpark` is visible after `park` returns.

use super::futex::Futex;
use crate::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::time::Instant;

const EMPTY: u32 = 0;
const NOTIFIED: u32 = 1;
const PARKED: u32 = 2;

#[derive(Debug)]
pub(crate) struct Inner {
    state: Futex,
}

impl Inner {
    pub(crate) fn new() -> Self {
        Inner {
            state: Futex::new(EMPTY),
        }
    }

    /// Takes the token if it is there, without blocking (true if it took one).
    pub(crate) fn try_park(&self) -> bool {
        self.state
            .word()
            .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
            .is_ok()
    }

    /// Blocks until a token is available (true) or the deadline passes (false).
    pub(crate) fn park(&self, deadline: Option<Instant>) -> bool {
        let state = self.state.word();
        if state
            .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
            .is_ok()
        {
            return true;
        }

        // The re-check: an RMW on the word `unpark` swaps (see the module docs).
        #[cfg(not(berth_mutant = "park_no_recheck_rmw"))]
        if state
            .compare_exchange(EMPTY, PARKED, Acquire, Acquire)
            .is_err()
        {
            // Only `unpark` changes the word behind our back, so it holds NOTIFIED.
            consume(state);
            return true;
        }
        // MUTANT park_no_recheck_rmw: a load and a separate store. An `unpark` between the two
        // reads EMPTY (so it makes no wake call), and the store then overwrites its NOTIFIED.
        #[cfg(berth_mutant = "park_no_recheck_rmw")]
        {
            if state.load(Acquire) == NOTIFIED {
                consume(state);
                return true;
            }
            state.store(PARKED, Relaxed);
        }

        loop {
            self.state.wait(PARKED, deadline);
            if state
                .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
                .is_ok()
            {
                return true;
            }
            if let Some(d) = deadline {
                if crate::sync::MODEL || Instant::now() >= d {
                    // Withdraw: PARKED -> EMPTY, unless a token raced in, which we then take.
                    return state.swap(EMPTY, Acquire) == NOTIFIED;
                }
            }
            // A spurious wakeup: the word is still PARKED, sleep again.
        }
    }

    /// Makes a token available, waking the owner if it is asleep.
    pub(crate) fn unpark(&self) {
        if self.state.word().swap(NOTIFIED, Release) == PARKED {
            self.state.wake_one();
        }
    }
}

/// Takes a token the owner has seen (the word holds NOTIFIED).
///
/// A swap, not a store: a second `unpark` may swap in NOTIFIED again between our read and our
/// write; it saw NOTIFIED, so it made no wake call, and a store of EMPTY would erase its token
/// while the swap reads it (and synchronises with it). The loom model `two_wakers` deadlocked on
/// the store; the mutant `park_consume_by_store` keeps that version.
#[inline]
fn consume(state: &crate::sync::atomic::AtomicU32) {
    #[cfg(not(berth_mutant = "park_consume_by_store"))]
    state.swap(EMPTY, Acquire);
    #[cfg(berth_mutant = "park_consume_by_store")]
    state.store(EMPTY, Relaxed);
}
