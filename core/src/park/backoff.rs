//! Bounded spinning, then yielding, before a waiter goes to sleep.
// Under the models both limits are 0, which makes some comparisons below trivially true.
#![cfg_attr(
    any(loom, shuttle),
    allow(clippy::absurd_extreme_comparisons, clippy::unnecessary_min_or_max)
)]

use crate::sync::{hint, thread};
use std::time::{Duration, Instant};

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

    /// Skips what is left: `is_completed` is true from now on.
    #[inline]
    pub(crate) fn complete(&mut self) {
        self.step = YIELD_LIMIT + 1;
    }
}

/// Whether spinning and yielding before a sleep pays off, learned per wait list.
///
/// A waiter spins, then yields the CPU a few times, before it parks (`Backoff`). When the
/// partner comes within microseconds that saves a futex sleep and wake-up, and on a busy machine
/// the yields keep throughput up (a probe that parked without yielding made 13x the context
/// switches at 4:4 on a capacity-16 queue). When the partner comes only much later (a receiver
/// waiting for a message that is milliseconds away) the spinning is wasted, and worse than
/// wasted: on Linux's EEVDF scheduler a task that spun and yielded just before sleeping usually
/// does not preempt its waker when woken, so it runs only once the waker blocks, which doubled
/// the wake latency against std's channel, whose receiver spins briefly and never yields
/// (`reports/bench/losses.md`, `wake_b1/p50`).
///
/// So each wait list keeps a credit, scored once per wait. A wait that spun (and perhaps
/// yielded) and then found its condition holding adds [`PAID`], and so does a wait whose first
/// sleep was shorter than [`SHORT_SLEEP`] (its partner was active); one that spun and yielded
/// to the end and then slept longer takes [`WASTED`]. A waiter spins only while the credit is
/// at least [`WASTED`]; below that it parks at once and adds 1, so after [`WASTED`] such waits
/// one waiter spins again to test whether it now pays. Spinning stays on while at least a third
/// of the waits that spin end before a long sleep (`PAID * p > WASTED * (1 - p)`), and a list
/// whose waits all end in long sleeps spins on one wait in `WASTED + 1`.
///
/// The short-sleep rule is what keeps a busy list from locking itself into sleeping. Without
/// it, a producer and a consumer of a capacity-16 queue that both stopped spinning kept each
/// other asleep: each one's partner was asleep too and came back only after a wake-up, so the
/// occasional test spin failed as well, and 1:1 throughput fell 19-28x (in two of three runs of
/// `reports/bench/examples/queue_probe.rs`).
///
/// The credit is a hint, read and written with relaxed loads and stores (a lost update costs
/// one wrong guess, never a lost wakeup: both answers lead to the same registration and
/// re-check). A credit at its ceiling is only read, so a list whose waits keep paying takes no
/// extra cache-line writes. Under the models there is no yield phase and one spin step (`SPIN_LIMIT` and
/// `YIELD_LIMIT` are 0), so the gauge is compiled out there rather than
/// adding states to every blocking model; Miri, TSan and the stress tests run it.
#[derive(Debug)]
pub(crate) struct SpinGauge {
    #[cfg(not(any(loom, shuttle)))]
    credit: crate::sync::atomic::AtomicU32,
}

/// The credit a new list starts with, and its ceiling: spin until shown it does not pay.
#[cfg_attr(any(loom, shuttle), allow(dead_code))] // the gauge is compiled out there
pub(crate) const CREDIT_MAX: u32 = 256;
/// Credit for a wait that spun and then found its condition before it slept.
#[cfg_attr(any(loom, shuttle), allow(dead_code))] // the gauge is compiled out there
pub(crate) const PAID: u32 = 64;
/// Credit lost to a wait that spun and yielded in vain and then slept long; also the threshold
/// for spinning.
#[cfg_attr(any(loom, shuttle), allow(dead_code))] // the gauge is compiled out there
pub(crate) const WASTED: u32 = 32;
/// A sleep shorter than this means the partner was active (it counts as [`PAID`]).
pub(crate) const SHORT_SLEEP: Duration = Duration::from_micros(100);

impl SpinGauge {
    pub(crate) fn new() -> Self {
        SpinGauge {
            #[cfg(not(any(loom, shuttle)))]
            credit: crate::sync::atomic::AtomicU32::new(CREDIT_MAX),
        }
    }

    /// Asked once per wait, at its first failed attempt: spin and yield before parking? A
    /// `false` counts towards the next test of spinning.
    #[cfg(not(any(loom, shuttle)))]
    #[inline]
    pub(crate) fn should_spin(&self) -> bool {
        use crate::sync::atomic::Ordering::Relaxed;
        let credit = self.credit.load(Relaxed);
        if credit >= WASTED {
            return true;
        }
        self.credit.store(credit + 1, Relaxed);
        false
    }

    #[cfg(any(loom, shuttle))]
    #[inline]
    pub(crate) fn should_spin(&self) -> bool {
        true
    }

    /// A wait that spun found its condition before it slept.
    #[inline]
    pub(crate) fn paid(&self) {
        #[cfg(not(any(loom, shuttle)))]
        {
            use crate::sync::atomic::Ordering::Relaxed;
            let credit = self.credit.load(Relaxed);
            if credit < CREDIT_MAX {
                self.credit.store((credit + PAID).min(CREDIT_MAX), Relaxed);
            }
        }
    }

    /// The clock, for timing a wait's first sleep (`None` under the models, which have none).
    #[inline]
    pub(crate) fn clock(&self) -> Option<Instant> {
        #[cfg(not(any(loom, shuttle)))]
        return Some(Instant::now());
        #[cfg(any(loom, shuttle))]
        None
    }

    /// A wait's first sleep is over, after `slept_for`. A short one means the partner was
    /// active and soon back: paid, whether or not this wait spun (waits that skip spinning on a
    /// busy list would otherwise keep each other asleep: each one's partner, asleep too, comes
    /// back only after a wake-up, so the occasional test spin fails as well). A long one after
    /// spinning and yielding means they were wasted. A long one without spinning (`spun` false)
    /// confirms the gauge and changes nothing.
    #[inline]
    pub(crate) fn slept(&self, slept_for: Duration, spun: bool) {
        if slept_for < SHORT_SLEEP {
            self.paid();
        } else if spun {
            self.wasted();
        }
    }

    /// A wait spun and yielded in vain, then slept long.
    #[inline]
    fn wasted(&self) {
        #[cfg(not(any(loom, shuttle)))]
        {
            use crate::sync::atomic::Ordering::Relaxed;
            let credit = self.credit.load(Relaxed);
            self.credit.store(credit.saturating_sub(WASTED), Relaxed);
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_gauge_stops_spinning_after_wasted_waits_and_tests_again() {
        let g = SpinGauge::new();
        // A new list spins until its spinning has been wasted CREDIT_MAX / WASTED times.
        let mut spinning_waits = 0;
        while g.should_spin() {
            g.wasted();
            spinning_waits += 1;
            assert!(
                spinning_waits <= CREDIT_MAX / WASTED,
                "the gauge never stops spinning"
            );
        }
        assert_eq!(spinning_waits, CREDIT_MAX / WASTED);
        // Then each wait parks at once, and one wait in WASTED + 1 tests spinning again.
        for round in 0..3 {
            for skipped in 1..WASTED {
                assert!(
                    !g.should_spin(),
                    "round {round}: wait {skipped} after a test spun"
                );
            }
            assert!(
                g.should_spin(),
                "round {round}: no wait tested spinning again"
            );
            g.wasted();
            assert!(
                !g.should_spin(),
                "round {round}: a wasted test left spinning on"
            );
        }
    }

    #[test]
    fn a_gauge_keeps_spinning_while_a_third_of_the_spinning_waits_pay() {
        let g = SpinGauge::new();
        // One paid wait in three: the credit stays up.
        for i in 0..1000 {
            assert!(g.should_spin(), "wait {i}: stopped spinning at 1 paid in 3");
            if i % 3 == 0 {
                g.paid();
            } else {
                g.wasted();
            }
        }
        // One in four: it stops.
        let mut stopped = false;
        for i in 0..1000 {
            if !g.should_spin() {
                stopped = true;
                break;
            }
            if i % 4 == 0 {
                g.paid();
            } else {
                g.wasted();
            }
        }
        assert!(stopped, "kept spinning at 1 paid in 4");
        // A test that pays turns spinning back on for more than one wait.
        while !g.should_spin() {}
        g.paid();
        assert!(g.should_spin() && g.should_spin());
    }

    #[test]
    fn a_short_sleep_counts_as_paid_and_a_long_one_only_after_spinning() {
        let g = SpinGauge::new();
        let mut spinning_waits = 0;
        while g.should_spin() {
            g.slept(SHORT_SLEEP * 10, true); // spun, then slept long: wasted
            spinning_waits += 1;
            assert!(
                spinning_waits <= CREDIT_MAX / WASTED,
                "long sleeps after spinning never stopped the spinning"
            );
        }
        // Long sleeps without spinning change nothing but the test clock.
        for _ in 0..3 {
            assert!(!g.should_spin());
            g.slept(SHORT_SLEEP * 10, false);
        }
        // A short sleep, spun or not, turns spinning back on: the partner was active.
        g.slept(SHORT_SLEEP / 2, false);
        assert!(g.should_spin(), "a short sleep left spinning off");
        assert!(g.should_spin());
    }

    #[test]
    fn backoff_complete_skips_the_rest() {
        let mut b = Backoff::new();
        assert!(!b.is_completed());
        b.complete();
        assert!(b.is_completed());
    }
}
