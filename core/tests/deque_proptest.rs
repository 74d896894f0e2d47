//! Random single-threaded operation sequences on the work-stealing deque (`berth::deque`)
//! against a sequential model: two `VecDeque`s, one per worker.
//!
//! On one thread every operation is atomic, so each result and each `len`/`is_empty` snapshot
//! must match the model exactly, and a steal never says `Retry`. The model: the owner pushes and
//! pops at the back, thieves steal from the front, and a batch steal takes
//! `min(ceil(len / 2), 32)` from the front, returns the first and pushes the rest, in order,
//! onto the back of the thief's worker. Both workers' indices start at random points, often
//! just below `usize::MAX`, so that the sequences wrap them.

// Tests drive real std threads against the crate (the watchdog runs each property on its own
// thread); core/clippy.toml forbids them in the crate's own code, not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::deque::{Steal, Stealer, Worker};
use common::{with_watchdog, WATCHDOG_SECS};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::collections::VecDeque;

/// The batch limit of `steal_batch_and_pop` (documented: "at most 32").
const MAX_BATCH: usize = 32;

/// Which of the two workers an operation acts on: `A` (the victim of most steals) or `B` (the
/// thief's own worker, which batch steals from `A` fill).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    A,
    B,
}

#[derive(Clone, Debug)]
enum Op {
    /// The owner of `A` pushes a value.
    Push(u16),
    /// The owner of `A` pushes `n` consecutive values from `first` (so sequences outgrow the
    /// first buffer, 64 slots, often enough).
    PushMany(u16, u8),
    /// The owner of a side pops.
    Pop(Side),
    /// A thief steals from a side.
    Steal(Side),
    /// A thief batch-steals from `A` into `B`.
    StealBatch,
    /// A thief batch-steals from `B` into `A`.
    StealBatchBack,
    /// A batch steal from `A` into `A` itself (the same as `A`'s pop).
    StealBatchSelf,
    /// `len` and `is_empty` (also checked after every op).
    Check,
}

fn side() -> impl Strategy<Value = Side> {
    prop_oneof![3 => Just(Side::A), 1 => Just(Side::B)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<u16>().prop_map(Op::Push),
        1 => (any::<u16>(), 1u8..=100).prop_map(|(v, n)| Op::PushMany(v, n)),
        4 => side().prop_map(Op::Pop),
        4 => side().prop_map(Op::Steal),
        2 => Just(Op::StealBatch),
        1 => Just(Op::StealBatchBack),
        1 => Just(Op::StealBatchSelf),
        1 => Just(Op::Check),
    ]
}

/// A start index: 0, anywhere, or within a few hundred of the wrap (the common case).
fn start() -> impl Strategy<Value = usize> {
    prop_oneof![
        1 => Just(0usize),
        1 => any::<usize>(),
        4 => (0usize..400).prop_map(|d| usize::MAX - d),
    ]
}

fn scenario() -> impl Strategy<Value = (usize, usize, Vec<Op>)> {
    (start(), start(), prop::collection::vec(op(), 0..300))
}

/// The outcome of an operation.
#[derive(Debug, PartialEq, Eq)]
enum Out {
    Done,
    Popped(Option<u16>),
    Stolen(Steal<u16>),
}

struct Model {
    a: VecDeque<u16>,
    b: VecDeque<u16>,
}

impl Model {
    fn side(&mut self, side: Side) -> &mut VecDeque<u16> {
        match side {
            Side::A => &mut self.a,
            Side::B => &mut self.b,
        }
    }

    fn steal(&mut self, side: Side) -> Steal<u16> {
        match self.side(side).pop_front() {
            Some(v) => Steal::Success(v),
            None => Steal::Empty,
        }
    }

    fn steal_batch(&mut self, from: Side, into: Side) -> Steal<u16> {
        let len = self.side(from).len();
        if len == 0 {
            return Steal::Empty;
        }
        let n = len.div_ceil(2).min(MAX_BATCH);
        let mut taken: VecDeque<u16> = self.side(from).drain(..n).collect();
        let first = taken.pop_front().expect("n >= 1");
        self.side(into).extend(taken);
        Steal::Success(first)
    }
}

fn run_ops(start_a: usize, start_b: usize, ops: &[Op]) -> Result<(), TestCaseError> {
    let a: Worker<u16> = Worker::with_start_index(start_a);
    let b: Worker<u16> = Worker::with_start_index(start_b);
    let (sa, sb): (Stealer<u16>, Stealer<u16>) = (a.stealer(), b.stealer());
    let worker = |side: Side| if side == Side::A { &a } else { &b };
    let stealer = |side: Side| if side == Side::A { &sa } else { &sb };
    let mut m = Model {
        a: VecDeque::new(),
        b: VecDeque::new(),
    };
    for (step, op) in ops.iter().enumerate() {
        let (got, want) = match *op {
            Op::Push(v) => {
                a.push(v);
                m.a.push_back(v);
                (Out::Done, Out::Done)
            }
            Op::PushMany(first, n) => {
                for k in 0..u16::from(n) {
                    a.push(first.wrapping_add(k));
                    m.a.push_back(first.wrapping_add(k));
                }
                (Out::Done, Out::Done)
            }
            Op::Pop(side) => (
                Out::Popped(worker(side).pop()),
                Out::Popped(m.side(side).pop_back()),
            ),
            Op::Steal(side) => (
                Out::Stolen(stealer(side).steal()),
                Out::Stolen(m.steal(side)),
            ),
            Op::StealBatch => (
                Out::Stolen(sa.steal_batch_and_pop(&b)),
                Out::Stolen(m.steal_batch(Side::A, Side::B)),
            ),
            Op::StealBatchBack => (
                Out::Stolen(sb.steal_batch_and_pop(&a)),
                Out::Stolen(m.steal_batch(Side::B, Side::A)),
            ),
            Op::StealBatchSelf => (
                Out::Stolen(sa.steal_batch_and_pop(&a)),
                Out::Stolen(match m.a.pop_back() {
                    Some(v) => Steal::Success(v),
                    None => Steal::Empty,
                }),
            ),
            Op::Check => (Out::Done, Out::Done),
        };
        prop_assert_eq!(
            got,
            want,
            "step {}: {:?} (starts {}, {})",
            step,
            op,
            start_a,
            start_b
        );
        for (side, w, s, model) in [(Side::A, &a, &sa, &m.a), (Side::B, &b, &sb, &m.b)] {
            prop_assert_eq!(
                w.len(),
                model.len(),
                "step {}: {:?} len after {:?}",
                step,
                side,
                op
            );
            prop_assert_eq!(
                s.len(),
                model.len(),
                "step {}: {:?} stealer len",
                step,
                side
            );
            prop_assert_eq!(
                w.is_empty(),
                model.is_empty(),
                "step {}: {:?} is_empty",
                step,
                side
            );
            prop_assert_eq!(
                s.is_empty(),
                model.is_empty(),
                "step {}: {:?} stealer",
                step,
                side
            );
        }
    }
    // What is left comes out in model order: `A` from the front by steals, `B` from the back.
    for v in m.a.drain(..) {
        prop_assert_eq!(sa.steal(), Steal::Success(v), "draining A");
    }
    prop_assert_eq!(sa.steal(), Steal::Empty, "A drained");
    while let Some(v) = m.b.pop_back() {
        prop_assert_eq!(b.pop(), Some(v), "draining B");
    }
    prop_assert_eq!(b.pop(), None, "B drained");
    Ok(())
}

/// Runs the property on a watched thread: a deque that hangs inside an operation fails the test
/// instead of hanging the whole test binary.
#[test]
fn deque_matches_model() {
    let what = "the deque against the VecDeque model";
    with_watchdog(WATCHDOG_SECS, what, move || {
        let config = Config {
            cases: if cfg!(miri) { 4 } else { 512 },
            // Integration tests have no source file of their own to persist failures beside.
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        match runner.run(&scenario(), |(start_a, start_b, ops)| {
            run_ops(start_a, start_b, &ops)
        }) {
            Ok(()) => {}
            Err(TestError::Fail(why, (start_a, start_b, ops))) => panic!(
                "{what}: {why}\nminimal failing case: starts {start_a}, {start_b}, ops {ops:?}"
            ),
            Err(e) => panic!("{what}: {e}"),
        }
    });
}

/// A fixed sequence that is easy to read: fill past two growths across the wrap, batch out,
/// then mix.
#[test]
fn deque_matches_model_fixed_wrap() {
    let mut ops = vec![Op::PushMany(0, 100), Op::PushMany(100, 100)];
    ops.extend([Op::StealBatch, Op::Steal(Side::A), Op::Pop(Side::A)]);
    ops.extend([Op::StealBatch, Op::Pop(Side::B), Op::Steal(Side::B)]);
    ops.extend([Op::StealBatchBack, Op::StealBatchSelf, Op::Check]);
    with_watchdog(WATCHDOG_SECS, "fixed wrap sequence", move || {
        run_ops(usize::MAX - 150, usize::MAX - 20, &ops).unwrap();
    });
}
