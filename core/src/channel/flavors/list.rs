//! The unbounded flavour: linked blocks of slots, one lock per end, blocks recycled.
//!
//! # Layout
//!
//! Messages live in blocks of [`BLOCK_CAP`] slots linked by `next`. Producers append at the tail
//! under the `tail` lock; consumers take from the head under the `head` lock; a producer and a
//! consumer never wait for each other's lock. `pushed` counts published messages (and carries
//! the `DISCONNECTED` bit); it is written only under the `tail` lock, so its order is the order of
//! the slots.
//!
//! - **Push** (tail lock): if the tail block is full, take a block (a spare one if there is one),
//!   link it as the old block's `next` and move the tail to it; write the slot; then
//!   `pushed.fetch_add(1, AcqRel)` publishes the slot (and the link) to consumers. After the lock
//!   is released, wake a sleeping consumer if the wait list counts one.
//! - **Pop** (head lock): if the head's `known` (the `pushed` count that a consumer last read)
//!   is ahead of its count, a message is published and was acquired already: take it without
//!   touching `pushed`. Otherwise `pushed.load(Acquire)`; if it equals our count the list is
//!   empty (and disconnected if the bit is set), else remember it in `known`. If the head block
//!   is used up, follow `next` (set, because a later message exists) and retire the old block;
//!   read the slot. So while producers run ahead, the consumers read the line that every push
//!   increments once per batch, not once per message (a per-message load made that line move
//!   between the two cores twice per message: `losses.md`, `chan_unbounded_spsc1x1`).
//!
//! # Recycling, and what memory is kept
//!
//! A retired block is no longer reachable by any producer (the tail moved past it before the
//! message that made us leave it was published) nor by any other consumer (we hold the head
//! lock). It goes to a spare list of at most [`SPARE_BYTES`] (64 KiB) of blocks, never fewer
//! than 2 or more than 64 blocks; producers take their next block from it, and only beyond it is
//! a block freed. The spare list fills lazily, as blocks are retired; once a stream has reached
//! its steady lead (within that slack of the receivers: about 2,000 `u64` messages), it makes no
//! allocator call at all: the producer takes the
//! block the consumer just returned (seed `004_35da246730ba79cd.txt` is why that matters: a
//! queue that frees on the consumer what the producer allocated meets the allocator's arena
//! lock). A sender that runs further ahead allocates one block per [`BLOCK_CAP`] messages, and
//! the consumer frees the surplus. After a burst the channel keeps the blocks still holding
//! messages plus at most the spare list; everything is freed when the channel is dropped.
//!
//! # Waiting
//!
//! Receivers wait with `block_until`: their re-check before sleeping is
//! `pushed.fetch_add(0, AcqRel)`, an RMW on the counter every push increments (see
//! [`crate::park`]). Sends never wait: the list is unbounded.
//!
//! `pushed` counts messages modulo 2^63 (the top bit is the disconnect mark); the count would
//! have to wrap within one receiver's critical section to confuse it.

use super::{RecvFail, SendFail};
use crate::park::{block_until, Attempt, WaitList};
use crate::sync::atomic::{
    AtomicUsize,
    Ordering::{AcqRel, Acquire, Relaxed},
};
use crate::sync::cell::UnsafeCell;
use crate::sync::Mutex;
use crate::util::CachePadded;
use std::fmt;
use std::mem::MaybeUninit;
use std::ptr;
use std::time::Instant;

/// Slots per block. Small under the models, so that a model with a handful of messages crosses
/// blocks and exercises the hand-over and the recycling.
#[cfg(not(any(loom, shuttle)))]
pub(crate) const BLOCK_CAP: usize = 31;
#[cfg(any(loom, shuttle))]
pub(crate) const BLOCK_CAP: usize = 2;

/// Bytes of empty blocks kept for reuse: the slack a sender may run ahead of its receivers
/// without an allocator call. Beyond it, a retired block is freed.
pub(crate) const SPARE_BYTES: usize = 64 * 1024;
/// At least this many empty blocks are kept, however large the messages.
pub(crate) const MIN_SPARE_BLOCKS: usize = 2;
/// At most this many, however small the messages.
pub(crate) const MAX_SPARE_BLOCKS: usize = 64;

/// How many empty blocks a list of `T` keeps: 64 KiB worth, clamped to 2..=64 blocks.
const fn spare_blocks<T>() -> usize {
    let per_block = std::mem::size_of::<Block<T>>();
    // A block is never zero-sized: it holds its `next` pointer.
    let n = SPARE_BYTES / per_block;
    if n < MIN_SPARE_BLOCKS {
        MIN_SPARE_BLOCKS
    } else if n > MAX_SPARE_BLOCKS {
        MAX_SPARE_BLOCKS
    } else {
        n
    }
}

const DISCONNECTED: usize = 1 << (usize::BITS - 1);
const COUNT: usize = !DISCONNECTED;

struct Block<T> {
    /// The next block; written once by the producer that leaves this block (tail lock), read by
    /// the consumer that leaves it after `pushed` said a later message exists.
    next: UnsafeCell<*mut Block<T>>,
    slots: [UnsafeCell<MaybeUninit<T>>; BLOCK_CAP],
}

impl<T> Block<T> {
    fn new() -> Box<Self> {
        Box::new(Block {
            next: UnsafeCell::new(ptr::null_mut()),
            slots: std::array::from_fn(|_| UnsafeCell::new(MaybeUninit::uninit())),
        })
    }
}

/// One end of the list: the block it is in, the next slot, and (head only) messages taken and
/// the published count last read from `pushed`.
struct End<T> {
    block: *mut Block<T>,
    index: usize,
    count: usize,
    /// Head only: `pushed & COUNT` as last loaded (`Acquire`) under the head lock. Every message
    /// below it was published before that load, so the load made its slot (and the `next` link
    /// before it) visible to that consumer, and the head lock passes this on to the next.
    known: usize,
}

// SAFETY: an `End` is only used under its mutex; the block it points to is shared with the other
// end under the protocol in the module docs, and holds `T`s moved between threads (`T: Send`).
unsafe impl<T: Send> Send for End<T> {}

/// An unbounded MPMC channel buffer.
pub(crate) struct List<T> {
    pushed: CachePadded<AtomicUsize>,
    tail: CachePadded<Mutex<End<T>>>,
    head: CachePadded<Mutex<End<T>>>,
    spare: Mutex<Vec<Box<Block<T>>>>,
    not_empty: CachePadded<WaitList>,
}

// SAFETY: all shared state is behind mutexes or atomics; messages are moved in by one thread and
// out by another, which `T: Send` allows.
unsafe impl<T: Send> Send for List<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for List<T> {}

impl<T> List<T> {
    pub(crate) fn new() -> Self {
        let first = Box::into_raw(Block::new());
        List {
            pushed: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(Mutex::new(End {
                block: first,
                index: 0,
                count: 0,
                known: 0,
            })),
            head: CachePadded::new(Mutex::new(End {
                block: first,
                index: 0,
                count: 0,
                known: 0,
            })),
            spare: Mutex::new(Vec::with_capacity(spare_blocks::<T>())),
            not_empty: CachePadded::new(WaitList::new()),
        }
    }

    /// Appends `value`; fails (handing it back) once disconnected.
    pub(crate) fn push(&self, value: T) -> Result<(), T> {
        let mut tail = self.tail.lock();
        if self.pushed.load(Relaxed) & DISCONNECTED != 0 {
            return Err(value);
        }
        if tail.index == BLOCK_CAP {
            let fresh = self.take_block();
            // SAFETY: the tail block is live: a consumer retires a block only after moving past
            // it, which needs a message after it, which means the tail already left it. Its
            // `next` is written only here, under the tail lock.
            let block = unsafe { &*tail.block };
            block.next.with_mut(|p| {
                // SAFETY: we hold the tail lock, the only writer; no consumer reads `next` before
                // the `pushed` increment below publishes the first message of `fresh`.
                unsafe { *p = fresh }
            });
            tail.block = fresh;
            tail.index = 0;
        }
        // SAFETY: the tail block is live (as above).
        let block = unsafe { &*tail.block };
        block.slots[tail.index].with_mut(|p| {
            // SAFETY: slot `index` of the tail block is beyond every published message, so no
            // consumer reads it until the increment below; we hold the tail lock.
            unsafe { p.write(MaybeUninit::new(value)) }
        });
        tail.index += 1;
        self.pushed.fetch_add(1, AcqRel); // N1: publishes the slot
        drop(tail);
        self.not_empty.notify_one(); // N2
        Ok(())
    }

    /// One attempt to pop: a message, or `Err(Ok(seen))` (empty; `seen` is the `pushed` value to
    /// re-check), or `Err(Err(()))` (empty and disconnected).
    fn pop(&self) -> Result<T, Result<usize, ()>> {
        let mut head = self.head.lock();
        if head.known == head.count {
            let pushed = self.pushed.load(Acquire);
            if pushed & COUNT == head.count {
                return Err(if pushed & DISCONNECTED != 0 {
                    Err(())
                } else {
                    Ok(pushed)
                });
            }
            head.known = pushed & COUNT;
        }
        if head.index == BLOCK_CAP {
            let old = head.block;
            // SAFETY: the head block is live (only the head retires blocks, under this lock), and
            // its `next` was written before the `pushed` increment acquired when `known` was
            // read (by this consumer, or by one before it under this lock).
            let next = unsafe { &*old }.next.with(|p| {
                // SAFETY: see above; the write happened before, no write can happen now.
                unsafe { *p }
            });
            head.block = next;
            head.index = 0;
            self.retire(old);
        }
        // SAFETY: the head block is live (see above).
        let block = unsafe { &*head.block };
        let value = block.slots[head.index].with(|p| {
            // SAFETY: `known` (an Acquire load of `pushed`, under this lock) says this slot was
            // written and published; we hold the head lock, so nobody else takes it; we read it
            // exactly once.
            unsafe { p.read().assume_init() }
        });
        head.index += 1;
        head.count = (head.count + 1) & COUNT;
        Ok(value)
    }

    /// A block for the tail: a spare one, or a new one.
    fn take_block(&self) -> *mut Block<T> {
        match self.spare.lock().pop() {
            Some(block) => Box::into_raw(block),
            None => Box::into_raw(Block::new()),
        }
    }

    /// A block every message of which has been taken, and that no producer can reach.
    fn retire(&self, block: *mut Block<T>) {
        // SAFETY: `block` came from `Box::into_raw`, is unreachable by every other thread (module
        // docs), and all its slots were read; owning it again is sound.
        let block = unsafe { Box::from_raw(block) };
        block.next.with_mut(|p| {
            // SAFETY: we own the block.
            unsafe { *p = ptr::null_mut() }
        });
        let mut spare = self.spare.lock();
        if spare.len() < spare_blocks::<T>() {
            spare.push(block);
        } else {
            drop(spare);
            drop(block);
        }
    }

    #[inline]
    pub(crate) fn try_send(&self, value: T) -> Result<(), SendFail<T>> {
        self.push(value).map_err(SendFail::Disconnected)
    }

    /// Sends never wait on an unbounded list; the deadline is irrelevant.
    #[inline]
    pub(crate) fn send(&self, value: T, _deadline: Option<Instant>) -> Result<(), SendFail<T>> {
        self.push(value).map_err(SendFail::Disconnected)
    }

    #[inline]
    pub(crate) fn try_recv(&self) -> Result<T, RecvFail> {
        self.pop().map_err(|e| match e {
            Ok(_) => RecvFail::Empty,
            Err(()) => RecvFail::Disconnected,
        })
    }

    /// One receive attempt for an async receive: a message, `Err(())` if empty and
    /// disconnected, or the `pushed` value to re-check with [`recv_changed`](Self::recv_changed).
    pub(crate) fn recv_observe(&self) -> Attempt<Result<T, ()>, usize> {
        match self.pop() {
            Ok(v) => Attempt::Ready(Ok(v)),
            Err(Err(())) => Attempt::Ready(Err(())),
            Err(Ok(seen)) => Attempt::Wait(seen),
        }
    }

    /// Whether a receive could proceed now, without receiving (a `select`'s `ready`): a message
    /// is there or the list is disconnected, else the `pushed` value to re-check with
    /// [`recv_changed`](Self::recv_changed).
    pub(crate) fn recv_ready_observe(&self) -> Attempt<(), usize> {
        let head = self.head.lock();
        let pushed = self.pushed.load(Acquire);
        if pushed & COUNT != head.count || pushed & DISCONNECTED != 0 {
            Attempt::Ready(())
        } else {
            Attempt::Wait(pushed)
        }
    }

    /// W2 of an async receive: an RMW on the counter every push increments.
    pub(crate) fn recv_changed(&self, seen: usize) -> bool {
        self.pushed.fetch_add(0, AcqRel) != seen
    }

    /// The receivers' wait list.
    pub(crate) fn not_empty(&self) -> &WaitList {
        &self.not_empty
    }

    pub(crate) fn recv(&self, deadline: Option<Instant>) -> Result<T, RecvFail> {
        let done = block_until(
            &self.not_empty,
            deadline,
            || match self.pop() {
                Ok(v) => Attempt::Ready(Ok(v)),
                Err(Err(())) => Attempt::Ready(Err(RecvFail::Disconnected)),
                Err(Ok(seen)) => Attempt::Wait(seen),
            },
            // W2: an RMW on the counter every push increments.
            |&seen| self.pushed.fetch_add(0, AcqRel) != seen,
        );
        done.unwrap_or(Err(RecvFail::Timeout))
    }

    /// Marks the list disconnected (under the tail lock, so no push straddles it) and wakes every
    /// receiver. True for the call that did it.
    pub(crate) fn close(&self) -> bool {
        let tail = self.tail.lock();
        let before = self.pushed.fetch_or(DISCONNECTED, AcqRel);
        drop(tail);
        if before & DISCONNECTED != 0 {
            return false;
        }
        self.not_empty.notify_all();
        true
    }

    /// The last receiver is gone: disconnect and drop the buffered messages now.
    pub(crate) fn disconnect_receivers(&self) -> bool {
        let closed = self.close();
        while let Ok(v) = self.pop() {
            drop(v);
        }
        closed
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.pushed.load(Acquire) & DISCONNECTED != 0
    }

    pub(crate) fn len(&self) -> usize {
        let head = self.head.lock();
        (self.pushed.load(Acquire) & COUNT).wrapping_sub(head.count) & COUNT
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Drop for List<T> {
    fn drop(&mut self) {
        let head = self.head.lock();
        let mut remaining = (self.pushed.load(Relaxed) & COUNT).wrapping_sub(head.count) & COUNT;
        let mut block = head.block;
        let mut index = head.index;
        drop(head);
        while remaining > 0 {
            if index == BLOCK_CAP {
                // SAFETY: `&mut self`: no other thread exists; `block` is a live block of the
                // chain, owned by the list, and its `next` is set since a message follows it.
                let owned = unsafe { Box::from_raw(block) };
                block = owned.next.with(|p| {
                    // SAFETY: we own the block.
                    unsafe { *p }
                });
                index = 0;
            }
            // SAFETY: `block` is live (see above).
            let b = unsafe { &*block };
            b.slots[index].with_mut(|p| {
                // SAFETY: this slot holds a published, untaken message; dropped exactly once.
                unsafe { (*p).assume_init_drop() }
            });
            index += 1;
            remaining -= 1;
        }
        // The last block of the chain is the tail's; free it once. Spare blocks free themselves.
        // SAFETY: `block` is the last live block, owned by the list, not freed above.
        drop(unsafe { Box::from_raw(block) });
    }
}

impl<T> fmt::Debug for List<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("List")
            .field("len", &self.len())
            .field("disconnected", &self.is_closed())
            .finish()
    }
}
