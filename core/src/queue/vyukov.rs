//! `VyukovQueue`: Dmitry Vyukov's bounded MPMC ring, with stamps of lap and index.
//!
//! # The algorithm
//!
//! Every slot carries a *stamp* that says which position the slot is ready for. A position is a
//! pair (lap, index) packed into one word: the low bits are the index (`0..capacity`), the bit
//! above them is the `closed` mark (used only in `tail`), and the bits above that count laps.
//! `head` and `tail` are positions; they only move forward.
//!
//! For the position `p` that lives in slot `i`:
//!
//! | slot stamp             | meaning                                                  |
//! |------------------------|----------------------------------------------------------|
//! | `p`                    | empty, waiting for the producer of `p`                   |
//! | `p + 1`                | full, waiting for the consumer of `p`                    |
//! | `p + LAP`              | empty, waiting for the producer of `p`'s next lap        |
//!
//! A producer reads `tail` and the stamp of its slot, and compares them three ways (the
//! reference post's first queue had only two, and reported every lost race as `Full`):
//!
//! - **P1** stamp == tail: the slot is free for this position; claim it with a CAS on `tail`
//!   (on failure another producer won: reload and retry), write the value, and publish it by
//!   storing `tail + 1` with `Release`.
//! - **P2** stamp + LAP == tail + 1: the slot still holds the previous lap's value; the queue is
//!   full only if `head` is exactly one lap behind `tail` (checked after a `SeqCst` fence so the
//!   `head` we read is no older than the stamp); otherwise a consumer is mid-pop: retry.
//! - **P3** anything else: another producer moved past this position; reload `tail` and retry.
//!
//! Consumers mirror it on `head`: **C1** stamp == head + 1: claim with a CAS on `head`, read,
//! release the slot for the next lap by storing `head + LAP`; **C2** stamp == head: empty if
//! `tail == head` (closed if `tail` also carries the mark), otherwise a producer is mid-write:
//! wait for it; **C3** otherwise reload.
//!
//! # Exact capacity, and why capacity 1 works
//!
//! The index field is `(capacity + 1).next_power_of_two()` wide, and a lap adds twice that, so
//! the "full" stamp `p + 1` of a slot never equals the stamp of any other position of the same
//! slot, even when the ring has one slot. Vyukov's original numbering (position `p` in slot
//! `p % capacity`, full = `p + 1`) gives a one-slot ring the same stamp for "full in this lap"
//! and "empty in the next", so a producer overwrites a live value: the bug the reference post's
//! capacity-1 queue shipped (mutant `vyukov_cap1_overwrite`). Indexing with `p & (capacity - 1)`
//! instead of wrapping at `capacity` loses values for capacities that are not powers of two
//! (mutant `vyukov_pow2_mask`). Any capacity from 1 up is exact.
//!
//! # Waiting
//!
//! Blocking operations spin, yield, then park on a wait list (see [`crate::park`]). A sleeping
//! consumer's re-check is `tail.fetch_add(0, AcqRel)`, an RMW on the word every producer CASes
//! (P1); a sleeping producer's is `head.fetch_add(0, AcqRel)`. After publishing, a producer
//! reads the consumers' wait-list count and makes no call at all unless someone is registered.
//!
//! # Progress
//!
//! Claims are lock-free, but the queue is not: a producer paused between its CAS (P1) and its
//! publishing store leaves the consumer of that position waiting (C2), and a consumer paused
//! between its CAS (C1) and its releasing store leaves that slot's next producer waiting (P2).
//! [`ScqQueue`](super::ScqQueue) removes that.

use super::{impl_bounded_queue, TryPopError, TryPushError, Wait};
use crate::park::{block_handover_until, block_until, Attempt, Backoff, Handover, WaitList};
use crate::sync::atomic::{
    fence, AtomicUsize,
    Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst},
};
use crate::sync::cell::UnsafeCell;
use crate::util::CachePadded;
use std::alloc::Layout;
use std::fmt;
use std::mem::MaybeUninit;
use std::time::Instant;

struct Slot<T> {
    /// The position this slot is ready for (see the table in the module docs).
    stamp: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// A bounded MPMC queue after Dmitry Vyukov: per-slot stamps, `head` and `tail` on separate
/// cache lines, exact capacity (any capacity of at least 1).
///
/// # Examples
///
/// ```
/// use berth::VyukovQueue;
///
/// let q = VyukovQueue::new(3);
/// for i in 0..3 {
///     q.try_push(i).unwrap();
/// }
/// assert!(q.try_push(3).unwrap_err().is_full());
/// q.close();
/// assert_eq!((q.pop(), q.pop(), q.pop()), (Ok(0), Ok(1), Ok(2)));
/// assert!(q.pop().is_err()); // closed and drained
/// ```
///
/// The queue is `Send + Sync` exactly when `T: Send`; a queue of `Rc` cannot be shared:
///
/// ```compile_fail
/// fn shared<Q: Sync>(_: &Q) {}
/// shared(&berth::VyukovQueue::<std::rc::Rc<u8>>::new(1));
/// ```
pub struct VyukovQueue<T> {
    /// The next position to pop.
    head: CachePadded<AtomicUsize>,
    /// The next position to push, with `mark_bit` set once closed.
    tail: CachePadded<AtomicUsize>,
    /// Consumers waiting for a value.
    not_empty: CachePadded<WaitList>,
    /// Producers waiting for a free slot.
    not_full: CachePadded<WaitList>,
    buffer: Box<[Slot<T>]>,
    cap: usize,
    /// `(cap + 1).next_power_of_two()`: the bit above the index bits; set in `tail` when closed.
    mark_bit: usize,
    /// `2 * mark_bit`: adding it moves a position to the same index of the next lap.
    lap: usize,
}

// SAFETY: values of type T are moved in by one thread and out by another, so T: Send is required
// and sufficient; no &T is ever shared between threads. Each slot's value is accessed by exactly
// one thread between a successful CAS on head/tail and the stamp store that hands it on.
unsafe impl<T: Send> Send for VyukovQueue<T> {}
// SAFETY: as above; all shared state is atomics, wait lists (Mutex-protected) and slots whose
// access is serialised by the stamp protocol.
unsafe impl<T: Send> Sync for VyukovQueue<T> {}

/// Why an attempt to push did not push.
enum PushFail {
    /// Full, with the `head` that proved it (the value the sleeping re-check compares with).
    Full(usize),
    Closed,
}

/// Why an attempt to pop did not pop.
enum PopFail {
    /// Empty, with the `head` (== tail) that proved it.
    Empty(usize),
    Closed,
}

impl<T> VyukovQueue<T> {
    /// A queue that holds exactly `capacity` values.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0 (a bounded queue needs at least one slot), or so large that its
    /// positions would not fit in a `usize` or its slots in memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::VyukovQueue;
    ///
    /// let q = VyukovQueue::<String>::new(16);
    /// assert_eq!(q.capacity(), 16);
    /// assert!(q.is_empty());
    /// ```
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "VyukovQueue capacity must be at least 1, got 0"
        );
        let too_large = |why: &str| -> ! {
            panic!("VyukovQueue capacity {capacity} is too large: {why}");
        };
        let mark_bit = capacity
            .checked_add(1)
            .and_then(usize::checked_next_power_of_two)
            .unwrap_or_else(|| too_large("positions would overflow a usize"));
        let lap = mark_bit
            .checked_mul(2)
            .unwrap_or_else(|| too_large("positions would overflow a usize"));
        if Layout::array::<Slot<T>>(capacity).is_err() {
            too_large("its slots would exceed isize::MAX bytes");
        }
        let buffer = (0..capacity)
            .map(|i| Slot {
                stamp: AtomicUsize::new(i),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        VyukovQueue {
            head: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(AtomicUsize::new(0)),
            not_empty: CachePadded::new(WaitList::new()),
            not_full: CachePadded::new(WaitList::new()),
            buffer,
            cap: capacity,
            mark_bit,
            lap,
        }
    }

    /// The slot index of a position.
    #[inline]
    fn index(&self, pos: usize) -> usize {
        #[cfg(not(berth_mutant = "vyukov_pow2_mask"))]
        {
            pos & (self.mark_bit - 1)
        }
        // MUTANT vyukov_pow2_mask: masking with capacity - 1, right only for powers of two.
        #[cfg(berth_mutant = "vyukov_pow2_mask")]
        {
            pos & (self.cap - 1)
        }
    }

    /// The position after `pos`: the next index, or index 0 of the next lap.
    #[inline]
    fn next(&self, pos: usize) -> usize {
        if self.index(pos) + 1 < self.cap {
            pos.wrapping_add(1)
        } else {
            (pos & !(self.lap - 1)).wrapping_add(self.lap)
        }
    }

    /// The stamp that marks the slot of `pos` as holding `pos`'s value.
    #[inline]
    fn full_stamp(&self, pos: usize) -> usize {
        #[cfg(not(berth_mutant = "vyukov_cap1_overwrite"))]
        {
            pos.wrapping_add(1)
        }
        // MUTANT vyukov_cap1_overwrite: Vyukov's numbering, "full" = the next position. With one
        // slot that is also the stamp of "empty, next lap", so a producer overwrites a live value.
        #[cfg(berth_mutant = "vyukov_cap1_overwrite")]
        {
            self.next(pos)
        }
    }

    /// One attempt to push: P1-P3 of the module docs.
    fn push_attempt(&self, value: T) -> Result<(), (T, PushFail)> {
        let mut backoff = Backoff::new();
        let mut tail = self.tail.load(Relaxed);
        loop {
            if tail & self.mark_bit != 0 {
                return Err((value, PushFail::Closed));
            }
            let slot = &self.buffer[self.index(tail)];
            let stamp = slot.stamp.load(Acquire);
            if stamp == tail {
                // P1: the slot is free for this position; claim it.
                match self
                    .tail
                    .compare_exchange(tail, self.next(tail), AcqRel, Relaxed)
                {
                    Ok(_) => {
                        slot.value.with_mut(|p| {
                            // SAFETY: our CAS claimed position `tail`, and its stamp said the slot
                            // is empty for it: no other thread reads or writes the value until
                            // the stamp store below hands it to the consumer of `tail`.
                            unsafe { p.write(MaybeUninit::new(value)) }
                        });
                        slot.stamp.store(self.full_stamp(tail), Release);
                        self.not_empty.notify_one();
                        return Ok(());
                    }
                    Err(current) => {
                        // MUTANT vyukov_lost_race_full: a lost race reported as a full queue.
                        if cfg!(berth_mutant = "vyukov_lost_race_full") {
                            return Err((value, PushFail::Full(self.head.load(Relaxed))));
                        }
                        tail = current;
                        backoff.spin();
                    }
                }
            } else if stamp.wrapping_add(self.lap) == tail.wrapping_add(1) {
                // P2: the slot still holds the previous lap's value.
                fence(SeqCst);
                let head = self.head.load(Relaxed);
                if head.wrapping_add(self.lap) == tail {
                    return Err((value, PushFail::Full(head)));
                }
                // A consumer has claimed it but not yet released it.
                backoff.snooze();
                tail = self.tail.load(Relaxed);
            } else {
                // P3: another producer moved past this position.
                if cfg!(berth_mutant = "vyukov_lost_race_full") {
                    return Err((value, PushFail::Full(self.head.load(Relaxed))));
                }
                backoff.snooze();
                tail = self.tail.load(Relaxed);
            }
        }
    }

    /// One attempt to pop: C1-C3 of the module docs.
    fn pop_attempt(&self) -> Result<T, PopFail> {
        let mut backoff = Backoff::new();
        let mut head = self.head.load(Relaxed);
        loop {
            let slot = &self.buffer[self.index(head)];
            let stamp = slot.stamp.load(Acquire);
            if stamp == self.full_stamp(head) {
                // C1: the slot holds this position's value; claim it.
                match self
                    .head
                    .compare_exchange(head, self.next(head), AcqRel, Relaxed)
                {
                    Ok(_) => {
                        let value = slot.value.with(|p| {
                            // Nobody else touches the slot until the stamp store below releases
                            // it for the next lap.
                            // SAFETY: our CAS claimed `head`, and its stamp (Acquire, pairing with
                            // the producer's Release) says the value was written and not taken.
                            unsafe { p.read().assume_init() }
                        });
                        slot.stamp.store(head.wrapping_add(self.lap), Release);
                        self.not_full.notify_one();
                        return Ok(value);
                    }
                    Err(current) => {
                        head = current;
                        backoff.spin();
                    }
                }
            } else if stamp == head {
                // C2: the slot is empty for this lap.
                fence(SeqCst);
                let tail = self.tail.load(Relaxed);
                if tail & !self.mark_bit == head {
                    return Err(if tail & self.mark_bit != 0 {
                        PopFail::Closed
                    } else {
                        PopFail::Empty(head)
                    });
                }
                // A producer claimed this position and is writing it: wait for it.
                backoff.snooze();
                head = self.head.load(Relaxed);
            } else {
                // C3: another consumer moved past this position.
                backoff.snooze();
                head = self.head.load(Relaxed);
            }
        }
    }

    /// Pops up to `max` values that are there now into `out`, and returns how many: every
    /// position from `head` whose slot holds its value (C1 for each), claimed together by one
    /// CAS of `head` past them, then read and released slot by slot, and up to that many
    /// waiting producers woken at once. Stops at the first position whose value is not there
    /// (an empty queue, or a producer still writing it: the caller's blocking receive waits for
    /// that one), so it returns 0 without waiting. Correct with any number of consumers: a
    /// position is claimed only by the CAS that moves `head` past it, and a stamp that says
    /// "full for position p" can only change after p is claimed. With one consumer (the
    /// exclusive `mpsc::Receiver`) the CAS never fails, and a batch costs one RMW on `head`
    /// instead of one per value.
    pub(crate) fn pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        let mut backoff = Backoff::new();
        loop {
            let head = self.head.load(Relaxed);
            let mut end = head;
            let mut n = 0;
            while n < max
                && self.buffer[self.index(end)].stamp.load(Acquire) == self.full_stamp(end)
            {
                n += 1;
                end = self.next(end);
            }
            if n == 0 {
                return 0;
            }
            if self
                .head
                .compare_exchange(head, end, AcqRel, Relaxed)
                .is_err()
            {
                // Another consumer moved `head`: count again from where it is now.
                backoff.spin();
                continue;
            }
            out.reserve(n);
            let mut pos = head;
            for _ in 0..n {
                let slot = &self.buffer[self.index(pos)];
                let value = slot.value.with(|p| {
                    // SAFETY: our CAS claimed every position from `head` to `end`, and each
                    // one's stamp (Acquire, pairing with its producer's Release) said its value
                    // was written and not taken; nobody touches the slot until the stamp store
                    // below releases it for the next lap.
                    unsafe { p.read().assume_init() }
                });
                slot.stamp.store(pos.wrapping_add(self.lap), Release);
                out.push(value);
                pos = self.next(pos);
            }
            #[cfg(not(berth_mutant = "batch_wakes_one"))]
            self.not_full.notify_many(n);
            // MUTANT batch_wakes_one: a batch that freed `n` slots wakes one producer, as a
            // single pop does; the others sleep on beside free slots.
            #[cfg(berth_mutant = "batch_wakes_one")]
            self.not_full.notify_one();
            return n;
        }
    }

    /// Pushes `value` if there is room, without parking.
    ///
    /// Never reports `Full` because of a lost race: a producer that loses its CAS retries. Like
    /// every operation on this queue, it can spin (and yield) while another thread is paused in
    /// the middle of its own operation on the same slot (see "Progress" in the module docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::VyukovQueue;
    ///
    /// let q = VyukovQueue::new(1);
    /// assert!(q.try_push(1).is_ok());
    /// let full = q.try_push(2).unwrap_err();
    /// assert!(full.is_full());
    /// assert_eq!(full.into_inner(), 2); // the value comes back
    /// ```
    pub fn try_push(&self, value: T) -> Result<(), TryPushError<T>> {
        self.push_attempt(value).map_err(|(v, why)| match why {
            PushFail::Full(_) => TryPushError::Full(v),
            PushFail::Closed => TryPushError::Closed(v),
        })
    }

    super::blocking_methods!(VyukovQueue);

    /// Pops the oldest value, without parking (it can spin while a producer is paused between
    /// claiming the next position and publishing it; see "Progress" in the module docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::VyukovQueue;
    ///
    /// let q = VyukovQueue::new(2);
    /// q.try_push('a').unwrap();
    /// assert_eq!(q.try_pop(), Ok('a'));
    /// assert!(q.try_pop().unwrap_err().is_empty());
    /// ```
    pub fn try_pop(&self) -> Result<T, TryPopError> {
        self.pop_attempt().map_err(|why| match why {
            PopFail::Empty(_) => TryPopError::Empty,
            PopFail::Closed => TryPopError::Closed,
        })
    }

    /// The one blocking body behind `push`, `push_timeout` and `push_deadline`.
    fn push_until(&self, value: T, deadline: Option<Instant>) -> Result<(), (T, Wait)> {
        block_handover_until(
            &self.not_full,
            deadline,
            value,
            |v| match self.push_attempt(v) {
                Ok(()) => Handover::Done,
                Err((v, PushFail::Closed)) => Handover::Refused(v),
                Err((v, PushFail::Full(head))) => Handover::Wait(v, head),
            },
            |&head| self.recheck_head(head) || self.is_closed(),
        )
        .map_err(Wait::from_handover)
    }

    /// The one blocking body behind `pop`, `pop_timeout` and `pop_deadline`.
    fn pop_until(&self, deadline: Option<Instant>) -> Result<T, Wait> {
        let done = block_until(
            &self.not_empty,
            deadline,
            || match self.pop_attempt() {
                Ok(v) => Attempt::Ready(Ok(v)),
                Err(PopFail::Closed) => Attempt::Ready(Err(Wait::Closed)),
                Err(PopFail::Empty(head)) => Attempt::Wait(head),
            },
            |&head| self.recheck_tail(head),
        );
        done.unwrap_or(Err(Wait::TimedOut))
    }

    /// One pop attempt for an async receive: the value, `Err(())` if closed and drained, or the
    /// observation to re-check with [`pop_changed`](Self::pop_changed) after registering in
    /// [`not_empty`](Self::not_empty).
    pub(crate) fn pop_observe(&self) -> Attempt<Result<T, ()>, usize> {
        match self.pop_attempt() {
            Ok(v) => Attempt::Ready(Ok(v)),
            Err(PopFail::Closed) => Attempt::Ready(Err(())),
            Err(PopFail::Empty(head)) => Attempt::Wait(head),
        }
    }

    /// W2 of an async receive (an RMW; see [`crate::park`]).
    pub(crate) fn pop_changed(&self, head: usize) -> bool {
        self.recheck_tail(head)
    }

    /// The consumers' wait list.
    pub(crate) fn not_empty(&self) -> &WaitList {
        &self.not_empty
    }

    /// One push attempt for an async send (see [`pop_observe`](Self::pop_observe)).
    pub(crate) fn push_observe(&self, value: T) -> Handover<T, usize> {
        match self.push_attempt(value) {
            Ok(()) => Handover::Done,
            Err((v, PushFail::Closed)) => Handover::Refused(v),
            Err((v, PushFail::Full(head))) => Handover::Wait(v, head),
        }
    }

    /// Whether a push could proceed now, without pushing (a `select` on a send): `Ready(())` if
    /// there is room or the queue is closed, else the `head` to re-check with
    /// [`push_changed`](Self::push_changed). `head` is read after `tail` behind a `SeqCst` fence,
    /// as a producer's P2 does, so "full" means `head` had not moved when `tail` was read.
    pub(crate) fn push_ready_observe(&self) -> Attempt<(), usize> {
        let tail = self.tail.load(Acquire);
        fence(SeqCst);
        let head = self.head.load(Relaxed);
        if tail & self.mark_bit != 0 || head.wrapping_add(self.lap) != tail {
            Attempt::Ready(())
        } else {
            Attempt::Wait(head)
        }
    }

    /// Whether a pop could proceed now, without popping (a `select` on a receive, or `ready`):
    /// `Ready(())` if a value is there (or being written) or the queue is closed, else the
    /// `head` to re-check with [`pop_changed`](Self::pop_changed).
    pub(crate) fn pop_ready_observe(&self) -> Attempt<(), usize> {
        let head = self.head.load(Acquire);
        fence(SeqCst);
        let tail = self.tail.load(Relaxed);
        if tail != head {
            // A value, a push in progress, or the closed mark.
            Attempt::Ready(())
        } else {
            Attempt::Wait(head)
        }
    }

    /// W2 of an async send.
    pub(crate) fn push_changed(&self, head: usize) -> bool {
        self.recheck_head(head) || self.is_closed()
    }

    /// The producers' wait list.
    pub(crate) fn not_full(&self) -> &WaitList {
        &self.not_full
    }

    /// W2 for a sleeping consumer that saw `tail == head`: has `tail` moved (or been marked)?
    /// An RMW, not a load: see "Why no wakeup is lost" in [`crate::park`].
    #[inline]
    fn recheck_tail(&self, head: usize) -> bool {
        #[cfg(not(berth_mutant = "vyukov_recheck_load"))]
        let tail = self.tail.fetch_add(0, AcqRel);
        // MUTANT vyukov_recheck_load: a plain load can read a stale tail while the producer
        // reads a stale waiter count: both miss each other and the consumer sleeps forever.
        #[cfg(berth_mutant = "vyukov_recheck_load")]
        let tail = self.tail.load(Acquire);
        tail != head
    }

    /// W2 for a sleeping producer that saw `head` one lap behind `tail`: has `head` moved?
    #[inline]
    fn recheck_head(&self, head: usize) -> bool {
        self.head.fetch_add(0, AcqRel) != head
    }

    /// Closes the queue: every later push fails and hands its value back, every waiting thread
    /// wakes, and pops drain what is left. True for the call that closed it.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::VyukovQueue;
    ///
    /// let q = VyukovQueue::new(2);
    /// q.push(1).unwrap();
    /// assert!(q.close()); // this call closed it
    /// assert!(!q.close()); // already closed
    /// assert!(q.push(2).is_err()); // every later push fails
    /// assert_eq!(q.pop(), Ok(1)); // what is inside can still be popped
    /// assert!(q.pop().is_err()); // closed and drained
    /// ```
    pub fn close(&self) -> bool {
        let tail = self.tail.fetch_or(self.mark_bit, SeqCst);
        if tail & self.mark_bit != 0 {
            return false;
        }
        self.not_empty.notify_all();
        self.not_full.notify_all();
        true
    }

    /// True once the queue is closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::VyukovQueue;
    ///
    /// let q = VyukovQueue::<u8>::new(1);
    /// assert!(!q.is_closed());
    /// q.close();
    /// assert!(q.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.tail.load(SeqCst) & self.mark_bit != 0
    }

    /// The number of values inside (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::VyukovQueue;
    ///
    /// let q = VyukovQueue::new(4);
    /// q.push(1).unwrap();
    /// q.push(2).unwrap();
    /// assert_eq!(q.len(), 2);
    /// q.pop().unwrap();
    /// assert_eq!(q.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        loop {
            let tail = self.tail.load(SeqCst);
            let head = self.head.load(SeqCst);
            if self.tail.load(SeqCst) == tail {
                return self.distance(head, tail & !self.mark_bit);
            }
        }
    }

    /// The number of positions from `head` to `tail`, both unmarked and consistent.
    fn distance(&self, head: usize, tail: usize) -> usize {
        let hix = head & (self.mark_bit - 1);
        let tix = tail & (self.mark_bit - 1);
        if hix < tix {
            tix - hix
        } else if hix > tix {
            self.cap - hix + tix
        } else if tail == head {
            0
        } else {
            self.cap
        }
    }

    /// True if the queue holds no value (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::VyukovQueue;
    ///
    /// let q = VyukovQueue::new(4);
    /// assert!(q.is_empty());
    /// q.push(1).unwrap();
    /// assert!(!q.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        let head = self.head.load(SeqCst);
        let tail = self.tail.load(SeqCst);
        tail & !self.mark_bit == head
    }

    /// True if the queue holds `capacity` values (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::VyukovQueue;
    ///
    /// let q = VyukovQueue::new(2);
    /// q.push(1).unwrap();
    /// assert!(!q.is_full());
    /// q.push(2).unwrap();
    /// assert!(q.is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        let tail = self.tail.load(SeqCst);
        let head = self.head.load(SeqCst);
        head.wrapping_add(self.lap) == tail & !self.mark_bit
    }

    /// The number of values the queue can hold: exactly the capacity it was created with.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::VyukovQueue;
    ///
    /// let q = VyukovQueue::<u64>::new(3); // exact: any capacity of at least 1
    /// assert_eq!(q.capacity(), 3);
    /// ```
    pub fn capacity(&self) -> usize {
        self.cap
    }
}

impl<T> Drop for VyukovQueue<T> {
    fn drop(&mut self) {
        // `&mut self`: every operation has finished, so head..tail is exactly the live values.
        let head = self.head.load(Relaxed);
        let tail = self.tail.load(Relaxed) & !self.mark_bit;
        let hix = head & (self.mark_bit - 1);
        for i in 0..self.distance(head, tail) {
            let index = if hix + i < self.cap {
                hix + i
            } else {
                hix + i - self.cap
            };
            self.buffer[index].value.with_mut(|p| {
                // SAFETY: positions head..tail were published by completed pushes and not
                // popped, so each of these slots holds an initialised value, dropped once here.
                unsafe { (*p).assume_init_drop() }
            });
        }
    }
}

impl_bounded_queue!(VyukovQueue);

impl<T> fmt::Debug for VyukovQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VyukovQueue")
            .field("len", &self.len())
            .field("capacity", &self.cap)
            .field("closed", &self.is_closed())
            .finish()
    }
}
