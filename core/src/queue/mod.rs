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
//!
//! # Examples
//!
//! The same code on each queue, through the trait:
//!
//! ```
//! use berth::queue::{BoundedQueue, MutexQueue, VyukovQueue};
//!
//! fn exercise<Q: BoundedQueue<u8>>(q: Q) {
//!     q.try_push(1).unwrap();
//!     q.try_push(2).unwrap();
//!     assert!(q.try_push(3).unwrap_err().is_full()); // exactly `capacity` values
//!     q.close();
//!     assert_eq!((q.pop(), q.pop()), (Ok(1), Ok(2))); // FIFO, drained after close
//!     assert!(q.pop().is_err());
//! }
//! exercise(MutexQueue::new(2));
//! exercise(VyukovQueue::new(2));
//! # #[cfg(target_pointer_width = "64")]
//! exercise(berth::queue::ScqQueue::new(2));
//! ```

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
///
/// # Examples
///
/// ```
/// use berth::{BoundedQueue, MutexQueue, VyukovQueue};
/// use std::sync::Arc;
/// use std::thread;
///
/// /// Moves `n` values through any of berth's queues with one producer thread.
/// fn relay<Q: BoundedQueue<u64> + Send + Sync + 'static>(q: Q, n: u64) -> u64 {
///     let q = Arc::new(q);
///     let producer = {
///         let q = Arc::clone(&q);
///         thread::spawn(move || {
///             for i in 0..n {
///                 q.push(i).unwrap();
///             }
///             q.close();
///         })
///     };
///     let mut sum = 0;
///     while let Ok(v) = q.pop() {
///         sum += v;
///     }
///     producer.join().unwrap();
///     sum
/// }
/// assert_eq!(relay(VyukovQueue::new(4), 100), 4950);
/// assert_eq!(relay(MutexQueue::new(4), 100), 4950);
/// ```
pub trait BoundedQueue<T>: private::Sealed {
    /// Pushes `value` if there is room, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, MutexQueue, VyukovQueue};
    ///
    /// fn fill<Q: BoundedQueue<u32>>(q: &Q) -> u32 {
    ///     let mut n = 0;
    ///     while q.try_push(n).is_ok() {
    ///         n += 1;
    ///     }
    ///     n
    /// }
    /// assert_eq!(fill(&VyukovQueue::new(3)), 3);
    /// assert_eq!(fill(&MutexQueue::new(5)), 5);
    /// ```
    fn try_push(&self, value: T) -> Result<(), TryPushError<T>>;
    /// Pushes `value`, waiting while the queue is full. Fails only once the queue is closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, VyukovQueue};
    ///
    /// fn send_all<Q: BoundedQueue<u32>>(q: &Q, values: &[u32]) -> bool {
    ///     values.iter().all(|&v| q.push(v).is_ok())
    /// }
    /// let q = VyukovQueue::new(4);
    /// assert!(send_all(&q, &[1, 2, 3]));
    /// q.close();
    /// assert!(!send_all(&q, &[4]));
    /// ```
    fn push(&self, value: T) -> Result<(), PushError<T>>;
    /// Pushes `value`, waiting at most `timeout` while the queue is full.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, MutexQueue};
    /// use std::time::Duration;
    ///
    /// fn offer<Q: BoundedQueue<u32>>(q: &Q, v: u32) -> bool {
    ///     q.push_timeout(v, Duration::from_millis(1)).is_ok()
    /// }
    /// let q = MutexQueue::new(1);
    /// assert!(offer(&q, 1));
    /// assert!(!offer(&q, 2)); // full for the whole millisecond
    /// ```
    fn push_timeout(&self, value: T, timeout: Duration) -> Result<(), PushTimeoutError<T>>;
    /// Pops the oldest value, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, VyukovQueue};
    ///
    /// fn drain<Q: BoundedQueue<u32>>(q: &Q) -> Vec<u32> {
    ///     std::iter::from_fn(|| q.try_pop().ok()).collect()
    /// }
    /// let q = VyukovQueue::new(4);
    /// q.push(1).unwrap();
    /// q.push(2).unwrap();
    /// assert_eq!(drain(&q), [1, 2]);
    /// ```
    fn try_pop(&self) -> Result<T, TryPopError>;
    /// Pops the oldest value, waiting while the queue is empty. Fails once closed and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, VyukovQueue};
    ///
    /// fn sum<Q: BoundedQueue<u64>>(q: &Q) -> u64 {
    ///     let mut total = 0;
    ///     while let Ok(v) = q.pop() {
    ///         total += v; // ends once the queue is closed and drained
    ///     }
    ///     total
    /// }
    /// let q = VyukovQueue::new(4);
    /// q.push(20).unwrap();
    /// q.push(22).unwrap();
    /// q.close();
    /// assert_eq!(sum(&q), 42);
    /// ```
    fn pop(&self) -> Result<T, PopError>;
    /// Pops the oldest value, waiting at most `timeout` while the queue is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, MutexQueue};
    /// use std::time::Duration;
    ///
    /// fn poll<Q: BoundedQueue<u32>>(q: &Q) -> Option<u32> {
    ///     q.pop_timeout(Duration::from_millis(1)).ok()
    /// }
    /// let q = MutexQueue::new(1);
    /// assert_eq!(poll(&q), None);
    /// q.push(7).unwrap();
    /// assert_eq!(poll(&q), Some(7));
    /// ```
    fn pop_timeout(&self, timeout: Duration) -> Result<T, PopTimeoutError>;
    /// Closes the queue and wakes every waiting thread. True for the call that closed it.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, VyukovQueue};
    ///
    /// fn shut<Q: BoundedQueue<u32>>(q: &Q) -> bool {
    ///     q.close()
    /// }
    /// let q = VyukovQueue::new(1);
    /// assert!(shut(&q)); // this call closed it
    /// assert!(!shut(&q));
    /// assert!(q.try_push(1).unwrap_err().is_closed());
    /// ```
    fn close(&self) -> bool;
    /// True once the queue is closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, MutexQueue};
    ///
    /// fn open<Q: BoundedQueue<u32>>(q: &Q) -> bool {
    ///     !q.is_closed()
    /// }
    /// let q = MutexQueue::new(1);
    /// assert!(open(&q));
    /// q.close();
    /// assert!(!open(&q));
    /// ```
    fn is_closed(&self) -> bool;
    /// The number of values inside (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, VyukovQueue};
    ///
    /// fn backlog<Q: BoundedQueue<u32>>(q: &Q) -> usize {
    ///     q.len()
    /// }
    /// let q = VyukovQueue::new(8);
    /// q.push(1).unwrap();
    /// q.push(2).unwrap();
    /// assert_eq!(backlog(&q), 2);
    /// ```
    fn len(&self) -> usize;
    /// True if the queue holds no value (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, MutexQueue};
    ///
    /// fn idle<Q: BoundedQueue<u32>>(q: &Q) -> bool {
    ///     q.is_empty()
    /// }
    /// let q = MutexQueue::new(2);
    /// assert!(idle(&q));
    /// q.push(1).unwrap();
    /// assert!(!idle(&q));
    /// ```
    fn is_empty(&self) -> bool;
    /// True if the queue holds `capacity` values (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, VyukovQueue};
    ///
    /// fn saturated<Q: BoundedQueue<u32>>(q: &Q) -> bool {
    ///     q.is_full()
    /// }
    /// let q = VyukovQueue::new(1);
    /// assert!(!saturated(&q));
    /// q.push(1).unwrap();
    /// assert!(saturated(&q));
    /// ```
    fn is_full(&self) -> bool;
    /// The number of values the queue can hold.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::{BoundedQueue, MutexQueue, VyukovQueue};
    ///
    /// fn room<Q: BoundedQueue<u32>>(q: &Q) -> usize {
    ///     q.capacity() - q.len()
    /// }
    /// let q = VyukovQueue::new(3);
    /// q.push(1).unwrap();
    /// assert_eq!(room(&q), 2);
    /// assert_eq!(room(&MutexQueue::new(5)), 5);
    /// ```
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
/// `$ty` is the queue's name, for the examples.
macro_rules! blocking_methods {
    ($ty:ident) => {
        /// Pushes `value`, waiting (spinning, then parking) while the queue is full. Fails only
        /// once the queue is closed, handing the value back.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use berth::", stringify!($ty), ";")]
        /// use std::sync::Arc;
        /// use std::thread;
        ///
        #[doc = concat!("let q = Arc::new(", stringify!($ty), "::new(1));")]
        /// let consumer = {
        ///     let q = Arc::clone(&q);
        ///     thread::spawn(move || (q.pop().unwrap(), q.pop().unwrap()))
        /// };
        /// q.push(1).unwrap();
        /// q.push(2).unwrap(); // waits until the consumer makes room
        /// assert_eq!(consumer.join().unwrap(), (1, 2));
        /// q.close();
        /// assert_eq!(q.push(3).unwrap_err().into_inner(), 3);
        /// ```
        pub fn push(&self, value: T) -> Result<(), $crate::queue::PushError<T>> {
            self.push_until(value, None)
                .map_err(|(v, _)| $crate::queue::PushError(v))
        }

        /// Pushes `value`, waiting at most `timeout` while the queue is full.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use berth::", stringify!($ty), ";")]
        /// use std::time::Duration;
        ///
        #[doc = concat!("let q = ", stringify!($ty), "::new(1);")]
        /// q.push_timeout(1, Duration::from_millis(1)).unwrap(); // room: no wait
        /// let e = q.push_timeout(2, Duration::from_millis(1)).unwrap_err();
        /// assert!(e.is_timeout());
        /// assert_eq!(e.into_inner(), 2);
        /// ```
        pub fn push_timeout(
            &self,
            value: T,
            timeout: std::time::Duration,
        ) -> Result<(), $crate::queue::PushTimeoutError<T>> {
            self.push_until(value, $crate::queue::deadline_after(timeout))
                .map_err($crate::queue::Wait::push_error)
        }

        /// Pushes `value`, waiting until `deadline` at most while the queue is full.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use berth::", stringify!($ty), ";")]
        /// use std::time::{Duration, Instant};
        ///
        #[doc = concat!("let q = ", stringify!($ty), "::new(1);")]
        /// q.push(1).unwrap();
        /// let deadline = Instant::now() + Duration::from_millis(1);
        /// assert!(q.push_deadline(2, deadline).unwrap_err().is_timeout());
        /// assert!(Instant::now() >= deadline);
        /// ```
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
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use berth::", stringify!($ty), ";")]
        /// use std::sync::Arc;
        /// use std::thread;
        ///
        #[doc = concat!("let q = Arc::new(", stringify!($ty), "::new(4));")]
        /// let producer = {
        ///     let q = Arc::clone(&q);
        ///     thread::spawn(move || {
        ///         q.push(1).unwrap();
        ///         q.close();
        ///     })
        /// };
        /// assert_eq!(q.pop(), Ok(1)); // waits for the producer
        /// producer.join().unwrap();
        /// assert!(q.pop().is_err()); // closed and drained
        /// ```
        pub fn pop(&self) -> Result<T, $crate::queue::PopError> {
            self.pop_until(None).map_err(|_| $crate::queue::PopError)
        }

        /// Pops the oldest value, waiting at most `timeout` while the queue is empty.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use berth::", stringify!($ty), ";")]
        /// use std::time::Duration;
        ///
        #[doc = concat!("let q = ", stringify!($ty), "::new(1);")]
        /// q.push(5).unwrap();
        /// assert_eq!(q.pop_timeout(Duration::from_millis(1)), Ok(5));
        /// assert!(q.pop_timeout(Duration::from_millis(1)).unwrap_err().is_timeout());
        /// ```
        pub fn pop_timeout(
            &self,
            timeout: std::time::Duration,
        ) -> Result<T, $crate::queue::PopTimeoutError> {
            self.pop_until($crate::queue::deadline_after(timeout))
                .map_err($crate::queue::Wait::pop_error)
        }

        /// Pops the oldest value, waiting until `deadline` at most while the queue is empty.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use berth::", stringify!($ty), ";")]
        /// use std::time::{Duration, Instant};
        ///
        #[doc = concat!("let q = ", stringify!($ty), "::<u32>::new(1);")]
        /// let deadline = Instant::now() + Duration::from_millis(1);
        /// assert!(q.pop_deadline(deadline).unwrap_err().is_timeout());
        /// assert!(Instant::now() >= deadline);
        /// ```
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
