//! Multi-producer, single-consumer channels: the same senders, and a receiver that is not
//! `Clone` and receives through `&mut self`, so two receives can never run at once (the compiler
//! says so), and that can take a batch at a time ([`Receiver::recv_many`]).
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
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = super::bounded(capacity);
    (tx, Receiver { inner: rx })
}

/// An unbounded channel with an exclusive receiver.
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = super::unbounded();
    (tx, Receiver { inner: rx })
}

/// The exclusive receiving half of an [`mpsc`](self) channel: not `Clone`, receives through
/// `&mut self`. It can move between threads (`Send`).
pub struct Receiver<T> {
    inner: super::Receiver<T>,
}

impl<T> Receiver<T> {
    /// Receives a message, waiting while the channel is empty; fails once it is empty and
    /// disconnected.
    pub fn recv(&mut self) -> Result<T, RecvError> {
        self.inner.recv()
    }

    /// Receives a message if one is available now.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.inner.try_recv()
    }

    /// Receives a message, waiting at most `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.inner.recv_timeout(timeout)
    }

    /// Receives a message, waiting until `deadline` at most.
    pub fn recv_deadline(&mut self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        self.inner.recv_deadline(deadline)
    }

    /// Receives asynchronously. **Cancel safety:** dropping the future while it is pending
    /// consumes no message, and passes on a wakeup it had been chosen for (as
    /// [`channel::Receiver::recv_async`](super::Receiver::recv_async)).
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
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// True if the channel holds no message.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// `Some(n)` for `bounded(n)`, `None` for `unbounded()`.
    pub fn capacity(&self) -> Option<usize> {
        self.inner.capacity()
    }

    /// The number of live senders.
    pub fn sender_count(&self) -> usize {
        self.inner.sender_count()
    }

    /// True once the channel is disconnected.
    pub fn is_disconnected(&self) -> bool {
        self.inner.is_disconnected()
    }

    /// Disconnects the channel: sends fail at once; this receiver drains what is buffered.
    pub fn close(&self) -> bool {
        self.inner.close()
    }

    /// A blocking iterator: yields messages until the channel is empty and disconnected.
    pub fn iter(&mut self) -> super::Iter<'_, T> {
        self.inner.iter()
    }

    /// A non-blocking iterator over the messages available now.
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
