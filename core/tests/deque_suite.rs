//! The behaviour suite of the work-stealing deque (`berth::deque`).
//!
//! Single-threaded order (owner LIFO, thieves FIFO), growth, `steal_batch_and_pop` amounts,
//! drop accounting, `len`/`is_empty` and the `Steal` helpers; then an owner pushing and popping
//! against 1 to 4 thieves, where every item must come out exactly once (also with indices that
//! wrap past `usize::MAX` mid-test). No assertion depends on timing: the concurrent tests end
//! when the owner has pushed everything and drained what the thieves left, whatever the
//! interleaving. Every scenario runs under the watchdog.

// Tests drive real std threads and atomics against the crate; core/clippy.toml forbids those in
// the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::deque::{Steal, Stealer, Worker};
use common::{join, with_watchdog, DropCounter, DropCounts, WATCHDOG_SECS};
use std::cell::Cell;
use std::sync::atomic::{
    AtomicBool,
    Ordering::{Acquire, Release},
};
use std::sync::Arc;
use std::thread;

/// `normal`, or `miri` under Miri (which runs threads about a thousand times slower).
const fn scaled(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// Items moved by each round of a concurrent exactly-once scenario.
const N: usize = scaled(100_000, 300);
/// Rounds of each exactly-once scenario (a race that loses or duplicates an item shows up in a
/// small fraction of rounds: more rounds, more chances, at a few tenths of a second each).
const REPEATS: usize = scaled(8, 1);
/// Items pushed by the growth tests (the first buffer has 64 slots).
const GROW: usize = scaled(100_000, 300);
/// The wrap-around variants start this far below `usize::MAX`, so the indices wrap after this
/// many pushes (N is larger).
const WRAP_AHEAD: usize = 100;
/// Items in the larger drop-accounting cases (several growths).
const BIG: usize = scaled(5_000, 150);
/// The batch limit of `steal_batch_and_pop` (documented: "at most 32").
const MAX_BATCH: usize = 32;

// ---------------------------------------------------------------------------------------------
// Static properties
// ---------------------------------------------------------------------------------------------

fn assert_send<T: Send>() {}
fn assert_sync<T: Sync>() {}
fn assert_clone<T: Clone>() {}

/// `Worker` moves between threads; `Stealer` is shared and cloned (also for a `T` that is `Send`
/// but not `Sync`). That `Worker` is not `Sync` is a `compile_fail` doctest in the module.
const _: fn() = || {
    assert_send::<Worker<u64>>();
    assert_send::<Worker<Cell<u64>>>();
    assert_send::<Stealer<u64>>();
    assert_sync::<Stealer<u64>>();
    assert_clone::<Stealer<u64>>();
    assert_send::<Stealer<Cell<u64>>>();
    assert_sync::<Stealer<Cell<u64>>>();
    assert_send::<Steal<u64>>();
};

// ---------------------------------------------------------------------------------------------
// Single-threaded order
// ---------------------------------------------------------------------------------------------

/// The owner takes the newest, thieves the oldest; the two ends meet without losing anything.
#[test]
fn owner_lifo_thief_fifo() {
    with_watchdog(WATCHDOG_SECS, "owner LIFO / thief FIFO", || {
        for start in [0, usize::MAX - 5] {
            let w = worker_at(start);
            let s = w.stealer();
            // Owner alone: LIFO (200 items, so the buffer grows on the way).
            for i in 0..200u32 {
                w.push(i);
            }
            for i in (0..200u32).rev() {
                assert_eq!(
                    w.pop(),
                    Some(i),
                    "start {start}: owner pops the newest first"
                );
            }
            assert_eq!(w.pop(), None, "start {start}: drained");
            // Thief alone: FIFO.
            for i in 0..200u32 {
                w.push(i);
            }
            for i in 0..200u32 {
                assert_eq!(
                    s.steal(),
                    Steal::Success(i),
                    "start {start}: a thief steals the oldest first"
                );
            }
            assert_eq!(s.steal(), Steal::Empty, "start {start}: stolen dry");
            // Both ends: 0..10, thief takes 0, owner 9, thief 1, owner 8, ...
            for i in 0..10u32 {
                w.push(i);
            }
            for k in 0..5u32 {
                assert_eq!(s.steal(), Steal::Success(k), "start {start}: front {k}");
                assert_eq!(w.pop(), Some(9 - k), "start {start}: back {}", 9 - k);
            }
            assert_eq!(w.pop(), None);
            assert!(s.steal().is_empty());
            // A pop on an empty deque leaves it usable at both ends.
            assert_eq!(w.pop(), None);
            w.push(42);
            assert_eq!(s.steal(), Steal::Success(42));
            w.push(43);
            assert_eq!(w.pop(), Some(43));
        }
    });
}

/// A worker whose indices start at `start` (through the public constructor when that is 0).
fn worker_at<T>(start: usize) -> Worker<T> {
    if start == 0 {
        Worker::new()
    } else {
        Worker::with_start_index(start)
    }
}

// ---------------------------------------------------------------------------------------------
// Growth
// ---------------------------------------------------------------------------------------------

/// From empty to `GROW` items and back, at the owner's end and then at the thieves', starting at
/// 0 and just below `usize::MAX` (so the indices wrap while the buffer grows).
#[test]
fn growth_to_100k_and_back() {
    with_watchdog(WATCHDOG_SECS, "growth to 100k and back", || {
        for start in [0, usize::MAX - 1_000] {
            let w = worker_at(start);
            let s = w.stealer();
            for round in 0..2 {
                for i in 0..GROW {
                    w.push(i);
                }
                assert_eq!(
                    w.len(),
                    GROW,
                    "start {start}, round {round}: len after growth"
                );
                assert_eq!(s.len(), GROW, "start {start}, round {round}: stealer's len");
                for i in (0..GROW).rev() {
                    assert_eq!(w.pop(), Some(i), "start {start}, round {round}");
                }
                assert!(w.is_empty() && s.is_empty(), "start {start}: empty again");
                assert_eq!(w.pop(), None);
                // Again, taken from the thieves' end (the buffer is already large).
                for i in 0..GROW {
                    w.push(i);
                }
                for i in 0..GROW {
                    assert_eq!(s.steal(), Steal::Success(i), "start {start}, round {round}");
                }
                assert_eq!(s.steal(), Steal::Empty);
                assert!(w.is_empty());
            }
        }
    });
}

/// One thief steals while the owner pushes `GROW` items without popping (growth races steals),
/// then the owner pops what is left. Every item once; the thief's items are in push order (it
/// claims increasing indices, and the owner pushes increasing values).
#[test]
fn growth_while_a_thief_steals() {
    with_watchdog(WATCHDOG_SECS, "growth while a thief steals", || {
        let w = Worker::new();
        let s = w.stealer();
        let done = Arc::new(AtomicBool::new(false));
        let thief = {
            let done = Arc::clone(&done);
            thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    match s.steal() {
                        Steal::Success(v) => got.push(v),
                        Steal::Retry => std::hint::spin_loop(),
                        Steal::Empty if done.load(Acquire) => return got,
                        Steal::Empty => thread::yield_now(),
                    }
                }
            })
        };
        for i in 0..GROW as u64 {
            w.push(i);
        }
        let mut mine = Vec::new();
        while let Some(v) = w.pop() {
            mine.push(v);
        }
        done.store(true, Release);
        let stolen = join(thief);
        assert!(
            stolen.windows(2).all(|p| p[0] < p[1]),
            "the thief's items are out of push order"
        );
        assert!(
            mine.windows(2).all(|p| p[0] > p[1]),
            "the owner's pops are out of LIFO order"
        );
        let mut all = stolen;
        all.extend(mine);
        check_exactly_once(&all, GROW, "growth while a thief steals");
    });
}

// ---------------------------------------------------------------------------------------------
// steal_batch_and_pop amounts
// ---------------------------------------------------------------------------------------------

/// From a deque of `len` items, a batch steal takes `min(ceil(len / 2), 32)`: returns the
/// oldest, moves the next ones into the thief's worker (on top of what it held), and leaves the
/// rest to the owner and the other thieves.
#[test]
fn steal_batch_moves_about_half_at_most_32() {
    with_watchdog(WATCHDOG_SECS, "steal_batch_and_pop amounts", || {
        let lens = [
            1usize,
            2,
            3,
            4,
            5,
            10,
            31,
            63,
            64,
            65,
            66,
            100,
            scaled(1_000, 130),
        ];
        for (victim_start, dest_start) in [(0, 0), (usize::MAX - 40, usize::MAX - 3)] {
            for len in lens {
                let ctx = format!("len {len}, starts {victim_start}/{dest_start}");
                let victim = worker_at(victim_start);
                let dest = worker_at(dest_start);
                // The thief's own worker already holds two items of its own.
                dest.push(u64::MAX - 1);
                dest.push(u64::MAX);
                for i in 0..len as u64 {
                    victim.push(i);
                }
                let s = victim.stealer();
                let batch = len.div_ceil(2).min(MAX_BATCH);
                assert_eq!(
                    s.steal_batch_and_pop(&dest),
                    Steal::Success(0),
                    "{ctx}: the oldest is returned"
                );
                assert_eq!(
                    dest.len(),
                    2 + batch - 1,
                    "{ctx}: moved into the thief's worker"
                );
                assert_eq!(victim.len(), len - batch, "{ctx}: left in the victim");
                assert_eq!(s.len(), len - batch, "{ctx}: the stealer agrees");
                // The thief's worker pops the moved items newest first, then its own.
                for i in (1..batch as u64).rev() {
                    assert_eq!(dest.pop(), Some(i), "{ctx}: moved in order");
                }
                assert_eq!(dest.pop(), Some(u64::MAX), "{ctx}: own items stay below");
                assert_eq!(dest.pop(), Some(u64::MAX - 1));
                assert_eq!(dest.pop(), None);
                // The victim still holds exactly the rest, in order.
                for i in batch as u64..len as u64 {
                    assert_eq!(s.steal(), Steal::Success(i), "{ctx}: the rest stays");
                }
                assert!(s.steal().is_empty(), "{ctx}: nothing more");
            }
        }
    });
}

/// Batch steals repeated until the victim is empty take everything once, in order.
#[test]
fn steal_batch_repeated_drains_in_order() {
    with_watchdog(WATCHDOG_SECS, "steal_batch_and_pop until empty", || {
        let victim = Worker::with_start_index(usize::MAX - 7);
        let dest = Worker::new();
        let s = victim.stealer();
        for i in 0..500u64 {
            victim.push(i);
        }
        let mut got = Vec::new();
        let mut left = 500usize;
        loop {
            match s.steal_batch_and_pop(&dest) {
                Steal::Success(first) => {
                    let batch = left.div_ceil(2).min(MAX_BATCH);
                    left -= batch;
                    assert_eq!(dest.len(), batch - 1, "batch {} of {}", got.len(), 500);
                    got.push(first);
                    let mut moved: Vec<u64> = std::iter::from_fn(|| dest.pop()).collect();
                    moved.reverse();
                    got.extend(moved);
                }
                Steal::Empty => break,
                Steal::Retry => panic!("Retry with no other thread"),
            }
        }
        assert_eq!(left, 0);
        assert_eq!(got, (0..500).collect::<Vec<u64>>());
    });
}

/// Empty victim: `Empty`, nothing moved. Batch stealing into the victim's own worker pops.
#[test]
fn steal_batch_edge_cases() {
    with_watchdog(WATCHDOG_SECS, "steal_batch_and_pop edge cases", || {
        let victim = Worker::new();
        let dest = Worker::new();
        let s = victim.stealer();
        assert_eq!(s.steal_batch_and_pop(&dest), Steal::<u32>::Empty);
        assert!(dest.is_empty());
        for i in 0..10u32 {
            victim.push(i);
        }
        // Into itself: the same as the owner's pop (the newest), not a batch.
        assert_eq!(s.steal_batch_and_pop(&victim), Steal::Success(9));
        assert_eq!(victim.len(), 9);
        // Drained by pops, `Empty` again.
        while victim.pop().is_some() {}
        assert_eq!(s.steal_batch_and_pop(&victim), Steal::Empty);
        assert_eq!(s.steal_batch_and_pop(&dest), Steal::Empty);
    });
}

// ---------------------------------------------------------------------------------------------
// Drop accounting
// ---------------------------------------------------------------------------------------------

/// Items left in a dropped deque are dropped exactly once: small, after growth (with some taken
/// from both ends first, so `top` is not at the start), and across the wrap of the indices.
#[test]
fn drop_drops_the_items_left() {
    with_watchdog(WATCHDOG_SECS, "drop accounting (worker only)", || {
        for (start, pushed, popped, stolen) in [
            (0, 0, 0, 0),
            (0, 10, 3, 2),
            (0, 64, 0, 0),
            (0, 65, 0, 0),
            (0, BIG, BIG / 50, BIG / 5),
            (usize::MAX - 3, 10, 1, 1),
            (usize::MAX - BIG / 5, BIG, BIG / 50, BIG * 3 / 10),
        ] {
            let ctx = format!("start {start}, {pushed} pushed, {popped} popped, {stolen} stolen");
            let counts = DropCounts::new();
            let w = worker_at(start);
            for i in 0..pushed as u64 {
                w.push(counts.make(i));
            }
            for k in 0..popped as u64 {
                let v = w.pop().expect("an item to pop");
                assert_eq!(v.id(), pushed as u64 - 1 - k, "{ctx}");
            }
            let s = w.stealer();
            for k in 0..stolen as u64 {
                let v = s.steal().success().expect("an item to steal");
                assert_eq!(v.id(), k, "{ctx}");
            }
            drop(s);
            assert_eq!(counts.made(), pushed, "{ctx}");
            assert_eq!(
                counts.dropped(),
                popped + stolen,
                "{ctx}: taken items dropped once"
            );
            drop(w);
            assert_eq!(
                counts.dropped(),
                pushed,
                "{ctx}: the {} items left in the deque must be dropped once each",
                pushed - popped - stolen
            );
            assert_eq!(counts.live(), 0, "{ctx}");
        }
    });
}

/// The worker goes first; the stealers keep the deque (and its items) alive, can still steal,
/// and the last one to go drops what is left, on whatever thread it is.
#[test]
fn drop_with_live_stealers_dropped_last() {
    with_watchdog(WATCHDOG_SECS, "drop accounting (stealers last)", || {
        let counts = DropCounts::new();
        let n = scaled(1_000, 100);
        let w = Worker::new();
        for i in 0..n as u64 {
            w.push(counts.make(i)); // grows: 64 -> 128 (-> 1024)
        }
        let s1 = w.stealer();
        let s2 = s1.clone();
        drop(w);
        assert_eq!(counts.dropped(), 0, "the stealers keep the items alive");
        assert_eq!(s1.len(), n);
        for k in 0..10 {
            assert_eq!(s1.steal().success().map(|v| v.id()), Some(k));
        }
        assert_eq!(counts.dropped(), 10);
        drop(s1);
        assert_eq!(counts.dropped(), 10, "one stealer is still alive");
        // The last stealer steals a little and is dropped on another thread.
        let c = counts.clone();
        join(thread::spawn(move || {
            assert_eq!(s2.steal().success().map(|v| v.id()), Some(10));
            assert_eq!(c.dropped(), 11);
            drop(s2);
        }));
        assert_eq!(
            counts.dropped(),
            n,
            "the last handle drops the {} left",
            n - 11
        );
        assert_eq!(counts.live(), 0);
    });
}

/// Owner and 3 thieves move drop-counted items: every item is taken and dropped exactly once
/// (a slot read twice would drop twice), and those left at the end are dropped with the deque.
#[test]
fn drop_accounting_under_contention() {
    const THIEVES: usize = 3;
    let n = scaled(20_000, 200);
    with_watchdog(
        WATCHDOG_SECS,
        "drop accounting under contention",
        move || {
            let counts = DropCounts::new();
            let w: Worker<DropCounter> = Worker::with_start_index(usize::MAX - WRAP_AHEAD);
            let done = Arc::new(AtomicBool::new(false));
            let thieves: Vec<_> = (0..THIEVES)
                .map(|t| {
                    let (s, done) = (w.stealer(), Arc::clone(&done));
                    thread::spawn(move || {
                        let local = Worker::new();
                        let mut ids = Vec::new();
                        let mut turn = 0usize;
                        // Stop when told, even if items are left: the deque drops those.
                        while !done.load(Acquire) {
                            turn += 1;
                            let got = if (turn + t) % 2 == 0 {
                                s.steal()
                            } else {
                                s.steal_batch_and_pop(&local)
                            };
                            match got {
                                Steal::Success(v) => {
                                    ids.push(v.id());
                                    while let Some(v) = local.pop() {
                                        ids.push(v.id());
                                    }
                                }
                                Steal::Retry => std::hint::spin_loop(),
                                Steal::Empty => thread::yield_now(),
                            }
                        }
                        ids
                    })
                })
                .collect();
            let mut ids = Vec::new();
            for i in 0..n as u64 {
                w.push(counts.make(i));
                if i % 3 == 2 {
                    if let Some(v) = w.pop() {
                        ids.push(v.id());
                    }
                }
            }
            // Drain to 100, stop the thieves, then drop the deque with what is left (the thieves
            // may have taken some of those 100 before they stopped; the drop must handle the rest).
            while w.len() > 100 {
                if let Some(v) = w.pop() {
                    ids.push(v.id());
                }
            }
            done.store(true, Release);
            for t in thieves {
                ids.extend(join(t));
            }
            let left = w.len();
            assert_eq!(
                counts.dropped(),
                n - left,
                "every item taken was dropped once (taken {}, left {left})",
                ids.len()
            );
            drop(w);
            assert_eq!(counts.made(), n);
            assert_eq!(
                counts.dropped(),
                n,
                "the {left} items left were dropped once each"
            );
            assert_eq!(ids.len(), n - left);
            let mut seen = vec![false; n];
            for id in ids {
                assert!(!seen[id as usize], "item {id} was taken twice");
                seen[id as usize] = true;
            }
        },
    );
}

// ---------------------------------------------------------------------------------------------
// len / is_empty
// ---------------------------------------------------------------------------------------------

/// `len` and `is_empty` of the worker and of its stealers track every operation (single
/// thread: the snapshots are exact), including across the wrap of the indices.
#[test]
fn len_and_is_empty() {
    with_watchdog(WATCHDOG_SECS, "len and is_empty", || {
        for start in [0, usize::MAX, usize::MAX - 2] {
            let w = worker_at(start);
            let s = w.stealer();
            let s2 = s.clone();
            let other = Worker::new();
            let check = |expect: usize, what: &str| {
                assert_eq!(w.len(), expect, "start {start}: worker len after {what}");
                assert_eq!(s.len(), expect, "start {start}: stealer len after {what}");
                assert_eq!(s2.len(), expect, "start {start}: clone's len after {what}");
                assert_eq!(
                    w.is_empty(),
                    expect == 0,
                    "start {start}: is_empty after {what}"
                );
                assert_eq!(s.is_empty(), expect == 0, "start {start}: stealer is_empty");
            };
            check(0, "new");
            assert_eq!(w.pop(), None);
            check(0, "a pop on empty");
            assert!(s.steal().is_empty());
            check(0, "a steal on empty");
            for i in 0..100u32 {
                w.push(i);
                check(i as usize + 1, "push");
            }
            assert!(w.pop().is_some());
            check(99, "pop");
            assert!(s.steal().is_success());
            check(98, "steal");
            assert!(s.steal_batch_and_pop(&other).is_success());
            check(98 - 32, "a batch steal");
            assert_eq!(other.len(), 31);
            assert!(!other.is_empty());
            while w.pop().is_some() {}
            check(0, "draining");
            assert_eq!(w.pop(), None);
            check(0, "a pop on empty");
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Steal helpers and FromIterator
// ---------------------------------------------------------------------------------------------

#[test]
fn steal_helpers() {
    let s: Steal<u8> = Steal::Success(7);
    assert!(s.is_success() && !s.is_empty() && !s.is_retry());
    assert_eq!(s.success(), Some(7));
    let e: Steal<u8> = Steal::Empty;
    assert!(e.is_empty() && !e.is_success() && !e.is_retry());
    assert_eq!(e.success(), None);
    let r: Steal<u8> = Steal::Retry;
    assert!(r.is_retry() && !r.is_empty() && !r.is_success());
    assert_eq!(r.success(), None);

    // or_else: a success is kept without calling `f`.
    let called = Cell::new(false);
    let f = |out: Steal<u8>| {
        let called = &called;
        move || {
            called.set(true);
            out
        }
    };
    assert_eq!(
        Steal::Success(1).or_else(f(Steal::Success(2))),
        Steal::Success(1)
    );
    assert!(!called.get(), "or_else called f after a success");
    // Empty: whatever f says.
    assert_eq!(Steal::Empty.or_else(f(Steal::Empty)), Steal::Empty);
    assert!(called.get());
    assert_eq!(Steal::Empty.or_else(f(Steal::Retry)), Steal::Retry);
    assert_eq!(
        Steal::Empty.or_else(f(Steal::Success(3))),
        Steal::Success(3)
    );
    // Retry: f's success wins, otherwise Retry is kept.
    assert_eq!(Steal::Retry.or_else(f(Steal::Empty)), Steal::Retry);
    assert_eq!(Steal::Retry.or_else(f(Steal::Retry)), Steal::Retry);
    assert_eq!(
        Steal::Retry.or_else(f(Steal::Success(4))),
        Steal::Success(4)
    );
}

#[test]
fn steal_from_iterator() {
    use Steal::{Empty, Retry, Success};
    let collect = |v: Vec<Steal<u8>>| v.into_iter().collect::<Steal<u8>>();
    assert_eq!(collect(vec![]), Empty, "nothing tried: Empty");
    assert_eq!(collect(vec![Empty, Empty]), Empty);
    assert_eq!(
        collect(vec![Empty, Retry, Empty]),
        Retry,
        "any Retry: Retry"
    );
    assert_eq!(collect(vec![Retry, Retry]), Retry);
    assert_eq!(collect(vec![Empty, Success(1)]), Success(1));
    assert_eq!(
        collect(vec![Retry, Success(1), Retry, Success(2)]),
        Success(1),
        "the first success wins, even after a Retry"
    );
    assert_eq!(collect(vec![Success(5), Empty]), Success(5));

    // It stops at the first success: later (lazy) steals are never attempted.
    let tried = Cell::new(0);
    let got: Steal<u8> = [Empty, Success(1), Success(2), Retry]
        .into_iter()
        .inspect(|_| tried.set(tried.get() + 1))
        .collect();
    assert_eq!(got, Success(1));
    assert_eq!(tried.get(), 2, "consumed past the first success");

    // With real deques: the first victim that has something.
    let victims: Vec<Worker<u32>> = (0..4).map(|_| Worker::new()).collect();
    victims[1].push(10);
    victims[3].push(30);
    let stealers: Vec<Stealer<u32>> = victims.iter().map(Worker::stealer).collect();
    let first: Steal<u32> = stealers.iter().map(Stealer::steal).collect();
    assert_eq!(first, Success(10));
    assert_eq!(victims[3].len(), 1, "the later victim was not stolen from");
    let next: Steal<u32> = stealers.iter().map(Stealer::steal).collect();
    assert_eq!(next, Success(30));
    let none: Steal<u32> = stealers.iter().map(Stealer::steal).collect();
    assert_eq!(none, Empty);
}

// ---------------------------------------------------------------------------------------------
// Exactly once: one owner against 1 to 4 thieves
// ---------------------------------------------------------------------------------------------

/// Panics unless `all` holds each of `0..n` exactly once (naming the first duplicate or loss).
fn check_exactly_once(all: &[u64], n: usize, what: &str) {
    let mut seen = vec![0u8; n];
    for &v in all {
        assert!((v as usize) < n, "{what}: item {v} was never pushed");
        seen[v as usize] += 1;
        assert!(seen[v as usize] == 1, "{what}: item {v} was taken twice");
    }
    if let Some(lost) = seen.iter().position(|&c| c == 0) {
        panic!("{what}: item {lost} was lost ({} of {n} taken)", all.len());
    }
}

/// Checks that one thread's claims are in push order (see `exactly_once_with_thieves`).
fn check_increasing(claims: &[u64], who: &str, what: &str) {
    if let Some(p) = claims.windows(2).position(|p| p[0] >= p[1]) {
        panic!(
            "{what}: {who} claimed {} after {}: claims must follow push order",
            claims[p + 1],
            claims[p]
        );
    }
}

/// The owner pushes `0..N` in bursts of 1 to 97 and pops about half of each burst (sometimes
/// all of it, racing the thieves for the last item), then drains what is left. `thieves`
/// threads take from the top, alternating `steal` and `steal_batch_and_pop` into a worker of
/// their own (which they then empty with `pop`), until the owner is done and the deque is
/// empty. The owner's deque starts at index `start`; the thieves' own workers near the wrap
/// too when `start` is not 0.
///
/// Checks: every item exactly once; and each thief's claims are in push order. (A thief claims
/// increasing indices; when the item at index `j > i` was pushed, index `i` already held its
/// final item, so that item was pushed earlier, and the owner pushes increasing values. A
/// batch's items are its claims in order: the one returned, then the moved ones, which its
/// empty local worker pops newest first.)
fn exactly_once_with_thieves(thieves: usize, start: usize) {
    exactly_once_with_fences(thieves, start, Fences::Symmetric);
}

/// Which of the deque's fence pairs a scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fences {
    /// `Worker::new`: a `SeqCst` fence on each side.
    Symmetric,
    /// `Worker::new_asymmetric`: a compiler fence in `pop`; thieves ask the owner for an answer
    /// and fall back to a process-wide barrier.
    Asymmetric,
    /// `Worker::handshake_only`: the answer or nothing (a thief without one returns `Retry`):
    /// the handshake alone on real threads, as the loom models check it.
    HandshakeOnly,
}

fn worker_with<T>(start: usize, fences: Fences) -> Worker<T> {
    match fences {
        Fences::Symmetric => Worker::with_start_index_and_fences(start, false),
        Fences::Asymmetric => Worker::with_start_index_and_fences(start, true),
        Fences::HandshakeOnly => Worker::handshake_only(start),
    }
}

/// As [`exactly_once_with_thieves`], with the given fences. For an asymmetric deque
/// (`Worker::new_asymmetric`: the owner's take fence is a compiler fence; a steal that finds
/// work waits for the owner's answer or pays a process-wide barrier) the models can check the
/// handshake (`handshake_only`) but not the barrier, so these real-thread rounds are the
/// barrier's test.
fn exactly_once_with_fences(thieves: usize, start: usize, fences: Fences) {
    let name = format!("exactly once, {thieves} thieves, start index {start}, {fences:?}");
    with_watchdog(WATCHDOG_SECS, &name.clone(), move || {
        for rep in 0..REPEATS {
            exactly_once_round(
                thieves,
                start,
                fences,
                false,
                &format!("{name}, round {rep}"),
            );
        }
    });
}

/// Rounds at most of [`exactly_once_through_fenced_spells`] before it gives up on seeing two
/// spells (each round has thousands of chances).
const SPELL_ROUNDS: usize = scaled(50, 1);

/// As [`exactly_once_with_fences`] on an asymmetric deque whose owner pauses (a bounded spin of
/// some tens of microseconds) before every fourth burst: thieves that ask then get no answer in
/// time, and the owner starts fenced spells (module docs of `berth::deque`). Rounds run until
/// the owner has started two spells (so one has also ended, and unfenced pops followed it),
/// and every round checks that each item was taken once.
fn exactly_once_through_fenced_spells(thieves: usize, fences: Fences) {
    let name = format!("exactly once through fenced spells, {thieves} thieves, {fences:?}");
    with_watchdog(WATCHDOG_SECS, &name.clone(), move || {
        let mut spells = 0;
        let mut rounds = 0;
        while spells < 2 && rounds < SPELL_ROUNDS {
            rounds += 1;
            spells +=
                exactly_once_round(thieves, 0, fences, true, &format!("{name}, round {rounds}"));
        }
        // Under Miri the deque is symmetric (no system call), so there are no spells.
        if !cfg!(miri) || fences == Fences::HandshakeOnly {
            assert!(
                spells >= 2,
                "{name}: the owner started {spells} fenced spells in {rounds} rounds (the \
                 scenario should start them; is the hint from thieves that time out lost?)"
            );
        }
    });
}

/// One round of [`exactly_once_with_thieves`], on fresh deques and threads; returns how many
/// fenced spells the owner started. With `slow_owner`, the owner pauses before every fourth
/// burst.
fn exactly_once_round(
    thieves: usize,
    start: usize,
    fences: Fences,
    slow_owner: bool,
    what: &str,
) -> usize {
    let what = what.to_owned();
    let w = worker_with(start, fences);
    let stealer = w.stealer();
    let done = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..thieves)
        .map(|t| {
            // Half of the thieves share clones of one stealer, the others get their own.
            let s = if t % 2 == 0 {
                stealer.clone()
            } else {
                w.stealer()
            };
            let done = Arc::clone(&done);
            let local_start = if start == 0 { 0 } else { usize::MAX - 10 };
            let what = what.clone();
            thread::spawn(move || {
                let local: Worker<u64> = worker_at(local_start);
                let mut claims = Vec::new();
                let mut batch = Vec::new();
                let mut turn = t;
                loop {
                    turn += 1;
                    let got = if turn % 2 == 0 {
                        s.steal()
                    } else {
                        s.steal_batch_and_pop(&local)
                    };
                    match got {
                        Steal::Success(v) => {
                            claims.push(v);
                            batch.clear();
                            batch.extend(std::iter::from_fn(|| local.pop()));
                            claims.extend(batch.iter().rev());
                        }
                        Steal::Retry => std::hint::spin_loop(),
                        // `done` is set after the owner's last push and its final drain:
                        // an Empty seen then is final (and the owner took whatever an
                        // earlier Empty missed).
                        Steal::Empty if done.load(Acquire) => break,
                        Steal::Empty => thread::yield_now(),
                    }
                }
                check_increasing(&claims, &format!("thief {t}"), &what);
                claims
            })
        })
        .collect();
    drop(stealer);

    let mut mine = Vec::with_capacity(N);
    let mut next = 0u64;
    let mut round = 0usize;
    while (next as usize) < N {
        round += 1;
        let burst = (round * 37 % 97 + 1).min(N - next as usize);
        if slow_owner && round % 4 == 0 {
            // A long job between pops (about 50 µs on the 2-core VM; not a timing assumption:
            // any pause long enough for a thief's few polls will do, and the caller repeats).
            for _ in 0..2_000 {
                std::hint::spin_loop();
            }
        }
        for _ in 0..burst {
            w.push(next);
            next += 1;
        }
        let pops = if round % 5 == 0 { burst } else { burst / 2 };
        for _ in 0..pops {
            match w.pop() {
                Some(v) => mine.push(v),
                None => break,
            }
        }
    }
    while let Some(v) = w.pop() {
        mine.push(v);
    }
    assert!(w.is_empty(), "{what}: the owner drained the deque");
    done.store(true, Release);

    let mut all = mine;
    let mut stolen = 0;
    for h in handles {
        let claims = join(h);
        stolen += claims.len();
        all.extend(claims);
    }
    check_exactly_once(&all, N, &what);
    assert!(w.is_empty() && w.pop().is_none(), "{what}: nothing left");
    let spells = w.fenced_spells_started();
    // Not an assertion on timing, just what happened (shown with --nocapture).
    println!("{what}: {stolen} of {N} stolen, {spells} fenced spells");
    spells
}

#[test]
fn exactly_once_one_thief() {
    exactly_once_with_thieves(1, 0);
}

#[test]
fn exactly_once_two_thieves() {
    exactly_once_with_thieves(2, 0);
}

#[test]
fn exactly_once_three_thieves() {
    exactly_once_with_thieves(3, 0);
}

#[test]
fn exactly_once_four_thieves() {
    exactly_once_with_thieves(4, 0);
}

#[test]
fn exactly_once_two_thieves_wrapping() {
    exactly_once_with_thieves(2, usize::MAX - WRAP_AHEAD);
}

#[test]
fn exactly_once_four_thieves_wrapping() {
    exactly_once_with_thieves(4, usize::MAX - WRAP_AHEAD);
}

#[test]
fn exactly_once_one_thief_asymmetric() {
    exactly_once_with_fences(1, 0, Fences::Asymmetric);
}

#[test]
fn exactly_once_two_thieves_asymmetric() {
    exactly_once_with_fences(2, 0, Fences::Asymmetric);
}

#[test]
fn exactly_once_four_thieves_asymmetric_wrapping() {
    exactly_once_with_fences(4, usize::MAX - WRAP_AHEAD, Fences::Asymmetric);
}

#[test]
fn exactly_once_two_thieves_through_fenced_spells_asymmetric() {
    exactly_once_through_fenced_spells(2, Fences::Asymmetric);
}

#[test]
fn exactly_once_two_thieves_through_fenced_spells_handshake_only() {
    exactly_once_through_fenced_spells(2, Fences::HandshakeOnly);
}

#[test]
fn exactly_once_two_thieves_handshake_only() {
    exactly_once_with_fences(2, 0, Fences::HandshakeOnly);
}

#[test]
fn exactly_once_four_thieves_handshake_only_wrapping() {
    exactly_once_with_fences(4, usize::MAX - WRAP_AHEAD, Fences::HandshakeOnly);
}

/// Thieves stealing from thieves: two workers each batch-steal from the owner into their own
/// deque, and steal from each other's, while a third thief steals from all three. Every item
/// once.
#[test]
fn exactly_once_thieves_stealing_from_thieves() {
    let n = scaled(50_000, 200);
    with_watchdog(WATCHDOG_SECS, "thieves stealing from thieves", move || {
        let w = Worker::new();
        let done = Arc::new(AtomicBool::new(false));
        let mids: Vec<Worker<u64>> = (0..2).map(|_| Worker::new()).collect();
        let mid_stealers: Vec<Stealer<u64>> = mids.iter().map(Worker::stealer).collect();
        let quiet = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        // The two middle workers, each owning one of `mids`.
        let middles: Vec<_> = mids
            .into_iter()
            .enumerate()
            .map(|(i, local)| {
                let from_owner = w.stealer();
                let from_peer = mid_stealers[1 - i].clone();
                let (done, quiet) = (Arc::clone(&done), Arc::clone(&quiet));
                thread::spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        // Batch from the owner; else one from the peer; else work off a pop.
                        let r = from_owner
                            .steal_batch_and_pop(&local)
                            .or_else(|| from_peer.steal());
                        match r {
                            Steal::Success(v) => got.push(v),
                            Steal::Retry => std::hint::spin_loop(),
                            Steal::Empty => match local.pop() {
                                Some(v) => got.push(v),
                                None if done.load(Acquire) => {
                                    // Nothing will enter `local` any more; the peer and the
                                    // outer thief may still take from it, but it is empty.
                                    quiet[i].store(true, Release);
                                    return got;
                                }
                                None => thread::yield_now(),
                            },
                        }
                        // Keep some in `local` for the others to steal: pop only every other
                        // round.
                        if got.len() % 2 == 0 {
                            if let Some(v) = local.pop() {
                                got.push(v);
                            }
                        }
                    }
                })
            })
            .collect();
        let outer = {
            let all: Vec<Stealer<u64>> = std::iter::once(w.stealer())
                .chain(mid_stealers.iter().cloned())
                .collect();
            let quiet = Arc::clone(&quiet);
            thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    let r: Steal<u64> = all.iter().map(Stealer::steal).collect();
                    match r {
                        Steal::Success(v) => got.push(v),
                        Steal::Retry => std::hint::spin_loop(),
                        Steal::Empty if quiet.iter().all(|q| q.load(Acquire)) => return got,
                        Steal::Empty => thread::yield_now(),
                    }
                }
            })
        };
        drop(mid_stealers);
        let mut all = Vec::new();
        for i in 0..n as u64 {
            w.push(i);
            if i % 4 == 3 {
                all.extend(w.pop());
            }
        }
        while let Some(v) = w.pop() {
            all.push(v);
        }
        done.store(true, Release);
        for m in middles {
            all.extend(join(m));
        }
        all.extend(join(outer));
        check_exactly_once(&all, n, "thieves stealing from thieves");
    });
}

/// The owner keeps its deque at one or two elements (push one, pop it back two times in three)
/// while thieves steal: nearly every pop races a steal for the last element, the race the two
/// fences decide. Every item once, with either kind of fences.
fn last_element_races(thieves: usize, fences: Fences) {
    let name = format!("last-element races, {thieves} thieves, {fences:?}");
    with_watchdog(WATCHDOG_SECS, &name.clone(), move || {
        for rep in 0..REPEATS {
            let w = worker_with(0, fences);
            let done = Arc::new(AtomicBool::new(false));
            let handles: Vec<_> = (0..thieves)
                .map(|_| {
                    let s = w.stealer();
                    let done = Arc::clone(&done);
                    thread::spawn(move || {
                        let mut got = Vec::new();
                        loop {
                            match s.steal() {
                                Steal::Success(v) => got.push(v),
                                Steal::Retry => std::hint::spin_loop(),
                                Steal::Empty if done.load(Acquire) => return got,
                                Steal::Empty => std::hint::spin_loop(),
                            }
                        }
                    })
                })
                .collect();
            let mut all = Vec::with_capacity(N);
            for i in 0..N as u64 {
                w.push(i);
                if i % 3 != 0 {
                    all.extend(w.pop());
                }
            }
            all.extend(std::iter::from_fn(|| w.pop()));
            done.store(true, Release);
            for h in handles {
                all.extend(join(h));
            }
            check_exactly_once(&all, N, &format!("{name}, round {rep}"));
        }
    });
}

#[test]
fn last_element_races_two_thieves() {
    last_element_races(2, Fences::Symmetric);
}

#[test]
fn last_element_races_two_thieves_asymmetric() {
    last_element_races(2, Fences::Asymmetric);
}

#[test]
fn last_element_races_two_thieves_handshake_only() {
    last_element_races(2, Fences::HandshakeOnly);
}
