//! Multi-producer, single-consumer channels: the same senders, and a receiver that is not
//! `Clone` and receives through `&mut self`, so two receives can never run at once (the compiler
//! says so), and that can take a batch at a time ([`Receiver::recv_many`]).
//!
//! # Examples
//!
//! ```
//! use berth::channel::mpsc;
//! use std::thread;
//!
//! let (tx, mut rx) = mpsc::bounded(64);
//! let producers: Vec<_> = (0..4u64)
//!     .map(|id| {
//!         let tx = tx.clone();
//!         thread::spawn(move || (0..100).for_each(|i| tx.send(id * 100 + i).unwrap()))
//!     })
//!     .collect();
//! drop(tx);
//! let mut batch = Vec::new();
//! let mut total = 0;
//! while let Ok(n) = rx.recv_many(&mut batch, 32) {
//!     assert!(n >= 1 && n <= 32);
//!     total += batch.drain(..).sum::<u64>();
//! }
//! assert_eq!(total, (0..400).sum());
//! # for p in producers { p.join().unwrap(); }
//! ```
//!
//! The receiver is exclusive:
//!
//! ```compile_fail,E0599
//! let (_tx, rx) = berth::channel::mpsc::unbounded::<u32>();
//! let other = rx.clone(); // not Clone
//! ```
//!
//! ```compile_fail,E0499
//! let (_tx, mut rx) = berth::channel::mpsc::unbounded::<u32>();
//! let a = rx.recv_async();
//! let b = rx.recv_async(); // a second receive while the first is pending: two `&mut` borrows
//! drop((a, b));
//! ```
//!
//! The receiver runs on the same flavours as [`channel`](super). What it gains from being the
//! only consumer is in [`Receiver::recv_many`] on a bounded channel: every message that is
//! there is claimed by **one** read-modify-write of the queue's `head` (a shared receiver
//! needs one per message, each of which can lose a race and retry), and up to that many blocked
//! senders are woken at once. That one RMW is not arbitration between consumers: with a single
//! consumer it never fails. It stays because it is the consumer's half of the no-lost-wakeup
//! handshake with a sender going to sleep on a full channel (the sender re-checks `head` with an
//! RMW; a plain store by the consumer would not synchronise with it, see [`crate::park`]), and
//! on x86-64 a plain store followed by the fence that would replace it costs the same. The
//! unbounded and rendezvous flavours take a batch message by message.

use super::future::{RecvFuture, RecvState};
use super::{RecvError, RecvTimeoutError, TryRecvError};
use std::fmt;
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

pub use super::Sender;

/// A channel of exactly `capacity` messages with an exclusive receiver; `bounded(0)` is a
/// rendezvous channel.
///
/// # Panics
///
/// As [`channel::bounded`](super::bounded).
///
/// # Examples
///
/// ```
/// use berth::channel::mpsc;
///
/// let (tx, mut rx) = mpsc::bounded(2);
/// tx.send(1).unwrap();
/// tx.send(2).unwrap();
/// assert!(tx.try_send(3).unwrap_err().is_full());
/// assert_eq!(rx.recv(), Ok(1));
/// ```
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = super::bounded(capacity);
    (tx, Receiver { inner: rx })
}

/// An unbounded channel with an exclusive receiver.
///
/// # Examples
///
/// ```
/// use berth::channel::mpsc;
/// use std::thread;
///
/// let (tx, mut rx) = mpsc::unbounded();
/// let producer = thread::spawn(move || (0..100).for_each(|i| tx.send(i).unwrap()));
/// let mut buf = Vec::new();
/// while rx.recv_many(&mut buf, 16).is_ok() {} // until the producer is gone and all is taken
/// assert_eq!(buf, (0..100).collect::<Vec<_>>());
/// producer.join().unwrap();
/// ```
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = super::unbounded();
    (tx, Receiver { inner: rx })
}

/// The exclusive receiving half of an [`mpsc`](self) channel: not `Clone`, receives through
/// `&mut self`. It can move between threads (`Send`).
///
/// # Examples
///
/// ```
/// use berth::channel::mpsc;
/// use std::thread;
///
/// let (tx, mut rx) = mpsc::bounded(8);
/// // The receiver is not Clone, but it can move to another thread.
/// let consumer = thread::spawn(move || rx.iter().sum::<u32>());
/// for i in 1..=4 {
///     tx.send(i).unwrap();
/// }
/// drop(tx);
/// assert_eq!(consumer.join().unwrap(), 10);
/// ```
pub struct Receiver<T> {
    inner: super::Receiver<T>,
}

impl<T> Receiver<T> {
    /// Receives a message, waiting while the channel is empty; fails once it is empty and
    /// disconnected.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, mut rx) = berth::channel::mpsc::unbounded();
    /// tx.send(1).unwrap();
    /// drop(tx);
    /// assert_eq!(rx.recv(), Ok(1));
    /// assert!(rx.recv().is_err()); // empty and disconnected
    /// ```
    pub fn recv(&mut self) -> Result<T, RecvError> {
        self.inner.recv()
    }

    /// Receives a message if one is available now.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, mut rx) = berth::channel::mpsc::unbounded();
    /// assert!(rx.try_recv().unwrap_err().is_empty());
    /// tx.send(2).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(2));
    /// ```
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.inner.try_recv()
    }

    /// Receives a message, waiting at most `timeout`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tx, mut rx) = berth::channel::mpsc::bounded(1);
    /// assert!(rx.recv_timeout(Duration::from_millis(1)).unwrap_err().is_timeout());
    /// tx.send(3).unwrap();
    /// assert_eq!(rx.recv_timeout(Duration::from_millis(1)), Ok(3));
    /// ```
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.inner.recv_timeout(timeout)
    }

    /// Receives a message, waiting until `deadline` at most.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// let (_tx, mut rx) = berth::channel::mpsc::unbounded::<u8>();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(rx.recv_deadline(deadline).unwrap_err().is_timeout());
    /// assert!(Instant::now() >= deadline);
    /// ```
    pub fn recv_deadline(&mut self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        self.inner.recv_deadline(deadline)
    }

    /// Receives asynchronously. **Cancel safety:** dropping the future while it is pending
    /// consumes no message, and passes on a wakeup it had been chosen for (as
    /// [`channel::Receiver::recv_async`](super::Receiver::recv_async)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    ///
    /// let (tx, mut rx) = berth::channel::mpsc::unbounded();
    /// let mut cx = Context::from_waker(Waker::noop());
    /// let mut recv = pin!(rx.recv_async());
    /// assert!(recv.as_mut().poll(&mut cx).is_pending());
    /// tx.send(9).unwrap();
    /// assert_eq!(recv.poll(&mut cx), Poll::Ready(Ok(9)));
    /// ```
    pub fn recv_async(&mut self) -> RecvFuture<'_, T> {
        self.inner.recv_async()
    }

    /// Appends up to `limit` messages to `buf`, waiting only for the first (never to fill the
    /// batch), and returns how many it appended. `limit == 0` returns `Ok(0)` at once. Fails
    /// once the channel is empty and disconnected.
    ///
    /// On a bounded channel the messages that are there are claimed as one batch (one atomic
    /// read-modify-write for the whole batch, since no other receiver can compete), and a batch
    /// that frees `n` slots wakes up to `n` blocked senders at once.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, mut rx) = berth::channel::mpsc::unbounded();
    /// for i in 0..5 {
    ///     tx.send(i).unwrap();
    /// }
    /// let mut buf = Vec::new();
    /// assert_eq!(rx.recv_many(&mut buf, 3), Ok(3));
    /// assert_eq!(rx.recv_many(&mut buf, 10), Ok(2)); // only what is there
    /// assert_eq!(buf, [0, 1, 2, 3, 4]);
    /// drop(tx);
    /// assert!(rx.recv_many(&mut buf, 10).is_err());
    /// ```
    pub fn recv_many(&mut self, buf: &mut Vec<T>, limit: usize) -> Result<usize, RecvError> {
        if limit == 0 {
            return Ok(0);
        }
        // Take what is there as one batch; wait only if nothing is.
        let n = drain_ready(&self.inner, buf, limit);
        if n > 0 {
            return Ok(n);
        }
        buf.push(self.inner.recv()?);
        Ok(1 + drain_ready(&self.inner, buf, limit - 1))
    }

    /// [`recv_many`](Self::recv_many), waiting asynchronously for the first message.
    /// **Cancel safety:** dropping the future while it is pending consumes no message and
    /// appends nothing to `buf`, and passes on a wakeup it had been chosen for (as
    /// [`channel::Receiver::recv_async`](super::Receiver::recv_async)). A batch is taken
    /// only in the poll that completes the future.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    ///
    /// let (tx, mut rx) = berth::channel::mpsc::bounded(8);
    /// let mut cx = Context::from_waker(Waker::noop());
    /// let mut buf = Vec::new();
    /// {
    ///     let mut batch = pin!(rx.recv_many_async(&mut buf, 4));
    ///     assert!(batch.as_mut().poll(&mut cx).is_pending()); // nothing yet
    ///     for i in 0..6 {
    ///         tx.send(i).unwrap();
    ///     }
    ///     assert_eq!(batch.poll(&mut cx), Poll::Ready(Ok(4))); // up to the limit
    /// }
    /// assert_eq!(buf, [0, 1, 2, 3]);
    /// ```
    pub fn recv_many_async<'a>(
        &'a mut self,
        buf: &'a mut Vec<T>,
        limit: usize,
    ) -> RecvManyFuture<'a, T> {
        RecvManyFuture {
            receiver: &self.inner,
            buf,
            limit,
            state: RecvState::new(),
            done: false,
            _pinned: PhantomPinned,
        }
    }

    /// The number of messages in the channel.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = berth::channel::mpsc::unbounded();
    /// tx.send(1).unwrap();
    /// tx.send(2).unwrap();
    /// assert_eq!(rx.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// True if the channel holds no message.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, mut rx) = berth::channel::mpsc::unbounded();
    /// assert!(rx.is_empty());
    /// tx.send(1).unwrap();
    /// assert!(!rx.is_empty());
    /// rx.recv().unwrap();
    /// assert!(rx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// `Some(n)` for `bounded(n)`, `None` for `unbounded()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::mpsc;
    ///
    /// assert_eq!(mpsc::bounded::<u8>(4).1.capacity(), Some(4));
    /// assert_eq!(mpsc::unbounded::<u8>().1.capacity(), None);
    /// ```
    pub fn capacity(&self) -> Option<usize> {
        self.inner.capacity()
    }

    /// The number of live senders.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = berth::channel::mpsc::unbounded::<u8>();
    /// let tx2 = tx.clone();
    /// assert_eq!(rx.sender_count(), 2);
    /// drop((tx, tx2));
    /// assert_eq!(rx.sender_count(), 0);
    /// assert!(rx.is_disconnected());
    /// ```
    pub fn sender_count(&self) -> usize {
        self.inner.sender_count()
    }

    /// True once the channel is disconnected.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = berth::channel::mpsc::unbounded::<u8>();
    /// assert!(!rx.is_disconnected());
    /// drop(tx);
    /// assert!(rx.is_disconnected());
    /// ```
    pub fn is_disconnected(&self) -> bool {
        self.inner.is_disconnected()
    }

    /// Disconnects the channel: sends fail at once; this receiver drains what is buffered.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, mut rx) = berth::channel::mpsc::unbounded();
    /// tx.send(1).unwrap();
    /// assert!(rx.close());
    /// assert!(tx.send(2).is_err()); // sends fail at once
    /// assert_eq!(rx.recv(), Ok(1)); // the receiver drains what is buffered
    /// assert!(rx.recv().is_err());
    /// ```
    pub fn close(&self) -> bool {
        self.inner.close()
    }

    /// A blocking iterator: yields messages until the channel is empty and disconnected.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    ///
    /// let (tx, mut rx) = berth::channel::mpsc::bounded(2);
    /// let sender = thread::spawn(move || {
    ///     for word in ["a", "b", "c"] {
    ///         tx.send(word).unwrap();
    ///     }
    /// });
    /// assert_eq!(rx.iter().collect::<String>(), "abc"); // ends when the sender is gone
    /// sender.join().unwrap();
    /// ```
    pub fn iter(&mut self) -> super::Iter<'_, T> {
        self.inner.iter()
    }

    /// A non-blocking iterator over the messages available now.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, mut rx) = berth::channel::mpsc::unbounded();
    /// tx.send(1).unwrap();
    /// tx.send(2).unwrap();
    /// assert_eq!(rx.try_iter().sum::<i32>(), 3);
    /// assert_eq!(rx.try_iter().next(), None); // nothing now; `tx` is still connected
    /// ```
    pub fn try_iter(&mut self) -> super::TryIter<'_, T> {
        self.inner.try_iter()
    }
}

impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = super::IntoIter<T>;
    fn into_iter(self) -> super::IntoIter<T> {
        self.inner.into_iter()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("mpsc::Receiver").field(&self.inner).finish()
    }
}

/// Moves up to `max` messages available now into `buf`, and returns how many. On a bounded
/// channel they are claimed as one batch (one RMW on the queue's `head`, up to that many blocked
/// senders woken at once); the other flavours take them one by one.
fn drain_ready<T>(receiver: &super::Receiver<T>, buf: &mut Vec<T>, max: usize) -> usize {
    if let super::Flavor::Array(c) = &receiver.shared.flavor {
        return c.queue().pop_batch(buf, max);
    }
    let mut n = 0;
    while n < max {
        match receiver.try_recv() {
            Ok(v) => {
                buf.push(v);
                n += 1;
            }
            Err(_) => break,
        }
    }
    n
}

/// The future of [`Receiver::recv_many_async`].
///
/// **Cancel safety:** dropping it while pending consumes no message, appends nothing, and
/// passes on a wakeup it had been chosen for.
///
/// # Examples
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Waker};
///
/// let (tx, mut rx) = berth::channel::mpsc::unbounded();
/// let mut cx = Context::from_waker(Waker::noop());
/// let mut buf = Vec::new();
/// {
///     let mut batch = pin!(rx.recv_many_async(&mut buf, 8));
///     assert!(batch.as_mut().poll(&mut cx).is_pending());
/// } // cancelled while pending: consumes nothing, appends nothing
/// tx.send(1).unwrap();
/// assert!(buf.is_empty());
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct RecvManyFuture<'a, T> {
    receiver: &'a super::Receiver<T>,
    buf: &'a mut Vec<T>,
    limit: usize,
    state: RecvState,
    done: bool,
    _pinned: PhantomPinned,
}

impl<T> Future for RecvManyFuture<'_, T> {
    type Output = Result<usize, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: nothing is moved out of the pinned future; its fields are used in place.
        let this = unsafe { self.get_unchecked_mut() };
        assert!(!this.done, "RecvManyFuture polled after completion");
        if this.limit == 0 {
            this.done = true;
            return Poll::Ready(Ok(0));
        }
        let key = this as *const Self as usize;
        match this.state.poll(&this.receiver.shared, key, cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => {
                this.done = true;
                Poll::Ready(Err(e))
            }
            Poll::Ready(Ok(first)) => {
                this.done = true;
                this.buf.push(first);
                Poll::Ready(Ok(1 + drain_ready(this.receiver, this.buf, this.limit - 1)))
            }
        }
    }
}

impl<T> Drop for RecvManyFuture<'_, T> {
    fn drop(&mut self) {
        let key = self as *const Self as usize;
        self.state.cancel(&self.receiver.shared, key);
    }
}

impl<T> fmt::Debug for RecvManyFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvManyFuture")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}
