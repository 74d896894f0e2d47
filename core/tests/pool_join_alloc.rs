//! A warmed-up pool runs `install(|| fib_join(20))`, a join at every level (about 11,000 joins,
//! with steals between two workers), without one allocator call: a join's second closure is a
//! job on the caller's stack, pushed onto the worker's deque by pointer.
//!
//! Counted, with the counting global allocator (`common/counting_alloc.rs`): the calling thread
//! during the call, and both workers of the pool. The workers' switches are turned on once (by a
//! job each, during warm-up) and stay on, so the count is read only at two quiet points: before
//! the call and after it, each time once both workers are asleep in the kernel (read from
//! `/proc`, see `common::wait_until_asleep`), when they cannot be allocating. Nothing else in the
//! process counts: this file has one test.
//!
//! What may allocate, and why warm-up takes care of it: the injector channel's blocks (a steady
//! stream of installs reuses its spare blocks; warm-up runs far more installs than a block
//! holds), the idle list's `VecDeque` (grows to the number of workers once), each deque's first
//! buffer (64 slots, more than the depth of the recursion), the caller's thread-local parker.
//!
//! One thing can still allocate by design: a deque moves to a new buffer (and records the old
//! one) when the owner laps a thief that has claimed a slot but not yet read it out, a whole
//! buffer (64 pushes) behind. That takes a thief preempted in the middle of a steal for that long;
//! if this test ever fails with a count of two or three (the new buffer's slots and header, and
//! perhaps the growth of the list of retired buffers), that is the likely cause.

// Tests drive real std threads and atomics against the crate; core/clippy.toml forbids them in
// the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use berth::pool::ThreadPool;
use common::{current_tid, wait_until_asleep, with_watchdog, WATCHDOG_SECS};
use counting_alloc::{set_counting, ALLOCS, DEALLOCS};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

const N: u64 = if cfg!(miri) { 8 } else { 20 };
const WARMUP_INSTALLS: usize = if cfg!(miri) { 40 } else { 200 };

/// Fibonacci with a join at every level.
fn fib_join(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = berth::join(|| fib_join(n - 1), || fib_join(n - 2));
    a + b
}

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Turns counting on in every worker of `pool` (for good) and returns their kernel thread ids by
/// index. Rounds of one scope job per worker, each lagging a little so that the others get
/// stolen, until every worker has run one; no job waits for another.
fn count_on_every_worker(pool: &ThreadPool) -> Vec<i64> {
    let n = pool.current_num_threads();
    let tids: Mutex<Vec<Option<i64>>> = Mutex::new(vec![None; n]);
    for _round in 0..1_000 {
        pool.scope(|s| {
            for _ in 0..n {
                s.spawn(|_| {
                    let index = berth::current_thread_index().expect("a scope job on a worker");
                    tids.lock().unwrap()[index] = Some(current_tid());
                    set_counting(true);
                    thread::sleep(Duration::from_millis(5));
                });
            }
        });
        let tids = tids.lock().unwrap();
        if tids.iter().all(Option::is_some) {
            return tids.iter().map(|t| t.unwrap()).collect();
        }
    }
    panic!("some worker never ran a job in 1000 rounds");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "reads threads' states from /proc to find quiet points, which Miri cannot"
)]
fn warmed_up_join_makes_no_allocator_call() {
    with_watchdog(WATCHDOG_SECS, "the join allocation test", || {
        let pool = ThreadPool::new(2);
        let expected = fib_seq(N);
        // Warm-up, workers not counting yet.
        for _ in 0..WARMUP_INSTALLS {
            assert_eq!(pool.install(|| fib_join(N)), expected);
        }
        let tids = count_on_every_worker(&pool);
        // Warm-up again with the workers counting, so that anything they allocate on first use
        // after the switch (none expected) is behind us.
        for _ in 0..WARMUP_INSTALLS {
            assert_eq!(pool.install(|| fib_join(N)), expected);
        }
        let quiet = |what: &str| {
            for &tid in &tids {
                wait_until_asleep(tid, what);
            }
        };

        let mut worst = (0usize, 0usize);
        // A few measured calls: one that allocates is enough to fail.
        for round in 0..5 {
            quiet("a worker before the measured call");
            let allocs_before = ALLOCS.load(SeqCst);
            let deallocs_before = DEALLOCS.load(SeqCst);
            set_counting(true);
            let got = pool.install(|| fib_join(N));
            set_counting(false);
            quiet("a worker after the measured call");
            let allocs = ALLOCS.load(SeqCst) - allocs_before;
            let deallocs = DEALLOCS.load(SeqCst) - deallocs_before;
            assert_eq!(got, expected, "round {round}");
            worst = worst.max((allocs, deallocs));
        }
        assert_eq!(
            worst,
            (0, 0),
            "a warmed-up install(|| fib_join({N})) made (allocations, deallocations) = {worst:?}"
        );
    });
}
