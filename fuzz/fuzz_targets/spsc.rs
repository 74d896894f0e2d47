//! `berth::spsc` on one thread, against `VecDeque` models:
//!
//! - the ring (`spsc::channel(n)`, n in 1..=8): try, blocking (only where it cannot block) and
//!   timeout pushes and pops, `len` from both sides, and dropping either side: pushes fail with
//!   their value once the consumer is gone; the consumer drains, then fails, once the producer is
//!   gone; values still inside are dropped with the ring (when both sides are gone), exactly once;
//! - the pool (`spsc::pool(n, init)`): `send_with` (only where it cannot block) and `recv_with`,
//!   the node each `recv_with` reads is the one the matching `send_with` filled, dropping either
//!   end; every one of the `n + 2` nodes is dropped exactly once, and none while both ends live.
#![no_main]

mod common;

use arbitrary::Arbitrary;
use berth::spsc::{
    self, PoolRecvError, PoolSendError, PopError, PushError, TryPopError, TryPushError,
};
use common::{expect_dropped, reset_dropped, short_timeout, small_capacity, take_dropped, Tracked};
use libfuzzer_sys::fuzz_target;
use std::collections::VecDeque;

#[derive(Arbitrary, Debug)]
enum RingOp {
    TryPush,
    Push,
    PushTimeout(u8),
    TryPop,
    Pop,
    PopTimeout(u8),
    /// Pushes until full, then pops until empty.
    Lap,
    DropProducer,
    DropConsumer,
}

#[derive(Arbitrary, Debug)]
enum PoolOp {
    Send,
    Recv,
    DropSender,
    DropReceiver,
}

#[derive(Arbitrary, Debug)]
enum Input {
    Ring { capacity: u8, ops: Vec<RingOp> },
    Pool { capacity: u8, ops: Vec<PoolOp> },
}

struct Ring {
    tx: Option<spsc::Producer<Tracked>>,
    rx: Option<spsc::Consumer<Tracked>>,
    buf: VecDeque<u64>,
    cap: usize,
    next_id: u64,
}

impl Ring {
    fn try_push(&mut self) {
        let Some(tx) = self.tx.as_mut() else { return };
        self.next_id += 1;
        let id = self.next_id;
        match tx.try_push(Tracked::new(id)) {
            Ok(()) => {
                assert!(
                    self.rx.is_some(),
                    "try_push succeeded with the consumer gone"
                );
                assert!(
                    self.buf.len() < self.cap,
                    "try_push succeeded on a full ring"
                );
                self.buf.push_back(id);
            }
            Err(TryPushError::Full(v)) => {
                assert!(
                    self.rx.is_some(),
                    "try_push said Full with the consumer gone"
                );
                assert_eq!(self.buf.len(), self.cap, "try_push said Full with room");
                assert_eq!(v.into_id(), id);
            }
            Err(TryPushError::Disconnected(v)) => {
                assert!(
                    self.rx.is_none(),
                    "try_push said Disconnected with a consumer"
                );
                assert_eq!(v.into_id(), id);
            }
        }
    }

    fn try_pop(&mut self) {
        let Some(rx) = self.rx.as_mut() else { return };
        match rx.try_pop() {
            Ok(v) => assert_eq!(Some(v.into_id()), self.buf.pop_front(), "try_pop: FIFO"),
            Err(TryPopError::Empty) => {
                assert!(
                    self.buf.is_empty(),
                    "try_pop said Empty holding {:?}",
                    self.buf
                );
                assert!(
                    self.tx.is_some(),
                    "try_pop said Empty (not Disconnected), producer gone"
                );
            }
            Err(TryPopError::Disconnected) => {
                assert!(
                    self.buf.is_empty(),
                    "try_pop said Disconnected holding {:?}",
                    self.buf
                );
                assert!(
                    self.tx.is_none(),
                    "try_pop said Disconnected with a producer"
                );
            }
        }
    }

    fn check(&self, after: &RingOp) {
        let len = self.buf.len();
        if let Some(tx) = &self.tx {
            assert_eq!(tx.len(), len, "Producer::len after {after:?}");
            assert_eq!(
                tx.is_empty(),
                len == 0,
                "Producer::is_empty after {after:?}"
            );
            assert_eq!(tx.capacity(), self.cap);
            assert_eq!(
                tx.is_disconnected(),
                self.rx.is_none(),
                "Producer::is_disconnected"
            );
        }
        if let Some(rx) = &self.rx {
            assert_eq!(rx.len(), len, "Consumer::len after {after:?}");
            assert_eq!(
                rx.is_empty(),
                len == 0,
                "Consumer::is_empty after {after:?}"
            );
            assert_eq!(rx.capacity(), self.cap);
            assert_eq!(
                rx.is_disconnected(),
                self.tx.is_none(),
                "Consumer::is_disconnected"
            );
        }
    }

    /// A side was dropped: if both are gone, the ring drops what it holds.
    fn after_drop(&mut self) {
        if self.tx.is_none() && self.rx.is_none() {
            expect_dropped(self.buf.drain(..), "with the ring");
        } else {
            expect_dropped([], "when one side of the ring was dropped");
        }
    }
}

fn run_ring(capacity: u8, ops: &[RingOp]) {
    let cap = small_capacity(capacity);
    let (tx, rx) = spsc::channel(cap);
    let mut r = Ring {
        tx: Some(tx),
        rx: Some(rx),
        buf: VecDeque::new(),
        cap,
        next_id: 0,
    };
    for op in ops.iter().take(512) {
        match op {
            RingOp::TryPush => r.try_push(),
            RingOp::Push => {
                if r.rx.is_none() || r.buf.len() < r.cap {
                    if let Some(tx) = r.tx.as_mut() {
                        r.next_id += 1;
                        let id = r.next_id;
                        match tx.push(Tracked::new(id)) {
                            Ok(()) => {
                                assert!(r.rx.is_some(), "push succeeded with the consumer gone");
                                r.buf.push_back(id);
                            }
                            Err(PushError(v)) => {
                                assert!(r.rx.is_none(), "push failed with a consumer and room");
                                assert_eq!(v.into_id(), id);
                            }
                        }
                    }
                } else {
                    r.try_push();
                }
            }
            RingOp::PushTimeout(us) => {
                if let Some(tx) = r.tx.as_mut() {
                    r.next_id += 1;
                    let id = r.next_id;
                    match tx.push_timeout(Tracked::new(id), short_timeout(*us)) {
                        Ok(()) => {
                            assert!(r.rx.is_some() && r.buf.len() < r.cap, "push_timeout Ok");
                            r.buf.push_back(id);
                        }
                        Err(TryPushError::Full(v)) => {
                            assert!(r.rx.is_some() && r.buf.len() == r.cap, "push_timeout Full");
                            assert_eq!(v.into_id(), id);
                        }
                        Err(TryPushError::Disconnected(v)) => {
                            assert!(r.rx.is_none(), "push_timeout said Disconnected");
                            assert_eq!(v.into_id(), id);
                        }
                    }
                }
            }
            RingOp::TryPop => r.try_pop(),
            RingOp::Pop => {
                if r.tx.is_none() || !r.buf.is_empty() {
                    if let Some(rx) = r.rx.as_mut() {
                        match rx.pop() {
                            Ok(v) => assert_eq!(Some(v.into_id()), r.buf.pop_front(), "pop: FIFO"),
                            Err(PopError) => {
                                assert!(r.tx.is_none() && r.buf.is_empty(), "pop failed")
                            }
                        }
                    }
                } else {
                    r.try_pop();
                }
            }
            RingOp::PopTimeout(us) => {
                if let Some(rx) = r.rx.as_mut() {
                    match rx.pop_timeout(short_timeout(*us)) {
                        Ok(v) => {
                            assert_eq!(Some(v.into_id()), r.buf.pop_front(), "pop_timeout: FIFO")
                        }
                        Err(TryPopError::Empty) => {
                            assert!(r.tx.is_some() && r.buf.is_empty(), "pop_timeout Empty")
                        }
                        Err(TryPopError::Disconnected) => {
                            assert!(
                                r.tx.is_none() && r.buf.is_empty(),
                                "pop_timeout Disconnected"
                            )
                        }
                    }
                }
            }
            RingOp::Lap => {
                for _ in 0..=r.cap {
                    r.try_push();
                }
                for _ in 0..=r.cap {
                    r.try_pop();
                }
            }
            RingOp::DropProducer => {
                if r.tx.take().is_some() {
                    r.after_drop();
                }
            }
            RingOp::DropConsumer => {
                if r.rx.take().is_some() {
                    r.after_drop();
                }
            }
        }
        r.check(op);
        expect_dropped([], &format!("during {op:?}"));
    }
    let live = r.tx.is_some() || r.rx.is_some();
    r.tx = None;
    r.rx = None;
    if live {
        expect_dropped(r.buf.drain(..), "with the ring at the end");
    }
}

/// A pool node: `value` is what `send_with` wrote; `_tag` records the node's own drop.
struct Node {
    value: u64,
    _tag: Tracked,
}

/// Node ids are far above message ids.
const NODE_BASE: u64 = 1 << 40;

fn run_pool(capacity: u8, ops: &[PoolOp]) {
    let cap = small_capacity(capacity);
    let mut made = 0u64;
    let (tx, rx) = spsc::pool(cap, || {
        made += 1;
        Node {
            value: 0,
            _tag: Tracked::new(NODE_BASE + made),
        }
    });
    assert_eq!(made, cap as u64 + 2, "the pool makes capacity + 2 nodes");
    assert_eq!(tx.capacity(), cap);
    assert_eq!(rx.capacity(), cap);
    let (mut tx, mut rx) = (Some(tx), Some(rx));
    let mut buf: VecDeque<u64> = VecDeque::new();
    let mut next = 0u64;
    let mut node_drops: Vec<u64> = Vec::new();
    for op in ops.iter().take(512) {
        match op {
            PoolOp::Send => {
                // send_with waits while the data ring is full (and the receiver lives).
                if rx.is_none() || buf.len() < cap {
                    if let Some(tx) = tx.as_mut() {
                        next += 1;
                        let v = next;
                        match tx.send_with(|n| n.value = v) {
                            Ok(()) => {
                                assert!(rx.is_some(), "send_with succeeded, receiver gone");
                                buf.push_back(v);
                            }
                            Err(PoolSendError) => {
                                assert!(rx.is_none(), "send_with failed with a receiver")
                            }
                        }
                    }
                }
            }
            PoolOp::Recv => {
                if tx.is_none() || !buf.is_empty() {
                    if let Some(rx) = rx.as_mut() {
                        match rx.recv_with(|n| n.value) {
                            Ok(v) => assert_eq!(Some(v), buf.pop_front(), "recv_with: FIFO"),
                            Err(PoolRecvError) => {
                                assert!(tx.is_none() && buf.is_empty(), "recv_with failed")
                            }
                        }
                    }
                }
            }
            PoolOp::DropSender => tx = None,
            PoolOp::DropReceiver => {
                if rx.take().is_some() {
                    // The data ring's values are nodes: they go with the rings, not now.
                }
            }
        }
        let dropped = take_dropped();
        if tx.is_some() && rx.is_some() {
            assert_eq!(
                dropped,
                Vec::<u64>::new(),
                "nodes dropped while both ends live"
            );
        }
        node_drops.extend(dropped);
    }
    drop(tx);
    drop(rx);
    node_drops.extend(take_dropped());
    node_drops.sort_unstable();
    let all: Vec<u64> = (1..=cap as u64 + 2).map(|i| NODE_BASE + i).collect();
    assert_eq!(node_drops, all, "every pool node dropped exactly once");
}

fuzz_target!(|input: Input| {
    reset_dropped();
    match input {
        Input::Ring { capacity, ops } => run_ring(capacity, &ops),
        Input::Pool { capacity, ops } => run_pool(capacity, &ops),
    }
});
