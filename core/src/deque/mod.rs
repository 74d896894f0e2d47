//! A Chase-Lev work-stealing deque, with the C11 orderings of Lê, Pop, Cohen and Zappa Nardelli,
//! that never reads a slot racily.
//!
//! One [`Worker`] owns the deque: it pushes and pops at the *bottom* (LIFO), without contention
//! in the common case. Any number of [`Stealer`]s take from the *top* (the oldest task).
//!
//! # Examples
//!
//! ```
//! use berth::deque::{Steal, Worker};
//!
//! let w = Worker::new();
//! let s = w.stealer();
//! w.push(1);
//! w.push(2);
//! w.push(3);
//! assert_eq!(s.steal(), Steal::Success(1)); // thieves take the oldest
//! assert_eq!(w.pop(), Some(3)); // the owner the newest
//! assert_eq!(w.pop(), Some(2));
//! assert!(s.steal().is_empty());
//! ```
//!
//! # The algorithm
//!
//! David Chase and Yossi Lev, "Dynamic Circular Work-Stealing Deque", SPAA 2005, with the
//! orderings of Nhat Minh Lê, Antoniu Pop, Albert Cohen and Francesco Zappa Nardelli, "Correct and
//! Efficient Work-Stealing for Weak Memory Models", PPoPP 2013. Indices `top <= bottom` grow
//! forever (wrapping at `usize::MAX`; every comparison is on the wrapping difference); the
//! element with index `i` lives in slot `i mod capacity` of the current buffer.
//!
//! - **push** (owner): write slot `bottom`, then `bottom += 1` with `Release`.
//! - **pop** (owner): `bottom -= 1`; **the take fence** (`SeqCst`); read `top`. If `top` is
//!   below the new bottom, the element is the owner's alone. If they are equal it is the last
//!   element, and the owner races the thieves for it with a CAS on `top`.
//! - **steal** (thief): read `top`; **the steal fence** (`SeqCst`); read `bottom`; if
//!   `top < bottom`, CAS `top` from `t` to `t + 1`.
//!
//! The owner keeps its own copy of `bottom` (it is the only writer) and a lower bound of `top`
//! (the last value it read: `top` only grows). A push checks for room against the bound and
//! rereads `top` only when the bound says the buffer may be full, so in the common case it
//! stores `bottom` and reads nothing the thieves write; a pop that the bound shows empty
//! returns without touching shared memory.
//!
//! The two fences are what make "the owner sees the thief's claim, or the thief sees the owner's
//! decrement" true: without either, the owner can read a stale `top` while a thief reads a stale
//! `bottom`, and both take the same element (the mutants `deque_no_take_fence` and
//! `deque_no_steal_fence` remove one each; the loom models in `models/tests/loom_deque.rs` find
//! the schedule and report "an element was taken twice").
//!
//! # Asymmetric fences ([`Worker::new_asymmetric`])
//!
//! In a fork-join pool the owner pops at every join and thieves steal rarely, so the two
//! fences are paid very unevenly. An asymmetric deque moves the cost to the thieves: the take
//! fence becomes a compiler fence (the owner's `bottom` store and `top` load stay in program
//! order, but the CPU may still satisfy the load first), and the steal fence becomes
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which makes every other running thread of
//! the process execute a full barrier at some instruction boundary `p` while the call runs
//! (a sleeping thread is already at one), with everything the owner did before `p` visible to
//! the thief after the call, and everything the thief did before the call visible to the
//! owner after `p`. The element `x` can only be taken twice if the owner pops it without a CAS
//! (its `top` load read a value below `x`) while a thief claims it (it read `top = x` before
//! the call and then a `bottom` above `x`, that is, from before the owner's decrement). Where
//! is the owner's `p`? If before its `bottom` store, its `top` load comes after `p` and sees
//! `x` or later: it takes the last element with a CAS or finds the deque empty. If after the
//! store (whether before or after its `top` load), the thief's `bottom` load sees the decrement
//! or later. Either way no element is taken twice. The classic form of this argument is
//! asymmetric Dekker synchronisation (Dice, Huang and Yang, 2001; the Linux membarrier man
//! page). loom, shuttle and Miri cannot run the system call, so under them both halves are
//! `SeqCst` fences (`crate::sync::asymmetric`): the models check the symmetric algorithm, and
//! the asymmetric pair rests on this argument and on the real-thread suites (`deque_suite`'s
//! asymmetric scenarios, `pool_suite`), which is written down as a weak spot in `UNSAFE.md`.
//!
//! ## The handshake: most steals need no barrier
//!
//! A `membarrier` costs the thief a system call and interrupts every other running thread of
//! the process: on the 2-vCPU machine of the benchmarks, about 12 µs of CPU per call, most of
//! it sending and taking the inter-processor interrupt. What the thief needs is narrower: an
//! order between *its* `top` load and *this owner's* accesses. So it asks the owner first. It
//! takes a ticket (`requests`, an RMW with `Release`, after its `top` load), and polls
//! `answered` (`Acquire`) a few times. The owner, in every pop of an asymmetric deque, between
//! its `bottom` store and its `top` load, loads `requests` (`Acquire`, on the line the pop
//! touches anyway) and, if a request is new, stores it into `answered` (`Release`). A thief
//! whose ticket is answered goes on without a barrier; one that waited in vain (the owner is in
//! a long job, or descheduled) runs the `membarrier` as before.
//!
//! Why an answer is enough. Let the owner's pop `Q` be the one that answered the thief's ticket,
//! and suppose the owner pops `x` without a CAS (it read `top < x`) in some pop `P` while the
//! thief claims `x` (it read `top = x`, then a `bottom > x`). If `P` is `Q` or comes after it:
//! the thief's `top` load happens before its request, which `Q`'s `Acquire` load read, which is
//! before `P`'s `top` load, so by coherence `P` reads `top >= x`: it takes the last element with
//! a CAS or finds the deque empty. If `P` comes before `Q`: `P`'s `bottom` store happens before
//! `Q`'s answer, which the thief's `Acquire` read, which is before its `bottom` load, so the
//! thief reads `P`'s decrement (or a later `bottom`), at most `x`. Either way `x` is taken once.
//! (A batch steal asks again before each further element, from the `top` its own CAS wrote,
//! and ends the batch instead of running a barrier when no answer comes.) Unlike the barrier,
//! this is plain release/acquire, which loom checks: `Worker::handshake_only` is an asymmetric
//! deque whose owner has no fence at all and whose unanswered thieves return `Retry`, and the
//! `handshake_*` models in `models/tests/loom_deque.rs` run it (the mutant
//! `deque_handshake_relaxed`, which makes the owner's two accesses `Relaxed`, is caught there).
//! This is the idea of location-based fences (Ladan-Mozes, Lee and Vyukov, SPAA 2011) in its
//! simplest form: the rare side pays by waiting for the frequent side's next step.
//!
//! ## Fenced spells: an owner in long jobs fences for a while
//!
//! The handshake has a price when the owner runs long jobs between its pops (a pool whose
//! leaves take tens of microseconds): a thief waits for an answer that does not come, then
//! pays the barrier, and the job it wanted waits too. On the 2-vCPU machine that cost the
//! pool's coarse benchmarks 1-2% against rayon, whose deque has the papers' symmetric fences.
//! So a thief that waited in vain also leaves a hint (`timed_out`), and the owner, at its next
//! pop (which sees the thief's request), starts a *fenced spell*: it stores 1 into `fenced`
//! (`Release`) and runs the papers' `SeqCst` take fence in its next `FENCED_POPS` (4096) pops;
//! then it stores 0 and runs one more `SeqCst` fence. Every thief of an asymmetric deque now runs
//! its own `SeqCst` fence after its `top` load, then loads `fenced` (`Acquire`): 1, and it goes
//! on to its `bottom` load with no request; 0, and it asks as above. A spell costs the owner
//! about 4096 fences, about what one barrier costs the thief on that machine, so an owner that
//! pops often loses at most about as much as the barrier that started the spell cost (and
//! rarely starts one: its answers come in time); an owner in long jobs pops rarely, and its
//! thieves steal with a fence of their own, as from a symmetric deque.
//!
//! Why a thief that read 1 may skip the handshake. Take an owner's pop `P` that pops `x` without
//! a CAS while the thief claims `x`, as above, and say the thief's load of `fenced` read 1.
//! If `P` ran in a spell, `P` and the thief each have a `SeqCst` fence between their two
//! accesses: the papers' argument. If `P` came before the spell whose 1 the thief read, `P`'s
//! `bottom` store happens before that `Release` store, which the thief's `Acquire` load read
//! before its `bottom` load: the thief reads `P`'s decrement or a later `bottom`, and finds `x`
//! gone (or finds a newer element pushed at `x`, which it may take). If `P` came after that
//! spell ended: the owner stored 0 and then ran a fence `F` before `P`; the thief ran its fence
//! `T` before it read 1. If `F` precedes `T` in the single order of `SeqCst` fences, the thief's
//! load after `T` must see the 0 stored before `F` (or a later value: the 1 of a later spell,
//! which puts `P` before that spell, the previous case). If `T` precedes `F`, `P`'s `top` load
//! after `F` sees every claim that happened before `T`, including the one that made `top = x`,
//! so `P` reads `top >= x`. Each step is checked: the model `fenced_spell_ends_while_a_thief_steals`
//! and the mutants `deque_spell_start_relaxed` (the 1 stored `Relaxed`),
//! `deque_unfence_no_fence` (no fence after the 0) and `deque_spell_read_early` (the thief reads
//! `fenced` before its own fence) each of which loom catches taking an element twice.
//!
//! # Where berth departs from the papers: claim, then read
//!
//! In the papers a thief reads the slot *before* its CAS, because once `top` has moved the
//! owner may overwrite the slot. If the read and an overwrite overlap, the thief's CAS fails and
//! the value it read is discarded, but the read itself was a data race: undefined behaviour in
//! Rust's memory model for any `T` that is not an atomic (crossbeam-deque reads with a volatile
//! copy, and its Miri job runs with `-Zmiri-preemption-rate=0`).
//!
//! berth's thief claims first and reads after: the CAS on `top` makes index `t` its own, then it
//! reads the slot, then it stores `t + capacity` into the slot's *stamp* (`Release`). The owner
//! writes index `b` into a slot only if the stamp says the slot's previous element (`b -
//! capacity`) was read out (`Acquire`), or if that previous element never lived in this buffer;
//! otherwise it moves to a new buffer instead of waiting for the thief. (A thief that loaded
//! the buffer pointer before a growth claims and stamps its element in the *old* buffer; when
//! the owner laps that element's slot in the new buffer, it looks for the stamp in the buffer
//! the element was copied from as well. Until it did, every growth while thieves were busy
//! made the owner take a finished thief for a stalled one a lap later and grow again: the
//! capacity came to track the number of pushes ever made.) So a slot is never
//! written while a thief may still read it, and the value a thief reads is exactly the element
//! it claimed. The owner, which takes elements without a CAS in the common case, needs no stamp
//! for those: a slot it popped at index `b` is pushed again at index `b`, not `b + capacity`.
//! When it wins the last element with a CAS, it sets the stamp itself.
//!
//! The owner does not read a stamp on every push (that load sat on the push's critical path,
//! and cost the pool's finest joins about 15%). An index found writable stays writable while
//! the buffer is current, so a push checks up to 32 indices ahead at once and keeps them as a
//! *ready range*; the pushes inside it read nothing a thief writes (`Worker::make_ready`).
//!
//! # Buffers: growth and reclamation
//!
//! A push into a full buffer copies the live range into a buffer of twice the size and
//! publishes it with `Release`. So does a push into a slot whose previous element a thief has
//! claimed but not yet read, if the thief is still not done after a short wait (it was
//! descheduled between its CAS and its read). A thief loads the buffer pointer *after* reading a `bottom` that includes its
//! element, so the buffer it loads holds that element (written there, or copied there while the
//! element was still unclaimed: if it had been claimed before the copy, `top` has passed it and
//! the thief's CAS fails).
//!
//! A retired buffer may still be read by a thief that loaded its pointer before the swap, so it
//! is not freed at once: retired buffers are kept until the deque itself is dropped, that is,
//! until the last `Worker` and `Stealer` are gone and no thief can hold a pointer to one. Growth
//! always doubles, so the retired buffers together are smaller than the current one: the memory
//! kept is less than twice the largest buffer. That buffer is at most twice the larger of the
//! most elements the deque held at once and the most pushes the owner made while one thief sat
//! descheduled on a claimed element (each move for a stalled thief doubles the lap the owner
//! must run to meet the next one). The deque does not shrink. (An earlier version moved to a
//! buffer of the *same* size for a stalled thief; on an oversubscribed machine that kept a new
//! retired buffer per stall, without bound: 3 MB for a 32 KB deque in 20 s with four thieves.)

use crate::sync::atomic::{
    compiler_fence, fence, AtomicPtr, AtomicUsize,
    Ordering::{self, AcqRel, Acquire, Relaxed, Release, SeqCst},
};
use crate::sync::cell::UnsafeCell;
use crate::sync::{Arc, Mutex};
use crate::util::CachePadded;
use std::cell::Cell;
use std::fmt;
use std::iter::FromIterator;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// The first buffer's size (small under the models, so they exercise growth).
const MIN_CAP: usize = if crate::sync::MODEL { 2 } else { 64 };

/// How many indices a push that leaves the ready range checks ahead (see `Worker::make_ready`;
/// under the models two, so that they run a push that skips the checks).
const READY_SCAN: usize = if crate::sync::MODEL { 2 } else { 32 };

/// At most this many elements move in one `steal_batch_and_pop`.
const MAX_BATCH: usize = 32;

/// How many times a thief of an asymmetric deque polls for the owner's answer to its request
/// before it falls back to the process-wide barrier (a few microseconds of spinning; under the
/// models each poll is a yield, so few).
const ANSWER_POLLS: usize = if crate::sync::MODEL { 1 } else { 16 };

/// How many pops an asymmetric deque's owner fences after a thief waited in vain for an answer
/// (see "Fenced spells" in the module docs). Under the models one, and under Miri 16, so that
/// their short runs reach the end of a spell too.
const FENCED_POPS: usize = if crate::sync::MODEL {
    1
} else if cfg!(miri) {
    16
} else {
    4096
};

/// Which fence pair orders the owner's `bottom` store before its `top` load against the thieves'
/// `top` load before their `bottom` load (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fences {
    /// A `SeqCst` fence on each side, as in the papers ([`Worker::new`]).
    Symmetric,
    /// A compiler fence in the owner's pop; a thief asks the owner to answer, and falls back to
    /// `membarrier` (the heavy half of `crate::sync::asymmetric`) if no answer comes
    /// ([`Worker::new_asymmetric`]; only where the system call is registered, else `Symmetric`).
    Asymmetric,
    /// As `Asymmetric`, but a thief that gets no answer gives up with `Retry` instead of running
    /// a barrier: the handshake alone, for the loom models, which cannot run the system call
    /// ([`Worker::handshake_only`]). Safe everywhere; a thief of an owner that stopped popping
    /// retries forever.
    HandshakeOnly,
}

/// A power-of-two array of slots: the elements, and beside them (in an array of their own) each
/// slot's stamp, the next index it may be written with.
///
/// The stamps live apart from the elements because a thief writes the stamp of the slot it just
/// read while the owner writes the next slots: with a stamp beside each element, a thief that
/// keeps pace with the owner (taking each element right after its push) took the owner's line
/// back and forth once more per element. Apart, the element lines are only read by thieves, and
/// the owner reads the stamp lines once per ready range (see `Worker::make_ready`).
struct Buffer<T> {
    values: Box<[UnsafeCell<MaybeUninit<T>>]>,
    stamps: Box<[AtomicUsize]>,
    /// Indices below `base` were claimed before this buffer became current: no thief reads
    /// them from it, so the slots they map to need no stamp check on their first write.
    base: usize,
    /// Indices in `base..copied_end` were copied here from `older` (the buffer this one
    /// replaced; null for the first): a thief may have claimed one of them through `older`,
    /// and then released it there (see [`released_in_older`](Self::released_in_older)).
    copied_end: usize,
    older: *const Buffer<T>,
}

impl<T> Buffer<T> {
    fn alloc(
        cap: usize,
        base: usize,
        copied_end: usize,
        older: *const Buffer<T>,
    ) -> *mut Buffer<T> {
        debug_assert!(cap.is_power_of_two());
        let values = (0..cap)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        // Never equal to an index written after a full lap (those are >= base + cap).
        let stamps = (0..cap).map(|_| AtomicUsize::new(base)).collect();
        Box::into_raw(Box::new(Buffer {
            values,
            stamps,
            base,
            copied_end,
            older,
        }))
    }

    #[inline]
    fn cap(&self) -> usize {
        self.values.len()
    }

    /// The cell of the slot that holds index `index`.
    #[inline]
    fn value(&self, index: usize) -> &UnsafeCell<MaybeUninit<T>> {
        &self.values[index & (self.values.len() - 1)]
    }

    /// The stamp of the slot that holds index `index`.
    #[inline]
    fn stamp(&self, index: usize) -> &AtomicUsize {
        &self.stamps[index & (self.stamps.len() - 1)]
    }

    /// True if the owner may write index `b` into its slot: the slot's previous element
    /// (`b - cap`) never lived in this buffer, or was read out (its stamp is `b`).
    #[inline]
    fn writable(&self, b: usize) -> bool {
        let prev = b.wrapping_sub(self.cap());
        // MUTANT deque_skip_stamp: trust `top` alone, as the papers do (whose thieves read
        // before they claim).
        if cfg!(berth_mutant = "deque_skip_stamp") {
            return true;
        }
        (prev.wrapping_sub(self.base) as isize) < 0
            || self.stamp(b).load(Acquire) == b
            || self.released_in_older(prev)
    }

    /// True if index `i`, which was copied into this buffer from an older one, was claimed
    /// through an older buffer and released there: then no thief reads it from this one.
    ///
    /// A thief claims an index through the buffer it loaded, which may predate a growth that
    /// copied the index on; it releases the index by stamping *that* buffer. Without this
    /// check the owner, lapping the index in the new buffer, would find the new stamp unset
    /// forever and take a finished thief for a stalled one (and grow for it, once per lap).
    /// Each index is claimed once (when `top` passes it), and the stamp `i + cap` is stored
    /// only by the release of index `i`, so finding it in any buffer proves the claimant done.
    #[cold]
    fn released_in_older(&self, i: usize) -> bool {
        // MUTANT deque_trust_copied: assume that an element copied in from an older buffer was
        // claimed through that buffer (true when the thief loaded it before the growth, false
        // when it loaded this one).
        if cfg!(berth_mutant = "deque_trust_copied") {
            return (i.wrapping_sub(self.copied_end) as isize) < 0;
        }
        let mut buf = self;
        // `i` lived in `buf.older` only if it was copied from there (`i < buf.copied_end`;
        // `i >= buf.base` holds along the chain: every base is at most this buffer's, and
        // the caller checked `i >= self.base`).
        while (i.wrapping_sub(buf.copied_end) as isize) < 0 && !buf.older.is_null() {
            // SAFETY: buffers are freed only when the deque is dropped, and the owner (our
            // caller) keeps it alive; `older` pointers are set once, at allocation.
            let older = unsafe { &*buf.older };
            if older.stamp(i).load(Acquire) == i.wrapping_add(older.cap()) {
                return true;
            }
            buf = older;
        }
        false
    }

    /// Writes index `b`. The caller has checked [`writable`](Self::writable) and is the owner.
    #[inline]
    unsafe fn write(&self, b: usize, value: T) {
        self.value(b).with_mut(|p| {
            // SAFETY: the caller is the owner (the only writer) and checked that no thief can
            // still read this slot (`writable`); no thief claims index `b` before the `bottom`
            // store that follows.
            unsafe { p.write(MaybeUninit::new(value)) }
        })
    }

    /// Reads index `i` out. The caller owns index `i` (popped it, or claimed it with a CAS).
    #[inline]
    unsafe fn read(&self, i: usize) -> T {
        self.value(i).with(|p| {
            // SAFETY: the caller owns index `i`, which was written into this buffer (or copied
            // into it while unclaimed) before the `bottom` store the caller synchronised with;
            // the slot is not rewritten until the stamp says `i` was read (see `writable`).
            unsafe { p.read().assume_init() }
        })
    }
}

/// What the owner and the thieves share.
///
/// `top` and `bottom` share a cache line on purpose (`repr(C)`: they come first, and
/// `buffer`'s alignment keeps everything else off their line). Every push, pop and steal reads
/// both and writes one, so padding them apart makes each meeting of the owner and a thief cost
/// two line transfers instead of one. With them apart, the deque benchmark's rounds took 1.3-1.4
/// times as long (one to four thieves; crossbeam-deque keeps them together too).
#[repr(C)]
struct Inner<T> {
    top: AtomicUsize,
    bottom: AtomicUsize,
    /// Asymmetric deques: how many answers thieves have asked the owner for (a thief takes a
    /// ticket with an RMW). On the line the owner's pop touches anyway, so checking it costs
    /// the owner one load of a line it holds.
    requests: AtomicUsize,
    /// Asymmetric deques: 1 while the owner fences its pops (a fenced spell), else 0. Thieves
    /// read it after their own fence; only the owner stores it.
    fenced: AtomicUsize,
    /// Asymmetric deques: set by a thief that asked and got no answer in time, cleared by the
    /// owner when it starts a fenced spell (a hint: no argument rests on it).
    timed_out: AtomicUsize,
    /// Which fence pair; fixed at construction, and on the line every operation reads anyway.
    fences: Fences,
    buffer: CachePadded<AtomicPtr<Buffer<T>>>,
    /// Asymmetric deques: the last request the owner answered (thieves poll it; the owner
    /// writes it only when a request is pending).
    answered: CachePadded<AtomicUsize>,
    /// Buffers replaced by growth: freed when the deque is dropped (see the module docs).
    retired: Mutex<Vec<*mut Buffer<T>>>,
}

// SAFETY: elements move between threads (`T: Send`); the raw buffer pointers are owned by the
// deque and freed only in `Drop`, when no handle is left.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: as above; all shared access goes through atomics and the claim protocol.
unsafe impl<T: Send> Sync for Inner<T> {}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        let top = self.top.load(Relaxed);
        let bottom = self.bottom.load(Relaxed);
        let buffer = self.buffer.load(Relaxed);
        // SAFETY: no handle is left, so nothing else reads the buffers; the current buffer holds
        // the live elements `top..bottom` (each written or copied there, none read out), and
        // every buffer came from `Buffer::alloc` and is freed once.
        unsafe {
            let mut i = top;
            while (bottom.wrapping_sub(i) as isize) > 0 {
                drop((*buffer).read(i));
                i = i.wrapping_add(1);
            }
            drop(Box::from_raw(buffer));
            for old in self.retired.lock().drain(..) {
                drop(Box::from_raw(old));
            }
        }
    }
}

/// The owner's end of a work-stealing deque: LIFO `push` and `pop`.
///
/// `Send` but not `Sync`: one thread at a time owns it. Thieves use [`Stealer`]s.
///
/// ```compile_fail
/// fn shared<W: Sync>(_: &W) {}
/// shared(&berth::deque::Worker::<u32>::new());
/// ```
///
/// # Examples
///
/// ```
/// use berth::deque::Worker;
/// use std::thread;
///
/// let w = Worker::new();
/// for i in 0..4 {
///     w.push(i);
/// }
/// // Not Sync, but Send: the owner can hand the deque to another thread.
/// let owner = thread::spawn(move || std::iter::from_fn(|| w.pop()).collect::<Vec<_>>());
/// assert_eq!(owner.join().unwrap(), [3, 2, 1, 0]); // LIFO
/// ```
pub struct Worker<T> {
    inner: Arc<Inner<T>>,
    /// The current buffer (only the owner replaces it, so it caches it).
    buffer: Cell<*mut Buffer<T>>,
    /// `bottom` (only the owner stores it, so it caches it).
    bottom: Cell<usize>,
    /// A value `top` had (it only grows, so this is a lower bound): a push that finds room
    /// against it has room, without reading the line the thieves write.
    top_bound: Cell<usize>,
    /// The indices `ready_start..ready_start + ready_len` may be pushed into the current
    /// buffer without a check: each was found to have room (below a `top` seen, plus the
    /// capacity) and a writable slot (see [`Worker::make_ready`]). Both facts, once true of an
    /// index, stay true for as long as the buffer is current.
    ready_start: Cell<usize>,
    ready_len: Cell<usize>,
    /// The last request value stored into `answered` (only the owner stores it).
    answered: Cell<usize>,
    /// What every pop of an asymmetric deque compares `requests` with: `answered`, or during a
    /// fenced spell a value `requests` cannot take then (see `answer_thieves`).
    pop_check: Cell<usize>,
    /// Asymmetric deques: the pops left in the current fenced spell (0: none; the owner's copy
    /// of `Inner::fenced` is `fenced_pops_left > 0`).
    fenced_pops_left: Cell<usize>,
    /// How many fenced spells this owner has started (for the tests).
    spells: Cell<usize>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: the worker may move to another thread with its elements (`T: Send`); `Cell` keeps it
// from being shared.
unsafe impl<T: Send> Send for Worker<T> {}

/// A thief's handle: takes the oldest elements of a [`Worker`]'s deque.
///
/// `Clone`, `Send` and `Sync`.
///
/// # Examples
///
/// ```
/// use berth::deque::{Steal, Worker};
/// use std::thread;
///
/// let w = Worker::new();
/// for i in 0..100u64 {
///     w.push(i);
/// }
/// let thieves: Vec<_> = (0..2)
///     .map(|_| {
///         let s = w.stealer();
///         thread::spawn(move || {
///             let mut sum = 0;
///             loop {
///                 match s.steal() {
///                     Steal::Success(v) => sum += v,
///                     Steal::Retry => continue,
///                     Steal::Empty => break sum,
///                 }
///             }
///         })
///     })
///     .collect();
/// let mut total: u64 = std::iter::from_fn(|| w.pop()).sum();
/// total += thieves.into_iter().map(|t| t.join().unwrap()).sum::<u64>();
/// assert_eq!(total, (0..100).sum()); // each element taken exactly once
/// ```
pub struct Stealer<T> {
    inner: Arc<Inner<T>>,
}

// SAFETY: a stealer only claims elements with a CAS and reads the ones it claimed.
unsafe impl<T: Send> Send for Stealer<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Stealer<T> {}

/// The outcome of a steal.
///
/// # Examples
///
/// ```
/// use berth::deque::{Steal, Worker};
///
/// let w = Worker::new();
/// let s = w.stealer();
/// assert_eq!(s.steal(), Steal::<u8>::Empty);
/// w.push(1);
/// assert_eq!(s.steal(), Steal::Success(1));
/// // With several thieves, `Retry` means "lost a race; try again".
/// let next = || loop {
///     match s.steal() {
///         Steal::Retry => continue,
///         other => break other.success(),
///     }
/// };
/// assert_eq!(next(), None);
/// ```
#[must_use]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Steal<T> {
    /// The deque was empty.
    Empty,
    /// An element was taken.
    Success(T),
    /// Lost a race with another thread; trying again may succeed.
    Retry,
}

impl<T> Worker<T> {
    /// An empty deque.
    ///
    /// # Examples
    ///
    /// ```
    /// let w = berth::deque::Worker::<u64>::new();
    /// assert!(w.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_start_index(0)
    }

    /// An empty deque whose owner pays less and whose thieves pay more: for owners that pop far
    /// more often than thieves steal, as in a fork-join pool (berth's pool uses it).
    ///
    /// The owner's take fence becomes a compiler fence, and each `pop` answers the thieves that
    /// asked since its last one (a load of a word on a line the pop holds anyway). A thief asks
    /// and polls briefly for the answer; if the owner does not pop meanwhile (it runs a long
    /// job, or is descheduled), it runs a process-wide barrier instead
    /// (`membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` on Linux): a system call that interrupts
    /// every other running thread of the process, microseconds where a fence costs nanoseconds.
    /// A steal that sees an empty deque returns before either (and may then miss an element
    /// pushed a moment earlier, which a steal with the fence would also have missed a moment
    /// sooner). A batch steal asks again before each further element and ends the batch when
    /// no answer comes. A thief that waited in vain asks the owner to fence its next 4096 pops
    /// (a *fenced spell*), during which thieves steal with a fence of their own and no answer,
    /// as from [`new`](Self::new)'s deque: an owner that runs long jobs between its pops then
    /// costs its thieves no more barriers. Where the system call is unavailable (other systems, old kernels, and
    /// under loom, shuttle and Miri) this is the symmetric deque of [`new`](Self::new). The
    /// module docs give the argument that every element is still taken once.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::deque::{Steal, Worker};
    ///
    /// let w = Worker::new_asymmetric();
    /// let s = w.stealer();
    /// w.push(1);
    /// w.push(2);
    /// assert_eq!(w.pop(), Some(2)); // no fence instruction on this path
    /// // The owner is not popping now, so no answer comes: a process-wide barrier.
    /// assert_eq!(s.steal(), Steal::Success(1));
    /// ```
    pub fn new_asymmetric() -> Self {
        Self::with_fences(0, Fences::Asymmetric)
    }

    /// An empty deque whose indices start at `start` (tests and the fuzzer start them just
    /// below `usize::MAX` to cover the wrap-around).
    #[doc(hidden)]
    pub fn with_start_index(start: usize) -> Self {
        Self::with_fences(start, Fences::Symmetric)
    }

    /// As [`with_start_index`](Self::with_start_index), with asymmetric fences if asked
    /// ([`new_asymmetric`](Self::new_asymmetric)).
    #[doc(hidden)]
    pub fn with_start_index_and_fences(start: usize, asymmetric: bool) -> Self {
        let fences = if asymmetric {
            Fences::Asymmetric
        } else {
            Fences::Symmetric
        };
        Self::with_fences(start, fences)
    }

    /// How many fenced spells the owner of an asymmetric deque has started (module docs,
    /// "Fenced spells"), so that tests can tell that their schedules reached them.
    #[doc(hidden)]
    pub fn fenced_spells_started(&self) -> usize {
        self.spells.get()
    }

    /// An asymmetric deque without the barrier fallback, for the loom models: the owner's pop
    /// has no fence at all, and a thief that the owner does not answer within a few polls
    /// returns `Retry` instead of running the process-wide barrier. Every element is still taken
    /// at most once (that is what the models check); but a thief of an owner that stopped
    /// popping gets `Retry` forever.
    #[doc(hidden)]
    pub fn handshake_only(start: usize) -> Self {
        Self::with_fences(start, Fences::HandshakeOnly)
    }

    fn with_fences(start: usize, mut fences: Fences) -> Self {
        if fences == Fences::Asymmetric {
            // The light half is a compiler fence only if the heavy half is the system call;
            // where that is unavailable (and under the models and Miri) the deque is symmetric.
            crate::sync::asymmetric::prepare();
            if !crate::sync::asymmetric::is_asymmetric() {
                fences = Fences::Symmetric;
            }
        }
        let buffer = Buffer::alloc(MIN_CAP, start, start, std::ptr::null());
        Worker {
            inner: Arc::new(Inner {
                top: AtomicUsize::new(start),
                bottom: AtomicUsize::new(start),
                requests: AtomicUsize::new(0),
                fenced: AtomicUsize::new(0),
                timed_out: AtomicUsize::new(0),
                fences,
                buffer: CachePadded::new(AtomicPtr::new(buffer)),
                answered: CachePadded::new(AtomicUsize::new(0)),
                retired: Mutex::new(Vec::new()),
            }),
            buffer: Cell::new(buffer),
            bottom: Cell::new(start),
            top_bound: Cell::new(start),
            ready_start: Cell::new(start),
            ready_len: Cell::new(0),
            answered: Cell::new(0),
            pop_check: Cell::new(0),
            fenced_pops_left: Cell::new(0),
            spells: Cell::new(0),
            _not_sync: PhantomData,
        }
    }

    /// A new thief's handle on this deque.
    ///
    /// # Examples
    ///
    /// ```
    /// let w = berth::deque::Worker::new();
    /// let s = w.stealer();
    /// w.push('a');
    /// assert_eq!(s.steal().success(), Some('a'));
    /// ```
    pub fn stealer(&self) -> Stealer<T> {
        Stealer {
            inner: Arc::clone(&self.inner),
        }
    }

    #[inline]
    fn buf(&self) -> &Buffer<T> {
        // SAFETY: the current buffer is freed only when the deque is dropped, and `self` keeps
        // the deque alive.
        unsafe { &*self.buffer.get() }
    }

    /// Pushes `value` at the bottom (the owner's end).
    ///
    /// # Examples
    ///
    /// ```
    /// let w = berth::deque::Worker::new();
    /// w.push(1);
    /// w.push(2);
    /// assert_eq!(w.pop(), Some(2));
    /// ```
    #[inline]
    pub fn push(&self, value: T) {
        let b = self.bottom.get();
        // In the common case a push reads only the owner's own fields: no line a thief
        // writes, not even the slot's stamp (a load miss there would stall the owner; the
        // stores below may miss without stalling it).
        let buf = if b.wrapping_sub(self.ready_start.get()) < self.ready_len.get() {
            self.buf()
        } else {
            self.make_ready(b)
        };
        // SAFETY: we are the owner, and `b` is in the ready range of the current buffer `buf`:
        // it has room, and `buf.writable(b)` held when it joined the range (see `make_ready`).
        unsafe { buf.write(b, value) };
        // Release: a thief that reads this bottom (or a later one) sees the element.
        self.inner.bottom.store(b.wrapping_add(1), Release);
        self.bottom.set(b.wrapping_add(1));
    }

    /// The slow path of `push`: `b` is outside the ready range. Makes room for `b` if needed
    /// (`make_room`), then checks up to `READY_SCAN` indices from `b` on and makes them the
    /// ready range (joined to the old one where the two meet), so that the pushes that follow
    /// skip the checks.
    ///
    /// Why a checked index stays pushable while the buffer is current: room, because `b` is
    /// below `t + cap` for a `t` that `top` had, and `top` only grows; a writable slot, because
    /// `writable(b)` says that the slot's previous element, `b - cap`, was read out (or never
    /// lived in this buffer), which no later event undoes. If a thief claims `b` itself after
    /// it is pushed, `bottom` stays above `b` for good (a pop that finds `top` past its index
    /// puts `bottom` back), so `b` is never pushed into this buffer again. A growth replaces the
    /// buffer and empties the range.
    #[cold]
    fn make_ready(&self, b: usize) -> &Buffer<T> {
        let mut buf = self.buf();
        let has_room = |buf: &Buffer<T>, i: usize| {
            (i.wrapping_sub(self.top_bound.get()) as isize) < buf.cap() as isize
        };
        if !has_room(buf, b) || !buf.writable(b) {
            buf = self.make_room(b); // a growth empties the ready range
        }
        let mut n = 1;
        while n < READY_SCAN && has_room(buf, b.wrapping_add(n)) && buf.writable(b.wrapping_add(n))
        {
            n += 1;
        }
        // MUTANT deque_ready_overreach: the range takes in one index more than was checked.
        if cfg!(berth_mutant = "deque_ready_overreach") {
            n += 1;
        }
        let (start, len) = (self.ready_start.get(), self.ready_len.get());
        if len > 0 && b.wrapping_sub(start) <= len {
            // `b` is at the old range's end (a push past it): extend it, keeping only its last
            // `cap` indices (leaving an index out is always safe: it is checked again when it
            // is pushed).
            let len = b.wrapping_sub(start) + n;
            let keep = len.min(buf.cap());
            self.ready_start.set(start.wrapping_add(len - keep));
            self.ready_len.set(keep);
        } else if len > 0 && start.wrapping_sub(b) <= n {
            // The old range starts within or just after the new one (a push below it).
            self.ready_start.set(b);
            self.ready_len
                .set(n.max(start.wrapping_sub(b) + len).min(buf.cap()));
        } else {
            self.ready_start.set(b);
            self.ready_len.set(n);
        }
        buf
    }

    /// Makes room for index `b`: the buffer is full, or a thief that claimed the slot's previous
    /// element has not read it yet. In the second case, wait a moment for the thief (it is
    /// between a CAS and one read); if it is still not done (descheduled), move to a buffer of
    /// twice the size. Doubling, not the same size, is what bounds the memory: a bigger buffer
    /// takes longer to lap, so stalled thieves trigger fewer and fewer moves (see the module
    /// docs).
    #[cold]
    fn make_room(&self, b: usize) -> &Buffer<T> {
        let buf = self.buf();
        let t = self.inner.top.load(Acquire);
        self.top_bound.set(t);
        let len = b.wrapping_sub(t) as isize;
        if len < buf.cap() as isize {
            if buf.writable(b) {
                return buf; // only the bound on `top` was stale
            }
            let mut backoff = crate::park::Backoff::new();
            while !backoff.is_completed() {
                backoff.snooze();
                if buf.writable(b) {
                    return buf;
                }
            }
        }
        self.grow(t, b, 2 * buf.cap())
    }

    /// Moves the live elements `t..b` into a new buffer of `cap` slots and publishes it.
    #[cold]
    fn grow(&self, t: usize, b: usize, cap: usize) -> &Buffer<T> {
        let old = self.buf();
        let new = Buffer::alloc(cap, t, b, old);
        let mut i = t;
        while i != b {
            old.value(i).with(|src| {
                // SAFETY: index `i` is live (between the top we read and our bottom); a thief
                // may claim and read it concurrently, but nobody writes it (we are the only
                // writer). The copy in the new buffer is dead if a thief has claimed `i`:
                // `top` is past it, so nobody reads it from the new buffer.
                // (*new) is ours alone until published below.
                unsafe {
                    (*new).value(i).with_mut(|dst| {
                        std::ptr::copy_nonoverlapping(src, dst, 1);
                    })
                }
            });
            i = i.wrapping_add(1);
        }
        self.ready_len.set(0); // the range is about the old buffer
        let old_ptr = self.buffer.replace(new);
        self.inner.buffer.store(new, Release);
        self.inner.retired.lock().push(old_ptr);
        self.buf()
    }

    /// Pops the element at the bottom (the most recently pushed), if any.
    ///
    /// # Examples
    ///
    /// ```
    /// let w = berth::deque::Worker::new();
    /// assert_eq!(w.pop(), None::<u8>);
    /// w.push(7);
    /// assert_eq!(w.pop(), Some(7));
    /// ```
    #[inline]
    pub fn pop(&self) -> Option<T> {
        if (self.bottom.get().wrapping_sub(self.top_bound.get()) as isize) <= 0 {
            return None; // `top` is at least the bound: empty, without touching shared lines
        }
        let b = self.bottom.get().wrapping_sub(1);
        // Release (not the papers' relaxed): a thief that reads this bottom must also see every
        // element below it (C++20 no longer counts later relaxed stores of the same thread in
        // the push's release sequence).
        self.inner.bottom.store(b, Release);
        // THE TAKE FENCE: orders our bottom store before our top load against the thieves'
        // fences (see the module docs). MUTANT deque_no_take_fence removes it.
        #[cfg(not(berth_mutant = "deque_no_take_fence"))]
        if self.inner.fences == Fences::Symmetric {
            fence(SeqCst);
        } else {
            // Asymmetric: only the compiler is kept from reordering; the CPU's reordering is
            // the thieves' to undo, by the handshake or by the process-wide barrier (or, in a
            // fenced spell, `answer_thieves` runs the papers' fence).
            compiler_fence(SeqCst);
            self.answer_thieves();
        }
        let t = self.inner.top.load(Relaxed);
        self.top_bound.set(t);
        let len = b.wrapping_sub(t) as isize;
        if len < 0 {
            // Empty: undo the decrement.
            self.inner.bottom.store(b.wrapping_add(1), Release);
            return None;
        }
        let buf = self.buf();
        if len > 0 {
            self.bottom.set(b);
            // SAFETY: `top < b` after the fence: no thief can claim index `b` (the fences make
            // any thief that claims after this point see our smaller bottom). It is ours.
            return Some(unsafe { buf.read(b) });
        }
        // The last element: race the thieves for it.
        let won = self
            .inner
            .top
            .compare_exchange(t, t.wrapping_add(1), SeqCst, Relaxed)
            .is_ok();
        self.inner.bottom.store(b.wrapping_add(1), Release);
        if !won {
            return None;
        }
        // SAFETY: our CAS claimed index `b`.
        let value = unsafe { buf.read(b) };
        // The slot's next write is index `b + cap` (top has passed `b`).
        buf.stamp(b).store(b.wrapping_add(buf.cap()), Relaxed);
        Some(value)
    }

    /// An asymmetric deque's owner, between its `bottom` store and its `top` load in `pop`:
    /// answers the thieves that asked since its last answer (see "The handshake" in the module
    /// docs), and fences if in a fenced spell. In the common case one load of a line `pop`
    /// holds anyway, and one compare: during a spell `pop_check` holds a value that `requests`
    /// cannot take, so every pop of the spell goes to `answer_slow`.
    #[inline]
    fn answer_thieves(&self) {
        let r = self.inner.requests.load(handshake_orderings().0);
        if r != self.pop_check.get() {
            self.answer_slow(r);
        }
    }

    /// A new request (`r`), or a pop of a fenced spell.
    #[cold]
    fn answer_slow(&self, r: usize) {
        let in_spell = self.fenced_pops_left.get() > 0;
        if in_spell {
            // The papers' take fence: a thief that reads the spell's flag needs no answer.
            fence(SeqCst);
        }
        if r != self.answered.get() {
            self.answered.set(r);
            // Release: every `bottom` store of ours so far is visible to a thief that sees this.
            self.inner.answered.store(r, handshake_orderings().1);
        }
        if in_spell {
            self.count_fenced_pop();
        } else if self.inner.timed_out.load(Relaxed) != 0 {
            self.start_fenced_spell();
        } else {
            self.pop_check.set(r);
        }
    }

    /// A thief waited in vain for an answer: this owner runs long jobs between its pops (or
    /// was descheduled). Fence the next `FENCED_POPS` pops, so that thieves need no answer
    /// meanwhile. Called between this pop's `bottom` store and its `top` load.
    #[cold]
    fn start_fenced_spell(&self) {
        self.inner.timed_out.store(0, Relaxed);
        self.fenced_pops_left.set(FENCED_POPS);
        self.spells.set(self.spells.get() + 1);
        // `requests` would have to advance by half its range within the spell to reach this.
        self.pop_check
            .set(self.answered.get().wrapping_add(usize::MAX / 2 + 1));
        // Release, after our `bottom` store: a thief that reads 1 (Acquire, before its own
        // `bottom` load) sees that store and every earlier one, so no unfenced pop of ours
        // before this point can hand it a stale `bottom` (see "Fenced spells"). MUTANT
        // deque_spell_start_relaxed makes it Relaxed.
        let start = if cfg!(berth_mutant = "deque_spell_start_relaxed") {
            Relaxed
        } else {
            Release
        };
        self.inner.fenced.store(1, start);
    }

    /// One fenced pop done; after the spell's last one, leave it: clear the flag, then a
    /// `SeqCst` fence before any unfenced pop. A thief that still reads 1 after its own fence
    /// has its fence ordered before ours, so our later `top` loads see every claim it saw (see
    /// "Fenced spells"). MUTANT deque_unfence_no_fence leaves the fence out.
    fn count_fenced_pop(&self) {
        let left = self.fenced_pops_left.get() - 1;
        self.fenced_pops_left.set(left);
        if left == 0 {
            self.pop_check.set(self.answered.get());
            self.inner.fenced.store(0, Relaxed);
            #[cfg(not(berth_mutant = "deque_unfence_no_fence"))]
            fence(SeqCst);
        }
    }

    /// The number of elements (a snapshot: thieves may take some meanwhile).
    ///
    /// # Examples
    ///
    /// ```
    /// let w = berth::deque::Worker::new();
    /// w.push('a');
    /// w.push('b');
    /// assert_eq!(w.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        len(&self.inner)
    }

    /// True if the deque holds no element (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let w = berth::deque::Worker::new();
    /// assert!(w.is_empty());
    /// w.push(1);
    /// assert!(!w.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Default for Worker<T> {
    fn default() -> Self {
        Self::new()
    }
}

fn len<T>(inner: &Inner<T>) -> usize {
    let t = inner.top.load(Acquire);
    let b = inner.bottom.load(Acquire);
    (b.wrapping_sub(t) as isize).max(0) as usize
}

impl<T> Stealer<T> {
    /// Takes the element at the top (the oldest).
    ///
    /// `Retry` means another thread took it first (or took the last element in a race with the
    /// owner); the deque may hold more.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::deque::{Steal, Worker};
    ///
    /// let w = Worker::new();
    /// w.push(1);
    /// w.push(2);
    /// let s = w.stealer();
    /// assert_eq!(s.steal(), Steal::Success(1));
    /// ```
    pub fn steal(&self) -> Steal<T> {
        let inner = &*self.inner;
        if inner.fences != Fences::Symmetric && looks_empty(inner) {
            return Steal::Empty; // not worth a handshake or a process-wide barrier
        }
        let t = inner.top.load(Acquire);
        // THE STEAL FENCE: orders our top load before our bottom load against the owner's
        // take fence. MUTANT deque_no_steal_fence removes it.
        #[cfg(not(berth_mutant = "deque_no_steal_fence"))]
        if !steal_fence(inner, true) {
            return Steal::Retry;
        }
        let b = inner.bottom.load(Acquire);
        if (b.wrapping_sub(t) as isize) <= 0 {
            return Steal::Empty;
        }
        // After reading a bottom that includes index `t`: this buffer holds it.
        let buf = inner.buffer.load(Acquire);
        if inner
            .top
            .compare_exchange(t, t.wrapping_add(1), SeqCst, Relaxed)
            .is_err()
        {
            return Steal::Retry;
        }
        // SAFETY: `buf` lives until the deque is dropped (we hold it); our CAS claimed `t`.
        Steal::Success(unsafe { take_claimed(&*buf, t) })
    }

    /// Steals about half of the elements (at most 32), moves all but one into `dest`, and
    /// returns that one.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::deque::Worker;
    ///
    /// let victim = Worker::new();
    /// for i in 0..8 {
    ///     victim.push(i);
    /// }
    /// let mine = Worker::new();
    /// let first = victim.stealer().steal_batch_and_pop(&mine).success();
    /// assert_eq!(first, Some(0));
    /// assert_eq!(mine.len(), 3);
    /// ```
    pub fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        if Arc::ptr_eq(&self.inner, &dest.inner) {
            // Stealing from ourselves: just pop.
            return match dest.pop() {
                Some(v) => Steal::Success(v),
                None => Steal::Empty,
            };
        }
        let inner = &*self.inner;
        if inner.fences != Fences::Symmetric && looks_empty(inner) {
            return Steal::Empty;
        }
        let mut t = inner.top.load(Acquire);
        #[cfg(not(berth_mutant = "deque_no_steal_fence"))]
        if !steal_fence(inner, true) {
            return Steal::Retry;
        }
        let b = inner.bottom.load(Acquire);
        let len = b.wrapping_sub(t) as isize;
        if len <= 0 {
            return Steal::Empty;
        }
        let batch = (len as usize).div_ceil(2).min(MAX_BATCH);
        // The owner pops from the bottom concurrently, so elements are claimed one CAS at a
        // time, each after a fresh fence and bottom check (a single CAS of `top` by `batch`
        // could overlap an element the owner popped without a CAS), and each read from the
        // buffer loaded after that check: the owner may have popped index `t` (while `top` was
        // still below it) and pushed it again into a newer buffer.
        let mut first = None;
        for i in 0..batch {
            if i > 0 {
                // Asymmetric: a further element only if the owner answers (no barrier per
                // element; the batch ends instead).
                #[cfg(not(berth_mutant = "deque_no_steal_fence"))]
                if !steal_fence(inner, false) {
                    break;
                }
                let b = inner.bottom.load(Acquire);
                if (b.wrapping_sub(t) as isize) <= 0 {
                    break;
                }
            }
            let buf = inner.buffer.load(Acquire);
            if inner
                .top
                .compare_exchange(t, t.wrapping_add(1), SeqCst, Relaxed)
                .is_err()
            {
                break;
            }
            // SAFETY: as in `steal`: our CAS claimed `t`, and `buf`, loaded after a bottom above
            // `t`, holds its latest value (written or copied there while unclaimed; once `top`
            // is `t` the owner can take `t` only with a CAS, which ours beat).
            let value = unsafe { take_claimed(&*buf, t) };
            match first {
                None => first = Some(value),
                Some(_) => dest.push(value),
            }
            t = t.wrapping_add(1);
        }
        match first {
            Some(v) => Steal::Success(v),
            None => Steal::Retry,
        }
    }

    /// True if the deque holds no element (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let w = berth::deque::Worker::new();
    /// let s = w.stealer();
    /// assert!(s.is_empty());
    /// w.push(1);
    /// assert!(!s.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of elements (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let w = berth::deque::Worker::new();
    /// let s = w.stealer();
    /// w.push(1);
    /// w.push(2);
    /// assert_eq!(s.len(), 2);
    /// s.steal();
    /// assert_eq!(s.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        len(&self.inner)
    }
}

/// The orderings of the owner's load of `requests` and store of `answered`. MUTANT
/// deque_handshake_relaxed: the owner reads the requests and answers them without ordering, so
/// an answered thief can still read a `bottom` from before the owner's decrement while the
/// owner reads a `top` from before the thief's claim.
#[inline]
fn handshake_orderings() -> (Ordering, Ordering) {
    if cfg!(berth_mutant = "deque_handshake_relaxed") {
        (Relaxed, Relaxed)
    } else {
        // Acquire: a thief's `top` load comes before its request, so every `top` load of the
        // owner's after this one returns at least what that thief read. Release: every
        // `bottom` store of the owner's so far is visible to a thief that sees the answer.
        (Acquire, Release)
    }
}

/// A thief's steal fence, between its `top` load and its `bottom` load: `SeqCst`; on an
/// asymmetric deque also, unless the owner is in a fenced spell, the owner's answer to a
/// request, or failing that (and if `may_block`) the heavy half of the asymmetric pair. False
/// if the thief must not go on: no answer came, and it may not (or, on a handshake-only deque,
/// cannot) run the barrier.
#[inline]
fn steal_fence<T>(inner: &Inner<T>, may_block: bool) -> bool {
    if inner.fences == Fences::Symmetric {
        fence(SeqCst);
        return true;
    }
    // Asymmetric: our half of the papers' pair first. If the owner is in a fenced spell, that
    // is all we need. Acquire, and before our `bottom` load: its unfenced pops from before the
    // spell are then visible to that load. MUTANT deque_spell_read_early reads the flag before
    // our fence, where it says nothing about the owner's later unfenced pops.
    #[cfg(berth_mutant = "deque_spell_read_early")]
    let in_spell = inner.fenced.load(Acquire) != 0;
    fence(SeqCst);
    #[cfg(not(berth_mutant = "deque_spell_read_early"))]
    let in_spell = inner.fenced.load(Acquire) != 0;
    if in_spell || ask_owner(inner) {
        return true;
    }
    // No answer in time: ask the owner to fence its next pops, then (for a first element) the
    // process-wide barrier, or `Retry` without one.
    inner.timed_out.store(1, Relaxed);
    if inner.fences == Fences::Asymmetric && may_block {
        crate::sync::asymmetric::heavy();
        return true;
    }
    false
}

/// Asks the owner of an asymmetric deque to answer (from its next `pop`) and polls a few times
/// for the answer; true once it came. The caller has loaded `top`; see "The handshake" in the
/// module docs for why an answer orders that load before the owner's later `top` loads and the
/// owner's earlier `bottom` stores before the caller's `bottom` load.
#[cold]
fn ask_owner<T>(inner: &Inner<T>) -> bool {
    // Release: our `top` load is ordered before the owner's later ones (the owner reads this
    // with Acquire). An RMW: each thief's request continues the release sequence of the others.
    let ticket = inner.requests.fetch_add(1, AcqRel).wrapping_add(1);
    for _ in 0..ANSWER_POLLS {
        // Acquire: the owner's `bottom` stores before its answer are visible to our load.
        if (inner.answered.load(Acquire).wrapping_sub(ticket) as isize) >= 0 {
            return true;
        }
        crate::sync::hint::spin_loop();
    }
    false
}

/// True if the deque looked empty to two plain loads (no fence: a hint, never a claim).
#[inline]
fn looks_empty<T>(inner: &Inner<T>) -> bool {
    let t = inner.top.load(Relaxed);
    let b = inner.bottom.load(Relaxed);
    (b.wrapping_sub(t) as isize) <= 0
}

/// Reads out index `t`, which the caller claimed with a CAS on `top`, and releases its slot.
///
/// # Safety
///
/// The caller's CAS moved `top` from `t`, and `buf` was loaded after a `bottom` above `t`.
unsafe fn take_claimed<T>(buf: &Buffer<T>, t: usize) -> T {
    // SAFETY: forwarded from the caller.
    let value = unsafe { buf.read(t) };
    // Release: the owner's write of `t + cap` (after its Acquire of this stamp) comes after our
    // read.
    buf.stamp(t).store(t.wrapping_add(buf.cap()), Release);
    value
}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Self {
        Stealer {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> fmt::Debug for Worker<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Worker")
            .field("len", &self.len())
            .field("capacity", &self.buf().cap())
            .finish()
    }
}

impl<T> fmt::Debug for Stealer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stealer").field("len", &self.len()).finish()
    }
}

impl<T> Steal<T> {
    /// True for `Empty`.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::deque::Steal;
    ///
    /// assert!(Steal::<u8>::Empty.is_empty());
    /// assert!(!Steal::Success(1).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        matches!(self, Steal::Empty)
    }

    /// True for `Success`.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::deque::Steal;
    ///
    /// assert!(Steal::Success(1).is_success());
    /// assert!(!Steal::<u8>::Retry.is_success());
    /// ```
    pub fn is_success(&self) -> bool {
        matches!(self, Steal::Success(_))
    }

    /// True for `Retry`.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::deque::Steal;
    ///
    /// assert!(Steal::<u8>::Retry.is_retry());
    /// assert!(!Steal::<u8>::Empty.is_retry());
    /// ```
    pub fn is_retry(&self) -> bool {
        matches!(self, Steal::Retry)
    }

    /// The stolen element, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::deque::Steal;
    ///
    /// assert_eq!(Steal::Success(5).success(), Some(5));
    /// assert_eq!(Steal::<u8>::Retry.success(), None);
    /// ```
    pub fn success(self) -> Option<T> {
        match self {
            Steal::Success(v) => Some(v),
            _ => None,
        }
    }

    /// `self` if it is a success; otherwise the result of `f`, with `Retry` kept if either
    /// said so (as crossbeam's `Steal::or_else`).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::deque::Steal;
    ///
    /// assert_eq!(Steal::<u8>::Empty.or_else(|| Steal::Success(1)), Steal::Success(1));
    /// assert_eq!(Steal::<u8>::Retry.or_else(|| Steal::Empty), Steal::Retry);
    /// ```
    pub fn or_else(self, f: impl FnOnce() -> Steal<T>) -> Steal<T> {
        match self {
            Steal::Success(v) => Steal::Success(v),
            Steal::Empty => f(),
            Steal::Retry => match f() {
                Steal::Empty => Steal::Retry,
                other => other,
            },
        }
    }
}

/// The first `Success`; otherwise `Retry` if any attempt said so; otherwise `Empty`. Stops
/// consuming at the first success, so a chain of lazy steals stops there.
///
/// ```
/// use berth::deque::{Steal, Worker};
///
/// let victims: Vec<Worker<u32>> = (0..3).map(|_| Worker::new()).collect();
/// victims[2].push(9);
/// let stealers: Vec<_> = victims.iter().map(|w| w.stealer()).collect();
/// let got: Steal<u32> = stealers.iter().map(|s| s.steal()).collect();
/// assert_eq!(got, Steal::Success(9));
/// ```
impl<T> FromIterator<Steal<T>> for Steal<T> {
    fn from_iter<I: IntoIterator<Item = Steal<T>>>(iter: I) -> Steal<T> {
        let mut retry = false;
        for s in iter {
            match s {
                Steal::Success(v) => return Steal::Success(v),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
        }
        if retry {
            Steal::Retry
        } else {
            Steal::Empty
        }
    }
}

#[cfg(all(test, not(loom), not(shuttle)))]
mod tests {
    use super::*;

    /// A thief that loaded the buffer pointer just before a growth claims its element through
    /// the *old* buffer and releases it there. When the owner laps that index in the new
    /// buffer, the new buffer's stamp was never set: the owner must look at the buffer the
    /// element was copied from rather than treat the finished thief as stalled. (Treating it
    /// as stalled grew the buffer once per lap, forever: every growth leaves such an index
    /// while thieves are busy, so the capacity came to track the number of pushes ever made,
    /// 8M slots after a few minutes of the deque benchmark.)
    #[test]
    fn a_thief_that_read_the_old_buffer_does_not_look_stalled() {
        let w = Worker::new();
        let s = w.stealer();
        let mut expect_stolen = 0u64;
        let mut next = 0u64;
        let rounds = if cfg!(miri) { 2 } else { 8 };
        for round in 0..rounds {
            let cap = w.buf().cap();
            // Fill the buffer, so the next push grows it.
            while w.len() < cap {
                w.push(next);
                next += 1;
            }
            // A thief gets as far as loading the buffer pointer, then the owner grows.
            let inner = &*s.inner;
            let t = inner.top.load(Acquire);
            let old = inner.buffer.load(Acquire);
            w.push(next);
            next += 1;
            assert_eq!(
                w.buf().cap(),
                2 * cap,
                "round {round}: the push grows the buffer"
            );
            // The thief claims and reads index `t` through the old buffer.
            inner
                .top
                .compare_exchange(t, t.wrapping_add(1), SeqCst, Relaxed)
                .expect("single-threaded");
            // SAFETY: our CAS claimed `t`, and `old` was loaded after `t` was pushed.
            assert_eq!(unsafe { take_claimed(&*old, t) }, expect_stolen);
            expect_stolen += 1;
            // Other thieves keep the deque short while the owner laps the new buffer 3 times.
            for _ in 0..3 * 2 * cap {
                assert_eq!(s.steal(), Steal::Success(expect_stolen));
                expect_stolen += 1;
                w.push(next);
                next += 1;
            }
            assert_eq!(
                w.buf().cap(),
                2 * cap,
                "round {round}: the owner grew again for a thief that had finished"
            );
        }
        assert_eq!(s.inner.retired.lock().len(), rounds);
        let left = w.len() as u64;
        assert_eq!(left, next - expect_stolen);
    }

    /// A thief that claims an element and is descheduled before reading it, again and again,
    /// while the owner pushes on and other thieves keep the deque short. The owner laps the
    /// stalled slot and must move to a new buffer; the retired buffers must stay few. (Moving
    /// to a buffer of the same size kept one retired buffer per stall: 200 here.)
    #[test]
    fn stalled_thieves_do_not_grow_memory_without_bound() {
        // Under Miri, 200 x 1,000 interpreted push/steal pairs take a quarter of an hour: 12
        // stalls of 3 laps each still tell the fix (at most 8 kept) from the bug (12).
        let (stalls, pushes) = if cfg!(miri) {
            (12, 3 * MIN_CAP)
        } else {
            (200, 1_000)
        };
        let w = Worker::new();
        let s = w.stealer();
        for round in 0..stalls {
            w.push(round);
            let inner = &*s.inner;
            // The stalled thief: claim the oldest element, do not read it yet.
            let t = inner.top.load(Acquire);
            inner
                .top
                .compare_exchange(t, t.wrapping_add(1), SeqCst, Relaxed)
                .expect("single-threaded");
            let buf = inner.buffer.load(Acquire);
            // Meanwhile: 1,000 pushes, each stolen by another thief.
            for i in 0..pushes as u64 {
                w.push(i);
                assert_eq!(s.steal(), Steal::Success(i));
            }
            // SAFETY: our CAS above claimed `t`, and `buf` was loaded after it was pushed.
            assert_eq!(unsafe { take_claimed(&*buf, t) }, round);
        }
        let retired = s.inner.retired.lock().len();
        assert!(
            retired <= 8,
            "{retired} retired buffers kept for {stalls} stalls (capacity now {})",
            w.buf().cap()
        );
    }
}
