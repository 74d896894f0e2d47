//! loom models of the SPSC ring: the hand-over of a slot from producer to consumer and back,
//! across laps of a 1-slot and a 2-slot ring, and disconnection from either side.
//!
//! The mutant `spsc_publish_relaxed` (the producer publishes `tail` without Release) must make
//! loom report the consumer reading a slot the producer is still writing.
#![cfg(loom)]

use berth::spsc;
use berth_models::trace;
use loom::thread;

fn transfer(capacity: usize) {
    loom::model(move || {
        trace::start();
        let (mut tx, mut rx) = spsc::channel::<Box<u32>>(capacity);
        let producer = thread::spawn(move || {
            for i in 0..3 {
                trace::record("push starts", i);
                tx.push(Box::new(i)).unwrap();
                trace::record("push returned", i);
            }
        });
        for i in 0..3 {
            trace::record("pop starts", ());
            let v = *rx.pop().unwrap();
            trace::record("pop", v);
            assert_eq!(v, i, "FIFO across laps");
        }
        let last = rx.pop();
        trace::record("pop", &last);
        assert!(last.is_err(), "drained and disconnected");
        producer.join().unwrap();
    });
}

#[test]
fn transfer_one_slot() {
    transfer(1);
}

#[test]
fn transfer_two_slots() {
    transfer(2);
}

#[test]
fn producer_drop_wakes_consumer() {
    loom::model(|| {
        trace::start();
        let (tx, mut rx) = spsc::channel::<u32>(1);
        let consumer = thread::spawn(move || {
            trace::record("pop starts", ());
            let r = rx.pop();
            trace::record("pop", r);
            r
        });
        drop(tx);
        trace::record("drop(tx)", ());
        assert!(consumer.join().unwrap().is_err());
    });
}

#[test]
fn consumer_drop_wakes_producer() {
    loom::model(|| {
        let (mut tx, rx) = spsc::channel::<u32>(1);
        tx.push(1).unwrap();
        let producer = thread::spawn(move || tx.push(2));
        drop(rx);
        assert_eq!(producer.join().unwrap().unwrap_err().into_inner(), 2);
    });
}
