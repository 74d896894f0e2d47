//! The behaviour suite of `berth::channel`, for its three flavours: `bounded(16)` (the Vyukov
//! ring), `bounded(0)` (rendezvous) and `unbounded()` (linked blocks).
//!
//! Every scenario is a function of the [`Flavor`]; `channel_suite!` expands to one module of
//! `#[test]`s per flavour (`bounded::`, `rendezvous::`, `unbounded::`), plus the tests that only
//! make sense for some flavours. Tests that do not depend on a flavour (the error types, the
//! examples of `std::sync::mpsc`'s documentation) come after.
//!
//! Semantics are crossbeam-channel's, and `std::sync::mpsc`'s where crossbeam is silent:
//! disconnection when either side is gone, nothing lost in the race with a disconnect, values
//! handed back in every error.
//!
//! Messages grepped by the mutant gate (`mutants/`), keep them verbatim:
//! "receiver was not woken by the last sender's drop".
//!
//! No assertion depends on timing to pass: the sleeps (`SETTLE`) only give other threads the
//! chance to reach a blocking call, so that the "woken while asleep" paths are exercised.

// Tests drive real std threads, atomics and sleeps against the crate; core/clippy.toml forbids
// those in the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::channel::{
    self, Receiver, RecvError, RecvTimeoutError, SendError, SendTimeoutError, Sender, TryRecvError,
    TrySendError, WeakSender,
};
#[cfg(target_os = "linux")]
use common::thread_cpu_time;
use common::{join, with_watchdog, DropCounter, DropCounts, WATCHDOG_SECS};
use std::error::Error;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Which channel a scenario runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    /// `bounded(n)`; `Bounded(0)` is the rendezvous channel.
    Bounded(usize),
    Unbounded,
}

impl Flavor {
    fn make<T>(self) -> (Sender<T>, Receiver<T>) {
        match self {
            Flavor::Bounded(n) => channel::bounded(n),
            Flavor::Unbounded => channel::unbounded(),
        }
    }

    /// What `capacity()` must report.
    fn capacity(self) -> Option<usize> {
        match self {
            Flavor::Bounded(n) => Some(n),
            Flavor::Unbounded => None,
        }
    }

    fn is_rendezvous(self) -> bool {
        self == Flavor::Bounded(0)
    }
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flavor::Bounded(0) => f.write_str("rendezvous"),
            Flavor::Bounded(n) => write!(f, "bounded({n})"),
            Flavor::Unbounded => f.write_str("unbounded"),
        }
    }
}

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

/// A timeout that never expires within a test (the watchdog fires long before).
const LONG: Duration = Duration::from_secs(3_600);

/// Spins (yielding) until `cond` holds. Only called inside a watchdog.
fn wait_until(mut cond: impl FnMut() -> bool) {
    while !cond() {
        thread::yield_now();
    }
}

/// A tiny deterministic generator (SplitMix64), so that a failing round can be replayed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn assert_counts<T>(tx: &Sender<T>, rx: &Receiver<T>, senders: usize, receivers: usize, f: Flavor) {
    assert_eq!(
        (tx.sender_count(), tx.receiver_count()),
        (senders, receivers),
        "{f}: (sender_count, receiver_count) seen from a Sender"
    );
    assert_eq!(
        (rx.sender_count(), rx.receiver_count()),
        (senders, receivers),
        "{f}: (sender_count, receiver_count) seen from a Receiver"
    );
}

/// Every kind of send on a disconnected channel fails at once and hands its own value back.
fn assert_sends_fail(tx: &Sender<DropCounter>, counts: &DropCounts, f: Flavor, why: &str) {
    match tx.send(counts.make(1)) {
        Err(SendError(v)) => assert_eq!(v.id(), 1, "{f} ({why}): send handed back another value"),
        Ok(()) => panic!("{f} ({why}): send succeeded on a disconnected channel"),
    }
    match tx.try_send(counts.make(2)) {
        Err(TrySendError::Disconnected(v)) => {
            assert_eq!(v.id(), 2, "{f} ({why}): try_send handed back another value")
        }
        Err(TrySendError::Full(_)) => {
            panic!("{f} ({why}): try_send on a disconnected channel reported Full")
        }
        Ok(()) => panic!("{f} ({why}): try_send succeeded on a disconnected channel"),
    }
    match tx.send_timeout(counts.make(3), LONG) {
        Err(SendTimeoutError::Disconnected(v)) => {
            assert_eq!(
                v.id(),
                3,
                "{f} ({why}): send_timeout handed back another value"
            )
        }
        other => panic!("{f} ({why}): send_timeout on a disconnected channel returned {other:?}"),
    }
    match tx.send_deadline(counts.make(4), Instant::now() + LONG) {
        Err(SendTimeoutError::Disconnected(v)) => {
            assert_eq!(
                v.id(),
                4,
                "{f} ({why}): send_deadline handed back another value"
            )
        }
        other => panic!("{f} ({why}): send_deadline on a disconnected channel returned {other:?}"),
    }
    match tx.send_timeout(counts.make(5), Duration::ZERO) {
        Err(SendTimeoutError::Disconnected(v)) => {
            assert_eq!(
                v.id(),
                5,
                "{f} ({why}): send_timeout(0) handed back another value"
            )
        }
        other => {
            panic!("{f} ({why}): send_timeout(0) on a disconnected channel returned {other:?}")
        }
    }
}

/// Every kind of receive on an empty disconnected channel fails at once.
fn assert_recvs_fail<T>(rx: &Receiver<T>, f: Flavor, why: &str) {
    assert!(
        matches!(rx.recv(), Err(RecvError)),
        "{f} ({why}): recv on an empty disconnected channel"
    );
    assert!(
        matches!(rx.try_recv(), Err(TryRecvError::Disconnected)),
        "{f} ({why}): try_recv on an empty disconnected channel"
    );
    assert!(
        matches!(rx.recv_timeout(LONG), Err(RecvTimeoutError::Disconnected)),
        "{f} ({why}): recv_timeout on an empty disconnected channel"
    );
    assert!(
        matches!(
            rx.recv_timeout(Duration::ZERO),
            Err(RecvTimeoutError::Disconnected)
        ),
        "{f} ({why}): recv_timeout(0) on an empty disconnected channel"
    );
    assert!(
        matches!(
            rx.recv_deadline(Instant::now() + LONG),
            Err(RecvTimeoutError::Disconnected)
        ),
        "{f} ({why}): recv_deadline on an empty disconnected channel"
    );
    assert!(rx.iter().next().is_none(), "{f} ({why}): iter() ends");
    assert!(
        rx.try_iter().next().is_none(),
        "{f} ({why}): try_iter() ends"
    );
}

// ---------------------------------------------------------------------------------------------
// 1. Handles: counts, same_channel, snapshots, close
// ---------------------------------------------------------------------------------------------

/// sender_count / receiver_count follow clones and drops, on both handles; same_channel tells
/// channels apart; the snapshots of a fresh channel.
fn handles_and_counts(f: Flavor) {
    let (tx, rx) = f.make::<u64>();
    assert_eq!(tx.capacity(), f.capacity(), "{f}: Sender::capacity");
    assert_eq!(rx.capacity(), f.capacity(), "{f}: Receiver::capacity");
    assert_eq!(
        (tx.len(), rx.len()),
        (0, 0),
        "{f}: a fresh channel is empty"
    );
    assert!(
        tx.is_empty() && rx.is_empty(),
        "{f}: a fresh channel is empty"
    );
    assert_eq!(
        (tx.is_full(), rx.is_full()),
        (f.is_rendezvous(), f.is_rendezvous()),
        "{f}: is_full of a fresh channel (always true for rendezvous)"
    );
    assert!(!tx.is_disconnected() && !rx.is_disconnected(), "{f}: fresh");
    assert_counts(&tx, &rx, 1, 1, f);

    let tx2 = tx.clone();
    assert_counts(&tx, &rx, 2, 1, f);
    let rx2 = rx.clone();
    let rx3 = rx2.clone();
    assert_counts(&tx, &rx, 2, 3, f);
    assert!(
        tx.same_channel(&tx2) && tx2.same_channel(&tx),
        "{f}: clones"
    );
    assert!(
        rx.same_channel(&rx3) && rx3.same_channel(&rx2),
        "{f}: clones"
    );

    let (otx, orx) = f.make::<u64>();
    assert!(!tx.same_channel(&otx), "{f}: senders of two channels");
    assert!(!orx.same_channel(&rx), "{f}: receivers of two channels");

    drop(tx2);
    assert_counts(&tx, &rx, 1, 3, f);
    drop(rx2);
    drop(rx3);
    assert_counts(&tx, &rx, 1, 1, f);
    assert!(
        !tx.is_disconnected() && !rx.is_disconnected(),
        "{f}: clones dropped, not the last"
    );

    // The original is not special: a clone keeps the channel connected.
    let tx2 = tx.clone();
    drop(tx);
    assert!(
        !rx.is_disconnected(),
        "{f}: a clone of the sender is still alive"
    );
    assert_counts(&tx2, &rx, 1, 1, f);

    // The other channel is untouched by all this, and disconnects on its own.
    assert_counts(&otx, &orx, 1, 1, f);
    drop(otx);
    assert!(
        orx.is_disconnected(),
        "{f}: the other channel's last sender is gone"
    );
    assert_eq!(orx.sender_count(), 0);
    assert!(
        !rx.is_disconnected(),
        "{f}: another channel's drop disconnected this one"
    );

    assert!(
        format!("{tx2:?}").contains("Sender"),
        "{f}: Debug of a Sender"
    );
    assert!(
        format!("{rx:?}").contains("Receiver"),
        "{f}: Debug of a Receiver"
    );
    assert!(
        format!("{:?}", tx2.downgrade()).contains("WeakSender"),
        "{f}: Debug"
    );
}

/// close() from either side: true for the first call only, sends fail at once with their
/// values, receives fail once empty, and no handle is dropped by it.
fn close_from_either_side(f: Flavor) {
    with_watchdog(WATCHDOG_SECS, &format!("close() ({f})"), move || {
        for by_receiver in [false, true] {
            let side = if by_receiver { "receiver" } else { "sender" };
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();
            let first = if by_receiver { rx.close() } else { tx.close() };
            assert!(
                first,
                "{f}: the first close() (from the {side}) returns true"
            );
            assert!(!tx.close(), "{f}: a second close() returns false");
            assert!(!rx.close(), "{f}: a third close() returns false");
            assert!(
                tx.is_disconnected() && rx.is_disconnected(),
                "{f}: after close()"
            );
            assert_counts(&tx, &rx, 1, 1, f);
            assert_sends_fail(&tx, &counts, f, &format!("closed by the {side}"));
            assert_recvs_fail(&rx, f, &format!("closed by the {side}"));
            assert_eq!(
                counts.live(),
                0,
                "{f}: the handed-back values were dropped once"
            );
            // A clone of a closed channel is closed too.
            assert!(tx.clone().is_disconnected() && rx.clone().is_disconnected());
            drop((tx, rx));
            assert_eq!(counts.live(), 0, "{f}: balanced");
        }
    });
}

/// Buffered flavours: close() (from either side) keeps the buffered messages for the
/// receivers, in order; they are not dropped by it.
fn close_keeps_buffered_messages(f: Flavor) {
    let n = f.capacity().unwrap_or(40).min(40) as u64;
    for by_receiver in [false, true] {
        let counts = DropCounts::new();
        let (tx, rx) = f.make::<DropCounter>();
        for i in 0..n {
            tx.try_send(counts.make(i)).expect("room");
        }
        assert!(if by_receiver { rx.close() } else { tx.close() });
        assert_eq!(
            counts.dropped(),
            0,
            "{f}: close() dropped buffered messages"
        );
        assert_eq!(
            rx.len(),
            n as usize,
            "{f}: close() keeps the buffered messages"
        );
        assert_sends_fail(&tx, &counts, f, "closed with messages inside");
        assert_eq!(rx.len(), n as usize, "{f}: failed sends change nothing");
        for i in 0..n {
            let v = match i % 3 {
                0 => rx.recv().ok(),
                1 => rx.try_recv().ok(),
                _ => rx.recv_timeout(LONG).ok(),
            };
            assert_eq!(
                v.map(|v| v.id()),
                Some(i),
                "{f}: drain after close, in order"
            );
        }
        assert_recvs_fail(&rx, f, "closed and drained");
        drop((tx, rx));
        assert_eq!(counts.live(), 0, "{f}: balanced");
    }
}

// ---------------------------------------------------------------------------------------------
// 2. The last sender goes: receivers drain, then fail
// ---------------------------------------------------------------------------------------------

/// A producer thread sends 100 messages and drops the last sender; iter() yields all of them in
/// order, then ends; every receive fails after that. For the buffering flavours, the same
/// without a thread: messages sent before the drop are received after it (std::sync::mpsc).
fn last_sender_drop_delivers_then_disconnects(f: Flavor) {
    with_watchdog(
        WATCHDOG_SECS,
        &format!("last sender's drop, then drain ({f})"),
        move || {
            let n = 100u64;
            let (tx, rx) = f.make::<u64>();
            let tx2 = tx.clone();
            drop(tx);
            let producer = thread::spawn(move || {
                for i in 0..n {
                    tx2.send(i).expect("send on a connected channel");
                }
                // tx2, the last sender, is dropped here.
            });
            let got: Vec<u64> = rx.iter().collect();
            join(producer);
            assert_eq!(
                got,
                (0..n).collect::<Vec<_>>(),
                "{f}: iter() yields every message in order, then ends"
            );
            assert_eq!(rx.sender_count(), 0);
            assert!(rx.is_disconnected(), "{f}: the last sender is gone");
            assert_recvs_fail(&rx, f, "last sender dropped");

            // Unthreaded, for the flavours that buffer (unbounded: 150 messages, 5 blocks).
            let n = match f {
                Flavor::Bounded(0) => return,
                Flavor::Bounded(c) => c as u64,
                Flavor::Unbounded => 150,
            };
            let (tx, rx) = f.make::<u64>();
            for i in 0..n {
                tx.send(i).expect("room");
            }
            drop(tx);
            assert!(rx.is_disconnected());
            assert_eq!(
                rx.len(),
                n as usize,
                "{f}: the last sender's drop keeps messages"
            );
            for i in 0..n {
                assert_eq!(rx.recv(), Ok(i), "{f}: sent before the sender dropped");
            }
            assert_recvs_fail(&rx, f, "last sender dropped, drained");
        },
    );
}

/// `for v in &rx`, `rx.into_iter()` and `try_iter()`.
fn iterators(f: Flavor) {
    with_watchdog(WATCHDOG_SECS, &format!("iterators ({f})"), move || {
        let (tx, rx) = f.make::<u64>();
        let producer = thread::spawn(move || {
            for i in 0..10 {
                tx.send(i).expect("send on a connected channel");
            }
        });
        let mut first = Vec::new();
        for v in &rx {
            first.push(v);
            if first.len() == 5 {
                break;
            }
        }
        let rest: Vec<u64> = rx.into_iter().collect();
        join(producer);
        assert_eq!(first, [0, 1, 2, 3, 4], "{f}: for v in &rx");
        assert_eq!(rest, [5, 6, 7, 8, 9], "{f}: rx.into_iter()");

        // try_iter yields what is available now and stops at Empty, not at the disconnect.
        let (tx, rx) = f.make::<u64>();
        assert_eq!(
            rx.try_iter().count(),
            0,
            "{f}: try_iter on an empty channel"
        );
        if f.is_rendezvous() {
            // A rendezvous channel has something to take only while a sender waits.
            let sender = thread::spawn(move || tx.send(7));
            let got = loop {
                let got: Vec<u64> = rx.try_iter().collect();
                if !got.is_empty() {
                    break got;
                }
                thread::yield_now();
            };
            assert_eq!(got, [7], "{f}: try_iter takes the waiting sender's value");
            assert_eq!(join(sender), Ok(()));
        } else {
            let k = f.capacity().unwrap_or(3).min(3) as u64;
            for i in 0..k {
                tx.send(i).expect("room");
            }
            let want: Vec<u64> = (0..k).collect();
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), want, "{f}: try_iter");
            assert_eq!(rx.try_iter().count(), 0, "{f}: try_iter again");
            assert!(!rx.is_disconnected());
            // With room for one more once drained.
            tx.send(k).expect("room");
            drop(tx);
            assert_eq!(
                rx.try_iter().collect::<Vec<_>>(),
                [k],
                "{f}: try_iter after drop"
            );
        }
    });
}

/// Receivers blocked in recv / recv_timeout / recv_deadline / iter on an empty channel: the
/// drop of a sender that is not the last changes nothing; the last one's drop wakes them all
/// with an error.
fn last_sender_drop_wakes_blocked_receivers(f: Flavor) {
    let what = format!("receiver was not woken by the last sender's drop ({f})");
    with_watchdog(WATCHDOG_SECS, &what.clone(), move || {
        let (tx, rx) = f.make::<u64>();
        let tx2 = tx.clone();
        let started = Arc::new(AtomicUsize::new(0));
        let returned = Arc::new(AtomicUsize::new(0));
        const KINDS: [&str; 4] = ["recv", "recv_timeout", "recv_deadline", "iter().next()"];
        let waiters: Vec<_> = (0..KINDS.len())
            .map(|k| {
                let rx = rx.clone();
                let (started, returned) = (Arc::clone(&started), Arc::clone(&returned));
                thread::spawn(move || {
                    started.fetch_add(1, SeqCst);
                    let r = match k {
                        0 => rx.recv().map_err(|RecvError| "Disconnected".to_string()),
                        1 => rx.recv_timeout(LONG).map_err(|e| format!("{e:?}")),
                        2 => rx
                            .recv_deadline(Instant::now() + LONG)
                            .map_err(|e| format!("{e:?}")),
                        _ => rx.iter().next().ok_or_else(|| "Disconnected".to_string()),
                    };
                    returned.fetch_add(1, SeqCst);
                    r
                })
            })
            .collect();
        drop(rx);
        wait_until(|| started.load(SeqCst) == KINDS.len());
        thread::sleep(SETTLE);
        drop(tx2); // not the last sender
        thread::sleep(SETTLE);
        assert_eq!(
            returned.load(SeqCst),
            0,
            "{f}: a blocked receive returned while a sender was still alive"
        );
        drop(tx); // the last sender
        for (k, w) in waiters.into_iter().enumerate() {
            let r = join(w);
            assert_eq!(
                r,
                Err("Disconnected".to_string()),
                "{f}: {} woken by the last sender's drop",
                KINDS[k]
            );
        }
    });
}

/// Receivers blocked on an empty channel are woken by close() from a sender (which stays
/// alive) with an error.
fn close_wakes_blocked_receivers(f: Flavor) {
    with_watchdog(
        WATCHDOG_SECS,
        &format!("close() did not wake the blocked receivers ({f})"),
        move || {
            let (tx, rx) = f.make::<u64>();
            let started = Arc::new(AtomicUsize::new(0));
            let waiters: Vec<_> = (0..3)
                .map(|k| {
                    let rx = rx.clone();
                    let started = Arc::clone(&started);
                    thread::spawn(move || {
                        started.fetch_add(1, SeqCst);
                        match k {
                            0 => rx.recv().is_err(),
                            1 => rx.recv_timeout(LONG) == Err(RecvTimeoutError::Disconnected),
                            _ => {
                                rx.recv_deadline(Instant::now() + LONG)
                                    == Err(RecvTimeoutError::Disconnected)
                            }
                        }
                    })
                })
                .collect();
            wait_until(|| started.load(SeqCst) == 3);
            thread::sleep(SETTLE);
            assert!(tx.close(), "{f}: the first close() returns true");
            for w in waiters {
                assert!(
                    join(w),
                    "{f}: a receive woken by close() reports Disconnected"
                );
            }
            assert_eq!(rx.sender_count(), 1, "{f}: close() drops no handle");
        },
    );
}

// ---------------------------------------------------------------------------------------------
// 3. The last receiver goes: sends fail, buffered messages are dropped then
// ---------------------------------------------------------------------------------------------

/// Without a receiver, every send fails at once with its own value.
fn last_receiver_drop_fails_sends(f: Flavor) {
    with_watchdog(
        WATCHDOG_SECS,
        &format!("sends after the last receiver's drop ({f})"),
        move || {
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();
            let rx2 = rx.clone();
            drop(rx);
            assert!(!tx.is_disconnected(), "{f}: a receiver is still alive");
            tx.send_timeout(counts.make(0), Duration::ZERO).ok();
            drop(rx2);
            assert!(tx.is_disconnected(), "{f}: the last receiver is gone");
            assert_eq!(tx.receiver_count(), 0);
            assert_sends_fail(&tx, &counts, f, "last receiver dropped");
            assert_eq!(
                counts.live(),
                0,
                "{f}: every value was dropped exactly once"
            );
            assert!(
                !tx.close(),
                "{f}: already disconnected: close() returns false"
            );
        },
    );
}

/// Buffered messages are dropped when the last receiver goes: not when the last sender goes,
/// not when one of several receivers goes, not when the channel is closed. For the unbounded
/// flavour, at and around block boundaries (31 slots a block) and across several blocks.
fn buffered_messages_dropped_with_last_receiver(f: Flavor) {
    let sizes: Vec<usize> = match f {
        Flavor::Bounded(c) => vec![c],
        Flavor::Unbounded => vec![1, 30, 31, 32, 62, 63, 150],
    };
    for n in sizes {
        for taken in [0, n / 2, n.saturating_sub(1), n] {
            // (a) the last sender goes first.
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();
            for i in 0..n {
                tx.try_send(counts.make(i as u64)).expect("room");
            }
            drop(tx);
            assert_eq!(
                counts.dropped(),
                0,
                "{f}: the last sender's drop dropped buffered messages ({n} sent)"
            );
            let rx2 = rx.clone();
            drop(rx);
            assert_eq!(
                counts.dropped(),
                0,
                "{f}: the drop of a receiver that was not the last dropped buffered messages"
            );
            for i in 0..taken {
                let v = rx2.try_recv().expect("a buffered message");
                assert_eq!(v.id(), i as u64, "{f}: FIFO");
            }
            assert_eq!(
                counts.dropped(),
                taken,
                "{f}: the received messages were dropped"
            );
            assert_eq!(rx2.len(), n - taken);
            drop(rx2);
            assert_eq!(
                counts.dropped(),
                n,
                "{f}: the last receiver's drop must drop the {} messages still buffered \
                 ({n} sent, {taken} received)",
                n - taken
            );

            // (b) the last receiver goes while a sender lives: dropped at once.
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();
            for i in 0..n {
                tx.try_send(counts.make(i as u64)).expect("room");
            }
            for _ in 0..taken {
                drop(rx.try_recv().expect("a buffered message"));
            }
            drop(rx);
            assert_eq!(
                counts.dropped(),
                n,
                "{f}: the last receiver's drop, with a sender alive, must drop the {} \
                 messages still buffered ({n} sent, {taken} received)",
                n - taken
            );
            assert_eq!(
                tx.len(),
                0,
                "{f}: nothing left after the last receiver's drop"
            );
            assert!(tx.is_empty());
            assert_sends_fail(
                &tx,
                &counts,
                f,
                "last receiver dropped with messages inside",
            );
            drop(tx);
            assert_eq!(counts.live(), 0, "{f}: balanced");
        }

        // (c) close() keeps them; the last receiver's drop (after the senders') frees them.
        let counts = DropCounts::new();
        let (tx, rx) = f.make::<DropCounter>();
        for i in 0..n {
            tx.try_send(counts.make(i as u64)).expect("room");
        }
        assert!(rx.close());
        drop(tx);
        assert_eq!(
            counts.dropped(),
            0,
            "{f}: close() and the senders' drop keep messages"
        );
        drop(rx);
        assert_eq!(
            counts.dropped(),
            n,
            "{f}: dropped with the last receiver after close()"
        );
    }
}

/// Senders blocked in send / send_timeout / send_deadline on a full channel (for rendezvous: with
/// no receiver): the drop of a receiver that is not the last changes nothing; the last one's
/// drop wakes them all, each with its own value back, and drops what was buffered.
fn last_receiver_drop_wakes_blocked_senders(f: Flavor) {
    let what = format!("sender was not woken by the last receiver's drop ({f})");
    with_watchdog(WATCHDOG_SECS, &what.clone(), move || {
        let cap = f.capacity().expect("a bounded flavour");
        let counts = DropCounts::new();
        let (tx, rx) = f.make::<DropCounter>();
        for i in 0..cap {
            tx.try_send(counts.make(1_000 + i as u64)).expect("room");
        }
        let rx2 = rx.clone();
        let started = Arc::new(AtomicUsize::new(0));
        let returned = Arc::new(AtomicUsize::new(0));
        const KINDS: [&str; 3] = ["send", "send_timeout", "send_deadline"];
        let senders: Vec<_> = (0..KINDS.len())
            .map(|k| {
                let tx = tx.clone();
                let v = counts.make(k as u64);
                let (started, returned) = (Arc::clone(&started), Arc::clone(&returned));
                thread::spawn(move || {
                    started.fetch_add(1, SeqCst);
                    let r = match k {
                        0 => tx.send(v).map_err(|SendError(v)| Ok(v.id())),
                        1 => tx.send_timeout(v, LONG).map_err(|e| match e {
                            SendTimeoutError::Disconnected(v) => Ok(v.id()),
                            SendTimeoutError::Timeout(v) => Err(v.id()),
                        }),
                        _ => tx
                            .send_deadline(v, Instant::now() + LONG)
                            .map_err(|e| match e {
                                SendTimeoutError::Disconnected(v) => Ok(v.id()),
                                SendTimeoutError::Timeout(v) => Err(v.id()),
                            }),
                    };
                    returned.fetch_add(1, SeqCst);
                    r
                })
            })
            .collect();
        wait_until(|| started.load(SeqCst) == KINDS.len());
        thread::sleep(SETTLE);
        drop(rx); // not the last receiver
        thread::sleep(SETTLE);
        assert_eq!(
            returned.load(SeqCst),
            0,
            "{f}: a blocked send returned while a receiver was still alive"
        );
        assert_eq!(
            counts.dropped(),
            0,
            "{f}: a receiver that is not the last dropped messages"
        );
        drop(rx2); // the last receiver
        for (k, s) in senders.into_iter().enumerate() {
            assert_eq!(
                join(s),
                Err(Ok(k as u64)),
                "{f}: {} woken by the last receiver's drop must fail with Disconnected and \
                 its own value",
                KINDS[k]
            );
        }
        assert_eq!(
            counts.dropped(),
            cap + KINDS.len(),
            "{f}: the buffered messages were dropped with the last receiver"
        );
        assert!(tx.is_disconnected());
        drop(tx);
        assert_eq!(counts.live(), 0, "{f}: balanced");
    });
}

/// Senders blocked on a full channel (rendezvous: with no receiver) are woken by close() from a
/// receiver (which stays alive), each with its own value; buffered messages stay receivable.
fn close_wakes_blocked_senders(f: Flavor) {
    with_watchdog(
        WATCHDOG_SECS,
        &format!("close() did not wake the blocked senders ({f})"),
        move || {
            let cap = f.capacity().expect("a bounded flavour") as u64;
            let (tx, rx) = f.make::<u64>();
            for i in 0..cap {
                tx.try_send(1_000 + i).expect("room");
            }
            let started = Arc::new(AtomicUsize::new(0));
            let senders: Vec<_> = (0..3u64)
                .map(|k| {
                    let tx = tx.clone();
                    let started = Arc::clone(&started);
                    thread::spawn(move || {
                        started.fetch_add(1, SeqCst);
                        match k {
                            0 => tx.send(k).map_err(SendTimeoutError::from),
                            1 => tx.send_timeout(k, LONG),
                            _ => tx.send_deadline(k, Instant::now() + LONG),
                        }
                    })
                })
                .collect();
            wait_until(|| started.load(SeqCst) == 3);
            thread::sleep(SETTLE);
            assert!(rx.close(), "{f}: the first close() returns true");
            for (k, s) in senders.into_iter().enumerate() {
                assert_eq!(
                    join(s),
                    Err(SendTimeoutError::Disconnected(k as u64)),
                    "{f}: a send woken by close() fails with its own value"
                );
            }
            for i in 0..cap {
                assert_eq!(
                    rx.recv(),
                    Ok(1_000 + i),
                    "{f}: buffered messages survive close()"
                );
            }
            assert_eq!(rx.recv(), Err(RecvError));
        },
    );
}

// ---------------------------------------------------------------------------------------------
// 4. Timeouts and deadlines
// ---------------------------------------------------------------------------------------------

/// Timed receives on an empty channel time out (not before the timeout); timed sends that
/// cannot complete (full channel, or rendezvous without a receiver) hand their value back, and
/// leave nothing behind in the channel.
fn timeouts_hand_the_value_back(f: Flavor) {
    with_watchdog(WATCHDOG_SECS, &format!("timeouts ({f})"), move || {
        let short = Duration::from_millis(20);
        let counts = DropCounts::new();
        let (tx, rx) = f.make::<DropCounter>();

        let t0 = Instant::now();
        assert!(
            matches!(rx.recv_timeout(short), Err(RecvTimeoutError::Timeout)),
            "{f}: recv_timeout on an empty channel"
        );
        assert!(t0.elapsed() >= short, "{f}: recv_timeout timed out early");
        assert!(matches!(
            rx.recv_timeout(Duration::ZERO),
            Err(RecvTimeoutError::Timeout)
        ));
        assert!(
            matches!(rx.recv_deadline(t0), Err(RecvTimeoutError::Timeout)),
            "{f}: past"
        );
        let t1 = Instant::now();
        assert!(matches!(
            rx.recv_deadline(t1 + short),
            Err(RecvTimeoutError::Timeout)
        ));
        assert!(
            Instant::now() >= t1 + short,
            "{f}: recv_deadline timed out early"
        );
        assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));

        match f.capacity() {
            None => {
                // Never full: timed sends succeed at once, even with no time at all.
                tx.send_timeout(counts.make(1), Duration::ZERO)
                    .expect("unbounded");
                tx.send_deadline(counts.make(2), t0).expect("unbounded");
                tx.send_timeout(counts.make(3), short).expect("unbounded");
                assert_eq!(rx.len(), 3);
                for id in 1..=3 {
                    assert_eq!(rx.try_recv().map(|v| v.id()), Ok(id));
                }
            }
            Some(cap) => {
                for i in 0..cap {
                    tx.try_send(counts.make(1_000 + i as u64)).expect("room");
                }
                const HOW: [&str; 4] = [
                    "send_timeout(20 ms)",
                    "send_timeout(0)",
                    "send_deadline(past)",
                    "send_deadline(now + 20 ms)",
                ];
                for (i, how) in HOW.iter().enumerate() {
                    let v = counts.make(i as u64);
                    let start = Instant::now();
                    let r = match i {
                        0 => tx.send_timeout(v, short),
                        1 => tx.send_timeout(v, Duration::ZERO),
                        2 => tx.send_deadline(v, t0),
                        _ => tx.send_deadline(v, start + short),
                    };
                    match r {
                        Err(SendTimeoutError::Timeout(v)) => {
                            assert_eq!(v.id(), i as u64, "{f}: {how} handed back another value")
                        }
                        Err(SendTimeoutError::Disconnected(_)) => {
                            panic!("{f}: {how} on a connected channel reported Disconnected")
                        }
                        Ok(()) => panic!("{f}: {how} succeeded with no room and no receiver"),
                    }
                    if i == 0 || i == 3 {
                        assert!(start.elapsed() >= short, "{f}: {how} timed out early");
                    }
                }
                match tx.try_send(counts.make(9)) {
                    Err(TrySendError::Full(v)) => assert_eq!(v.id(), 9, "{f}: try_send"),
                    other => panic!("{f}: try_send with no room and no receiver: {other:?}"),
                }
                assert_eq!(
                    counts.live(),
                    cap as isize,
                    "{f}: only the buffered messages are alive after the timeouts"
                );
                // Nothing was left behind: the buffered messages, in order, then Empty (a
                // rendezvous sender that timed out withdrew its value).
                for i in 0..cap {
                    assert_eq!(rx.try_recv().map(|v| v.id()), Ok(1_000 + i as u64));
                }
                assert!(
                    matches!(rx.try_recv(), Err(TryRecvError::Empty)),
                    "{f}: a timed-out send left its value in the channel"
                );
                assert!(matches!(
                    rx.recv_timeout(short),
                    Err(RecvTimeoutError::Timeout)
                ));
            }
        }
        drop((tx, rx));
        assert_eq!(counts.live(), 0, "{f}: balanced");
    });
}

/// A timed receive gets a message sent while it waits; a timed send into a full channel (for
/// rendezvous: with no receiver yet) succeeds when a receiver comes in time.
fn timed_waits_see_the_other_side(f: Flavor) {
    with_watchdog(WATCHDOG_SECS, &format!("timed waits ({f})"), move || {
        for deadline in [false, true] {
            let (tx, rx) = f.make::<u64>();
            let sender = thread::spawn(move || {
                thread::sleep(SETTLE);
                tx.send(42)
            });
            let r = if deadline {
                rx.recv_deadline(Instant::now() + LONG)
            } else {
                rx.recv_timeout(LONG)
            };
            assert_eq!(
                r,
                Ok(42),
                "{f}: a timed receive gets a message sent in time"
            );
            assert_eq!(join(sender), Ok(()));
        }
        let Some(cap) = f.capacity() else {
            return;
        };
        for deadline in [false, true] {
            let (tx, rx) = f.make::<u64>();
            for i in 0..cap as u64 {
                tx.try_send(i).expect("room");
            }
            let receiver = thread::spawn(move || {
                thread::sleep(SETTLE);
                let first = rx.recv();
                (first, rx)
            });
            let r = if deadline {
                tx.send_deadline(99, Instant::now() + LONG)
            } else {
                tx.send_timeout(99, LONG)
            };
            assert_eq!(
                r,
                Ok(()),
                "{f}: a timed send completes when a receiver comes"
            );
            let (first, rx) = join(receiver);
            if cap == 0 {
                assert_eq!(
                    first,
                    Ok(99),
                    "{f}: the receiver took the waiting sender's value"
                );
            } else {
                assert_eq!(first, Ok(0));
                let rest: Vec<u64> = rx.try_iter().collect();
                let want: Vec<u64> = (1..cap as u64).chain([99]).collect();
                assert_eq!(rest, want, "{f}: FIFO after a timed send");
            }
        }
    });
}

// ---------------------------------------------------------------------------------------------
// 5. Exactly-once delivery with cloned receivers
// ---------------------------------------------------------------------------------------------

fn encode(producer: usize, seq: usize) -> u64 {
    ((producer as u64) << 32) | seq as u64
}

fn decode(v: u64) -> (usize, usize) {
    ((v >> 32) as usize, (v & 0xffff_ffff) as usize)
}

/// `producers` threads send `(producer, seq)` on their own sender clone; `consumers` threads
/// drain their own receiver clone with iter() until the last sender is gone. Every value
/// arrives exactly once, and each consumer sees each producer's values in increasing order.
fn exactly_once(f: Flavor, producers: usize, consumers: usize) {
    let per_producer = scaled(if f.is_rendezvous() { 1_000 } else { 2_000 }, 20);
    let what = format!("exactly-once ({f}, {producers} producers, {consumers} consumers)");
    with_watchdog(WATCHDOG_SECS, &what.clone(), move || {
        let (tx, rx) = f.make::<u64>();
        let senders: Vec<_> = (0..producers)
            .map(|p| {
                let tx = tx.clone();
                thread::spawn(move || {
                    for s in 0..per_producer {
                        if let Err(e) = tx.send(encode(p, s)) {
                            panic!("send failed on a connected channel: {e}");
                        }
                    }
                })
            })
            .collect();
        let receivers: Vec<_> = (0..consumers)
            .map(|c| {
                let rx = rx.clone();
                thread::spawn(move || {
                    let mut got = Vec::new();
                    let mut last: Vec<Option<usize>> = vec![None; producers];
                    for v in &rx {
                        let (p, s) = decode(v);
                        assert!(
                            p < producers && s < per_producer,
                            "consumer {c} received {v:#x}, which was never sent"
                        );
                        if let Some(prev) = last[p] {
                            assert!(
                                s > prev,
                                "per-producer order broken: consumer {c} received producer \
                                 {p}'s message {s} after its message {prev}"
                            );
                        }
                        last[p] = Some(s);
                        got.push(v);
                    }
                    got
                })
            })
            .collect();
        drop((tx, rx));
        for s in senders {
            join(s);
        }
        let mut seen = vec![false; producers * per_producer];
        for r in receivers {
            for v in join(r) {
                let (p, s) = decode(v);
                let slot = &mut seen[p * per_producer + s];
                assert!(
                    !*slot,
                    "{what}: producer {p}'s message {s} was received twice"
                );
                *slot = true;
            }
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            panic!(
                "{what}: producer {}'s message {} was never received",
                i / per_producer,
                i % per_producer
            );
        }
    });
}

// ---------------------------------------------------------------------------------------------
// 6. Nothing lost in the race with a disconnect
// ---------------------------------------------------------------------------------------------

/// How a race round ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RaceEnd {
    /// A thread holding a receiver calls close() at a random-ish point.
    ReceiverCloses,
    /// A thread holding a sender calls close() at a random-ish point.
    SenderCloses,
    /// Each receiver drops its handle after its own random-ish quota: the last drop disconnects
    /// and drops what is buffered, while a sender handle still keeps the channel alive.
    ReceiversLeave,
    /// The senders send everything and drop their handles.
    SendersFinish,
}

/// What happened to each message id, filled in by the threads of one round.
struct Ledger {
    made: Vec<AtomicBool>,
    /// The send of this id returned Ok.
    sent: Vec<AtomicBool>,
    /// The send of this id failed with Disconnected and handed the value back.
    returned: Vec<AtomicBool>,
    received: Vec<AtomicU8>,
    drops: Vec<AtomicU8>,
}

impl Ledger {
    fn new(n: usize) -> Self {
        let flags = || (0..n).map(|_| AtomicBool::new(false)).collect();
        let counts = || (0..n).map(|_| AtomicU8::new(0)).collect();
        Ledger {
            made: flags(),
            sent: flags(),
            returned: flags(),
            received: counts(),
            drops: counts(),
        }
    }
}

/// A message of the race: counted by a [`DropCounter`] and, per id, in the [`Ledger`].
struct Token {
    counter: DropCounter,
    ledger: Arc<Ledger>,
}

impl Token {
    fn id(&self) -> usize {
        self.counter.id() as usize
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        self.ledger.drops[self.id()].fetch_add(1, SeqCst);
    }
}

/// Senders send distinct tokens (with every kind of send) while the channel is disconnected
/// under them in one of four ways (see [`RaceEnd`]). Checks:
///
/// - a send that started after a receiver had observed the disconnect (or after the last
///   receiver was gone) fails, with Disconnected, not Full or Timeout;
/// - every token whose send returned Ok is received or dropped with the channel, exactly once;
///   every token handed back by a failed send is never received;
/// - when the last receiver has gone, every token sent Ok has already been received or
///   dropped, though a sender still holds the channel alive;
/// - when the receivers drain until Disconnected, none is dropped with the channel;
/// - constructions == drops.
fn disconnect_race(f: Flavor) {
    // The race window (a send overlapping the disconnect) opens once a round, so the power is
    // in the number of rounds: at least `min_rounds`, then more until `time_cap`. Correct code
    // passes either way; only the chance of catching a narrow race depends on the machine.
    let min_rounds = scaled(100, 4);
    let max_rounds = scaled(20_000, 4);
    let time_cap = Duration::from_millis(1_000);
    with_watchdog(
        WATCHDOG_SECS,
        &format!("disconnect race ({f})"),
        move || {
            const ENDS: [RaceEnd; 7] = [
                RaceEnd::ReceiverCloses,
                RaceEnd::SenderCloses,
                RaceEnd::ReceiversLeave,
                RaceEnd::ReceiverCloses,
                RaceEnd::SenderCloses,
                RaceEnd::ReceiversLeave,
                RaceEnd::SendersFinish,
            ];
            let start = Instant::now();
            let mut round = 0;
            while round < min_rounds || (round < max_rounds && start.elapsed() < time_cap) {
                let seed = 0x5eed_0000 + round as u64 * 7_919 + f.capacity().unwrap_or(999) as u64;
                disconnect_race_round(f, ENDS[round % ENDS.len()], seed, round);
                round += 1;
            }
        },
    );
}

fn disconnect_race_round(f: Flavor, end: RaceEnd, seed: u64, round: usize) {
    const SENDERS: usize = 3;
    const RECEIVERS: usize = 2;
    let per_sender = scaled(200, 8);
    let total = SENDERS * per_sender;
    let what = format!("{f}, {end:?}, round {round} (seed {seed:#x})");
    let mut rng = Rng::new(seed);
    let ledger = Arc::new(Ledger::new(total));
    let counts = DropCounts::new();
    // Set by a receiver after a receive returned Disconnected, or after the last receiver's
    // drop returned.
    let disconnected = Arc::new(AtomicBool::new(false));
    let received_total = Arc::new(AtomicUsize::new(0));
    let receivers_gone = Arc::new(AtomicUsize::new(0));
    // Every thread waits for `go`, set once this thread has dropped its own handles: otherwise
    // the receivers could all leave while the original receiver still holds the channel.
    let go = Arc::new(AtomicBool::new(false));
    let (tx, rx) = f.make::<Token>();

    let senders: Vec<_> = (0..SENDERS)
        .map(|s| {
            let tx = tx.clone();
            let (ledger, counts) = (Arc::clone(&ledger), counts.clone());
            let (disconnected, go) = (Arc::clone(&disconnected), Arc::clone(&go));
            let mut rng = Rng::new(rng.next());
            let what = what.clone();
            thread::spawn(move || {
                wait_until(|| go.load(SeqCst));
                for i in 0..per_sender {
                    let id = s * per_sender + i;
                    ledger.made[id].store(true, SeqCst);
                    let mut token = Token {
                        counter: counts.make(id as u64),
                        ledger: Arc::clone(&ledger),
                    };
                    let how = rng.below(4);
                    loop {
                        let after_disconnect = disconnected.load(SeqCst);
                        let r: Result<(), (Token, bool)> = match how {
                            0 => tx.send(token).map_err(|SendError(t)| (t, true)),
                            1 => tx.try_send(token).map_err(|e| {
                                let d = e.is_disconnected();
                                (e.into_inner(), d)
                            }),
                            2 => tx
                                .send_timeout(token, Duration::from_millis(1))
                                .map_err(|e| {
                                    let d = e.is_disconnected();
                                    (e.into_inner(), d)
                                }),
                            _ => tx
                                .send_deadline(token, Instant::now() + Duration::from_millis(1))
                                .map_err(|e| {
                                    let d = e.is_disconnected();
                                    (e.into_inner(), d)
                                }),
                        };
                        match r {
                            Ok(()) => {
                                assert!(
                                    !after_disconnect,
                                    "{what}: a send (kind {how}) returned Ok for message {id} \
                                     though it started after a receiver had seen the channel \
                                     disconnected"
                                );
                                ledger.sent[id].store(true, SeqCst);
                                break;
                            }
                            Err((back, disconnected_err)) => {
                                assert_eq!(
                                    back.id(),
                                    id,
                                    "{what}: a failed send handed back another message"
                                );
                                if disconnected_err {
                                    ledger.returned[id].store(true, SeqCst);
                                    return;
                                }
                                assert!(
                                    !after_disconnect,
                                    "{what}: a send (kind {how}) on a disconnected channel \
                                     reported Full/Timeout instead of Disconnected"
                                );
                                token = back;
                                thread::yield_now();
                            }
                        }
                    }
                }
            })
        })
        .collect();

    // Quotas for ReceiversLeave: together fewer than `total`, so every receiver reaches its own
    // (the senders keep sending while any receiver lives) and some messages are left over.
    let quotas: Vec<usize> = (0..RECEIVERS)
        .map(|_| rng.below(total / RECEIVERS))
        .collect();
    let receivers: Vec<_> = (0..RECEIVERS)
        .map(|r| {
            let rx = rx.clone();
            let ledger = Arc::clone(&ledger);
            let (disconnected, received_total, receivers_gone) = (
                Arc::clone(&disconnected),
                Arc::clone(&received_total),
                Arc::clone(&receivers_gone),
            );
            let quota = (end == RaceEnd::ReceiversLeave).then_some(quotas[r]);
            let what = what.clone();
            let go = Arc::clone(&go);
            thread::spawn(move || {
                wait_until(|| go.load(SeqCst));
                let mut got = 0;
                while quota.is_none_or(|q| got < q) {
                    match rx.recv() {
                        Ok(token) => {
                            ledger.received[token.id()].fetch_add(1, SeqCst);
                            got += 1;
                            received_total.fetch_add(1, SeqCst);
                        }
                        Err(RecvError) => {
                            assert!(
                                quota.is_none(),
                                "{what}: recv reported Disconnected while a sender lived and \
                                 nobody had closed the channel"
                            );
                            disconnected.store(true, SeqCst);
                            assert!(
                                matches!(rx.try_recv(), Err(TryRecvError::Disconnected)),
                                "{what}: once Disconnected, try_recv stays Disconnected"
                            );
                            break;
                        }
                    }
                }
                drop(rx);
                if receivers_gone.fetch_add(1, SeqCst) + 1 == RECEIVERS && quota.is_some() {
                    disconnected.store(true, SeqCst);
                }
            })
        })
        .collect();

    let close_at = rng.below(total / 2 + 1);
    let spin = rng.below(2_000);
    let closer = match end {
        RaceEnd::ReceiverCloses | RaceEnd::SenderCloses => {
            let handle: Result<Sender<Token>, Receiver<Token>> = if end == RaceEnd::SenderCloses {
                Ok(tx.clone())
            } else {
                Err(rx.clone())
            };
            let received_total = Arc::clone(&received_total);
            Some(thread::spawn(move || {
                wait_until(|| received_total.load(SeqCst) >= close_at);
                for _ in 0..spin {
                    std::hint::spin_loop();
                }
                match &handle {
                    Ok(tx) => tx.close(),
                    Err(rx) => rx.close(),
                };
            }))
        }
        RaceEnd::ReceiversLeave | RaceEnd::SendersFinish => None,
    };
    let keep_alive = (end == RaceEnd::ReceiversLeave).then(|| tx.clone());
    drop((tx, rx));
    go.store(true, SeqCst);

    for r in receivers {
        join(r);
    }
    if let Some(keep_alive) = keep_alive {
        // Every receiver is gone, a sender still holds the channel: whatever was sent Ok by now
        // has been received, or dropped by the last receiver's drop.
        assert!(
            keep_alive.is_disconnected(),
            "{what}: the last receiver is gone"
        );
        for id in 0..total {
            if ledger.sent[id].load(SeqCst) {
                assert!(
                    ledger.received[id].load(SeqCst) + ledger.drops[id].load(SeqCst) >= 1,
                    "{what}: message {id} was sent Ok, and was neither received nor dropped \
                     when the last receiver went (a sender still holds the channel)"
                );
            }
        }
        drop(keep_alive);
    }
    for s in senders {
        join(s);
    }
    if let Some(c) = closer {
        join(c);
    }

    // Every handle is gone now: the final account.
    let (mut sent, mut received, mut with_channel) = (0, 0, 0);
    for id in 0..total {
        let made = ledger.made[id].load(SeqCst);
        let ok = ledger.sent[id].load(SeqCst);
        let back = ledger.returned[id].load(SeqCst);
        let got = ledger.received[id].load(SeqCst);
        let drops = ledger.drops[id].load(SeqCst);
        if !made {
            assert!(
                !ok && !back && got == 0 && drops == 0,
                "{what}: message {id} never made"
            );
            continue;
        }
        assert_eq!(drops, 1, "{what}: message {id} was dropped {drops} times");
        assert!(
            ok != back,
            "{what}: message {id}: its send must have returned Ok xor handed it back"
        );
        assert!(got <= 1, "{what}: message {id} was received {got} times");
        if back {
            assert_eq!(got, 0, "{what}: message {id} was handed back and received");
        }
        if ok {
            sent += 1;
            if got == 1 {
                received += 1;
            } else {
                with_channel += 1;
            }
        }
    }
    assert_eq!(
        received + with_channel,
        sent,
        "{what}: received + dropped-with-channel"
    );
    assert_eq!(
        received,
        received_total.load(SeqCst),
        "{what}: receive count"
    );
    if end != RaceEnd::ReceiversLeave {
        assert_eq!(
            with_channel, 0,
            "{what}: the receivers drained until Disconnected, yet {with_channel} messages sent \
             Ok were never received"
        );
    }
    if end == RaceEnd::SendersFinish {
        assert_eq!(
            sent, total,
            "{what}: nothing disconnected early, every send succeeds"
        );
    }
    assert_eq!(
        counts.made(),
        counts.dropped(),
        "{what}: constructions == drops"
    );
}

// ---------------------------------------------------------------------------------------------
// 7. WeakSender
// ---------------------------------------------------------------------------------------------

/// upgrade() works while a sender lives and counts as one; a weak sender is not counted and
/// does not keep the channel connected; once every sender is gone upgrade() returns None.
fn weak_sender(f: Flavor) {
    with_watchdog(WATCHDOG_SECS, &format!("weak sender ({f})"), move || {
        let (tx, rx) = f.make::<u64>();
        let weak: WeakSender<u64> = tx.downgrade();
        let weak2 = weak.clone();
        assert_eq!(rx.sender_count(), 1, "{f}: a weak sender is not counted");
        let up = weak.upgrade().expect("a sender lives");
        assert!(
            up.same_channel(&tx),
            "{f}: the upgraded sender is of the same channel"
        );
        assert_eq!(rx.sender_count(), 2, "{f}: an upgraded sender is counted");
        drop(tx);
        assert!(
            !rx.is_disconnected(),
            "{f}: the upgraded sender keeps it connected"
        );
        let consumer = {
            let rx = rx.clone();
            thread::spawn(move || rx.recv())
        };
        up.send(5).expect("connected");
        assert_eq!(join(consumer), Ok(5));
        drop(up);
        assert_eq!(rx.sender_count(), 0);
        assert!(
            rx.is_disconnected(),
            "{f}: weak senders do not keep the channel connected"
        );
        assert_eq!(
            rx.recv(),
            Err(RecvError),
            "{f}: weak senders do not keep it connected"
        );
        assert!(
            weak.upgrade().is_none(),
            "{f}: upgrade() after every sender is gone"
        );
        assert!(weak2.upgrade().is_none(), "{f}: upgrade() of a clone, too");
        assert_eq!(rx.sender_count(), 0, "{f}: a failed upgrade counts nothing");
        assert!(rx.is_disconnected());

        // A receiver blocked while only a weak sender remains is woken by the last drop.
        let (tx, rx) = f.make::<u64>();
        let weak = tx.downgrade();
        let consumer = thread::spawn(move || rx.recv());
        thread::sleep(SETTLE);
        drop(tx);
        assert_eq!(
            join(consumer),
            Err(RecvError),
            "{f}: the weak sender does not count"
        );
        assert!(weak.upgrade().is_none());
    });
}

/// upgrade() racing with the last sender's drop: an upgrade either fails, or returns a sender
/// that keeps the channel connected (its send succeeds); once it fails it fails for good.
fn weak_upgrade_races_last_drop(f: Flavor) {
    let rounds = scaled(300, 5);
    with_watchdog(
        WATCHDOG_SECS,
        &format!("weak upgrade race ({f})"),
        move || {
            for round in 0..rounds {
                let (tx, rx) = f.make::<u64>();
                let weak = tx.downgrade();
                let consumer = thread::spawn(move || rx.iter().count());
                let dropper = thread::spawn(move || drop(tx));
                let upgrader = thread::spawn(move || {
                    let mut sent = 0;
                    while let Some(s) = weak.upgrade() {
                        assert!(
                            !s.is_disconnected(),
                            "round {round}: upgraded onto a disconnected channel"
                        );
                        s.send(sent as u64).unwrap_or_else(|_| {
                            panic!("round {round}: a sender returned by upgrade() could not send")
                        });
                        sent += 1;
                    }
                    assert!(
                        weak.upgrade().is_none(),
                        "round {round}: upgrade() came back"
                    );
                    sent
                });
                join(dropper);
                let sent = join(upgrader);
                assert_eq!(
                    join(consumer),
                    sent,
                    "round {round}: every upgraded send arrived"
                );
            }
        },
    );
}

// ---------------------------------------------------------------------------------------------
// 8. Idle receivers sleep
// ---------------------------------------------------------------------------------------------

/// A receiver waiting 300 ms in recv_timeout on an empty channel sleeps: under 30 ms of CPU.
/// Beside it, a control thread spins on try_recv until its own measure reaches 60 ms, showing
/// that the measure sees CPU burn.
#[cfg(target_os = "linux")]
fn idle_receiver_sleeps(f: Flavor) {
    const WAIT: Duration = Duration::from_millis(300);
    const LIMIT: Duration = Duration::from_millis(30);
    const CONTROL_BURN: Duration = Duration::from_millis(60);
    const CONTROL_WALL_CAP: Duration = Duration::from_secs(30);
    with_watchdog(45, &format!("idle receiver ({f})"), move || {
        let (idle_tx, idle_rx) = f.make::<u64>();
        let (spin_tx, spin_rx) = f.make::<u64>();
        let receiver = thread::spawn(move || {
            let before = thread_cpu_time();
            let r = idle_rx.recv_timeout(WAIT);
            let used = thread_cpu_time().saturating_sub(before);
            (r, used)
        });
        let control = thread::spawn(move || {
            let start = Instant::now();
            let before = thread_cpu_time();
            loop {
                assert_eq!(spin_rx.try_recv(), Err(TryRecvError::Empty), "nobody sent");
                let used = thread_cpu_time().saturating_sub(before);
                if used >= CONTROL_BURN || start.elapsed() >= CONTROL_WALL_CAP {
                    return (used, start.elapsed());
                }
            }
        });
        let (r, used) = join(receiver);
        let (control_used, control_wall) = join(control);
        drop((idle_tx, spin_tx));
        assert_eq!(
            r,
            Err(RecvTimeoutError::Timeout),
            "{f}: recv_timeout on an empty channel"
        );
        assert!(
            control_used >= CONTROL_BURN,
            "the spinning control measured only {} ms of CPU in {:?}: the CPU measure cannot \
             see a busy thread",
            control_used.as_millis(),
            control_wall
        );
        assert!(
            used < LIMIT,
            "{f}: idle receiver burned {} ms of CPU in a {} ms wait (limit {} ms)",
            used.as_millis(),
            WAIT.as_millis(),
            LIMIT.as_millis()
        );
    });
}

// ---------------------------------------------------------------------------------------------
// 9. Odds and ends
// ---------------------------------------------------------------------------------------------

/// Zero-sized messages (with a Drop) travel and are counted like any other.
fn zero_sized_messages(f: Flavor) {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Zst;
    impl Drop for Zst {
        fn drop(&mut self) {
            DROPS.fetch_add(1, SeqCst);
        }
    }
    with_watchdog(
        WATCHDOG_SECS,
        &format!("zero-sized messages ({f})"),
        move || {
            let before = DROPS.load(SeqCst);
            let (tx, rx) = f.make::<Zst>();
            let producer = thread::spawn(move || {
                for _ in 0..100 {
                    tx.send(Zst).expect("connected");
                }
            });
            assert_eq!(rx.iter().count(), 100, "{f}: 100 zero-sized messages");
            join(producer);
            assert_eq!(DROPS.load(SeqCst) - before, 100, "{f}: each dropped once");
        },
    );
}

/// The handles are Send + Sync for a Send message type, like crossbeam's.
fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn handles_are_send_and_sync() {
    assert_send_sync::<Sender<u64>>();
    assert_send_sync::<Receiver<u64>>();
    assert_send_sync::<WeakSender<u64>>();
    assert_send_sync::<SendError<u64>>();
    assert_send_sync::<RecvError>();
}

// ---------------------------------------------------------------------------------------------
// The suite, one module per flavour
// ---------------------------------------------------------------------------------------------

/// One module of tests per flavour: the scenarios every flavour runs, then `$extra` items (tests
/// of that flavour only; they can name the flavour as `F`).
macro_rules! channel_suite {
    ($name:ident, $flavor:expr, { $($extra:item)* }) => {
        mod $name {
            use super::*;

            const F: Flavor = $flavor;

            #[test]
            fn handles_and_counts() {
                super::handles_and_counts(F);
            }

            #[test]
            fn close_from_either_side() {
                super::close_from_either_side(F);
            }

            #[test]
            fn last_sender_drop_delivers_then_disconnects() {
                super::last_sender_drop_delivers_then_disconnects(F);
            }

            #[test]
            fn iterators() {
                super::iterators(F);
            }

            #[test]
            fn last_sender_drop_wakes_blocked_receivers() {
                super::last_sender_drop_wakes_blocked_receivers(F);
            }

            #[test]
            fn close_wakes_blocked_receivers() {
                super::close_wakes_blocked_receivers(F);
            }

            #[test]
            fn last_receiver_drop_fails_sends() {
                super::last_receiver_drop_fails_sends(F);
            }

            #[test]
            fn timeouts_hand_the_value_back() {
                super::timeouts_hand_the_value_back(F);
            }

            #[test]
            fn timed_waits_see_the_other_side() {
                super::timed_waits_see_the_other_side(F);
            }

            #[test]
            fn exactly_once_1x1() {
                super::exactly_once(F, 1, 1);
            }

            #[test]
            fn exactly_once_2x2() {
                super::exactly_once(F, 2, 2);
            }

            #[test]
            fn exactly_once_4x4() {
                super::exactly_once(F, 4, 4);
            }

            #[test]
            fn exactly_once_8x1() {
                super::exactly_once(F, 8, 1);
            }

            #[test]
            fn exactly_once_1x8() {
                super::exactly_once(F, 1, 8);
            }

            #[test]
            fn disconnect_race() {
                super::disconnect_race(F);
            }

            #[test]
            fn weak_sender() {
                super::weak_sender(F);
            }

            #[test]
            fn weak_upgrade_races_last_drop() {
                super::weak_upgrade_races_last_drop(F);
            }

            #[test]
            #[cfg(target_os = "linux")]
            #[cfg_attr(miri, ignore = "getrusage is not available under Miri")]
            fn idle_receiver_sleeps() {
                super::idle_receiver_sleeps(F);
            }

            #[test]
            fn zero_sized_messages() {
                super::zero_sized_messages(F);
            }

            $($extra)*
        }
    };
}

channel_suite!(bounded, Flavor::Bounded(16), {
    #[test]
    fn close_keeps_buffered_messages() {
        super::close_keeps_buffered_messages(F);
    }

    #[test]
    fn buffered_messages_dropped_with_last_receiver() {
        super::buffered_messages_dropped_with_last_receiver(F);
    }

    #[test]
    fn last_receiver_drop_wakes_blocked_senders() {
        super::last_receiver_drop_wakes_blocked_senders(F);
    }

    #[test]
    fn close_wakes_blocked_senders() {
        super::close_wakes_blocked_senders(F);
    }

    /// len / is_full / is_empty / try_send Full through fill and drain, for several capacities.
    #[test]
    fn capacity_is_exact() {
        for cap in [1usize, 2, 3, 16] {
            let (tx, rx) = channel::bounded::<u64>(cap);
            for round in 0..3u64 {
                for i in 0..cap {
                    assert!(!tx.is_full(), "bounded({cap}): full with {i} messages");
                    tx.try_send(round * 100 + i as u64).expect("room");
                    assert_eq!(rx.len(), i + 1, "bounded({cap}): len");
                }
                assert!(tx.is_full() && rx.is_full(), "bounded({cap}): full");
                assert!(!tx.is_empty());
                assert_eq!(tx.try_send(7), Err(TrySendError::Full(7)), "bounded({cap})");
                for i in 0..cap {
                    assert_eq!(rx.try_recv(), Ok(round * 100 + i as u64), "bounded({cap})");
                }
                assert!(rx.is_empty() && !rx.is_full(), "bounded({cap}): drained");
            }
        }
    }
});

channel_suite!(bounded1, Flavor::Bounded(1), {
    #[test]
    fn close_keeps_buffered_messages() {
        super::close_keeps_buffered_messages(F);
    }

    #[test]
    fn buffered_messages_dropped_with_last_receiver() {
        super::buffered_messages_dropped_with_last_receiver(F);
    }

    #[test]
    fn last_receiver_drop_wakes_blocked_senders() {
        super::last_receiver_drop_wakes_blocked_senders(F);
    }

    #[test]
    fn close_wakes_blocked_senders() {
        super::close_wakes_blocked_senders(F);
    }
});

channel_suite!(rendezvous, Flavor::Bounded(0), {
    #[test]
    fn last_receiver_drop_wakes_blocked_senders() {
        super::last_receiver_drop_wakes_blocked_senders(F);
    }

    #[test]
    fn close_wakes_blocked_senders() {
        super::close_wakes_blocked_senders(F);
    }

    /// With no receiver waiting, try_send reports Full (with the value) and try_recv Empty;
    /// the snapshots are those of a channel that is always empty and always full.
    #[test]
    fn try_send_without_receiver_is_full() {
        let counts = DropCounts::new();
        let (tx, rx) = channel::bounded::<DropCounter>(0);
        for i in 0..3 {
            match tx.try_send(counts.make(i)) {
                Err(TrySendError::Full(v)) => assert_eq!(v.id(), i, "the value comes back"),
                other => panic!("rendezvous try_send with no receiver waiting: {other:?}"),
            }
        }
        assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));
        assert_eq!((tx.len(), tx.capacity()), (0, Some(0)));
        assert!(tx.is_empty() && tx.is_full() && rx.is_empty() && rx.is_full());
        assert_eq!(counts.live(), 0, "a refused try_send keeps nothing");
        drop(rx);
        assert!(matches!(
            tx.try_send(counts.make(9)),
            Err(TrySendError::Disconnected(_))
        ));
        assert_eq!(counts.live(), 0);
    }

    /// A send completes only when a receiver takes the value: the sender thread sets a flag
    /// after send returns, and the flag is still clear when the receiver (after a pause) takes
    /// the value. A correct channel can never set it early, whatever the timing. Then the same
    /// without pauses, 200 times: before the receiver takes message i, the sender has completed
    /// at most i sends.
    #[test]
    fn send_completes_only_when_taken() {
        with_watchdog(WATCHDOG_SECS, "rendezvous send completion", || {
            for kind in 0..3 {
                let (tx, rx) = channel::bounded::<u64>(0);
                let done = Arc::new(AtomicBool::new(false));
                let sender = {
                    let done = Arc::clone(&done);
                    thread::spawn(move || {
                        let r = match kind {
                            0 => tx.send(7).map_err(|_| ()),
                            1 => tx.send_timeout(7, LONG).map_err(|_| ()),
                            _ => tx.send_deadline(7, Instant::now() + LONG).map_err(|_| ()),
                        };
                        done.store(true, SeqCst);
                        r
                    })
                };
                thread::sleep(SETTLE * 3);
                assert!(
                    !done.load(SeqCst),
                    "a rendezvous send (kind {kind}) returned before any receiver took its value"
                );
                assert_eq!((rx.len(), rx.is_empty(), rx.is_full()), (0, true, true));
                assert_eq!(rx.recv(), Ok(7));
                assert_eq!(join(sender), Ok(()));
                assert!(done.load(SeqCst));
            }

            let rounds = scaled(200, 10);
            let (tx, rx) = channel::bounded::<usize>(0);
            let completed = Arc::new(AtomicUsize::new(0));
            let sender = {
                let completed = Arc::clone(&completed);
                thread::spawn(move || {
                    for i in 0..rounds {
                        tx.send(i).expect("connected");
                        completed.store(i + 1, SeqCst);
                    }
                })
            };
            for i in 0..rounds {
                let c = completed.load(SeqCst);
                assert!(
                    c <= i,
                    "{c} rendezvous sends completed before the receiver took message {i}"
                );
                assert_eq!(rx.recv(), Ok(i));
            }
            join(sender);
        });
    }

    /// try_recv takes the value of a sender waiting in send; try_send hands a value to a
    /// receiver waiting in recv (Full, with the value back, until the receiver waits).
    #[test]
    fn try_ops_meet_a_waiting_partner() {
        with_watchdog(WATCHDOG_SECS, "rendezvous try ops", || {
            let (tx, rx) = channel::bounded::<u64>(0);
            let sender = thread::spawn(move || (tx.send(5), tx));
            let got = loop {
                match rx.try_recv() {
                    Ok(v) => break v,
                    Err(TryRecvError::Empty) => thread::yield_now(),
                    Err(TryRecvError::Disconnected) => panic!("the sender is alive"),
                }
            };
            assert_eq!(got, 5);
            let (r, tx) = join(sender);
            assert_eq!(r, Ok(()), "the sender whose value try_recv took succeeds");

            let receiver = thread::spawn(move || (rx.recv(), rx));
            let mut v = 6;
            loop {
                match tx.try_send(v) {
                    Ok(()) => break,
                    Err(TrySendError::Full(back)) => {
                        assert_eq!(back, 6, "try_send hands its own value back");
                        v = back;
                        thread::yield_now();
                    }
                    Err(TrySendError::Disconnected(_)) => panic!("the receiver is alive"),
                }
            }
            let (r, _rx) = join(receiver);
            assert_eq!(r, Ok(6), "the waiting receiver got try_send's value");
        });
    }

    /// recv_timeout with a sender arriving in time gets its value; a sender already waiting is
    /// taken even by a zero timeout.
    #[test]
    fn recv_timeout_meets_a_sender() {
        with_watchdog(WATCHDOG_SECS, "rendezvous recv_timeout", || {
            let (tx, rx) = channel::bounded::<u64>(0);
            let sender = thread::spawn(move || {
                thread::sleep(SETTLE);
                tx.send(11).map(|()| tx)
            });
            assert_eq!(rx.recv_timeout(LONG), Ok(11));
            let tx = join(sender).expect("taken");
            let sender = thread::spawn(move || tx.send(12));
            // Wait (untimed) until the sender waits: try_recv's Empty is not an error here.
            let got = loop {
                match rx.recv_timeout(Duration::ZERO) {
                    Ok(v) => break v,
                    Err(RecvTimeoutError::Timeout) => thread::yield_now(),
                    Err(RecvTimeoutError::Disconnected) => panic!("the sender is alive"),
                }
            };
            assert_eq!(got, 12);
            assert_eq!(join(sender), Ok(()));
        });
    }
});

channel_suite!(unbounded, Flavor::Unbounded, {
    #[test]
    fn close_keeps_buffered_messages() {
        super::close_keeps_buffered_messages(F);
    }

    #[test]
    fn buffered_messages_dropped_with_last_receiver() {
        super::buffered_messages_dropped_with_last_receiver(F);
    }

    /// Never full; len counts across blocks; FIFO across blocks and through recycled ones.
    #[test]
    fn len_and_fifo_across_blocks() {
        let (tx, rx) = channel::unbounded::<u64>();
        let mut next_in = 0u64;
        let mut next_out = 0u64;
        for (burst, take) in [(200, 100), (5, 105), (31, 31), (62, 1), (300, 361), (1, 1)] {
            for _ in 0..burst {
                tx.try_send(next_in).expect("unbounded");
                next_in += 1;
                assert!(!tx.is_full(), "an unbounded channel is never full");
            }
            assert_eq!(rx.len(), (next_in - next_out) as usize, "len after a burst");
            for _ in 0..take {
                assert_eq!(rx.try_recv(), Ok(next_out), "FIFO across blocks");
                next_out += 1;
            }
            assert_eq!(
                tx.len(),
                (next_in - next_out) as usize,
                "len after draining"
            );
        }
        assert!(rx.is_empty());
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    }
});

// ---------------------------------------------------------------------------------------------
// The error types
// ---------------------------------------------------------------------------------------------

mod errors {
    use super::*;

    /// Not Debug, not Clone: the errors' Debug must not need either.
    struct NotDebug;

    fn check_message(e: &dyn Error, must_contain: &str) {
        let msg = e.to_string();
        assert!(!msg.is_empty(), "empty Display");
        assert!(
            msg.starts_with(|c: char| c.is_lowercase()),
            "Display starts in lower case: {msg:?}"
        );
        assert!(
            !msg.ends_with('.'),
            "Display has no trailing period: {msg:?}"
        );
        assert!(
            msg.contains(must_contain),
            "{msg:?} should mention {must_contain:?}"
        );
        assert!(e.source().is_none(), "{msg:?} has no source");
    }

    #[test]
    fn display_is_lowercase_without_period() {
        check_message(&SendError(1), "disconnected");
        check_message(&TrySendError::Full(1), "full");
        check_message(&TrySendError::Disconnected(1), "disconnected");
        check_message(&SendTimeoutError::Timeout(1), "timed out");
        check_message(&SendTimeoutError::Disconnected(1), "disconnected");
        check_message(&RecvError, "disconnected");
        check_message(&TryRecvError::Empty, "empty");
        check_message(&TryRecvError::Disconnected, "disconnected");
        check_message(&RecvTimeoutError::Timeout, "timed out");
        check_message(&RecvTimeoutError::Disconnected, "disconnected");
        assert_ne!(
            TryRecvError::Empty.to_string(),
            TryRecvError::Disconnected.to_string()
        );
        assert_ne!(
            TrySendError::Full(1).to_string(),
            TrySendError::Disconnected(1).to_string()
        );
    }

    #[test]
    fn debug_without_debug_values() {
        assert!(format!("{:?}", SendError(NotDebug)).contains("SendError"));
        assert!(format!("{:?}", TrySendError::Full(NotDebug)).contains("Full"));
        assert!(format!("{:?}", TrySendError::Disconnected(NotDebug)).contains("Disconnected"));
        assert!(format!("{:?}", SendTimeoutError::Timeout(NotDebug)).contains("Timeout"));
        assert!(format!("{:?}", SendTimeoutError::Disconnected(NotDebug)).contains("Disconnected"));
        let (tx, rx) = channel::bounded::<NotDebug>(1);
        assert!(!format!("{tx:?}").is_empty() && !format!("{rx:?}").is_empty());
        assert!(!format!("{:?}", rx.iter()).is_empty());
        assert!(!format!("{:?}", rx.try_iter()).is_empty());
        assert!(!format!("{:?}", rx.into_iter()).is_empty());
        // Boxed as dyn Error + Send + Sync, as `?` does.
        let boxed: Box<dyn Error + Send + Sync> = Box::new(TrySendError::Full(NotDebug));
        assert_eq!(boxed.to_string(), TrySendError::Full(1).to_string());
    }

    #[test]
    fn into_inner_and_predicates() {
        assert_eq!(SendError(3).into_inner(), 3);
        assert_eq!(SendError(3).0, 3);
        let full = TrySendError::Full(4);
        assert!(full.is_full() && !full.is_disconnected());
        assert_eq!(full.into_inner(), 4);
        let gone = TrySendError::Disconnected(5);
        assert!(!gone.is_full() && gone.is_disconnected());
        assert_eq!(gone.into_inner(), 5);
        let timeout = SendTimeoutError::Timeout(6);
        assert!(timeout.is_timeout() && !timeout.is_disconnected());
        assert_eq!(timeout.into_inner(), 6);
        let gone = SendTimeoutError::Disconnected(7);
        assert!(!gone.is_timeout() && gone.is_disconnected());
        assert_eq!(gone.into_inner(), 7);
        assert!(TryRecvError::Empty.is_empty() && !TryRecvError::Empty.is_disconnected());
        assert!(
            TryRecvError::Disconnected.is_disconnected() && !TryRecvError::Disconnected.is_empty()
        );
        assert!(
            RecvTimeoutError::Timeout.is_timeout() && !RecvTimeoutError::Timeout.is_disconnected()
        );
        assert!(
            RecvTimeoutError::Disconnected.is_disconnected()
                && !RecvTimeoutError::Disconnected.is_timeout()
        );
    }

    #[test]
    fn conversions_like_std() {
        assert_eq!(
            TrySendError::from(SendError(8)),
            TrySendError::Disconnected(8)
        );
        assert_eq!(
            SendTimeoutError::from(SendError(9)),
            SendTimeoutError::Disconnected(9)
        );
        assert_eq!(TryRecvError::from(RecvError), TryRecvError::Disconnected);
        assert_eq!(
            RecvTimeoutError::from(RecvError),
            RecvTimeoutError::Disconnected
        );
        // `?` converts too.
        fn try_path(tx: &Sender<u8>) -> Result<(), TrySendError<u8>> {
            tx.send(1)?;
            Ok(())
        }
        let (tx, rx) = channel::unbounded::<u8>();
        drop(rx);
        assert_eq!(try_path(&tx), Err(TrySendError::Disconnected(1)));
    }

    #[test]
    #[allow(clippy::clone_on_copy)] // Clone itself is what is tested
    fn clone_copy_eq() {
        let e = TrySendError::Full(1u8);
        let c = e;
        assert_eq!(e, c.clone());
        assert_ne!(TrySendError::Full(1u8), TrySendError::Disconnected(1u8));
        assert_ne!(
            SendTimeoutError::Timeout(1u8),
            SendTimeoutError::Timeout(2u8)
        );
        let r = RecvTimeoutError::Timeout;
        assert_eq!(r, r.clone());
    }
}

// ---------------------------------------------------------------------------------------------
// The examples of std::sync::mpsc's documentation, on berth's channels (`channel()` is
// `unbounded()`, `sync_channel(n)` is `bounded(n)`). Sleeps that only made the examples'
// timing plausible are replaced by joins, so that nothing depends on timing.
// ---------------------------------------------------------------------------------------------

mod std_docs {
    use super::*;
    use berth::channel::{bounded, unbounded};

    #[test]
    fn channel_example() {
        let (tx, rx) = unbounded();
        let t = thread::spawn(move || {
            tx.send(10).unwrap();
        });
        assert_eq!(rx.recv().unwrap(), 10);
        join(t);
    }

    #[test]
    fn sync_channel_0_rendezvous() {
        let (sender, receiver) = bounded(0);
        let t = thread::spawn(move || {
            sender.send(1).unwrap();
        });
        let msg = receiver.recv().unwrap();
        assert_eq!(1, msg);
        join(t);
    }

    #[test]
    fn sync_channel_1_buffers_one() {
        let (sender, receiver) = bounded(1);
        // this returns immediately
        sender.send(1).unwrap();
        let t = thread::spawn(move || {
            // this will block until the previous message has been received
            sender.send(2).unwrap();
        });
        assert_eq!(receiver.recv().unwrap(), 1);
        assert_eq!(receiver.recv().unwrap(), 2);
        join(t);
    }

    #[test]
    fn send_fails_once_the_receiver_is_gone() {
        let (tx, rx) = unbounded();
        // This send is always successful
        tx.send(1).unwrap();
        // This send will fail because the receiver is gone
        drop(rx);
        assert_eq!(tx.send(1).unwrap_err().0, 1);
    }

    #[test]
    fn recv_after_the_sender_is_gone() {
        let (send, recv) = unbounded();
        let handle = thread::spawn(move || {
            send.send(1u8).unwrap();
        });
        handle.join().unwrap();
        assert_eq!(Ok(1), recv.recv());
        assert_eq!(Err(RecvError), recv.recv());
    }

    #[test]
    fn recv_buffering_behaviour() {
        let (send, recv) = unbounded();
        let handle = thread::spawn(move || {
            send.send(1u8).unwrap();
            send.send(2).unwrap();
            send.send(3).unwrap();
            drop(send);
        });
        // wait for the thread to join so we ensure the sender is dropped
        handle.join().unwrap();
        assert_eq!(Ok(1), recv.recv());
        assert_eq!(Ok(2), recv.recv());
        assert_eq!(Ok(3), recv.recv());
        assert_eq!(Err(RecvError), recv.recv());
    }

    #[test]
    fn try_recv_with_the_sender_gone() {
        let (_, receiver): (Sender<i32>, Receiver<i32>) = unbounded();
        assert!(receiver.try_recv().is_err());
        assert_eq!(receiver.try_recv(), Err(TryRecvError::Disconnected));
    }

    #[test]
    fn recv_timeout_success_and_timeout() {
        let (send, recv) = unbounded();
        let t = thread::spawn(move || {
            send.send('a').unwrap();
        });
        assert_eq!(recv.recv_timeout(LONG), Ok('a'));
        join(t);

        // The doc's sender sleeps 800 ms; one that never sends is the same, without the race.
        let (send, recv) = unbounded::<char>();
        assert_eq!(
            recv.recv_timeout(Duration::from_millis(40)),
            Err(RecvTimeoutError::Timeout)
        );
        drop(send);
        assert_eq!(
            recv.recv_timeout(Duration::from_millis(40)),
            Err(RecvTimeoutError::Disconnected)
        );
    }

    #[test]
    fn iter_example() {
        let (send, recv) = unbounded();
        let t = thread::spawn(move || {
            send.send(1u8).unwrap();
            send.send(2u8).unwrap();
            send.send(3u8).unwrap();
        });
        let mut iter = recv.iter();
        assert_eq!(iter.next(), Some(1));
        assert_eq!(iter.next(), Some(2));
        assert_eq!(iter.next(), Some(3));
        assert_eq!(iter.next(), None);
        join(t);
    }

    #[test]
    fn try_iter_example() {
        let (sender, receiver) = unbounded();
        // nothing is in the buffer yet
        assert!(receiver.try_iter().next().is_none());
        let t = thread::spawn(move || {
            sender.send(1).unwrap();
            sender.send(2).unwrap();
            sender.send(3).unwrap();
        });
        t.join().unwrap(); // instead of the doc's 2 s sleep
        let mut iter = receiver.try_iter();
        assert_eq!(iter.next(), Some(1));
        assert_eq!(iter.next(), Some(2));
        assert_eq!(iter.next(), Some(3));
        assert_eq!(iter.next(), None);
    }

    #[test]
    fn sync_sender_try_send_example() {
        let (sync_sender, receiver) = bounded(1);
        let sync_sender2 = sync_sender.clone();
        // First thread owns sync_sender
        let a = thread::spawn(move || {
            sync_sender.send(1).unwrap();
            sync_sender.send(2).unwrap();
        });
        // Second thread owns sync_sender2
        let b = thread::spawn(move || {
            // This will return an error and send no message if the buffer is full
            let _ = sync_sender2.try_send(3);
        });
        let got: Vec<i32> = receiver.iter().collect();
        join(a);
        join(b);
        // 1 before 2; the third message may never have been sent.
        let ones: Vec<_> = got.iter().filter(|&&v| v != 3).copied().collect();
        assert_eq!(ones, [1, 2], "got {got:?}");
        assert!(got.iter().filter(|&&v| v == 3).count() <= 1, "got {got:?}");
    }

    #[test]
    fn into_iter_for_ref_and_owned() {
        let (tx, rx) = unbounded();
        for i in 0..3 {
            tx.send(i).unwrap();
        }
        drop(tx);
        let mut seen = Vec::new();
        for v in &rx {
            seen.push(v);
        }
        assert_eq!(seen, [0, 1, 2]);
        let (tx, rx) = bounded(4);
        tx.send(7).unwrap();
        drop(tx);
        assert_eq!(rx.into_iter().collect::<Vec<_>>(), [7]);
    }
}
