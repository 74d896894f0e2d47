//! A warmed-up SPSC ring makes no allocator call: a stream of values between one producer thread
//! and one consumer thread, with a counting global allocator.
//!
//! What may allocate, and why warm-up takes care of it: the parker of a thread that blocks (a
//! thread-local, made on first use, with its TLS destructor registration) and the `VecDeque` of
//! a wait list (on its first registration). The warm-up makes each side block at least once on
//! its own (the other side holds back until `/proc` shows the blocked thread asleep, so this
//! does not depend on timing): the consumer on an empty ring, the producer on a full one. The
//! ring's slots are allocated once, by `channel`.
//!
//! Only the two worker threads are counted, and only between the moment each turns its own
//! switch on (after warm-up, with every buffer the test itself needs already allocated) and the
//! moment it turns it off; nothing in between prints, formats or grows a collection. The tests
//! of this file run one at a time (a lock), so one's allocations never reach another's count.

// Tests drive real std threads and atomics against the crate; core/clippy.toml forbids them in
// the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::spsc::{self, Consumer, Producer};
use common::{current_tid, join, wait_until_asleep, with_watchdog, WATCHDOG_SECS};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{set_counting, ALLOCS, DEALLOCS};

/// One test of this file at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `normal`, or `miri` under Miri.
const fn scaled(normal: u64, miri: u64) -> u64 {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

const WARMUP: u64 = scaled(10_000, 100);
const MEASURED: u64 = scaled(100_000, 300);
/// How many times each side is made to block during warm-up.
const HANDSHAKES: u64 = 3;

/// The state the two threads share; everything is allocated before the window.
struct Shared {
    producer_tid: AtomicI64,
    consumer_tid: AtomicI64,
    /// Values the consumer has taken.
    received: AtomicU64,
    /// Set by the consumer just before it calls pop on what it knows is an empty ring.
    consumer_waiting: AtomicU64,
    /// Set by the producer just before it calls push on what it knows is a full ring.
    producer_waiting: AtomicU64,
    /// Both threads are warmed up and may start counting.
    go: AtomicBool,
    /// `NOBODY`, or the worker that panicked first.
    failed: AtomicUsize,
}

const NOBODY: usize = 0;
const PRODUCER: usize = 1;
const CONSUMER: usize = 2;

/// Spins (yielding) until `cond` holds; a worker whose partner panicked panics too, rather than
/// waiting forever for it.
fn spin_until(shared: &Shared, mut cond: impl FnMut() -> bool) {
    while !cond() {
        if shared.failed.load(SeqCst) != NOBODY {
            panic!("the other thread of the stream failed");
        }
        thread::yield_now();
    }
}

/// Records in `Shared::failed` that this worker panicked (the first one to do so).
struct FailGuard<'a> {
    shared: &'a Shared,
    who: usize,
}

impl Drop for FailGuard<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            let _ = self
                .shared
                .failed
                .compare_exchange(NOBODY, self.who, SeqCst, SeqCst);
        }
    }
}

/// The producer's stream: `first..first + n`, blocking while the ring is full.
fn stream_push(tx: &mut Producer<u64>, first: u64, n: u64) {
    for v in first..first + n {
        if tx.push(v).is_err() {
            panic!("push failed while the consumer is alive");
        }
    }
}

/// The consumer's stream: expects `first..first + n` in order.
fn stream_pop(rx: &mut Consumer<u64>, shared: &Shared, first: u64, n: u64) {
    for want in first..first + n {
        match rx.pop() {
            Ok(v) if v == want => {}
            // Panicking formats (allocates): only on a failure, which ends the test anyway.
            Ok(v) => panic!("popped {v}, expected {want}"),
            Err(_) => panic!("pop failed while the producer is alive"),
        }
        shared.received.store(want + 1, SeqCst);
    }
}

/// Warms up, then counts the allocator calls of a measured stream through a ring of
/// `capacity`; returns (allocs, deallocs).
fn measure(capacity: usize) -> (usize, usize) {
    let (mut tx, mut rx) = spsc::channel::<u64>(capacity);
    let cap = capacity as u64;
    let shared = Arc::new(Shared {
        producer_tid: AtomicI64::new(0),
        consumer_tid: AtomicI64::new(0),
        received: AtomicU64::new(0),
        consumer_waiting: AtomicU64::new(0),
        producer_waiting: AtomicU64::new(0),
        go: AtomicBool::new(false),
        failed: AtomicUsize::new(NOBODY),
    });
    ALLOCS.store(0, SeqCst);
    DEALLOCS.store(0, SeqCst);
    let done_counting = Arc::new(AtomicUsize::new(0));
    let producer = {
        let (shared, done_counting) = (Arc::clone(&shared), Arc::clone(&done_counting));
        thread::spawn(move || {
            let _guard = FailGuard {
                shared: &shared,
                who: PRODUCER,
            };
            shared.producer_tid.store(current_tid(), SeqCst);
            let mut next = 0;
            // Warm-up 1: the consumer blocks on an empty ring, several times.
            for round in 1..=HANDSHAKES {
                spin_until(&shared, || shared.consumer_waiting.load(SeqCst) == round);
                wait_until_asleep(
                    shared.consumer_tid.load(SeqCst),
                    "the consumer blocked in pop on an empty ring",
                );
                tx.push(next).expect("connected");
                next += 1;
                spin_until(&shared, || shared.received.load(SeqCst) == next);
            }
            // Warm-up 2: the producer blocks on a full ring, several times.
            for round in 1..=HANDSHAKES {
                for _ in 0..cap {
                    tx.push(next).expect("connected");
                    next += 1;
                }
                shared.producer_waiting.store(round, SeqCst);
                tx.push(next).expect("connected"); // blocks until the consumer pops
                next += 1;
                spin_until(&shared, || shared.received.load(SeqCst) == next);
            }
            // Warm-up 3: a stream, as the measured one will be.
            stream_push(&mut tx, next, WARMUP);
            next += WARMUP;
            spin_until(&shared, || shared.received.load(SeqCst) == next);
            // The window.
            spin_until(&shared, || shared.go.load(SeqCst));
            set_counting(true);
            stream_push(&mut tx, next, MEASURED);
            set_counting(false);
            done_counting.fetch_add(1, SeqCst);
            tx
        })
    };
    let consumer = {
        let (shared, done_counting) = (Arc::clone(&shared), Arc::clone(&done_counting));
        thread::spawn(move || {
            let _guard = FailGuard {
                shared: &shared,
                who: CONSUMER,
            };
            shared.consumer_tid.store(current_tid(), SeqCst);
            let mut next = 0;
            for round in 1..=HANDSHAKES {
                shared.consumer_waiting.store(round, SeqCst);
                stream_pop(&mut rx, &shared, next, 1); // blocks until the paused producer pushes
                next += 1;
            }
            for round in 1..=HANDSHAKES {
                spin_until(&shared, || shared.producer_waiting.load(SeqCst) == round);
                wait_until_asleep(
                    shared.producer_tid.load(SeqCst),
                    "the producer blocked in push on a full ring",
                );
                stream_pop(&mut rx, &shared, next, cap + 1);
                next += cap + 1;
            }
            stream_pop(&mut rx, &shared, next, WARMUP);
            next += WARMUP;
            spin_until(&shared, || shared.go.load(SeqCst));
            set_counting(true);
            stream_pop(&mut rx, &shared, next, MEASURED);
            set_counting(false);
            done_counting.fetch_add(1, SeqCst);
            rx
        })
    };
    // Both threads are past warm-up once the consumer has taken every warm-up value.
    let warmup_total = HANDSHAKES + HANDSHAKES * (cap + 1) + WARMUP;
    // If a worker panics, its panic is what fails the test (the other one follows it).
    let until = |cond: &dyn Fn() -> bool| {
        while !cond() {
            match shared.failed.load(SeqCst) {
                NOBODY => thread::yield_now(),
                who => return Err(who),
            }
        }
        Ok(())
    };
    let ok = until(&|| shared.received.load(SeqCst) == warmup_total).and_then(|()| {
        ALLOCS.store(0, SeqCst);
        DEALLOCS.store(0, SeqCst);
        shared.go.store(true, SeqCst);
        until(&|| done_counting.load(SeqCst) == 2)
    });
    let counted = (ALLOCS.load(SeqCst), DEALLOCS.load(SeqCst));
    let (tx, rx) = match ok {
        Ok(()) | Err(PRODUCER) => (join(producer), join(consumer)),
        Err(_) => {
            let rx = join(consumer);
            (join(producer), rx)
        }
    };
    assert_eq!(
        shared.received.load(SeqCst),
        warmup_total + MEASURED,
        "every value arrived"
    );
    drop((tx, rx));
    counted
}

/// The counter sees allocations made by a thread whose switch is on, and only those.
#[test]
fn the_counter_counts() {
    let _serial = serial();
    ALLOCS.store(0, SeqCst);
    let other = thread::spawn(|| {
        // Switch off on this thread: not counted.
        let v: Vec<u64> = (0..100).collect();
        v.len()
    });
    set_counting(true);
    let b = std::hint::black_box(Box::new(5u64));
    let mut v: Vec<u64> = std::hint::black_box(Vec::with_capacity(1));
    for i in 0..2 {
        v.push(i); // the second push grows it: a realloc (or an alloc)
    }
    set_counting(false);
    let counted = ALLOCS.load(SeqCst);
    assert_eq!(join(other), 100);
    drop((b, v));
    assert!(
        counted >= 3,
        "the counting allocator saw {counted} calls for a Box, a Vec and its growth"
    );
}

/// Capacity 64: the producer mostly runs ahead, and each side sleeps now and then.
#[test]
fn steady_stream_makes_no_allocator_call() {
    let _serial = serial();
    let (allocs, deallocs) = with_watchdog(
        WATCHDOG_SECS * 3,
        "spsc(64) steady stream (allocation count)",
        || measure(64),
    );
    assert_eq!(
        (allocs, deallocs),
        (0, 0),
        "spsc::channel(64): {allocs} allocator calls (alloc/realloc) and {deallocs} deallocs in \
         a warmed-up stream of {MEASURED} values"
    );
}

/// Capacity 1: nearly every operation waits for the other side, so the parking path (wait-list
/// registration, parker) runs inside the window all the time.
#[test]
fn one_slot_stream_makes_no_allocator_call() {
    let _serial = serial();
    let (allocs, deallocs) = with_watchdog(
        WATCHDOG_SECS * 3,
        "spsc(1) stream (allocation count)",
        || measure(1),
    );
    assert_eq!(
        (allocs, deallocs),
        (0, 0),
        "spsc::channel(1): {allocs} allocator calls (alloc/realloc) and {deallocs} deallocs in \
         a warmed-up stream of {MEASURED} values"
    );
}
