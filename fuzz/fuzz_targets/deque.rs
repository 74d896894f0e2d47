//! `berth::deque` on one thread, against two `VecDeque` models: two deques (A and B) whose
//! indices start where the input says (0, just below `usize::MAX` so they wrap after a few
//! pushes, or just below the `isize` boundary of the wrapping comparisons), each with a worker
//! and any number of stealers. The worker pushes and pops at the back, stealers take from the
//! front, `steal_batch_and_pop` moves min(ceil(len / 2), 32) from the front of one deque (the
//! first returned, the rest pushed onto the destination worker in order; into its own worker it
//! is a `pop`). `PushMany` grows the buffer past its first 64 slots. Dropping a worker leaves
//! its stealers working; when a deque's last handle goes, its elements are dropped exactly once.
#![no_main]

mod common;

use arbitrary::Arbitrary;
use berth::deque::{Steal, Stealer, Worker};
use common::{expect_dropped, reset_dropped, Tracked};
use libfuzzer_sys::fuzz_target;
use std::collections::VecDeque;

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Start {
    Zero,
    /// `usize::MAX - k`: wraps after `k + 1` pushes.
    BelowMax(u8),
    /// `isize::MAX as usize - k`: where `(b - t) as isize` would flip without wrapping
    /// arithmetic.
    BelowHalf(u8),
    Raw(u64),
}

impl Start {
    fn index(self) -> usize {
        match self {
            Start::Zero => 0,
            Start::BelowMax(k) => usize::MAX - usize::from(k),
            Start::BelowHalf(k) => isize::MAX as usize - usize::from(k),
            Start::Raw(r) => r as usize,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Push(bool),
    /// Up to 200 pushes (the first buffer has 64 slots).
    PushMany(bool, u8),
    Pop(bool),
    /// Pops until empty.
    PopAll(bool),
    Steal(bool, u8),
    /// Steals until empty.
    StealAll(bool, u8),
    /// `steal_batch_and_pop` with a stealer of `src` into the worker of `dst`.
    StealBatchAndPop {
        src: bool,
        stealer: u8,
        dst: bool,
    },
    CloneStealer(bool, u8),
    NewStealer(bool),
    DropStealer(bool, u8),
    DropWorker(bool),
}

#[derive(Arbitrary, Debug)]
struct Input {
    start_a: Start,
    start_b: Start,
    ops: Vec<Op>,
}

struct Deque {
    worker: Option<Worker<Tracked>>,
    stealers: Vec<Stealer<Tracked>>,
    model: VecDeque<u64>,
}

impl Deque {
    fn new(start: Start) -> Self {
        let w = Worker::with_start_index(start.index());
        let s = w.stealer();
        Deque {
            worker: Some(w),
            stealers: vec![s],
            model: VecDeque::new(),
        }
    }

    fn alive(&self) -> bool {
        self.worker.is_some() || !self.stealers.is_empty()
    }

    fn stealer(&self, i: u8) -> Option<&Stealer<Tracked>> {
        if self.stealers.is_empty() {
            None
        } else {
            Some(&self.stealers[usize::from(i) % self.stealers.len()])
        }
    }

    fn check(&self, which: &str, after: &Op) {
        let len = self.model.len();
        if let Some(w) = &self.worker {
            assert_eq!(w.len(), len, "Worker::len of {which} after {after:?}");
            assert_eq!(
                w.is_empty(),
                len == 0,
                "Worker::is_empty of {which} after {after:?}"
            );
        }
        for s in &self.stealers {
            assert_eq!(s.len(), len, "Stealer::len of {which} after {after:?}");
            assert_eq!(
                s.is_empty(),
                len == 0,
                "Stealer::is_empty of {which} after {after:?}"
            );
        }
    }
}

fn push(d: &mut Deque, next_id: &mut u64) {
    if let Some(w) = &d.worker {
        *next_id += 1;
        w.push(Tracked::new(*next_id));
        d.model.push_back(*next_id);
    }
}

/// One pop; false if there was nothing to pop (or no worker).
fn pop(d: &mut Deque) -> bool {
    let Some(w) = &d.worker else { return false };
    let got = w.pop().map(Tracked::into_id);
    assert_eq!(got, d.model.pop_back(), "Worker::pop: LIFO");
    got.is_some()
}

/// One steal; false if the deque was empty (or had no stealer).
fn steal(d: &mut Deque, i: u8) -> bool {
    let Some(s) = d.stealer(i) else { return false };
    match s.steal() {
        Steal::Success(v) => {
            assert_eq!(
                Some(v.into_id()),
                d.model.pop_front(),
                "Stealer::steal: FIFO"
            );
            true
        }
        Steal::Empty => {
            assert!(d.model.is_empty(), "steal said Empty holding {:?}", d.model);
            false
        }
        Steal::Retry => panic!("steal said Retry with no other thread"),
    }
}

fn index(ab: bool) -> usize {
    usize::from(ab)
}

fn run(input: Input) {
    reset_dropped();
    let mut ds = [Deque::new(input.start_a), Deque::new(input.start_b)];
    let mut next_id = 0u64;
    for op in input.ops.iter().take(256) {
        match *op {
            Op::Push(x) => push(&mut ds[index(x)], &mut next_id),
            Op::PushMany(x, n) => {
                for _ in 0..(u32::from(n) * 200 / 255) {
                    push(&mut ds[index(x)], &mut next_id);
                }
            }
            Op::Pop(x) => {
                pop(&mut ds[index(x)]);
            }
            Op::PopAll(x) => while pop(&mut ds[index(x)]) {},
            Op::Steal(x, i) => {
                steal(&mut ds[index(x)], i);
            }
            Op::StealAll(x, i) => while steal(&mut ds[index(x)], i) {},
            Op::StealBatchAndPop { src, stealer, dst } => {
                let (src, dst) = (index(src), index(dst));
                let (Some(s), Some(w)) = (ds[src].stealer(stealer), ds[dst].worker.as_ref()) else {
                    continue;
                };
                let got = s.steal_batch_and_pop(w);
                if src == dst {
                    // Into its own worker: a pop.
                    let want = ds[src].model.pop_back();
                    match got {
                        Steal::Success(v) => assert_eq!(Some(v.into_id()), want, "self batch"),
                        Steal::Empty => assert_eq!(want, None, "self batch said Empty"),
                        Steal::Retry => panic!("self batch said Retry with no other thread"),
                    }
                } else {
                    let len = ds[src].model.len();
                    let batch = len.div_ceil(2).min(32);
                    let mut moved: VecDeque<u64> = ds[src].model.drain(..batch).collect();
                    match got {
                        Steal::Success(v) => {
                            assert_eq!(
                                Some(v.into_id()),
                                moved.pop_front(),
                                "steal_batch_and_pop returned the oldest (batch of {batch} from {len})"
                            );
                            ds[dst].model.extend(moved);
                        }
                        Steal::Empty => assert_eq!(len, 0, "steal_batch_and_pop said Empty"),
                        Steal::Retry => panic!("steal_batch_and_pop said Retry on one thread"),
                    }
                }
            }
            Op::CloneStealer(x, i) => {
                let d = &mut ds[index(x)];
                if let Some(s) = d.stealer(i) {
                    let c = s.clone();
                    d.stealers.push(c);
                }
            }
            Op::NewStealer(x) => {
                let d = &mut ds[index(x)];
                if let Some(w) = &d.worker {
                    let s = w.stealer();
                    d.stealers.push(s);
                }
            }
            Op::DropStealer(x, i) => {
                let d = &mut ds[index(x)];
                if !d.stealers.is_empty() {
                    let idx = usize::from(i) % d.stealers.len();
                    drop(d.stealers.swap_remove(idx));
                    if !d.alive() {
                        expect_dropped(d.model.drain(..), "with the deque (last stealer)");
                    }
                }
            }
            Op::DropWorker(x) => {
                let d = &mut ds[index(x)];
                if let Some(w) = d.worker.take() {
                    drop(w);
                    if !d.alive() {
                        expect_dropped(d.model.drain(..), "with the deque (worker)");
                    }
                }
            }
        }
        ds[0].check("A", op);
        ds[1].check("B", op);
        expect_dropped([], &format!("during {op:?}"));
    }
    for d in &mut ds {
        let live = d.alive();
        d.worker = None;
        d.stealers.clear();
        if live {
            expect_dropped(d.model.drain(..), "with the deque at the end");
        }
    }
}

fuzz_target!(|input: Input| run(input));
