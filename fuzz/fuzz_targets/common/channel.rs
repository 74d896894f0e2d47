//! One channel against a model, on one thread: several sender, receiver and weak-sender handles
//! that the input clones, drops and closes, sends and receives (the blocking ones only where they
//! cannot block), and the checks of the disconnection rules in `berth::channel`'s docs:
//!
//! - the channel is disconnected by `close` (from either side), by the last sender's drop, or by
//!   the last receiver's drop;
//! - after the last sender is gone (or a close), receivers still get every buffered message,
//!   then `Disconnected`;
//! - when the last receiver goes, the buffered messages are dropped then, each exactly once;
//! - a failed send hands back the very message it was given.
//!
//! The rendezvous flavour (`bounded(0)`) on one thread: no receiver is ever blocked, so a
//! `try_send` is `Full` and a `try_recv` `Empty` until the channel is disconnected, then
//! `Disconnected`; the timeout forms time out.

use super::{expect_dropped, reset_dropped, short_timeout, Tracked};
use arbitrary::Arbitrary;
use berth::channel::{
    self, Receiver, RecvError, RecvTimeoutError, SendError, SendTimeoutError, Sender, TryRecvError,
    TrySendError, WeakSender,
};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `bounded(n)`, n > 0.
    Array(usize),
    /// `unbounded()`.
    List,
    /// `bounded(0)`.
    Zero,
}

#[derive(Arbitrary, Debug)]
pub enum ChannelOp {
    TrySend(u8),
    /// Blocking send: only when it cannot block; otherwise a `try_send`.
    Send(u8),
    SendTimeout(u8, u8),
    /// Up to 80 `try_send`s in a row (crosses the list's 31-slot blocks).
    SendMany(u8, u8),
    TryRecv(u8),
    /// Blocking receive: only when it cannot block; otherwise a `try_recv`.
    Recv(u8),
    RecvTimeout(u8, u8),
    /// `try_iter` to the end.
    TryIter(u8),
    /// `iter` to the end: only once disconnected (it would block otherwise).
    Iter(u8),
    CloseFromSender(u8),
    CloseFromReceiver(u8),
    CloneSender(u8),
    CloneReceiver(u8),
    DropSender(u8),
    DropReceiver(u8),
    Downgrade(u8),
    Upgrade(u8),
    DropWeak(u8),
}

#[derive(Arbitrary, Debug)]
pub struct ChannelInput {
    pub capacity: u8,
    pub ops: Vec<ChannelOp>,
}

struct Model {
    kind: Kind,
    buf: VecDeque<u64>,
    disconnected: bool,
    next_id: u64,
}

impl Model {
    fn fresh(&mut self) -> Tracked {
        self.next_id += 1;
        Tracked::new(self.next_id)
    }

    fn full(&self) -> bool {
        match self.kind {
            Kind::Array(cap) => self.buf.len() == cap,
            Kind::List => false,
            Kind::Zero => true,
        }
    }

    /// A send would complete without waiting.
    fn send_ready(&self) -> bool {
        self.disconnected || !self.full()
    }

    /// A receive would complete without waiting.
    fn recv_ready(&self) -> bool {
        self.disconnected || !self.buf.is_empty()
    }
}

struct Handles {
    senders: Vec<Sender<Tracked>>,
    receivers: Vec<Receiver<Tracked>>,
    weak: Vec<WeakSender<Tracked>>,
}

fn pick<T>(v: &[T], i: u8) -> Option<&T> {
    if v.is_empty() {
        None
    } else {
        Some(&v[usize::from(i) % v.len()])
    }
}

fn try_send(tx: &Sender<Tracked>, m: &mut Model) {
    let v = m.fresh();
    let id = v.id();
    match tx.try_send(v) {
        Ok(()) => {
            assert!(
                m.send_ready() && !m.disconnected,
                "try_send succeeded ({:?})",
                m.kind
            );
            m.buf.push_back(id);
        }
        Err(TrySendError::Full(v)) => {
            assert!(
                !m.disconnected,
                "try_send said Full on a disconnected channel"
            );
            assert!(
                m.full(),
                "try_send said Full with room ({} buffered)",
                m.buf.len()
            );
            assert_eq!(v.into_id(), id, "try_send handed back another message");
        }
        Err(TrySendError::Disconnected(v)) => {
            assert!(
                m.disconnected,
                "try_send said Disconnected on a connected channel"
            );
            assert_eq!(v.into_id(), id, "try_send handed back another message");
        }
    }
}

fn try_recv(rx: &Receiver<Tracked>, m: &mut Model) {
    match rx.try_recv() {
        Ok(v) => assert_eq!(Some(v.into_id()), m.buf.pop_front(), "try_recv: FIFO order"),
        Err(TryRecvError::Empty) => {
            assert!(m.buf.is_empty(), "try_recv said Empty holding {:?}", m.buf);
            assert!(
                !m.disconnected,
                "try_recv said Empty on a disconnected, drained channel"
            );
        }
        Err(TryRecvError::Disconnected) => {
            assert!(
                m.buf.is_empty(),
                "try_recv said Disconnected holding {:?}",
                m.buf
            );
            assert!(
                m.disconnected,
                "try_recv said Disconnected on a connected channel"
            );
        }
    }
}

fn check_state(h: &Handles, m: &Model, after: &ChannelOp) {
    let (len, cap, full) = match m.kind {
        Kind::Array(c) => (m.buf.len(), Some(c), m.buf.len() == c),
        Kind::List => (m.buf.len(), None, false),
        Kind::Zero => (0, Some(0), true),
    };
    let senders = h.senders.len();
    let receivers = h.receivers.len();
    macro_rules! check_handle {
        ($x:expr) => {{
            let x = $x;
            assert_eq!(x.len(), len, "len after {after:?}");
            assert_eq!(x.is_empty(), len == 0, "is_empty after {after:?}");
            assert_eq!(x.is_full(), full, "is_full after {after:?}");
            assert_eq!(x.capacity(), cap, "capacity after {after:?}");
            assert_eq!(x.sender_count(), senders, "sender_count after {after:?}");
            assert_eq!(
                x.receiver_count(),
                receivers,
                "receiver_count after {after:?}"
            );
            assert_eq!(
                x.is_disconnected(),
                m.disconnected,
                "is_disconnected after {after:?}"
            );
        }};
    }
    for s in &h.senders {
        check_handle!(s);
    }
    for r in &h.receivers {
        check_handle!(r);
    }
    if let (Some(a), Some(b)) = (h.senders.first(), h.senders.last()) {
        assert!(a.same_channel(b));
    }
    if let (Some(a), Some(b)) = (h.receivers.first(), h.receivers.last()) {
        assert!(a.same_channel(b));
    }
    expect_dropped([], &format!("during {after:?}"));
}

/// Runs `input` against a channel of flavour `kind`.
pub fn run(kind: Kind, input: ChannelInput) {
    reset_dropped();
    let (tx, rx) = match kind {
        Kind::Array(cap) => channel::bounded(cap),
        Kind::Zero => channel::bounded(0),
        Kind::List => channel::unbounded(),
    };
    let mut h = Handles {
        senders: vec![tx],
        receivers: vec![rx],
        weak: Vec::new(),
    };
    let mut m = Model {
        kind,
        buf: VecDeque::new(),
        disconnected: false,
        next_id: 0,
    };
    for op in input.ops.iter().take(256) {
        match *op {
            ChannelOp::TrySend(i) => {
                if let Some(tx) = pick(&h.senders, i) {
                    try_send(tx, &mut m);
                }
            }
            ChannelOp::Send(i) => {
                if let Some(tx) = pick(&h.senders, i) {
                    if m.send_ready() {
                        let v = m.fresh();
                        let id = v.id();
                        match tx.send(v) {
                            Ok(()) => {
                                assert!(
                                    !m.disconnected,
                                    "send succeeded on a disconnected channel"
                                );
                                m.buf.push_back(id);
                            }
                            Err(SendError(v)) => {
                                assert!(m.disconnected, "send failed on a connected channel");
                                assert_eq!(v.into_id(), id, "send handed back another message");
                            }
                        }
                    } else {
                        try_send(tx, &mut m);
                    }
                }
            }
            ChannelOp::SendTimeout(i, us) => {
                if let Some(tx) = pick(&h.senders, i) {
                    let v = m.fresh();
                    let id = v.id();
                    match tx.send_timeout(v, short_timeout(us)) {
                        Ok(()) => {
                            assert!(!m.disconnected && !m.full(), "send_timeout succeeded");
                            m.buf.push_back(id);
                        }
                        Err(SendTimeoutError::Timeout(v)) => {
                            assert!(!m.disconnected && m.full(), "send_timeout timed out");
                            assert_eq!(v.into_id(), id);
                        }
                        Err(SendTimeoutError::Disconnected(v)) => {
                            assert!(m.disconnected, "send_timeout said Disconnected");
                            assert_eq!(v.into_id(), id);
                        }
                    }
                }
            }
            ChannelOp::SendMany(i, n) => {
                if let Some(tx) = pick(&h.senders, i) {
                    for _ in 0..(n % 81) {
                        try_send(tx, &mut m);
                    }
                }
            }
            ChannelOp::TryRecv(i) => {
                if let Some(rx) = pick(&h.receivers, i) {
                    try_recv(rx, &mut m);
                }
            }
            ChannelOp::Recv(i) => {
                if let Some(rx) = pick(&h.receivers, i) {
                    if m.recv_ready() {
                        match rx.recv() {
                            Ok(v) => {
                                assert_eq!(Some(v.into_id()), m.buf.pop_front(), "recv: FIFO")
                            }
                            Err(RecvError) => assert!(
                                m.disconnected && m.buf.is_empty(),
                                "recv failed holding {:?}",
                                m.buf
                            ),
                        }
                    } else {
                        try_recv(rx, &mut m);
                    }
                }
            }
            ChannelOp::RecvTimeout(i, us) => {
                if let Some(rx) = pick(&h.receivers, i) {
                    match rx.recv_timeout(short_timeout(us)) {
                        Ok(v) => {
                            assert_eq!(Some(v.into_id()), m.buf.pop_front(), "recv_timeout: FIFO")
                        }
                        Err(RecvTimeoutError::Timeout) => assert!(
                            !m.disconnected && m.buf.is_empty(),
                            "recv_timeout timed out"
                        ),
                        Err(RecvTimeoutError::Disconnected) => assert!(
                            m.disconnected && m.buf.is_empty(),
                            "recv_timeout said Disconnected"
                        ),
                    }
                }
            }
            ChannelOp::TryIter(i) => {
                if let Some(rx) = pick(&h.receivers, i) {
                    let got: Vec<u64> = rx.try_iter().map(Tracked::into_id).collect();
                    let want: Vec<u64> = m.buf.drain(..).collect();
                    assert_eq!(got, want, "try_iter");
                }
            }
            ChannelOp::Iter(i) => {
                if let Some(rx) = pick(&h.receivers, i) {
                    if m.disconnected {
                        let got: Vec<u64> = rx.iter().map(Tracked::into_id).collect();
                        let want: Vec<u64> = m.buf.drain(..).collect();
                        assert_eq!(got, want, "iter on a disconnected channel");
                    }
                }
            }
            ChannelOp::CloseFromSender(i) => {
                if let Some(tx) = pick(&h.senders, i) {
                    assert_eq!(tx.close(), !m.disconnected, "Sender::close's result");
                    m.disconnected = true;
                }
            }
            ChannelOp::CloseFromReceiver(i) => {
                if let Some(rx) = pick(&h.receivers, i) {
                    assert_eq!(rx.close(), !m.disconnected, "Receiver::close's result");
                    m.disconnected = true;
                }
            }
            ChannelOp::CloneSender(i) => {
                if let Some(tx) = pick(&h.senders, i) {
                    let c = tx.clone();
                    h.senders.push(c);
                }
            }
            ChannelOp::CloneReceiver(i) => {
                if let Some(rx) = pick(&h.receivers, i) {
                    let c = rx.clone();
                    h.receivers.push(c);
                }
            }
            ChannelOp::DropSender(i) => {
                if !h.senders.is_empty() {
                    let idx = usize::from(i) % h.senders.len();
                    drop(h.senders.swap_remove(idx));
                    if h.senders.is_empty() {
                        m.disconnected = true;
                    }
                }
            }
            ChannelOp::DropReceiver(i) => {
                if !h.receivers.is_empty() {
                    let idx = usize::from(i) % h.receivers.len();
                    drop(h.receivers.swap_remove(idx));
                    if h.receivers.is_empty() {
                        m.disconnected = true;
                        // The last receiver drops what is buffered, now.
                        let buffered: Vec<u64> = m.buf.drain(..).collect();
                        expect_dropped(buffered, "when the last receiver was dropped");
                    }
                }
            }
            ChannelOp::Downgrade(i) => {
                if let Some(tx) = pick(&h.senders, i) {
                    let w = tx.downgrade();
                    h.weak.push(w);
                }
            }
            ChannelOp::Upgrade(i) => {
                if let Some(w) = pick(&h.weak, i) {
                    let up = w.upgrade();
                    assert_eq!(
                        up.is_some(),
                        !h.senders.is_empty(),
                        "upgrade with live senders"
                    );
                    if let Some(tx) = up {
                        h.senders.push(tx);
                    }
                }
            }
            ChannelOp::DropWeak(i) => {
                if !h.weak.is_empty() {
                    let idx = usize::from(i) % h.weak.len();
                    drop(h.weak.swap_remove(idx));
                }
            }
        }
        check_state(&h, &m, op);
    }
    // Tear down: senders (disconnects, nothing dropped), weak senders, then receivers (the last
    // one drops what is left).
    let had_receivers = !h.receivers.is_empty();
    h.senders.clear();
    h.weak.clear();
    expect_dropped([], "when the senders were dropped at the end");
    h.receivers.clear();
    if had_receivers {
        expect_dropped(
            m.buf.drain(..),
            "when the last receiver was dropped at the end",
        );
    } else {
        assert!(m.buf.is_empty());
        expect_dropped([], "at the end");
    }
}
