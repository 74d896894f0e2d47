//! loom models of `ScqQueue` at capacities 1 and 2: distinct values under concurrent pops, FIFO
//! across laps of the index rings, and blocking hand-over in both directions.
#![cfg(all(loom, target_pointer_width = "64"))]

use berth::ScqQueue;
use loom::sync::Arc;
use loom::thread;

/// One producer pushes three values through one slot (every push after the first waits for the
/// pop that frees the slot) while the consumer pops them: FIFO across laps.
#[test]
fn capacity_1_fifo_across_laps() {
    loom::model(|| {
        let q = Arc::new(ScqQueue::new(1));
        let q2 = Arc::clone(&q);
        let producer = thread::spawn(move || {
            for i in 0..3u32 {
                q2.push(i).unwrap();
            }
        });
        for i in 0..3 {
            assert_eq!(q.pop(), Ok(i), "FIFO across laps");
        }
        producer.join().unwrap();
    });
}

/// Two consumers race for two values already inside: each value goes to exactly one of them.
#[test]
fn capacity_2_distinct_under_concurrent_pops() {
    loom::model(|| {
        let q = Arc::new(ScqQueue::new(2));
        q.push(1u32).unwrap();
        q.push(2u32).unwrap();
        let q2 = Arc::clone(&q);
        let other = thread::spawn(move || q2.try_pop().ok());
        let mine = q.try_pop().ok();
        let theirs = other.join().unwrap();
        let mut got: Vec<u32> = mine.into_iter().chain(theirs).collect();
        while let Ok(v) = q.try_pop() {
            got.push(v);
        }
        got.sort_unstable();
        assert_eq!(got, [1, 2], "an element was taken twice or lost: {got:?}");
    });
}

/// A consumer blocked on an empty queue is woken by a push; a producer blocked on a full one by
/// a pop.
#[test]
fn capacity_1_blocking_hand_over() {
    loom::model(|| {
        let q = Arc::new(ScqQueue::new(1));
        let q2 = Arc::clone(&q);
        let consumer = thread::spawn(move || q2.pop());
        q.push(7u32).unwrap();
        assert_eq!(consumer.join().unwrap(), Ok(7));
    });
}
