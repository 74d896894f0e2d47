//! Linearizability of FIFO queue histories: a recorder, a polynomial checker and a Wing-Gong
//! search to cross-check it.
//!
//! A *history* is the list of completed operations of a stress run, each with the thread that
//! ran it, what it did, and two tickets from one monotonic source ([`Clock`]): one taken
//! immediately before the call (`inv`) and one immediately after it returned (`res`). Operation
//! `a` *precedes* `b` when `a.res < b.inv`; otherwise they overlap. A history is linearizable
//! if its operations can be put in one sequence that keeps every "precedes" and in which each
//! result is what a sequential FIFO queue would return.
//!
//! The tickets are `SeqCst` read-modify-writes of one counter, so `a.res < b.inv` also means
//! that `a` happens-before `b` (the chain of RMWs on the counter synchronises): the order the
//! checker uses is one the hardware really imposed, never one it made up.
//!
//! Every enqueued value must be distinct (the stress runs make them so). Then:
//!
//! - [`check`] decides linearizability of the FIFO part in `O(n log n)`, by looking for the
//!   four violation patterns of Henzinger, Sezgin and Vafeiadis (CONCUR 2013): `VFresh`,
//!   `VRepet`, `VOrd`, `VWit`, the last one (an empty dequeue while the queue certainly held
//!   something) in the chain form argued in `papers/linearizability.md` (see [`Violation`]).
//!   Given a capacity it adds two capacity patterns that are sound but not complete (`VFull`,
//!   `VOverflow`).
//! - [`wing_gong`] searches for a linearization (Wing and Gong 1993) with Lowe's memoisation of
//!   (linearized set, queue contents) (Lowe 2017). Exponential in the worst case, exact, and
//!   capacity-aware; it cross-checks [`check`] on small histories.
//! - [`check_rendezvous`] adds what a capacity-0 channel promises: each send overlaps the
//!   receive that took its value, and every completed send was received.
//!
//! What is recorded: successful enqueues, dequeues with their value, dequeues that found the
//! queue empty (`try_pop` Empty, a timed pop's Timeout, and a pop that found the queue closed
//! and drained: each saw the queue empty at some instant of its interval), and failed pushes
//! that reported Full (`try_push` Full, a timed push's Timeout). A push that failed because the
//! queue was closed changed nothing and is not recorded; nor is `close` itself, which leaves
//! the queue's contents alone.

// Tests use std's atomics directly; core/clippy.toml forbids them in the crate's own code (which
// must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

/// A value put into the queue. The checkers require every enqueued value to be distinct.
pub type Value = u64;

/// What an operation did, as seen by its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A push that succeeded.
    Enq(Value),
    /// A pop that returned a value (`Some`) or saw the queue empty (`None`).
    Deq(Option<Value>),
    /// A push that failed because the queue was full (it changed nothing).
    Full,
}

/// One completed operation: who, what, and its two tickets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    pub thread: usize,
    pub kind: Kind,
    /// The ticket taken immediately before the call.
    pub inv: u64,
    /// The ticket taken immediately after it returned.
    pub res: u64,
}

impl Op {
    pub fn new(thread: usize, kind: Kind, inv: u64, res: u64) -> Self {
        Op {
            thread,
            kind,
            inv,
            res,
        }
    }

    /// True if `self` returned before `other` was invoked (real-time order).
    pub fn precedes(&self, other: &Op) -> bool {
        self.res < other.inv
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Enq(v) => write!(f, "enq({v})")?,
            Kind::Deq(Some(v)) => write!(f, "deq -> {v}")?,
            Kind::Deq(None) => write!(f, "deq -> empty")?,
            Kind::Full => write!(f, "push -> Full")?,
        }
        write!(f, " [thread {}, {}..{}]", self.thread, self.inv, self.res)
    }
}

// ---------------------------------------------------------------------------------------------
// Recording
// ---------------------------------------------------------------------------------------------

/// The one monotonic source of tickets of a run: a counter every thread increments.
#[derive(Debug, Default)]
pub struct Clock(AtomicU64);

impl Clock {
    pub fn new() -> Arc<Self> {
        Arc::new(Clock::default())
    }

    /// A fresh ticket, larger than every ticket handed out before it.
    #[inline]
    pub fn tick(&self) -> u64 {
        self.0.fetch_add(1, SeqCst)
    }
}

/// One thread's operations, in its program order. Take the invocation ticket with
/// [`invoke`](Self::invoke) right before the call, and hand it to [`enq`](Self::enq),
/// [`deq`](Self::deq) or [`full`](Self::full) right after the call returned (they take the
/// response ticket first thing).
#[derive(Debug)]
pub struct ThreadLog {
    clock: Arc<Clock>,
    thread: usize,
    ops: Vec<Op>,
}

impl ThreadLog {
    pub fn new(clock: &Arc<Clock>, thread: usize) -> Self {
        ThreadLog {
            clock: Arc::clone(clock),
            thread,
            ops: Vec::new(),
        }
    }

    pub fn thread(&self) -> usize {
        self.thread
    }

    #[inline]
    pub fn invoke(&self) -> u64 {
        self.clock.tick()
    }

    #[inline]
    fn record(&mut self, inv: u64, kind: Kind) {
        let res = self.clock.tick();
        self.ops.push(Op::new(self.thread, kind, inv, res));
    }

    /// A push of `value` that succeeded.
    pub fn enq(&mut self, inv: u64, value: Value) {
        self.record(inv, Kind::Enq(value));
    }

    /// A pop that returned `value`, or saw the queue empty (`None`).
    pub fn deq(&mut self, inv: u64, value: Option<Value>) {
        self.record(inv, Kind::Deq(value));
    }

    /// A push that failed because the queue was full.
    pub fn full(&mut self, inv: u64) {
        self.record(inv, Kind::Full);
    }
}

/// A complete history: every operation returned. Tickets are distinct and `inv < res`.
#[derive(Clone, Debug, Default)]
pub struct History {
    ops: Vec<Op>,
}

impl History {
    /// Panics if an operation has `inv >= res` or two tickets coincide (a harness bug, not a
    /// property of the queue).
    pub fn new(mut ops: Vec<Op>) -> Self {
        ops.sort_by_key(|o| o.inv);
        let mut tickets = HashSet::with_capacity(ops.len() * 2);
        for o in &ops {
            assert!(
                o.inv < o.res,
                "malformed history: {o} responds before it is invoked"
            );
            assert!(
                tickets.insert(o.inv) && tickets.insert(o.res),
                "malformed history: {o} shares a ticket with another operation"
            );
        }
        History { ops }
    }

    pub fn from_logs(logs: impl IntoIterator<Item = ThreadLog>) -> Self {
        History::new(logs.into_iter().flat_map(|l| l.ops).collect())
    }

    /// The operations, sorted by invocation.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// The same history without its failed (Full) pushes: what an unbounded queue must explain.
    pub fn without_full(&self) -> History {
        History {
            ops: self
                .ops
                .iter()
                .copied()
                .filter(|o| o.kind != Kind::Full)
                .collect(),
        }
    }
}

impl fmt::Display for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for o in &self.ops {
            writeln!(f, "  {o}")?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The violation patterns
// ---------------------------------------------------------------------------------------------

/// The answer of a polynomial check: `Ok`, or the first violation found (boxed: it is large).
pub type Verdict = Result<(), Box<Violation>>;

/// Why a history is not linearizable: one pattern, with the operations that form it. Each
/// pattern alone rules out every linearization; [`check`] reports the first one it finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// Not a property of the queue but of the harness: two enqueues of one value.
    NotDistinct { first: Op, second: Op },
    /// `VFresh`: a dequeue returned a value that no enqueue inserted.
    Fresh { deq: Op },
    /// `VFresh`, timed: a dequeue returned before the enqueue of its value was invoked.
    DequeuedBeforeEnqueued { enq: Op, deq: Op },
    /// `VRepet`: two dequeues returned the same value.
    Repeated { first: Op, second: Op },
    /// `VOrd`: `enq(a)` returned before `enq(b)` was invoked, `b` was dequeued, and either
    /// `deq(b)` returned before `deq(a)` was invoked, or `a` was never dequeued.
    Order {
        enq_a: Op,
        enq_b: Op,
        deq_b: Op,
        deq_a: Option<Op>,
    },
    /// `VWit`: a dequeue returned empty although, at every instant of its interval, some value
    /// was certainly inside: each value in `cover` was enqueued (its enqueue returned) before
    /// the instant and not yet taken (its dequeue not yet invoked, or never). The first value's
    /// span starts before the empty dequeue was invoked, each next one starts inside the
    /// previous one's, and the last one ends after the empty dequeue returned (or never).
    Empty {
        deq: Op,
        cover: Vec<(Op, Option<Op>)>,
    },
    /// Capacity: a push reported Full although fewer than `capacity` values can have been in
    /// the queue at any instant of its interval (`at_most` counts every enqueue already
    /// invoked and subtracts only the dequeues already returned).
    SpuriousFull {
        full: Op,
        at_most: usize,
        capacity: usize,
    },
    /// Capacity: a push succeeded although at least `capacity` values were in the queue at
    /// every instant of its interval (`at_least` counts only enqueues already returned and
    /// subtracts every dequeue already invoked).
    Overflow {
        enq: Op,
        at_least: usize,
        capacity: usize,
    },
    /// Rendezvous: a send returned before the receive that took its value was invoked.
    SendCompletedAlone { enq: Op, deq: Op },
    /// Rendezvous: a send completed but its value was never received.
    SendNeverReceived { enq: Op },
}

impl Violation {
    /// The pattern's short name.
    pub fn pattern(&self) -> &'static str {
        match self {
            Violation::NotDistinct { .. } => "values not distinct",
            Violation::Fresh { .. } | Violation::DequeuedBeforeEnqueued { .. } => "VFresh",
            Violation::Repeated { .. } => "VRepet",
            Violation::Order { .. } => "VOrd",
            Violation::Empty { .. } => "VWit",
            Violation::SpuriousFull { .. } => "VFull",
            Violation::Overflow { .. } => "VOverflow",
            Violation::SendCompletedAlone { .. } | Violation::SendNeverReceived { .. } => {
                "rendezvous"
            }
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not linearizable ({}): ", self.pattern())?;
        match self {
            Violation::NotDistinct { first, second } => write!(
                f,
                "{first} and {second} enqueue the same value (the checker needs distinct values)"
            ),
            Violation::Fresh { deq } => write!(f, "{deq} returned a value no enqueue inserted"),
            Violation::DequeuedBeforeEnqueued { enq, deq } => {
                write!(f, "{deq} returned before {enq} was invoked")
            }
            Violation::Repeated { first, second } => {
                write!(f, "one value dequeued twice: {first} and {second}")
            }
            Violation::Order {
                enq_a,
                enq_b,
                deq_b,
                deq_a: Some(deq_a),
            } => write!(
                f,
                "{enq_a} returned before {enq_b} was invoked, but {deq_b} returned before \
                 {deq_a} was invoked (FIFO order reversed)"
            ),
            Violation::Order {
                enq_a,
                enq_b,
                deq_b,
                deq_a: None,
            } => write!(
                f,
                "{enq_a} returned before {enq_b} was invoked, but {deq_b} took the later value \
                 while the earlier one was never dequeued"
            ),
            Violation::Empty { deq, cover } => {
                write!(
                    f,
                    "{deq} returned empty, but the queue certainly held a value throughout it:"
                )?;
                for (enq, taken) in cover {
                    match taken {
                        Some(d) => write!(f, " [{enq}, until {d}]")?,
                        None => write!(f, " [{enq}, never dequeued]")?,
                    }
                }
                Ok(())
            }
            Violation::SpuriousFull {
                full,
                at_most,
                capacity,
            } => write!(
                f,
                "{full}, but the queue (capacity {capacity}) held at most {at_most} value(s) at \
                 every instant of it"
            ),
            Violation::Overflow {
                enq,
                at_least,
                capacity,
            } => write!(
                f,
                "{enq} succeeded, but the queue (capacity {capacity}) held at least {at_least} \
                 value(s) at every instant of it"
            ),
            Violation::SendCompletedAlone { enq, deq } => write!(
                f,
                "{enq} returned before {deq}, which took its value, was invoked: a rendezvous \
                 send completed before a receiver took it"
            ),
            Violation::SendNeverReceived { enq } => write!(
                f,
                "{enq} completed but its value was never received (a rendezvous send returns \
                 only once taken)"
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The polynomial checker
// ---------------------------------------------------------------------------------------------

/// One value's enqueue and (if any) dequeue, as indices into the history.
#[derive(Clone, Copy)]
struct Life {
    enq: usize,
    deq: Option<usize>,
}

/// Decides whether `h` is linearizable with respect to a FIFO queue with distinct values:
/// `Ok` if it is, else the first violation found. `O(n log n)`.
///
/// With `capacity: None` the answer is exact (failed pushes are ignored: an unbounded queue
/// never reports Full). With `Some(c)` the capacity patterns `VFull` and `VOverflow` are added:
/// each one found is a real violation, but a history can break the capacity in subtler ways
/// that they miss (then only [`wing_gong`] says so).
///
/// The FIFO part is exact because of this argument (`papers/linearizability.md` has it in
/// full). Without `VFresh`, `VRepet` and `VOrd`, a history without empty dequeues is
/// linearizable (Henzinger, Sezgin and Vafeiadis). An empty dequeue `d` needs a cut: a set `P`
/// of values enqueued and dequeued before it, every other value enqueued after it. `P` must
/// contain each value whose enqueue returned before `d` was invoked; then every value whose
/// enqueue returned before such a value's dequeue was invoked; and so on. That is the
/// fixpoint `T` = the end of the run of "certainly inside" spans `(enq.res, deq.inv)` that
/// covers `d.inv`; `d` can be placed iff `T < d.res` (`VWit` otherwise). All these cuts are
/// nested (larger `T`, larger `P`), each is closed under real-time predecessors, so the
/// history splits into layers, each of which starts and ends empty and has no empty dequeue
/// inside: linearize each layer alone and put the empty dequeues between them.
pub fn check(h: &History, capacity: Option<usize>) -> Verdict {
    let ops = h.ops();
    let lives = lives(ops)?;
    check_order(ops, &lives)?;
    check_empty(ops, &lives)?;
    if let Some(c) = capacity {
        check_capacity(ops, c)?;
    }
    Ok(())
}

/// `VFresh` and `VRepet`, and each value's enqueue and dequeue.
fn lives(ops: &[Op]) -> Result<Vec<Life>, Box<Violation>> {
    let mut by_value: HashMap<Value, Life> = HashMap::new();
    for (i, o) in ops.iter().enumerate() {
        if let Kind::Enq(v) = o.kind {
            if let Some(l) = by_value.insert(v, Life { enq: i, deq: None }) {
                return Err(Box::new(Violation::NotDistinct {
                    first: ops[l.enq],
                    second: *o,
                }));
            }
        }
    }
    for (i, o) in ops.iter().enumerate() {
        if let Kind::Deq(Some(v)) = o.kind {
            let Some(life) = by_value.get_mut(&v) else {
                return Err(Box::new(Violation::Fresh { deq: *o }));
            };
            if let Some(first) = life.deq {
                return Err(Box::new(Violation::Repeated {
                    first: ops[first],
                    second: *o,
                }));
            }
            if o.precedes(&ops[life.enq]) {
                return Err(Box::new(Violation::DequeuedBeforeEnqueued {
                    enq: ops[life.enq],
                    deq: *o,
                }));
            }
            life.deq = Some(i);
        }
    }
    let mut lives: Vec<Life> = by_value.into_values().collect();
    lives.sort_by_key(|l| l.enq);
    Ok(lives)
}

/// When a value's dequeue was invoked; `u64::MAX` if never (it stays in the queue for good).
fn taken_at(ops: &[Op], l: &Life) -> u64 {
    l.deq.map_or(u64::MAX, |d| ops[d].inv)
}

/// `VOrd`: for each dequeued `b`, among the values `a` whose enqueue returned before `enq(b)`
/// was invoked, the one whose dequeue was invoked last (never counts as last of all); a
/// violation iff that is after `deq(b)` returned. One sort and one sweep.
fn check_order(ops: &[Op], lives: &[Life]) -> Verdict {
    let mut by_enq_res: Vec<&Life> = lives.iter().collect();
    by_enq_res.sort_by_key(|l| ops[l.enq].res);
    let mut by_enq_inv: Vec<&Life> = lives.iter().filter(|l| l.deq.is_some()).collect();
    by_enq_inv.sort_by_key(|l| ops[l.enq].inv);

    let mut next = 0;
    let mut latest: Option<&Life> = None;
    for b in by_enq_inv {
        let enq_b = ops[b.enq];
        while next < by_enq_res.len() && ops[by_enq_res[next].enq].res < enq_b.inv {
            let a = by_enq_res[next];
            if latest.is_none_or(|l| taken_at(ops, a) > taken_at(ops, l)) {
                latest = Some(a);
            }
            next += 1;
        }
        let deq_b = ops[b.deq.expect("filtered on dequeued values")];
        if let Some(a) = latest {
            if taken_at(ops, a) > deq_b.res {
                return Err(Box::new(Violation::Order {
                    enq_a: ops[a.enq],
                    enq_b,
                    deq_b,
                    deq_a: a.deq.map(|d| ops[d]),
                }));
            }
        }
    }
    Ok(())
}

/// `VWit`: merge the spans `(enq.res, deq.inv)` during which each value is certainly inside
/// the queue into runs; an empty dequeue is a violation iff the run that covers its invocation
/// lasts past its response.
fn check_empty(ops: &[Op], lives: &[Life]) -> Verdict {
    let mut spans: Vec<(u64, u64)> = lives
        .iter()
        .map(|l| (ops[l.enq].res, taken_at(ops, l)))
        .filter(|(start, end)| start < end)
        .collect();
    spans.sort_unstable();
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for (start, end) in spans {
        match runs.last_mut() {
            Some(run) if start < run.1 => run.1 = run.1.max(end),
            _ => runs.push((start, end)),
        }
    }
    for d in ops.iter().filter(|o| o.kind == Kind::Deq(None)) {
        let i = runs.partition_point(|run| run.0 < d.inv);
        if i == 0 {
            continue;
        }
        // The run that starts last before d began; it covers d.inv iff it ends after it, and
        // then it must end before d returns.
        let (_, end) = runs[i - 1];
        if end > d.res {
            return Err(Box::new(Violation::Empty {
                deq: *d,
                cover: cover(ops, lives, d),
            }));
        }
    }
    Ok(())
}

/// The values that keep the queue non-empty throughout `d`, for the message: from `d.inv`,
/// repeatedly the value already certainly inside that stays inside longest.
fn cover(ops: &[Op], lives: &[Life], d: &Op) -> Vec<(Op, Option<Op>)> {
    let mut reached = d.inv;
    let mut chain = Vec::new();
    while reached < d.res {
        let best = lives
            .iter()
            .filter(|l| ops[l.enq].res < reached)
            .max_by_key(|l| taken_at(ops, l))
            .expect("check_empty found a run covering d");
        assert!(
            taken_at(ops, best) > reached,
            "the run covering d is connected"
        );
        reached = taken_at(ops, best);
        chain.push((ops[best.enq], best.deq.map(|i| ops[i])));
    }
    chain
}

/// `VFull` and `VOverflow`, by bounds on the queue's length at each instant `p`: at most the
/// enqueues invoked before `p` minus the dequeues (of a value) returned before `p`; at least
/// the enqueues returned before `p` minus the dequeues invoked before `p`.
fn check_capacity(ops: &[Op], capacity: usize) -> Verdict {
    // Rank the tickets: instant k (0-based) lies just after the k-th ticket.
    let mut tickets: Vec<u64> = ops.iter().flat_map(|o| [o.inv, o.res]).collect();
    tickets.sort_unstable();
    let rank = |t: u64| tickets.binary_search(&t).expect("a ticket of the history");
    let n = tickets.len();
    let mut up_delta = vec![0i64; n];
    let mut low_delta = vec![0i64; n];
    for o in ops {
        match o.kind {
            Kind::Enq(_) => {
                up_delta[rank(o.inv)] += 1;
                low_delta[rank(o.res)] += 1;
            }
            Kind::Deq(Some(_)) => {
                up_delta[rank(o.res)] -= 1;
                low_delta[rank(o.inv)] -= 1;
            }
            Kind::Deq(None) | Kind::Full => {}
        }
    }
    let prefix = |delta: Vec<i64>| {
        let mut acc = 0;
        delta
            .into_iter()
            .map(|d| {
                acc += d;
                acc
            })
            .collect::<Vec<i64>>()
    };
    let upper = RangeTable::new(prefix(up_delta), Ordering::Greater);
    let lower = RangeTable::new(prefix(low_delta), Ordering::Less);
    let cap = capacity as i64;
    for o in ops {
        // The instants inside o: just after its invocation ticket, up to just before its
        // response ticket.
        let (first, last) = (rank(o.inv), rank(o.res) - 1);
        match o.kind {
            Kind::Full => {
                let at_most = upper.query(first, last);
                if at_most < cap {
                    return Err(Box::new(Violation::SpuriousFull {
                        full: *o,
                        at_most: at_most.max(0) as usize,
                        capacity,
                    }));
                }
            }
            Kind::Enq(_) => {
                let at_least = lower.query(first, last);
                if at_least >= cap {
                    return Err(Box::new(Violation::Overflow {
                        enq: *o,
                        at_least: at_least as usize,
                        capacity,
                    }));
                }
            }
            Kind::Deq(_) => {}
        }
    }
    Ok(())
}

/// A sparse table: the maximum (`Greater`) or minimum (`Less`) of any range in `O(1)`.
struct RangeTable {
    levels: Vec<Vec<i64>>,
    keep: Ordering,
}

impl RangeTable {
    fn new(values: Vec<i64>, keep: Ordering) -> Self {
        let pick = move |a: i64, b: i64| if a.cmp(&b) == keep { a } else { b };
        let mut levels = vec![values];
        let mut width = 1;
        while width * 2 <= levels[0].len() {
            let prev = levels.last().expect("level 0 exists");
            let next = (0..prev.len() - width)
                .map(|i| pick(prev[i], prev[i + width]))
                .collect();
            levels.push(next);
            width *= 2;
        }
        RangeTable { levels, keep }
    }

    /// The extreme of `values[first..=last]`.
    fn query(&self, first: usize, last: usize) -> i64 {
        let level = (usize::BITS - 1 - (last - first + 1).leading_zeros()) as usize;
        let (a, b) = (
            self.levels[level][first],
            self.levels[level][last + 1 - (1 << level)],
        );
        if a.cmp(&b) == self.keep {
            a
        } else {
            b
        }
    }
}

/// A capacity-0 (rendezvous) channel: the FIFO patterns (no capacity), then every completed
/// send must have been received by a receive that overlaps it.
///
/// Together these are exactly linearizability for a rendezvous: each transfer needs an instant
/// inside both the send and the receive, and an empty receive can sit at any other instant
/// (the channel holds nothing between transfers), so FIFO order adds nothing a real-time-
/// respecting pairing does not already give (it is checked anyway, as a cross-check).
pub fn check_rendezvous(h: &History) -> Verdict {
    let h = h.without_full();
    check(&h, None)?;
    let ops = h.ops();
    for l in lives(ops)? {
        let enq = ops[l.enq];
        match l.deq {
            None => return Err(Box::new(Violation::SendNeverReceived { enq })),
            Some(d) if enq.precedes(&ops[d]) => {
                return Err(Box::new(Violation::SendCompletedAlone { enq, deq: ops[d] }))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Wing-Gong with Lowe's memoisation
// ---------------------------------------------------------------------------------------------

/// The answer of [`wing_gong`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Search {
    /// A linearization: indices into `History::ops`, in order.
    Linearizable(Vec<usize>),
    /// Every order was tried; `configurations` distinct (linearized set, contents) were seen.
    NotLinearizable { configurations: usize },
    /// More than the budget of configurations: no answer.
    GaveUp { configurations: usize },
}

impl Search {
    pub fn is_linearizable(&self) -> bool {
        matches!(self, Search::Linearizable(_))
    }
}

/// The most operations [`wing_gong`] takes (its linearized set is one `u128`).
pub const WING_GONG_MAX_OPS: usize = 128;

/// Searches for a linearization of `h` against a FIFO queue of `capacity` (`None`: unbounded,
/// and then a Full result is never legal), by Wing and Gong's backtracking: extend the
/// sequence with any operation that no unlinearized operation precedes and whose result the
/// queue allows, undo on a dead end. Lowe's memoisation prunes a configuration (the set of
/// linearized operations and the queue's contents) seen before: the rest of the search from
/// it is the same. Gives up after `budget` configurations.
pub fn wing_gong(h: &History, capacity: Option<usize>, budget: usize) -> Search {
    let ops = h.ops();
    assert!(
        ops.len() <= WING_GONG_MAX_OPS,
        "wing_gong takes at most {WING_GONG_MAX_OPS} operations, got {}",
        ops.len()
    );
    let mut s = WingGong {
        ops,
        capacity,
        all: if ops.len() == 128 {
            u128::MAX
        } else {
            (1u128 << ops.len()) - 1
        },
        done: 0,
        queue: VecDeque::new(),
        seen: HashSet::new(),
        path: Vec::new(),
        budget,
    };
    match s.search() {
        Some(true) => Search::Linearizable(s.path),
        Some(false) => Search::NotLinearizable {
            configurations: s.seen.len(),
        },
        None => Search::GaveUp {
            configurations: s.seen.len(),
        },
    }
}

struct WingGong<'a> {
    ops: &'a [Op],
    capacity: Option<usize>,
    all: u128,
    done: u128,
    queue: VecDeque<Value>,
    seen: HashSet<(u128, Vec<Value>)>,
    path: Vec<usize>,
    budget: usize,
}

impl WingGong<'_> {
    /// `Some(true)`: linearized (the order is in `path`); `Some(false)`: no way on from here;
    /// `None`: over budget.
    fn search(&mut self) -> Option<bool> {
        if self.done == self.all {
            return Some(true);
        }
        // An operation can go next iff no pending one returned before it was invoked.
        let min_res = (0..self.ops.len())
            .filter(|&i| self.done & (1 << i) == 0)
            .map(|i| self.ops[i].res)
            .min()
            .expect("some operation is pending");
        // ops are sorted by invocation, so the candidates are a prefix.
        for i in 0..self.ops.len() {
            let op = self.ops[i];
            if op.inv > min_res {
                break;
            }
            if self.done & (1 << i) != 0 || !self.apply(op.kind) {
                continue;
            }
            self.done |= 1 << i;
            let fresh = self
                .seen
                .insert((self.done, self.queue.iter().copied().collect()));
            if fresh {
                if self.seen.len() > self.budget {
                    return None;
                }
                self.path.push(i);
                match self.search() {
                    Some(false) => {
                        self.path.pop();
                    }
                    found_or_gave_up => return found_or_gave_up,
                }
            }
            self.done &= !(1 << i);
            self.undo(op.kind);
        }
        Some(false)
    }

    /// Applies `kind` to the queue if the sequential queue allows its result.
    fn apply(&mut self, kind: Kind) -> bool {
        match kind {
            Kind::Enq(v) => {
                if self.capacity.is_some_and(|c| self.queue.len() >= c) {
                    return false;
                }
                self.queue.push_back(v);
                true
            }
            Kind::Deq(Some(v)) => {
                if self.queue.front() != Some(&v) {
                    return false;
                }
                self.queue.pop_front();
                true
            }
            Kind::Deq(None) => self.queue.is_empty(),
            Kind::Full => self.capacity == Some(self.queue.len()),
        }
    }

    fn undo(&mut self, kind: Kind) {
        match kind {
            Kind::Enq(_) => {
                self.queue.pop_back();
            }
            Kind::Deq(Some(v)) => self.queue.push_front(v),
            Kind::Deq(None) | Kind::Full => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A small deterministic generator (the stress plans and the random histories)
// ---------------------------------------------------------------------------------------------

/// SplitMix64: a seeded stream of 64-bit values, enough to pick operations and jitter.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the bias is negligible for the small n used here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}
