//! Throughput of `berth::select!` against `crossbeam_channel::select!`, moving `u64`s through
//! four channels of one flavour, modelled on crossbeam-channel's own benchmarks `select_rx` and
//! `select_both` (crossbeam-channel/benchmarks/crossbeam-channel.rs):
//!
//! - **`select_rx`**: 4 producers, each sending with a plain blocking `send` on its own channel;
//!   1 consumer receiving every message with a `select!` over the 4 receivers (`recv` arms).
//! - **`select_both`**: 4 producers, each sending every message with a `select!` over the 4
//!   senders (`send` arms); 4 consumers, each receiving with a `select!` over the 4 receivers.
//!
//! One criterion group per (benchmark, flavour), named `select_rx_{flavour}` and
//! `select_both_{flavour}` (flavours `b0` = `bounded(0)`, `b1024` = `bounded(1024)`,
//! `unbounded`), with the functions `berth` and `crossbeam`. Both libraries run the same
//! `select!` source text (four fixed arms), each through its own macro. Methodology, the same as
//! `channels.rs`:
//!
//! - the worker threads are spawned once per benchmark (a persistent pool), never per iteration;
//!   the four channels are created with the pool and every worker owns its own `Sender`s or
//!   `Receiver`s for the whole benchmark (the timing thread holds none);
//! - every iteration ("round") starts with all workers and the timing thread meeting at a
//!   `Barrier`; the clock starts at the earliest moment any participant leaves that barrier and
//!   stops at the moment the last consumer has received its last message (`iter_custom`);
//! - each round's checksum (sum of every received value) is asserted against the expected sum,
//!   and all four channels are asserted empty (`try_recv` reports "empty", not a message and not
//!   a disconnection), so a select that loses or duplicates messages cannot post a time;
//! - the pool is shut down when the benchmark ends: a stop flag and the barrier release the
//!   workers, the producers return (dropping every `Sender`), and each consumer then asserts,
//!   first through a `select!` (`default(DISCONNECT_TIMEOUT)`), then with `recv_timeout` on each
//!   receiver, that the channels report the disconnection, before the threads are joined.
//!
//! An iteration moves the values `0..items` (split into contiguous ranges, one per producer;
//! each consumer receives a fixed share): `items` = 100_000 for `bounded(1024)` and `unbounded`,
//! 5_000 for `bounded(0)` (see `Flavour::items`). The channels live as long as the pool, so
//! `unbounded` is measured in its steady state, not its first allocations.
//!
//! `BENCH_BUDGET=quick` (or `smoke`) shortens the measurement; `-- --test` runs every benchmark
//! once.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::AcqRel, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use berth_bench::Budget;
use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};

/// How long a consumer waits, at shutdown, for its receivers to report that every `Sender` is
/// gone. The producers drop theirs immediately, so a correct channel answers at once.
const DISCONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Channels per benchmark, i.e. arms per `select!` (written out in each macro call below).
const CHANNELS: usize = 4;

#[derive(Clone, Copy, Debug)]
enum Flavour {
    /// `bounded(capacity)`; `bounded(0)` is a rendezvous channel in both libraries.
    Bounded(usize),
    Unbounded,
}

const FLAVOURS: [Flavour; 3] = [
    Flavour::Bounded(0),
    Flavour::Bounded(1024),
    Flavour::Unbounded,
];

impl Flavour {
    /// The group-name suffix: `b0`, `b1024`, `unbounded` (as in `channels.rs`).
    fn name(self) -> String {
        match self {
            Flavour::Bounded(capacity) => format!("b{capacity}"),
            Flavour::Unbounded => "unbounded".to_owned(),
        }
    }

    /// Messages moved per iteration: through a rendezvous channel every message is a hand-off
    /// between threads, so `bounded(0)` moves 5_000 (as in `channels.rs`), the others 100_000.
    fn items(self) -> u64 {
        match self {
            Flavour::Bounded(0) => 5_000,
            Flavour::Bounded(_) | Flavour::Unbounded => 100_000,
        }
    }
}

/// The two benchmarks (crossbeam-channel's names).
#[derive(Clone, Copy, Debug)]
enum Bench {
    /// 4 producers, each `send`ing on its own channel; 1 consumer `select!`ing a receive.
    SelectRx,
    /// 4 producers `select!`ing a send, 4 consumers `select!`ing a receive, over 4 channels.
    SelectBoth,
}

const BENCHES: [Bench; 2] = [Bench::SelectRx, Bench::SelectBoth];

impl Bench {
    fn name(self) -> &'static str {
        match self {
            Bench::SelectRx => "select_rx",
            Bench::SelectBoth => "select_both",
        }
    }

    /// (producers, consumers).
    fn shape(self) -> (usize, usize) {
        match self {
            Bench::SelectRx => (CHANNELS, 1),
            Bench::SelectBoth => (CHANNELS, CHANNELS),
        }
    }
}

/// One library's channels and `select!`, behind one interface. Every operation is that
/// library's own blocking one; the handles are moved into the worker threads.
trait Channel: 'static {
    /// The criterion function id.
    const NAME: &'static str;
    type Tx: Clone + Send + 'static;
    type Rx: Clone + Send + 'static;
    fn new(flavour: Flavour) -> (Self::Tx, Self::Rx);
    /// A plain blocking `send` (the `select_rx` producers).
    fn send(tx: &Self::Tx, value: u64);
    /// Sends `value` on whichever channel a `select!` over the four `send`s picks.
    fn select_send(txs: &[Self::Tx; CHANNELS], value: u64);
    /// Receives one message with a `select!` over the four `recv`s.
    fn select_recv(rxs: &[Self::Rx; CHANNELS]) -> u64;
    /// A `select!` over the four `recv`s reports a disconnection within `timeout`.
    fn select_disconnected(rxs: &[Self::Rx; CHANNELS], timeout: Duration) -> bool;
    /// A `try_recv` finds the channel empty (and still connected).
    fn is_drained(rx: &Self::Rx) -> bool;
    /// A blocking receive reports that every sender is gone (waiting up to `timeout`).
    fn is_disconnected(rx: &Self::Rx, timeout: Duration) -> bool;
}

const SEND_FAILED: &str = "a send failed: the benchmark's receivers outlive its senders";
const RECV_FAILED: &str = "a receive failed: the benchmark's senders outlive its rounds";

/// `berth::channel` and `berth::select!`.
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

    #[inline]
    fn send(tx: &Self::Tx, value: u64) {
        tx.send(value).expect(SEND_FAILED);
    }

    #[inline]
    fn select_send(txs: &[Self::Tx; CHANNELS], value: u64) {
        berth::select! {
            send(txs[0], value) -> res => res.expect(SEND_FAILED),
            send(txs[1], value) -> res => res.expect(SEND_FAILED),
            send(txs[2], value) -> res => res.expect(SEND_FAILED),
            send(txs[3], value) -> res => res.expect(SEND_FAILED),
        }
    }

    #[inline]
    fn select_recv(rxs: &[Self::Rx; CHANNELS]) -> u64 {
        berth::select! {
            recv(rxs[0]) -> msg => msg.expect(RECV_FAILED),
            recv(rxs[1]) -> msg => msg.expect(RECV_FAILED),
            recv(rxs[2]) -> msg => msg.expect(RECV_FAILED),
            recv(rxs[3]) -> msg => msg.expect(RECV_FAILED),
        }
    }

    fn select_disconnected(rxs: &[Self::Rx; CHANNELS], timeout: Duration) -> bool {
        berth::select! {
            recv(rxs[0]) -> msg => msg.is_err(),
            recv(rxs[1]) -> msg => msg.is_err(),
            recv(rxs[2]) -> msg => msg.is_err(),
            recv(rxs[3]) -> msg => msg.is_err(),
            default(timeout) => false,
        }
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

/// `crossbeam_channel` and `crossbeam_channel::select!`.
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

    #[inline]
    fn send(tx: &Self::Tx, value: u64) {
        tx.send(value).expect(SEND_FAILED);
    }

    #[inline]
    fn select_send(txs: &[Self::Tx; CHANNELS], value: u64) {
        crossbeam_channel::select! {
            send(txs[0], value) -> res => res.expect(SEND_FAILED),
            send(txs[1], value) -> res => res.expect(SEND_FAILED),
            send(txs[2], value) -> res => res.expect(SEND_FAILED),
            send(txs[3], value) -> res => res.expect(SEND_FAILED),
        }
    }

    #[inline]
    fn select_recv(rxs: &[Self::Rx; CHANNELS]) -> u64 {
        crossbeam_channel::select! {
            recv(rxs[0]) -> msg => msg.expect(RECV_FAILED),
            recv(rxs[1]) -> msg => msg.expect(RECV_FAILED),
            recv(rxs[2]) -> msg => msg.expect(RECV_FAILED),
            recv(rxs[3]) -> msg => msg.expect(RECV_FAILED),
        }
    }

    fn select_disconnected(rxs: &[Self::Rx; CHANNELS], timeout: Duration) -> bool {
        crossbeam_channel::select! {
            recv(rxs[0]) -> msg => msg.is_err(),
            recv(rxs[1]) -> msg => msg.is_err(),
            recv(rxs[2]) -> msg => msg.is_err(),
            recv(rxs[3]) -> msg => msg.is_err(),
            default(timeout) => false,
        }
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

/// What a producer sends on.
enum Outlet<C: Channel> {
    /// `select_rx`: its own channel, with a plain `send`.
    Own(C::Tx),
    /// `select_both`: all four channels, through a `select!`.
    All([C::Tx; CHANNELS]),
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
    /// Whether all four channels were empty once every consumer had its quota.
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

/// Owns its `Sender`s for the whole benchmark and drops them when the pool stops.
fn producer<C: Channel>(shared: &Shared, outlet: Outlet<C>, values: Range<u64>) {
    let _guard = AbortOnPanic;
    loop {
        shared.start.wait();
        shared.started_ns.fetch_min(shared.now_ns(), Relaxed);
        if shared.stop.load(Relaxed) {
            return; // drops the senders; the last producer to return disconnects the channels
        }
        match &outlet {
            Outlet::Own(tx) => {
                for value in values.clone() {
                    C::send(tx, value);
                }
            }
            Outlet::All(txs) => {
                for value in values.clone() {
                    C::select_send(txs, value);
                }
            }
        }
        shared.done.wait();
    }
}

/// Owns a `Receiver` of each channel for the whole benchmark; receives exactly `quota` messages
/// per round, each through a `select!` over the four.
fn consumer<C: Channel>(shared: &Shared, rxs: [C::Rx; CHANNELS], quota: usize) {
    let _guard = AbortOnPanic;
    loop {
        shared.start.wait();
        shared.started_ns.fetch_min(shared.now_ns(), Relaxed);
        if shared.stop.load(Relaxed) {
            // Every producer returns now, dropping the last senders: the channels must say so,
            // to a select (which may have to be woken by the disconnection) and to each receiver.
            assert!(
                C::select_disconnected(&rxs, DISCONNECT_TIMEOUT),
                "{}: a select! over the receivers did not report the disconnection within \
                 {DISCONNECT_TIMEOUT:?} of the last sender's drop",
                C::NAME
            );
            for rx in &rxs {
                assert!(
                    C::is_disconnected(rx, DISCONNECT_TIMEOUT),
                    "{}: a receiver did not report the disconnection within \
                     {DISCONNECT_TIMEOUT:?} of the last sender's drop",
                    C::NAME
                );
            }
            return;
        }
        let mut sum = 0u64;
        for _ in 0..quota {
            sum += C::select_recv(&rxs);
        }
        shared.finished_ns.fetch_max(shared.now_ns(), Relaxed);
        shared.checksum.fetch_add(sum, Relaxed);
        // The last consumer to finish checks (untimed) that nothing is left in any channel.
        if shared.consumers_left.fetch_sub(1, AcqRel) == 1 {
            let drained = rxs.iter().all(C::is_drained);
            shared.drained.store(drained, Relaxed);
        }
        shared.done.wait();
    }
}

/// The producers and consumers of one benchmark on four channels, spawned once, running one
/// round per `run_round` call.
struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    name: &'static str,
    consumers: usize,
    expected_sum: u64,
}

impl Pool {
    fn new<C: Channel>(bench: Bench, flavour: Flavour) -> Self {
        let (producers, consumers) = bench.shape();
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
        let (txs, rxs): (Vec<C::Tx>, Vec<C::Rx>) = (0..CHANNELS).map(|_| C::new(flavour)).unzip();
        let txs: [C::Tx; CHANNELS] = txs.try_into().ok().expect("CHANNELS senders");
        let rxs: [C::Rx; CHANNELS] = rxs.try_into().ok().expect("CHANNELS receivers");
        let mut workers = Vec::with_capacity(producers + consumers);
        // Every worker gets clones; the originals are dropped at the end of this function, so
        // that only the workers hold handles (the last sender drop disconnects).
        for p in 0..producers {
            let shared = Arc::clone(&shared);
            let values = split(items, producers, p);
            let outlet = match bench {
                Bench::SelectRx => Outlet::<C>::Own(txs[p].clone()),
                Bench::SelectBoth => Outlet::<C>::All(txs.clone()),
            };
            workers.push(
                thread::Builder::new()
                    .name(format!("{}-producer-{p}", C::NAME))
                    .spawn(move || producer::<C>(&shared, outlet, values))
                    .expect("spawn a producer"),
            );
        }
        for c in 0..consumers {
            let shared = Arc::clone(&shared);
            let quota = split(items, consumers, c).count();
            let rxs = rxs.clone();
            workers.push(
                thread::Builder::new()
                    .name(format!("{}-consumer-{c}", C::NAME))
                    .spawn(move || consumer::<C>(&shared, rxs, quota))
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
            "{}: a channel was not empty after a round",
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

fn bench_one<C: Channel>(group: &mut BenchmarkGroup<'_, WallTime>, bench: Bench, flavour: Flavour) {
    // Created on first use, so a benchmark that the command-line filter skips spawns nothing;
    // criterion calls the closure many times (warm-up, each sample), all on this one pool.
    let mut pool: Option<Pool> = None;
    group.bench_function(C::NAME, |b| {
        let pool = pool.get_or_insert_with(|| Pool::new::<C>(bench, flavour));
        b.iter_custom(|iters| pool.run(iters));
    });
    drop(pool); // shuts the workers down before the next benchmark's pool starts
}

fn selects(c: &mut Criterion) {
    for bench in BENCHES {
        for flavour in FLAVOURS {
            let name = format!("{}_{}", bench.name(), flavour.name());
            let mut group = c.benchmark_group(name);
            group.throughput(Throughput::Elements(flavour.items()));
            // One round is milliseconds long: run the same number of rounds per sample.
            group.sampling_mode(SamplingMode::Flat);
            bench_one::<Berth>(&mut group, bench, flavour);
            bench_one::<Crossbeam>(&mut group, bench, flavour);
            group.finish();
        }
    }
}

/// Default: ~2.5 s of warm-up and measurement per benchmark, as `queues.rs` (12 benchmarks
/// here). `BENCH_BUDGET=quick`: ~0.75 s per benchmark; `smoke`: ~0.15 s (`berth_bench::Budget`).
/// Command-line flags still override them.
fn config() -> Criterion {
    Budget::from_env().criterion(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = selects
}
criterion_main!(benches);
