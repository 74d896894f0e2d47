//! Multi-producer multi-consumer channels that disconnect when one side is dropped.
//!
//! - [`bounded(n)`](bounded): holds exactly `n` messages; a send waits while it is full.
//!   `bounded(0)` is a **rendezvous** channel: a send completes only when a receiver takes the
//!   message (it reports `len() == 0` and is both empty and full).
//! - [`unbounded()`](unbounded): never full; linked blocks of slots that are recycled, so a
//!   steady stream of messages makes no allocator call once warmed up.
//!
//! Both [`Sender`] and [`Receiver`] are `Clone`; each message goes to exactly one receiver.
//!
//! # Disconnection
//!
//! - When the last `Sender` is dropped (or any handle calls [`close`](Sender::close)), receivers
//!   still get every message already sent, then `Err(RecvError)`; [`Receiver::iter`] ends.
//! - When the last `Receiver` is dropped (or `close` is called), every send fails at once and
//!   hands the message back inside the error. When the last receiver goes, the messages still
//!   buffered are dropped then, not when the last sender goes.
//! - **Nothing is lost, even in the race**: once any receive has returned `Disconnected`, no send
//!   returns `Ok`, and every message whose send returned `Ok` is received or dropped exactly
//!   once with the channel. (The disconnect is one atomic step of the flavour's own state: the
//!   closed mark in the array's `tail`, the list's `pushed` word written under its tail lock,
//!   the rendezvous channel's mutex.)
//!
//! # Waiting
//!
//! A blocked send or receive spins briefly, yields, then parks on this thread's
//! [`Parker`](crate::park::Parker), so it uses no CPU while it waits. On the bounded and
//! unbounded flavours each wait list learns whether that spinning pays: where waits keep ending
//! in long sleeps (a receiver waiting for sparse messages), its waiters park at once and test
//! the spin again now and then, so that a woken receiver is not held back by the time it spent
//! spinning (the kernel lets a thread that just spun and yielded preempt its waker less often).
//! The rendezvous flavour queues a packet under its mutex, in which its partner completes the
//! exchange, and then polls its parker's token: it spins, yields up to 16 times, and only then
//! sleeps, because a partner on another core usually arrives within that time and a sleep and a
//! wake-up cost each message tens of microseconds. A waiting thread is registered by its
//! [`Unparker`](crate::park::Unparker) in a wait list of the channel; the same unparker can sit
//! in the wait lists of several channels at once, which is what a `select` needs, and a
//! notifier's fast path (one `Relaxed` load of the list's count) does not change.
//!
//! # Examples
//!
//! ```
//! use berth::channel;
//! use std::thread;
//!
//! let (tx, rx) = channel::bounded(64);
//! let producers: Vec<_> = (0..4u64)
//!     .map(|id| {
//!         let tx = tx.clone();
//!         thread::spawn(move || {
//!             for i in 0..1_000 {
//!                 tx.send(id * 1_000 + i).unwrap(); // sleeps while the channel is full
//!             }
//!         })
//!     })
//!     .collect();
//! drop(tx); // only the producers' clones keep the channel open now
//! let total: u64 = rx.iter().sum(); // ends once every sender is gone and the channel is empty
//! assert_eq!(total, (0..4_000).sum());
//! for p in producers {
//!     p.join().unwrap();
//! }
//! ```

mod err;
mod flavors;
mod future;
pub mod mpsc;
mod select;
mod select_macro;
#[cfg(feature = "futures")]
mod stream;
#[cfg(feature = "futures")]
pub use stream::{RecvStream, SendSink};

pub use err::{
    ReadyTimeoutError, RecvError, RecvTimeoutError, SelectTimeoutError, SendError,
    SendTimeoutError, TryReadyError, TryRecvError, TrySelectError, TrySendError,
};
pub use future::{RecvFuture, SendFuture};
#[doc(hidden)]
pub use select::{__SendClaim, __select_send, __select_send_ready, __select_start};
pub use select::{Select, SelectedOperation};

use crate::queue::deadline_after;
use crate::sync::atomic::{
    AtomicUsize,
    Ordering::{AcqRel, Acquire, Relaxed},
};
use crate::sync::Arc;
use flavors::timer::{At, Never, Tick, Timer};
use flavors::{array::Array, list::List, zero::Zero, RecvFail, SendFail};
use std::fmt;
use std::time::{Duration, Instant};

/// A channel of exactly `capacity` messages; `bounded(0)` is a rendezvous channel.
///
/// # Panics
///
/// If `capacity` is too large for the ring's positions or for memory (see
/// [`VyukovQueue::new`](crate::VyukovQueue::new)).
///
/// # Examples
///
/// ```
/// use berth::channel;
/// use std::thread;
///
/// let (tx, rx) = channel::bounded(2);
/// tx.send(1).unwrap();
/// tx.send(2).unwrap();
/// assert!(tx.try_send(3).unwrap_err().is_full()); // exactly 2 messages fit
/// assert_eq!(rx.recv(), Ok(1));
///
/// // bounded(0): a send completes only when a receiver takes the message.
/// let (tx, rx) = channel::bounded(0);
/// let receiver = thread::spawn(move || rx.recv().unwrap());
/// tx.send("hand-off").unwrap();
/// assert_eq!(receiver.join().unwrap(), "hand-off");
/// ```
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let flavor = if capacity == 0 {
        Flavor::Zero(Zero::new())
    } else {
        Flavor::Array(Array::new(capacity))
    };
    new_channel(flavor)
}

/// A channel without a capacity limit.
///
/// # Examples
///
/// ```
/// use berth::channel;
///
/// let (tx, rx) = channel::unbounded();
/// for i in 0..1_000 {
///     tx.send(i).unwrap(); // never waits
/// }
/// drop(tx);
/// assert_eq!(rx.iter().count(), 1_000);
/// assert_eq!(rx.capacity(), None);
/// ```
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    new_channel(Flavor::List(List::new()))
}

/// A channel that delivers one message, the instant it was due, once `duration` has passed.
///
/// Like every timer channel it has no sender and never disconnects, costs no thread, and is
/// made to be used in a [`select!`](crate::select) (see [`at`] for what a receive sees).
///
/// # Examples
///
/// ```
/// use berth::channel;
/// use std::time::{Duration, Instant};
///
/// let start = Instant::now();
/// let timeout = channel::after(Duration::from_millis(10));
/// let fired = timeout.recv().unwrap();
/// assert!(fired >= start + Duration::from_millis(10));
/// assert!(timeout.try_recv().is_err()); // delivered once: empty from now on
/// ```
pub fn after(duration: Duration) -> Receiver<Instant> {
    match Instant::now().checked_add(duration) {
        Some(when) => at(when),
        None => never(),
    }
}

/// A channel that delivers one message, `when`, at `when`.
///
/// The first receive at or after `when` takes the message; every receive before it, and every
/// receive after the message was taken, finds the channel empty (a blocking `recv` then waits
/// forever, a `recv_timeout` until its timeout). `close` has no effect on a timer channel.
///
/// # Examples
///
/// ```
/// use berth::channel;
/// use std::time::{Duration, Instant};
///
/// let when = Instant::now() + Duration::from_millis(5);
/// assert_eq!(channel::at(when).recv(), Ok(when));
/// ```
pub fn at(when: Instant) -> Receiver<Instant> {
    timer_channel(Flavor::At(Timer(At::new(when, |i| i))))
}

/// A channel that delivers a message every `period`: the instant of the tick.
///
/// The first tick is due one `period` from now and the next ones keep that phase. At most one
/// tick is pending: ticks that come and go while nobody receives are dropped, and the next
/// receive gets the latest one that is due. A zero `period` delivers the current instant to
/// every receive.
///
/// # Examples
///
/// ```
/// use berth::channel;
/// use std::time::{Duration, Instant};
///
/// let start = Instant::now();
/// let ticker = channel::tick(Duration::from_millis(2));
/// let first = ticker.recv().unwrap();
/// let second = ticker.recv().unwrap();
/// assert!(first >= start + Duration::from_millis(2));
/// assert!(second >= first + Duration::from_millis(2));
/// ```
pub fn tick(period: Duration) -> Receiver<Instant> {
    let first = Instant::now().checked_add(period);
    timer_channel(Flavor::Tick(Timer(Tick::new(first, period, |i| i))))
}

/// A channel that never delivers and never disconnects: a placeholder for an operation that
/// must never be selected (an optional timeout, a channel that is not there yet).
///
/// # Examples
///
/// ```
/// use berth::channel::{self, Receiver};
/// use std::time::Duration;
///
/// let maybe: Option<Receiver<u32>> = None;
/// let r = maybe.unwrap_or_else(channel::never);
/// assert!(r.recv_timeout(Duration::from_millis(1)).is_err());
/// ```
pub fn never<T>() -> Receiver<T> {
    timer_channel(Flavor::Never(Timer(Never)))
}

/// A receiver with no sender for a timer flavour (its sender count is 0).
fn timer_channel<T>(flavor: Flavor<T>) -> Receiver<T> {
    Receiver {
        shared: Arc::new(Shared {
            senders: AtomicUsize::new(0),
            receivers: AtomicUsize::new(1),
            flavor,
        }),
    }
}

fn new_channel<T>(flavor: Flavor<T>) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        senders: AtomicUsize::new(1),
        receivers: AtomicUsize::new(1),
        flavor,
    });
    (
        Sender {
            shared: Arc::clone(&shared),
        },
        Receiver { shared },
    )
}

enum Flavor<T> {
    Array(Array<T>),
    List(List<T>),
    Zero(Zero<T>),
    At(Timer<At<T>>),
    Tick(Timer<Tick<T>>),
    Never(Timer<Never>),
}

struct Shared<T> {
    senders: AtomicUsize,
    receivers: AtomicUsize,
    flavor: Flavor<T>,
}

/// Dispatches a call to whichever flavour the channel is.
macro_rules! on_flavor {
    ($shared:expr, $chan:ident => $body:expr) => {
        match &$shared.flavor {
            Flavor::Array($chan) => $body,
            Flavor::List($chan) => $body,
            Flavor::Zero($chan) => $body,
            Flavor::At($chan) => $body,
            Flavor::Tick($chan) => $body,
            Flavor::Never($chan) => $body,
        }
    };
}

impl<T> Shared<T> {
    fn send(&self, value: T, deadline: Option<Instant>) -> Result<(), SendFail<T>> {
        on_flavor!(self, c => c.send(value, deadline))
    }

    fn recv(&self, deadline: Option<Instant>) -> Result<T, RecvFail> {
        on_flavor!(self, c => c.recv(deadline))
    }

    fn close(&self) -> bool {
        on_flavor!(self, c => c.close())
    }

    fn is_closed(&self) -> bool {
        on_flavor!(self, c => c.is_closed())
    }

    fn len(&self) -> usize {
        match &self.flavor {
            Flavor::Array(c) => c.len(),
            Flavor::List(c) => c.len(),
            Flavor::Zero(_) | Flavor::Never(_) => 0,
            Flavor::At(c) => c.0.len(),
            Flavor::Tick(c) => c.0.len(),
        }
    }

    fn is_empty(&self) -> bool {
        match &self.flavor {
            Flavor::Array(c) => c.is_empty(),
            Flavor::List(c) => c.is_empty(),
            Flavor::Zero(_) => true,
            Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => self.len() == 0,
        }
    }

    fn is_full(&self) -> bool {
        match &self.flavor {
            Flavor::Array(c) => c.is_full(),
            Flavor::List(_) => false,
            Flavor::Zero(_) => true,
            // One message at most, and no sender to fill it.
            Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => self.len() == 1,
        }
    }

    fn capacity(&self) -> Option<usize> {
        match &self.flavor {
            Flavor::Array(c) => Some(c.capacity()),
            Flavor::List(_) => None,
            Flavor::Zero(_) | Flavor::Never(_) => Some(0),
            Flavor::At(_) | Flavor::Tick(_) => Some(1),
        }
    }

    /// The last sender is gone.
    fn disconnect_senders(&self) {
        // MUTANT channel_no_disconnect: the last sender's drop does not close the channel, so a
        // receiver waits forever for messages nobody can send.
        if cfg!(berth_mutant = "channel_no_disconnect") {
            return;
        }
        self.close();
    }

    /// The last receiver is gone: disconnect, and drop what is buffered now.
    fn disconnect_receivers(&self) {
        match &self.flavor {
            Flavor::Array(c) => {
                c.disconnect_receivers();
            }
            Flavor::List(c) => {
                c.disconnect_receivers();
            }
            Flavor::Zero(c) => {
                c.close();
            }
            Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => {}
        }
    }
}

/// The sending half of a channel. Cloneable; the channel disconnects when the last one is
/// dropped.
///
/// # Examples
///
/// ```
/// use berth::channel;
/// use std::thread;
///
/// let (tx, rx) = channel::unbounded();
/// let handles: Vec<_> = (0..3)
///     .map(|id| {
///         let tx = tx.clone();
///         thread::spawn(move || tx.send(id).unwrap())
///     })
///     .collect();
/// drop(tx); // the clones keep the channel connected until they are done
/// let mut got: Vec<i32> = rx.iter().collect();
/// got.sort();
/// assert_eq!(got, [0, 1, 2]);
/// for h in handles {
///     h.join().unwrap();
/// }
/// ```
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving half of a channel. Cloneable (each message goes to one receiver); the channel
/// disconnects when the last one is dropped.
///
/// # Examples
///
/// ```
/// use berth::channel;
/// use std::thread;
///
/// let (tx, rx) = channel::bounded(16);
/// let workers: Vec<_> = (0..2)
///     .map(|_| {
///         let rx = rx.clone();
///         thread::spawn(move || rx.iter().count()) // each message goes to one of them
///     })
///     .collect();
/// for i in 0..100 {
///     tx.send(i).unwrap();
/// }
/// drop(tx);
/// let total: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
/// assert_eq!(total, 100);
/// ```
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// A sender that does not keep the channel connected; [`upgrade`](WeakSender::upgrade) it to
/// send.
///
/// # Examples
///
/// ```
/// use berth::channel;
///
/// let (tx, rx) = channel::unbounded::<u32>();
/// let weak = tx.downgrade();
/// weak.upgrade().unwrap().send(1).unwrap();
/// drop(tx); // a weak sender does not keep the channel connected
/// assert!(weak.upgrade().is_none());
/// assert_eq!(rx.recv(), Ok(1));
/// assert!(rx.recv().is_err());
/// ```
pub struct WeakSender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Sender<T> {
    /// Sends `msg`, waiting while the channel is full (for a rendezvous channel: until a receiver
    /// takes it). Fails only if the channel is disconnected, handing `msg` back.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel;
    /// use std::thread;
    ///
    /// let (tx, rx) = channel::bounded(1);
    /// let consumer = thread::spawn(move || rx.iter().sum::<u32>());
    /// for i in 1..=10 {
    ///     tx.send(i).unwrap(); // waits while the channel is full
    /// }
    /// drop(tx);
    /// assert_eq!(consumer.join().unwrap(), 55);
    /// ```
    pub fn send(&self, msg: T) -> Result<(), SendError<T>> {
        self.shared.send(msg, None).map_err(|e| match e {
            SendFail::Disconnected(v) | SendFail::Full(v) | SendFail::Timeout(v) => SendError(v),
        })
    }

    /// Sends `msg` if that is possible without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, TrySendError};
    ///
    /// let (tx, rx) = channel::bounded(1);
    /// assert_eq!(tx.try_send(1), Ok(()));
    /// assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
    /// drop(rx);
    /// assert_eq!(tx.try_send(3), Err(TrySendError::Disconnected(3)));
    /// ```
    pub fn try_send(&self, msg: T) -> Result<(), TrySendError<T>> {
        on_flavor!(self.shared, c => c.try_send(msg)).map_err(|e| match e {
            SendFail::Full(v) | SendFail::Timeout(v) => TrySendError::Full(v),
            SendFail::Disconnected(v) => TrySendError::Disconnected(v),
        })
    }

    /// Sends `msg`, waiting at most `timeout`.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel;
    /// use std::time::Duration;
    ///
    /// let (tx, rx) = channel::bounded(1);
    /// tx.send_timeout(1, Duration::from_millis(1)).unwrap();
    /// let e = tx.send_timeout(2, Duration::from_millis(1)).unwrap_err();
    /// assert!(e.is_timeout());
    /// assert_eq!(rx.recv(), Ok(1));
    /// ```
    pub fn send_timeout(&self, msg: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        self.send_until(msg, deadline_after(timeout))
    }

    /// Sends `msg`, waiting until `deadline` at most.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel;
    /// use std::time::{Duration, Instant};
    ///
    /// let (tx, _rx) = channel::bounded(0); // nobody receives
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(tx.send_deadline(1, deadline).unwrap_err().is_timeout());
    /// assert!(Instant::now() >= deadline);
    /// ```
    pub fn send_deadline(&self, msg: T, deadline: Instant) -> Result<(), SendTimeoutError<T>> {
        self.send_until(msg, Some(deadline))
    }

    fn send_until(&self, msg: T, deadline: Option<Instant>) -> Result<(), SendTimeoutError<T>> {
        self.shared.send(msg, deadline).map_err(|e| match e {
            SendFail::Full(v) | SendFail::Timeout(v) => SendTimeoutError::Timeout(v),
            SendFail::Disconnected(v) => SendTimeoutError::Disconnected(v),
        })
    }

    /// A handle that does not keep the channel connected.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = berth::channel::unbounded::<u8>();
    /// let weak = tx.downgrade();
    /// assert_eq!(rx.sender_count(), 1); // weak senders do not count
    /// drop(tx);
    /// assert!(rx.is_disconnected());
    /// assert!(weak.upgrade().is_none());
    /// ```
    pub fn downgrade(&self) -> WeakSender<T> {
        WeakSender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Receiver<T> {
    /// Receives a message, waiting while the channel is empty. Fails once the channel is empty
    /// and disconnected.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel;
    /// use std::thread;
    ///
    /// let (tx, rx) = channel::unbounded();
    /// let sender = thread::spawn(move || {
    ///     tx.send("hello").unwrap();
    /// }); // `tx` is dropped when the thread ends
    /// assert_eq!(rx.recv(), Ok("hello")); // waits for the message
    /// assert!(rx.recv().is_err()); // empty and disconnected
    /// sender.join().unwrap();
    /// ```
    pub fn recv(&self) -> Result<T, RecvError> {
        self.shared.recv(None).map_err(|_| RecvError)
    }

    /// Receives a message if one is available without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, TryRecvError};
    ///
    /// let (tx, rx) = channel::unbounded();
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    /// tx.send(5).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(5));
    /// drop(tx);
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    /// ```
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        on_flavor!(self.shared, c => c.try_recv()).map_err(|e| match e {
            RecvFail::Empty | RecvFail::Timeout => TryRecvError::Empty,
            RecvFail::Disconnected => TryRecvError::Disconnected,
        })
    }

    /// Receives a message, waiting at most `timeout`.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, RecvTimeoutError};
    /// use std::time::Duration;
    ///
    /// let (tx, rx) = channel::unbounded();
    /// assert_eq!(rx.recv_timeout(Duration::from_millis(1)), Err(RecvTimeoutError::Timeout));
    /// tx.send(1).unwrap();
    /// assert_eq!(rx.recv_timeout(Duration::from_millis(1)), Ok(1));
    /// ```
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.recv_until(deadline_after(timeout))
    }

    /// Receives a message, waiting until `deadline` at most.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel;
    /// use std::time::{Duration, Instant};
    ///
    /// let (_tx, rx) = channel::unbounded::<u32>();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(rx.recv_deadline(deadline).unwrap_err().is_timeout());
    /// assert!(Instant::now() >= deadline);
    /// ```
    pub fn recv_deadline(&self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        self.recv_until(Some(deadline))
    }

    fn recv_until(&self, deadline: Option<Instant>) -> Result<T, RecvTimeoutError> {
        self.shared.recv(deadline).map_err(|e| match e {
            RecvFail::Empty | RecvFail::Timeout => RecvTimeoutError::Timeout,
            RecvFail::Disconnected => RecvTimeoutError::Disconnected,
        })
    }

    /// A blocking iterator: yields messages until the channel is empty and disconnected.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel;
    /// use std::thread;
    ///
    /// let (tx, rx) = channel::bounded(4);
    /// let sender = thread::spawn(move || {
    ///     for i in 0..10 {
    ///         tx.send(i).unwrap();
    ///     }
    /// });
    /// // Blocks for each message; ends once the sender is gone and the channel is drained.
    /// assert_eq!(rx.iter().collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
    /// sender.join().unwrap();
    /// ```
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { receiver: self }
    }

    /// A non-blocking iterator: yields the messages available now.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = berth::channel::unbounded();
    /// tx.send(1).unwrap();
    /// tx.send(2).unwrap();
    /// // Only what is there now; the channel is still connected.
    /// assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2]);
    /// assert_eq!(rx.try_iter().next(), None);
    /// ```
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter { receiver: self }
    }
}

/// Methods both handles share. `$var` names the handle in the examples (`tx` or `rx`).
macro_rules! common_methods {
    ($handle:ident, $var:literal) => {
        impl<T> $handle<T> {
            /// The number of messages in the channel (always 0 for a rendezvous channel).
            ///
            /// # Examples
            ///
            /// ```
            /// let (tx, rx) = berth::channel::bounded(4);
            /// tx.send(1).unwrap();
            /// tx.send(2).unwrap();
            #[doc = concat!("assert_eq!(", $var, ".len(), 2);")]
            /// rx.recv().unwrap();
            #[doc = concat!("assert_eq!(", $var, ".len(), 1);")]
            /// ```
            pub fn len(&self) -> usize {
                self.shared.len()
            }

            /// True if the channel holds no message (always, for a rendezvous channel).
            ///
            /// # Examples
            ///
            /// ```
            /// let (tx, rx) = berth::channel::unbounded();
            #[doc = concat!("assert!(", $var, ".is_empty());")]
            /// tx.send(()).unwrap();
            #[doc = concat!("assert!(!", $var, ".is_empty());")]
            /// # drop(rx);
            /// ```
            pub fn is_empty(&self) -> bool {
                self.shared.is_empty()
            }

            /// True if the channel holds `capacity` messages (always, for a rendezvous channel;
            /// never, for an unbounded one).
            ///
            /// # Examples
            ///
            /// ```
            /// let (tx, rx) = berth::channel::bounded(1);
            #[doc = concat!("assert!(!", $var, ".is_full());")]
            /// tx.send(1).unwrap();
            #[doc = concat!("assert!(", $var, ".is_full());")]
            /// # drop(rx);
            /// ```
            pub fn is_full(&self) -> bool {
                self.shared.is_full()
            }

            /// `Some(n)` for `bounded(n)`, `None` for `unbounded()`.
            ///
            /// # Examples
            ///
            /// ```
            /// let (tx, rx) = berth::channel::bounded::<u8>(8);
            #[doc = concat!("assert_eq!(", $var, ".capacity(), Some(8));")]
            /// # drop((tx, rx));
            /// let (tx, rx) = berth::channel::unbounded::<u8>();
            #[doc = concat!("assert_eq!(", $var, ".capacity(), None);")]
            /// # drop((tx, rx));
            /// ```
            pub fn capacity(&self) -> Option<usize> {
                self.shared.capacity()
            }

            /// The number of live senders (weak senders do not count).
            ///
            /// # Examples
            ///
            /// ```
            /// let (tx, rx) = berth::channel::unbounded::<u8>();
            /// let tx2 = tx.clone();
            /// let _weak = tx.downgrade();
            #[doc = concat!("assert_eq!(", $var, ".sender_count(), 2);")]
            /// drop(tx2);
            #[doc = concat!("assert_eq!(", $var, ".sender_count(), 1);")]
            /// # drop(rx);
            /// ```
            pub fn sender_count(&self) -> usize {
                self.shared.senders.load(Acquire)
            }

            /// The number of live receivers.
            ///
            /// # Examples
            ///
            /// ```
            /// let (tx, rx) = berth::channel::unbounded::<u8>();
            /// let rx2 = rx.clone();
            #[doc = concat!("assert_eq!(", $var, ".receiver_count(), 2);")]
            /// drop(rx2);
            #[doc = concat!("assert_eq!(", $var, ".receiver_count(), 1);")]
            /// # drop(tx);
            /// ```
            pub fn receiver_count(&self) -> usize {
                self.shared.receivers.load(Acquire)
            }

            /// True once the channel is disconnected (one side gone, or `close` called).
            ///
            /// # Examples
            ///
            /// ```
            /// let (tx, rx) = berth::channel::unbounded::<u8>();
            #[doc = concat!("assert!(!", $var, ".is_disconnected());")]
            /// tx.close();
            #[doc = concat!("assert!(", $var, ".is_disconnected());")]
            /// # drop(rx);
            /// ```
            pub fn is_disconnected(&self) -> bool {
                self.shared.is_closed()
            }

            /// Disconnects the channel from either side: sends fail at once, receivers drain
            /// what is buffered and then fail. True for the call that disconnected it. (One
            /// exception: a `select`'s rendezvous send that had already claimed a select's
            /// receive before the close still delivers to it; the pair was made before.)
            ///
            /// # Examples
            ///
            /// ```
            /// let (tx, rx) = berth::channel::unbounded();
            /// tx.send(1).unwrap();
            #[doc = concat!("assert!(", $var, ".close()); // this call disconnected it")]
            #[doc = concat!("assert!(!", $var, ".close());")]
            /// assert!(tx.send(2).is_err()); // sends fail at once
            /// assert_eq!(rx.recv(), Ok(1)); // what is buffered is still received
            /// assert!(rx.recv().is_err());
            /// ```
            pub fn close(&self) -> bool {
                self.shared.close()
            }
        }
    };
}
common_methods!(Sender, "tx");
common_methods!(Receiver, "rx");

impl<T> Sender<T> {
    /// True if both handles belong to the same channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel;
    ///
    /// let (tx, _rx) = channel::unbounded::<u8>();
    /// let (other, _other_rx) = channel::unbounded::<u8>();
    /// assert!(tx.same_channel(&tx.clone()));
    /// assert!(!tx.same_channel(&other));
    /// ```
    pub fn same_channel(&self, other: &Sender<T>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T> Receiver<T> {
    /// True if both handles belong to the same channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel;
    ///
    /// let (_tx, rx) = channel::unbounded::<u8>();
    /// let (_other_tx, other) = channel::unbounded::<u8>();
    /// assert!(rx.same_channel(&rx.clone()));
    /// assert!(!rx.same_channel(&other));
    /// ```
    pub fn same_channel(&self, other: &Receiver<T>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T> WeakSender<T> {
    /// A sender, if the channel still has one (a channel whose senders are all gone stays
    /// disconnected).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel;
    ///
    /// let (tx, rx) = channel::unbounded();
    /// let weak = tx.downgrade();
    /// if let Some(tx2) = weak.upgrade() {
    ///     tx2.send(1).unwrap(); // a live sender for as long as `tx2` is kept
    /// }
    /// drop(tx);
    /// assert!(weak.upgrade().is_none()); // every sender is gone: it stays disconnected
    /// assert_eq!(rx.recv(), Ok(1));
    /// ```
    pub fn upgrade(&self) -> Option<Sender<T>> {
        let mut count = self.shared.senders.load(Relaxed);
        loop {
            if count == 0 {
                return None;
            }
            match self
                .shared
                .senders
                .compare_exchange(count, count + 1, AcqRel, Relaxed)
            {
                Ok(_) => {
                    return Some(Sender {
                        shared: Arc::clone(&self.shared),
                    })
                }
                Err(now) => count = now,
            }
        }
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Relaxed);
        Sender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.shared.receivers.fetch_add(1, Relaxed);
        Receiver {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Clone for WeakSender<T> {
    fn clone(&self) -> Self {
        WeakSender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, AcqRel) == 1 {
            self.shared.disconnect_senders();
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if self.shared.receivers.fetch_sub(1, AcqRel) == 1 {
            self.shared.disconnect_receivers();
        }
    }
}

/// A blocking iterator over a receiver's messages ([`Receiver::iter`]).
///
/// # Examples
///
/// ```
/// let (tx, rx) = berth::channel::unbounded();
/// tx.send(1).unwrap();
/// tx.send(2).unwrap();
/// drop(tx);
/// let mut sum = 0;
/// for msg in &rx { // `&Receiver` iterates with `Receiver::iter`
///     sum += msg;
/// }
/// assert_eq!(sum, 3);
/// ```
pub struct Iter<'a, T> {
    receiver: &'a Receiver<T>,
}

/// A non-blocking iterator over a receiver's messages ([`Receiver::try_iter`]).
///
/// # Examples
///
/// ```
/// let (tx, rx) = berth::channel::unbounded();
/// tx.send('a').unwrap();
/// let now: String = rx.try_iter().collect();
/// assert_eq!(now, "a");
/// assert!(!rx.is_disconnected()); // `tx` is alive: try_iter stopped because it was empty
/// ```
pub struct TryIter<'a, T> {
    receiver: &'a Receiver<T>,
}

/// A blocking, owning iterator over a receiver's messages.
///
/// # Examples
///
/// ```
/// use std::thread;
///
/// let (tx, rx) = berth::channel::bounded(2);
/// let consumer = thread::spawn(move || rx.into_iter().map(|s: String| s.len()).sum::<usize>());
/// tx.send("ab".to_string()).unwrap();
/// tx.send("cde".to_string()).unwrap();
/// drop(tx);
/// assert_eq!(consumer.join().unwrap(), 5);
/// ```
pub struct IntoIter<T> {
    receiver: Receiver<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.receiver.recv().ok()
    }
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.receiver.try_recv().ok()
    }
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.receiver.recv().ok()
    }
}

impl<'a, T> IntoIterator for &'a Receiver<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;
    fn into_iter(self) -> IntoIter<T> {
        IntoIter { receiver: self }
    }
}

fn flavor_name<T>(shared: &Shared<T>) -> &'static str {
    match shared.flavor {
        Flavor::Array(_) => "bounded",
        Flavor::List(_) => "unbounded",
        Flavor::Zero(_) => "rendezvous",
        Flavor::At(_) => "at",
        Flavor::Tick(_) => "tick",
        Flavor::Never(_) => "never",
    }
}

macro_rules! debug_handle {
    ($handle:ident) => {
        impl<T> fmt::Debug for $handle<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($handle))
                    .field("flavor", &flavor_name(&self.shared))
                    .field("len", &self.shared.len())
                    .field("capacity", &self.shared.capacity())
                    .field("disconnected", &self.shared.is_closed())
                    .finish()
            }
        }
    };
}
debug_handle!(Sender);
debug_handle!(Receiver);
debug_handle!(WeakSender);

impl<T> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Iter { .. }")
    }
}

impl<T> fmt::Debug for TryIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TryIter { .. }")
    }
}

impl<T> fmt::Debug for IntoIter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IntoIter { .. }")
    }
}
