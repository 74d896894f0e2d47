//! Throughput of `berth::channel` against crossbeam-channel, flume, kanal and `std::sync::mpsc`,
//! moving `u64`s from P producers to C consumers through one channel with blocking `send` and
//! `recv` (every library's own waiting; none of them is polled).
//!
//! One criterion group per (flavour, shape), holding every library that has that shape, so
//! criterion reports them side by side: flavours `bounded(0)` (rendezvous), `bounded(1)`,
//! `bounded(1024)` and `unbounded`; shapes SPSC 1:1, MPSC 4:1 and MPMC 4:4 (`std`'s `Receiver`
//! is not `Clone`, so `std` sits out MPMC). Methodology, the same as `queues.rs`:
//!
//! - the worker threads are spawned once per benchmark (a persistent pool), never per iteration;
//!   the channel is created with the pool and every worker owns its own `Sender` or `Receiver`
//!   clone for the whole benchmark (the timing thread holds neither);
//! - every iteration ("round") starts with all workers and the timing thread meeting at a
//!   `Barrier`; the clock starts at the earliest moment any participant leaves that barrier and
//!   stops at the moment the last consumer has received its last message (`iter_custom`);
//! - each round's checksum (sum of every received value) is asserted against the expected sum,
//!   and the channel is asserted empty (a `try_recv` that reports "empty", not a message and not
//!   a disconnection), so a channel that loses or duplicates messages cannot post a time;
//! - the pool is shut down when the benchmark ends: a stop flag and the barrier release the
//!   workers, the producers return (dropping every `Sender`), and each consumer then asserts that
//!   its `Receiver` reports the disconnection (waiting up to `DISCONNECT_TIMEOUT`) before the
//!   threads are joined. So the disconnect-on-last-sender-drop path is checked for every library
//!   and every configuration, outside the timing.
//!
//! An iteration moves the values `0..items` (split into contiguous ranges, one per producer;
//! each consumer receives a fixed share): `items` = 100_000 for `bounded(1024)` and `unbounded`,
//! 5_000 for `bounded(0)` and `bounded(1)` (see `Flavour::items`). The channel lives as long as
//! the pool, so `unbounded` is measured in its steady state, not its first allocations.
//!
//! Producers send with `Sender::send`; consumers receive with the blocking iterator
//! (`receiver.iter().take(quota)`, kanal: the `Receiver` itself), i.e. `recv` per message.
//!
//! `BENCH_BUDGET=quick` (or `smoke`) shortens the measurement; `-- --test` runs every benchmark
//! once.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::AcqRel, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Barrier};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use berth_bench::Budget;
use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};

/// How long a consumer waits, at shutdown, for its `Receiver` to report that every `Sender` is
/// gone. The producers drop theirs immediately, so a correct channel answers at once.
const DISCONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// (producers, consumers, shape name). MPMC needs a cloneable `Receiver`.
const SHAPES: [(usize, usize, &str); 3] = [(1, 1, "spsc"), (4, 1, "mpsc"), (4, 4, "mpmc")];

#[derive(Clone, Copy, Debug)]
enum Flavour {
    /// `bounded(capacity)`; `bounded(0)` is a rendezvous channel in every library here.
    Bounded(usize),
    Unbounded,
}

const FLAVOURS: [Flavour; 4] = [
    Flavour::Bounded(0),
    Flavour::Bounded(1),
    Flavour::Bounded(1024),
    Flavour::Unbounded,
];

impl Flavour {
    /// The group-name prefix: `b0`, `b1`, `b1024`, `unbounded`.
    fn name(self) -> String {
        match self {
            Flavour::Bounded(capacity) => format!("b{capacity}"),
            Flavour::Unbounded => "unbounded".to_owned(),
        }
    }

    /// Messages moved per iteration. Through a rendezvous or one-slot channel most messages cost
    /// a hand-off between threads (often a park, an unpark and a context switch): on a loaded
    /// 2-core machine, 20_000 of them took up to 0.8 s (`b0`) and 1.4 s (`std`'s `b1` SPSC) per
    /// iteration, against at most 20 ms for 100_000 through `b1024` or `unbounded`. Those two
    /// flavours move 5_000, so that their slowest iteration stays near 0.3 s.
    fn items(self) -> u64 {
        match self {
            Flavour::Bounded(0) | Flavour::Bounded(1) => 5_000,
            Flavour::Bounded(_) | Flavour::Unbounded => 100_000,
        }
    }
}

/// One library's channel, behind one interface. Every operation is that library's own
/// blocking one; the handles are moved into the worker threads.
trait Channel: 'static {
    /// The criterion function id.
    const NAME: &'static str;
    /// Whether the `Receiver` can be cloned (MPMC).
    const MULTI_CONSUMER: bool = true;
    type Tx: Clone + Send + 'static;
    type Rx: Send + 'static;
    fn new(flavour: Flavour) -> (Self::Tx, Self::Rx);
    /// Only called when `MULTI_CONSUMER`.
    fn clone_rx(rx: &Self::Rx) -> Self::Rx;
    fn send(tx: &Self::Tx, value: u64);
    /// Receives exactly `count` messages with the blocking iterator and returns their sum (less,
    /// if the channel wrongly reports a disconnection, which the checksum then catches).
    fn recv_sum(rx: &mut Self::Rx, count: usize) -> u64;
    /// A `try_recv` finds the channel empty (and still connected).
    fn is_drained(rx: &Self::Rx) -> bool;
    /// A blocking receive reports that every sender is gone (waiting up to `timeout`).
    fn is_disconnected(rx: &Self::Rx, timeout: Duration) -> bool;
}

const SEND_FAILED: &str = "a send failed: the benchmark's receivers outlive its senders";

/// `berth::channel`.
struct Berth;

impl Channel for Berth {
    const NAME: &'static str = "berth";
    type Tx = berth::channel::Sender<u64>;
    type Rx = berth::channel::Receiver<u64>;

    fn new(flavour: Flavour) -> (Self::Tx, Self::Rx) {
        match flavour {
            Flavour::Bounded(capacity) => berth::channel::bounded(capacity),
            Flavour::Unbounded => berth::channel::unbounded(),
        }
    }

    fn clone_rx(rx: &Self::Rx) -> Self::Rx {
        rx.clone()
    }

    #[inline]
    fn send(tx: &Self::Tx, value: u64) {
        tx.send(value).expect(SEND_FAILED);
    }

    fn recv_sum(rx: &mut Self::Rx, count: usize) -> u64 {
        rx.iter().take(count).sum()
    }

    fn is_drained(rx: &Self::Rx) -> bool {
        matches!(rx.try_recv(), Err(berth::channel::TryRecvError::Empty))
    }

    fn is_disconnected(rx: &Self::Rx, timeout: Duration) -> bool {
        matches!(
            rx.recv_timeout(timeout),
            Err(berth::channel::RecvTimeoutError::Disconnected)
        )
    }
}

/// `crossbeam_channel`.
struct Crossbeam;

impl Channel for Crossbeam {
    const NAME: &'static str = "crossbeam";
    type Tx = crossbeam_channel::Sender<u64>;
    type Rx = crossbeam_channel::Receiver<u64>;

    fn new(flavour: Flavour) -> (Self::Tx, Self::Rx) {
        match flavour {
            Flavour::Bounded(capacity) => crossbeam_channel::bounded(capacity),
            Flavour::Unbounded => crossbeam_channel::unbounded(),
        }
    }

    fn clone_rx(rx: &Self::Rx) -> Self::Rx {
        rx.clone()
    }

    #[inline]
    fn send(tx: &Self::Tx, value: u64) {
        tx.send(value).expect(SEND_FAILED);
    }

    fn recv_sum(rx: &mut Self::Rx, count: usize) -> u64 {
        rx.iter().take(count).sum()
    }

    fn is_drained(rx: &Self::Rx) -> bool {
        matches!(rx.try_recv(), Err(crossbeam_channel::TryRecvError::Empty))
    }

    fn is_disconnected(rx: &Self::Rx, timeout: Duration) -> bool {
        matches!(
            rx.recv_timeout(timeout),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected)
        )
    }
}

/// `flume`.
struct Flume;

impl Channel for Flume {
    const NAME: &'static str = "flume";
    type Tx = flume::Sender<u64>;
    type Rx = flume::Receiver<u64>;

    fn new(flavour: Flavour) -> (Self::Tx, Self::Rx) {
        match flavour {
            Flavour::Bounded(capacity) => flume::bounded(capacity),
            Flavour::Unbounded => flume::unbounded(),
        }
    }

    fn clone_rx(rx: &Self::Rx) -> Self::Rx {
        rx.clone()
    }

    #[inline]
    fn send(tx: &Self::Tx, value: u64) {
        tx.send(value).expect(SEND_FAILED);
    }

    fn recv_sum(rx: &mut Self::Rx, count: usize) -> u64 {
        rx.iter().take(count).sum()
    }

    fn is_drained(rx: &Self::Rx) -> bool {
        matches!(rx.try_recv(), Err(flume::TryRecvError::Empty))
    }

    fn is_disconnected(rx: &Self::Rx, timeout: Duration) -> bool {
        matches!(
            rx.recv_timeout(timeout),
            Err(flume::RecvTimeoutError::Disconnected)
        )
    }
}

/// `kanal` (its `Receiver` is itself the blocking iterator).
struct Kanal;

impl Channel for Kanal {
    const NAME: &'static str = "kanal";
    type Tx = kanal::Sender<u64>;
    type Rx = kanal::Receiver<u64>;

    fn new(flavour: Flavour) -> (Self::Tx, Self::Rx) {
        match flavour {
            Flavour::Bounded(capacity) => kanal::bounded(capacity),
            Flavour::Unbounded => kanal::unbounded(),
        }
    }

    fn clone_rx(rx: &Self::Rx) -> Self::Rx {
        rx.clone()
    }

    #[inline]
    fn send(tx: &Self::Tx, value: u64) {
        tx.send(value).expect(SEND_FAILED);
    }

    fn recv_sum(rx: &mut Self::Rx, count: usize) -> u64 {
        rx.take(count).sum()
    }

    fn is_drained(rx: &Self::Rx) -> bool {
        matches!(rx.try_recv(), Ok(None))
    }

    fn is_disconnected(rx: &Self::Rx, timeout: Duration) -> bool {
        // kanal 0.1.1 answers `SendClosed` if the senders were gone before the call, but
        // `Closed` to a receiver that was already waiting when the last sender dropped (its
        // wait is "terminated"); the benchmark never calls `close()`, so both mean the same.
        matches!(
            rx.recv_timeout(timeout),
            Err(kanal::ReceiveErrorTimeout::SendClosed | kanal::ReceiveErrorTimeout::Closed)
        )
    }
}

/// `std::sync::mpsc`: `sync_channel(n)` for `bounded(n)` (`sync_channel(0)` is a rendezvous
/// channel), `channel()` for `unbounded`. Its two sender types are one enum here; the match is
/// of the same kind as the flavour dispatch inside the other libraries' handles.
struct Std;

#[derive(Clone)]
enum StdSender {
    Bounded(mpsc::SyncSender<u64>),
    Unbounded(mpsc::Sender<u64>),
}

impl Channel for Std {
    const NAME: &'static str = "std";
    const MULTI_CONSUMER: bool = false;
    type Tx = StdSender;
    type Rx = mpsc::Receiver<u64>;

    fn new(flavour: Flavour) -> (Self::Tx, Self::Rx) {
        match flavour {
            Flavour::Bounded(capacity) => {
                let (tx, rx) = mpsc::sync_channel(capacity);
                (StdSender::Bounded(tx), rx)
            }
            Flavour::Unbounded => {
                let (tx, rx) = mpsc::channel();
                (StdSender::Unbounded(tx), rx)
            }
        }
    }

    fn clone_rx(_: &Self::Rx) -> Self::Rx {
        unreachable!(
            "std::sync::mpsc::Receiver is not Clone; std is not run with several consumers"
        )
    }

    #[inline]
    fn send(tx: &Self::Tx, value: u64) {
        match tx {
            StdSender::Bounded(tx) => tx.send(value).expect(SEND_FAILED),
            StdSender::Unbounded(tx) => tx.send(value).expect(SEND_FAILED),
        }
    }

    fn recv_sum(rx: &mut Self::Rx, count: usize) -> u64 {
        rx.iter().take(count).sum()
    }

    fn is_drained(rx: &Self::Rx) -> bool {
        matches!(rx.try_recv(), Err(mpsc::TryRecvError::Empty))
    }

    fn is_disconnected(rx: &Self::Rx, timeout: Duration) -> bool {
        matches!(
            rx.recv_timeout(timeout),
            Err(mpsc::RecvTimeoutError::Disconnected)
        )
    }
}

/// What the pool's threads share (the channel handles are owned by the workers). The barriers
/// order every plain-`Relaxed` access below: all writes of a round happen before `done`, all
/// resets before `start`.
struct Shared {
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
    /// Latest moment a consumer received its last message this round (`fetch_max`).
    finished_ns: AtomicU64,
    /// Sum of every value received this round.
    checksum: AtomicU64,
    /// Consumers still receiving this round; the one that brings it to 0 checks `drained`.
    consumers_left: AtomicUsize,
    /// Whether the channel was empty once every consumer had its quota.
    drained: AtomicBool,
}

impl Shared {
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

/// Owns one `Sender` for the whole benchmark and drops it when the pool stops.
fn producer<C: Channel>(shared: &Shared, tx: C::Tx, values: Range<u64>) {
    let _guard = AbortOnPanic;
    loop {
        shared.start.wait();
        shared.started_ns.fetch_min(shared.now_ns(), Relaxed);
        if shared.stop.load(Relaxed) {
            return; // drops `tx`; the last producer to return disconnects the channel
        }
        for value in values.clone() {
            C::send(&tx, value);
        }
        shared.done.wait();
    }
}

/// Owns one `Receiver` for the whole benchmark; receives exactly `quota` messages per round.
fn consumer<C: Channel>(shared: &Shared, mut rx: C::Rx, quota: usize) {
    let _guard = AbortOnPanic;
    loop {
        shared.start.wait();
        shared.started_ns.fetch_min(shared.now_ns(), Relaxed);
        if shared.stop.load(Relaxed) {
            // Every producer returns now, dropping the last senders: the channel must say so.
            assert!(
                C::is_disconnected(&rx, DISCONNECT_TIMEOUT),
                "{}: the receiver did not report the disconnection within {DISCONNECT_TIMEOUT:?} \
                 of the last sender's drop",
                C::NAME
            );
            return;
        }
        let sum = C::recv_sum(&mut rx, quota);
        shared.finished_ns.fetch_max(shared.now_ns(), Relaxed);
        shared.checksum.fetch_add(sum, Relaxed);
        // The last consumer to finish checks (untimed) that nothing is left in the channel.
        if shared.consumers_left.fetch_sub(1, AcqRel) == 1 {
            shared.drained.store(C::is_drained(&rx), Relaxed);
        }
        shared.done.wait();
    }
}

/// P producers and C consumers on one channel, spawned once, running one round per
/// `run_round` call.
struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    name: &'static str,
    consumers: usize,
    expected_sum: u64,
}

impl Pool {
    fn new<C: Channel>(flavour: Flavour, producers: usize, consumers: usize) -> Self {
        assert!(consumers == 1 || C::MULTI_CONSUMER);
        let items = flavour.items();
        let parties = producers + consumers + 1;
        let shared = Arc::new(Shared {
            start: Barrier::new(parties),
            done: Barrier::new(parties),
            stop: AtomicBool::new(false),
            epoch: Instant::now(),
            started_ns: AtomicU64::new(u64::MAX),
            finished_ns: AtomicU64::new(0),
            checksum: AtomicU64::new(0),
            consumers_left: AtomicUsize::new(consumers),
            drained: AtomicBool::new(false),
        });
        let (tx, rx) = C::new(flavour);
        let mut workers = Vec::with_capacity(producers + consumers);
        // The first handles are cloned for all workers but the last, which gets the original, so
        // that only the workers hold handles (the last sender drop disconnects).
        let mut tx = Some(tx);
        for p in 0..producers {
            let shared = Arc::clone(&shared);
            let values = split(items, producers, p);
            let tx = if p + 1 == producers {
                tx.take().expect("the original sender")
            } else {
                tx.as_ref().expect("the original sender").clone()
            };
            workers.push(
                thread::Builder::new()
                    .name(format!("{}-producer-{p}", C::NAME))
                    .spawn(move || producer::<C>(&shared, tx, values))
                    .expect("spawn a producer"),
            );
        }
        let mut rx = Some(rx);
        for c in 0..consumers {
            let shared = Arc::clone(&shared);
            let quota = split(items, consumers, c).count();
            let rx = if c + 1 == consumers {
                rx.take().expect("the original receiver")
            } else {
                C::clone_rx(rx.as_ref().expect("the original receiver"))
            };
            workers.push(
                thread::Builder::new()
                    .name(format!("{}-consumer-{c}", C::NAME))
                    .spawn(move || consumer::<C>(&shared, rx, quota))
                    .expect("spawn a consumer"),
            );
        }
        Pool {
            shared,
            workers,
            name: C::NAME,
            consumers,
            expected_sum: items * (items - 1) / 2,
        }
    }

    /// One round: release everyone, wait for everyone, check the checksum, return the time from
    /// the barrier's release to the last consumer's last receive.
    fn run_round(&self) -> Duration {
        let s = &*self.shared;
        s.started_ns.store(u64::MAX, Relaxed);
        s.finished_ns.store(0, Relaxed);
        s.checksum.store(0, Relaxed);
        s.consumers_left.store(self.consumers, Relaxed);
        s.drained.store(false, Relaxed);

        s.start.wait();
        s.started_ns.fetch_min(s.now_ns(), Relaxed);
        s.done.wait();

        assert_eq!(
            s.checksum.load(Relaxed),
            self.expected_sum,
            "{}: checksum mismatch: messages were lost or duplicated",
            self.name
        );
        assert!(
            s.drained.load(Relaxed),
            "{}: the channel was not empty after a round",
            self.name
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

impl Drop for Pool {
    /// Every worker is waiting at `start` between rounds (also after a failed assert, which only
    /// happens once `done` has been passed): raise `stop`, release them, join them. The
    /// consumers check the disconnection on their way out.
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

fn bench_one<C: Channel>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    flavour: Flavour,
    producers: usize,
    consumers: usize,
) {
    if consumers > 1 && !C::MULTI_CONSUMER {
        return;
    }
    // Created on first use, so a benchmark that the command-line filter skips spawns nothing;
    // criterion calls the closure many times (warm-up, each sample), all on this one pool.
    let mut pool: Option<Pool> = None;
    group.bench_function(C::NAME, |b| {
        let pool = pool.get_or_insert_with(|| Pool::new::<C>(flavour, producers, consumers));
        b.iter_custom(|iters| pool.run(iters));
    });
    drop(pool); // shuts the workers down before the next benchmark's pool starts
}

fn channels(c: &mut Criterion) {
    for flavour in FLAVOURS {
        for (producers, consumers, shape) in SHAPES {
            let name = format!("chan_{}_{shape}{producers}x{consumers}", flavour.name());
            let mut group = c.benchmark_group(name);
            group.throughput(Throughput::Elements(flavour.items()));
            // One round is milliseconds long: run the same number of rounds per sample.
            group.sampling_mode(SamplingMode::Flat);
            bench_one::<Berth>(&mut group, flavour, producers, consumers);
            bench_one::<Crossbeam>(&mut group, flavour, producers, consumers);
            bench_one::<Flume>(&mut group, flavour, producers, consumers);
            bench_one::<Kanal>(&mut group, flavour, producers, consumers);
            bench_one::<Std>(&mut group, flavour, producers, consumers);
            group.finish();
        }
    }
}

/// Default: ~1.5 s of warm-up and measurement per benchmark (`queues.rs` uses 2.5 s, but there
/// are 56 benchmarks here, and criterion's analysis and plots add ~1.5 s to each on a busy
/// 2-core machine). `BENCH_BUDGET=quick`: ~0.75 s per benchmark; `smoke`: ~0.15 s
/// (`berth_bench::Budget`). Command-line flags still override them.
fn config() -> Criterion {
    Budget::from_env().criterion(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = channels
}
criterion_main!(benches);
