//! Throughput of berth's bounded queues (blocking `push`/`pop`: spin, then park) against
//! `crossbeam_queue::ArrayQueue` (non-blocking, waited on with `crossbeam_utils::Backoff`, as its
//! users have to), moving `ITEMS` `u64`s from P producers to C consumers. berth's contenders:
//! `VyukovQueue` (`berth`, the headline), `ScqQueue` (`berth_scq`) and `MutexQueue`
//! (`berth_mutex`, the lock-based baseline).
//!
//! One criterion group per (P, C, capacity), P:C in 1:1, 2:2, 4:4, 8:1 and 1:8, capacity 16
//! and 1024, holding all four queues, so criterion reports them side by side. Methodology
//! (each point fixes a mistake seen in earlier ad-hoc benchmarks):
//!
//! - the worker threads are spawned once per benchmark (a persistent pool), never per iteration,
//!   so thread creation and teardown are not what gets measured;
//! - every iteration ("round") starts with all workers and the timing thread meeting at a
//!   `Barrier`; the clock starts at the earliest moment any participant leaves that barrier and
//!   stops at the moment the last consumer has popped its last item (`iter_custom`);
//! - each round's checksum (sum of every popped value) is asserted against the expected sum, and
//!   the queue is asserted empty, so a queue that loses or duplicates items cannot post a time;
//! - the pool is shut down (stop flag + barrier + join) when the benchmark ends.
//!
//! `BENCH_BUDGET=quick` (or `smoke`) shortens the measurement; `-- --test` runs every benchmark
//! once.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use berth::{MutexQueue, ScqQueue, VyukovQueue};
use berth_bench::Budget;
use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};
use crossbeam_queue::ArrayQueue;
use crossbeam_utils::Backoff;

/// Items moved per iteration, split as evenly as possible across the producers (what they push)
/// and across the consumers (how many each pops).
const ITEMS: u64 = 100_000;
/// The values pushed are exactly `0..ITEMS`, so every round's checksum is this.
const EXPECTED_SUM: u64 = ITEMS * (ITEMS - 1) / 2;
/// (producers, consumers).
const SHAPES: [(usize, usize); 5] = [(1, 1), (2, 2), (4, 4), (8, 1), (1, 8)];
const CAPACITIES: [usize; 2] = [16, 1024];

/// The two contenders behind one interface: a blocking `send`/`recv` of one item.
trait BenchQueue: Send + Sync + 'static {
    /// The criterion function id.
    const NAME: &'static str;
    /// Per-thread waiting state (crossbeam's `Backoff`; nothing for berth, which waits inside).
    type Waiter;
    fn with_capacity(capacity: usize) -> Self;
    fn new_waiter() -> Self::Waiter;
    fn send(&self, value: u64, waiter: &Self::Waiter);
    fn recv(&self, waiter: &Self::Waiter) -> u64;
    fn is_empty(&self) -> bool;
}

/// One of berth's bounded queues with its own blocking operations (spin, then park): the three
/// implement the same inherent `push`/`pop`/`is_empty` (and `berth::BoundedQueue`).
macro_rules! berth_queue {
    ($(#[$doc:meta])* $contender:ident, $queue:ident, $name:literal) => {
        $(#[$doc])*
        struct $contender($queue<u64>);

        impl BenchQueue for $contender {
            const NAME: &'static str = $name;
            type Waiter = ();

            fn with_capacity(capacity: usize) -> Self {
                $contender($queue::new(capacity))
            }

            fn new_waiter() {}

            #[inline]
            fn send(&self, value: u64, _: &()) {
                self.0
                    .push(value)
                    .expect("the benchmark never closes the queue");
            }

            #[inline]
            fn recv(&self, _: &()) -> u64 {
                self.0.pop().expect("the benchmark never closes the queue")
            }

            fn is_empty(&self) -> bool {
                self.0.is_empty()
            }
        }
    };
}

berth_queue!(
    /// berth's Vyukov array queue: the headline contender.
    Berth,
    VyukovQueue,
    "berth"
);
berth_queue!(
    /// berth's lock-free SCQ (Nikolaev).
    Scq,
    ScqQueue,
    "berth_scq"
);
berth_queue!(
    /// berth's `Mutex` + two `Condvar`s ring: the baseline the lock-free queues must beat.
    Mutex,
    MutexQueue,
    "berth_mutex"
);

/// crossbeam's queue, which has no blocking operations: retry with `Backoff::snooze` (spins,
/// then yields) on failure, and reset the backoff after each success.
struct Crossbeam(ArrayQueue<u64>);

impl BenchQueue for Crossbeam {
    const NAME: &'static str = "crossbeam";
    type Waiter = Backoff;

    fn with_capacity(capacity: usize) -> Self {
        Crossbeam(ArrayQueue::new(capacity))
    }

    fn new_waiter() -> Backoff {
        Backoff::new()
    }

    #[inline]
    fn send(&self, mut value: u64, backoff: &Backoff) {
        while let Err(back) = self.0.push(value) {
            value = back;
            backoff.snooze();
        }
        backoff.reset();
    }

    #[inline]
    fn recv(&self, backoff: &Backoff) -> u64 {
        loop {
            if let Some(value) = self.0.pop() {
                backoff.reset();
                return value;
            }
            backoff.snooze();
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What the pool's threads share. The barriers order every plain-`Relaxed` access below: all
/// writes of a round happen before `done`, all resets before `start`.
struct Shared<Q> {
    queue: Q,
    /// Producers + consumers + the timing thread.
    start: Barrier,
    /// Producers + consumers + the timing thread.
    done: Barrier,
    /// Read by the workers just after `start`; set by `Pool::drop`.
    stop: AtomicBool,
    /// Time origin for the two timestamps below (nanoseconds since `epoch`).
    epoch: Instant,
    /// Earliest moment any participant left `start` this round (`fetch_min`).
    started_ns: AtomicU64,
    /// Latest moment a consumer popped its last item this round (`fetch_max`).
    finished_ns: AtomicU64,
    /// Sum of every value popped this round.
    checksum: AtomicU64,
}

impl<Q> Shared<Q> {
    fn now_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).expect("a benchmark shorter than 584 years")
    }
}

/// The values of part `i` when `total` is split into `parts` near-equal contiguous parts.
fn split(total: u64, parts: usize, i: usize) -> Range<u64> {
    let (parts, i) = (parts as u64, i as u64);
    total * i / parts..total * (i + 1) / parts
}

/// A worker that panics would leave everyone else waiting on a barrier forever; abort instead.
struct AbortOnPanic;

impl Drop for AbortOnPanic {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!("a benchmark worker panicked; aborting rather than deadlocking");
            std::process::abort();
        }
    }
}

fn producer<Q: BenchQueue>(shared: &Shared<Q>, values: Range<u64>) {
    let _guard = AbortOnPanic;
    let waiter = Q::new_waiter();
    loop {
        shared.start.wait();
        shared.started_ns.fetch_min(shared.now_ns(), Relaxed);
        if shared.stop.load(Relaxed) {
            return;
        }
        for value in values.clone() {
            shared.queue.send(value, &waiter);
        }
        shared.done.wait();
    }
}

fn consumer<Q: BenchQueue>(shared: &Shared<Q>, quota: u64) {
    let _guard = AbortOnPanic;
    let waiter = Q::new_waiter();
    loop {
        shared.start.wait();
        shared.started_ns.fetch_min(shared.now_ns(), Relaxed);
        if shared.stop.load(Relaxed) {
            return;
        }
        let mut sum = 0u64;
        for _ in 0..quota {
            sum = sum.wrapping_add(shared.queue.recv(&waiter));
        }
        shared.finished_ns.fetch_max(shared.now_ns(), Relaxed);
        shared.checksum.fetch_add(sum, Relaxed);
        shared.done.wait();
    }
}

/// P producers and C consumers, spawned once, running one round per `run_round` call.
struct Pool<Q: BenchQueue> {
    shared: Arc<Shared<Q>>,
    workers: Vec<JoinHandle<()>>,
}

impl<Q: BenchQueue> Pool<Q> {
    fn new(producers: usize, consumers: usize, capacity: usize) -> Self {
        let parties = producers + consumers + 1;
        let shared = Arc::new(Shared {
            queue: Q::with_capacity(capacity),
            start: Barrier::new(parties),
            done: Barrier::new(parties),
            stop: AtomicBool::new(false),
            epoch: Instant::now(),
            started_ns: AtomicU64::new(u64::MAX),
            finished_ns: AtomicU64::new(0),
            checksum: AtomicU64::new(0),
        });
        let mut workers = Vec::with_capacity(producers + consumers);
        for p in 0..producers {
            let shared = Arc::clone(&shared);
            let values = split(ITEMS, producers, p);
            workers.push(
                thread::Builder::new()
                    .name(format!("{}-producer-{p}", Q::NAME))
                    .spawn(move || producer(&shared, values))
                    .expect("spawn a producer"),
            );
        }
        for c in 0..consumers {
            let shared = Arc::clone(&shared);
            let quota = split(ITEMS, consumers, c).count() as u64;
            workers.push(
                thread::Builder::new()
                    .name(format!("{}-consumer-{c}", Q::NAME))
                    .spawn(move || consumer(&shared, quota))
                    .expect("spawn a consumer"),
            );
        }
        Pool { shared, workers }
    }

    /// One round: release everyone, wait for everyone, check the checksum, return the time from
    /// the barrier's release to the last consumer's last pop.
    fn run_round(&self) -> Duration {
        let s = &*self.shared;
        s.started_ns.store(u64::MAX, Relaxed);
        s.finished_ns.store(0, Relaxed);
        s.checksum.store(0, Relaxed);

        s.start.wait();
        s.started_ns.fetch_min(s.now_ns(), Relaxed);
        s.done.wait();

        let checksum = s.checksum.load(Relaxed);
        assert_eq!(
            checksum,
            EXPECTED_SUM,
            "{}: checksum mismatch: items were lost or duplicated",
            Q::NAME
        );
        assert!(
            s.queue.is_empty(),
            "{}: queue not empty after a round",
            Q::NAME
        );
        let (started, finished) = (s.started_ns.load(Relaxed), s.finished_ns.load(Relaxed));
        assert!(
            finished >= started,
            "consumers finished before the round started"
        );
        Duration::from_nanos(finished - started)
    }

    fn run(&self, iters: u64) -> Duration {
        (0..iters).map(|_| self.run_round()).sum()
    }
}

impl<Q: BenchQueue> Drop for Pool<Q> {
    /// Every worker is waiting at `start` between rounds (also after a failed checksum assert,
    /// which only happens once `done` has been passed): raise `stop`, release them, join them.
    fn drop(&mut self) {
        self.shared.stop.store(true, Relaxed);
        self.shared.start.wait();
        for worker in self.workers.drain(..) {
            if worker.join().is_err() && !thread::panicking() {
                panic!("a benchmark worker panicked");
            }
        }
    }
}

fn bench_one<Q: BenchQueue>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    producers: usize,
    consumers: usize,
    capacity: usize,
) {
    // Created on first use, so a benchmark that the command-line filter skips spawns nothing;
    // criterion calls the closure many times (warm-up, each sample), all on this one pool.
    let mut pool: Option<Pool<Q>> = None;
    group.bench_function(Q::NAME, |b| {
        let pool = pool.get_or_insert_with(|| Pool::new(producers, consumers, capacity));
        b.iter_custom(|iters| pool.run(iters));
    });
    drop(pool); // shuts the workers down before the next benchmark's pool starts
}

fn queues(c: &mut Criterion) {
    for (producers, consumers) in SHAPES {
        for capacity in CAPACITIES {
            let mut group = c.benchmark_group(format!("p{producers}c{consumers}_cap{capacity}"));
            group.throughput(Throughput::Elements(ITEMS));
            // One round is milliseconds long: run the same number of rounds per sample.
            group.sampling_mode(SamplingMode::Flat);
            bench_one::<Berth>(&mut group, producers, consumers, capacity);
            bench_one::<Crossbeam>(&mut group, producers, consumers, capacity);
            bench_one::<Scq>(&mut group, producers, consumers, capacity);
            bench_one::<Mutex>(&mut group, producers, consumers, capacity);
            group.finish();
        }
    }
}

/// Default: ~2.5 s of warm-up and measurement per benchmark, 40 benchmarks (about 3 minutes on
/// 2 cores including criterion's analysis). `BENCH_BUDGET=quick`: ~0.75 s per benchmark;
/// `smoke`: ~0.15 s (`berth_bench::Budget`). Command-line flags still override them.
fn config() -> Criterion {
    Budget::from_env().criterion(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = queues
}
criterion_main!(benches);
