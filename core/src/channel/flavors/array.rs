//! The bounded flavour: a [`VyukovQueue`] whose `close` is the disconnect.

use super::{RecvFail, SendFail};
use crate::queue::{PopTimeoutError, PushTimeoutError, TryPopError, TryPushError};
use crate::VyukovQueue;
use std::time::Instant;

/// A bounded channel of exactly `capacity` messages.
#[derive(Debug)]
pub(crate) struct Array<T> {
    queue: VyukovQueue<T>,
}

impl<T> Array<T> {
    pub(crate) fn new(capacity: usize) -> Self {
        Array {
            queue: VyukovQueue::new(capacity),
        }
    }

    /// The queue, for the async operations (which drive its attempts and wait lists).
    pub(crate) fn queue(&self) -> &VyukovQueue<T> {
        &self.queue
    }

    #[inline]
    pub(crate) fn try_send(&self, value: T) -> Result<(), SendFail<T>> {
        self.queue.try_push(value).map_err(|e| match e {
            TryPushError::Full(v) => SendFail::Full(v),
            TryPushError::Closed(v) => SendFail::Disconnected(v),
        })
    }

    #[inline]
    pub(crate) fn send(&self, value: T, deadline: Option<Instant>) -> Result<(), SendFail<T>> {
        match deadline {
            None => self
                .queue
                .push(value)
                .map_err(|e| SendFail::Disconnected(e.0)),
            Some(d) => self.queue.push_deadline(value, d).map_err(|e| match e {
                PushTimeoutError::Timeout(v) => SendFail::Timeout(v),
                PushTimeoutError::Closed(v) => SendFail::Disconnected(v),
            }),
        }
    }

    #[inline]
    pub(crate) fn try_recv(&self) -> Result<T, RecvFail> {
        self.queue.try_pop().map_err(|e| match e {
            TryPopError::Empty => RecvFail::Empty,
            TryPopError::Closed => RecvFail::Disconnected,
        })
    }

    #[inline]
    pub(crate) fn recv(&self, deadline: Option<Instant>) -> Result<T, RecvFail> {
        match deadline {
            None => self.queue.pop().map_err(|_| RecvFail::Disconnected),
            Some(d) => self.queue.pop_deadline(d).map_err(|e| match e {
                PopTimeoutError::Timeout => RecvFail::Timeout,
                PopTimeoutError::Closed => RecvFail::Disconnected,
            }),
        }
    }

    pub(crate) fn close(&self) -> bool {
        self.queue.close()
    }

    /// The last receiver is gone: close, and drop what is buffered now rather than when the last
    /// sender goes. A push that claimed a slot before the close is waited for by `try_pop`.
    pub(crate) fn disconnect_receivers(&self) -> bool {
        let closed = self.queue.close();
        while let Ok(v) = self.queue.try_pop() {
            drop(v);
        }
        closed
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.queue.is_closed()
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub(crate) fn is_full(&self) -> bool {
        self.queue.is_full()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.queue.capacity()
    }
}
