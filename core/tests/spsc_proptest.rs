//! Random single-threaded operation sequences on an SPSC ring (capacities 1..=8) against a
//! `VecDeque` model: `try_push`, `try_pop`, `push_timeout(0)`, `pop_timeout(0)`, `push` and `pop`
//! (only when the model says they return at once), dropping the producer, dropping the consumer.
//!
//! Single-threaded, every operation is atomic, so each result and each snapshot of a live side
//! (`len`, `is_empty`, `capacity`, `is_disconnected`) must match the model exactly. Values are
//! [`DropCounter`]s whose id is the value, so the model also checks *when* values are dropped:
//! the number alive is always exactly the number the model holds (a value handed back in an
//! error, or popped, is dropped by the test at once; the ones inside die with the second side).

// Tests drive real std threads and atomics against the crate (the watchdog runs each property on
// its own thread); core/clippy.toml forbids them in the crate's own code, not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::spsc::{self, PopError, PushError, TryPopError, TryPushError};
use common::{with_watchdog, DropCounter, DropCounts, WATCHDOG_SECS};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::collections::VecDeque;
use std::time::Duration;

#[derive(Clone, Copy, Debug)]
enum Op {
    TryPush(u16),
    TryPop,
    PushTimeoutZero(u16),
    PopTimeoutZero,
    /// `push`, only when the model says it will not wait (room, or the consumer is gone).
    PushIfNoWait(u16),
    /// `pop`, only when the model says it will not wait (a value, or the producer is gone).
    PopIfNoWait,
    DropProducer,
    DropConsumer,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u16>().prop_map(Op::TryPush),
        4 => Just(Op::TryPop),
        2 => any::<u16>().prop_map(Op::PushTimeoutZero),
        2 => Just(Op::PopTimeoutZero),
        2 => any::<u16>().prop_map(Op::PushIfNoWait),
        2 => Just(Op::PopIfNoWait),
        // Rare, so that most sequences run long enough to wrap the ring a few times first.
        1 => Just(Op::DropProducer),
        1 => Just(Op::DropConsumer),
    ]
}

/// A capacity, the operations, and which side the end of the sequence drops first.
fn scenario() -> impl Strategy<Value = (usize, Vec<Op>, bool)> {
    (
        1usize..=8,
        prop::collection::vec(op(), 0..if cfg!(miri) { 40 } else { 100 }),
        any::<bool>(),
    )
}

/// The outcome of an operation, with the values spelled out (the crate's push errors elide
/// theirs in `Debug`).
#[derive(Debug, PartialEq, Eq)]
enum Out {
    Ok,
    Value(u16),
    Full(u16),
    Empty,
    /// The value handed back, for a push.
    Disconnected(Option<u16>),
    /// The operation was not issued (its side is gone, or it would wait).
    Skipped,
}

/// A popped or handed-back value: its id, and it is dropped here (the test's, not the ring's).
fn take(v: DropCounter) -> u16 {
    u16::try_from(v.id()).expect("ids are u16 values")
}

fn try_push_out(r: Result<(), TryPushError<DropCounter>>) -> Out {
    match r {
        Ok(()) => Out::Ok,
        Err(TryPushError::Full(v)) => Out::Full(take(v)),
        Err(TryPushError::Disconnected(v)) => Out::Disconnected(Some(take(v))),
    }
}

fn try_pop_out(r: Result<DropCounter, TryPopError>) -> Out {
    match r {
        Ok(v) => Out::Value(take(v)),
        Err(TryPopError::Empty) => Out::Empty,
        Err(TryPopError::Disconnected) => Out::Disconnected(None),
    }
}

struct Model {
    items: VecDeque<u16>,
    cap: usize,
    producer: bool,
    consumer: bool,
}

impl Model {
    fn full(&self) -> bool {
        self.items.len() == self.cap
    }

    fn push(&mut self, v: u16) -> Out {
        if !self.consumer {
            Out::Disconnected(Some(v))
        } else if self.full() {
            Out::Full(v)
        } else {
            self.items.push_back(v);
            Out::Ok
        }
    }

    fn pop(&mut self) -> Out {
        match self.items.pop_front() {
            Some(v) => Out::Value(v),
            None if !self.producer => Out::Disconnected(None),
            None => Out::Empty,
        }
    }

    /// One side is gone; when both are, the values inside go with the ring.
    fn drop_side(&mut self) {
        if !self.producer && !self.consumer {
            self.items.clear();
        }
    }
}

fn run_ops(cap: usize, ops: &[Op], producer_first: bool) -> Result<(), TestCaseError> {
    let counts = DropCounts::new();
    let (tx, rx) = spsc::channel::<DropCounter>(cap);
    let (mut tx, mut rx) = (Some(tx), Some(rx));
    let mut m = Model {
        items: VecDeque::new(),
        cap,
        producer: true,
        consumer: true,
    };
    let make = |v: u16| counts.make(u64::from(v));
    for (step, op) in ops.iter().enumerate() {
        let (got, want) = match (*op, tx.as_mut(), rx.as_mut()) {
            (Op::TryPush(v), Some(tx), _) => (try_push_out(tx.try_push(make(v))), m.push(v)),
            (Op::PushTimeoutZero(v), Some(tx), _) => (
                try_push_out(tx.push_timeout(make(v), Duration::ZERO)),
                m.push(v),
            ),
            (Op::PushIfNoWait(v), Some(tx), _) if !m.consumer || !m.full() => {
                let got = match tx.push(make(v)) {
                    Ok(()) => Out::Ok,
                    Err(PushError(back)) => Out::Disconnected(Some(take(back))),
                };
                (got, m.push(v))
            }
            (Op::TryPop, _, Some(rx)) => (try_pop_out(rx.try_pop()), m.pop()),
            (Op::PopTimeoutZero, _, Some(rx)) => {
                (try_pop_out(rx.pop_timeout(Duration::ZERO)), m.pop())
            }
            (Op::PopIfNoWait, _, Some(rx)) if !m.producer || !m.items.is_empty() => {
                let got = match rx.pop() {
                    Ok(v) => Out::Value(take(v)),
                    Err(PopError) => Out::Disconnected(None),
                };
                (got, m.pop())
            }
            (Op::DropProducer, Some(_), _) => {
                tx = None;
                m.producer = false;
                m.drop_side();
                (Out::Skipped, Out::Skipped)
            }
            (Op::DropConsumer, _, Some(_)) => {
                rx = None;
                m.consumer = false;
                m.drop_side();
                (Out::Skipped, Out::Skipped)
            }
            _ => (Out::Skipped, Out::Skipped),
        };
        prop_assert_eq!(got, want, "step {}: {:?} (capacity {})", step, op, cap);
        if let Some(tx) = &tx {
            prop_assert_eq!(tx.len(), m.items.len(), "step {}: producer's len", step);
            prop_assert_eq!(
                tx.is_empty(),
                m.items.is_empty(),
                "step {}: producer's is_empty",
                step
            );
            prop_assert_eq!(tx.capacity(), cap, "step {}: producer's capacity", step);
            prop_assert_eq!(
                tx.is_disconnected(),
                !m.consumer,
                "step {}: producer's is_disconnected",
                step
            );
        }
        if let Some(rx) = &rx {
            prop_assert_eq!(rx.len(), m.items.len(), "step {}: consumer's len", step);
            prop_assert_eq!(
                rx.is_empty(),
                m.items.is_empty(),
                "step {}: consumer's is_empty",
                step
            );
            prop_assert_eq!(rx.capacity(), cap, "step {}: consumer's capacity", step);
            prop_assert_eq!(
                rx.is_disconnected(),
                !m.producer,
                "step {}: consumer's is_disconnected",
                step
            );
        }
        prop_assert_eq!(
            counts.live(),
            m.items.len() as isize,
            "step {}: values alive (constructed {}, dropped {}) after {:?}",
            step,
            counts.made(),
            counts.dropped(),
            op
        );
    }
    // The end: the sides still alive go, in the chosen order; while one is alive, nothing inside
    // may be dropped.
    let both_alive = tx.is_some() && rx.is_some();
    if producer_first {
        drop(tx.take());
    } else {
        drop(rx.take());
    }
    if both_alive {
        prop_assert_eq!(
            counts.live(),
            m.items.len() as isize,
            "after the end dropped the {}",
            if producer_first {
                "producer"
            } else {
                "consumer"
            }
        );
    }
    drop((tx, rx));
    prop_assert_eq!(
        counts.live(),
        0,
        "every value dropped exactly once (constructed {}, dropped {})",
        counts.made(),
        counts.dropped()
    );
    Ok(())
}

/// The property, on a watched thread: a ring that hangs inside an operation fails the test
/// instead of hanging the whole test binary.
#[test]
fn spsc_matches_model() {
    let what = "spsc ring against the VecDeque model";
    with_watchdog(WATCHDOG_SECS * 3, what, move || {
        let config = Config {
            cases: if cfg!(miri) { 4 } else { 1024 },
            // Integration tests have no source file of their own to persist failures beside.
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        match runner.run(&scenario(), |(cap, ops, producer_first)| {
            run_ops(cap, &ops, producer_first)
        }) {
            Ok(()) => {}
            Err(TestError::Fail(why, (cap, ops, producer_first))) => panic!(
                "{what}: {why}\nminimal failing case: capacity {cap}, ops {ops:?}, \
                 producer dropped first at the end: {producer_first}"
            ),
            Err(e) => panic!("{what}: {e}"),
        }
    });
}
