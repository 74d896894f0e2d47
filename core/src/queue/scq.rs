//! `ScqQueue`: Nikolaev's Scalable Circular Queue (DISC 2019), with the threshold hole fixed.
//!
//! Ruslan Nikolaev, "A Scalable, Portable, and Memory-Efficient Lock-Free FIFO Queue", DISC 2019
//! (arXiv 1908.04511). Unlike [`VyukovQueue`](super::VyukovQueue), `try_push` and `try_pop`
//! never wait for one particular thread: positions are claimed with `fetch_add`, which never
//! fails, and a consumer that finds its position not yet published waits a bounded number of
//! reads, then invalidates it, so the producer simply takes another position. (The blocking
//! `push` and `pop` are another matter: one whose try gave up without a definitive answer
//! re-reads and yields until the paused thread it met finishes, a push lands, or the queue is
//! closed; see departure 4.)
//!
//! # Structure
//!
//! Two rings of *indices* into a data array of `capacity` cells: `aq` (allocated: indices whose
//! cells hold values, in FIFO order) and `fq` (free: indices whose cells are empty). A push takes
//! an index from `fq`, writes the cell, and enqueues the index on `aq`; a pop dequeues an index
//! from `aq`, reads the cell, and gives the index back to `fq`. Each ring has `R` entries, `R` the
//! smallest power of two `>= 2 * capacity`, so a ring never holds more than half its entries
//! (the paper's `2n` rings for `n` indices). An entry is one `u64`: `cycle | IsSafe | index`,
//! where `cycle` is the lap of the position that wrote it; the index field's all-ones value is
//! `⊥` (empty) and all-ones-but-the-last-bit is `⊥c` (consumed).
//!
//! Positions are `u64` counters that only grow, and must stay below `2^63`: bit 63 of `aq`'s
//! tail is the `CLOSED` flag, and an entry keeps `cycle = position >> order` in its bits above
//! `order + 1`, which leaves room for 63-bit positions and no more. A position is claimed by a
//! `fetch_add` of one (E1, D2; the `catchup` CAS moves a tail only up to a claimed head), so
//! a ring reaches `2^63` after `2^63` claims: about 290 years at a billion claims a second on
//! one ring, more than its cache line can serve. Nothing checks for it.
//!
//! # The paper's steps, as labelled in the code
//!
//! - **E1** `T = FAA(tail)`; **E2** load the entry at `T`; **E3** if its cycle is older than
//!   `T`'s, it is empty (`⊥`/`⊥c`), and it is safe or `head <= T`: **E4** CAS in
//!   `{cycle(T), safe, index}`, then **E5** reset the threshold to `3n - 1` (here `n = R / 2`).
//!   Otherwise take a new position.
//! - **D1** if the threshold is negative, the ring is empty. **D2** `H = FAA(head)`; **D3** if the
//!   entry's cycle is `H`'s, consume it (`OR ⊥c` into its index) and return the index; otherwise
//!   mark it unsafe, or, if it is empty, advance its cycle to `H`'s so that a late producer of
//!   position `H` cannot use it. Before that invalidation, if the empty entry's position has
//!   been claimed (`tail > H`), D3 re-reads it up to `PUBLICATION_WAIT_READS` times (the
//!   *bounded wait*), and consumes it if the producer's E4 lands meanwhile. **D4** if
//!   `tail <= H + 1`, the ring is empty: move `tail` up to `H + 1` (`catchup`), decrement the
//!   threshold, return empty. **D5** decrement the threshold; if it was `<= 0`, return empty;
//!   else go back to D2.
//!
//! # The threshold hole, and berth's fix
//!
//! The threshold bounds how long consumers chase positions after the last enqueue: without it a
//! consumer and a producer can invalidate each other's positions forever (a livelock). The paper
//! argues `3n - 1` is enough for a consumer to reach any value enqueued before the reset. That
//! bound counts *positions*. It does not count the consumers that claimed a position (D2)
//! *before* a reset and decrement the threshold (D4/D5) *after* it: each of those decrements
//! spends budget that the new value needed, and how many there can be depends on the number of
//! threads, not on `n`. With one slot, each of them spends one unit at most (if it goes on, its
//! next claim is the value's own position) and nothing else can, so the hole needs `3n` of them
//! in flight at once on the same ring: with `R = 4` (threshold 5), six consumers on `aq`, or six
//! producers on `fq` (producers are its dequeuers), seven threads in all. Each claims one of the
//! positions before the value's, finds it empty, reads a tail that says the ring is empty (D4),
//! and is preempted before its decrement. The push then walks the tail past those invalidated
//! positions, publishes at exactly the next position to dequeue and resets the threshold to 5
//! (E5); the six late decrements take it to -1, and every later dequeue gives up at D1 without
//! looking. The value (in `fq`, the one free slot) is stranded for good: the push or pop whose
//! enqueue would reset the threshold needs it. (The reference post saw 11 hangs in 40 runs with
//! three producers and three consumers; with berth's ring sizing three dequeuers per ring spend
//! at most three of the five units.) Benchmarked with 65,536-entry rings, a few threads never
//! get there.
//!
//! berth treats the threshold as a hint. When it says "give up" (D1 or D5), `give_up` first
//! looks at the positions between `head` and `tail`: if any holds a published entry of its own
//! cycle, the threshold is reset and the dequeue goes on; if the queue is closed (no enqueue can
//! livelock it any more) it goes on to the definitive check D4; otherwise it gives up as the
//! paper does. The livelock protection is kept: in the chase the paper guards against, no entry
//! in that range is ever published (each is invalidated before its producer can write it), so
//! consumers still give up and let producers finish. What changes is only that a *published*
//! value is never abandoned.
//!
//! The mutant `scq_weak_threshold` restores the paper's handling in `give_up`. The shuttle
//! models `scq_exhausted_threshold_strands_no_value` (six consumers, `aq`) and
//! `scq_exhausted_threshold_strands_no_free_slot` (six producers, `fq`) catch it on every run:
//! their scheduler moves the six dequeuers in lockstep and runs the other side's whole operation
//! between two of their steps, at each point in turn (about 70 executions, milliseconds), and
//! one of those points is the schedule above. Random and PCT schedules practically never line up
//! six stale dequeuers, nor do real threads on a few cores, so the stress test in
//! `core/tests/scq_threshold.rs` (three by three) guards the fix but cannot catch the mutant,
//! and loom models at most five threads. The loom model
//! `capacity_1_exhausted_threshold_does_not_strand_an_item` covers the threshold's reset racing
//! its exhaustion under the C11 memory model.
//!
//! A give-up that is not definitive (positions are claimed but not yet published) is reported
//! as `Empty` by `try_pop`, which is linearizable (those pushes have not completed), but a
//! blocking `pop` does not sleep on it: it could otherwise sleep through the wakeup of a push
//! whose claim it already saw. It sleeps only on a definitive empty (D4, or `tail <= head`),
//! re-checking with an RMW on `aq`'s tail as every wait in berth does (see [`crate::park`]).
//!
//! # Every departure from the paper, and the model that checks it
//!
//! The paper's SCQ returns from a dequeue or an enqueue and knows nothing of sleeping, closing
//! or exact capacities; berth adds those, and changes the threshold's handling. Each difference,
//! with the models (in `models/tests/`) and tests that check it:
//!
//! 1. **The threshold is a hint** (`give_up`, above). Checked by the shuttle models
//!    `scq_exhausted_threshold_strands_no_value` and `scq_exhausted_threshold_strands_no_free_slot`
//!    (which catch the paper's handling, the mutant `scq_weak_threshold`) and the loom model
//!    `capacity_1_exhausted_threshold_does_not_strand_an_item`.
//! 2. **D3's bounded wait** re-reads an unpublished entry only when its position was claimed
//!    (`tail > H`), at most `PUBLICATION_WAIT_READS` times; the authors' code waits up to
//!    10,000 reads whatever the tail. The wait only delays D3's invalidation (the entry is
//!    re-read and the usual checks run on what was read), so it cannot take a value twice or
//!    lose one. The loom
//!    models `capacity_1_fifo_across_laps`, `capacity_2_fifo_across_laps`,
//!    `capacity_2_close_races_push_and_pop` and
//!    `capacity_1_exhausted_threshold_does_not_strand_an_item` each reach it, including
//!    schedules in which the producer's E4 lands during the wait and the dequeuer takes the
//!    value; so do the shuttle models `scq_capacity_1_three_by_three` and
//!    `scq_two_by_two_exactly_once_fifo` (random and PCT schedulers).
//! 3. **D4 is a definitive empty only when the catchup CAS saw the tail unchanged, or the ring
//!    is closed**, and a sleeper re-checks the tail against `H + 1`. The paper's D4 always
//!    returns empty, which `try_pop` still reports; only blocking calls care whether it is safe
//!    to sleep on. berth's first SCQ took every D4 as definitive and re-checked against the
//!    tail read after the catchup, which already included a claim of `H + 1` made in between:
//!    the sleeper missed that push (the shuttle model `scq_capacity_1_three_by_three` found it,
//!    and finds it again with that version restored). Either half of the fix is enough for that
//!    schedule: with the re-check against `H + 1`, no model or test fails when every D4 is
//!    taken as definitive, so the tail-unchanged rule is a second guard that costs a few more
//!    passive waits (4 below). The loom models `capacity_1_fifo_across_laps`,
//!    `capacity_2_fifo_across_laps`, `capacity_2_close_races_push_and_pop` and
//!    `capacity_1_exhausted_threshold_does_not_strand_an_item` reach a lost catchup CAS on an
//!    open ring. The closed half (a lost CAS on a closed ring is still definitive: every claim
//!    made before the close has a position at most `H`, owned by a dequeuer) is checked by
//!    `capacity_1_closed_empty_pops_say_closed`, which fails without it (a pop of a closed,
//!    drained queue says `Empty`), and reached by `capacity_2_close_races_push_and_pop`.
//! 4. **A blocking pop or push that gave up non-definitively waits passively**
//!    (`await_publication`): it re-reads `head`, `tail` and the entries between them, yielding,
//!    until a published entry appears, the ring is definitively empty, or it is closed, and
//!    only then dequeues again or sleeps. It claims and invalidates nothing meanwhile, so it
//!    cannot chase the producer it waits for: without it the loom models
//!    `capacity_1_blocking_hand_over` and `capacity_1_fifo_across_laps` exceed loom's branch
//!    bound (a consumer that dequeues again at once invalidates the position the producer is
//!    about to publish, forever). Both models, `capacity_2_fifo_across_laps` and
//!    `capacity_2_close_races_push_and_pop` reach the wait; so does the shuttle model
//!    `scq_capacity_1_three_by_three`.
//! 5. **`close`**: a `CLOSED` bit in `aq`'s tail, set by an RMW. A push whose `aq` enqueue sees
//!    it gives its index back to `fq` and returns its value; a push that sees it first takes no
//!    index; pops drain and then report `Closed` once D4 says empty (closed, a dequeue never
//!    gives up on the threshold, so it always reaches D4). Checked by the loom models
//!    `capacity_2_close_races_push_and_pop` (a push and a draining pop racing the close: every
//!    value pushed is popped once, a refused one comes back, a closed and drained queue says
//!    `Closed`), `capacity_1_close_wakes_a_blocked_push` and
//!    `capacity_1_closed_empty_pops_say_closed`.
//! 6. **Exact capacity** `n` (any `n >= 1`): rings of `R = max(2n, 4).next_power_of_two()`
//!    entries, and the threshold uses `R / 2` for the paper's `n`. The floor of 4 matters: with
//!    `n = 1` and `R = 2`, `⊥c` (all ones but the last bit) is 0, the one real index, so a
//!    consumed entry and a live one look alike and a producer overwrites the live one (found
//!    while writing this queue: the index vanished from both rings). Every capacity-1 model
//!    runs on `R = 4`.
//!
//!    *Exact* means no more than `n` values are ever inside, and a push fails `Full` only when
//!    `n` cells are taken. A cell stays taken from the push that fills it until the pop that
//!    empties it gives its index back to `fq` (E/D's last step), so a push can see `Full`
//!    while a pop that has already taken its value is still on its way back. With two such
//!    pops in flight that is not linearizable against a queue of capacity `n`: the
//!    linearizability checker's exact search found a capacity-2 history (pop A takes 1 and
//!    stalls; pop B returns 2, which places A's pop first; a later push reports `Full` with one
//!    value inside). berth keeps it: making the push wait for the stalled pop instead would
//!    give up lock-freedom, the reason this queue exists (`VyukovQueue` makes that trade the
//!    other way). `core/tests/linearizability.rs` checks SCQ histories against FIFO exactly and
//!    against `Full` counting the pops that have not returned.
//! 7. **No cache remapping** of positions (the paper's `cache_remap`): a performance measure
//!    that changes no step, so no model checks its absence.

use super::{impl_bounded_queue, TryPopError, TryPushError, Wait};
use crate::park::{block_handover_until, block_until, Attempt, Backoff, Handover, WaitList};
use crate::sync::atomic::{
    AtomicI64, AtomicU64,
    Ordering::{AcqRel, Acquire, Release},
};
use crate::sync::cell::UnsafeCell;
use crate::sync::hint;
use crate::util::CachePadded;
use std::fmt;
use std::mem::MaybeUninit;
use std::time::Instant;

/// Set in `aq`'s tail once the queue is closed.
const CLOSED: u64 = 1 << 63;

/// The largest ring order: positions must leave room for cycles above the index and safe bits.
const MAX_ORDER: u32 = 40;

/// D3's bounded wait: how many times a dequeuer re-reads an empty entry of an older cycle whose
/// position a producer has already claimed (`tail > H`) before invalidating it. The producer is
/// then usually a few instructions from its E4 CAS (a load of `head`, the CAS): a short wait
/// turns a position both sides would lose (the dequeuer invalidates it, the producer moves on
/// to the next) into a hand-over. Each read follows one spin hint, so the whole wait is a few
/// hundred nanoseconds to a few microseconds, depending on what the CPU's hint costs: long
/// enough for a running producer, and no longer, since a producer preempted there will not be
/// back for a whole time slice. The authors' code (`lfring_cas1.h` in rusnikola/lfqueue)
/// re-reads up to 10,000 times, whatever the tail says.
///
/// Under loom and shuttle one re-read: every spin hint is a scheduling point there, and one is
/// enough to explore "the producer published during the wait" without multiplying the schedules.
const PUBLICATION_WAIT_READS: u32 = if crate::sync::MODEL { 1 } else { 64 };

/// Why a ring dequeue returned nothing.
#[derive(Clone, Copy)]
struct Empty {
    /// The raw tail seen when deciding (with the `CLOSED` bit).
    tail: u64,
    /// True when no claimed-but-unpublished position can hold a value for this dequeue
    /// (D4, or `tail <= head`): safe to sleep on.
    definitive: bool,
}

/// A ring of indices `0..n`, after the paper's SCQ.
struct IndexRing {
    head: CachePadded<AtomicU64>,
    tail: CachePadded<AtomicU64>,
    threshold: CachePadded<AtomicI64>,
    entries: Box<[AtomicU64]>,
    order: u32,
}

impl IndexRing {
    /// An empty ring of `2^order` entries: positions start at one lap, entries at cycle 0.
    fn new(order: u32) -> Self {
        let size = 1u64 << order;
        let bot = size - 1;
        IndexRing {
            head: CachePadded::new(AtomicU64::new(size)),
            tail: CachePadded::new(AtomicU64::new(size)),
            threshold: CachePadded::new(AtomicI64::new(-1)),
            entries: (0..size)
                .map(|_| AtomicU64::new((1 << order) | bot))
                .collect(),
            order,
        }
    }

    #[inline]
    fn size(&self) -> u64 {
        1 << self.order
    }

    #[inline]
    fn bot(&self) -> u64 {
        self.size() - 1
    }

    #[inline]
    fn botc(&self) -> u64 {
        self.size() - 2
    }

    #[inline]
    fn safe(&self) -> u64 {
        1 << self.order
    }

    /// The paper's `3n - 1`, with `n = R / 2`.
    #[inline]
    fn reset_value(&self) -> i64 {
        3 * (self.size() as i64 / 2) - 1
    }

    #[inline]
    fn cycle_of(&self, pos: u64) -> u64 {
        pos >> self.order
    }

    #[inline]
    fn entry_cycle(&self, e: u64) -> u64 {
        e >> (self.order + 1)
    }

    #[inline]
    fn entry_index(&self, e: u64) -> u64 {
        e & self.bot()
    }

    #[inline]
    fn is_free(&self, index: u64) -> bool {
        index | 1 == self.bot()
    }

    #[inline]
    fn entry(&self, pos: u64) -> &AtomicU64 {
        &self.entries[(pos & self.bot()) as usize]
    }

    /// Enqueues `index`; fails only if the tail is closed.
    fn enqueue(&self, index: u64) -> Result<(), ()> {
        loop {
            let t = self.tail.fetch_add(1, AcqRel); // E1
            if t & CLOSED != 0 {
                return Err(());
            }
            let tcycle = self.cycle_of(t);
            let slot = self.entry(t);
            let mut e = slot.load(Acquire); // E2
            loop {
                let usable = self.entry_cycle(e) < tcycle
                    && self.is_free(self.entry_index(e))
                    && (e & self.safe() != 0 || self.head.load(Acquire) <= t); // E3
                if !usable {
                    break;
                }
                let new = (tcycle << (self.order + 1)) | self.safe() | index;
                match slot.compare_exchange(e, new, AcqRel, Acquire) {
                    Ok(_) => {
                        // E5
                        if self.threshold.load(Acquire) != self.reset_value() {
                            self.threshold.store(self.reset_value(), Release);
                        }
                        return Ok(());
                    }
                    Err(now) => e = now, // E4 lost: look again
                }
            }
        }
    }

    /// Dequeues an index.
    fn dequeue(&self) -> Result<u64, Empty> {
        if self.threshold.load(Acquire) < 0 {
            // D1
            if let Some(empty) = self.give_up() {
                return Err(empty);
            }
        }
        loop {
            let h = self.head.fetch_add(1, AcqRel); // D2
            let hcycle = self.cycle_of(h);
            let slot = self.entry(h);
            let mut e = slot.load(Acquire);
            let mut reads_left = PUBLICATION_WAIT_READS;
            loop {
                let ecycle = self.entry_cycle(e);
                let eidx = self.entry_index(e);
                if ecycle == hcycle {
                    // D3: ours; mark it consumed.
                    slot.fetch_or(self.botc(), AcqRel);
                    return Ok(eidx);
                }
                if ecycle < hcycle && self.is_free(eidx) && reads_left > 0 {
                    // D3, bounded wait: an empty entry of an older cycle, which the CAS below
                    // would invalidate. If a producer has claimed `H` (the tail is past it),
                    // it is likely between E1 and E4: re-read the entry a few times before
                    // invalidating it, and take the value if it lands. The tail is read once;
                    // with no claim of `H` there is nothing to wait for. (A tail moved past `H`
                    // by another dequeuer's catchup, with no producer, costs a wasted wait.)
                    if reads_left == PUBLICATION_WAIT_READS
                        && self.tail.load(Acquire) & !CLOSED <= h
                    {
                        reads_left = 0;
                    } else {
                        reads_left -= 1;
                        hint::spin_loop();
                        e = slot.load(Acquire);
                        continue;
                    }
                }
                let new = if self.is_free(eidx) {
                    // Empty: advance its cycle so a late producer of H cannot use it.
                    (hcycle << (self.order + 1)) | (e & self.safe()) | self.bot()
                } else {
                    // Holds an older value: mark it unsafe.
                    (ecycle << (self.order + 1)) | eidx
                };
                if ecycle < hcycle {
                    if let Err(now) = slot.compare_exchange(e, new, AcqRel, Acquire) {
                        e = now;
                        continue;
                    }
                }
                break;
            }
            // D4
            let t = self.tail.load(Acquire);
            if t & !CLOSED <= h + 1 {
                let unchanged = self.catchup(t, h + 1);
                self.threshold.fetch_sub(1, AcqRel);
                // Definitive only if the tail was still `t` when our catchup CAS moved it: a
                // producer may have claimed a position in between (possibly `h + 1`, which no
                // dequeuer owns yet). A sleeper whose re-check compared the tail with one read
                // after the catchup, which includes that claim, missed that push (found by the
                // shuttle model `scq_capacity_1_three_by_three`); the re-check now compares
                // with `h + 1`, which alone closes that hole, and this rule is a second guard
                // (see the module docs, departure 3).
                // Closed, it is definitive even if the CAS lost: every claim before the close
                // has a position below `h + 1` (the tail we read was no higher), so it belongs
                // to a dequeuer that took or invalidated it, and no claim after the close
                // publishes. (Without this, two pops of a closed, empty queue could report
                // `Empty`/`Timeout` after `Closed`: found by the fuzz target `two_threads`.)
                return Err(Empty {
                    tail: (h + 1) | (t & CLOSED),
                    definitive: unchanged || t & CLOSED != 0,
                });
            }
            // D5
            if self.threshold.fetch_sub(1, AcqRel) <= 0 {
                if let Some(empty) = self.give_up() {
                    return Err(empty);
                }
            }
        }
    }

    /// Moves the tail up to `head` when dequeuers overtook it (keeping the `CLOSED` bit). True if
    /// the first CAS succeeded, that is, the tail was still `tail` (no claim in between).
    fn catchup(&self, mut tail: u64, mut head: u64) -> bool {
        let mut first = true;
        while let Err(now) =
            self.tail
                .compare_exchange(tail, head | (tail & CLOSED), AcqRel, Acquire)
        {
            first = false;
            tail = now;
            head = self.head.load(Acquire);
            if tail & !CLOSED >= head {
                break;
            }
        }
        first
    }

    /// The threshold says give up. `None`: do not (keep dequeuing); `Some`: give up.
    fn give_up(&self) -> Option<Empty> {
        let tail = self.tail.load(Acquire);
        if tail & CLOSED != 0 {
            // No enqueue can livelock us any more: go on until D4 decides.
            return None;
        }
        // MUTANT scq_weak_threshold: the paper's handling (D1 and D5 return empty): the
        // threshold is trusted and the ring reported empty without a look between head and tail.
        if cfg!(berth_mutant = "scq_weak_threshold") {
            let head = self.head.load(Acquire);
            return Some(Empty {
                tail,
                definitive: tail <= head,
            });
        }
        let head = self.head.load(Acquire);
        if tail <= head {
            return Some(Empty {
                tail,
                definitive: true,
            });
        }
        // Is a published value waiting between head and tail?
        let end = tail.min(head + self.size());
        for pos in head..end {
            let e = self.entry(pos).load(Acquire);
            if self.entry_cycle(e) == self.cycle_of(pos) && !self.is_free(self.entry_index(e)) {
                self.threshold.store(self.reset_value(), Release);
                return None;
            }
        }
        Some(Empty {
            tail,
            definitive: false,
        })
    }

    /// Waits, without claiming or invalidating any position, until a published entry lies
    /// between head and tail, or the ring is definitively empty, or it is closed.
    ///
    /// A blocking dequeue calls this after a non-definitive give-up (claims seen, nothing
    /// published yet) instead of dequeuing again at once: dequeuing would invalidate the very
    /// position a paused producer is about to publish, and a producer and a consumer that keep
    /// doing that to each other never finish (the chase the threshold exists to stop).
    fn await_publication(&self) {
        let mut backoff = Backoff::new();
        loop {
            let tail = self.tail.load(Acquire);
            let head = self.head.load(Acquire);
            if tail & CLOSED != 0 || tail <= head {
                return;
            }
            let end = tail.min(head + self.size());
            for pos in head..end {
                let e = self.entry(pos).load(Acquire);
                if self.entry_cycle(e) == self.cycle_of(pos) && !self.is_free(self.entry_index(e)) {
                    return;
                }
            }
            if backoff.is_completed() {
                // A producer paused mid-push: yield rather than spin.
                crate::sync::thread::yield_now();
            } else {
                backoff.snooze();
            }
        }
    }

    fn close(&self) -> bool {
        self.tail.fetch_or(CLOSED, AcqRel) & CLOSED == 0
    }

    fn is_closed(&self) -> bool {
        self.tail.load(Acquire) & CLOSED != 0
    }

    /// Positions between head and tail (a snapshot; may include unpublished claims).
    fn span(&self) -> u64 {
        let head = self.head.load(Acquire);
        let tail = self.tail.load(Acquire) & !CLOSED;
        tail.saturating_sub(head)
    }
}

/// A bounded lock-free MPMC queue after Nikolaev's SCQ (64-bit targets), with exact capacity
/// (a push may also see `Full` while a pop that took a value has not yet given its cell back)
/// and the threshold hole fixed (see the module docs).
///
/// # Examples
///
/// ```
/// use berth::ScqQueue;
///
/// let q = ScqQueue::new(2);
/// q.try_push(1).unwrap();
/// q.try_push(2).unwrap();
/// assert!(q.try_push(3).unwrap_err().is_full());
/// assert_eq!(q.pop(), Ok(1));
/// ```
pub struct ScqQueue<T> {
    aq: IndexRing,
    fq: IndexRing,
    cells: Box<[UnsafeCell<MaybeUninit<T>>]>,
    not_empty: CachePadded<WaitList>,
    not_full: CachePadded<WaitList>,
}

// SAFETY: values move between threads through the cells (`T: Send`); a cell is accessed only by
// the thread that holds its index, and indices are handed over through the rings' entries with
// Release/Acquire (the CAS that publishes an entry, the load that finds it).
unsafe impl<T: Send> Send for ScqQueue<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for ScqQueue<T> {}

enum PushFail {
    Full(Empty),
    Closed,
}

enum PopFail {
    Empty(Empty),
    Closed,
}

impl<T> ScqQueue<T> {
    /// A queue that holds exactly `capacity` values.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0 (a bounded queue needs at least one slot) or too large (more than
    /// 2^39 slots, or more than fits in memory).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::ScqQueue;
    ///
    /// let q = ScqQueue::<String>::new(16);
    /// assert_eq!(q.capacity(), 16);
    /// assert!(q.is_empty());
    /// ```
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "ScqQueue capacity must be at least 1, got 0");
        // R >= 2n as in the paper, and R >= 4: the index field must hold every real index
        // besides ⊥ (all ones) and ⊥c (all ones but the last bit). With one slot and R = 2, ⊥c
        // would be 0, the one real index: a consumed entry and a live one would look alike.
        let order = capacity
            .checked_mul(2)
            .map(|r| r.max(4))
            .and_then(usize::checked_next_power_of_two)
            .map(|r| r.trailing_zeros())
            .filter(|&o| o <= MAX_ORDER)
            .unwrap_or_else(|| {
                panic!("ScqQueue capacity {capacity} is too large: at most 2^39 slots")
            });
        if std::alloc::Layout::array::<MaybeUninit<T>>(capacity).is_err() {
            panic!("ScqQueue capacity {capacity} is too large: its cells would exceed isize::MAX bytes");
        }
        let fq = IndexRing::new(order);
        for index in 0..capacity as u64 {
            fq.enqueue(index).expect("a new ring is open");
        }
        ScqQueue {
            aq: IndexRing::new(order),
            fq,
            cells: (0..capacity)
                .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
                .collect(),
            not_empty: CachePadded::new(WaitList::new()),
            not_full: CachePadded::new(WaitList::new()),
        }
    }

    fn push_attempt(&self, value: T) -> Result<(), (T, PushFail)> {
        if self.aq.is_closed() {
            return Err((value, PushFail::Closed));
        }
        let index = match self.fq.dequeue() {
            Ok(i) => i,
            Err(empty) => return Err((value, PushFail::Full(empty))),
        };
        let cell = &self.cells[index as usize];
        cell.with_mut(|p| {
            // SAFETY: we dequeued `index` from the free ring, so we alone hold it; its cell is
            // empty (the last pop of it read the value out before giving the index back).
            unsafe { p.write(MaybeUninit::new(value)) }
        });
        if self.aq.enqueue(index).is_ok() {
            self.not_empty.notify_one();
            return Ok(());
        }
        // Closed meanwhile: take the value back and return the index.
        let value = cell.with(|p| {
            // SAFETY: we still hold `index` (the enqueue failed), and wrote the cell above.
            unsafe { p.read().assume_init() }
        });
        self.fq
            .enqueue(index)
            .expect("the free ring is never closed");
        self.not_full.notify_one();
        Err((value, PushFail::Closed))
    }

    fn pop_attempt(&self) -> Result<T, PopFail> {
        match self.aq.dequeue() {
            Ok(index) => {
                let value = self.cells[index as usize].with(|p| {
                    // SAFETY: `index` came out of the allocated ring, published by the push that
                    // wrote this cell (its entry CAS released, our entry load acquired); we alone
                    // hold it until we give it back below.
                    unsafe { p.read().assume_init() }
                });
                self.fq
                    .enqueue(index)
                    .expect("the free ring is never closed");
                self.not_full.notify_one();
                Ok(value)
            }
            Err(empty) if empty.definitive && empty.tail & CLOSED != 0 => Err(PopFail::Closed),
            Err(empty) => Err(PopFail::Empty(empty)),
        }
    }

    /// Pushes `value` if there is room, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::ScqQueue;
    ///
    /// let q = ScqQueue::new(1);
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

    super::blocking_methods!(ScqQueue);

    /// Pops the oldest value, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::ScqQueue;
    ///
    /// let q = ScqQueue::new(2);
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

    fn push_until(&self, value: T, deadline: Option<Instant>) -> Result<(), (T, Wait)> {
        block_handover_until(
            &self.not_full,
            deadline,
            value,
            |v| match self.push_attempt(v) {
                Ok(()) => Handover::Done,
                Err((v, PushFail::Closed)) => Handover::Refused(v),
                Err((v, PushFail::Full(empty))) => {
                    if !empty.definitive {
                        self.fq.await_publication();
                    }
                    Handover::Wait(v, empty)
                }
            },
            // W2: an RMW on the free ring's tail, which every pop's give-back increments.
            |empty| {
                !empty.definitive
                    || self.fq.tail.fetch_add(0, AcqRel) != empty.tail
                    || self.aq.is_closed()
            },
        )
        .map_err(Wait::from_handover)
    }

    fn pop_until(&self, deadline: Option<Instant>) -> Result<T, Wait> {
        let done = block_until(
            &self.not_empty,
            deadline,
            || match self.pop_attempt() {
                Ok(v) => Attempt::Ready(Ok(v)),
                Err(PopFail::Closed) => Attempt::Ready(Err(Wait::Closed)),
                Err(PopFail::Empty(empty)) => {
                    if !empty.definitive {
                        self.aq.await_publication();
                    }
                    Attempt::Wait(empty)
                }
            },
            // W2: an RMW on the allocated ring's tail, which every push's enqueue increments.
            |empty| !empty.definitive || self.aq.tail.fetch_add(0, AcqRel) != empty.tail,
        );
        done.unwrap_or(Err(Wait::TimedOut))
    }

    /// Closes the queue and wakes every waiting thread. True for the call that closed it.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::ScqQueue;
    ///
    /// let q = ScqQueue::new(2);
    /// q.push(1).unwrap();
    /// assert!(q.close()); // this call closed it
    /// assert!(!q.close()); // already closed
    /// assert!(q.push(2).is_err()); // every later push fails
    /// assert_eq!(q.pop(), Ok(1)); // what is inside can still be popped
    /// assert!(q.pop().is_err()); // closed and drained
    /// ```
    pub fn close(&self) -> bool {
        if !self.aq.close() {
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
    /// use berth::ScqQueue;
    ///
    /// let q = ScqQueue::<u8>::new(1);
    /// assert!(!q.is_closed());
    /// q.close();
    /// assert!(q.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.aq.is_closed()
    }

    /// The number of values inside (a snapshot; concurrent claims can make it approximate).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::ScqQueue;
    ///
    /// let q = ScqQueue::new(4);
    /// q.push(1).unwrap();
    /// q.push(2).unwrap();
    /// assert_eq!(q.len(), 2);
    /// q.pop().unwrap();
    /// assert_eq!(q.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        (self.aq.span() as usize).min(self.cells.len())
    }

    /// True if the queue holds no value (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::ScqQueue;
    ///
    /// let q = ScqQueue::new(4);
    /// assert!(q.is_empty());
    /// q.push(1).unwrap();
    /// assert!(!q.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if the queue holds `capacity` values (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::ScqQueue;
    ///
    /// let q = ScqQueue::new(2);
    /// q.push(1).unwrap();
    /// assert!(!q.is_full());
    /// q.push(2).unwrap();
    /// assert!(q.is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        self.len() == self.cells.len()
    }

    /// The number of values the queue can hold: exactly the capacity it was created with.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::ScqQueue;
    ///
    /// let q = ScqQueue::<u64>::new(3); // exact: any capacity of at least 1
    /// assert_eq!(q.capacity(), 3);
    /// ```
    pub fn capacity(&self) -> usize {
        self.cells.len()
    }
}

impl<T> Drop for ScqQueue<T> {
    fn drop(&mut self) {
        // Closed, a dequeue never gives up on the threshold: drain to the definitive empty.
        self.aq.close();
        while let Ok(value) = self.try_pop() {
            drop(value);
        }
    }
}

impl_bounded_queue!(ScqQueue);

impl fmt::Debug for IndexRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tail = self.tail.load(Acquire);
        let entries: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                let e = e.load(Acquire);
                let index = self.entry_index(e);
                let shown = if index == self.bot() {
                    "⊥".to_string()
                } else if index == self.botc() {
                    "⊥c".to_string()
                } else {
                    index.to_string()
                };
                let safe = if e & self.safe() != 0 { "" } else { " unsafe" };
                format!("{{cycle {} {shown}{safe}}}", self.entry_cycle(e))
            })
            .collect();
        f.debug_struct("IndexRing")
            .field("head", &self.head.load(Acquire))
            .field("tail", &(tail & !CLOSED))
            .field("closed", &(tail & CLOSED != 0))
            .field("threshold", &self.threshold.load(Acquire))
            .field("entries", &entries)
            .finish()
    }
}

/// `{:?}` shows the length, capacity and state; `{:#?}` also dumps both rings (head, tail,
/// threshold and every entry), which is what the threshold reproduction prints at a hang.
impl<T> fmt::Debug for ScqQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let alternate = f.alternate();
        let mut d = f.debug_struct("ScqQueue");
        d.field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("closed", &self.is_closed());
        if alternate {
            d.field("aq", &self.aq).field("fq", &self.fq);
        }
        d.finish()
    }
}
