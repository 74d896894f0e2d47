//! Bounded spinning, then yielding, before a waiter goes to sleep.
// Under the models both limits are 0, which makes some comparisons below trivially true.
#![cfg_attr(
    any(loom, shuttle),
    allow(clippy::absurd_extreme_comparisons, clippy::unnecessary_min_or_max)
)]

use crate::sync::{hint, thread};

/// Doublings of the spin: at most `2^SPIN_LIMIT` spin hints in one step. A message usually
/// arrives within a few microseconds, well inside this window.
#[cfg(not(any(loom, shuttle)))]
pub(crate) const SPIN_LIMIT: u32 = 6;
/// Steps after which a waiter stops yielding and parks: the last `YIELD_LIMIT - SPIN_LIMIT`
/// steps each yield the CPU once.
#[cfg(not(any(loom, shuttle)))]
pub(crate) const YIELD_LIMIT: u32 = 10;

/// Yields a rendezvous waiter makes after the `Backoff` phase, before it parks
/// ([`Parker::rendezvous_park_until`](super::Parker::rendezvous_park_until)). A rendezvous
/// partner is usually about to arrive on the other core, but a thread woken from the kernel on
/// this 2-core VM takes 10-20 µs to run again: if each side parks after a few microseconds,
/// every message of `bounded(0)` costs a sleep and a wake-up (`losses.md`, `chan_b0_spsc1x1`).
#[cfg(not(any(loom, shuttle)))]
pub(crate) const RENDEZVOUS_EXTRA_YIELDS: u32 = 12;

// Under the models every spin hint is a yield and every yield a scheduling point; one step is
// enough to exercise the "spun, then parked" path without multiplying the state space.
#[cfg(any(loom, shuttle))]
pub(crate) const SPIN_LIMIT: u32 = 0;
#[cfg(any(loom, shuttle))]
pub(crate) const YIELD_LIMIT: u32 = 0;
#[cfg(any(loom, shuttle))]
pub(crate) const RENDEZVOUS_EXTRA_YIELDS: u32 = 0;

/// Exponential backoff for contended retries and for the spin phase of a wait.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    step: u32,
}

impl Backoff {
    #[inline]
    pub(crate) fn new() -> Self {
        Backoff { step: 0 }
    }

    /// Backs off after losing a race (a failed CAS): spins only, never yields.
    #[inline]
    pub(crate) fn spin(&mut self) {
        for _ in 0..1u32 << self.step.min(SPIN_LIMIT) {
            hint::spin_loop();
        }
        if self.step <= SPIN_LIMIT {
            self.step += 1;
        }
    }

    /// Backs off while waiting for another thread: spins, then yields.
    #[inline]
    pub(crate) fn snooze(&mut self) {
        if self.step <= SPIN_LIMIT {
            for _ in 0..1u32 << self.step {
                hint::spin_loop();
            }
        } else {
            thread::yield_now();
        }
        if self.step <= YIELD_LIMIT {
            self.step += 1;
        }
    }

    /// True once spinning and yielding are spent and the waiter should park.
    #[inline]
    pub(crate) fn is_completed(&self) -> bool {
        self.step > YIELD_LIMIT
    }
}
