//! Bounded MPMC queues behind one trait.
//!
//! | queue            | algorithm                                   | progress                      |
//! |------------------|---------------------------------------------|-------------------------------|
//! | [`MutexQueue`]   | a ring behind one `Mutex`, two `Condvar`s   | blocking; the reference       |
//! | [`VyukovQueue`]  | Vyukov's ring of per-slot stamps            | lock-free claims; a paused producer stalls its slot's consumer |
//! | `ScqQueue`       | Nikolaev's SCQ: two rings of indices        | lock-free (64-bit targets)    |
//!
//! All of them implement the sealed trait [`BoundedQueue`], hold exactly `capacity` values, can
//! be closed, and wait by spinning and then parking (see [`crate::park`]).

mod error;
mod mutex;
#[cfg(target_pointer_width = "64")]
mod scq;
mod vyukov;

pub use error::{
    PopError, PopTimeoutError, PushError, PushTimeoutError, TryPopError, TryPushError,
};
pub use mutex::MutexQueue;
#[cfg(target_pointer_width = "64")]
pub use scq::ScqQueue;
pub use vyukov::VyukovQueue;

use std::time::{Duration, Instant};

mod private {
    pub trait Sealed {}
}

/// A bounded multi-producer multi-consumer FIFO queue that can be closed.
///
/// Sealed: only berth's queues implement it, so methods can be added without breaking anyone.
///
/// - Values pushed by one thread are popped in the order that thread pushed them, and each value
///   is popped exactly once.
/// - [`close`](Self::close) makes every later push fail (handing the value back) and wakes every
///   waiting thread; values already inside can still be popped. Pops fail with `Closed` only once
///   the queue is closed **and** drained.
/// - Dropping the queue drops the values still inside, each exactly once.
pub trait BoundedQueue<T>: private::Sealed {
    /// Pushes `value` if there is room, without waiting.
    fn try_push(&self, value: T) -> Result<(), TryPushError<T>>;
    /// Pushes `value`, waiting while the queue is full. Fails only once the queue is closed.
    fn push(&self, value: T) -> Result<(), PushError<T>>;
    /// Pushes `value`, waiting at most `timeout` while the queue is full.
    fn push_timeout(&self, value: T, timeout: Duration) -> Result<(), PushTimeoutError<T>>;
    /// Pops the oldest value, without waiting.
    fn try_pop(&self) -> Result<T, TryPopError>;
    /// Pops the oldest value, waiting while the queue is empty. Fails once closed and drained.
    fn pop(&self) -> Result<T, PopError>;
    /// Pops the oldest value, waiting at most `timeout` while the queue is empty.
    fn pop_timeout(&self, timeout: Duration) -> Result<T, PopTimeoutError>;
    /// Closes the queue and wakes every waiting thread. True for the call that closed it.
    fn close(&self) -> bool;
    /// True once the queue is closed.
    fn is_closed(&self) -> bool;
    /// The number of values inside (a snapshot).
    fn len(&self) -> usize;
    /// True if the queue holds no value (a snapshot).
    fn is_empty(&self) -> bool;
    /// True if the queue holds `capacity` values (a snapshot).
    fn is_full(&self) -> bool;
    /// The number of values the queue can hold.
    fn capacity(&self) -> usize;
}

/// Why a blocking queue operation gave up.
pub(crate) enum Wait {
    Closed,
    TimedOut,
}

/// The six public blocking methods of a queue, built on its two blocking bodies:
/// `push_until(&self, T, Option<Instant>) -> Result<(), (T, Wait)>` and
/// `pop_until(&self, Option<Instant>) -> Result<T, Wait>` (`None`: wait forever).
macro_rules! blocking_methods {
    () => {
        /// Pushes `value`, waiting (spinning, then parking) while the queue is full. Fails only
        /// once the queue is closed, handing the value back.
        pub fn push(&self, value: T) -> Result<(), $crate::queue::PushError<T>> {
            self.push_until(value, None)
                .map_err(|(v, _)| $crate::queue::PushError(v))
        }

        /// Pushes `value`, waiting at most `timeout` while the queue is full.
        pub fn push_timeout(
            &self,
            value: T,
            timeout: std::time::Duration,
        ) -> Result<(), $crate::queue::PushTimeoutError<T>> {
            self.push_until(value, $crate::queue::deadline_after(timeout))
                .map_err($crate::queue::Wait::push_error)
        }

        /// Pushes `value`, waiting until `deadline` at most while the queue is full.
        pub fn push_deadline(
            &self,
            value: T,
            deadline: std::time::Instant,
        ) -> Result<(), $crate::queue::PushTimeoutError<T>> {
            self.push_until(value, Some(deadline))
                .map_err($crate::queue::Wait::push_error)
        }

        /// Pops the oldest value, waiting (spinning, then parking) while the queue is empty.
        /// Fails once the queue is closed and drained.
        pub fn pop(&self) -> Result<T, $crate::queue::PopError> {
            self.pop_until(None).map_err(|_| $crate::queue::PopError)
        }

        /// Pops the oldest value, waiting at most `timeout` while the queue is empty.
        pub fn pop_timeout(
            &self,
            timeout: std::time::Duration,
        ) -> Result<T, $crate::queue::PopTimeoutError> {
            self.pop_until($crate::queue::deadline_after(timeout))
                .map_err($crate::queue::Wait::pop_error)
        }

        /// Pops the oldest value, waiting until `deadline` at most while the queue is empty.
        pub fn pop_deadline(
            &self,
            deadline: std::time::Instant,
        ) -> Result<T, $crate::queue::PopTimeoutError> {
            self.pop_until(Some(deadline))
                .map_err($crate::queue::Wait::pop_error)
        }
    };
}
pub(crate) use blocking_methods;

impl Wait {
    /// From [`block_handover_until`](crate::park::block_handover_until)'s refused flag.
    pub(crate) fn from_handover<T>((value, refused): (T, bool)) -> (T, Wait) {
        (
            value,
            if refused {
                Wait::Closed
            } else {
                Wait::TimedOut
            },
        )
    }

    fn push_error<T>((value, why): (T, Wait)) -> PushTimeoutError<T> {
        match why {
            Wait::Closed => PushTimeoutError::Closed(value),
            Wait::TimedOut => PushTimeoutError::Timeout(value),
        }
    }

    fn pop_error(why: Wait) -> PopTimeoutError {
        match why {
            Wait::Closed => PopTimeoutError::Closed,
            Wait::TimedOut => PopTimeoutError::Timeout,
        }
    }
}

/// `now + timeout`, or `None` (wait forever) when that is beyond `Instant`'s range.
#[inline]
pub(crate) fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// Implements the trait by forwarding to the inherent methods of the same names.
macro_rules! impl_bounded_queue {
    ($ty:ident) => {
        impl<T> $crate::queue::private::Sealed for $ty<T> {}

        impl<T> $crate::queue::BoundedQueue<T> for $ty<T> {
            #[inline]
            fn try_push(&self, value: T) -> Result<(), $crate::queue::TryPushError<T>> {
                $ty::try_push(self, value)
            }
            #[inline]
            fn push(&self, value: T) -> Result<(), $crate::queue::PushError<T>> {
                $ty::push(self, value)
            }
            #[inline]
            fn push_timeout(
                &self,
                value: T,
                timeout: std::time::Duration,
            ) -> Result<(), $crate::queue::PushTimeoutError<T>> {
                $ty::push_timeout(self, value, timeout)
            }
            #[inline]
            fn try_pop(&self) -> Result<T, $crate::queue::TryPopError> {
                $ty::try_pop(self)
            }
            #[inline]
            fn pop(&self) -> Result<T, $crate::queue::PopError> {
                $ty::pop(self)
            }
            #[inline]
            fn pop_timeout(
                &self,
                timeout: std::time::Duration,
            ) -> Result<T, $crate::queue::PopTimeoutError> {
                $ty::pop_timeout(self, timeout)
            }
            #[inline]
            fn close(&self) -> bool {
                $ty::close(self)
            }
            #[inline]
            fn is_closed(&self) -> bool {
                $ty::is_closed(self)
            }
            #[inline]
            fn len(&self) -> usize {
                $ty::len(self)
            }
            #[inline]
            fn is_empty(&self) -> bool {
                $ty::is_empty(self)
            }
            #[inline]
            fn is_full(&self) -> bool {
                $ty::is_full(self)
            }
            #[inline]
            fn capacity(&self) -> usize {
                $ty::capacity(self)
            }
        }
    };
}
pub(crate) use impl_bounded_queue;
