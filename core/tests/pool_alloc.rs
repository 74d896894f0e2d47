//! The node pool (`berth::spsc::pool`) makes no allocator call after construction: a warmed-up
//! stream of nodes between a sender thread and a receiver thread, counted by a global allocator.
//!
//! Warm-up makes each side block once on the pool's own rings (the receiver on an empty data
//! ring, the sender on a full one), so that the thread-local parker of each thread and the wait
//! lists' queues exist before the window: those are allocated once, on first use, by design.
//! Whether a thread is asleep is read from `/proc` (see `common::wait_until_asleep`), not
//! guessed from a sleep.

// Tests drive real std threads and atomics against the crate; core/clippy.toml forbids them in
// the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use common::{current_tid, join, wait_until_asleep, with_watchdog, WATCHDOG_SECS};
use counting_alloc::{set_counting, ALLOCS, DEALLOCS};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;

const CAPACITY: usize = 4;
const WARMUP: u64 = if cfg!(miri) { 50 } else { 10_000 };
const MEASURED: u64 = if cfg!(miri) { 200 } else { 100_000 };

#[test]
#[cfg_attr(
    miri,
    ignore = "did not finish within 8 minutes under Miri in its first run (2026-12-02); not yet \
              investigated: the same pool code runs under Miri in the doctest and spsc_suite"
)]
fn pool_stream_makes_no_allocator_call_after_construction() {
    with_watchdog(WATCHDOG_SECS, "the pool stream did not finish", || {
        let (mut tx, mut rx) = berth::spsc::pool(CAPACITY, || [0u64; 8]);
        let receiver_tid = Arc::new(AtomicI64::new(0));
        let sender_tid = Arc::new(AtomicI64::new(0));
        let receiver_may_drain = Arc::new(AtomicBool::new(false));
        let go = Arc::new(AtomicBool::new(false));
        let received = Arc::new(AtomicU64::new(0));

        let receiver = {
            let (tid, sender_tid, may_drain, go, received) = (
                Arc::clone(&receiver_tid),
                Arc::clone(&sender_tid),
                Arc::clone(&receiver_may_drain),
                Arc::clone(&go),
                Arc::clone(&received),
            );
            thread::spawn(move || {
                tid.store(current_tid(), SeqCst);
                // Warm-up 1: block on the empty data ring until the sender sends.
                assert_eq!(rx.recv_with(|n| n[0]), Ok(0));
                // Warm-up 2: let the sender fill the ring and block, then drain.
                while !may_drain.load(SeqCst) {
                    thread::yield_now();
                }
                wait_until_asleep(
                    sender_tid.load(SeqCst),
                    "the sender blocked on a full data ring",
                );
                let mut next = 1;
                for _ in 0..CAPACITY + 1 + WARMUP as usize {
                    let got = rx.recv_with(|n| n[0]).expect("the sender is alive");
                    assert_eq!(got, next, "FIFO");
                    next += 1;
                }
                received.store(next, SeqCst);
                while !go.load(SeqCst) {
                    thread::yield_now();
                }
                set_counting(true);
                let mut sum = 0u64;
                for _ in 0..MEASURED {
                    sum += rx.recv_with(|n| n[0]).expect("the sender is alive");
                }
                set_counting(false);
                (rx, sum, next)
            })
        };

        sender_tid.store(current_tid(), SeqCst);
        while receiver_tid.load(SeqCst) == 0 {
            thread::yield_now();
        }
        wait_until_asleep(
            receiver_tid.load(SeqCst),
            "the receiver blocked on an empty data ring",
        );
        tx.send_with(|n| n[0] = 0).unwrap();
        let mut next = 1u64;
        // CAPACITY nodes fill the data ring; the next send blocks until the receiver drains.
        receiver_may_drain.store(true, SeqCst);
        for _ in 0..CAPACITY + 1 + WARMUP as usize {
            tx.send_with(|n| n[0] = next).unwrap();
            next += 1;
        }
        while received.load(SeqCst) != next {
            thread::yield_now();
        }
        ALLOCS.store(0, SeqCst);
        DEALLOCS.store(0, SeqCst);
        go.store(true, SeqCst);
        set_counting(true);
        for _ in 0..MEASURED {
            tx.send_with(|n| n[0] = next).unwrap();
            next += 1;
        }
        set_counting(false);
        let (rx, sum, first) = join(receiver);
        let (allocs, deallocs) = (ALLOCS.load(SeqCst), DEALLOCS.load(SeqCst));
        let expected: u64 = (first..first + MEASURED).sum();
        assert_eq!(sum, expected, "every node's value arrived once");
        assert_eq!(
            (allocs, deallocs),
            (0, 0),
            "the pool made {allocs} allocations and {deallocs} frees in a warmed-up stream of \
             {MEASURED} nodes"
        );
        drop((tx, rx));
    });
}
