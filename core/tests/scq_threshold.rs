//! Stress test of `ScqQueue` in the reference post's scenario (see `core/src/queue/scq.rs`):
//! capacity 1, three producers and three consumers, where the reference post saw its SCQ hang in
//! 11 of 40 runs. berth's fix must never hang.
//!
//! This test does not catch the paper's handling in berth (the mutant `scq_weak_threshold`
//! passes it): a stranded value needs six dequeuers of one ring in flight at once (seven
//! threads; the analysis is in `scq.rs`), which 3P3C never has. The deterministic catcher is
//! the shuttle model `scq_exhausted_threshold_strands_no_value`. (An earlier version of this
//! comment said the test hung in one run of three with the paper's handling restored; that
//! observation was of a different variant and does not hold for the mutant as it is.)
//!
//! Each round runs under a watchdog that turns a hang into a failure within seconds, printing
//! the queue's rings (`{:#?}`: head, tail, threshold, every entry).

// Tests drive real std threads and atomics against the crate; core/clippy.toml forbids them in
// the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]
#![cfg(target_pointer_width = "64")]

use berth::ScqQueue;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// Rounds (about 6 s on a 2-core machine); scaled down under Miri.
const ROUNDS: usize = if cfg!(miri) { 2 } else { 600 };
/// Values per producer per round.
const PER_PRODUCER: u64 = if cfg!(miri) { 3 } else { 200 };
/// A round takes milliseconds; this only bounds a hang.
const WATCHDOG: Duration = Duration::from_secs(10);

fn one_round(round: usize, threads: u64) {
    let q = Arc::new(ScqQueue::new(1));
    let (done_tx, done_rx) = mpsc::channel();
    for p in 0..threads {
        let q = Arc::clone(&q);
        let done = done_tx.clone();
        thread::spawn(move || {
            for i in 0..PER_PRODUCER {
                q.push(p * PER_PRODUCER + i).unwrap();
            }
            let _ = done.send(0u64);
        });
    }
    for _ in 0..threads {
        let q = Arc::clone(&q);
        let done = done_tx.clone();
        thread::spawn(move || {
            let mut sum = 0;
            for _ in 0..PER_PRODUCER {
                sum += q.pop().unwrap() + 1;
            }
            let _ = done.send(sum);
        });
    }
    drop(done_tx);
    let mut total = 0;
    for _ in 0..2 * threads {
        match done_rx.recv_timeout(WATCHDOG) {
            Ok(sum) => total += sum,
            Err(_) => panic!(
                "SCQ stranded a value: round {round} of capacity 1 with {threads} producers and \
                 {threads} consumers did not finish within {WATCHDOG:?}; queue state: {q:#?}"
            ),
        }
    }
    let n = threads * PER_PRODUCER;
    assert_eq!(total, n * (n + 1) / 2, "every value exactly once");
}

#[test]
fn capacity_1_three_by_three_never_hangs() {
    for round in 0..ROUNDS {
        one_round(round, 3);
    }
}
