//! A three-stage pipeline on bounded channels: a source, a pool of workers, a sink.
//!
//! ```text
//! source --bounded(8)--> 3 workers (square) --bounded(8)--> sink
//! ```
//!
//! - Backpressure: a full channel makes its sender sleep; the source can never run more than
//!   `CAPACITY` messages ahead of the workers (shown before anything consumes).
//! - Clean disconnect, downstream: when the source is done it drops its sender; each worker's
//!   `for` loop ends once the channel is drained, the workers drop their senders, and the sink's
//!   loop ends in turn. No message is left behind and no thread is told to stop.
//! - Clean disconnect, upstream: a sink that stops early drops its receiver; the next send
//!   fails at once and hands the message back, and the messages still buffered are dropped with
//!   the channel. A drop counter shows that every message is accounted for exactly once.
//!
//! Run with `cargo run -p berth --example pipeline`.

// An example is a program that uses berth, so it uses std's threads and atomics, which the
// crate's own code must take from its loom/shuttle facade (core/clippy.toml).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use berth::channel::{self, TrySendError};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::thread;

const CAPACITY: usize = 8;
const WORKERS: usize = 3;
const ITEMS: u64 = 20_000;

fn main() {
    let (in_flight_max, squares) = downstream_disconnect();
    let (sent, returned, received) = upstream_disconnect();
    println!(
        "pipeline: {ITEMS} items through {WORKERS} workers, sum of squares {squares}, \
         at most {in_flight_max} queued ahead of the workers; early stop after {received}: \
         {sent} sent, message {returned} handed back, {} dropped exactly once",
        sent + 1
    );
}

/// Source -> workers -> sink until the source runs dry. Returns (the backlog the source built
/// before any worker started, the sum of squares).
fn downstream_disconnect() -> (usize, u64) {
    let (items_tx, items_rx) = channel::bounded::<u64>(CAPACITY);
    let (squares_tx, squares_rx) = channel::bounded::<(u64, u64)>(CAPACITY);

    // Backpressure, deterministically: nothing consumes yet, so the source fills the channel
    // and is then refused (a blocking `send` would sleep here until a worker takes one).
    let mut next = 0;
    loop {
        match items_tx.try_send(next) {
            Ok(()) => next += 1,
            Err(TrySendError::Full(v)) => {
                assert_eq!(v, next, "the refused message comes back");
                break;
            }
            Err(TrySendError::Disconnected(_)) => unreachable!("the workers hold receivers"),
        }
    }
    let backlog = items_tx.len();
    assert_eq!(
        backlog, CAPACITY,
        "a bounded channel holds exactly its capacity"
    );

    let source = thread::spawn(move || {
        for i in next..ITEMS {
            items_tx.send(i).expect("the workers outlive the source"); // sleeps while full
        }
        // `items_tx` is dropped here: the channel disconnects once the workers drain it.
    });

    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let items_rx = items_rx.clone();
            let squares_tx = squares_tx.clone();
            thread::spawn(move || {
                let mut done = 0u64;
                for i in &items_rx {
                    squares_tx
                        .send((i, i * i))
                        .expect("the sink outlives the workers");
                    done += 1;
                }
                done // the loop ended: the source is gone and nothing is left
            })
        })
        .collect();
    // Only the workers' clones may keep the channels open, so the stages end on their own.
    drop(items_rx);
    drop(squares_tx);

    let mut seen = vec![false; ITEMS as usize];
    let mut sum = 0u64;
    for (i, sq) in &squares_rx {
        assert_eq!(sq, i * i);
        assert!(!seen[i as usize], "item {i} arrived twice");
        seen[i as usize] = true;
        sum += sq;
    }
    source.join().unwrap();
    let per_worker: Vec<u64> = workers.into_iter().map(|w| w.join().unwrap()).collect();

    assert!(seen.iter().all(|&s| s), "every item arrived");
    assert_eq!(per_worker.iter().sum::<u64>(), ITEMS);
    assert_eq!(sum, (0..ITEMS).map(|i| i * i).sum::<u64>());
    assert!(squares_rx.is_disconnected() && squares_rx.is_empty());
    (backlog, sum)
}

static DROPPED: AtomicU64 = AtomicU64::new(0);

/// A message that counts its drops.
struct Tracked(u64);

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Relaxed);
    }
}

/// A sink that stops after `TAKE` messages. Returns (messages sent, the message handed back,
/// messages received).
fn upstream_disconnect() -> (u64, u64, u64) {
    const TAKE: u64 = 100;
    let (tx, rx) = channel::bounded::<Tracked>(CAPACITY);
    let source = thread::spawn(move || {
        let mut sent = 0u64;
        loop {
            match tx.send(Tracked(sent)) {
                Ok(()) => sent += 1,
                // The sink is gone: the message that could not be delivered comes back.
                Err(e) => return (sent, e.into_inner().0),
            }
        }
    });
    let sink = thread::spawn(move || {
        let mut got = 0u64;
        for (expected, msg) in rx.iter().take(TAKE as usize).enumerate() {
            assert_eq!(msg.0, expected as u64, "one producer: FIFO");
            got += 1;
        }
        got // `rx` is dropped here: the source's next send fails
    });
    let received = sink.join().unwrap();
    let (sent, returned) = source.join().unwrap();

    assert_eq!(received, TAKE);
    assert_eq!(
        returned, sent,
        "the refused message is the one after the last sent"
    );
    // At most a full channel was left behind when the sink dropped its receiver.
    assert!(sent >= TAKE && sent <= TAKE + CAPACITY as u64);
    // Received, still buffered when the sink left, or handed back: each dropped exactly once.
    assert_eq!(DROPPED.load(Relaxed), sent + 1);
    (sent, returned, received)
}
