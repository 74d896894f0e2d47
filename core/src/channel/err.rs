//! The errors of the channels, named and shaped as in `std::sync::mpsc` and crossbeam-channel.
//! An error that stands for a message the channel did not take carries that message, so nothing
//! is lost; `into_inner` hands it back. `Debug` never needs `T: Debug`.

use std::error::Error;
use std::fmt;

/// The error of [`Sender::send`](super::Sender::send): the channel is disconnected; the message
/// comes back inside.
///
/// # Examples
///
/// ```
/// use berth::channel::{self, SendError};
///
/// let (tx, rx) = channel::unbounded();
/// drop(rx);
/// assert_eq!(tx.send(1), Err(SendError(1)));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

/// The error of [`Sender::try_send`](super::Sender::try_send).
///
/// # Examples
///
/// ```
/// use berth::channel::{self, TrySendError};
///
/// let (tx, rx) = channel::bounded(1);
/// tx.try_send(1).unwrap();
/// assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
/// drop(rx);
/// assert_eq!(tx.try_send(3), Err(TrySendError::Disconnected(3)));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TrySendError<T> {
    /// The channel is full (for a rendezvous channel: no receiver is waiting).
    Full(T),
    /// The channel is disconnected.
    Disconnected(T),
}

/// The error of [`Sender::send_timeout`](super::Sender::send_timeout) and
/// [`send_deadline`](super::Sender::send_deadline).
///
/// # Examples
///
/// ```
/// use berth::channel::{self, SendTimeoutError};
/// use std::time::Duration;
///
/// let (tx, rx) = channel::bounded(1);
/// tx.send(1).unwrap();
/// let wait = Duration::from_millis(1);
/// assert_eq!(tx.send_timeout(2, wait), Err(SendTimeoutError::Timeout(2)));
/// drop(rx);
/// assert_eq!(tx.send_timeout(3, wait), Err(SendTimeoutError::Disconnected(3)));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum SendTimeoutError<T> {
    /// The message could not be sent before the timeout.
    Timeout(T),
    /// The channel is disconnected.
    Disconnected(T),
}

/// The error of [`Receiver::recv`](super::Receiver::recv): the channel is empty and
/// disconnected.
///
/// # Examples
///
/// ```
/// use berth::channel::{self, RecvError};
///
/// let (tx, rx) = channel::unbounded();
/// tx.send(1).unwrap();
/// drop(tx);
/// assert_eq!(rx.recv(), Ok(1)); // what was sent is still received
/// assert_eq!(rx.recv(), Err(RecvError));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct RecvError;

/// The error of [`Receiver::try_recv`](super::Receiver::try_recv).
///
/// # Examples
///
/// ```
/// use berth::channel::{self, TryRecvError};
///
/// let (tx, rx) = channel::unbounded::<u32>();
/// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
/// drop(tx);
/// assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub enum TryRecvError {
    /// The channel is empty (for a rendezvous channel: no sender is waiting).
    Empty,
    /// The channel is empty and disconnected.
    Disconnected,
}

/// The error of [`Receiver::recv_timeout`](super::Receiver::recv_timeout) and
/// [`recv_deadline`](super::Receiver::recv_deadline).
///
/// # Examples
///
/// ```
/// use berth::channel::{self, RecvTimeoutError};
/// use std::time::Duration;
///
/// let (tx, rx) = channel::unbounded::<u32>();
/// let wait = Duration::from_millis(1);
/// assert_eq!(rx.recv_timeout(wait), Err(RecvTimeoutError::Timeout));
/// drop(tx);
/// assert_eq!(rx.recv_timeout(wait), Err(RecvTimeoutError::Disconnected));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub enum RecvTimeoutError {
    /// No message arrived before the timeout.
    Timeout,
    /// The channel is empty and disconnected.
    Disconnected,
}

impl<T> SendError<T> {
    /// The message that was not sent.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = berth::channel::unbounded();
    /// drop(rx);
    /// let e = tx.send(String::from("lost?")).unwrap_err();
    /// assert_eq!(e.into_inner(), "lost?"); // no: it comes back
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> TrySendError<T> {
    /// The message that was not sent.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _rx) = berth::channel::bounded(1);
    /// tx.try_send(1).unwrap();
    /// assert_eq!(tx.try_send(2).unwrap_err().into_inner(), 2);
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TrySendError::Full(v) | TrySendError::Disconnected(v) => v,
        }
    }

    /// True if the channel was full.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _rx) = berth::channel::bounded(1);
    /// tx.try_send(1).unwrap();
    /// assert!(tx.try_send(2).unwrap_err().is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        matches!(self, TrySendError::Full(_))
    }

    /// True if the channel was disconnected.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = berth::channel::bounded(1);
    /// drop(rx);
    /// assert!(tx.try_send(1).unwrap_err().is_disconnected());
    /// ```
    pub fn is_disconnected(&self) -> bool {
        matches!(self, TrySendError::Disconnected(_))
    }
}

impl<T> SendTimeoutError<T> {
    /// The message that was not sent.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tx, _rx) = berth::channel::bounded(1);
    /// tx.send('a').unwrap();
    /// let e = tx.send_timeout('b', Duration::from_millis(1)).unwrap_err();
    /// assert_eq!(e.into_inner(), 'b');
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            SendTimeoutError::Timeout(v) | SendTimeoutError::Disconnected(v) => v,
        }
    }

    /// True if the send timed out.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tx, _rx) = berth::channel::bounded(1);
    /// tx.send(1).unwrap();
    /// assert!(tx.send_timeout(2, Duration::from_millis(1)).unwrap_err().is_timeout());
    /// ```
    pub fn is_timeout(&self) -> bool {
        matches!(self, SendTimeoutError::Timeout(_))
    }

    /// True if the channel was disconnected.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tx, rx) = berth::channel::bounded(1);
    /// drop(rx);
    /// let e = tx.send_timeout(1, Duration::from_secs(60)).unwrap_err(); // fails at once
    /// assert!(e.is_disconnected());
    /// ```
    pub fn is_disconnected(&self) -> bool {
        matches!(self, SendTimeoutError::Disconnected(_))
    }
}

impl TryRecvError {
    /// True if the channel was empty but connected.
    ///
    /// # Examples
    ///
    /// ```
    /// let (_tx, rx) = berth::channel::unbounded::<u8>();
    /// assert!(rx.try_recv().unwrap_err().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        matches!(self, TryRecvError::Empty)
    }

    /// True if the channel was empty and disconnected.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = berth::channel::unbounded::<u8>();
    /// drop(tx);
    /// assert!(rx.try_recv().unwrap_err().is_disconnected());
    /// ```
    pub fn is_disconnected(&self) -> bool {
        matches!(self, TryRecvError::Disconnected)
    }
}

impl RecvTimeoutError {
    /// True if the receive timed out.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (_tx, rx) = berth::channel::unbounded::<u8>();
    /// assert!(rx.recv_timeout(Duration::from_millis(1)).unwrap_err().is_timeout());
    /// ```
    pub fn is_timeout(&self) -> bool {
        matches!(self, RecvTimeoutError::Timeout)
    }

    /// True if the channel was empty and disconnected.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tx, rx) = berth::channel::unbounded::<u8>();
    /// drop(tx);
    /// let e = rx.recv_timeout(Duration::from_secs(60)).unwrap_err(); // fails at once
    /// assert!(e.is_disconnected());
    /// ```
    pub fn is_disconnected(&self) -> bool {
        matches!(self, RecvTimeoutError::Disconnected)
    }
}

impl<T> From<SendError<T>> for TrySendError<T> {
    fn from(e: SendError<T>) -> Self {
        TrySendError::Disconnected(e.0)
    }
}

impl<T> From<SendError<T>> for SendTimeoutError<T> {
    fn from(e: SendError<T>) -> Self {
        SendTimeoutError::Disconnected(e.0)
    }
}

impl From<RecvError> for TryRecvError {
    fn from(_: RecvError) -> Self {
        TryRecvError::Disconnected
    }
}

impl From<RecvError> for RecvTimeoutError {
    fn from(_: RecvError) -> Self {
        RecvTimeoutError::Disconnected
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError { .. }")
    }
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("Full(..)"),
            TrySendError::Disconnected(_) => f.write_str("Disconnected(..)"),
        }
    }
}

impl<T> fmt::Debug for SendTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendTimeoutError::Timeout(_) => f.write_str("Timeout(..)"),
            SendTimeoutError::Disconnected(_) => f.write_str("Disconnected(..)"),
        }
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending on a disconnected channel")
    }
}

impl<T> fmt::Display for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("sending on a full channel"),
            TrySendError::Disconnected(_) => f.write_str("sending on a disconnected channel"),
        }
    }
}

impl<T> fmt::Display for SendTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendTimeoutError::Timeout(_) => f.write_str("timed out waiting on send operation"),
            SendTimeoutError::Disconnected(_) => f.write_str("sending on a disconnected channel"),
        }
    }
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("receiving on an empty and disconnected channel")
    }
}

impl fmt::Display for TryRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryRecvError::Empty => f.write_str("receiving on an empty channel"),
            TryRecvError::Disconnected => {
                f.write_str("receiving on an empty and disconnected channel")
            }
        }
    }
}

impl fmt::Display for RecvTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecvTimeoutError::Timeout => f.write_str("timed out waiting on receive operation"),
            RecvTimeoutError::Disconnected => {
                f.write_str("receiving on an empty and disconnected channel")
            }
        }
    }
}

impl<T> Error for SendError<T> {}
impl<T> Error for TrySendError<T> {}
impl<T> Error for SendTimeoutError<T> {}
impl Error for RecvError {}
impl Error for TryRecvError {}
impl Error for RecvTimeoutError {}

/// The error of [`Select::try_select`](super::Select::try_select): no operation was ready.
///
/// # Examples
///
/// ```
/// use berth::channel::{self, Select, TrySelectError};
///
/// let (_tx, rx) = channel::unbounded::<u32>();
/// let mut sel = Select::new();
/// sel.recv(&rx);
/// assert_eq!(sel.try_select().err(), Some(TrySelectError));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct TrySelectError;

/// The error of [`Select::select_timeout`](super::Select::select_timeout) and
/// [`select_deadline`](super::Select::select_deadline): no operation was ready in time.
///
/// # Examples
///
/// ```
/// use berth::channel::{self, Select, SelectTimeoutError};
/// use std::time::Duration;
///
/// let (_tx, rx) = channel::unbounded::<u32>();
/// let mut sel = Select::new();
/// sel.recv(&rx);
/// let res = sel.select_timeout(Duration::from_millis(1));
/// assert_eq!(res.err(), Some(SelectTimeoutError));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct SelectTimeoutError;

/// The error of [`Select::try_ready`](super::Select::try_ready): no operation was ready.
///
/// # Examples
///
/// ```
/// use berth::channel::{self, Select, TryReadyError};
///
/// let (_tx, rx) = channel::unbounded::<u32>();
/// let mut sel = Select::new();
/// sel.recv(&rx);
/// assert_eq!(sel.try_ready(), Err(TryReadyError));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct TryReadyError;

/// The error of [`Select::ready_timeout`](super::Select::ready_timeout) and
/// [`ready_deadline`](super::Select::ready_deadline): no operation was ready in time.
///
/// # Examples
///
/// ```
/// use berth::channel::{self, ReadyTimeoutError, Select};
/// use std::time::Duration;
///
/// let (_tx, rx) = channel::unbounded::<u32>();
/// let mut sel = Select::new();
/// sel.recv(&rx);
/// assert_eq!(sel.ready_timeout(Duration::from_millis(1)), Err(ReadyTimeoutError));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct ReadyTimeoutError;

macro_rules! select_error {
    ($name:ident, $msg:literal) => {
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($msg)
            }
        }
        impl Error for $name {}
    };
}
select_error!(TrySelectError, "no operation was ready");
select_error!(
    SelectTimeoutError,
    "timed out waiting for an operation to be ready"
);
select_error!(TryReadyError, "no operation was ready");
select_error!(
    ReadyTimeoutError,
    "timed out waiting for an operation to be ready"
);
