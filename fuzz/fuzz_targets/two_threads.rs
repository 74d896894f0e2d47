//! Two threads, each running a sequence of operations chosen by the input, on one primitive
//! chosen by the input (a queue, a channel flavour, the SPSC ring, or the deque), with a small
//! capacity (1..=8). No operation waits without bound: a `try_` operation that fails retries a
//! few times (yielding in between) and gives up, and the waiting forms take a timeout of at most
//! 63 µs; after both threads are joined the main thread drains what is left.
//!
//! Checks:
//! - **exactly once**: every value whose push returned `Ok` is popped by one of the threads,
//!   drained by the main thread, or dropped by the primitive, exactly once; nothing else comes
//!   out; a failed push hands back the very value it was given;
//! - **per-producer FIFO** (queues, channels, ring): each consumer (each thread, and the final
//!   drain) gets each producer's values in the order they were pushed, and the drain gets only
//!   values pushed after every one the threads popped;
//! - **close**: after a thread closes, its own pushes fail; once any pop said closed-and-drained,
//!   the thread's own later pushes fail and the drain finds nothing;
//! - **deque**: the thief's claims (steals, and each batch in order) are in push order.
#![no_main]

use arbitrary::Arbitrary;
use berth::channel::{
    self, Receiver, RecvTimeoutError, SendTimeoutError, Sender, TryRecvError, TrySendError,
};
use berth::deque::{Steal, Worker};
use berth::queue::{PopTimeoutError, PushTimeoutError, TryPopError, TryPushError};
use berth::{spsc, BoundedQueue, MutexQueue, VyukovQueue};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

/// Ids of the values the primitive dropped (the two threads share it).
static DROPPED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// A value whose drop by the primitive is recorded; the harness takes values back with
/// `into_id`, which records nothing.
struct Val(u64);

impl Val {
    fn into_id(self) -> u64 {
        let id = self.0;
        std::mem::forget(self);
        id
    }
}

impl Drop for Val {
    fn drop(&mut self) {
        DROPPED.lock().unwrap().push(self.0);
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Prim {
    MutexQueue,
    VyukovQueue,
    ScqQueue,
    Bounded,
    Unbounded,
    Rendezvous,
    Spsc,
    Deque,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Op {
    /// A `try_` push, retried a few times while full. (Deque thief: `steal_batch_and_pop`.)
    Push,
    /// A push with a timeout. (Deque thief: `steal_batch_and_pop`.)
    PushWait(u8),
    /// A `try_` pop, retried a few times while empty. (Deque thief: `steal`.)
    Pop,
    /// A pop with a timeout. (Deque thief: `steal`.)
    PopWait(u8),
    Yield,
    /// Queue/channel: `close`. Ring: drop this thread's side. Deque: nothing.
    Close,
    /// 1..=16 `Push`es in a row (short inputs still make traffic).
    Pushes(u8),
    /// 1..=16 `Pop`s in a row.
    Pops(u8),
}

/// One step of a thread: an `Op` with the bursts expanded.
#[derive(Debug, Clone, Copy)]
enum Step {
    Push,
    PushWait(u8),
    Pop,
    PopWait(u8),
    Yield,
    Close,
}

/// At most this many steps per thread.
const MAX_STEPS: usize = 256;

fn expand(ops: &[Op]) -> Vec<Step> {
    let mut steps = Vec::new();
    for op in ops {
        let (step, n) = match *op {
            Op::Push => (Step::Push, 1),
            Op::PushWait(us) => (Step::PushWait(us), 1),
            Op::Pop => (Step::Pop, 1),
            Op::PopWait(us) => (Step::PopWait(us), 1),
            Op::Yield => (Step::Yield, 1),
            Op::Close => (Step::Close, 1),
            Op::Pushes(n) => (Step::Push, usize::from(n % 16) + 1),
            Op::Pops(n) => (Step::Pop, usize::from(n % 16) + 1),
        };
        steps.extend(std::iter::repeat_n(step, n));
        if steps.len() >= MAX_STEPS {
            break;
        }
    }
    steps.truncate(MAX_STEPS);
    steps
}

/// The expanded input.
struct Plan {
    a: Vec<Step>,
    b: Vec<Step>,
    /// Both threads wait here first, so that their steps overlap.
    start: Barrier,
}

#[derive(Arbitrary, Debug)]
struct Input {
    prim: Prim,
    capacity: u8,
    retries: u8,
    a: Vec<Op>,
    b: Vec<Op>,
}

fn short_timeout(us: u8) -> Duration {
    Duration::from_micros(u64::from(us % 64))
}

/// What one thread did.
#[derive(Default, Debug)]
struct Log {
    /// Values whose push returned `Ok`.
    pushed: Vec<u64>,
    /// Values this thread popped, in order.
    popped: Vec<u64>,
    /// A pop said closed (or disconnected) and drained.
    saw_drained_closed: bool,
}

/// Why a push or pop did not happen.
#[derive(PartialEq, Eq, Debug, Clone, Copy)]
enum Fail {
    /// Full, empty, or timed out: retrying may help.
    Busy,
    /// Closed or disconnected.
    Closed,
}

/// The operations of a multi-producer multi-consumer primitive, one handle per thread.
trait Mpmc: Send {
    fn try_push(&self, v: Val) -> Result<(), (Val, Fail)>;
    fn push_wait(&self, v: Val, t: Duration) -> Result<(), (Val, Fail)>;
    fn try_pop(&self) -> Result<Val, Fail>;
    fn pop_wait(&self, t: Duration) -> Result<Val, Fail>;
    fn close(&self);
    /// The number of values inside (a snapshot), to check it never exceeds the capacity.
    fn len(&self) -> usize;
}

struct Queue<Q>(Arc<Q>);

impl<Q: BoundedQueue<Val> + Send + Sync> Mpmc for Queue<Q> {
    fn try_push(&self, v: Val) -> Result<(), (Val, Fail)> {
        self.0.try_push(v).map_err(|e| match e {
            TryPushError::Full(v) => (v, Fail::Busy),
            TryPushError::Closed(v) => (v, Fail::Closed),
        })
    }
    fn push_wait(&self, v: Val, t: Duration) -> Result<(), (Val, Fail)> {
        self.0.push_timeout(v, t).map_err(|e| match e {
            PushTimeoutError::Timeout(v) => (v, Fail::Busy),
            PushTimeoutError::Closed(v) => (v, Fail::Closed),
        })
    }
    fn try_pop(&self) -> Result<Val, Fail> {
        self.0.try_pop().map_err(|e| match e {
            TryPopError::Empty => Fail::Busy,
            TryPopError::Closed => Fail::Closed,
        })
    }
    fn pop_wait(&self, t: Duration) -> Result<Val, Fail> {
        self.0.pop_timeout(t).map_err(|e| match e {
            PopTimeoutError::Timeout => Fail::Busy,
            PopTimeoutError::Closed => Fail::Closed,
        })
    }
    fn close(&self) {
        self.0.close();
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

struct Chan(Sender<Val>, Receiver<Val>);

impl Mpmc for Chan {
    fn try_push(&self, v: Val) -> Result<(), (Val, Fail)> {
        self.0.try_send(v).map_err(|e| match e {
            TrySendError::Full(v) => (v, Fail::Busy),
            TrySendError::Disconnected(v) => (v, Fail::Closed),
        })
    }
    fn push_wait(&self, v: Val, t: Duration) -> Result<(), (Val, Fail)> {
        self.0.send_timeout(v, t).map_err(|e| match e {
            SendTimeoutError::Timeout(v) => (v, Fail::Busy),
            SendTimeoutError::Disconnected(v) => (v, Fail::Closed),
        })
    }
    fn try_pop(&self) -> Result<Val, Fail> {
        self.1.try_recv().map_err(|e| match e {
            TryRecvError::Empty => Fail::Busy,
            TryRecvError::Disconnected => Fail::Closed,
        })
    }
    fn pop_wait(&self, t: Duration) -> Result<Val, Fail> {
        self.1.recv_timeout(t).map_err(|e| match e {
            RecvTimeoutError::Timeout => Fail::Busy,
            RecvTimeoutError::Disconnected => Fail::Closed,
        })
    }
    fn close(&self) {
        self.0.close();
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// Pushes `id`, retrying a `Busy` failure `retries` times; checks a failure hands `id` back.
fn push_retrying(
    retries: u32,
    id: u64,
    mut attempt: impl FnMut(Val) -> Result<(), (Val, Fail)>,
) -> Result<(), Fail> {
    let mut v = Val(id);
    for i in 0..=retries {
        match attempt(v) {
            Ok(()) => return Ok(()),
            Err((back, why)) => {
                let back = back.into_id();
                assert_eq!(back, id, "a failed push handed back another value");
                if why == Fail::Closed || i == retries {
                    return Err(why);
                }
                thread::yield_now();
                v = Val(id);
            }
        }
    }
    unreachable!()
}

fn pop_retrying<E>(
    retries: u32,
    mut attempt: impl FnMut() -> Result<Val, E>,
    busy: impl Fn(&E) -> bool,
) -> Result<u64, E> {
    let mut i = 0;
    loop {
        match attempt() {
            Ok(v) => return Ok(v.into_id()),
            Err(e) if busy(&e) && i < retries => {
                i += 1;
                thread::yield_now();
            }
            Err(e) => return Err(e),
        }
    }
}

fn run_mpmc<M: Mpmc>(
    h: M,
    me: u64,
    ops: &[Step],
    start: &Barrier,
    retries: u32,
    cap: Option<usize>,
) -> Log {
    start.wait();
    let mut log = Log::default();
    let mut seq = 0u64;
    let mut closed_by_me = false;
    for op in ops {
        match *op {
            Step::Push | Step::PushWait(_) => {
                seq += 1;
                let id = (me << 32) | seq;
                let r = match *op {
                    Step::Push => push_retrying(retries, id, |v| h.try_push(v)),
                    Step::PushWait(us) => {
                        push_retrying(0, id, |v| h.push_wait(v, short_timeout(us)))
                    }
                    _ => unreachable!(),
                };
                match r {
                    Ok(()) => {
                        assert!(!closed_by_me, "a push succeeded after this thread closed");
                        assert!(
                            !log.saw_drained_closed,
                            "a push succeeded after this thread's pop said closed and drained"
                        );
                        log.pushed.push(id);
                    }
                    Err(Fail::Busy) => assert!(!closed_by_me, "a push after close said Full"),
                    Err(Fail::Closed) => {}
                }
            }
            Step::Pop | Step::PopWait(_) => {
                let r = match *op {
                    Step::Pop => pop_retrying(retries, || h.try_pop(), |e| *e == Fail::Busy),
                    Step::PopWait(us) => h.pop_wait(short_timeout(us)).map(Val::into_id),
                    _ => unreachable!(),
                };
                match r {
                    Ok(id) => {
                        assert!(
                            !log.saw_drained_closed,
                            "a pop got {id:#x} after closed-and-drained"
                        );
                        log.popped.push(id);
                    }
                    Err(Fail::Closed) => log.saw_drained_closed = true,
                    Err(Fail::Busy) => assert!(
                        !log.saw_drained_closed,
                        "a pop said empty (not closed) after closed-and-drained"
                    ),
                }
            }
            Step::Yield => thread::yield_now(),
            Step::Close => {
                h.close();
                closed_by_me = true;
            }
        }
        if let Some(cap) = cap {
            assert!(h.len() <= cap, "len {} above capacity {cap}", h.len());
        }
    }
    log
}

/// The final drain on the main thread of an MPMC primitive.
fn drain_mpmc<M: Mpmc>(h: &M) -> (Vec<u64>, bool) {
    let mut out = Vec::new();
    loop {
        match h.try_pop() {
            Ok(v) => out.push(v.into_id()),
            Err(Fail::Busy) => return (out, false),
            Err(Fail::Closed) => return (out, true),
        }
    }
}

fn two_mpmc<M: Mpmc>(
    make: impl Fn() -> M,
    plan: &Plan,
    retries: u32,
    cap: Option<usize>,
) -> Outcome {
    let (ha, hb, main) = (make(), make(), make());
    let (la, lb) = thread::scope(|s| {
        let a = s.spawn(|| run_mpmc(ha, 1, &plan.a, &plan.start, retries, cap));
        let b = s.spawn(|| run_mpmc(hb, 2, &plan.b, &plan.start, retries, cap));
        (a.join().unwrap(), b.join().unwrap())
    });
    let (drained, _) = drain_mpmc(&main);
    drop(main);
    Outcome {
        logs: vec![la, lb],
        drained,
        fifo: true,
    }
}

/// What the threads and the drain saw, for the final checks.
struct Outcome {
    logs: Vec<Log>,
    drained: Vec<u64>,
    /// Check per-producer FIFO for each consumer.
    fifo: bool,
}

fn run_spsc(plan: &Plan, cap: usize, retries: u32) -> Outcome {
    let (tx, rx) = spsc::channel::<Val>(cap);
    let (la, (lb, rx)) = thread::scope(|s| {
        let a = s.spawn(move || {
            let mut tx = Some(tx);
            let mut log = Log::default();
            let mut seq = 0u64;
            plan.start.wait();
            for op in &plan.a {
                match *op {
                    Step::Push | Step::PushWait(_) => {
                        let Some(p) = tx.as_mut() else { continue };
                        seq += 1;
                        let id = (1 << 32) | seq;
                        let r = match *op {
                            Step::Push => push_retrying(retries, id, |v| {
                                p.try_push(v).map_err(|e| match e {
                                    spsc::TryPushError::Full(v) => (v, Fail::Busy),
                                    spsc::TryPushError::Disconnected(v) => (v, Fail::Closed),
                                })
                            }),
                            Step::PushWait(us) => push_retrying(0, id, |v| {
                                p.push_timeout(v, short_timeout(us)).map_err(|e| match e {
                                    spsc::TryPushError::Full(v) => (v, Fail::Busy),
                                    spsc::TryPushError::Disconnected(v) => (v, Fail::Closed),
                                })
                            }),
                            _ => unreachable!(),
                        };
                        if r.is_ok() {
                            log.pushed.push(id);
                        }
                        assert!(p.len() <= cap, "Producer::len {} above {cap}", p.len());
                    }
                    Step::Close => tx = None,
                    Step::Yield | Step::Pop | Step::PopWait(_) => thread::yield_now(),
                }
            }
            log
        });
        let b = s.spawn(move || {
            let mut rx = Some(rx);
            let mut log = Log::default();
            plan.start.wait();
            for op in &plan.b {
                match *op {
                    Step::Pop | Step::PopWait(_) => {
                        let Some(c) = rx.as_mut() else { continue };
                        let r = match *op {
                            Step::Pop => pop_retrying(
                                retries,
                                || c.try_pop(),
                                |e| *e == spsc::TryPopError::Empty,
                            ),
                            Step::PopWait(us) => c.pop_timeout(short_timeout(us)).map(Val::into_id),
                            _ => unreachable!(),
                        };
                        match r {
                            Ok(id) => {
                                assert!(!log.saw_drained_closed, "a pop after Disconnected");
                                log.popped.push(id);
                            }
                            Err(spsc::TryPopError::Disconnected) => log.saw_drained_closed = true,
                            Err(spsc::TryPopError::Empty) => {
                                assert!(!log.saw_drained_closed, "Empty after Disconnected")
                            }
                        }
                        assert!(c.len() <= cap, "Consumer::len {} above {cap}", c.len());
                    }
                    Step::Close => rx = None,
                    Step::Yield | Step::Push | Step::PushWait(_) => thread::yield_now(),
                }
            }
            (log, rx)
        });
        (a.join().unwrap(), b.join().unwrap())
    });
    // The producer is gone now (its thread ended): drain to Disconnected.
    let mut drained = Vec::new();
    if let Some(mut rx) = rx {
        loop {
            match rx.try_pop() {
                Ok(v) => drained.push(v.into_id()),
                Err(spsc::TryPopError::Disconnected) => break,
                Err(spsc::TryPopError::Empty) => {
                    panic!("Empty (not Disconnected) with the producer gone")
                }
            }
        }
    }
    Outcome {
        logs: vec![la, lb],
        drained,
        fifo: true,
    }
}

fn run_deque(plan: &Plan, retries: u32) -> Outcome {
    let owner = Worker::<Val>::new();
    let stealer = owner.stealer();
    let (la, (lb, owner)) = thread::scope(|s| {
        let b = s.spawn(move || {
            let local = Worker::<Val>::new();
            let mut log = Log::default();
            plan.start.wait();
            for op in &plan.b {
                match *op {
                    Step::Pop | Step::PopWait(_) => {
                        let r = pop_retrying(
                            retries,
                            || match stealer.steal() {
                                Steal::Success(v) => Ok(v),
                                Steal::Retry => Err(true),
                                Steal::Empty => Err(false),
                            },
                            |&retry| retry,
                        );
                        if let Ok(id) = r {
                            log.popped.push(id);
                        }
                    }
                    Step::Push | Step::PushWait(_) => {
                        let before = local.len();
                        assert_eq!(before, 0);
                        match stealer.steal_batch_and_pop(&local) {
                            Steal::Success(v) => {
                                log.popped.push(v.into_id());
                                // The rest of the batch, in claim order (the local pops are LIFO).
                                let mut rest = Vec::new();
                                while let Some(v) = local.pop() {
                                    rest.push(v.into_id());
                                }
                                assert!(rest.len() < 32, "a batch of more than 32");
                                log.popped.extend(rest.into_iter().rev());
                            }
                            Steal::Retry | Steal::Empty => assert!(local.is_empty()),
                        }
                    }
                    Step::Yield | Step::Close => thread::yield_now(),
                }
            }
            log
        });
        let a = s.spawn(move || {
            let mut log = Log::default();
            let mut seq = 0u64;
            plan.start.wait();
            for op in &plan.a {
                match *op {
                    Step::Push | Step::PushWait(_) => {
                        seq += 1;
                        let id = (1 << 32) | seq;
                        owner.push(Val(id));
                        log.pushed.push(id);
                    }
                    Step::Pop | Step::PopWait(_) => {
                        if let Some(v) = owner.pop() {
                            log.popped.push(v.into_id());
                        }
                    }
                    Step::Yield | Step::Close => thread::yield_now(),
                }
            }
            (log, owner)
        });
        let (la, owner) = a.join().unwrap();
        let lb = b.join().unwrap();
        (la, (lb, owner))
    });
    // The thief's claims are in push order.
    for w in lb.popped.windows(2) {
        assert!(
            w[0] < w[1],
            "the thief claimed {:#x} after {:#x}",
            w[1],
            w[0]
        );
    }
    let mut drained = Vec::new();
    while let Some(v) = owner.pop() {
        drained.push(v.into_id());
    }
    Outcome {
        logs: vec![la, lb],
        drained,
        fifo: false,
    }
}

fn check(out: Outcome) {
    let lib_dropped = std::mem::take(&mut *DROPPED.lock().unwrap());
    let mut pushed: Vec<u64> = out
        .logs
        .iter()
        .flat_map(|l| l.pushed.iter().copied())
        .collect();
    pushed.sort_unstable();
    let mut delivered: Vec<u64> = out
        .logs
        .iter()
        .flat_map(|l| l.popped.iter().copied())
        .chain(out.drained.iter().copied())
        .chain(lib_dropped.iter().copied())
        .collect();
    delivered.sort_unstable();
    if delivered != pushed {
        let mut count: BTreeMap<u64, i64> = BTreeMap::new();
        for &p in &pushed {
            *count.entry(p).or_default() += 1;
        }
        for &d in &delivered {
            *count.entry(d).or_default() -= 1;
        }
        let lost: Vec<u64> = count
            .iter()
            .filter(|(_, &c)| c > 0)
            .map(|(&k, _)| k)
            .collect();
        let extra: Vec<u64> = count
            .iter()
            .filter(|(_, &c)| c < 0)
            .map(|(&k, _)| k)
            .collect();
        panic!(
            "exactly-once violated: lost {lost:#x?}, delivered twice or never pushed {extra:#x?}\n\
             drained {:#x?}, dropped by the primitive {lib_dropped:#x?}",
            out.drained
        );
    }
    if out.logs.iter().any(|l| l.saw_drained_closed) {
        assert!(
            out.drained.is_empty(),
            "a pop said closed and drained, but the final drain found {:#x?}",
            out.drained
        );
    }
    if out.fifo {
        let mut max_popped: BTreeMap<u64, u64> = BTreeMap::new();
        for seq in out.logs.iter().map(|l| &l.popped).chain([&out.drained]) {
            let mut last: BTreeMap<u64, u64> = BTreeMap::new();
            for &id in seq {
                if let Some(&prev) = last.get(&(id >> 32)) {
                    assert!(
                        prev < id,
                        "per-producer FIFO: {id:#x} after {prev:#x} in {seq:#x?}"
                    );
                }
                last.insert(id >> 32, id);
            }
        }
        for l in &out.logs {
            for &id in &l.popped {
                let m = max_popped.entry(id >> 32).or_default();
                *m = (*m).max(id);
            }
        }
        for &id in &out.drained {
            if let Some(&m) = max_popped.get(&(id >> 32)) {
                assert!(
                    id > m,
                    "drained {id:#x}, pushed before {m:#x}, which a thread popped"
                );
            }
        }
    }
}

fn run(input: Input) {
    DROPPED.lock().unwrap().clear();
    let cap = usize::from(input.capacity % 8) + 1;
    let retries = u32::from(input.retries % 16);
    let plan = Plan {
        a: expand(&input.a),
        b: expand(&input.b),
        start: Barrier::new(2),
    };
    let out = match input.prim {
        Prim::MutexQueue => {
            let q = Arc::new(MutexQueue::new(cap));
            two_mpmc(|| Queue(Arc::clone(&q)), &plan, retries, Some(cap))
        }
        Prim::VyukovQueue => {
            let q = Arc::new(VyukovQueue::new(cap));
            two_mpmc(|| Queue(Arc::clone(&q)), &plan, retries, Some(cap))
        }
        #[cfg(target_pointer_width = "64")]
        Prim::ScqQueue => {
            let q = Arc::new(berth::ScqQueue::new(cap));
            two_mpmc(|| Queue(Arc::clone(&q)), &plan, retries, Some(cap))
        }
        #[cfg(not(target_pointer_width = "64"))]
        Prim::ScqQueue => return,
        Prim::Bounded | Prim::Unbounded | Prim::Rendezvous => {
            let (tx, rx) = match input.prim {
                Prim::Bounded => channel::bounded(cap),
                Prim::Rendezvous => channel::bounded(0),
                _ => channel::unbounded(),
            };
            let bound = match input.prim {
                Prim::Bounded => Some(cap),
                Prim::Rendezvous => Some(0),
                _ => None,
            };
            two_mpmc(|| Chan(tx.clone(), rx.clone()), &plan, retries, bound)
        }
        Prim::Spsc => run_spsc(&plan, cap, retries),
        Prim::Deque => run_deque(&plan, retries),
    };
    check(out);
}

fuzz_target!(|input: Input| run(input));
