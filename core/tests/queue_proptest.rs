//! Random single-threaded operation sequences against a `VecDeque` model, for every queue.
//!
//! Single-threaded, every operation is atomic, so each result and each snapshot (`len`,
//! `is_empty`, `is_full`, `is_closed`) must match the model exactly. Blocking operations are
//! only issued when the model says they return at once (or with a zero timeout).

// Tests drive real std threads and atomics against the crate (the watchdog runs each property on
// its own thread); core/clippy.toml forbids them in the crate's own code, not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::queue::{PopTimeoutError, PushTimeoutError, TryPopError, TryPushError};
use berth::{BoundedQueue, MutexQueue, ScqQueue, VyukovQueue};
use common::{with_watchdog, WATCHDOG_SECS};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::collections::VecDeque;
use std::time::Duration;

#[derive(Clone, Debug)]
enum Op {
    TryPush(u16),
    TryPop,
    PushTimeoutZero(u16),
    PopTimeoutZero,
    /// `push`, only when the model says it will not wait (room, or closed).
    PushIfNoWait(u16),
    /// `pop`, only when the model says it will not wait (a value, or closed).
    PopIfNoWait,
    Close,
    /// `len`, `is_empty`, `is_full`, `is_closed`, `capacity` (also checked after every op).
    Check,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u16>().prop_map(Op::TryPush),
        4 => Just(Op::TryPop),
        2 => any::<u16>().prop_map(Op::PushTimeoutZero),
        2 => Just(Op::PopTimeoutZero),
        2 => any::<u16>().prop_map(Op::PushIfNoWait),
        2 => Just(Op::PopIfNoWait),
        // Rare, so that most sequences stay open long enough to wrap the ring a few times.
        1 => Just(Op::Close),
        1 => Just(Op::Check),
    ]
}

fn scenario() -> impl Strategy<Value = (usize, Vec<Op>)> {
    (1usize..=8, prop::collection::vec(op(), 0..80))
}

/// The outcome of an operation, with the values spelled out (the crate's push errors elide
/// theirs in `Debug`).
#[derive(Debug, PartialEq, Eq)]
enum Out {
    Ok,
    Value(u16),
    Full(u16),
    Empty,
    Timeout(Option<u16>),
    Closed(Option<u16>),
    Skipped,
    Closing(bool),
}

fn try_push_out(r: Result<(), TryPushError<u16>>) -> Out {
    match r {
        Ok(()) => Out::Ok,
        Err(TryPushError::Full(v)) => Out::Full(v),
        Err(TryPushError::Closed(v)) => Out::Closed(Some(v)),
    }
}

fn push_timeout_out(r: Result<(), PushTimeoutError<u16>>) -> Out {
    match r {
        Ok(()) => Out::Ok,
        Err(PushTimeoutError::Timeout(v)) => Out::Timeout(Some(v)),
        Err(PushTimeoutError::Closed(v)) => Out::Closed(Some(v)),
    }
}

fn try_pop_out(r: Result<u16, TryPopError>) -> Out {
    match r {
        Ok(v) => Out::Value(v),
        Err(TryPopError::Empty) => Out::Empty,
        Err(TryPopError::Closed) => Out::Closed(None),
    }
}

fn pop_timeout_out(r: Result<u16, PopTimeoutError>) -> Out {
    match r {
        Ok(v) => Out::Value(v),
        Err(PopTimeoutError::Timeout) => Out::Timeout(None),
        Err(PopTimeoutError::Closed) => Out::Closed(None),
    }
}

struct Model {
    items: VecDeque<u16>,
    cap: usize,
    closed: bool,
}

impl Model {
    fn full(&self) -> bool {
        self.items.len() == self.cap
    }

    fn push(&mut self, v: u16, when_full: Out) -> Out {
        if self.closed {
            Out::Closed(Some(v))
        } else if self.full() {
            when_full
        } else {
            self.items.push_back(v);
            Out::Ok
        }
    }

    fn pop(&mut self, when_empty: Out) -> Out {
        match self.items.pop_front() {
            Some(v) => Out::Value(v),
            None if self.closed => Out::Closed(None),
            None => when_empty,
        }
    }
}

fn run_ops<Q: BoundedQueue<u16>>(
    make: fn(usize) -> Q,
    cap: usize,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let q = make(cap);
    let mut m = Model {
        items: VecDeque::new(),
        cap,
        closed: false,
    };
    for (step, op) in ops.iter().enumerate() {
        let (got, want) = match *op {
            Op::TryPush(v) => (try_push_out(q.try_push(v)), m.push(v, Out::Full(v))),
            Op::TryPop => (try_pop_out(q.try_pop()), m.pop(Out::Empty)),
            Op::PushTimeoutZero(v) => (
                push_timeout_out(q.push_timeout(v, Duration::ZERO)),
                m.push(v, Out::Timeout(Some(v))),
            ),
            Op::PopTimeoutZero => (
                pop_timeout_out(q.pop_timeout(Duration::ZERO)),
                m.pop(Out::Timeout(None)),
            ),
            Op::PushIfNoWait(v) if m.closed || !m.full() => {
                let got = match q.push(v) {
                    Ok(()) => Out::Ok,
                    Err(e) => Out::Closed(Some(e.0)),
                };
                (got, m.push(v, Out::Skipped))
            }
            Op::PopIfNoWait if m.closed || !m.items.is_empty() => {
                let got = match q.pop() {
                    Ok(v) => Out::Value(v),
                    Err(_) => Out::Closed(None),
                };
                (got, m.pop(Out::Skipped))
            }
            Op::PushIfNoWait(_) | Op::PopIfNoWait => (Out::Skipped, Out::Skipped),
            Op::Close => {
                let want = Out::Closing(!m.closed);
                m.closed = true;
                (Out::Closing(q.close()), want)
            }
            Op::Check => (Out::Skipped, Out::Skipped),
        };
        prop_assert_eq!(got, want, "step {}: {:?} (capacity {})", step, op, cap);
        prop_assert_eq!(q.len(), m.items.len(), "step {}: len after {:?}", step, op);
        prop_assert_eq!(q.is_empty(), m.items.is_empty(), "step {}: is_empty", step);
        prop_assert_eq!(q.is_full(), m.full(), "step {}: is_full", step);
        prop_assert_eq!(q.is_closed(), m.closed, "step {}: is_closed", step);
        prop_assert_eq!(q.capacity(), cap, "step {}: capacity", step);
    }
    Ok(())
}

/// Runs the property for one queue, on a watched thread: a queue that hangs inside an
/// operation fails the test instead of hanging the whole test binary.
fn check_against_model<Q: BoundedQueue<u16> + 'static>(name: &'static str, make: fn(usize) -> Q) {
    let what = format!("{name} against the VecDeque model");
    with_watchdog(WATCHDOG_SECS, &what.clone(), move || {
        let config = Config {
            cases: if cfg!(miri) { 4 } else { 256 },
            // Integration tests have no source file of their own to persist failures beside.
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        match runner.run(&scenario(), |(cap, ops)| run_ops(make, cap, &ops)) {
            Ok(()) => {}
            Err(TestError::Fail(why, (cap, ops))) => {
                panic!("{what}: {why}\nminimal failing case: capacity {cap}, ops {ops:?}")
            }
            Err(e) => panic!("{what}: {e}"),
        }
    });
}

/// One line per queue.
macro_rules! model_test {
    ($name:ident, $make:expr) => {
        #[test]
        fn $name() {
            check_against_model(stringify!($name), $make);
        }
    };
}

model_test!(mutex_matches_model, MutexQueue::new);
model_test!(vyukov_matches_model, VyukovQueue::new);
model_test!(scq_matches_model, ScqQueue::new);
