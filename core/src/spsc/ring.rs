//! The SPSC ring.
//!
//! # Protocol
//!
//! `tail` (written only by the producer) and `head` (written only by the consumer) count
//! positions; the ring holds `tail - head` values, in slots `position % capacity` (each side
//! keeps that index itself, so no division). The producer writes a slot, then publishes it by
//! advancing `tail` with `Release`; the consumer reads `tail` with `Acquire`, reads the slot, then
//! frees it by advancing `head` with `Release`. Each side caches the other's position and
//! re-reads it only when the cache says it must wait, so a stream of operations stays on the
//! side's own lines.
//!
//! # Waiting
//!
//! A side that must wait spins, yields, then parks on a wait list (see [`crate::park`]). The
//! position updates are RMWs (`swap`, `AcqRel`): they are the notifier's N1, and a parked side's
//! re-check is an RMW (`fetch_add(0)`) on the position the other side advances, which is what
//! rules out a lost wakeup without a `SeqCst` fence. On x86-64 the swap costs one locked
//! instruction on a line the side already owns.
//!
//! # Disconnection
//!
//! Dropping the producer sets `producer_gone` and wakes the consumer, which drains the ring and
//! then fails. Dropping the consumer sets `consumer_gone` and wakes the producer, whose pushes
//! then fail with their value. Values still in the ring are dropped with the ring.

use crate::park::{block_handover_until, block_until, Attempt, Handover, WaitList};
use crate::queue::deadline_after;
use crate::sync::atomic::{
    AtomicU32, AtomicUsize,
    Ordering::{AcqRel, Acquire, Relaxed},
};
use crate::sync::cell::UnsafeCell;
use crate::sync::Arc;
use crate::util::CachePadded;
use std::alloc::Layout;
use std::error::Error;
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::time::{Duration, Instant};

struct Ring<T> {
    /// Positions pushed; written only by the producer.
    tail: CachePadded<AtomicUsize>,
    /// Positions popped; written only by the consumer.
    head: CachePadded<AtomicUsize>,
    /// `PRODUCER_GONE` | `CONSUMER_GONE`.
    gone: AtomicU32,
    not_empty: CachePadded<WaitList>,
    not_full: CachePadded<WaitList>,
    /// `capacity` slots; just one for a zero-sized `T`, which needs no storage (building
    /// `usize::MAX` zero-sized slots one by one would take minutes in a debug build).
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    capacity: usize,
}

const PRODUCER_GONE: u32 = 1;
const CONSUMER_GONE: u32 = 2;

// SAFETY: values are moved from the producer's thread to the consumer's (`T: Send`); each slot is
// accessed by one side at a time, handed over by the Release/Acquire pair on `tail` and `head`.
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: as above: shared state is atomics, wait lists and slots owned by one side at a time.
unsafe impl<T: Send> Sync for Ring<T> {}

/// The sending side of an SPSC ring. Not `Clone`.
///
/// # Examples
///
/// ```
/// use std::thread;
///
/// let (mut tx, mut rx) = berth::spsc::channel(8);
/// let producer = thread::spawn(move || {
///     for i in 0..1_000u32 {
///         tx.push(i).unwrap(); // `&mut self`: one producer, no CAS
///     }
/// });
/// let mut expected = 0;
/// while let Ok(v) = rx.pop() {
///     assert_eq!(v, expected); // FIFO
///     expected += 1;
/// }
/// producer.join().unwrap();
/// assert_eq!(expected, 1_000);
/// ```
pub struct Producer<T> {
    ring: Arc<Ring<T>>,
    side: Side,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

/// One side's own position, its slot index, and its cache of the other side's position.
struct Side {
    pos: usize,
    index: usize,
    other: usize,
}

/// The receiving side of an SPSC ring. Not `Clone`.
///
/// # Examples
///
/// ```
/// let (mut tx, mut rx) = berth::spsc::channel(2);
/// tx.push('a').unwrap();
/// tx.push('b').unwrap();
/// drop(tx); // the consumer drains what is left, then fails
/// assert_eq!(rx.pop(), Ok('a'));
/// assert_eq!(rx.pop(), Ok('b'));
/// assert!(rx.pop().is_err());
/// ```
pub struct Consumer<T> {
    ring: Arc<Ring<T>>,
    side: Side,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

/// A ring of exactly `capacity` values.
///
/// # Panics
///
/// If `capacity` is 0 (a ring needs at least one slot) or its slots would not fit in memory.
///
/// # Examples
///
/// ```
/// let (mut tx, mut rx) = berth::spsc::channel::<u64>(3);
/// assert_eq!(tx.capacity(), 3);
/// for i in 0..3 {
///     tx.try_push(i).unwrap();
/// }
/// assert!(tx.try_push(3).is_err()); // exactly 3 fit
/// assert_eq!(rx.try_pop(), Ok(0));
/// ```
pub fn channel<T>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    assert!(capacity > 0, "spsc capacity must be at least 1, got 0");
    assert!(
        Layout::array::<MaybeUninit<T>>(capacity).is_ok(),
        "spsc capacity {capacity} is too large: its slots would exceed isize::MAX bytes"
    );
    let ring = Arc::new(Ring {
        tail: CachePadded::new(AtomicUsize::new(0)),
        head: CachePadded::new(AtomicUsize::new(0)),
        gone: AtomicU32::new(0),
        not_empty: CachePadded::new(WaitList::new()),
        not_full: CachePadded::new(WaitList::new()),
        capacity,
        slots: (0..if std::mem::size_of::<T>() == 0 {
            1
        } else {
            capacity
        })
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect(),
    });
    (
        Producer {
            ring: Arc::clone(&ring),
            side: Side::new(),
            _not_sync: PhantomData,
        },
        Consumer {
            ring,
            side: Side::new(),
            _not_sync: PhantomData,
        },
    )
}

impl Side {
    fn new() -> Self {
        Side {
            pos: 0,
            index: 0,
            other: 0,
        }
    }

    /// Moves to the next position and slot.
    #[inline]
    fn advance(&mut self, capacity: usize) {
        self.pos = self.pos.wrapping_add(1);
        self.index = if self.index + 1 == capacity {
            0
        } else {
            self.index + 1
        };
    }
}

impl<T> Ring<T> {
    fn capacity(&self) -> usize {
        self.capacity
    }

    /// The slot of ring index `index` (always the one slot for a zero-sized `T`).
    #[inline]
    fn slot(&self, index: usize) -> &UnsafeCell<MaybeUninit<T>> {
        if std::mem::size_of::<T>() == 0 {
            &self.slots[0]
        } else {
            &self.slots[index]
        }
    }

    /// One push attempt: `Err((v, None))` if disconnected, `Err((v, Some(head)))` if full.
    #[inline]
    fn push_attempt(&self, me: &mut Side, value: T) -> Result<(), (T, Option<usize>)> {
        if self.gone.load(Relaxed) & CONSUMER_GONE != 0 {
            return Err((value, None));
        }
        if me.pos.wrapping_sub(me.other) == self.capacity() {
            me.other = self.head.load(Acquire);
            if me.pos.wrapping_sub(me.other) == self.capacity() {
                return Err((value, Some(me.other)));
            }
        }
        self.slot(me.index).with_mut(|p| {
            // SAFETY: `tail - head < capacity`, so slot `tail % capacity` holds no value the
            // consumer may read: it was freed by the consumer's `head` update we acquired (or
            // never used); only the producer writes slots.
            unsafe { p.write(MaybeUninit::new(value)) }
        });
        me.advance(self.capacity());
        // MUTANT spsc_publish_relaxed: without Release, the consumer may read the slot before
        // the value written into it (loom reports the race on the cell).
        let publish = if cfg!(berth_mutant = "spsc_publish_relaxed") {
            Relaxed
        } else {
            AcqRel
        };
        self.tail.swap(me.pos, publish); // N1: publishes the slot
        self.not_empty.notify_one(); // N2
        Ok(())
    }

    /// One pop attempt: `Err(None)` if drained and disconnected, `Err(Some(tail))` if empty.
    #[inline]
    fn pop_attempt(&self, me: &mut Side) -> Result<T, Option<usize>> {
        if me.other == me.pos {
            me.other = self.tail.load(Acquire);
            if me.other == me.pos {
                if self.gone.load(Acquire) & PRODUCER_GONE == 0 {
                    return Err(Some(me.other));
                }
                // The producer's last push happened before it set the flag we just acquired.
                me.other = self.tail.load(Acquire);
                if me.other == me.pos {
                    return Err(None);
                }
            }
        }
        let value = self.slot(me.index).with(|p| {
            // SAFETY: `head < tail` (acquired): the producer wrote this slot and published it;
            // it will not touch it again until our `head` update below frees it.
            unsafe { p.read().assume_init() }
        });
        me.advance(self.capacity());
        self.head.swap(me.pos, AcqRel); // N1: frees the slot
        self.not_full.notify_one(); // N2
        Ok(value)
    }
}

impl<T> Producer<T> {
    /// Pushes `value` if there is room, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::spsc::TryPushError;
    ///
    /// let (mut tx, rx) = berth::spsc::channel(1);
    /// assert_eq!(tx.try_push(1), Ok(()));
    /// assert_eq!(tx.try_push(2), Err(TryPushError::Full(2)));
    /// drop(rx);
    /// assert_eq!(tx.try_push(3), Err(TryPushError::Disconnected(3)));
    /// ```
    #[inline]
    pub fn try_push(&mut self, value: T) -> Result<(), TryPushError<T>> {
        match self.ring.push_attempt(&mut self.side, value) {
            Ok(()) => Ok(()),
            Err((v, None)) => Err(TryPushError::Disconnected(v)),
            Err((v, Some(_))) => Err(TryPushError::Full(v)),
        }
    }

    /// Pushes `value`, waiting (spinning, then parking) while the ring is full. Fails, handing
    /// the value back, once the consumer is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    ///
    /// let (mut tx, mut rx) = berth::spsc::channel(1);
    /// let consumer = thread::spawn(move || (rx.pop().unwrap(), rx.pop().unwrap()));
    /// tx.push(1).unwrap();
    /// tx.push(2).unwrap(); // waits while the ring is full
    /// assert_eq!(consumer.join().unwrap(), (1, 2));
    /// assert_eq!(tx.push(3).unwrap_err().into_inner(), 3); // the consumer is gone
    /// ```
    pub fn push(&mut self, value: T) -> Result<(), PushError<T>> {
        self.push_until(value, None).map_err(|(v, _)| PushError(v))
    }

    /// Pushes `value`, waiting at most `timeout`; `Err(TryPushError::Full(v))` on timeout.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::spsc::TryPushError;
    /// use std::time::Duration;
    ///
    /// let (mut tx, _rx) = berth::spsc::channel(1);
    /// tx.push_timeout(1, Duration::from_millis(1)).unwrap();
    /// let e = tx.push_timeout(2, Duration::from_millis(1));
    /// assert_eq!(e, Err(TryPushError::Full(2))); // still full at the timeout
    /// ```
    pub fn push_timeout(&mut self, value: T, timeout: Duration) -> Result<(), TryPushError<T>> {
        self.push_until(value, deadline_after(timeout))
            .map_err(|(v, disconnected)| {
                if disconnected {
                    TryPushError::Disconnected(v)
                } else {
                    TryPushError::Full(v)
                }
            })
    }

    fn push_until(&mut self, value: T, deadline: Option<Instant>) -> Result<(), (T, bool)> {
        let ring = &*self.ring;
        let me = &mut self.side;
        block_handover_until(
            &ring.not_full,
            deadline,
            value,
            |v| match ring.push_attempt(me, v) {
                Ok(()) => Handover::Done,
                Err((v, None)) => Handover::Refused(v),
                Err((v, Some(head))) => Handover::Wait(v, head),
            },
            |&head| {
                ring.head.fetch_add(0, AcqRel) != head
                    || ring.gone.load(Acquire) & CONSUMER_GONE != 0
            },
        )
    }

    /// The number of values in the ring (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, _rx) = berth::spsc::channel(4);
    /// tx.push(1).unwrap();
    /// tx.push(2).unwrap();
    /// assert_eq!(tx.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.side.pos.wrapping_sub(self.ring.head.load(Acquire))
    }

    /// True if the ring holds no value (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, mut rx) = berth::spsc::channel(4);
    /// assert!(tx.is_empty());
    /// tx.push(1).unwrap();
    /// assert!(!tx.is_empty());
    /// rx.pop().unwrap();
    /// assert!(tx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of values the ring holds.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _rx) = berth::spsc::channel::<u8>(16);
    /// assert_eq!(tx.capacity(), 16);
    /// ```
    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// True once the consumer is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = berth::spsc::channel::<u8>(1);
    /// assert!(!tx.is_disconnected());
    /// drop(rx);
    /// assert!(tx.is_disconnected());
    /// ```
    pub fn is_disconnected(&self) -> bool {
        self.ring.gone.load(Acquire) & CONSUMER_GONE != 0
    }
}

impl<T> Consumer<T> {
    /// Pops the oldest value, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::spsc::TryPopError;
    ///
    /// let (mut tx, mut rx) = berth::spsc::channel(2);
    /// assert_eq!(rx.try_pop(), Err(TryPopError::Empty));
    /// tx.push(7).unwrap();
    /// assert_eq!(rx.try_pop(), Ok(7));
    /// drop(tx);
    /// assert_eq!(rx.try_pop(), Err(TryPopError::Disconnected));
    /// ```
    #[inline]
    pub fn try_pop(&mut self) -> Result<T, TryPopError> {
        self.ring.pop_attempt(&mut self.side).map_err(|e| match e {
            None => TryPopError::Disconnected,
            Some(_) => TryPopError::Empty,
        })
    }

    /// Pops the oldest value, waiting (spinning, then parking) while the ring is empty. Fails
    /// once the producer is gone and the ring is drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    ///
    /// let (mut tx, mut rx) = berth::spsc::channel(2);
    /// let producer = thread::spawn(move || tx.push("hi").unwrap());
    /// assert_eq!(rx.pop(), Ok("hi")); // waits for the value
    /// producer.join().unwrap(); // the producer is dropped with its thread
    /// assert!(rx.pop().is_err()); // drained and disconnected
    /// ```
    pub fn pop(&mut self) -> Result<T, PopError> {
        self.pop_until(None).map_err(|_| PopError)
    }

    /// Pops the oldest value, waiting at most `timeout`; `Err(TryPopError::Empty)` on timeout.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::spsc::TryPopError;
    /// use std::time::Duration;
    ///
    /// let (mut tx, mut rx) = berth::spsc::channel(1);
    /// assert_eq!(rx.pop_timeout(Duration::from_millis(1)), Err(TryPopError::Empty));
    /// tx.push(1).unwrap();
    /// assert_eq!(rx.pop_timeout(Duration::from_millis(1)), Ok(1));
    /// ```
    pub fn pop_timeout(&mut self, timeout: Duration) -> Result<T, TryPopError> {
        self.pop_until(deadline_after(timeout))
    }

    fn pop_until(&mut self, deadline: Option<Instant>) -> Result<T, TryPopError> {
        let ring = &*self.ring;
        let me = &mut self.side;
        let done = block_until(
            &ring.not_empty,
            deadline,
            || match ring.pop_attempt(me) {
                Ok(v) => Attempt::Ready(Ok(v)),
                Err(None) => Attempt::Ready(Err(TryPopError::Disconnected)),
                Err(Some(tail)) => Attempt::Wait(tail),
            },
            |&tail| {
                ring.tail.fetch_add(0, AcqRel) != tail
                    || ring.gone.load(Acquire) & PRODUCER_GONE != 0
            },
        );
        done.unwrap_or(Err(TryPopError::Empty))
    }

    /// The number of values in the ring (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, rx) = berth::spsc::channel(4);
    /// tx.push('x').unwrap();
    /// assert_eq!(rx.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.ring.tail.load(Acquire).wrapping_sub(self.side.pos)
    }

    /// True if the ring holds no value (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, rx) = berth::spsc::channel(4);
    /// assert!(rx.is_empty());
    /// tx.push(1).unwrap();
    /// assert!(!rx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of values the ring holds.
    ///
    /// # Examples
    ///
    /// ```
    /// let (_tx, rx) = berth::spsc::channel::<u8>(5);
    /// assert_eq!(rx.capacity(), 5);
    /// ```
    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// True once the producer is gone (values may still be left to pop).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, mut rx) = berth::spsc::channel(1);
    /// tx.push(1).unwrap();
    /// drop(tx);
    /// assert!(rx.is_disconnected()); // the producer is gone...
    /// assert_eq!(rx.pop(), Ok(1)); // ...but a value is still left
    /// ```
    pub fn is_disconnected(&self) -> bool {
        self.ring.gone.load(Acquire) & PRODUCER_GONE != 0
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        self.ring.gone.fetch_or(PRODUCER_GONE, AcqRel);
        self.ring.not_empty.notify_all();
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        self.ring.gone.fetch_or(CONSUMER_GONE, AcqRel);
        self.ring.not_full.notify_all();
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // Both handles are gone: `head..tail` are the values pushed and never popped.
        let cap = self.capacity();
        let head = self.head.load(Relaxed);
        let tail = self.tail.load(Relaxed);
        let mut index = head % cap;
        for _ in 0..tail.wrapping_sub(head) {
            self.slot(index).with_mut(|p| {
                // SAFETY: every position in head..tail was written and not read; `&mut self`.
                unsafe { (*p).assume_init_drop() }
            });
            index = if index + 1 == cap { 0 } else { index + 1 };
        }
    }
}

/// The error of [`Producer::try_push`] and [`Producer::push_timeout`]: the value comes back.
///
/// # Examples
///
/// ```
/// use berth::spsc::TryPushError;
///
/// let (mut tx, rx) = berth::spsc::channel(1);
/// tx.push(1).unwrap();
/// assert_eq!(tx.try_push(2), Err(TryPushError::Full(2)));
/// drop(rx);
/// assert_eq!(tx.try_push(3), Err(TryPushError::Disconnected(3)));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TryPushError<T> {
    /// The ring is full (or stayed full until the timeout).
    Full(T),
    /// The consumer is gone.
    Disconnected(T),
}

/// The error of [`Producer::push`]: the consumer is gone; the value comes back.
///
/// # Examples
///
/// ```
/// use berth::spsc::PushError;
///
/// let (mut tx, rx) = berth::spsc::channel(1);
/// drop(rx);
/// assert_eq!(tx.push(1), Err(PushError(1)));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct PushError<T>(pub T);

/// The error of [`Consumer::try_pop`] and [`Consumer::pop_timeout`].
///
/// # Examples
///
/// ```
/// use berth::spsc::TryPopError;
///
/// let (tx, mut rx) = berth::spsc::channel::<u8>(1);
/// assert_eq!(rx.try_pop(), Err(TryPopError::Empty));
/// drop(tx);
/// assert_eq!(rx.try_pop(), Err(TryPopError::Disconnected));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub enum TryPopError {
    /// The ring is empty (or stayed empty until the timeout).
    Empty,
    /// The producer is gone and the ring is drained.
    Disconnected,
}

/// The error of [`Consumer::pop`]: the producer is gone and the ring is drained.
///
/// # Examples
///
/// ```
/// use berth::spsc::PopError;
///
/// let (tx, mut rx) = berth::spsc::channel::<u8>(1);
/// drop(tx);
/// assert_eq!(rx.pop(), Err(PopError));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct PopError;

impl<T> TryPushError<T> {
    /// The value that was not pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, _rx) = berth::spsc::channel(1);
    /// tx.push(1).unwrap();
    /// assert_eq!(tx.try_push(2).unwrap_err().into_inner(), 2);
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TryPushError::Full(v) | TryPushError::Disconnected(v) => v,
        }
    }
}

impl<T> PushError<T> {
    /// The value that was not pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, rx) = berth::spsc::channel(1);
    /// drop(rx);
    /// assert_eq!(tx.push(String::from("back")).unwrap_err().into_inner(), "back");
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryPushError::Full(_) => f.write_str("Full(..)"),
            TryPushError::Disconnected(_) => f.write_str("Disconnected(..)"),
        }
    }
}

impl<T> fmt::Debug for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PushError(..)")
    }
}

impl<T> fmt::Display for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryPushError::Full(_) => f.write_str("pushing into a full ring"),
            TryPushError::Disconnected(_) => {
                f.write_str("pushing into a ring whose consumer is gone")
            }
        }
    }
}

impl<T> fmt::Display for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("pushing into a ring whose consumer is gone")
    }
}

impl fmt::Display for TryPopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryPopError::Empty => f.write_str("popping from an empty ring"),
            TryPopError::Disconnected => {
                f.write_str("popping from a drained ring whose producer is gone")
            }
        }
    }
}

impl fmt::Display for PopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("popping from a drained ring whose producer is gone")
    }
}

impl<T> Error for TryPushError<T> {}
impl<T> Error for PushError<T> {}
impl Error for TryPopError {}
impl Error for PopError {}

impl<T> fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Producer")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl<T> fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Consumer")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}
