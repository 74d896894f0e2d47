//! The timer flavours behind [`after`](crate::channel::after), [`at`](crate::channel::at),
//! [`tick`](crate::channel::tick) and [`never`](crate::channel::never).
//!
//! A timer channel holds no buffer and has no sender: its message is computed from the clock
//! when a receive finds it due. So it costs no thread and no allocation beyond its handle, and a
//! receive that waits for it sleeps on this thread's parker until the due instant (a spurious
//! wakeup just re-reads the clock). Timer channels never disconnect: `close` has no effect and
//! returns false, and a receive that finds nothing to deliver waits (until its deadline, if it
//! has one).
//!
//! - **at / after**: delivers its instant once, to the first receive at or after it; every
//!   later receive finds it empty.
//! - **tick**: delivers the instant of the latest tick that is due; ticks that came and went
//!   while nobody received are dropped (at most one is ever pending), and the next tick stays on
//!   the original phase (`start + k * period`).
//! - **never**: never delivers.
//!
//! The models have no clock, so none of this is model-checked; `core/tests/channel_select.rs`
//! tests it on real time with generous bounds.

use super::{RecvFail, SendFail};
use crate::park::with_local_parker;
use crate::sync::atomic::{
    AtomicU32,
    Ordering::{AcqRel, Acquire},
};
use crate::sync::Mutex;
use std::time::{Duration, Instant};

/// What every timer flavour offers; the receive methods of the channel dispatch here.
pub(crate) trait Clock<T> {
    /// A message, if one is due now.
    fn poll_due(&self, now: Instant) -> Option<T>;
    /// When the next message will be due, `None` if never.
    fn next_due(&self) -> Option<Instant>;
}

/// `at(when)`: one message at `when`.
pub(crate) struct At<T> {
    when: Instant,
    delivered: AtomicU32,
    make: fn(Instant) -> T,
}

impl<T> At<T> {
    pub(crate) fn new(when: Instant, make: fn(Instant) -> T) -> Self {
        At {
            when,
            delivered: AtomicU32::new(0),
            make,
        }
    }

    pub(crate) fn len(&self) -> usize {
        usize::from(Instant::now() >= self.when && self.delivered.load(Acquire) == 0)
    }
}

impl<T> Clock<T> for At<T> {
    fn poll_due(&self, now: Instant) -> Option<T> {
        // The swap makes exactly one receive the one that takes the message.
        if now >= self.when && self.delivered.swap(1, AcqRel) == 0 {
            Some((self.make)(self.when))
        } else {
            None
        }
    }

    fn next_due(&self) -> Option<Instant> {
        if self.delivered.load(Acquire) != 0 {
            None
        } else {
            Some(self.when)
        }
    }
}

/// `tick(period)`: a message at `first + k * period` for k = 0, 1, 2, ...
pub(crate) struct Tick<T> {
    /// The instant of the next tick to deliver; `None` once the clock cannot represent it.
    next: Mutex<Option<Instant>>,
    period: Duration,
    make: fn(Instant) -> T,
}

impl<T> Tick<T> {
    pub(crate) fn new(first: Option<Instant>, period: Duration, make: fn(Instant) -> T) -> Self {
        Tick {
            next: Mutex::new(first),
            period,
            make,
        }
    }

    pub(crate) fn len(&self) -> usize {
        usize::from(self.next.lock().is_some_and(|next| Instant::now() >= next))
    }
}

impl<T> Clock<T> for Tick<T> {
    fn poll_due(&self, now: Instant) -> Option<T> {
        let mut next = self.next.lock();
        let due = (*next)?;
        if now < due {
            return None;
        }
        // Deliver the latest tick that is due; drop the ones before it and keep the phase.
        let delivered = if self.period.is_zero() {
            now
        } else {
            let behind = now.duration_since(due).as_nanos() / self.period.as_nanos();
            let behind = u32::try_from(behind).unwrap_or(u32::MAX);
            due.checked_add(self.period.saturating_mul(behind))
                .unwrap_or(now)
        };
        *next = delivered.checked_add(self.period);
        Some((self.make)(delivered))
    }

    fn next_due(&self) -> Option<Instant> {
        *self.next.lock()
    }
}

/// `never()`: no message, ever.
pub(crate) struct Never;

impl<T> Clock<T> for Never {
    fn poll_due(&self, _now: Instant) -> Option<T> {
        None
    }

    fn next_due(&self) -> Option<Instant> {
        None
    }
}

/// The channel operations of a timer flavour.
pub(crate) struct Timer<C>(pub(crate) C);

impl<C> Timer<C> {
    /// No sender exists for a timer channel; a send (which cannot be written) would fail.
    pub(crate) fn try_send<T>(&self, value: T) -> Result<(), SendFail<T>> {
        Err(SendFail::Disconnected(value))
    }

    pub(crate) fn send<T>(&self, value: T, _deadline: Option<Instant>) -> Result<(), SendFail<T>> {
        Err(SendFail::Disconnected(value))
    }

    pub(crate) fn try_recv<T>(&self) -> Result<T, RecvFail>
    where
        C: Clock<T>,
    {
        self.0.poll_due(Instant::now()).ok_or(RecvFail::Empty)
    }

    /// Waits for the next message, or for `deadline`.
    pub(crate) fn recv<T>(&self, deadline: Option<Instant>) -> Result<T, RecvFail>
    where
        C: Clock<T>,
    {
        with_local_parker(|parker| loop {
            let now = Instant::now();
            if let Some(v) = self.0.poll_due(now) {
                return Ok(v);
            }
            if deadline.is_some_and(|d| now >= d) {
                return Err(RecvFail::Timeout);
            }
            // Nobody unparks us for a timer: sleep until it is due (or the deadline). A token
            // left by an earlier wakeup, or a spurious return, just re-reads the clock.
            let wake_at = match (self.0.next_due(), deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            parker.park_until(wake_at);
        })
    }

    /// Timer channels never disconnect.
    pub(crate) fn close(&self) -> bool {
        false
    }

    pub(crate) fn is_closed(&self) -> bool {
        false
    }
}
