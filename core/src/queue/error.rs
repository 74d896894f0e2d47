//! The errors of the bounded queues. Each error that stands for a value the queue did not take
//! carries that value, so nothing is lost; `into_inner` hands it back.

use std::error::Error;
use std::fmt;

/// The error of [`try_push`](super::BoundedQueue::try_push): the value comes back inside.
///
/// # Examples
///
/// ```
/// use berth::queue::TryPushError;
/// use berth::VyukovQueue;
///
/// let q = VyukovQueue::new(1);
/// q.try_push("a").unwrap();
/// assert_eq!(q.try_push("b"), Err(TryPushError::Full("b")));
/// q.close();
/// assert_eq!(q.try_push("c"), Err(TryPushError::Closed("c")));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TryPushError<T> {
    /// The queue holds `capacity` values.
    Full(T),
    /// The queue is closed.
    Closed(T),
}

/// The error of [`push`](super::BoundedQueue::push): the queue is closed; the value comes back.
///
/// # Examples
///
/// ```
/// use berth::queue::PushError;
/// use berth::VyukovQueue;
///
/// let q = VyukovQueue::new(4);
/// q.close();
/// assert_eq!(q.push(7), Err(PushError(7)));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct PushError<T>(pub T);

/// The error of [`push_timeout`](super::BoundedQueue::push_timeout): the value comes back inside.
///
/// # Examples
///
/// ```
/// use berth::queue::PushTimeoutError;
/// use berth::VyukovQueue;
/// use std::time::Duration;
///
/// let q = VyukovQueue::new(1);
/// q.push(1).unwrap();
/// let wait = Duration::from_millis(1);
/// assert_eq!(q.push_timeout(2, wait), Err(PushTimeoutError::Timeout(2)));
/// q.close();
/// assert_eq!(q.push_timeout(3, wait), Err(PushTimeoutError::Closed(3)));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum PushTimeoutError<T> {
    /// The queue stayed full until the timeout.
    Timeout(T),
    /// The queue is closed.
    Closed(T),
}

/// The error of [`try_pop`](super::BoundedQueue::try_pop).
///
/// # Examples
///
/// ```
/// use berth::queue::TryPopError;
/// use berth::VyukovQueue;
///
/// let q = VyukovQueue::<u32>::new(1);
/// assert_eq!(q.try_pop(), Err(TryPopError::Empty));
/// q.close();
/// assert_eq!(q.try_pop(), Err(TryPopError::Closed));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub enum TryPopError {
    /// The queue holds no value (it may still be open).
    Empty,
    /// The queue is closed and drained.
    Closed,
}

/// The error of [`pop`](super::BoundedQueue::pop): the queue is closed and drained.
///
/// # Examples
///
/// ```
/// use berth::queue::PopError;
/// use berth::VyukovQueue;
///
/// let q = VyukovQueue::new(2);
/// q.push(1).unwrap();
/// q.close();
/// assert_eq!(q.pop(), Ok(1)); // what was inside is still popped
/// assert_eq!(q.pop(), Err(PopError));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct PopError;

/// The error of [`pop_timeout`](super::BoundedQueue::pop_timeout).
///
/// # Examples
///
/// ```
/// use berth::queue::PopTimeoutError;
/// use berth::VyukovQueue;
/// use std::time::Duration;
///
/// let q = VyukovQueue::<u32>::new(1);
/// let wait = Duration::from_millis(1);
/// assert_eq!(q.pop_timeout(wait), Err(PopTimeoutError::Timeout));
/// q.close();
/// assert_eq!(q.pop_timeout(wait), Err(PopTimeoutError::Closed));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub enum PopTimeoutError {
    /// The queue stayed empty until the timeout.
    Timeout,
    /// The queue is closed and drained.
    Closed,
}

impl<T> TryPushError<T> {
    /// The value that was not pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// let q = berth::VyukovQueue::new(1);
    /// q.try_push(String::from("kept")).unwrap();
    /// let refused = q.try_push(String::from("refused")).unwrap_err();
    /// assert_eq!(refused.into_inner(), "refused");
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TryPushError::Full(v) | TryPushError::Closed(v) => v,
        }
    }

    /// True if the queue was full.
    ///
    /// # Examples
    ///
    /// ```
    /// let q = berth::VyukovQueue::new(1);
    /// q.try_push(1).unwrap();
    /// assert!(q.try_push(2).unwrap_err().is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        matches!(self, TryPushError::Full(_))
    }

    /// True if the queue was closed.
    ///
    /// # Examples
    ///
    /// ```
    /// let q = berth::VyukovQueue::new(1);
    /// q.close();
    /// assert!(q.try_push(1).unwrap_err().is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        matches!(self, TryPushError::Closed(_))
    }
}

impl<T> PushError<T> {
    /// The value that was not pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// let q = berth::VyukovQueue::new(1);
    /// q.close();
    /// assert_eq!(q.push(vec![1, 2]).unwrap_err().into_inner(), vec![1, 2]);
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> PushTimeoutError<T> {
    /// The value that was not pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let q = berth::VyukovQueue::new(1);
    /// q.push('a').unwrap();
    /// let e = q.push_timeout('b', Duration::from_millis(1)).unwrap_err();
    /// assert_eq!(e.into_inner(), 'b');
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            PushTimeoutError::Timeout(v) | PushTimeoutError::Closed(v) => v,
        }
    }

    /// True if the wait timed out.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let q = berth::VyukovQueue::new(1);
    /// q.push(1).unwrap();
    /// assert!(q.push_timeout(2, Duration::from_millis(1)).unwrap_err().is_timeout());
    /// ```
    pub fn is_timeout(&self) -> bool {
        matches!(self, PushTimeoutError::Timeout(_))
    }

    /// True if the queue was closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let q = berth::VyukovQueue::new(1);
    /// q.close();
    /// assert!(q.push_timeout(1, Duration::from_secs(60)).unwrap_err().is_closed()); // at once
    /// ```
    pub fn is_closed(&self) -> bool {
        matches!(self, PushTimeoutError::Closed(_))
    }
}

impl TryPopError {
    /// True if the queue was empty but open.
    ///
    /// # Examples
    ///
    /// ```
    /// let q = berth::VyukovQueue::<u8>::new(1);
    /// assert!(q.try_pop().unwrap_err().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        matches!(self, TryPopError::Empty)
    }

    /// True if the queue was closed and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// let q = berth::VyukovQueue::<u8>::new(1);
    /// q.close();
    /// assert!(q.try_pop().unwrap_err().is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        matches!(self, TryPopError::Closed)
    }
}

impl PopTimeoutError {
    /// True if the wait timed out.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let q = berth::VyukovQueue::<u8>::new(1);
    /// assert!(q.pop_timeout(Duration::from_millis(1)).unwrap_err().is_timeout());
    /// ```
    pub fn is_timeout(&self) -> bool {
        matches!(self, PopTimeoutError::Timeout)
    }

    /// True if the queue was closed and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let q = berth::VyukovQueue::<u8>::new(1);
    /// q.close();
    /// assert!(q.pop_timeout(Duration::from_secs(60)).unwrap_err().is_closed()); // at once
    /// ```
    pub fn is_closed(&self) -> bool {
        matches!(self, PopTimeoutError::Closed)
    }
}

impl<T> From<PushError<T>> for TryPushError<T> {
    fn from(e: PushError<T>) -> Self {
        TryPushError::Closed(e.0)
    }
}

impl<T> From<PushError<T>> for PushTimeoutError<T> {
    fn from(e: PushError<T>) -> Self {
        PushTimeoutError::Closed(e.0)
    }
}

impl From<PopError> for TryPopError {
    fn from(_: PopError) -> Self {
        TryPopError::Closed
    }
}

impl From<PopError> for PopTimeoutError {
    fn from(_: PopError) -> Self {
        PopTimeoutError::Closed
    }
}

// Debug without `T: Debug`: the value is elided, as std's `SendError` does.
impl<T> fmt::Debug for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryPushError::Full(_) => f.write_str("Full(..)"),
            TryPushError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}

impl<T> fmt::Debug for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PushError(..)")
    }
}

impl<T> fmt::Debug for PushTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PushTimeoutError::Timeout(_) => f.write_str("Timeout(..)"),
            PushTimeoutError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}

impl<T> fmt::Display for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryPushError::Full(_) => f.write_str("pushing into a full queue"),
            TryPushError::Closed(_) => f.write_str("pushing into a closed queue"),
        }
    }
}

impl<T> fmt::Display for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("pushing into a closed queue")
    }
}

impl<T> fmt::Display for PushTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PushTimeoutError::Timeout(_) => f.write_str("timed out pushing into a full queue"),
            PushTimeoutError::Closed(_) => f.write_str("pushing into a closed queue"),
        }
    }
}

impl fmt::Display for TryPopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryPopError::Empty => f.write_str("popping from an empty queue"),
            TryPopError::Closed => f.write_str("popping from a closed and empty queue"),
        }
    }
}

impl fmt::Display for PopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("popping from a closed and empty queue")
    }
}

impl fmt::Display for PopTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PopTimeoutError::Timeout => f.write_str("timed out popping from an empty queue"),
            PopTimeoutError::Closed => f.write_str("popping from a closed and empty queue"),
        }
    }
}

impl<T> Error for TryPushError<T> {}
impl<T> Error for PushError<T> {}
impl<T> Error for PushTimeoutError<T> {}
impl Error for TryPopError {}
impl Error for PopError {}
impl Error for PopTimeoutError {}
