//! Throughput of `berth::deque` against `crossbeam_deque` (`Worker::new_lifo`), the
//! work-stealing deque it is modelled on, in one run.
//!
//! - `deque_owner_pushpop`: the owner alone pushes 1000 `u64`s, then pops them (one iteration;
//!   the worker is reused, so after the first iteration its buffer is already grown).
//! - `deque_thieves{1,2,4}`: the owner moves `ITEMS` `u64`s through its deque, pushing bursts
//!   of `BURST` and popping half of each burst, then draining, while 1, 2 or 4 thief threads
//!   `steal` from it until it is drained. The round ends when the owner and every thief are
//!   done.
//!
//! Methodology, as in `queues.rs`:
//!
//! - the thieves are spawned once per benchmark (a persistent pool), never per iteration; the
//!   owner is the benchmark's own thread (a `Worker` is not `Sync`, and it never moves);
//! - every round starts with the thieves and the owner meeting at a `Barrier`; the clock starts
//!   at the earliest moment any of them leaves it and stops when the last of them is done
//!   (timestamps taken by the threads themselves; `iter_custom`);
//! - each round's checksum (the sum of everything popped and stolen) and count are asserted, and
//!   the deque is asserted empty, so a deque that loses or duplicates items cannot post a time;
//! - both contenders wait the same way: a thief that finds the deque empty yields (on 2 cores
//!   the owner needs the CPU), one that loses a race spins once and retries;
//! - the pool is shut down (stop flag + barrier + join) when the benchmark ends.
//!
//! `BENCH_BUDGET=quick` (or `smoke`) shortens the measurement; `-- --test` runs every benchmark
//! once.

use std::hint::black_box;
use std::sync::atomic::{
    AtomicBool, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};
use std::sync::{Arc, Barrier};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use berth_bench::Budget;
use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};

/// Items pushed per owner-alone iteration (then popped).
const PUSHPOP: u64 = 1_000;
/// Items moved per round with thieves: `0..ITEMS`, so the checksum is `EXPECTED_SUM`.
const ITEMS: u64 = 100_000;
const EXPECTED_SUM: u64 = ITEMS * (ITEMS - 1) / 2;
/// The owner pushes this many, then pops half as many, until `ITEMS` are pushed.
const BURST: u64 = 64;
const THIEVES: [usize; 3] = [1, 2, 4];

/// The outcome of one steal, for both contenders.
enum Stolen {
    Value(u64),
    Empty,
    Retry,
}

/// The two contenders behind one interface.
trait Contender: 'static {
    /// The criterion function id.
    const NAME: &'static str;
    type Worker;
    type Stealer: Send + 'static;
    fn new_worker() -> Self::Worker;
    fn stealer(w: &Self::Worker) -> Self::Stealer;
    fn push(w: &Self::Worker, v: u64);
    fn pop(w: &Self::Worker) -> Option<u64>;
    fn steal(s: &Self::Stealer) -> Stolen;
    fn is_empty(w: &Self::Worker) -> bool;
}

struct Berth;

impl Contender for Berth {
    const NAME: &'static str = "berth";
    type Worker = berth::deque::Worker<u64>;
    type Stealer = berth::deque::Stealer<u64>;

    fn new_worker() -> Self::Worker {
        berth::deque::Worker::new()
    }

    fn stealer(w: &Self::Worker) -> Self::Stealer {
        w.stealer()
    }

    #[inline]
    fn push(w: &Self::Worker, v: u64) {
        w.push(v)
    }

    #[inline]
    fn pop(w: &Self::Worker) -> Option<u64> {
        w.pop()
    }

    #[inline]
    fn steal(s: &Self::Stealer) -> Stolen {
        match s.steal() {
            berth::deque::Steal::Success(v) => Stolen::Value(v),
            berth::deque::Steal::Empty => Stolen::Empty,
            berth::deque::Steal::Retry => Stolen::Retry,
        }
    }

    fn is_empty(w: &Self::Worker) -> bool {
        w.is_empty()
    }
}

struct Crossbeam;

impl Contender for Crossbeam {
    const NAME: &'static str = "crossbeam";
    type Worker = crossbeam_deque::Worker<u64>;
    type Stealer = crossbeam_deque::Stealer<u64>;

    fn new_worker() -> Self::Worker {
        crossbeam_deque::Worker::new_lifo()
    }

    fn stealer(w: &Self::Worker) -> Self::Stealer {
        w.stealer()
    }

    #[inline]
    fn push(w: &Self::Worker, v: u64) {
        w.push(v)
    }

    #[inline]
    fn pop(w: &Self::Worker) -> Option<u64> {
        w.pop()
    }

    #[inline]
    fn steal(s: &Self::Stealer) -> Stolen {
        match s.steal() {
            crossbeam_deque::Steal::Success(v) => Stolen::Value(v),
            crossbeam_deque::Steal::Empty => Stolen::Empty,
            crossbeam_deque::Steal::Retry => Stolen::Retry,
        }
    }

    fn is_empty(w: &Self::Worker) -> bool {
        w.is_empty()
    }
}

/// The owner alone: 1000 pushes, then 1000 pops.
fn bench_pushpop<C: Contender>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let w = C::new_worker();
    group.bench_function(C::NAME, |b| {
        b.iter(|| {
            for v in 0..PUSHPOP {
                C::push(&w, black_box(v));
            }
            let mut sum = 0u64;
            while let Some(v) = C::pop(&w) {
                sum = sum.wrapping_add(v);
            }
            assert_eq!(sum, PUSHPOP * (PUSHPOP - 1) / 2, "{}: checksum", C::NAME);
            black_box(sum)
        })
    });
}

/// What the owner and the thieves share. The barriers order every plain-`Relaxed` access: all
/// writes of a round happen before `done`, all resets before `start`.
struct Shared {
    /// Thieves + the owner.
    start: Barrier,
    /// Thieves + the owner.
    done: Barrier,
    /// Read by the thieves just after `start`; set by `Pool::drop`.
    stop: AtomicBool,
    /// Set by the owner once it has pushed everything and drained its deque (`Release`); a thief
    /// that then finds the deque empty is done.
    owner_done: AtomicBool,
    /// Time origin for the two timestamps below (nanoseconds since `epoch`).
    epoch: Instant,
    /// Earliest moment any participant left `start` this round (`fetch_min`).
    started_ns: AtomicU64,
    /// Latest moment a participant finished this round (`fetch_max`).
    finished_ns: AtomicU64,
    /// Sum and count of every value stolen this round.
    checksum: AtomicU64,
    count: AtomicU64,
}

impl Shared {
    fn now_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).expect("a benchmark shorter than 584 years")
    }
}

/// A thief that panics would leave everyone else waiting on a barrier forever; abort instead.
struct AbortOnPanic;

impl Drop for AbortOnPanic {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!("a benchmark thief panicked; aborting rather than deadlocking");
            std::process::abort();
        }
    }
}

fn thief<C: Contender>(shared: &Shared, stealer: C::Stealer) {
    let _guard = AbortOnPanic;
    loop {
        shared.start.wait();
        shared.started_ns.fetch_min(shared.now_ns(), Relaxed);
        if shared.stop.load(Relaxed) {
            return;
        }
        let (mut sum, mut count) = (0u64, 0u64);
        loop {
            match C::steal(&stealer) {
                Stolen::Value(v) => {
                    sum = sum.wrapping_add(v);
                    count += 1;
                }
                Stolen::Retry => std::hint::spin_loop(),
                // The owner drained the deque before saying so: this Empty is final.
                Stolen::Empty if shared.owner_done.load(Acquire) => break,
                Stolen::Empty => thread::yield_now(),
            }
        }
        shared.finished_ns.fetch_max(shared.now_ns(), Relaxed);
        shared.checksum.fetch_add(sum, Relaxed);
        shared.count.fetch_add(count, Relaxed);
        shared.done.wait();
    }
}

/// The owner's deque (on the benchmark thread) and `thieves` threads, spawned once, running one
/// round per `run_round` call.
struct Pool<C: Contender> {
    worker: C::Worker,
    shared: Arc<Shared>,
    thieves: Vec<JoinHandle<()>>,
}

impl<C: Contender> Pool<C> {
    fn new(thieves: usize) -> Self {
        let worker = C::new_worker();
        let shared = Arc::new(Shared {
            start: Barrier::new(thieves + 1),
            done: Barrier::new(thieves + 1),
            stop: AtomicBool::new(false),
            owner_done: AtomicBool::new(false),
            epoch: Instant::now(),
            started_ns: AtomicU64::new(u64::MAX),
            finished_ns: AtomicU64::new(0),
            checksum: AtomicU64::new(0),
            count: AtomicU64::new(0),
        });
        let thieves = (0..thieves)
            .map(|t| {
                let shared = Arc::clone(&shared);
                let stealer = C::stealer(&worker);
                thread::Builder::new()
                    .name(format!("{}-thief-{t}", C::NAME))
                    .spawn(move || thief::<C>(&shared, stealer))
                    .expect("spawn a thief")
            })
            .collect();
        Pool {
            worker,
            shared,
            thieves,
        }
    }

    /// One round: release the thieves, do the owner's part, wait for the thieves, check the
    /// checksum; returns the time from the barrier's release to the last participant's end.
    fn run_round(&self) -> Duration {
        let s = &*self.shared;
        let w = &self.worker;
        s.started_ns.store(u64::MAX, Relaxed);
        s.finished_ns.store(0, Relaxed);
        s.checksum.store(0, Relaxed);
        s.count.store(0, Relaxed);
        s.owner_done.store(false, Relaxed);

        s.start.wait();
        s.started_ns.fetch_min(s.now_ns(), Relaxed);
        let (mut sum, mut count) = (0u64, 0u64);
        let mut next = 0u64;
        while next < ITEMS {
            let end = (next + BURST).min(ITEMS);
            for v in next..end {
                C::push(w, v);
            }
            for _ in 0..(end - next) / 2 {
                match C::pop(w) {
                    Some(v) => {
                        sum = sum.wrapping_add(v);
                        count += 1;
                    }
                    None => break,
                }
            }
            next = end;
        }
        while let Some(v) = C::pop(w) {
            sum = sum.wrapping_add(v);
            count += 1;
        }
        s.owner_done.store(true, Release);
        s.finished_ns.fetch_max(s.now_ns(), Relaxed);
        s.done.wait();

        let stolen = s.count.load(Relaxed);
        assert_eq!(
            (s.checksum.load(Relaxed).wrapping_add(sum), stolen + count),
            (EXPECTED_SUM, ITEMS),
            "{}: checksum or count mismatch: items were lost or duplicated",
            C::NAME
        );
        assert!(C::is_empty(w), "{}: deque not empty after a round", C::NAME);
        let (started, finished) = (s.started_ns.load(Relaxed), s.finished_ns.load(Relaxed));
        assert!(finished >= started, "finished before the round started");
        Duration::from_nanos(finished - started)
    }

    fn run(&self, iters: u64) -> Duration {
        (0..iters).map(|_| self.run_round()).sum()
    }
}

impl<C: Contender> Drop for Pool<C> {
    /// Every thief is waiting at `start` between rounds (also after a failed assert, which only
    /// happens once `done` has been passed): raise `stop`, release them, join them.
    fn drop(&mut self) {
        self.shared.stop.store(true, Relaxed);
        self.shared.start.wait();
        for t in self.thieves.drain(..) {
            if t.join().is_err() && !thread::panicking() {
                panic!("a benchmark thief panicked");
            }
        }
    }
}

fn bench_thieves<C: Contender>(group: &mut BenchmarkGroup<'_, WallTime>, thieves: usize) {
    // Created on first use, so a benchmark that the command-line filter skips spawns nothing;
    // criterion calls the closure many times (warm-up, each sample), all on this one pool.
    let mut pool: Option<Pool<C>> = None;
    group.bench_function(C::NAME, |b| {
        let pool = pool.get_or_insert_with(|| Pool::new(thieves));
        b.iter_custom(|iters| pool.run(iters));
    });
    drop(pool); // shuts the thieves down before the next benchmark's pool starts
}

fn deques(c: &mut Criterion) {
    {
        let mut group = c.benchmark_group("deque_owner_pushpop");
        group.throughput(Throughput::Elements(PUSHPOP));
        bench_pushpop::<Berth>(&mut group);
        bench_pushpop::<Crossbeam>(&mut group);
        group.finish();
    }
    for thieves in THIEVES {
        let mut group = c.benchmark_group(format!("deque_thieves{thieves}"));
        group.throughput(Throughput::Elements(ITEMS));
        // One round is milliseconds long: run the same number of rounds per sample.
        group.sampling_mode(SamplingMode::Flat);
        bench_thieves::<Berth>(&mut group, thieves);
        bench_thieves::<Crossbeam>(&mut group, thieves);
        group.finish();
    }
}

/// As `queues.rs`: default ~2.5 s per benchmark (8 benchmarks), `BENCH_BUDGET=quick` ~0.75 s,
/// `smoke` ~0.15 s (`berth_bench::Budget`). Command-line flags still override them.
fn config() -> Criterion {
    Budget::from_env().criterion(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = deques
}
criterion_main!(benches);
