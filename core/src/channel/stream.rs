//! `futures_core::Stream` and `futures_sink::Sink` over a channel (feature `futures`).
//!
//! Unlike the futures of [`send_async`](super::Sender::send_async) and
//! [`recv_async`](super::Receiver::recv_async), the stream and the sink are `Unpin` (so
//! `StreamExt::next` and `SinkExt::send` work on them directly): their key in a wait list is the
//! address of a one-byte heap token they own, not their own address. Cancellation is the same:
//! dropping a stream between items consumes nothing and passes on a wakeup it was chosen for;
//! dropping a sink with an item still unsent drops that item.

use super::future::{RecvState, SendState};
use super::{Receiver, SendError, Sender};
use futures_core::stream::{FusedStream, Stream};
use futures_sink::Sink;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A handle held by reference or by value.
enum Hold<'a, H> {
    Borrowed(&'a H),
    Owned(H),
}

impl<H> Hold<'_, H> {
    fn get(&self) -> &H {
        match self {
            Hold::Borrowed(h) => h,
            Hold::Owned(h) => h,
        }
    }
}

/// A unique, stable key for a wait list while the owner lives (the address of a heap byte).
struct Key(Box<u8>);

impl Key {
    fn new() -> Self {
        Key(Box::new(0))
    }

    fn get(&self) -> usize {
        &*self.0 as *const u8 as usize
    }
}

/// A [`Stream`] of a receiver's messages ([`Receiver::stream`], [`Receiver::into_stream`]).
/// Ends once the channel is empty and disconnected.
///
/// **Cancel safety:** as [`Receiver::recv_async`]: dropping the stream while a poll is
/// pending consumes no message and passes on a wakeup it had been chosen for. (Abandoning a
/// `next()` but keeping the stream keeps its place in the wait list: the wakeup is used by the
/// stream's next poll.)
///
/// # Examples
///
/// ```
/// use futures_core::stream::{FusedStream, Stream};
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
///
/// let (tx, rx) = berth::channel::unbounded();
/// let mut stream = rx.into_stream();
/// let mut cx = Context::from_waker(Waker::noop());
/// assert!(Pin::new(&mut stream).poll_next(&mut cx).is_pending());
/// tx.send(1).unwrap();
/// assert_eq!(Pin::new(&mut stream).poll_next(&mut cx), Poll::Ready(Some(1)));
/// drop(tx);
/// assert_eq!(Pin::new(&mut stream).poll_next(&mut cx), Poll::Ready(None)); // ended
/// assert!(stream.is_terminated());
/// ```
pub struct RecvStream<'a, T> {
    receiver: Hold<'a, Receiver<T>>,
    state: RecvState,
    key: Key,
    done: bool,
}

/// A [`Sink`] into a sender ([`Sender::sink`], [`Sender::into_sink`]). `start_send` keeps the
/// item; `poll_ready`, `poll_flush` and `poll_close` drive it into the channel. Closing the sink
/// does not disconnect the channel (dropping the last sender does).
///
/// **Cancel safety:** as [`Sender::send_async`]: dropping the sink while an item is still
/// pending drops that item unsent and frees its place among the waiting senders.
///
/// # Panics
///
/// `start_send` panics if the sink still holds an item, that is, if it is called before
/// `poll_ready` returned `Ready` (the [`Sink`] contract).
///
/// # Examples
///
/// ```
/// use futures_sink::Sink;
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
///
/// let (tx, rx) = berth::channel::bounded(1);
/// let mut sink = tx.into_sink();
/// let mut cx = Context::from_waker(Waker::noop());
/// assert_eq!(Pin::new(&mut sink).poll_ready(&mut cx), Poll::Ready(Ok(())));
/// Pin::new(&mut sink).start_send(1).unwrap();
/// assert_eq!(Pin::new(&mut sink).poll_ready(&mut cx), Poll::Ready(Ok(()))); // 1 is sent
/// Pin::new(&mut sink).start_send(2).unwrap();
/// assert!(Pin::new(&mut sink).poll_flush(&mut cx).is_pending()); // full: the sink keeps 2
/// assert_eq!(rx.recv(), Ok(1)); // room again
/// assert_eq!(Pin::new(&mut sink).poll_flush(&mut cx), Poll::Ready(Ok(())));
/// assert_eq!(rx.recv(), Ok(2));
/// ```
pub struct SendSink<'a, T> {
    sender: Hold<'a, Sender<T>>,
    state: SendState<T>,
    key: Key,
}

impl<T> Receiver<T> {
    /// A stream of this receiver's messages.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_core::stream::Stream;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll, Waker};
    ///
    /// let (tx, rx) = berth::channel::unbounded();
    /// tx.send('x').unwrap();
    /// let mut cx = Context::from_waker(Waker::noop());
    /// let mut stream = rx.stream(); // borrows `rx`
    /// assert_eq!(Pin::new(&mut stream).poll_next(&mut cx), Poll::Ready(Some('x')));
    /// drop(stream);
    /// assert!(rx.try_recv().is_err()); // `rx` is still usable
    /// ```
    pub fn stream(&self) -> RecvStream<'_, T> {
        RecvStream::new(Hold::Borrowed(self))
    }

    /// A stream that owns this receiver.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_core::stream::Stream;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll, Waker};
    ///
    /// fn first<S: Stream + Unpin>(mut s: S) -> Poll<Option<S::Item>> {
    ///     Pin::new(&mut s).poll_next(&mut Context::from_waker(Waker::noop()))
    /// }
    /// let (tx, rx) = berth::channel::bounded(1);
    /// tx.send(3).unwrap();
    /// assert_eq!(first(rx.into_stream()), Poll::Ready(Some(3))); // a 'static stream
    /// ```
    pub fn into_stream(self) -> RecvStream<'static, T> {
        RecvStream::new(Hold::Owned(self))
    }
}

impl<T> Sender<T> {
    /// A sink into this sender's channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_sink::Sink;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll, Waker};
    ///
    /// let (tx, rx) = berth::channel::unbounded();
    /// let mut cx = Context::from_waker(Waker::noop());
    /// let mut sink = tx.sink(); // borrows `tx`
    /// Pin::new(&mut sink).start_send(5).unwrap();
    /// assert_eq!(Pin::new(&mut sink).poll_flush(&mut cx), Poll::Ready(Ok(())));
    /// drop(sink);
    /// assert_eq!(rx.recv(), Ok(5));
    /// assert!(tx.send(6).is_ok()); // `tx` is still usable
    /// ```
    pub fn sink(&self) -> SendSink<'_, T> {
        SendSink::new(Hold::Borrowed(self))
    }

    /// A sink that owns this sender.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_sink::Sink;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll, Waker};
    ///
    /// let (tx, rx) = berth::channel::unbounded();
    /// let mut sink = tx.into_sink(); // owns the sender: a 'static sink
    /// let mut cx = Context::from_waker(Waker::noop());
    /// Pin::new(&mut sink).start_send("a").unwrap();
    /// assert_eq!(Pin::new(&mut sink).poll_close(&mut cx), Poll::Ready(Ok(())));
    /// assert_eq!(rx.recv(), Ok("a"));
    /// drop(sink); // the last sender: the channel disconnects
    /// assert!(rx.recv().is_err());
    /// ```
    pub fn into_sink(self) -> SendSink<'static, T> {
        SendSink::new(Hold::Owned(self))
    }
}

impl<'a, T> RecvStream<'a, T> {
    fn new(receiver: Hold<'a, Receiver<T>>) -> Self {
        RecvStream {
            receiver,
            state: RecvState::new(),
            key: Key::new(),
            done: false,
        }
    }
}

impl<'a, T> SendSink<'a, T> {
    fn new(sender: Hold<'a, Sender<T>>) -> Self {
        SendSink {
            sender,
            state: SendState::new(None),
            key: Key::new(),
        }
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), SendError<T>>> {
        self.state
            .poll(&self.sender.get().shared, self.key.get(), cx)
    }
}

impl<T> Stream for RecvStream<'_, T> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        match this
            .state
            .poll(&this.receiver.get().shared, this.key.get(), cx)
        {
            Poll::Ready(Ok(v)) => Poll::Ready(Some(v)),
            Poll::Ready(Err(_)) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T> FusedStream for RecvStream<'_, T> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}

impl<T> Drop for RecvStream<'_, T> {
    fn drop(&mut self) {
        self.state
            .cancel(&self.receiver.get().shared, self.key.get());
    }
}

// The item is never pinned (it is moved in and out by value), so the sink is `Unpin` whatever
// `T` is.
impl<T> Unpin for SendSink<'_, T> {}

impl<T> Sink<T> for SendSink<'_, T> {
    type Error = SendError<T>;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.get_mut().drive(cx)
    }

    fn start_send(self: Pin<&mut Self>, item: T) -> Result<(), Self::Error> {
        let this = self.get_mut();
        assert!(
            !this.state.is_pending(),
            "SendSink::start_send called before poll_ready returned Ready"
        );
        this.state.value = Some(item);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.get_mut().drive(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.get_mut().drive(cx)
    }
}

impl<T> Drop for SendSink<'_, T> {
    fn drop(&mut self) {
        self.state.cancel(&self.sender.get().shared, self.key.get());
    }
}

impl<T> fmt::Debug for RecvStream<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvStream")
            .field("terminated", &self.done)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for SendSink<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendSink")
            .field("pending", &self.state.is_pending())
            .finish_non_exhaustive()
    }
}
