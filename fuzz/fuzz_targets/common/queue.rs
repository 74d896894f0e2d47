//! One bounded queue against a `VecDeque` model, on one thread: every operation of
//! [`BoundedQueue`] (the blocking ones only where they cannot block), with a small capacity so
//! the ring wraps and hits full and empty often, and `close` part way through.

use super::{expect_dropped, reset_dropped, short_timeout, small_capacity, Tracked};
use arbitrary::Arbitrary;
use berth::queue::{
    PopError, PopTimeoutError, PushError, PushTimeoutError, TryPopError, TryPushError,
};
use berth::BoundedQueue;
use std::collections::VecDeque;

#[derive(Arbitrary, Debug)]
pub enum QueueOp {
    TryPush,
    /// Blocking push: only when it cannot block (room, or closed); otherwise a `try_push`.
    Push,
    PushTimeout(u8),
    TryPop,
    /// Blocking pop: only when it cannot block (a value, or closed); otherwise a `try_pop`.
    Pop,
    PopTimeout(u8),
    Close,
    /// Pushes until full (or closed), then pops until empty: a full lap of the ring.
    Lap,
}

#[derive(Arbitrary, Debug)]
pub struct QueueInput {
    pub capacity: u8,
    pub ops: Vec<QueueOp>,
}

struct Model {
    buf: VecDeque<u64>,
    cap: usize,
    closed: bool,
    next_id: u64,
}

impl Model {
    fn fresh(&mut self) -> Tracked {
        self.next_id += 1;
        Tracked::new(self.next_id)
    }
}

fn check_state<Q: BoundedQueue<Tracked>>(q: &Q, m: &Model, after: &QueueOp) {
    assert_eq!(q.len(), m.buf.len(), "len after {after:?}");
    assert_eq!(q.is_empty(), m.buf.is_empty(), "is_empty after {after:?}");
    assert_eq!(q.is_full(), m.buf.len() == m.cap, "is_full after {after:?}");
    assert_eq!(q.is_closed(), m.closed, "is_closed after {after:?}");
    assert_eq!(q.capacity(), m.cap, "capacity after {after:?}");
    expect_dropped([], &format!("during {after:?}"));
}

fn try_push<Q: BoundedQueue<Tracked>>(q: &Q, m: &mut Model) {
    let v = m.fresh();
    let id = v.id();
    match q.try_push(v) {
        Ok(()) => {
            assert!(!m.closed, "try_push succeeded on a closed queue");
            assert!(m.buf.len() < m.cap, "try_push succeeded on a full queue");
            m.buf.push_back(id);
        }
        Err(TryPushError::Closed(v)) => {
            assert!(m.closed, "try_push said Closed on an open queue");
            assert_eq!(v.into_id(), id, "try_push handed back another value");
        }
        Err(TryPushError::Full(v)) => {
            assert!(!m.closed, "try_push said Full on a closed queue");
            assert_eq!(m.buf.len(), m.cap, "try_push said Full with room left");
            assert_eq!(v.into_id(), id, "try_push handed back another value");
        }
    }
}

fn try_pop<Q: BoundedQueue<Tracked>>(q: &Q, m: &mut Model) {
    match q.try_pop() {
        Ok(v) => assert_eq!(Some(v.into_id()), m.buf.pop_front(), "try_pop: FIFO order"),
        Err(TryPopError::Empty) => {
            assert!(m.buf.is_empty(), "try_pop said Empty holding {:?}", m.buf);
            assert!(
                !m.closed,
                "try_pop said Empty (not Closed) on a closed, drained queue"
            );
        }
        Err(TryPopError::Closed) => {
            assert!(m.buf.is_empty(), "try_pop said Closed holding {:?}", m.buf);
            assert!(m.closed, "try_pop said Closed on an open queue");
        }
    }
}

/// Runs `input` against a queue made by `make(capacity)`.
pub fn run<Q: BoundedQueue<Tracked>>(input: QueueInput, make: impl FnOnce(usize) -> Q) {
    reset_dropped();
    let cap = small_capacity(input.capacity);
    let q = make(cap);
    let mut m = Model {
        buf: VecDeque::new(),
        cap,
        closed: false,
        next_id: 0,
    };
    check_state(&q, &m, &QueueOp::Lap);
    for op in input.ops.iter().take(512) {
        match op {
            QueueOp::TryPush => try_push(&q, &mut m),
            QueueOp::Push => {
                if m.closed || m.buf.len() < m.cap {
                    let v = m.fresh();
                    let id = v.id();
                    match q.push(v) {
                        Ok(()) => {
                            assert!(!m.closed, "push succeeded on a closed queue");
                            m.buf.push_back(id);
                        }
                        Err(PushError(v)) => {
                            assert!(m.closed, "push failed on an open queue with room");
                            assert_eq!(v.into_id(), id, "push handed back another value");
                        }
                    }
                } else {
                    try_push(&q, &mut m);
                }
            }
            QueueOp::PushTimeout(us) => {
                let v = m.fresh();
                let id = v.id();
                match q.push_timeout(v, short_timeout(*us)) {
                    Ok(()) => {
                        assert!(!m.closed && m.buf.len() < m.cap, "push_timeout succeeded");
                        m.buf.push_back(id);
                    }
                    Err(PushTimeoutError::Closed(v)) => {
                        assert!(m.closed, "push_timeout said Closed on an open queue");
                        assert_eq!(v.into_id(), id);
                    }
                    Err(PushTimeoutError::Timeout(v)) => {
                        assert!(!m.closed, "push_timeout timed out on a closed queue");
                        assert_eq!(m.buf.len(), m.cap, "push_timeout timed out with room");
                        assert_eq!(v.into_id(), id);
                    }
                }
            }
            QueueOp::TryPop => try_pop(&q, &mut m),
            QueueOp::Pop => {
                if m.closed || !m.buf.is_empty() {
                    match q.pop() {
                        Ok(v) => assert_eq!(Some(v.into_id()), m.buf.pop_front(), "pop: FIFO"),
                        Err(PopError) => {
                            assert!(
                                m.closed && m.buf.is_empty(),
                                "pop failed holding {:?}",
                                m.buf
                            )
                        }
                    }
                } else {
                    try_pop(&q, &mut m);
                }
            }
            QueueOp::PopTimeout(us) => match q.pop_timeout(short_timeout(*us)) {
                Ok(v) => assert_eq!(Some(v.into_id()), m.buf.pop_front(), "pop_timeout: FIFO"),
                Err(PopTimeoutError::Closed) => {
                    assert!(m.closed && m.buf.is_empty(), "pop_timeout said Closed")
                }
                Err(PopTimeoutError::Timeout) => {
                    assert!(!m.closed && m.buf.is_empty(), "pop_timeout timed out")
                }
            },
            QueueOp::Close => {
                assert_eq!(
                    q.close(),
                    !m.closed,
                    "close: true only for the call that closed"
                );
                m.closed = true;
            }
            QueueOp::Lap => {
                for _ in 0..=m.cap {
                    try_push(&q, &mut m);
                }
                for _ in 0..=m.cap {
                    try_pop(&q, &mut m);
                }
            }
        }
        check_state(&q, &m, op);
    }
    drop(q);
    expect_dropped(m.buf.iter().copied(), "when the queue was dropped");
}
