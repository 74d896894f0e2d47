//! `berth::channel::mpsc`: the exclusive receiver and its batch receives (`recv_many`,
//! `recv_many_async`), on every flavour.
//!
//! What is checked: a batch never waits to fill (only for its first message), `limit == 0`
//! returns at once, a closed and drained channel fails, order is kept across batches and across
//! the bounded queue's laps, a batch of `n` wakes up to `n` blocked senders, a cancelled
//! `recv_many_async` consumes nothing, and the receiver moved from thread to thread between
//! batches still sees each producer's messages in order, each exactly once.
//!
//! Every scenario that could hang runs under a watchdog. No assertion depends on timing:
//! `wait_until_asleep` waits for a thread to be asleep in the kernel, not for a duration.

// Tests drive real std threads and atomics against the crate; core/clippy.toml forbids those in
// the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::channel::mpsc::{self, Receiver, Sender};
use berth::channel::{RecvError, TryRecvError, TrySendError};
use common::{current_tid, join, wait_until_asleep, with_watchdog, WATCHDOG_SECS};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;

/// Every flavour: rendezvous, one slot, a few slots, unbounded.
fn flavours() -> Vec<(&'static str, Sender<u64>, Receiver<u64>)> {
    let mut v = Vec::new();
    let (t, r) = mpsc::bounded(0);
    v.push(("bounded(0)", t, r));
    let (t, r) = mpsc::bounded(1);
    v.push(("bounded(1)", t, r));
    let (t, r) = mpsc::bounded(5);
    v.push(("bounded(5)", t, r));
    let (t, r) = mpsc::unbounded();
    v.push(("unbounded", t, r));
    v
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn limit_zero_returns_at_once_even_on_an_empty_channel() {
    for (name, tx, mut rx) in flavours() {
        let mut buf = vec![7];
        assert_eq!(rx.recv_many(&mut buf, 0), Ok(0), "{name}");
        assert_eq!(buf, [7], "{name}: nothing appended, nothing removed");
        let waker = Waker::from(Arc::new(Count::default()));
        let mut cx = Context::from_waker(&waker);
        let mut fut = pin!(rx.recv_many_async(&mut buf, 0));
        assert_eq!(fut.as_mut().poll(&mut cx), Poll::Ready(Ok(0)), "{name}");
        drop(tx);
    }
}

#[test]
fn a_batch_takes_what_is_there_and_never_waits_to_fill() {
    for (cap, tx, mut rx) in [
        ("bounded(8)", mpsc::bounded(8)),
        ("unbounded", mpsc::unbounded()),
    ]
    .map(|(n, (t, r))| (n, t, r))
    {
        for i in 0..5u64 {
            tx.send(i).unwrap();
        }
        let mut buf = Vec::new();
        assert_eq!(rx.recv_many(&mut buf, 3), Ok(3), "{cap}");
        assert_eq!(
            rx.recv_many(&mut buf, 100),
            Ok(2),
            "{cap}: only what is there"
        );
        assert_eq!(buf, [0, 1, 2, 3, 4], "{cap}: in order, appended");
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty), "{cap}");
        drop(tx);
        assert_eq!(
            rx.recv_many(&mut buf, 4),
            Err(RecvError),
            "{cap}: closed and drained"
        );
        assert_eq!(buf.len(), 5, "{cap}: a failed batch appends nothing");
    }
}

#[test]
fn a_closed_channel_hands_out_what_it_holds_before_failing() {
    for (name, tx, mut rx) in flavours() {
        if rx.capacity() == Some(0) {
            drop(tx);
            assert_eq!(rx.recv_many(&mut Vec::new(), 3), Err(RecvError), "{name}");
            continue;
        }
        tx.send(1).unwrap();
        drop(tx);
        let mut buf = Vec::new();
        assert_eq!(rx.recv_many(&mut buf, 3), Ok(1), "{name}");
        assert_eq!(rx.recv_many(&mut buf, 3), Err(RecvError), "{name}");
        assert_eq!(buf, [1], "{name}");
    }
}

/// Waits for the first message only: a receiver asleep on an empty channel wakes for one send
/// and returns a batch of one, on every flavour (the rendezvous included).
#[test]
fn a_batch_waits_only_for_its_first_message() {
    for (name, tx, mut rx) in flavours() {
        with_watchdog(WATCHDOG_SECS, name, move || {
            let (tid_tx, tid_rx) = std::sync::mpsc::channel();
            let receiver = thread::spawn(move || {
                tid_tx.send(current_tid()).unwrap();
                let mut buf = Vec::new();
                let n = rx.recv_many(&mut buf, 32);
                (n, buf, rx)
            });
            wait_until_asleep(tid_rx.recv().unwrap(), "the batch receiver");
            tx.send(42).unwrap();
            let (n, buf, rx) = join(receiver);
            assert_eq!(n, Ok(1), "{name}");
            assert_eq!(buf, [42], "{name}");
            drop(rx);
        });
    }
}

/// Order across laps of the bounded queue: batches of every size from 1 to past the capacity,
/// against a ring of 3 slots, so a batch often starts near the end of the buffer and wraps.
#[test]
fn batches_keep_order_across_laps() {
    let (tx, mut rx) = mpsc::bounded::<u64>(3);
    let mut next_in = 0u64;
    let mut next_out = 0u64;
    let mut buf = Vec::new();
    for round in 0..200usize {
        let fill = 1 + round % 3;
        for _ in 0..fill {
            tx.try_send(next_in).unwrap();
            next_in += 1;
        }
        if fill == 3 {
            assert!(matches!(tx.try_send(u64::MAX), Err(TrySendError::Full(_))));
        }
        let limit = 1 + round % 5;
        while (next_out as usize) < next_in as usize {
            buf.clear();
            let n = rx.recv_many(&mut buf, limit).unwrap();
            assert!(
                n >= 1 && n <= limit,
                "round {round}: {n} of at most {limit}"
            );
            for v in buf.drain(..) {
                assert_eq!(v, next_out, "round {round}: out of order");
                next_out += 1;
            }
        }
    }
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
}

/// A full bounded channel with four senders asleep in `send`: one batch of four frees four
/// slots and must wake all four (a batch that woke only one would leave three asleep beside
/// free slots, and the watchdog would fire).
#[test]
fn a_batch_of_n_wakes_n_blocked_senders() {
    with_watchdog(WATCHDOG_SECS, "a batch of 4 wakes 4 senders", || {
        let (tx, mut rx) = mpsc::bounded::<u64>(4);
        for i in 0..4 {
            tx.send(i).unwrap();
        }
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let senders: Vec<_> = (4..8u64)
            .map(|v| {
                let tx = tx.clone();
                let tid_tx = tid_tx.clone();
                thread::spawn(move || {
                    tid_tx.send(current_tid()).unwrap();
                    tx.send(v).unwrap();
                })
            })
            .collect();
        for _ in 0..4 {
            wait_until_asleep(tid_rx.recv().unwrap(), "a sender on a full channel");
        }
        let mut buf = Vec::new();
        assert_eq!(rx.recv_many(&mut buf, 4), Ok(4));
        assert_eq!(buf, [0, 1, 2, 3]);
        // No further receive until every sender has finished: they were woken by the batch.
        for s in senders {
            join(s);
        }
        buf.clear();
        assert_eq!(rx.recv_many(&mut buf, 8), Ok(4));
        buf.sort_unstable();
        assert_eq!(buf, [4, 5, 6, 7]);
    });
}

/// A pending `recv_many_async` that is dropped consumes nothing; the message sent after it is
/// there for the next receive, and the dropped future's wakeup is not needed by anyone.
#[test]
fn a_cancelled_batch_consumes_nothing() {
    for (name, tx, mut rx) in flavours() {
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let mut buf = Vec::new();
        {
            let mut fut = pin!(rx.recv_many_async(&mut buf, 8));
            assert!(fut.as_mut().poll(&mut cx).is_pending(), "{name}");
        }
        assert!(buf.is_empty(), "{name}");
        if rx.capacity() == Some(0) {
            // A rendezvous send needs a receiver: hand off to a thread.
            let sender = {
                let tx = tx.clone();
                thread::spawn(move || tx.send(9).unwrap())
            };
            assert_eq!(rx.recv(), Ok(9), "{name}");
            join(sender);
        } else {
            tx.send(9).unwrap();
            assert_eq!(rx.recv_many(&mut buf, 8), Ok(1), "{name}");
            assert_eq!(buf, [9], "{name}");
        }
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty), "{name}");
    }
}

/// An async batch woken by a send returns that message and whatever else is ready by then.
#[test]
fn an_async_batch_is_woken_by_a_send() {
    for (name, tx, mut rx) in flavours() {
        if rx.capacity() == Some(0) {
            continue; // covered with a thread in the loom and channel_async suites
        }
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let mut buf = Vec::new();
        let mut fut = Box::pin(rx.recv_many_async(&mut buf, 8));
        assert!(fut.as_mut().poll(&mut cx).is_pending(), "{name}");
        tx.send(1).unwrap();
        assert_eq!(count.0.load(SeqCst), 1, "{name}: one wake for the send");
        // One slot: the second message does not fit until the first is taken.
        let expect = match tx.try_send(2) {
            Ok(()) => 2,
            Err(TrySendError::Full(_)) if name == "bounded(1)" => 1,
            Err(e) => panic!("{name}: {e:?}"),
        };
        assert_eq!(
            fut.as_mut().poll(&mut cx),
            Poll::Ready(Ok(expect)),
            "{name}"
        );
        drop(fut);
        assert_eq!(&buf[..], &[1, 2][..expect], "{name}");
    }
}

/// Producers each send an increasing sequence; the exclusive receiver is moved to a new thread
/// after every few batches. Each producer's messages arrive once each, in order, whichever
/// thread holds the receiver.
#[test]
fn the_receiver_moves_between_threads_and_keeps_per_producer_order() {
    const PRODUCERS: u64 = 4;
    let per: u64 = if cfg!(miri) { 30 } else { 5_000 };
    for (name, tx, rx) in flavours() {
        with_watchdog(WATCHDOG_SECS, name, move || {
            let producers: Vec<_> = (0..PRODUCERS)
                .map(|p| {
                    let tx = tx.clone();
                    thread::spawn(move || {
                        for i in 0..per {
                            tx.send(p << 32 | i).unwrap();
                        }
                    })
                })
                .collect();
            drop(tx);
            let mut next = vec![0u64; PRODUCERS as usize];
            let mut rx = Some(rx);
            let mut done = false;
            let mut hops = 0;
            while !done {
                let mut held = rx.take().unwrap();
                let mut seen = std::mem::take(&mut next);
                let handle = thread::spawn(move || {
                    let mut buf = Vec::new();
                    let mut finished = false;
                    for _ in 0..7 {
                        buf.clear();
                        match held.recv_many(&mut buf, 16) {
                            Ok(n) => {
                                assert_eq!(n, buf.len());
                                for v in buf.drain(..) {
                                    let (p, i) = ((v >> 32) as usize, v & 0xffff_ffff);
                                    assert_eq!(i, seen[p], "producer {p}: out of order or twice");
                                    seen[p] += 1;
                                }
                            }
                            Err(RecvError) => {
                                finished = true;
                                break;
                            }
                        }
                    }
                    (held, seen, finished)
                });
                let (held, seen, finished) = join(handle);
                rx = Some(held);
                next = seen;
                done = finished;
                hops += 1;
            }
            for p in producers {
                join(p);
            }
            assert_eq!(
                next,
                vec![per; PRODUCERS as usize],
                "{name}: every message once"
            );
            assert!(hops > 1, "{name}: the receiver moved");
        });
    }
}

/// Many producers against one batch receiver on a small ring: nothing lost or duplicated while
/// batches and blocked senders interleave.
#[test]
fn stress_batches_against_blocked_senders() {
    let per: u64 = if cfg!(miri) { 25 } else { 20_000 };
    for cap in [1usize, 2, 7] {
        with_watchdog(WATCHDOG_SECS, "stress", move || {
            let (tx, mut rx) = mpsc::bounded::<u64>(cap);
            let producers: Vec<_> = (0..3u64)
                .map(|p| {
                    let tx = tx.clone();
                    thread::spawn(move || {
                        for i in 0..per {
                            tx.send(p * per + i).unwrap();
                        }
                    })
                })
                .collect();
            drop(tx);
            let mut buf = Vec::new();
            let mut sum = 0u64;
            let mut count = 0u64;
            let mut last = [None::<u64>; 3];
            while let Ok(n) = rx.recv_many(&mut buf, 4) {
                // At most the limit (a batch that waited for its first message may also take
                // one a sender put in the slot that message freed, so not "at most cap").
                assert!((1..=4).contains(&n), "cap {cap}: batch of {n}");
                for v in buf.drain(..) {
                    let p = (v / per) as usize;
                    assert!(
                        last[p].is_none_or(|l| l < v),
                        "cap {cap}: producer {p} out of order"
                    );
                    last[p] = Some(v);
                    sum += v;
                    count += 1;
                }
            }
            for p in producers {
                join(p);
            }
            let total = 3 * per;
            assert_eq!(count, total, "cap {cap}: every message once");
            assert_eq!(sum, total * (total - 1) / 2, "cap {cap}: checksum");
        });
    }
}
