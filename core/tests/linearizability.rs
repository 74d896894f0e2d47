//! Linearizability of every queue and channel flavour, decided on recorded histories, and the
//! tests of the checkers themselves.
//!
//! A stress run records each operation's invocation and response tickets (`common/lin.rs`);
//! the polynomial checker `lin::check` then decides whether a FIFO linearization exists, and on
//! small histories the Wing-Gong search `lin::wing_gong` must agree. Every enqueued value is
//! distinct (thread number and sequence number), which is what makes the polynomial check
//! possible.
//!
//! Two drivers:
//!
//! - *mixed* (the queues, and the bounded and unbounded channels through one handle pair):
//!   every thread both pushes and pops, with `try_*`, plain blocking and timed calls. Call a
//!   thread's pushes minus its pops its balance. Non-blocking calls are made at any balance
//!   (so pops do find the queue empty and pushes find it full); a plain blocking pop only at a
//!   balance of at least 1, a plain blocking push only below `held_max`, with `threads *
//!   (held_max - 1) < capacity`. Then no run of a correct queue can end with every thread
//!   waiting: the queue holds the sum of the balances, so a waiting pop means it is not empty
//!   unless some other thread's balance is negative, which that thread can only be waiting in
//!   a push, which needs a full queue; and pushes alone wait on at most `threads * (held_max -
//!   1)` values, fewer than the capacity. Each thread ends at balance 0. Long runs start with
//!   racing bursts of `try_push` then `try_pop` (see `mixed_thread`). A supervisor closes
//!   the queue if no operation completes for `STALL` (only a broken queue stalls; on a correct
//!   one a close changes no verdict, since the history up to it is as checkable as any), and
//!   the main thread drains what is left and records the final empty pop.
//! - *producers/consumers* (every channel, including the rendezvous `bounded(0)`, and `spsc`):
//!   producers send a fixed number of values and drop their handle; consumers receive until
//!   the channel is disconnected and drained, recording that last failed receive as an empty
//!   dequeue.
//!
//! Nothing here depends on timing to pass: timeouts only end a wait early, and a timed-out pop
//! is recorded as what it is, a pop that saw the queue empty.
//!
//! Test names carry the primitive's name so that a mutant gate can select them. The failure
//! message of every checker violation starts with "not linearizable".

// Tests drive real std threads and atomics against the crate; core/clippy.toml forbids those in
// the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;
// Only this binary needs the checker, so it is included here rather than from common/mod.rs
// (which every test binary compiles), as common/counting_alloc.rs is.
#[path = "common/lin.rs"]
mod lin;

use berth::channel::{self, RecvTimeoutError, SendTimeoutError, TryRecvError, TrySendError};
use berth::queue::{PopTimeoutError, PushTimeoutError, TryPopError, TryPushError};
use berth::{spsc, BoundedQueue, MutexQueue, ScqQueue, VyukovQueue};
use common::{join, with_watchdog, WATCHDOG_SECS};
use lin::{check, check_rendezvous, wing_gong, Clock, History, Kind, Op, Rng, Search, ThreadLog};
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

/// `normal`, or `miri` under Miri (which runs threads about a thousand times slower).
const fn scaled(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// The wait of a timed push or pop: short, so that timeouts happen and their path is taken.
const TIMEOUT: Duration = Duration::from_micros(200);

/// How long the supervisor lets a mixed run go without any operation completing before it
/// closes the queue. Only a broken queue stalls; on a correct one the close (if an overloaded
/// machine ever triggers it) ends the run early and changes no verdict.
const STALL: Duration = Duration::from_secs(if cfg!(miri) { 600 } else { 2 });

/// Configurations the Wing-Gong search may visit before it gives up (it never needs close to
/// this many on the histories given to it here).
const WG_BUDGET: usize = 2_000_000;

/// Values of thread `t` are `(t + 1) * VALUE_STRIDE + n`: distinct, and readable in messages.
const VALUE_STRIDE: u64 = 1_000_000;

// ---------------------------------------------------------------------------------------------
// What is under test: one interface over queues and channel handle pairs
// ---------------------------------------------------------------------------------------------

enum Pushed {
    Ok,
    Full,
    Closed,
}

enum Popped {
    Value(u64),
    /// Saw the queue empty (try_pop Empty, or a timed pop's Timeout).
    Empty,
    /// Closed (or disconnected) and drained: also saw the queue empty.
    Closed,
}

/// Which call a thread makes: a `try_*` (half the time), a plain blocking one (3 in 10) or a
/// timed one (1 in 5).
#[derive(Clone, Copy)]
enum Call {
    Try,
    Blocking,
    Timed,
}

fn pick_call(rng: &mut Rng) -> Call {
    match rng.below(10) {
        0..=4 => Call::Try,
        5..=7 => Call::Blocking,
        _ => Call::Timed,
    }
}

trait Subject: Send + Sync + 'static {
    fn capacity(&self) -> Option<usize>;
    fn push(&self, call: Call, v: u64) -> Pushed;
    fn pop(&self, call: Call) -> Popped;
    fn close(&self);
}

struct Queue<Q>(Q);

impl<Q: BoundedQueue<u64> + Send + Sync + 'static> Subject for Queue<Q> {
    fn capacity(&self) -> Option<usize> {
        Some(self.0.capacity())
    }
    fn push(&self, call: Call, v: u64) -> Pushed {
        match call {
            Call::Try => match self.0.try_push(v) {
                Ok(()) => Pushed::Ok,
                Err(TryPushError::Full(_)) => Pushed::Full,
                Err(TryPushError::Closed(_)) => Pushed::Closed,
            },
            Call::Blocking => match self.0.push(v) {
                Ok(()) => Pushed::Ok,
                Err(_) => Pushed::Closed,
            },
            Call::Timed => match self.0.push_timeout(v, TIMEOUT) {
                Ok(()) => Pushed::Ok,
                Err(PushTimeoutError::Timeout(_)) => Pushed::Full,
                Err(PushTimeoutError::Closed(_)) => Pushed::Closed,
            },
        }
    }
    fn pop(&self, call: Call) -> Popped {
        match call {
            Call::Try => match self.0.try_pop() {
                Ok(v) => Popped::Value(v),
                Err(TryPopError::Empty) => Popped::Empty,
                Err(TryPopError::Closed) => Popped::Closed,
            },
            Call::Blocking => match self.0.pop() {
                Ok(v) => Popped::Value(v),
                Err(_) => Popped::Closed,
            },
            Call::Timed => match self.0.pop_timeout(TIMEOUT) {
                Ok(v) => Popped::Value(v),
                Err(PopTimeoutError::Timeout) => Popped::Empty,
                Err(PopTimeoutError::Closed) => Popped::Closed,
            },
        }
    }
    fn close(&self) {
        self.0.close();
    }
}

fn send(tx: &channel::Sender<u64>, call: Call, v: u64) -> Pushed {
    match call {
        Call::Try => match tx.try_send(v) {
            Ok(()) => Pushed::Ok,
            Err(TrySendError::Full(_)) => Pushed::Full,
            Err(TrySendError::Disconnected(_)) => Pushed::Closed,
        },
        Call::Blocking => match tx.send(v) {
            Ok(()) => Pushed::Ok,
            Err(_) => Pushed::Closed,
        },
        Call::Timed => match tx.send_timeout(v, TIMEOUT) {
            Ok(()) => Pushed::Ok,
            Err(SendTimeoutError::Timeout(_)) => Pushed::Full,
            Err(SendTimeoutError::Disconnected(_)) => Pushed::Closed,
        },
    }
}

fn recv(rx: &channel::Receiver<u64>, call: Call) -> Popped {
    match call {
        Call::Try => match rx.try_recv() {
            Ok(v) => Popped::Value(v),
            Err(TryRecvError::Empty) => Popped::Empty,
            Err(TryRecvError::Disconnected) => Popped::Closed,
        },
        Call::Blocking => match rx.recv() {
            Ok(v) => Popped::Value(v),
            Err(_) => Popped::Closed,
        },
        Call::Timed => match rx.recv_timeout(TIMEOUT) {
            Ok(v) => Popped::Value(v),
            Err(RecvTimeoutError::Timeout) => Popped::Empty,
            Err(RecvTimeoutError::Disconnected) => Popped::Closed,
        },
    }
}

/// A channel seen through one sender and one receiver, shared by every thread.
struct Chan {
    tx: channel::Sender<u64>,
    rx: channel::Receiver<u64>,
}

impl Subject for Chan {
    fn capacity(&self) -> Option<usize> {
        self.tx.capacity()
    }
    fn push(&self, call: Call, v: u64) -> Pushed {
        send(&self.tx, call, v)
    }
    fn pop(&self, call: Call) -> Popped {
        recv(&self.rx, call)
    }
    fn close(&self) {
        self.tx.close();
    }
}

/// Records a push of `v` made by `f` (the invocation ticket right before, the response right
/// after). A push that failed because the queue was closed changed nothing: not recorded.
fn record_push(log: &mut ThreadLog, v: u64, f: impl FnOnce() -> Pushed) -> Pushed {
    let inv = log.invoke();
    let r = f();
    match r {
        Pushed::Ok => log.enq(inv, v),
        Pushed::Full => log.full(inv),
        Pushed::Closed => {}
    }
    r
}

/// Records a pop made by `f`; Empty and Closed (drained) both saw the queue empty.
fn record_pop(log: &mut ThreadLog, f: impl FnOnce() -> Popped) -> Popped {
    let inv = log.invoke();
    let r = f();
    match r {
        Popped::Value(v) => log.deq(inv, Some(v)),
        Popped::Empty | Popped::Closed => log.deq(inv, None),
    }
    r
}

// ---------------------------------------------------------------------------------------------
// The mixed driver
// ---------------------------------------------------------------------------------------------

/// Now and then hands the core to another thread, so that short runs on few cores interleave
/// (a chance, never a condition of any verdict).
fn shuffle(rng: &mut Rng) {
    if rng.chance(20) {
        thread::yield_now();
    }
}

/// How far past its bounds a thread's balance may wander through non-blocking calls before it
/// is steered back (keeps the queue's contents, and so each thread's debt, small).
const DRIFT: i64 = 2;

/// The size of a mixed run.
#[derive(Clone, Copy)]
struct Shape {
    threads: usize,
    /// Rounds of racing bursts first (see `mixed_thread`).
    bursts: usize,
    /// Then this many mixed operations per thread.
    steps: usize,
}

/// One thread of a mixed run: `shape.bursts` bursts, then `shape.steps` operations, then
/// blocking calls until it has popped as many values as it pushed. Stops early once the queue
/// is closed.
///
/// `held` is this thread's pushes minus its pops (any thread's values). Non-blocking calls
/// (`try_*`, timed) are allowed whatever it is, so pops see an empty queue and pushes a full
/// one; a plain blocking pop only when `held >= 1` and a plain blocking push only when `held <
/// held_max`, which is what rules out a run in which every thread waits (module docs).
fn mixed_thread<S: Subject>(
    s: &S,
    log: &mut ThreadLog,
    mut rng: Rng,
    shape: Shape,
    held_max: i64,
    line: &StartLine,
    progress: &AtomicU64,
) {
    let base = (log.thread() as u64 + 1) * VALUE_STRIDE;
    let mut next = 0;
    let mut held: i64 = 0;
    // Bursts: all threads leave a start line together and `try_push` once; once all have,
    // they `try_pop` once each. Each burst starts with an empty queue (a correct queue has at
    // most `threads` values after the pushes, and all of them are popped), so with a capacity
    // of at least `threads` no push of a burst may report Full: the pushes race each other on
    // an empty queue, every round. Only non-blocking calls here: a thread blocked inside a
    // burst would hold up the line.
    for round in 0..shape.bursts {
        line.wait_round(2 * round + 1);
        next += 1;
        let v = base + next;
        match record_push(log, v, || s.push(Call::Try, v)) {
            Pushed::Ok => held += 1,
            Pushed::Full => {}
            Pushed::Closed => return,
        }
        line.wait_round(2 * round + 2);
        match record_pop(log, || s.pop(Call::Try)) {
            Popped::Value(_) => held -= 1,
            Popped::Empty => {}
            Popped::Closed => return,
        }
        progress.fetch_add(1, Relaxed);
    }
    let steps = shape.steps;
    let mut step = 0;
    loop {
        let finishing = step >= steps;
        if finishing && held == 0 {
            return;
        }
        let push = if finishing {
            held < 0
        } else if held >= held_max + DRIFT {
            false
        } else if held <= -DRIFT {
            true
        } else {
            rng.chance(50)
        };
        let mut call = if finishing {
            Call::Blocking
        } else {
            pick_call(&mut rng)
        };
        shuffle(&mut rng);
        if push {
            if matches!(call, Call::Blocking) && held >= held_max {
                call = Call::Try;
            }
            // Every attempt gets a fresh value, so that a failed push that did insert its
            // value shows up as a dequeue of a value never enqueued.
            next += 1;
            let v = base + next;
            match record_push(log, v, || s.push(call, v)) {
                Pushed::Ok => held += 1,
                Pushed::Full => {}
                Pushed::Closed => return,
            }
        } else {
            if matches!(call, Call::Blocking) && held < 1 {
                call = Call::Try;
            }
            match record_pop(log, || s.pop(call)) {
                Popped::Value(_) => held -= 1,
                Popped::Empty => {}
                Popped::Closed => return,
            }
        }
        progress.fetch_add(1, Relaxed);
        step += 1;
    }
}

/// Lets a run's threads start together: each checks in and spins (yielding) until all have.
/// A `Barrier` wakes its sleepers one by one, which on two cores often lets the first thread
/// finish a short run before the last one starts. Reusable: each thread calls `wait` the same
/// number of times, and the `k`-th call of each returns once all have made their `k`-th.
#[derive(Clone)]
struct StartLine(Arc<(AtomicUsize, usize)>);

impl StartLine {
    fn new(threads: usize) -> Self {
        StartLine(Arc::new((AtomicUsize::new(0), threads)))
    }

    /// The `round`-th wait of the calling thread (0 for the first).
    fn wait_round(&self, round: usize) {
        let (arrived, threads) = &*self.0;
        arrived.fetch_add(1, Relaxed);
        while arrived.load(Relaxed) < *threads * (round + 1) {
            thread::yield_now();
        }
    }

    fn wait(&self) {
        self.wait_round(0);
    }
}

/// Sends `()` when dropped: tells the supervisor a thread ended, even by a panic.
struct Ended(mpsc::Sender<()>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// The outcome of one recorded run.
struct Run {
    history: History,
    /// The supervisor closed the queue because nothing completed for `STALL`.
    stalled: bool,
}

/// Runs the mixed threads of `shape` on `s`, supervises them, drains the queue and returns the
/// history.
fn mixed_run<S: Subject>(s: Arc<S>, shape: Shape, seed: u64) -> Run {
    let threads = shape.threads;
    let clock = Clock::new();
    let held_max = match s.capacity() {
        Some(c) => 1 + (c as i64 - 1) / threads as i64,
        None => 4,
    };
    let progress = Arc::new(AtomicU64::new(0));
    let start = StartLine::new(threads);
    let (ended_tx, ended_rx) = mpsc::channel();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (s, clock, progress) = (Arc::clone(&s), Arc::clone(&clock), Arc::clone(&progress));
            let start = start.clone();
            let ended = Ended(ended_tx.clone());
            let rng = Rng::new(seed.wrapping_mul(31).wrapping_add(t as u64));
            thread::spawn(move || {
                let _ended = ended;
                let mut log = ThreadLog::new(&clock, t);
                start.wait();
                mixed_thread(&*s, &mut log, rng, shape, held_max, &start, &progress);
                log
            })
        })
        .collect();
    drop(ended_tx);

    // Supervise: close the queue if a whole STALL passes without any operation completing.
    let mut stalled = false;
    let mut seen = progress.load(Relaxed);
    let mut ended = 0;
    while ended < threads {
        match ended_rx.recv_timeout(STALL) {
            Ok(()) => ended += 1,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = progress.load(Relaxed);
                if now == seen && !stalled {
                    stalled = true;
                    s.close();
                }
                seen = now;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let mut logs: Vec<ThreadLog> = handles.into_iter().map(join).collect();

    // Drain what is left (a stalled or broken run may leave values), recording every pop and
    // the final one that finds the queue empty: a value lost inside the queue shows up there.
    let mut main = ThreadLog::new(&clock, threads);
    while let Popped::Value(_) = record_pop(&mut main, || s.pop(Call::Try)) {}
    logs.push(main);
    Run {
        history: History::from_logs(logs),
        stalled,
    }
}

// ---------------------------------------------------------------------------------------------
// The producers/consumers driver
// ---------------------------------------------------------------------------------------------

/// A consumer's operations after which it only makes plain blocking receives (which end at
/// disconnection): bounds how many empty receives a run records.
fn consumer_budget(per_producer: usize, producers: usize) -> usize {
    2 * per_producer * producers
}

/// `producers` threads send `per_producer` values each (a mix of try, blocking and timed sends;
/// a failed send is retried with a fresh value by the next step) and drop their sender;
/// `consumers` threads receive until the channel is disconnected and drained.
fn channel_run(
    capacity: Option<usize>,
    producers: usize,
    consumers: usize,
    per_producer: usize,
    seed: u64,
) -> History {
    let (tx, rx) = match capacity {
        Some(c) => channel::bounded::<u64>(c),
        None => channel::unbounded::<u64>(),
    };
    let clock = Clock::new();
    let start = StartLine::new(producers + consumers);
    let mut handles = Vec::new();
    for t in 0..producers {
        let (tx, clock, start) = (tx.clone(), Arc::clone(&clock), start.clone());
        let mut rng = Rng::new(seed.wrapping_mul(31).wrapping_add(t as u64));
        handles.push(thread::spawn(move || {
            let mut log = ThreadLog::new(&clock, t);
            start.wait();
            let base = (t as u64 + 1) * VALUE_STRIDE;
            let mut next = 0;
            let mut sent = 0;
            while sent < per_producer {
                next += 1;
                let call = pick_call(&mut rng);
                let v = base + next;
                match record_push(&mut log, v, || send(&tx, call, v)) {
                    Pushed::Ok => sent += 1,
                    Pushed::Full => {}
                    Pushed::Closed => unreachable!("the receivers outlive the senders"),
                }
            }
            log
        }));
    }
    drop(tx);
    for c in 0..consumers {
        let t = producers + c;
        let (rx, clock, start) = (rx.clone(), Arc::clone(&clock), start.clone());
        let mut rng = Rng::new(seed.wrapping_mul(31).wrapping_add(t as u64));
        let budget = consumer_budget(per_producer, producers);
        handles.push(thread::spawn(move || {
            let mut log = ThreadLog::new(&clock, t);
            start.wait();
            for step in 0.. {
                let call = if step < budget {
                    pick_call(&mut rng)
                } else {
                    Call::Blocking
                };
                shuffle(&mut rng);
                if let Popped::Closed = record_pop(&mut log, || recv(&rx, call)) {
                    break;
                }
            }
            log
        }));
    }
    drop(rx);
    History::from_logs(handles.into_iter().map(join))
}

/// `spsc`: one producer pushes `count` values, one consumer pops until disconnected.
fn spsc_run(capacity: usize, count: usize, seed: u64) -> History {
    let (mut tx, mut rx) = spsc::channel::<u64>(capacity);
    let clock = Clock::new();
    let start = StartLine::new(2);
    let producer = {
        let (clock, start) = (Arc::clone(&clock), start.clone());
        let mut rng = Rng::new(seed);
        thread::spawn(move || {
            let mut log = ThreadLog::new(&clock, 0);
            start.wait();
            let mut next = 0;
            let mut sent = 0;
            while sent < count {
                next += 1;
                let v = VALUE_STRIDE + next;
                let call = pick_call(&mut rng);
                shuffle(&mut rng);
                let inv = log.invoke();
                let r = match call {
                    Call::Try => tx.try_push(v),
                    Call::Blocking => tx
                        .push(v)
                        .map_err(|e| spsc::TryPushError::Disconnected(e.0)),
                    Call::Timed => tx.push_timeout(v, TIMEOUT),
                };
                match r {
                    Ok(()) => {
                        log.enq(inv, v);
                        sent += 1;
                    }
                    Err(spsc::TryPushError::Full(_)) => log.full(inv),
                    Err(spsc::TryPushError::Disconnected(_)) => {
                        unreachable!("the consumer outlives the producer")
                    }
                }
            }
            log
        })
    };
    let consumer = {
        let (clock, start) = (Arc::clone(&clock), start.clone());
        let mut rng = Rng::new(seed ^ 0x5eed);
        let budget = 2 * count;
        thread::spawn(move || {
            let mut log = ThreadLog::new(&clock, 1);
            start.wait();
            for step in 0.. {
                let call = if step < budget {
                    pick_call(&mut rng)
                } else {
                    Call::Blocking
                };
                shuffle(&mut rng);
                let inv = log.invoke();
                let r = match call {
                    Call::Try => rx.try_pop(),
                    Call::Blocking => rx.pop().map_err(|_| spsc::TryPopError::Disconnected),
                    Call::Timed => rx.pop_timeout(TIMEOUT),
                };
                match r {
                    Ok(v) => log.deq(inv, Some(v)),
                    Err(spsc::TryPopError::Empty) => log.deq(inv, None),
                    Err(spsc::TryPopError::Disconnected) => {
                        log.deq(inv, None);
                        break;
                    }
                }
            }
            log
        })
    };
    History::from_logs([join(producer), join(consumer)])
}

// ---------------------------------------------------------------------------------------------
// Checking a recorded history
// ---------------------------------------------------------------------------------------------

/// The most operations a history may have to be cross-checked by Wing-Gong.
const SMALL: usize = 48;

/// What a flavour promises beyond FIFO order.
#[derive(Clone, Copy, Debug)]
enum Spec {
    /// A queue of exactly this capacity (`None`: unbounded): Full only while it holds
    /// `capacity` values.
    Bounded(Option<usize>),
    /// A queue of this capacity whose push may also report Full while pops that took their
    /// values have not returned yet (`ScqQueue`: such a pop gives its cell back to the free
    /// ring after reading it). The polynomial checker's `VFull` bound already counts a pop as
    /// inside until it returns; Wing-Gong, which would place such a pop before a later pop's
    /// return and so demand an exactly full queue, checks this history without its Fulls.
    FullUntilPopsReturn(usize),
    /// A rendezvous channel (capacity 0).
    Rendezvous,
}

impl Spec {
    fn of(capacity: Option<usize>, full_is_exact: bool) -> Spec {
        match capacity {
            Some(c) if !full_is_exact => Spec::FullUntilPopsReturn(c),
            c => Spec::Bounded(c),
        }
    }
}

/// Checks `h` with the polynomial checker and, if it is small, with Wing-Gong too; panics with
/// the violation, the run's description and (if small) the history.
fn verify(what: &str, h: &History, spec: Spec, stalled: bool) {
    let verdict = match spec {
        Spec::Bounded(c) => check(h, c),
        Spec::FullUntilPopsReturn(c) => check(h, Some(c)),
        Spec::Rendezvous => check_rendezvous(h),
    };
    let note = if stalled {
        " (the supervisor closed the queue after a stall)"
    } else {
        ""
    };
    let listing = || {
        if h.len() <= SMALL {
            format!("\nhistory:\n{h}")
        } else {
            String::new()
        }
    };
    if let Err(v) = verdict {
        panic!("{what}{note}: {v}{}", listing());
    }
    if h.len() <= SMALL {
        let (wg_history, wg_capacity) = match spec {
            Spec::Bounded(c) => (h.clone(), c),
            Spec::FullUntilPopsReturn(c) => (h.without_full(), Some(c)),
            // A rendezvous channel holds nothing between transfers; as a queue it is unbounded.
            Spec::Rendezvous => (h.without_full(), None),
        };
        match wing_gong(&wg_history, wg_capacity, WG_BUDGET) {
            Search::Linearizable(_) => {}
            other => panic!(
                "{what}{note}: not linearizable (Wing-Gong, {spec:?}): {other:?}, though the \
                 polynomial checker accepted it{}",
                listing()
            ),
        }
    }
}

/// Rounds of one shape: `big` long histories for the polynomial checker, `small` short ones
/// that Wing-Gong checks too.
struct Rounds {
    big: usize,
    small: usize,
}

const QUEUE_ROUNDS: Rounds = Rounds {
    big: scaled(12, 1),
    small: scaled(60, 2),
};
const BIG_STEPS: usize = scaled(400, 12);
const BURSTS: usize = scaled(100, 2);
const SMALL_STEPS: usize = scaled(6, 3);

/// The mixed driver on fresh queues from `make`, for each capacity in `capacities`.
fn mixed_suite<S: Subject>(
    name: &'static str,
    capacities: &[usize],
    full_is_exact: bool,
    make: fn(usize) -> S,
) {
    for &cap in capacities {
        for round in 0..QUEUE_ROUNDS.big + QUEUE_ROUNDS.small {
            let small = round >= QUEUE_ROUNDS.big;
            let shape = if small {
                Shape {
                    threads: 3,
                    bursts: 0,
                    steps: SMALL_STEPS,
                }
            } else {
                Shape {
                    threads: 4,
                    bursts: BURSTS,
                    steps: BIG_STEPS,
                }
            };
            let seed = (cap * 1_000 + round) as u64;
            let what = format!("{name}, capacity {cap}, round {round} (seed {seed})");
            let w = what.clone();
            with_watchdog(WATCHDOG_SECS, &what, move || {
                let s = Arc::new(make(cap));
                let capacity = s.capacity();
                let run = mixed_run(s, shape, seed);
                verify(
                    &w,
                    &run.history,
                    Spec::of(capacity, full_is_exact),
                    run.stalled,
                );
            });
        }
    }
}

/// The producers/consumers driver on a channel of `capacity`.
fn channel_suite(name: &'static str, capacity: Option<usize>) {
    let spec = if capacity == Some(0) {
        Spec::Rendezvous
    } else {
        Spec::Bounded(capacity)
    };
    for round in 0..QUEUE_ROUNDS.big + QUEUE_ROUNDS.small {
        let small = round >= QUEUE_ROUNDS.big;
        let (producers, consumers, per_producer) = if small {
            (2, 2, scaled(4, 2))
        } else {
            (2, 2, BIG_STEPS / 2)
        };
        let seed = 7_000 + round as u64;
        let what = format!("{name}, round {round} (seed {seed})");
        let w = what.clone();
        with_watchdog(WATCHDOG_SECS, &what, move || {
            let h = channel_run(capacity, producers, consumers, per_producer, seed);
            verify(&w, &h, spec, false);
        });
    }
}

// ---------------------------------------------------------------------------------------------
// The flavours
// ---------------------------------------------------------------------------------------------

/// Capacities small enough that threads contend for room; 3 is not a power of two.
const CAPACITIES: &[usize] = &[1, 2, 3, 4];

#[test]
fn vyukov_histories_are_linearizable() {
    mixed_suite("VyukovQueue", CAPACITIES, true, |c| {
        Queue(VyukovQueue::new(c))
    });
}

/// `ScqQueue` reports Full also while a pop that took a value has not yet given its cell back
/// to the free ring. With two pops in flight, that is not linearizable against a queue of exact
/// capacity: a later pop's return fixes the earlier pop's place, and a Full after it finds the
/// queue one value short. Wing-Gong found this here (capacity 2): pop A takes value 1 and
/// stalls; 2 is pushed, a push reports Full (fine: 1 and 2 inside), pop B returns 2 (so A's
/// pop of 1 came first), 4 is pushed, and a push reports Full with only 4 inside. So SCQ is
/// checked with `Spec::FullUntilPopsReturn`: FIFO exactly, and Full against a capacity that
/// counts unreturned pops.
#[test]
fn scq_histories_are_linearizable() {
    mixed_suite("ScqQueue", CAPACITIES, false, |c| Queue(ScqQueue::new(c)));
}

#[test]
fn mutex_queue_histories_are_linearizable() {
    mixed_suite("MutexQueue", CAPACITIES, true, |c| {
        Queue(MutexQueue::new(c))
    });
}

/// Channels through the mixed driver: every thread sends and receives on one handle pair.
fn chan(capacity: Option<usize>) -> Chan {
    let (tx, rx) = match capacity {
        Some(c) => channel::bounded(c),
        None => channel::unbounded(),
    };
    Chan { tx, rx }
}

#[test]
fn channel_bounded_1_histories_are_linearizable() {
    mixed_suite("channel::bounded(1), mixed", &[1], true, |c| chan(Some(c)));
    channel_suite("channel::bounded(1), producers/consumers", Some(1));
}

#[test]
fn channel_bounded_4_histories_are_linearizable() {
    mixed_suite("channel::bounded(4), mixed", &[4], true, |c| chan(Some(c)));
    channel_suite("channel::bounded(4), producers/consumers", Some(4));
}

/// A rendezvous channel: a send completes only once a receiver took its value. Checked: the
/// history is a linearizable FIFO queue history, every completed send was received, and each
/// send overlaps the receive that took its value (which is all a capacity-0 linearization
/// needs: an instant inside both for the transfer). Only producers/consumers: a thread that
/// both sends and receives could block in a send while every other thread does too.
#[test]
fn channel_rendezvous_histories_are_linearizable() {
    channel_suite("channel::bounded(0)", Some(0));
}

#[test]
fn channel_unbounded_histories_are_linearizable() {
    mixed_suite("channel::unbounded(), mixed", &[0], true, |_| chan(None));
    channel_suite("channel::unbounded(), producers/consumers", None);
}

#[test]
fn spsc_histories_are_linearizable() {
    for &cap in CAPACITIES {
        for round in 0..QUEUE_ROUNDS.big + QUEUE_ROUNDS.small {
            let small = round >= QUEUE_ROUNDS.big;
            let count = if small { scaled(8, 3) } else { BIG_STEPS };
            let seed = (cap * 1_000 + round) as u64;
            let what = format!("spsc, capacity {cap}, round {round} (seed {seed})");
            let w = what.clone();
            with_watchdog(WATCHDOG_SECS, &what, move || {
                let h = spsc_run(cap, count, seed);
                verify(&w, &h, Spec::Bounded(Some(cap)), false);
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The checkers themselves, on hand-made histories
// ---------------------------------------------------------------------------------------------

mod checker {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    use std::collections::VecDeque;

    fn enq(thread: usize, v: u64, inv: u64, res: u64) -> Op {
        Op::new(thread, Kind::Enq(v), inv, res)
    }
    fn deq(thread: usize, v: u64, inv: u64, res: u64) -> Op {
        Op::new(thread, Kind::Deq(Some(v)), inv, res)
    }
    fn empty(thread: usize, inv: u64, res: u64) -> Op {
        Op::new(thread, Kind::Deq(None), inv, res)
    }
    fn full(thread: usize, inv: u64, res: u64) -> Op {
        Op::new(thread, Kind::Full, inv, res)
    }

    /// Both checkers reject `ops`; the polynomial one names `pattern`.
    fn rejected(ops: Vec<Op>, capacity: Option<usize>, pattern: &str) -> String {
        let h = History::new(ops);
        let v = check(&h, capacity).expect_err("the polynomial checker must reject");
        assert_eq!(v.pattern(), pattern, "wrong pattern: {v}");
        let msg = v.to_string();
        assert!(msg.starts_with("not linearizable"), "{msg}");
        let wg = wing_gong(&h, capacity, WG_BUDGET);
        assert!(
            matches!(wg, Search::NotLinearizable { .. }),
            "Wing-Gong must reject too, got {wg:?} for\n{h}"
        );
        msg
    }

    /// Both checkers accept `ops`.
    fn accepted(ops: Vec<Op>, capacity: Option<usize>) {
        let h = History::new(ops);
        if let Err(v) = check(&h, capacity) {
            panic!("the polynomial checker must accept: {v}\n{h}");
        }
        let wg = wing_gong(&h, capacity, WG_BUDGET);
        assert!(
            wg.is_linearizable(),
            "Wing-Gong must accept, got {wg:?}\n{h}"
        );
    }

    #[test]
    fn checker_rejects_a_value_never_enqueued() {
        let msg = rejected(vec![enq(0, 1, 1, 2), deq(1, 7, 3, 4)], None, "VFresh");
        assert!(msg.contains("deq -> 7 [thread 1, 3..4]"), "{msg}");
    }

    #[test]
    fn checker_rejects_a_dequeue_before_its_enqueue() {
        let msg = rejected(vec![deq(1, 1, 1, 2), enq(0, 1, 3, 4)], None, "VFresh");
        assert!(msg.contains("returned before enq(1)"), "{msg}");
    }

    #[test]
    fn checker_rejects_a_value_dequeued_twice() {
        rejected(
            vec![enq(0, 1, 1, 2), deq(1, 1, 3, 4), deq(2, 1, 5, 6)],
            None,
            "VRepet",
        );
        // Even when the two dequeues overlap each other and the enqueue.
        rejected(
            vec![enq(0, 1, 1, 6), deq(1, 1, 2, 5), deq(2, 1, 3, 4)],
            None,
            "VRepet",
        );
    }

    #[test]
    fn checker_rejects_fifo_order_reversed() {
        let msg = rejected(
            vec![
                enq(0, 1, 1, 2),
                enq(0, 2, 3, 4),
                deq(1, 2, 5, 6),
                deq(1, 1, 7, 8),
            ],
            None,
            "VOrd",
        );
        assert!(msg.contains("FIFO order reversed"), "{msg}");
        // Through overlapping operations: enq(1) and enq(2) are ordered, their dequeues are
        // each concurrent with something else but still ordered the wrong way.
        rejected(
            vec![
                enq(0, 1, 1, 3),
                enq(1, 3, 2, 9),
                enq(0, 2, 4, 5),
                deq(2, 2, 6, 7),
                deq(2, 1, 8, 10),
                deq(1, 3, 11, 12),
            ],
            None,
            "VOrd",
        );
    }

    #[test]
    fn checker_rejects_a_later_value_taken_while_an_earlier_stays() {
        let msg = rejected(
            vec![enq(0, 1, 1, 2), enq(0, 2, 3, 4), deq(1, 2, 5, 6)],
            None,
            "VOrd",
        );
        assert!(msg.contains("never dequeued"), "{msg}");
    }

    #[test]
    fn checker_rejects_empty_while_a_value_is_inside() {
        // enq(1) returned before the empty pop began; deq(1) began after it returned.
        let msg = rejected(
            vec![enq(0, 1, 1, 2), empty(1, 3, 4), deq(2, 1, 5, 6)],
            None,
            "VWit",
        );
        assert!(msg.contains("deq -> empty [thread 1, 3..4]"), "{msg}");
        // ... or never dequeued at all (a value lost inside the queue).
        rejected(vec![enq(0, 1, 1, 2), empty(1, 3, 4)], None, "VWit");
    }

    #[test]
    fn checker_rejects_empty_covered_by_a_chain_of_values() {
        // No single value is inside throughout the empty pop [3, 10]: value 1 is inside from 2
        // until deq(1) begins at 6; value 2 from 5 until deq(2) begins at 11. But before 6 the
        // queue holds 1, and from 5 on it holds 2 (enqueued before deq(1) could take 1, and
        // taken only after the empty pop returned).
        let msg = rejected(
            vec![
                enq(0, 1, 1, 2),
                empty(1, 3, 10),
                enq(0, 2, 4, 5),
                deq(2, 1, 6, 7),
                deq(2, 2, 11, 12),
            ],
            None,
            "VWit",
        );
        assert!(
            msg.contains("until deq -> 1") && msg.contains("until deq -> 2"),
            "the chain names both values: {msg}"
        );
    }

    #[test]
    fn checker_rejects_a_spurious_full() {
        // One value in a queue of two, and a push reports Full.
        let msg = rejected(
            vec![enq(0, 1, 1, 2), full(1, 3, 4), deq(2, 1, 5, 6)],
            Some(2),
            "VFull",
        );
        assert!(msg.contains("at most 1"), "{msg}");
        // Full on an empty queue.
        rejected(vec![full(0, 1, 2)], Some(1), "VFull");
    }

    #[test]
    fn checker_rejects_an_overflow() {
        rejected(
            vec![
                enq(0, 1, 1, 2),
                enq(0, 2, 3, 4),
                deq(1, 1, 5, 6),
                deq(1, 2, 7, 8),
            ],
            Some(1),
            "VOverflow",
        );
    }

    #[test]
    fn checker_rejects_broken_rendezvous() {
        // The send returned before any receiver arrived.
        let h = History::new(vec![enq(0, 1, 1, 2), deq(1, 1, 3, 4)]);
        assert!(check(&h, None).is_ok(), "a fine queue history");
        let v = check_rendezvous(&h).expect_err("but not a rendezvous");
        assert_eq!(v.pattern(), "rendezvous", "{v}");
        // A send that completed and was never received.
        let h = History::new(vec![enq(0, 1, 1, 2)]);
        let v = check_rendezvous(&h).expect_err("a send completes only once taken");
        assert!(v.to_string().contains("never received"), "{v}");
        // Overlapping send and receive: fine.
        let h = History::new(vec![enq(0, 1, 1, 4), deq(1, 1, 2, 3), empty(1, 5, 6)]);
        check_rendezvous(&h).expect("a rendezvous");
    }

    #[test]
    fn checker_accepts_tricky_linearizable_histories() {
        // Overlapping enqueues may be dequeued in either order.
        accepted(
            vec![
                enq(0, 1, 1, 4),
                enq(1, 2, 2, 3),
                deq(2, 2, 5, 6),
                deq(2, 1, 7, 8),
            ],
            None,
        );
        // A dequeue may return its value while the enqueue is still running.
        accepted(vec![enq(0, 1, 1, 4), deq(1, 1, 2, 3)], None);
        // An empty dequeue may overlap the enqueue (placed before it)...
        accepted(vec![enq(0, 1, 1, 4), empty(1, 2, 3), deq(2, 1, 5, 6)], None);
        // ... or the dequeue that takes the only value (placed after it).
        accepted(vec![enq(0, 1, 1, 2), empty(1, 3, 6), deq(2, 1, 4, 5)], None);
        // The chain of the VWit test, broken: deq(2) begins before the empty pop returns.
        accepted(
            vec![
                enq(0, 1, 1, 2),
                empty(1, 3, 10),
                enq(0, 2, 4, 5),
                deq(2, 1, 6, 7),
                deq(2, 2, 8, 11),
            ],
            None,
        );
        // A value never dequeued is fine if it was enqueued after the last empty dequeue
        // could have happened, and if nothing enqueued after it was dequeued.
        accepted(
            vec![
                empty(1, 1, 3),
                enq(0, 1, 2, 4),
                enq(0, 2, 5, 6),
                deq(1, 1, 7, 8),
            ],
            None,
        );
        // Full while a slot may have been taken: the queue of one is full until deq(1).
        accepted(
            vec![enq(0, 1, 1, 2), full(1, 3, 6), deq(2, 1, 4, 5)],
            Some(1),
        );
        // A push that overlaps the pop which made room.
        accepted(
            vec![
                enq(0, 1, 1, 2),
                enq(1, 2, 3, 6),
                deq(2, 1, 4, 5),
                deq(2, 2, 7, 8),
            ],
            Some(1),
        );
        // Two empty dequeues around a value that overlaps both.
        accepted(
            vec![
                empty(1, 1, 4),
                enq(0, 1, 2, 7),
                empty(2, 3, 8),
                deq(1, 1, 5, 9),
            ],
            None,
        );
    }

    // -----------------------------------------------------------------------------------------
    // The two checkers agree on random histories
    // -----------------------------------------------------------------------------------------

    /// One step of a sequential run: what, and how far its interval reaches to each side of
    /// its linearization point.
    #[derive(Clone, Debug)]
    struct Step {
        enqueue: bool,
        left: u64,
        right: u64,
    }

    /// A change that may break a linearizable history.
    #[derive(Clone, Debug)]
    enum Mutation {
        SwapDequeued(usize, usize),
        DequeuedToEmpty(usize),
        EmptyToDequeued(usize, usize),
        Remove(usize),
        Shift(usize, i64),
        FlipFull(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        (any::<bool>(), 0u64..5, 0u64..5).prop_map(|(enqueue, left, right)| Step {
            enqueue,
            left,
            right,
        })
    }

    fn mutation() -> impl Strategy<Value = Mutation> {
        prop_oneof![
            (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapDequeued(a, b)),
            any::<usize>().prop_map(Mutation::DequeuedToEmpty),
            (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::EmptyToDequeued(a, b)),
            any::<usize>().prop_map(Mutation::Remove),
            (any::<usize>(), -300i64..300).prop_map(|(a, d)| Mutation::Shift(a, d)),
            any::<usize>().prop_map(Mutation::FlipFull),
        ]
    }

    /// Operations with raw times (possibly tied) to be ranked into tickets.
    type Raw = Vec<(Kind, i64, i64)>;

    /// A sequential run of a queue of `capacity` (linearization point of step i at 100 i),
    /// each operation widened around its point by the step's jitter: linearizable by
    /// construction.
    fn sequential(capacity: Option<usize>, steps: &[Step]) -> Raw {
        let mut queue = VecDeque::new();
        let mut next = 0;
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let kind = if s.enqueue {
                    if capacity.is_some_and(|c| queue.len() >= c) {
                        Kind::Full
                    } else {
                        next += 1;
                        queue.push_back(next);
                        Kind::Enq(next)
                    }
                } else {
                    Kind::Deq(queue.pop_front())
                };
                let point = 100 * (i as i64 + 1);
                // 37 k + 1 is never a multiple of 100 for k < 5, so no end lands on a point.
                let (inv, res) = (
                    point - (37 * s.left as i64 + 1),
                    point + (37 * s.right as i64 + 1),
                );
                (kind, inv, res)
            })
            .collect()
    }

    fn mutate(raw: &mut Raw, m: &Mutation) {
        let dequeued: Vec<usize> = (0..raw.len())
            .filter(|&i| matches!(raw[i].0, Kind::Deq(Some(_))))
            .collect();
        let empties: Vec<usize> = (0..raw.len())
            .filter(|&i| raw[i].0 == Kind::Deq(None))
            .collect();
        let values: Vec<u64> = raw
            .iter()
            .filter_map(|r| match r.0 {
                Kind::Enq(v) => Some(v),
                _ => None,
            })
            .collect();
        match *m {
            Mutation::SwapDequeued(a, b) if !dequeued.is_empty() => {
                let (a, b) = (dequeued[a % dequeued.len()], dequeued[b % dequeued.len()]);
                let k = raw[a].0;
                raw[a].0 = raw[b].0;
                raw[b].0 = k;
            }
            Mutation::DequeuedToEmpty(a) if !dequeued.is_empty() => {
                raw[dequeued[a % dequeued.len()]].0 = Kind::Deq(None);
            }
            Mutation::EmptyToDequeued(a, b) if !empties.is_empty() => {
                // A value that was enqueued (maybe already dequeued), or one that never was.
                let v = if values.is_empty() {
                    999
                } else {
                    values[b % values.len()]
                };
                raw[empties[a % empties.len()]].0 = Kind::Deq(Some(v));
            }
            Mutation::Remove(a) if !raw.is_empty() => {
                raw.remove(a % raw.len());
            }
            Mutation::Shift(a, d) if !raw.is_empty() => {
                let i = a % raw.len();
                raw[i].1 += d;
                raw[i].2 += d;
            }
            Mutation::FlipFull(a) if !raw.is_empty() => {
                let i = a % raw.len();
                raw[i].0 = match raw[i].0 {
                    Kind::Enq(_) => Kind::Full,
                    Kind::Full => Kind::Enq(1_000 + i as u64),
                    other => other,
                };
            }
            _ => {}
        }
    }

    /// Ranks the raw times into distinct tickets (ties: invocations first, so tied operations
    /// overlap), three threads in turn for the messages.
    fn history(raw: &Raw) -> History {
        let mut ends: Vec<(i64, bool, usize)> = raw
            .iter()
            .enumerate()
            .flat_map(|(i, &(_, inv, res))| [(inv, false, i), (res, true, i)])
            .collect();
        ends.sort();
        let mut tickets = vec![(0, 0); raw.len()];
        for (ticket, &(_, is_res, i)) in ends.iter().enumerate() {
            if is_res {
                tickets[i].1 = ticket as u64;
            } else {
                tickets[i].0 = ticket as u64;
            }
        }
        History::new(
            raw.iter()
                .zip(tickets)
                .enumerate()
                .map(|(i, (&(kind, _, _), (inv, res)))| Op::new(i % 3, kind, inv, res))
                .collect(),
        )
    }

    fn wg(h: &History, capacity: Option<usize>) -> Result<bool, TestCaseError> {
        match wing_gong(h, capacity, WG_BUDGET) {
            Search::Linearizable(_) => Ok(true),
            Search::NotLinearizable { .. } => Ok(false),
            Search::GaveUp { configurations } => Err(TestCaseError::fail(format!(
                "Wing-Gong gave up after {configurations} configurations on\n{h}"
            ))),
        }
    }

    fn run(cases: u32, strategy: impl Strategy<Value = (Option<usize>, Raw)>) {
        let config = Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&strategy, |(capacity, raw)| {
            // Removing an operation can leave an empty history; shifting can invert one.
            if raw.iter().any(|&(_, inv, res)| inv >= res) {
                return Ok(());
            }
            let h = history(&raw);
            // The FIFO part: exact agreement.
            let unbounded = h.without_full();
            let poly = check(&unbounded, None);
            let search = wg(&unbounded, None)?;
            prop_assert_eq!(
                poly.is_ok(),
                search,
                "the checkers disagree (unbounded): polynomial {:?}, Wing-Gong {}\n{}",
                poly.err().map(|v| v.to_string()),
                search,
                unbounded
            );
            // The capacity patterns are sound: whatever they reject, the exact search rejects.
            if let Some(c) = capacity {
                let poly = check(&h, Some(c));
                let search = wg(&h, Some(c))?;
                prop_assert!(
                    poly.is_ok() || !search,
                    "the polynomial checker rejects what Wing-Gong accepts (capacity {}): {}\n{}",
                    c,
                    poly.err().map(|v| v.to_string()).unwrap_or_default(),
                    h
                );
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }

    fn capacity() -> impl Strategy<Value = Option<usize>> {
        prop_oneof![Just(None), (1usize..4).prop_map(Some)]
    }

    const CASES: u32 = if cfg!(miri) { 8 } else { 1_500 };

    /// Sequential runs with jitter are linearizable: both checkers must accept them.
    #[test]
    fn checkers_accept_jittered_sequential_runs() {
        let config = Config {
            cases: CASES,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let strategy = (capacity(), prop::collection::vec(step(), 0..16));
        let result = runner.run(&strategy, |(capacity, steps)| {
            let h = history(&sequential(capacity, &steps));
            if let Err(v) = check(&h, capacity) {
                return Err(TestCaseError::fail(format!(
                    "a linearizable history rejected: {v}\n{h}"
                )));
            }
            prop_assert!(wg(&h, capacity)?, "Wing-Gong rejects\n{}", h);
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }

    /// Mutated sequential runs (some linearizable, most not): the checkers agree.
    #[test]
    fn checkers_agree_on_mutated_runs() {
        let strategy = (
            capacity(),
            prop::collection::vec(step(), 1..16),
            prop::collection::vec(mutation(), 1..3),
        )
            .prop_map(|(capacity, steps, mutations)| {
                let mut raw = sequential(capacity, &steps);
                for m in &mutations {
                    mutate(&mut raw, m);
                }
                (capacity, raw)
            });
        run(CASES, strategy);
    }

    /// Operations with random intervals and results (distinct enqueued values): mostly not
    /// linearizable, and the checkers agree.
    #[test]
    fn checkers_agree_on_random_histories() {
        let op = (0u8..4, 1u64..4, 0i64..600, 1i64..200);
        let strategy = (capacity(), prop::collection::vec(op, 0..12)).prop_map(|(c, ops)| {
            let raw = ops
                .iter()
                .enumerate()
                .map(|(i, &(kind, value, start, length))| {
                    let kind = match kind {
                        0 | 1 => Kind::Enq(i as u64 + 1),
                        2 => Kind::Deq(if value == 3 { None } else { Some(value) }),
                        _ => Kind::Full,
                    };
                    (kind, start, start + length)
                })
                .collect();
            (c, raw)
        });
        run(CASES, strategy);
    }
}
