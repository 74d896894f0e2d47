//! Random single-threaded operation sequences on a channel against a model, for every flavour:
//! `bounded(1..=8)`, `bounded(0)` (rendezvous) and `unbounded()`.
//!
//! The test keeps vectors of live handles (senders, receivers, weak senders), so that an
//! operation can target, clone, drop or close through one particular handle. Single-threaded,
//! every operation is atomic, so each result and each snapshot (`len`, `is_empty`, `is_full`,
//! `capacity`, `sender_count`, `receiver_count`, `is_disconnected`) must match the model
//! exactly. Messages are [`DropCounter`]s, so the model also checks *when* messages are
//! dropped: the number alive is always exactly the number the model holds (a message handed
//! back in an error is dropped by the test at once; the buffered ones die with the last
//! receiver). Blocking operations are issued only when the model says they return at once.
//!
//! For a rendezvous channel in one thread, no partner ever waits: every `try_send` is `Full` or
//! `Disconnected`, every `try_recv` `Empty` or `Disconnected`; that is still checked.

// Tests drive real std threads and atomics against the crate (the watchdog runs each property on
// its own thread); core/clippy.toml forbids them in the crate's own code, not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::channel::{
    self, Receiver, RecvTimeoutError, SendTimeoutError, Sender, TryRecvError, TrySendError,
    WeakSender,
};
use common::{with_watchdog, DropCounter, DropCounts, WATCHDOG_SECS};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
enum Op {
    TrySend(Index, u16),
    SendTimeoutZero(Index, u16),
    /// `send_deadline` with a deadline already past.
    SendDeadlinePast(Index, u16),
    /// `send`, only when the model says it will not wait (room, or disconnected).
    SendIfNoWait(Index, u16),
    TryRecv(Index),
    RecvTimeoutZero(Index),
    /// `recv`, only when the model says it will not wait (a message, or disconnected).
    RecvIfNoWait(Index),
    /// `try_iter().collect()`.
    TryIter(Index),
    /// `iter().collect()`, only when disconnected (otherwise it would wait).
    IterIfDisconnected(Index),
    CloneSender(Index),
    DropSender(Index),
    CloneReceiver(Index),
    DropReceiver(Index),
    CloseViaSender(Index),
    CloseViaReceiver(Index),
    Downgrade(Index),
    Upgrade(Index),
    DropWeak(Index),
}

fn op() -> impl Strategy<Value = Op> {
    let i = any::<Index>;
    let v = any::<u16>;
    prop_oneof![
        6 => (i(), v()).prop_map(|(i, v)| Op::TrySend(i, v)),
        2 => (i(), v()).prop_map(|(i, v)| Op::SendTimeoutZero(i, v)),
        1 => (i(), v()).prop_map(|(i, v)| Op::SendDeadlinePast(i, v)),
        2 => (i(), v()).prop_map(|(i, v)| Op::SendIfNoWait(i, v)),
        5 => i().prop_map(Op::TryRecv),
        2 => i().prop_map(Op::RecvTimeoutZero),
        2 => i().prop_map(Op::RecvIfNoWait),
        1 => i().prop_map(Op::TryIter),
        1 => i().prop_map(Op::IterIfDisconnected),
        2 => i().prop_map(Op::CloneSender),
        2 => i().prop_map(Op::DropSender),
        2 => i().prop_map(Op::CloneReceiver),
        2 => i().prop_map(Op::DropReceiver),
        // Rare, so that most sequences stay connected long enough to fill and drain.
        1 => i().prop_map(Op::CloseViaSender),
        1 => i().prop_map(Op::CloseViaReceiver),
        1 => i().prop_map(Op::Downgrade),
        1 => i().prop_map(Op::Upgrade),
        1 => i().prop_map(Op::DropWeak),
    ]
}

/// `Some(n)`: `bounded(n)`; `None`: `unbounded()`.
type Kind = Option<usize>;

fn make(kind: Kind) -> (Sender<DropCounter>, Receiver<DropCounter>) {
    match kind {
        Some(n) => channel::bounded(n),
        None => channel::unbounded(),
    }
}

/// The outcome of an operation, with the message ids spelled out (the crate's errors elide
/// their values in `Debug`).
#[derive(Debug, PartialEq, Eq)]
enum Out {
    Ok,
    Value(u16),
    Values(Vec<u16>),
    Full(u16),
    Timeout(Option<u16>),
    Empty,
    Disconnected(Option<u16>),
    Closing(bool),
    Upgraded(bool),
    /// The operation needs a handle that no longer exists, or would wait.
    Skipped,
}

fn id(v: DropCounter) -> u16 {
    v.id() as u16
}

fn try_send_out(r: Result<(), TrySendError<DropCounter>>) -> Out {
    match r {
        Ok(()) => Out::Ok,
        Err(TrySendError::Full(v)) => Out::Full(id(v)),
        Err(TrySendError::Disconnected(v)) => Out::Disconnected(Some(id(v))),
    }
}

fn send_timeout_out(r: Result<(), SendTimeoutError<DropCounter>>) -> Out {
    match r {
        Ok(()) => Out::Ok,
        Err(SendTimeoutError::Timeout(v)) => Out::Timeout(Some(id(v))),
        Err(SendTimeoutError::Disconnected(v)) => Out::Disconnected(Some(id(v))),
    }
}

fn try_recv_out(r: Result<DropCounter, TryRecvError>) -> Out {
    match r {
        Ok(v) => Out::Value(id(v)),
        Err(TryRecvError::Empty) => Out::Empty,
        Err(TryRecvError::Disconnected) => Out::Disconnected(None),
    }
}

fn recv_timeout_out(r: Result<DropCounter, RecvTimeoutError>) -> Out {
    match r {
        Ok(v) => Out::Value(id(v)),
        Err(RecvTimeoutError::Timeout) => Out::Timeout(None),
        Err(RecvTimeoutError::Disconnected) => Out::Disconnected(None),
    }
}

struct Model {
    items: VecDeque<u16>,
    /// `Some(0)` for rendezvous (always full: no receiver ever waits in one thread).
    cap: Option<usize>,
    disconnected: bool,
    senders: usize,
    receivers: usize,
}

impl Model {
    fn full(&self) -> bool {
        self.cap.is_some_and(|c| self.items.len() >= c)
    }

    fn send(&mut self, v: u16, when_full: Out) -> Out {
        if self.disconnected {
            Out::Disconnected(Some(v))
        } else if self.full() {
            when_full
        } else {
            self.items.push_back(v);
            Out::Ok
        }
    }

    fn recv(&mut self, when_empty: Out) -> Out {
        match self.items.pop_front() {
            Some(v) => Out::Value(v),
            None if self.disconnected => Out::Disconnected(None),
            None => when_empty,
        }
    }

    fn close(&mut self) -> Out {
        let first = !self.disconnected;
        self.disconnected = true;
        Out::Closing(first)
    }

    fn drop_sender(&mut self) {
        self.senders -= 1;
        if self.senders == 0 {
            self.disconnected = true;
        }
    }

    /// The last receiver's drop disconnects and drops what is buffered.
    fn drop_receiver(&mut self) {
        self.receivers -= 1;
        if self.receivers == 0 {
            self.disconnected = true;
            self.items.clear();
        }
    }
}

/// Picks the handle `i` designates, if there is any.
fn pick<'a, T>(v: &'a [T], i: &Index) -> Option<&'a T> {
    (!v.is_empty()).then(|| &v[i.index(v.len())])
}

fn run_ops(kind: Kind, ops: &[Op]) -> Result<(), TestCaseError> {
    let counts = DropCounts::new();
    let (tx, rx) = make(kind);
    let mut senders: Vec<Sender<DropCounter>> = vec![tx];
    let mut receivers: Vec<Receiver<DropCounter>> = vec![rx];
    let mut weaks: Vec<WeakSender<DropCounter>> = Vec::new();
    let mut m = Model {
        items: VecDeque::new(),
        cap: kind,
        disconnected: false,
        senders: 1,
        receivers: 1,
    };
    let past = Instant::now();
    let msg = |v: u16| counts.make(u64::from(v));
    for (step, op) in ops.iter().enumerate() {
        let (got, want) = match op {
            Op::TrySend(i, v) => match pick(&senders, i) {
                Some(tx) => (
                    try_send_out(tx.try_send(msg(*v))),
                    m.send(*v, Out::Full(*v)),
                ),
                None => (Out::Skipped, Out::Skipped),
            },
            Op::SendTimeoutZero(i, v) => match pick(&senders, i) {
                Some(tx) => (
                    send_timeout_out(tx.send_timeout(msg(*v), Duration::ZERO)),
                    m.send(*v, Out::Timeout(Some(*v))),
                ),
                None => (Out::Skipped, Out::Skipped),
            },
            Op::SendDeadlinePast(i, v) => match pick(&senders, i) {
                Some(tx) => (
                    send_timeout_out(tx.send_deadline(msg(*v), past)),
                    m.send(*v, Out::Timeout(Some(*v))),
                ),
                None => (Out::Skipped, Out::Skipped),
            },
            Op::SendIfNoWait(i, v) => match pick(&senders, i) {
                Some(tx) if m.disconnected || !m.full() => {
                    let got = match tx.send(msg(*v)) {
                        Ok(()) => Out::Ok,
                        Err(e) => Out::Disconnected(Some(id(e.into_inner()))),
                    };
                    (got, m.send(*v, Out::Skipped))
                }
                _ => (Out::Skipped, Out::Skipped),
            },
            Op::TryRecv(i) => match pick(&receivers, i) {
                Some(rx) => (try_recv_out(rx.try_recv()), m.recv(Out::Empty)),
                None => (Out::Skipped, Out::Skipped),
            },
            Op::RecvTimeoutZero(i) => match pick(&receivers, i) {
                Some(rx) => (
                    recv_timeout_out(rx.recv_timeout(Duration::ZERO)),
                    m.recv(Out::Timeout(None)),
                ),
                None => (Out::Skipped, Out::Skipped),
            },
            Op::RecvIfNoWait(i) => match pick(&receivers, i) {
                Some(rx) if m.disconnected || !m.items.is_empty() => {
                    let got = match rx.recv() {
                        Ok(v) => Out::Value(id(v)),
                        Err(_) => Out::Disconnected(None),
                    };
                    (got, m.recv(Out::Skipped))
                }
                _ => (Out::Skipped, Out::Skipped),
            },
            Op::TryIter(i) => match pick(&receivers, i) {
                Some(rx) => (
                    Out::Values(rx.try_iter().map(id).collect()),
                    Out::Values(m.items.drain(..).collect()),
                ),
                None => (Out::Skipped, Out::Skipped),
            },
            Op::IterIfDisconnected(i) => match pick(&receivers, i) {
                Some(rx) if m.disconnected => (
                    Out::Values(rx.iter().map(id).collect()),
                    Out::Values(m.items.drain(..).collect()),
                ),
                _ => (Out::Skipped, Out::Skipped),
            },
            Op::CloneSender(i) => match pick(&senders, i) {
                Some(tx) => {
                    let c = tx.clone();
                    prop_assert!(c.same_channel(tx), "step {}: clone of a sender", step);
                    senders.push(c);
                    m.senders += 1;
                    (Out::Ok, Out::Ok)
                }
                None => (Out::Skipped, Out::Skipped),
            },
            Op::DropSender(i) => {
                if senders.is_empty() {
                    (Out::Skipped, Out::Skipped)
                } else {
                    drop(senders.swap_remove(i.index(senders.len())));
                    m.drop_sender();
                    (Out::Ok, Out::Ok)
                }
            }
            Op::CloneReceiver(i) => match pick(&receivers, i) {
                Some(rx) => {
                    let c = rx.clone();
                    prop_assert!(c.same_channel(rx), "step {}: clone of a receiver", step);
                    receivers.push(c);
                    m.receivers += 1;
                    (Out::Ok, Out::Ok)
                }
                None => (Out::Skipped, Out::Skipped),
            },
            Op::DropReceiver(i) => {
                if receivers.is_empty() {
                    (Out::Skipped, Out::Skipped)
                } else {
                    drop(receivers.swap_remove(i.index(receivers.len())));
                    m.drop_receiver();
                    (Out::Ok, Out::Ok)
                }
            }
            Op::CloseViaSender(i) => match pick(&senders, i) {
                Some(tx) => (Out::Closing(tx.close()), m.close()),
                None => (Out::Skipped, Out::Skipped),
            },
            Op::CloseViaReceiver(i) => match pick(&receivers, i) {
                Some(rx) => (Out::Closing(rx.close()), m.close()),
                None => (Out::Skipped, Out::Skipped),
            },
            Op::Downgrade(i) => match pick(&senders, i) {
                Some(tx) => {
                    weaks.push(tx.downgrade());
                    (Out::Ok, Out::Ok)
                }
                None => (Out::Skipped, Out::Skipped),
            },
            Op::Upgrade(i) => match pick(&weaks, i) {
                Some(w) => {
                    // A weak sender upgrades while any sender lives, even after close().
                    let want = Out::Upgraded(m.senders > 0);
                    let up = w.upgrade();
                    let got = Out::Upgraded(up.is_some());
                    if let Some(tx) = up {
                        if let Some(other) = senders.first() {
                            prop_assert!(tx.same_channel(other), "step {}: upgrade", step);
                        }
                        senders.push(tx);
                        m.senders += 1;
                    }
                    (got, want)
                }
                None => (Out::Skipped, Out::Skipped),
            },
            Op::DropWeak(i) => {
                if weaks.is_empty() {
                    (Out::Skipped, Out::Skipped)
                } else {
                    drop(weaks.swap_remove(i.index(weaks.len())));
                    (Out::Ok, Out::Ok)
                }
            }
        };
        prop_assert_eq!(&got, &want, "step {}: {:?} ({:?})", step, op, kind);

        // Every live handle sees the same, model-conform snapshot.
        prop_assert_eq!(senders.len(), m.senders, "step {}: sender handles", step);
        prop_assert_eq!(
            receivers.len(),
            m.receivers,
            "step {}: receiver handles",
            step
        );
        let len = if kind == Some(0) { 0 } else { m.items.len() };
        let want_snapshot = (
            len,
            len == 0,
            m.full(),
            kind,
            m.senders,
            m.receivers,
            m.disconnected,
        );
        for tx in &senders {
            let got = (
                tx.len(),
                tx.is_empty(),
                tx.is_full(),
                tx.capacity(),
                tx.sender_count(),
                tx.receiver_count(),
                tx.is_disconnected(),
            );
            prop_assert_eq!(
                got,
                want_snapshot,
                "step {}: Sender snapshot (len, is_empty, is_full, capacity, sender_count, \
                 receiver_count, is_disconnected) after {:?}",
                step,
                op
            );
        }
        for rx in &receivers {
            let got = (
                rx.len(),
                rx.is_empty(),
                rx.is_full(),
                rx.capacity(),
                rx.sender_count(),
                rx.receiver_count(),
                rx.is_disconnected(),
            );
            prop_assert_eq!(
                got,
                want_snapshot,
                "step {}: Receiver snapshot (len, is_empty, is_full, capacity, sender_count, \
                 receiver_count, is_disconnected) after {:?}",
                step,
                op
            );
        }
        // Exactly the buffered messages are alive: nothing leaked, nothing dropped early or
        // twice, and the last receiver's drop dropped the rest.
        prop_assert_eq!(
            counts.live(),
            m.items.len() as isize,
            "step {}: live messages after {:?}",
            step,
            op
        );
    }
    drop((senders, receivers, weaks));
    prop_assert_eq!(
        counts.live(),
        0,
        "every handle dropped: messages left alive"
    );
    Ok(())
}

/// Runs the property for one family of channels, on a watched thread: a channel that hangs
/// inside an operation fails the test instead of hanging the whole test binary.
fn check_against_model(name: &'static str, kinds: fn() -> BoxedStrategy<Kind>) {
    let what = format!("{name} against the model");
    with_watchdog(WATCHDOG_SECS, &what.clone(), move || {
        let config = Config {
            cases: if cfg!(miri) { 4 } else { 256 },
            // Integration tests have no source file of their own to persist failures beside.
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let max_ops = if cfg!(miri) { 24 } else { 100 };
        let scenario = (kinds(), prop::collection::vec(op(), 0..max_ops));
        match runner.run(&scenario, |(kind, ops)| run_ops(kind, &ops)) {
            Ok(()) => {}
            Err(TestError::Fail(why, (kind, ops))) => {
                panic!("{what}: {why}\nminimal failing case: {kind:?}, ops {ops:?}")
            }
            Err(e) => panic!("{what}: {e}"),
        }
    });
}

#[test]
fn bounded_matches_model() {
    check_against_model("bounded(1..=8)", || (1usize..=8).prop_map(Some).boxed());
}

#[test]
fn rendezvous_matches_model() {
    check_against_model("bounded(0)", || Just(Some(0)).boxed());
}

#[test]
fn unbounded_matches_model() {
    check_against_model("unbounded()", || Just(None).boxed());
}
