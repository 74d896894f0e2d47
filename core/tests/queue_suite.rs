//! The behaviour suite every bounded queue must pass.
//!
//! Each scenario is a generic function over the queue; `queue_suite!(name, Queue::new)`
//! expands to a module of `#[test]`s that runs all of them against one queue type, so a new queue
//! joins the suite with one line at the bottom of this file.
//!
//! Some assertion messages are grepped by the mutant gate (`mutants/`): "spurious Full",
//! "capacity 3 lost values", "overwritten", "idle consumer burned". Keep them verbatim.

// Tests drive real std threads, atomics, barriers and sleeps against the crate; core/clippy.toml
// forbids those in the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::queue::{
    PopError, PopTimeoutError, PushError, PushTimeoutError, TryPopError, TryPushError,
};
use berth::{BoundedQueue, MutexQueue, ScqQueue, VyukovQueue};
#[cfg(target_os = "linux")]
use common::thread_cpu_time;
use common::{join, with_watchdog, DropCounter, DropCounts, WATCHDOG_SECS};
use std::rc::Rc;
use std::sync::atomic::{
    AtomicBool, AtomicUsize,
    Ordering::{AcqRel, Acquire, Relaxed, Release},
};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

/// A queue that threads can share: what every concurrent scenario needs.
pub trait SharedQueue<T>: BoundedQueue<T> + Send + Sync + 'static {}
impl<T, Q: BoundedQueue<T> + Send + Sync + 'static> SharedQueue<T> for Q {}

/// `normal`, or `miri` under Miri (which runs threads about a thousand times slower).
const fn scaled(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// How long a test lets other threads get into a blocking call before acting. Only a chance to
/// exercise the "woken while asleep" path: no assertion depends on it.
const SETTLE: Duration = Duration::from_millis(30);

// ---------------------------------------------------------------------------------------------
// 1. try_push never reports a lost race as Full
// ---------------------------------------------------------------------------------------------

/// 4 threads `try_push` 8 values each into a 64-slot queue, then take as many back out, over and
/// over: no thread ever has more than 8 values inside, so the queue never holds more than 32 of
/// 64 and any `Full` is spurious (the mutant `vyukov_lost_race_full` reports a lost CAS race as
/// Full).
///
/// The work is cut into rounds, each started by a barrier. A barrier wakes its waiters one by
/// one, microseconds apart, about as long as a batch of pushes takes, so each thread then also
/// checks in on a counter and waits (spinning, and yielding so that threads still waiting for a
/// core get one) until all 4 have checked in: the running threads start within nanoseconds of
/// each other, and each round runs many batches so they keep overlapping.
///
/// A race can only be lost while two pushes overlap, and on a machine whose other core is busy
/// they seldom do. So the test counts the pushes that visibly overlapped another (a shared ticket
/// moved while the push ran) and runs rounds until it has seen enough of them, or until a time
/// cap; correct code passes either way, only the detection power depends on the machine.
pub fn try_push_never_spuriously_full<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 8;
    const CAP: usize = 64;
    // A round is 8000 batches of 8 pushes per thread: tens of milliseconds, longer than a
    // scheduler time slice, so that threads sharing one core preempt each other mid-push.
    let batches = scaled(8_000, 4);
    let min_rounds = 2;
    // Of the mutant's overlapping pushes, about half lose a race (a fifth when the threads share
    // one core and overlap only by preemption): 200 overlaps leave no real chance to miss it.
    let enough_overlaps = scaled(200, 0);
    let time_cap = Duration::from_secs(3);
    with_watchdog(WATCHDOG_SECS, "spurious Full test (try_push)", move || {
        let q = Arc::new(make(CAP));
        let start = Arc::new(Barrier::new(THREADS + 1));
        let done = Arc::new(Barrier::new(THREADS + 1));
        let running = Arc::new(AtomicBool::new(true));
        let checked_in = Arc::new(AtomicUsize::new(0));
        let ticket = Arc::new(AtomicUsize::new(0));
        let overlaps = Arc::new(AtomicUsize::new(0));
        let rejected = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (q, start, done, running) = (
                    Arc::clone(&q),
                    Arc::clone(&start),
                    Arc::clone(&done),
                    Arc::clone(&running),
                );
                let (checked_in, ticket, overlaps, rejected) = (
                    Arc::clone(&checked_in),
                    Arc::clone(&ticket),
                    Arc::clone(&overlaps),
                    Arc::clone(&rejected),
                );
                thread::spawn(move || {
                    let mut pushed = 0usize;
                    let mut round = 0;
                    loop {
                        start.wait();
                        if !running.load(Acquire) {
                            return pushed;
                        }
                        checked_in.fetch_add(1, AcqRel);
                        let everyone = (round + 1) * THREADS;
                        let mut spins = 0u32;
                        while checked_in.load(Acquire) < everyone {
                            spins += 1;
                            if spins % 64 == 0 {
                                thread::yield_now();
                            } else {
                                std::hint::spin_loop();
                            }
                        }
                        let mut overlapped = 0;
                        for batch in 0..batches {
                            let mut accepted = 0;
                            for i in 0..PER_THREAD {
                                let seq = ((round * batches + batch) * THREADS + t) * PER_THREAD;
                                let v = (seq + i) as u64;
                                let before = ticket.load(Relaxed);
                                let r = q.try_push(v);
                                if ticket.fetch_add(1, Relaxed) != before {
                                    overlapped += 1;
                                }
                                match r {
                                    Ok(()) => accepted += 1,
                                    Err(TryPushError::Full(back)) => {
                                        assert_eq!(back, v, "Full handed back a different value");
                                        rejected.fetch_add(1, Relaxed);
                                    }
                                    Err(TryPushError::Closed(_)) => {
                                        panic!("try_push reported Closed on a queue nobody closed")
                                    }
                                }
                            }
                            pushed += accepted;
                            // Take as many back out (anyone's values): this thread's share of
                            // the queue is back to 0, and the queue holds at most 4 x 8 = 32.
                            let mut taken = 0;
                            while taken < accepted {
                                if q.try_pop().is_ok() {
                                    taken += 1;
                                }
                            }
                        }
                        overlaps.fetch_add(overlapped, Relaxed);
                        done.wait();
                        round += 1;
                    }
                })
            })
            .collect();
        let began = Instant::now();
        let mut rounds = 0;
        loop {
            let enough = rounds >= min_rounds
                && (overlaps.load(Relaxed) >= enough_overlaps || began.elapsed() >= time_cap);
            if enough {
                running.store(false, Release);
                start.wait();
                break;
            }
            start.wait();
            done.wait();
            assert!(
                q.is_empty(),
                "round {rounds}: every thread popped as many values as it pushed, yet {} are left",
                q.len()
            );
            rounds += 1;
        }
        let pushed: usize = workers.into_iter().map(join).sum();
        let n = rejected.load(Relaxed);
        let overlaps = overlaps.load(Relaxed);
        assert_eq!(
            n, 0,
            "spurious Full: {n} try_push calls were rejected while the queue never held more than 32 of 64 \
             ({rounds} rounds, {overlaps} pushes overlapped another, {:?})",
            began.elapsed()
        );
        assert_eq!(pushed, rounds * batches * THREADS * PER_THREAD);
        assert_eq!(q.try_pop(), Err(TryPopError::Empty));
    });
}

// ---------------------------------------------------------------------------------------------
// 2. capacity 3 (not a power of two) returns everything
// ---------------------------------------------------------------------------------------------

/// Fill and drain a capacity-3 queue lap after lap, then keep it part-full while values flow
/// through. The mutant `vyukov_pow2_mask` (index = pos & (cap - 1)) loses values here, and its
/// pops spin forever: hence the watchdog, whose message carries the same phrase.
pub fn capacity_3_returns_everything<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(WATCHDOG_SECS, "capacity 3 lost values", move || {
        let q = make(3);
        let mut next_in = 0u64;
        let mut next_out = 0u64;
        let push = |q: &Q, v: u64, held: usize| {
            if let Err(e) = q.try_push(v) {
                panic!(
                    "capacity 3 lost values: try_push({v}) failed ({e}) \
                     while the queue held {held} of 3"
                )
            }
        };
        let pop = |q: &Q, expect: u64| match q.try_pop() {
            Ok(v) => assert_eq!(
                v, expect,
                "capacity 3 lost values: popped {v}, expected {expect} (FIFO order)"
            ),
            Err(e) => panic!(
                "capacity 3 lost values: try_pop failed ({e}) while {expect} was still inside"
            ),
        };
        // Whole laps: fill 3, check Full, drain 3, check Empty.
        for _lap in 0..10 {
            for held in 0..3 {
                push(&q, next_in, held);
                next_in += 1;
            }
            match q.try_push(u64::MAX) {
                Err(TryPushError::Full(v)) => assert_eq!(v, u64::MAX),
                other => panic!(
                    "capacity 3 lost values: a 4th try_push returned {other:?} instead of Full"
                ),
            }
            for _ in 0..3 {
                pop(&q, next_out);
                next_out += 1;
            }
            assert_eq!(
                q.try_pop(),
                Err(TryPopError::Empty),
                "capacity 3 lost values: the drained queue still returned something"
            );
        }
        // Interleaved, keeping 1 and then 2 values inside so the ends are at every offset.
        for keep in 1..=2 {
            for _ in 0..keep {
                push(&q, next_in, 0);
                next_in += 1;
            }
            for _ in 0..20 {
                push(&q, next_in, keep);
                next_in += 1;
                pop(&q, next_out);
                next_out += 1;
            }
            for _ in 0..keep {
                pop(&q, next_out);
                next_out += 1;
            }
        }
        assert_eq!(
            (next_in, q.len()),
            (next_out, 0),
            "capacity 3 lost values: pushed {next_in}, popped {next_out}"
        );
    });
}

// ---------------------------------------------------------------------------------------------
// 3. capacity 1 never overwrites its live value
// ---------------------------------------------------------------------------------------------

/// The mutant `vyukov_cap1_overwrite` (Vyukov's numbering with one slot) accepts a second value
/// into a full one-slot queue, overwriting the first.
pub fn capacity_1_never_overwrites_alone<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "capacity 1 overwritten or lost values (single thread)",
        move || {
            let q = make(1);
            for lap in 0..10u64 {
                let (a, b) = (2 * lap, 2 * lap + 1);
                assert_eq!(
                    q.try_push(a),
                    Ok(()),
                    "lap {lap}: try_push into an empty capacity-1 queue"
                );
                match q.try_push(b) {
                    Err(TryPushError::Full(v)) => {
                        assert_eq!(v, b, "Full handed back another value")
                    }
                    Ok(()) => panic!(
                        "capacity 1 accepted a second value while full: \
                         the live value would be overwritten (lap {lap})"
                    ),
                    Err(TryPushError::Closed(_)) => panic!("Closed on an open queue"),
                }
                assert!(
                    q.is_full(),
                    "lap {lap}: a capacity-1 queue holding a value is full"
                );
                assert_eq!(
                    q.try_pop(),
                    Ok(a),
                    "capacity 1 returned the wrong value: \
                     the live value was overwritten (lap {lap})"
                );
                assert_eq!(
                    q.try_pop(),
                    Err(TryPopError::Empty),
                    "lap {lap}: one push, two pops"
                );
            }
        },
    );
}

/// 2 producers x 2000 drop-counted values with distinct ids through a capacity-1 queue to 2
/// consumers: every id exactly once, every value dropped exactly once.
pub fn capacity_1_never_overwrites_concurrent<Q: SharedQueue<DropCounter>>(make: fn(usize) -> Q) {
    const PRODUCERS: u64 = 2;
    const CONSUMERS: usize = 2;
    let per_producer = scaled(2_000, 30) as u64;
    with_watchdog(
        WATCHDOG_SECS,
        "capacity 1 overwritten or lost values (2 producers, 2 consumers)",
        move || {
            let counts = DropCounts::new();
            let q = Arc::new(make(1));
            let producers: Vec<_> = (0..PRODUCERS)
                .map(|p| {
                    let (q, counts) = (Arc::clone(&q), counts.clone());
                    thread::spawn(move || {
                        for i in 0..per_producer {
                            if q.push(counts.make(p * per_producer + i)).is_err() {
                                panic!("push failed on an open queue");
                            }
                        }
                    })
                })
                .collect();
            let consumers: Vec<_> = (0..CONSUMERS)
                .map(|_| {
                    let q = Arc::clone(&q);
                    thread::spawn(move || {
                        let mut ids = Vec::new();
                        while let Ok(v) = q.pop() {
                            ids.push(v.id());
                        }
                        ids
                    })
                })
                .collect();
            for p in producers {
                join(p);
            }
            assert!(q.close(), "the first close() returns true");
            let total = (PRODUCERS * per_producer) as usize;
            let mut seen = vec![false; total];
            for c in consumers {
                for id in join(c) {
                    let slot = seen
                        .get_mut(id as usize)
                        .unwrap_or_else(|| panic!("popped id {id}, which was never pushed"));
                    assert!(
                        !*slot,
                        "id {id} seen twice: a capacity-1 slot was read twice \
                         (or overwritten and re-read)"
                    );
                    *slot = true;
                }
            }
            if let Some(id) = seen.iter().position(|s| !s) {
                panic!("id {id} lost: a value was overwritten in the capacity-1 queue");
            }
            drop(q);
            assert_eq!(
                (counts.made(), counts.dropped()),
                (total, total),
                "constructions != drops: a value was overwritten (leaked) or dropped twice"
            );
        },
    );
}

// ---------------------------------------------------------------------------------------------
// 4. an idle consumer sleeps
// ---------------------------------------------------------------------------------------------

/// A consumer waiting 300 ms on an empty queue must sleep, not spin (the mutant
/// `wait_never_parks` yields forever instead). Beside it, a control thread that does spin on
/// `try_pop` until its own measure reaches 60 ms, showing that the measure sees CPU burn.
#[cfg(target_os = "linux")]
pub fn idle_consumer_sleeps<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    const WAIT: Duration = Duration::from_millis(300);
    const LIMIT: Duration = Duration::from_millis(30);
    const CONTROL_BURN: Duration = Duration::from_millis(60);
    const CONTROL_WALL_CAP: Duration = Duration::from_secs(30);
    with_watchdog(
        45,
        "idle consumer test (pop_timeout on an empty queue)",
        move || {
            let idle_q = Arc::new(make(4));
            let spin_q = Arc::new(make(4));
            let consumer = thread::spawn(move || {
                let before = thread_cpu_time();
                let r = idle_q.pop_timeout(WAIT);
                let used = thread_cpu_time().saturating_sub(before);
                (r, used)
            });
            let control = thread::spawn(move || {
                let start = Instant::now();
                let before = thread_cpu_time();
                loop {
                    assert_eq!(spin_q.try_pop(), Err(TryPopError::Empty), "nobody pushed");
                    let used = thread_cpu_time().saturating_sub(before);
                    if used >= CONTROL_BURN || start.elapsed() >= CONTROL_WALL_CAP {
                        return (used, start.elapsed());
                    }
                }
            });
            let (r, used) = join(consumer);
            let (control_used, control_wall) = join(control);
            assert_eq!(
                r,
                Err(PopTimeoutError::Timeout),
                "pop_timeout on an empty open queue"
            );
            assert!(
                control_used >= CONTROL_BURN,
                "the spinning control measured only {} ms of CPU in {:?}: \
                 the CPU measure cannot see a busy thread",
                control_used.as_millis(),
                control_wall
            );
            assert!(
                used < LIMIT,
                "idle consumer burned {} ms of CPU in a {} ms wait (limit {} ms)",
                used.as_millis(),
                WAIT.as_millis(),
                LIMIT.as_millis()
            );
        },
    );
}

// ---------------------------------------------------------------------------------------------
// 5. exactly-once delivery and per-producer FIFO
// ---------------------------------------------------------------------------------------------

fn encode(producer: usize, seq: usize) -> u64 {
    ((producer as u64) << 32) | seq as u64
}

fn decode(v: u64) -> (usize, usize) {
    ((v >> 32) as usize, (v & 0xffff_ffff) as usize)
}

/// `producers` threads push (blocking) `(id, seq)` values; `consumers` threads pop until the
/// queue is closed and drained; every value must arrive exactly once, and each consumer must see
/// each producer's values in increasing order. For capacities 2, 16 and 1024.
pub fn exactly_once_fifo<Q: SharedQueue<u64>>(
    make: fn(usize) -> Q,
    producers: usize,
    consumers: usize,
) {
    let per_producer = scaled(2_000, 40);
    for cap in [2, 16, 1024] {
        let what =
            format!("exactly-once ({producers} producers, {consumers} consumers, capacity {cap})");
        with_watchdog(WATCHDOG_SECS, &what.clone(), move || {
            exactly_once_fifo_run(make(cap), producers, consumers, per_producer, &what)
        });
    }
}

fn exactly_once_fifo_run<Q: SharedQueue<u64>>(
    q: Q,
    producers: usize,
    consumers: usize,
    per_producer: usize,
    what: &str,
) {
    let q = Arc::new(q);
    let pushers: Vec<_> = (0..producers)
        .map(|p| {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                for s in 0..per_producer {
                    if let Err(e) = q.push(encode(p, s)) {
                        panic!("push failed on an open queue: {e}");
                    }
                }
            })
        })
        .collect();
    let poppers: Vec<_> = (0..consumers)
        .map(|c| {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                let mut got = Vec::new();
                let mut last: Vec<Option<usize>> = vec![None; producers];
                while let Ok(v) = q.pop() {
                    let (p, s) = decode(v);
                    assert!(
                        p < producers && s < per_producer,
                        "consumer {c} popped {v:#x}, which was never pushed"
                    );
                    if let Some(prev) = last[p] {
                        assert!(
                            s > prev,
                            "per-producer FIFO broken: consumer {c} popped \
                             producer {p}'s item {s} after its item {prev}"
                        );
                    }
                    last[p] = Some(s);
                    got.push(v);
                }
                got
            })
        })
        .collect();
    for p in pushers {
        join(p);
    }
    assert!(q.close(), "{what}: the first close() returns true");
    let mut seen = vec![false; producers * per_producer];
    for c in poppers {
        for v in join(c) {
            let (p, s) = decode(v);
            let slot = &mut seen[p * per_producer + s];
            assert!(
                !*slot,
                "{what}: exactly-once broken: producer {p}'s item {s} was popped twice"
            );
            *slot = true;
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        panic!(
            "{what}: exactly-once broken: producer {}'s item {} was never popped",
            i / per_producer,
            i % per_producer
        );
    }
    assert!(q.is_empty(), "{what}: the drained queue is empty");
    assert_eq!(q.len(), 0, "{what}: the drained queue has length 0");
    assert_eq!(
        q.try_pop(),
        Err(TryPopError::Closed),
        "{what}: closed and drained"
    );
}

// ---------------------------------------------------------------------------------------------
// 6. close
// ---------------------------------------------------------------------------------------------

/// Four threads blocked in `push` on a full capacity-1 queue: `close` wakes them all, and each
/// gets its own value back.
pub fn close_wakes_blocked_pushers<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "close did not wake every thread blocked in push",
        move || {
            let q = Arc::new(make(1));
            q.try_push(1_000).expect("an empty queue takes a value");
            let ready = Arc::new(Barrier::new(5));
            let pushers: Vec<_> = (0..4u64)
                .map(|i| {
                    let (q, ready) = (Arc::clone(&q), Arc::clone(&ready));
                    thread::spawn(move || {
                        ready.wait();
                        q.push(i)
                    })
                })
                .collect();
            ready.wait();
            thread::sleep(SETTLE);
            assert!(!q.is_closed());
            assert!(q.close(), "the first close() must return true");
            assert!(q.is_closed(), "is_closed() after close()");
            for (i, h) in pushers.into_iter().enumerate() {
                match join(h) {
                    Err(PushError(v)) => assert_eq!(
                        v, i as u64,
                        "a push woken by close handed back another thread's value"
                    ),
                    Ok(()) => panic!("push({i}) succeeded into a full queue that was then closed"),
                }
            }
            assert!(!q.close(), "a second close() must return false");
            assert_eq!(q.len(), 1, "close keeps the values inside");
            assert_eq!(
                q.try_pop(),
                Ok(1_000),
                "values inside can be popped after close"
            );
            assert_eq!(q.try_pop(), Err(TryPopError::Closed));
        },
    );
}

/// Four threads blocked in `pop` on an empty queue: `close` wakes them all with `PopError`.
pub fn close_wakes_blocked_poppers<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "close did not wake every thread blocked in pop",
        move || {
            let q = Arc::new(make(4));
            let ready = Arc::new(Barrier::new(5));
            let poppers: Vec<_> = (0..4)
                .map(|_| {
                    let (q, ready) = (Arc::clone(&q), Arc::clone(&ready));
                    thread::spawn(move || {
                        ready.wait();
                        q.pop()
                    })
                })
                .collect();
            ready.wait();
            thread::sleep(SETTLE);
            assert!(q.close(), "the first close() must return true");
            for h in poppers {
                assert_eq!(
                    join(h),
                    Err(PopError),
                    "a pop woken by close on an empty queue"
                );
            }
            assert!(!q.close(), "a second close() must return false");
        },
    );
}

/// Threads blocked in `push_timeout` / `pop_timeout` with long timeouts are woken by close too,
/// and report `Closed`, not `Timeout`.
pub fn close_wakes_timed_waiters<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "close did not wake threads blocked in push_timeout/pop_timeout",
        move || {
            let long = Duration::from_secs(3_600);
            let full = Arc::new(make(1));
            full.try_push(7).expect("an empty queue takes a value");
            let empty = Arc::new(make(1));
            let ready = Arc::new(Barrier::new(3));
            let pusher = {
                let (q, ready) = (Arc::clone(&full), Arc::clone(&ready));
                thread::spawn(move || {
                    ready.wait();
                    q.push_timeout(8, long)
                })
            };
            let popper = {
                let (q, ready) = (Arc::clone(&empty), Arc::clone(&ready));
                thread::spawn(move || {
                    ready.wait();
                    q.pop_timeout(long)
                })
            };
            ready.wait();
            thread::sleep(SETTLE);
            assert!(full.close());
            assert!(empty.close());
            match join(pusher) {
                Err(PushTimeoutError::Closed(v)) => assert_eq!(v, 8),
                other => {
                    panic!("push_timeout woken by close returned {other:?}, expected Closed(8)")
                }
            }
            assert_eq!(join(popper), Err(PopTimeoutError::Closed));
        },
    );
}

/// A queue closed while empty stays "closed", never "empty", for every pop of every thread,
/// even when several pop at once (found by the fuzz target `two_threads`: two threads popping a
/// closed, empty `ScqQueue` got `Empty` and `Timeout` after they had already seen `Closed`).
pub fn closed_empty_stays_closed_under_concurrent_pops<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(WATCHDOG_SECS, "closed_empty_stays_closed", move || {
        for _ in 0..scaled(2_000, 3) {
            let q = Arc::new(make(1));
            q.close();
            let barrier = Arc::new(std::sync::Barrier::new(2));
            let poppers: Vec<_> = (0..2)
                .map(|k| {
                    let (q, barrier) = (Arc::clone(&q), Arc::clone(&barrier));
                    thread::spawn(move || {
                        barrier.wait();
                        for _ in 0..scaled(200, 5) {
                            if k == 0 {
                                assert_eq!(q.try_pop(), Err(TryPopError::Closed), "try_pop");
                            } else {
                                assert_eq!(
                                    q.pop_timeout(Duration::ZERO),
                                    Err(PopTimeoutError::Closed),
                                    "pop_timeout"
                                );
                            }
                        }
                    })
                })
                .collect();
            for p in poppers {
                p.join()
                    .expect("a closed, empty queue answered something but Closed");
            }
        }
    });
}

/// After close: pushes of every kind fail with the value back, pops drain what is left, then
/// report closed.
pub fn close_then_drain<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "close_then_drain (single thread)",
        move || close_then_drain_body(make),
    );
}

fn close_then_drain_body<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    let q = make(4);
    for v in 0..3 {
        q.try_push(v).expect("room for 3 in 4");
    }
    assert!(q.close(), "the first close() must return true");
    assert!(!q.close(), "a second close() must return false");
    assert!(q.is_closed());
    assert_eq!(q.len(), 3, "close keeps the values inside");
    assert!(!q.is_empty() && !q.is_full());
    assert_eq!(q.try_push(9), Err(TryPushError::Closed(9)));
    assert!(matches!(q.push(10), Err(PushError(10))));
    assert_eq!(
        q.push_timeout(11, Duration::from_millis(10)),
        Err(PushTimeoutError::Closed(11))
    );
    assert_eq!(
        q.push_timeout(12, Duration::ZERO),
        Err(PushTimeoutError::Closed(12))
    );
    assert_eq!(q.len(), 3, "failed pushes change nothing");
    assert_eq!(q.try_pop(), Ok(0));
    assert_eq!(q.pop(), Ok(1));
    assert_eq!(q.pop_timeout(Duration::from_millis(10)), Ok(2));
    assert!(q.is_empty());
    assert_eq!(q.try_pop(), Err(TryPopError::Closed));
    assert_eq!(q.pop(), Err(PopError));
    assert_eq!(
        q.pop_timeout(Duration::from_millis(10)),
        Err(PopTimeoutError::Closed)
    );
    assert_eq!(q.pop_timeout(Duration::ZERO), Err(PopTimeoutError::Closed));

    // Closing a full queue: pushes report Closed (not Full or Timeout), pops still drain.
    let q = make(2);
    q.try_push(1).expect("room");
    q.try_push(2).expect("room");
    assert!(q.close());
    assert!(q.is_full(), "close keeps the values inside");
    assert_eq!(q.try_push(3), Err(TryPushError::Closed(3)));
    assert_eq!(
        q.push_timeout(4, Duration::from_millis(10)),
        Err(PushTimeoutError::Closed(4))
    );
    assert_eq!((q.pop(), q.pop(), q.pop()), (Ok(1), Ok(2), Err(PopError)));
}

// ---------------------------------------------------------------------------------------------
// 7. timeouts
// ---------------------------------------------------------------------------------------------

/// `push_timeout` on a full queue and `pop_timeout` on an empty one time out after (not before)
/// the timeout, and the push hands its value back.
pub fn timeouts_hand_the_value_back<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "timeouts_hand_the_value_back (single thread)",
        move || timeouts_hand_the_value_back_body(make),
    );
}

fn timeouts_hand_the_value_back_body<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    let t = Duration::from_millis(20);
    let q = make(2);
    let start = Instant::now();
    assert_eq!(q.pop_timeout(t), Err(PopTimeoutError::Timeout));
    assert!(start.elapsed() >= t, "pop_timeout timed out early");
    assert_eq!(q.pop_timeout(Duration::ZERO), Err(PopTimeoutError::Timeout));

    assert_eq!(
        q.push_timeout(1, Duration::ZERO),
        Ok(()),
        "room: no wait needed"
    );
    assert_eq!(q.push_timeout(2, t), Ok(()));
    let start = Instant::now();
    match q.push_timeout(77, t) {
        Err(PushTimeoutError::Timeout(v)) => {
            assert_eq!(v, 77, "push_timeout handed back another value")
        }
        other => panic!("push_timeout on a full queue returned {other:?}, expected Timeout(77)"),
    }
    assert!(start.elapsed() >= t, "push_timeout timed out early");
    assert_eq!(
        q.push_timeout(78, Duration::ZERO),
        Err(PushTimeoutError::Timeout(78))
    );
    assert_eq!(q.len(), 2, "timed-out pushes change nothing");
    assert_eq!(q.pop_timeout(Duration::ZERO), Ok(1));
    assert_eq!(q.pop_timeout(t), Ok(2));
    assert!(!q.is_closed(), "timeouts do not close");
}

/// A value pushed while a consumer waits in `pop_timeout` is received; room made while a
/// producer waits in `push_timeout` is used.
pub fn timed_waits_see_the_other_side<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "a thread in pop_timeout/push_timeout missed its wakeup",
        move || {
            let long = Duration::from_secs(3_600);
            let q = Arc::new(make(1));
            let consumer = {
                let q = Arc::clone(&q);
                thread::spawn(move || q.pop_timeout(long))
            };
            thread::sleep(SETTLE);
            q.push(42).expect("open");
            assert_eq!(
                join(consumer),
                Ok(42),
                "pop_timeout must receive a value pushed while it waits"
            );

            q.push(1).expect("open");
            let producer = {
                let q = Arc::clone(&q);
                thread::spawn(move || q.push_timeout(2, long))
            };
            thread::sleep(SETTLE);
            assert_eq!(q.pop(), Ok(1));
            assert_eq!(
                join(producer),
                Ok(()),
                "push_timeout must use room made while it waits"
            );
            assert_eq!(q.pop(), Ok(2));
        },
    );
}

// ---------------------------------------------------------------------------------------------
// 8. drop accounting
// ---------------------------------------------------------------------------------------------

fn assert_balanced(counts: &DropCounts, what: &str) {
    assert_eq!(
        counts.made(),
        counts.dropped(),
        "{what}: {} values made, {} dropped (a leak or a double drop)",
        counts.made(),
        counts.dropped()
    );
}

/// Dropping a queue drops every value still inside exactly once, wherever the ends of the ring
/// are; closing does not change that; popped values and values handed back in errors belong to
/// the caller.
pub fn drop_accounting<Q: SharedQueue<DropCounter>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "drop_accounting (single thread)",
        move || drop_accounting_body(make),
    );
}

fn drop_accounting_body<Q: SharedQueue<DropCounter>>(make: fn(usize) -> Q) {
    for cap in [1, 2, 3, 5, 8] {
        for k in 0..=cap {
            // k values from a fresh queue.
            let counts = DropCounts::new();
            let q = make(cap);
            for i in 0..k {
                q.try_push(counts.make(i as u64)).expect("room");
            }
            drop(q);
            assert_balanced(&counts, &format!("dropping a queue holding {k} of {cap}"));

            // k values after the ends have moved by `shift`, so the live values wrap the ring.
            for shift in 1..=cap {
                let counts = DropCounts::new();
                let q = make(cap);
                for i in 0..shift {
                    q.try_push(counts.make(i as u64)).expect("room");
                    drop(q.try_pop().expect("just pushed"));
                }
                for i in 0..k {
                    q.try_push(counts.make(i as u64)).expect("room");
                }
                assert_eq!(q.len(), k);
                drop(q);
                assert_balanced(
                    &counts,
                    &format!("dropping a queue holding {k} of {cap} after shifting by {shift}"),
                );
            }

            // k values, closed, then dropped.
            let counts = DropCounts::new();
            let q = make(cap);
            for i in 0..k {
                q.try_push(counts.make(i as u64)).expect("room");
            }
            assert!(q.close());
            drop(q);
            assert_balanced(
                &counts,
                &format!("dropping a closed queue holding {k} of {cap}"),
            );
        }
    }

    // Popped values and values handed back are the caller's: the queue does not drop them.
    let counts = DropCounts::new();
    let q = make(2);
    q.try_push(counts.make(0)).expect("room");
    q.try_push(counts.make(1)).expect("room");
    let full = q.try_push(counts.make(2)).expect_err("full");
    let timed_out = q
        .push_timeout(counts.make(3), Duration::ZERO)
        .expect_err("full");
    assert_eq!(
        counts.dropped(),
        0,
        "a rejected push must hand its value back, not drop it"
    );
    assert_eq!(full.into_inner().id(), 2);
    assert_eq!(timed_out.into_inner().id(), 3);
    assert_eq!(
        counts.dropped(),
        2,
        "the caller dropped the two handed-back values"
    );
    let popped = q.try_pop().expect("two inside");
    assert_eq!(popped.id(), 0);
    assert_eq!(
        counts.dropped(),
        2,
        "a popped value is not dropped by the queue"
    );
    drop(popped);
    assert_eq!(counts.dropped(), 3);
    assert!(q.close());
    let closed = q.try_push(counts.make(4)).expect_err("closed");
    let pushed_closed = q.push(counts.make(5)).expect_err("closed");
    assert_eq!(
        counts.dropped(),
        3,
        "a push into a closed queue hands the value back"
    );
    assert_eq!(closed.into_inner().id(), 4);
    assert_eq!(pushed_closed.into_inner().id(), 5);
    assert_eq!(counts.dropped(), 5);
    drop(q);
    assert_balanced(&counts, "the end of the hand-back scenario");
}

// ---------------------------------------------------------------------------------------------
// 9. construction, capacity, len, static properties
// ---------------------------------------------------------------------------------------------

pub fn new_zero<Q: BoundedQueue<u64>>(make: fn(usize) -> Q) {
    let _q = make(0);
}

pub fn new_usize_max<Q: BoundedQueue<u8>>(make: fn(usize) -> Q) {
    let _q = make(usize::MAX);
}

/// For capacities 1..=70: exactly `capacity` values fit (the next try_push is Full), and len,
/// is_empty and is_full agree at every step, over two laps of the ring.
pub fn capacity_is_exact<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "capacity_is_exact (single thread)",
        move || capacity_is_exact_body(make),
    );
}

fn capacity_is_exact_body<Q: SharedQueue<u64>>(make: fn(usize) -> Q) {
    for cap in 1..=scaled(70, 9) {
        let q = make(cap);
        assert_eq!(q.capacity(), cap, "capacity() of a queue made with {cap}");
        let check = |q: &Q, len: usize| {
            assert_eq!(q.len(), len, "capacity {cap}: len()");
            assert_eq!(
                q.is_empty(),
                len == 0,
                "capacity {cap}, len {len}: is_empty()"
            );
            assert_eq!(
                q.is_full(),
                len == cap,
                "capacity {cap}, len {len}: is_full()"
            );
        };
        let mut next = 0u64;
        for _lap in 0..2 {
            check(&q, 0);
            for i in 0..cap {
                assert_eq!(
                    q.try_push(next + i as u64),
                    Ok(()),
                    "capacity {cap}: try_push number {} was rejected",
                    i + 1
                );
                check(&q, i + 1);
            }
            assert_eq!(
                q.try_push(u64::MAX),
                Err(TryPushError::Full(u64::MAX)),
                "capacity {cap}: push number {} must be Full",
                cap + 1
            );
            check(&q, cap);
            for i in 0..cap {
                assert_eq!(
                    q.try_pop(),
                    Ok(next + i as u64),
                    "capacity {cap}: FIFO order"
                );
                check(&q, cap - i - 1);
            }
            assert_eq!(
                q.try_pop(),
                Err(TryPopError::Empty),
                "capacity {cap}: drained"
            );
            next += cap as u64;
            // Shift the ends by one so the second lap starts mid-ring.
            q.try_push(next).expect("room");
            assert_eq!(q.try_pop(), Ok(next));
            next += 1;
        }
        assert_eq!(q.capacity(), cap, "capacity() never changes");
    }
}

/// Queues of `Send` values are `Send + Sync`, even when the values are not `Sync` (values are
/// moved through, never shared).
pub fn is_send_sync<
    Q: BoundedQueue<u64> + Send + Sync,
    R: BoundedQueue<std::cell::Cell<u64>> + Send + Sync,
>(
    _: fn(usize) -> Q,
    _: fn(usize) -> R,
) {
}

/// Compiles only where `T` is not `Sync`: if it were, both impls below would apply and the call
/// would be ambiguous (the trick behind `static_assertions::assert_not_impl_any`).
pub trait AmbiguousIfSync<A> {}
impl<T: ?Sized> AmbiguousIfSync<()> for T {}
pub struct IsSync;
impl<T: ?Sized + Sync> AmbiguousIfSync<IsSync> for T {}
pub fn assert_not_sync<T: ?Sized + AmbiguousIfSync<A>, A>(_: &T) {}

/// As [`AmbiguousIfSync`], for `Send`.
pub trait AmbiguousIfSend<A> {}
impl<T: ?Sized> AmbiguousIfSend<()> for T {}
pub struct IsSend;
impl<T: ?Sized + Send> AmbiguousIfSend<IsSend> for T {}
pub fn assert_not_send<T: ?Sized + AmbiguousIfSend<A>, A>(_: &T) {}

/// A queue of `Rc`s (neither `Send` nor `Sync`), used single-threaded; the caller, where the
/// queue's type is concrete, asserts the queue is neither `Send` nor `Sync`.
pub fn rc_queue<Q: BoundedQueue<Rc<u8>>>(make: fn(usize) -> Q) -> Q {
    let q = make(1);
    let rc = Rc::new(5);
    q.try_push(Rc::clone(&rc)).expect("room");
    assert_eq!(Rc::strong_count(&rc), 2);
    assert_eq!(q.try_pop().map(|r| *r), Ok(5));
    assert_eq!(Rc::strong_count(&rc), 1, "the popped clone was dropped");
    q
}

/// A value type without `Debug`.
pub struct NotDebug(pub u8);

/// The push errors are `Debug` without `T: Debug` (the value is elided), so `expect`,
/// `unwrap_err` and `{:?}` work on a queue of any values.
pub fn push_errors_need_no_debug<Q: SharedQueue<NotDebug>>(make: fn(usize) -> Q) {
    with_watchdog(
        WATCHDOG_SECS,
        "push_errors_need_no_debug (single thread)",
        move || {
            let q = make(2);
            q.try_push(NotDebug(1)).expect("room");
            q.push(NotDebug(2)).expect("room");
            let e = q.try_push(NotDebug(3)).unwrap_err();
            assert!(format!("{e:?}").contains("Full"), "{e:?}");
            assert_eq!(e.into_inner().0, 3);
            let e = q.push_timeout(NotDebug(4), Duration::ZERO).unwrap_err();
            assert!(format!("{e:?}").contains("Timeout"), "{e:?}");
            assert_eq!(e.into_inner().0, 4);
            assert!(q.close());
            let e = q.push(NotDebug(5)).unwrap_err();
            assert!(format!("{e:?}").contains("PushError"), "{e:?}");
            assert_eq!(e.into_inner().0, 5);
            assert_eq!(q.try_pop().map(|v| v.0), Ok(1));
            assert_eq!(q.pop().map(|v| v.0), Ok(2));
        },
    );
}

// ---------------------------------------------------------------------------------------------
// The error types (queue-independent)
// ---------------------------------------------------------------------------------------------

mod errors {
    use super::*;
    use std::error::Error;

    fn check_message(e: &dyn Error) {
        let s = e.to_string();
        let first = s.chars().next().expect("an error message is not empty");
        assert!(
            first.is_lowercase(),
            "error messages start lowercase (Rust API guidelines): {s:?}"
        );
        assert!(
            !s.ends_with('.'),
            "error messages have no trailing period: {s:?}"
        );
    }

    #[test]
    fn display_is_lowercase_without_period() {
        check_message(&TryPushError::Full(()));
        check_message(&TryPushError::Closed(()));
        check_message(&PushError(()));
        check_message(&PushTimeoutError::Timeout(()));
        check_message(&PushTimeoutError::Closed(()));
        check_message(&TryPopError::Empty);
        check_message(&TryPopError::Closed);
        check_message(&PopError);
        check_message(&PopTimeoutError::Timeout);
        check_message(&PopTimeoutError::Closed);
        assert_ne!(
            TryPushError::Full(()).to_string(),
            TryPushError::Closed(()).to_string(),
            "Full and Closed say different things"
        );
        assert_ne!(
            TryPopError::Empty.to_string(),
            TryPopError::Closed.to_string()
        );
        assert_ne!(
            PopTimeoutError::Timeout.to_string(),
            PopTimeoutError::Closed.to_string()
        );
    }

    #[test]
    fn debug_without_debug_values() {
        assert!(format!("{:?}", TryPushError::Full(NotDebug(0))).contains("Full"));
        assert!(format!("{:?}", TryPushError::Closed(NotDebug(0))).contains("Closed"));
        assert!(format!("{:?}", PushError(NotDebug(0))).contains("PushError"));
        assert!(format!("{:?}", PushTimeoutError::Timeout(NotDebug(0))).contains("Timeout"));
        assert!(format!("{:?}", PushTimeoutError::Closed(NotDebug(0))).contains("Closed"));
        let e: Box<dyn Error> = Box::new(TryPushError::Full(NotDebug(0)));
        assert!(!e.to_string().is_empty());
    }

    #[test]
    fn into_inner_and_predicates() {
        let e = TryPushError::Full(1);
        assert!(e.is_full() && !e.is_closed());
        assert_eq!(e.into_inner(), 1);
        let e = TryPushError::Closed(2);
        assert!(e.is_closed() && !e.is_full());
        assert_eq!(e.into_inner(), 2);
        assert_eq!(PushError(3).into_inner(), 3);
        assert_eq!(PushError(3).0, 3);
        let e = PushTimeoutError::Timeout(4);
        assert!(e.is_timeout() && !e.is_closed());
        assert_eq!(e.into_inner(), 4);
        let e = PushTimeoutError::Closed(5);
        assert!(e.is_closed() && !e.is_timeout());
        assert_eq!(e.into_inner(), 5);
        assert!(TryPopError::Empty.is_empty() && !TryPopError::Empty.is_closed());
        assert!(TryPopError::Closed.is_closed() && !TryPopError::Closed.is_empty());
        assert!(PopTimeoutError::Timeout.is_timeout() && !PopTimeoutError::Timeout.is_closed());
        assert!(PopTimeoutError::Closed.is_closed() && !PopTimeoutError::Closed.is_timeout());
    }

    #[test]
    fn conversions_from_the_blocking_errors() {
        assert_eq!(TryPushError::from(PushError(6)), TryPushError::Closed(6));
        assert_eq!(
            PushTimeoutError::from(PushError(7)),
            PushTimeoutError::Closed(7)
        );
        assert_eq!(TryPopError::from(PopError), TryPopError::Closed);
        assert_eq!(PopTimeoutError::from(PopError), PopTimeoutError::Closed);
    }
}

// ---------------------------------------------------------------------------------------------
// The suite, once per queue
// ---------------------------------------------------------------------------------------------

/// `queue_suite!(module_name, Queue::new)`: every scenario above as a `#[test]`, for the queue
/// that `Queue::new(capacity)` makes (any `fn(usize) -> Queue<T>`, the value type inferred per
/// scenario).
macro_rules! queue_suite {
    ($name:ident, $make:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn try_push_never_spuriously_full() {
                super::try_push_never_spuriously_full($make);
            }

            #[test]
            fn capacity_3_returns_everything() {
                super::capacity_3_returns_everything($make);
            }

            #[test]
            fn capacity_1_never_overwrites() {
                super::capacity_1_never_overwrites_alone($make);
                super::capacity_1_never_overwrites_concurrent($make);
            }

            #[test]
            #[cfg(target_os = "linux")]
            #[cfg_attr(miri, ignore = "getrusage is not available under Miri")]
            fn idle_consumer_sleeps() {
                super::idle_consumer_sleeps($make);
            }

            #[test]
            fn exactly_once_fifo_1x1() {
                super::exactly_once_fifo($make, 1, 1);
            }

            #[test]
            fn exactly_once_fifo_2x2() {
                super::exactly_once_fifo($make, 2, 2);
            }

            #[test]
            fn exactly_once_fifo_4x4() {
                super::exactly_once_fifo($make, 4, 4);
            }

            #[test]
            fn exactly_once_fifo_8x1() {
                super::exactly_once_fifo($make, 8, 1);
            }

            #[test]
            fn exactly_once_fifo_1x8() {
                super::exactly_once_fifo($make, 1, 8);
            }

            #[test]
            fn close_wakes_blocked_pushers() {
                super::close_wakes_blocked_pushers($make);
            }

            #[test]
            fn close_wakes_blocked_poppers() {
                super::close_wakes_blocked_poppers($make);
            }

            #[test]
            fn close_wakes_timed_waiters() {
                super::close_wakes_timed_waiters($make);
            }

            #[test]
            fn closed_empty_stays_closed_under_concurrent_pops() {
                super::closed_empty_stays_closed_under_concurrent_pops($make);
            }

            #[test]
            fn close_then_drain() {
                super::close_then_drain($make);
            }

            #[test]
            fn timeouts_hand_the_value_back() {
                super::timeouts_hand_the_value_back($make);
            }

            #[test]
            fn timed_waits_see_the_other_side() {
                super::timed_waits_see_the_other_side($make);
            }

            #[test]
            fn drop_accounting() {
                super::drop_accounting($make);
            }

            #[test]
            #[should_panic(expected = "at least 1")]
            fn new_zero_panics() {
                super::new_zero($make);
            }

            #[test]
            #[should_panic(expected = "too large")]
            fn new_usize_max_panics() {
                super::new_usize_max($make);
            }

            #[test]
            fn capacity_is_exact() {
                super::capacity_is_exact($make);
            }

            #[test]
            fn push_errors_need_no_debug() {
                super::push_errors_need_no_debug($make);
            }

            #[test]
            fn send_sync() {
                super::is_send_sync($make, $make);
                let q = super::rc_queue($make);
                super::assert_not_sync(&q);
                super::assert_not_send(&q);
            }
        }
    };
}

queue_suite!(mutex, MutexQueue::new);
queue_suite!(vyukov, VyukovQueue::new);
queue_suite!(scq, ScqQueue::new);
