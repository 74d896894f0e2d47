//! loom models of the channels: disconnection races, the rendezvous hand-off, and the unbounded
//! list's block hand-over and recycling (its blocks hold 2 slots under loom, so a few messages
//! cross several blocks). `make loom` runs them under both parkers.
//!
//! The mutant `channel_no_disconnect` (the last sender's drop does not close the channel) must
//! make `last_sender_drop_wakes_receiver_*` report a deadlock.
#![cfg(loom)]

use berth::channel::{self, Receiver, Sender, TrySendError};
use berth_models::trace;
use loom::thread;

/// A receiver blocked (or about to block) in `recv` against the last sender's drop.
fn last_sender_drop_wakes_receiver(make: fn() -> (Sender<u32>, Receiver<u32>)) {
    loom::model(move || {
        trace::start();
        let (tx, rx) = make();
        let receiver = thread::spawn(move || {
            trace::record("recv starts", ());
            let r = rx.recv();
            trace::record("recv", r);
            r
        });
        drop(tx);
        trace::record("drop(last sender)", ());
        assert!(
            receiver.join().unwrap().is_err(),
            "recv on an empty channel without senders must fail"
        );
    });
}

#[test]
fn last_sender_drop_wakes_receiver_bounded() {
    last_sender_drop_wakes_receiver(|| channel::bounded(1));
}

#[test]
fn last_sender_drop_wakes_receiver_unbounded() {
    last_sender_drop_wakes_receiver(channel::unbounded);
}

#[test]
fn last_sender_drop_wakes_receiver_rendezvous() {
    last_sender_drop_wakes_receiver(|| channel::bounded(0));
}

/// A message sent before the last sender's drop is still received, then the channel ends.
#[test]
fn sent_before_drop_is_received() {
    loom::model(|| {
        let (tx, rx) = channel::bounded(1);
        let sender = thread::spawn(move || {
            tx.send(1u32).unwrap();
        });
        assert_eq!(rx.recv(), Ok(1));
        assert!(rx.recv().is_err());
        sender.join().unwrap();
    });
}

/// A sender blocked on a full channel against the last receiver's drop: it gets its own value
/// back, and the value that was buffered is dropped with the receiver.
#[test]
fn last_receiver_drop_wakes_sender_bounded() {
    loom::model(|| {
        let (tx, rx) = channel::bounded(1);
        tx.send(1u32).unwrap();
        let sender = thread::spawn(move || tx.send(2));
        drop(rx);
        let back = sender.join().unwrap().unwrap_err().into_inner();
        assert_eq!(back, 2, "a failed send hands its own value back");
    });
}

#[test]
fn last_receiver_drop_wakes_sender_rendezvous() {
    loom::model(|| {
        let (tx, rx) = channel::bounded::<u32>(0);
        let sender = thread::spawn(move || tx.send(7));
        drop(rx);
        assert_eq!(sender.join().unwrap().unwrap_err().into_inner(), 7);
    });
}

/// A rendezvous send completes exactly when a receiver takes the value, in either arrival order.
#[test]
fn rendezvous_handoff() {
    loom::model(|| {
        let (tx, rx) = channel::bounded::<u32>(0);
        let sender = thread::spawn(move || tx.send(7));
        assert_eq!(rx.recv(), Ok(7));
        sender.join().unwrap().unwrap();
    });
}

/// A rendezvous try_send succeeds only into a waiting receiver, and then the receiver has it.
#[test]
fn rendezvous_try_send_needs_a_receiver() {
    loom::model(|| {
        let (tx, rx) = channel::bounded::<u32>(0);
        let receiver = thread::spawn(move || rx.recv_timeout(std::time::Duration::from_secs(1)));
        let sent = match tx.try_send(5) {
            Ok(()) => true,
            // No receiver waiting yet, or it timed out and dropped the receiver (under loom a
            // timed wait may time out at once).
            Err(TrySendError::Full(5) | TrySendError::Disconnected(5)) => false,
            Err(e) => panic!("unexpected {e:?}"),
        };
        let got = receiver.join().unwrap();
        if sent {
            assert_eq!(
                got,
                Ok(5),
                "a rendezvous send returned Ok but nobody received it"
            );
        } else {
            assert!(got.is_err());
        }
    });
}

/// Messages cross blocks (2 slots each under loom) while the receiver takes them, in order;
/// retired blocks are recycled into the tail.
#[test]
fn unbounded_crosses_and_recycles_blocks() {
    loom::model(|| {
        let (tx, rx) = channel::unbounded::<u32>();
        let sender = thread::spawn(move || {
            for i in 0..5 {
                tx.send(i).unwrap();
            }
        });
        for i in 0..5 {
            assert_eq!(rx.recv(), Ok(i), "FIFO across blocks");
        }
        assert!(rx.recv().is_err());
        sender.join().unwrap();
    });
}

/// The last receiver's drop races a sender: the send fails (value back) or the value is
/// dropped with the channel; either way nothing leaks (loom checks the leak) and no send after
/// the disconnect is Ok.
#[test]
fn unbounded_receiver_drop_races_send() {
    loom::model(|| {
        let (tx, rx) = channel::unbounded::<Box<u32>>();
        let sender = thread::spawn(move || tx.send(Box::new(1)).is_ok());
        drop(rx);
        let _ = sender.join().unwrap();
    });
}

/// Two receivers take turns at the head: one of them loads `pushed` and remembers it as
/// `known`; the other may then take a message on that knowledge alone, without a load of its
/// own. The head lock must carry the first one's acquire to it, or its read of the slot (and of
/// the `next` link when the messages cross a block) races the sender's write.
#[test]
fn unbounded_receivers_share_the_known_count() {
    loom::model(|| {
        let (tx, rx) = channel::unbounded::<u32>();
        let rx2 = rx.clone();
        let sender = thread::spawn(move || {
            for i in 0..3 {
                tx.send(i).unwrap();
            }
        });
        // One non-blocking attempt keeps the model small: the interesting schedules are the
        // ones where it runs between the main receiver's load of `pushed` and its next take.
        let other = thread::spawn(move || rx2.try_recv().into_iter().collect::<Vec<_>>());
        let mut got = Vec::new();
        while let Ok(v) = rx.recv() {
            got.push(v);
        }
        sender.join().unwrap();
        got.extend(other.join().unwrap());
        got.sort_unstable();
        assert_eq!(got, [0, 1, 2], "every message exactly once");
    });
}
