//! Waiting, not throughput: what a blocked thread costs and how fast it comes back. Not a
//! criterion benchmark (none of these is a time per iteration); it prints a summary and writes
//! every sample to a JSON file that `report.py` reads.
//!
//! Three workloads, each a group of cases named `group/function` like criterion's ids:
//!
//! - **`wake_{b0,b1,unbounded}`: wake latency.** One receiver thread blocks in `recv` on an
//!   empty channel (`bounded(0)`, `bounded(1)`, `unbounded`); the sending thread waits
//!   [`WAKE_GAP`] after the receiver acknowledged the previous message, so that the receiver is
//!   asleep in the kernel by then, reads the clock and sends that timestamp; the receiver reads
//!   the clock as soon as `recv` returns. Latency = receive time - send time, both from one
//!   `Instant` (`CLOCK_MONOTONIC` on Linux, one clock for both threads). Warm-up messages are
//!   dropped; the rest are all kept. The receiver also records the CPU time of its own thread
//!   across each `recv` (`recv_cpu_ns`: the spinning before it slept plus the wake-up path).
//!   Check: the timestamps arrive strictly increasing (nothing lost, duplicated or reordered).
//! - **`idle_{b0,b1,unbounded}`: idle CPU.** A receiver blocks in `recv` on an empty channel for
//!   an idle period (1 s by default) before one message arrives; its thread CPU time
//!   (`CLOCK_THREAD_CPUTIME_ID`) over that wait, divided by the wall time, is the share of a core
//!   a blocked receiver burns.
//! - **`oversub_{chan_b1,chan_b1024,queue_cap16}`: CPU when oversubscribed.** 8 producers and 8
//!   consumers (16 threads, on a 2-core machine) move `items` values per round through one
//!   channel or queue; threads are spawned once, every round starts at a `Barrier` and its
//!   checksum is asserted, as in `channels.rs`. Per round: wall time (earliest barrier exit to
//!   the last consumer's last receive), the thread CPU time of the producers and of the
//!   consumers over their part of the round, and the process CPU time
//!   (`CLOCK_PROCESS_CPUTIME_ID`) over the timing thread's whole round.
//!
//! Contenders: `berth` (`berth::channel`, and `VyukovQueue` for the queue), `std`
//! (`std::sync::mpsc`: `sync_channel(n)`, `channel()`; it has one `Receiver`, so it sits out the
//! 8:8 runs) and `crossbeam` (crossbeam-channel, and `ArrayQueue` retried with
//! `Backoff::snooze`, as in `queues.rs`). Each library waits its own way.
//!
//! Command line: like criterion's, `cargo bench -p berth-bench --bench wait -- [FILTER]`.
//! FILTER selects cases whose id contains it; `|` separates alternatives and `^`/`$` anchor
//! them (a subset of criterion's regex); `--exact` wants the whole id. `--list` lists the cases,
//! `--test` runs each once with tiny counts and writes nothing. Criterion's other flags are
//! accepted and ignored. Sizes follow `BENCH_BUDGET` (`berth_bench::Budget`; see [`Sizes`]).
//!
//! Output: `$BERTH_WAIT_JSON` if set, else `<cargo target dir>/berth-wait/wait.json` (the
//! target dir is `$CARGO_TARGET_DIR`, else found from this binary's path); rewritten by every
//! run that runs at least one case, and holding only the cases of that run.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Acquire};
use std::sync::atomic::{Ordering::Relaxed, Ordering::Release};
use std::sync::{mpsc, Arc, Barrier};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use berth::VyukovQueue;
use berth_bench::Budget;
use crossbeam_queue::ArrayQueue;
use crossbeam_utils::Backoff;

/// How long the sender waits, once the receiver has acknowledged the previous message, before
/// it sends the next. Every library here spins and yields for microseconds before it sleeps, so
/// after this long the receiver is asleep in the kernel and each sample is a real wake-up.
const WAKE_GAP: Duration = Duration::from_micros(500);

/// How often a thread that waits for the other side's acknowledgement polls (sleeping in
/// between, so that it does not compete with the thread it waits for on a 2-core machine).
const ACK_POLL: Duration = Duration::from_micros(20);

/// The oversubscribed runs: producers and consumers (16 threads for 2 cores).
const OVERSUB_PRODUCERS: usize = 8;
const OVERSUB_CONSUMERS: usize = 8;

/// The message an idle receiver finally gets.
const IDLE_TOKEN: u64 = 0x1D1E;

/// Sample counts and durations, by budget (`BENCH_BUDGET`) or `--test`.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    /// Wake-ups per case dropped as warm-up, then kept.
    wake_warm_up: usize,
    wake_samples: usize,
    /// Idle waits per case, and how long each lasts.
    idle_repeats: usize,
    idle_for: Duration,
    /// Oversubscribed rounds per case dropped as warm-up, then kept.
    oversub_warm_up: usize,
    oversub_rounds: usize,
}

impl Sizes {
    fn new(budget: Budget, test: bool) -> Sizes {
        if test {
            return Sizes {
                wake_warm_up: 1,
                wake_samples: 5,
                idle_repeats: 1,
                idle_for: Duration::from_millis(10),
                oversub_warm_up: 0,
                oversub_rounds: 1,
            };
        }
        Sizes {
            wake_warm_up: budget.pick(10, 100, 500),
            wake_samples: budget.pick(100, 1_000, 5_000),
            idle_repeats: budget.pick(1, 2, 3),
            idle_for: budget.pick(
                Duration::from_millis(100),
                Duration::from_millis(500),
                Duration::from_secs(1),
            ),
            oversub_warm_up: 1,
            oversub_rounds: budget.pick(2, 5, 20),
        }
    }
}

/// CPU time clocks (`clock_gettime`), in nanoseconds.
mod cpu {
    /// Whether the clocks below measure anything on this platform.
    pub const AVAILABLE: bool = cfg!(unix);

    #[cfg(unix)]
    fn read(clock: libc::clockid_t) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable `timespec` that outlives the call, which writes
        // only to it.
        let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime({clock}) failed");
        let secs = u64::try_from(ts.tv_sec).expect("a CPU clock is never negative");
        let nanos = u64::try_from(ts.tv_nsec).expect("a CPU clock is never negative");
        secs * 1_000_000_000 + nanos
    }

    /// CPU time of the calling thread.
    #[cfg(unix)]
    pub fn thread_ns() -> u64 {
        read(libc::CLOCK_THREAD_CPUTIME_ID)
    }

    /// CPU time of the whole process (every thread).
    #[cfg(unix)]
    pub fn process_ns() -> u64 {
        read(libc::CLOCK_PROCESS_CPUTIME_ID)
    }

    #[cfg(not(unix))]
    pub fn thread_ns() -> u64 {
        0
    }

    #[cfg(not(unix))]
    pub fn process_ns() -> u64 {
        0
    }
}

#[derive(Clone, Copy, Debug)]
enum Flavour {
    /// `bounded(capacity)` for channels; a queue of that capacity for queues.
    Bounded(usize),
    Unbounded,
}

impl Flavour {
    fn name(self) -> String {
        match self {
            Flavour::Bounded(capacity) => format!("b{capacity}"),
            Flavour::Unbounded => "unbounded".to_owned(),
        }
    }
}

/// One library's channel or queue: `producers` sending ends and `consumers` receiving ends of
/// one channel, each moved into its own thread, with that library's blocking operations.
trait Contender: 'static {
    /// The function part of the case id.
    const NAME: &'static str;
    type Tx: Send + 'static;
    type Rx: Send + 'static;
    /// `None` where the library lacks the shape (std has a single `Receiver`).
    fn endpoints(flavour: Flavour, producers: usize, consumers: usize) -> Option<Endpoints<Self>>;
    fn send(tx: &mut Self::Tx, value: u64);
    fn recv(rx: &mut Self::Rx) -> u64;
}

/// The sending ends and the receiving ends of one channel or queue.
type Endpoints<C> = (Vec<<C as Contender>::Tx>, Vec<<C as Contender>::Rx>);

const SEND_FAILED: &str = "a send failed: the benchmark's receivers outlive its senders";
const RECV_FAILED: &str = "a recv failed: the benchmark's senders outlive its receivers";

/// `n` clones of a handle, dropping the original.
fn clones<T: Clone>(handle: T, n: usize) -> Vec<T> {
    (0..n).map(|_| handle.clone()).collect()
}

/// `berth::channel`.
struct BerthChan;

impl Contender for BerthChan {
    const NAME: &'static str = "berth";
    type Tx = berth::channel::Sender<u64>;
    type Rx = berth::channel::Receiver<u64>;

    fn endpoints(flavour: Flavour, p: usize, c: usize) -> Option<Endpoints<Self>> {
        let (tx, rx) = match flavour {
            Flavour::Bounded(capacity) => berth::channel::bounded(capacity),
            Flavour::Unbounded => berth::channel::unbounded(),
        };
        Some((clones(tx, p), clones(rx, c)))
    }

    fn send(tx: &mut Self::Tx, value: u64) {
        tx.send(value).expect(SEND_FAILED);
    }

    fn recv(rx: &mut Self::Rx) -> u64 {
        rx.recv().expect(RECV_FAILED)
    }
}

/// crossbeam-channel.
struct CrossbeamChan;

impl Contender for CrossbeamChan {
    const NAME: &'static str = "crossbeam";
    type Tx = crossbeam_channel::Sender<u64>;
    type Rx = crossbeam_channel::Receiver<u64>;

    fn endpoints(flavour: Flavour, p: usize, c: usize) -> Option<Endpoints<Self>> {
        let (tx, rx) = match flavour {
            Flavour::Bounded(capacity) => crossbeam_channel::bounded(capacity),
            Flavour::Unbounded => crossbeam_channel::unbounded(),
        };
        Some((clones(tx, p), clones(rx, c)))
    }

    fn send(tx: &mut Self::Tx, value: u64) {
        tx.send(value).expect(SEND_FAILED);
    }

    fn recv(rx: &mut Self::Rx) -> u64 {
        rx.recv().expect(RECV_FAILED)
    }
}

/// `std::sync::mpsc`: `sync_channel(n)` or `channel()`.
struct StdChan;

#[derive(Clone)]
enum StdSender {
    Bounded(mpsc::SyncSender<u64>),
    Unbounded(mpsc::Sender<u64>),
}

impl Contender for StdChan {
    const NAME: &'static str = "std";
    type Tx = StdSender;
    type Rx = mpsc::Receiver<u64>;

    fn endpoints(flavour: Flavour, p: usize, c: usize) -> Option<Endpoints<Self>> {
        if c != 1 {
            return None;
        }
        let (tx, rx) = match flavour {
            Flavour::Bounded(capacity) => {
                let (tx, rx) = mpsc::sync_channel(capacity);
                (StdSender::Bounded(tx), rx)
            }
            Flavour::Unbounded => {
                let (tx, rx) = mpsc::channel();
                (StdSender::Unbounded(tx), rx)
            }
        };
        Some((clones(tx, p), vec![rx]))
    }

    fn send(tx: &mut Self::Tx, value: u64) {
        match tx {
            StdSender::Bounded(tx) => tx.send(value).expect(SEND_FAILED),
            StdSender::Unbounded(tx) => tx.send(value).expect(SEND_FAILED),
        }
    }

    fn recv(rx: &mut Self::Rx) -> u64 {
        rx.recv().expect(RECV_FAILED)
    }
}

/// `berth::VyukovQueue`, blocking `push`/`pop`.
struct BerthQueue;

impl Contender for BerthQueue {
    const NAME: &'static str = "berth";
    type Tx = Arc<VyukovQueue<u64>>;
    type Rx = Arc<VyukovQueue<u64>>;

    fn endpoints(flavour: Flavour, p: usize, c: usize) -> Option<Endpoints<Self>> {
        let Flavour::Bounded(capacity) = flavour else {
            unreachable!("the queues are bounded")
        };
        let queue = Arc::new(VyukovQueue::new(capacity));
        Some((clones(Arc::clone(&queue), p), clones(queue, c)))
    }

    fn send(tx: &mut Self::Tx, value: u64) {
        tx.push(value)
            .expect("the benchmark never closes the queue");
    }

    fn recv(rx: &mut Self::Rx) -> u64 {
        rx.pop().expect("the benchmark never closes the queue")
    }
}

/// `crossbeam_queue::ArrayQueue`, which cannot block: retried after `Backoff::snooze` (spin,
/// then yield), the backoff reset after each success, as in `queues.rs`.
struct CrossbeamQueue;

impl Contender for CrossbeamQueue {
    const NAME: &'static str = "crossbeam";
    type Tx = (Arc<ArrayQueue<u64>>, Backoff);
    type Rx = (Arc<ArrayQueue<u64>>, Backoff);

    fn endpoints(flavour: Flavour, p: usize, c: usize) -> Option<Endpoints<Self>> {
        let Flavour::Bounded(capacity) = flavour else {
            unreachable!("the queues are bounded")
        };
        let queue = Arc::new(ArrayQueue::new(capacity));
        let txs = (0..p).map(|_| (Arc::clone(&queue), Backoff::new()));
        let rxs = (0..c).map(|_| (Arc::clone(&queue), Backoff::new()));
        Some((txs.collect(), rxs.collect()))
    }

    fn send((queue, backoff): &mut Self::Tx, mut value: u64) {
        while let Err(back) = queue.push(value) {
            value = back;
            backoff.snooze();
        }
        backoff.reset();
    }

    fn recv((queue, backoff): &mut Self::Rx) -> u64 {
        loop {
            if let Some(value) = queue.pop() {
                backoff.reset();
                return value;
            }
            backoff.snooze();
        }
    }
}

/// A worker that panics would leave the others waiting forever; abort instead.
struct AbortOnPanic;

impl Drop for AbortOnPanic {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!("a wait-benchmark thread panicked; aborting rather than deadlocking");
            std::process::abort();
        }
    }
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).expect("a benchmark shorter than 584 years")
}

fn spawn<T: Send + 'static>(
    name: String,
    body: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    thread::Builder::new()
        .name(name)
        .spawn(body)
        .expect("spawn a benchmark thread")
}

/// `wake_*`: latencies (ns) of the kept wake-ups, and the receiver's CPU time across each.
struct Wake {
    latency_ns: Vec<u64>,
    recv_cpu_ns: Vec<u64>,
}

fn wake<C: Contender>(flavour: Flavour, sizes: Sizes) -> Wake {
    let (mut txs, mut rxs) = C::endpoints(flavour, 1, 1).expect("every contender has 1:1");
    let (mut tx, mut rx) = (txs.remove(0), rxs.remove(0));
    let total = sizes.wake_warm_up + sizes.wake_samples;
    let epoch = Instant::now();
    // How many messages the receiver has taken and recorded.
    let acked = Arc::new(AtomicUsize::new(0));
    let receiver = {
        let acked = Arc::clone(&acked);
        spawn(format!("{}-wake-receiver", C::NAME), move || {
            let _guard = AbortOnPanic;
            let mut latency_ns = Vec::with_capacity(total);
            let mut recv_cpu_ns = Vec::with_capacity(total);
            let mut previous = None;
            for i in 0..total {
                let cpu_before = cpu::thread_ns();
                let sent = C::recv(&mut rx);
                let received = nanos(epoch.elapsed());
                let cpu_after = cpu::thread_ns();
                assert!(
                    previous < Some(sent),
                    "{}: timestamps out of order: a message lost, duplicated or reordered",
                    C::NAME
                );
                previous = Some(sent);
                latency_ns.push(received.checked_sub(sent).expect("one monotonic clock"));
                recv_cpu_ns.push(cpu_after - cpu_before);
                acked.store(i + 1, Release);
            }
            Wake {
                latency_ns,
                recv_cpu_ns,
            }
        })
    };
    let _guard = AbortOnPanic;
    for i in 0..total {
        while acked.load(Acquire) < i {
            thread::sleep(ACK_POLL);
        }
        thread::sleep(WAKE_GAP);
        C::send(&mut tx, nanos(epoch.elapsed()));
    }
    let mut wake = receiver
        .join()
        .expect("the receiver aborts rather than panics");
    wake.latency_ns.drain(..sizes.wake_warm_up);
    wake.recv_cpu_ns.drain(..sizes.wake_warm_up);
    wake
}

/// `idle_*`: one blocked receive: the receiver thread's CPU time and the wall time it waited.
struct Idle {
    cpu_ns: u64,
    wall_ns: u64,
}

fn idle<C: Contender>(flavour: Flavour, idle_for: Duration) -> Idle {
    let (mut txs, mut rxs) = C::endpoints(flavour, 1, 1).expect("every contender has 1:1");
    let (mut tx, mut rx) = (txs.remove(0), rxs.remove(0));
    let waiting = Arc::new(AtomicBool::new(false));
    let receiver = {
        let waiting = Arc::clone(&waiting);
        spawn(format!("{}-idle-receiver", C::NAME), move || {
            let _guard = AbortOnPanic;
            waiting.store(true, Release);
            let wall = Instant::now();
            let cpu_before = cpu::thread_ns();
            let value = C::recv(&mut rx);
            let cpu_after = cpu::thread_ns();
            let wall_ns = nanos(wall.elapsed());
            assert_eq!(value, IDLE_TOKEN, "{}: wrong message", C::NAME);
            Idle {
                cpu_ns: cpu_after - cpu_before,
                wall_ns,
            }
        })
    };
    let _guard = AbortOnPanic;
    while !waiting.load(Acquire) {
        thread::sleep(ACK_POLL);
    }
    thread::sleep(idle_for);
    C::send(&mut tx, IDLE_TOKEN);
    receiver
        .join()
        .expect("the receiver aborts rather than panics")
}

/// `oversub_*`: one round.
struct Round {
    /// Earliest barrier exit to the last consumer's last receive.
    wall_ns: u64,
    /// Sum over the producers of their thread CPU time in the round.
    producer_cpu_ns: u64,
    /// Sum over the consumers of their thread CPU time in the round.
    consumer_cpu_ns: u64,
    /// Process CPU time over the timing thread's round (barrier to barrier).
    process_cpu_ns: u64,
    /// The timing thread's round: before the start barrier to after the done barrier.
    round_wall_ns: u64,
}

/// What the oversubscribed pool's threads share. The barriers order every `Relaxed` access:
/// all writes of a round happen before `done`, all resets before `start`.
struct Shared {
    start: Barrier,
    done: Barrier,
    stop: AtomicBool,
    epoch: Instant,
    started_ns: AtomicU64,
    finished_ns: AtomicU64,
    checksum: AtomicU64,
    producer_cpu_ns: AtomicU64,
    consumer_cpu_ns: AtomicU64,
}

impl Shared {
    fn now_ns(&self) -> u64 {
        nanos(self.epoch.elapsed())
    }

    /// Every worker's start of a round; `false` when the pool is shutting down.
    fn begin(&self) -> bool {
        self.start.wait();
        self.started_ns.fetch_min(self.now_ns(), Relaxed);
        !self.stop.load(Relaxed)
    }
}

/// The values of part `i` when `total` is split into `parts` near-equal contiguous parts.
fn split(total: u64, parts: usize, i: usize) -> Range<u64> {
    let (parts, i) = (parts as u64, i as u64);
    total * i / parts..total * (i + 1) / parts
}

/// 8 producers and 8 consumers, spawned once, one round per `round` call.
struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    items: u64,
}

impl Pool {
    fn new<C: Contender>(flavour: Flavour, items: u64) -> Option<Pool> {
        let (txs, rxs) = C::endpoints(flavour, OVERSUB_PRODUCERS, OVERSUB_CONSUMERS)?;
        let parties = OVERSUB_PRODUCERS + OVERSUB_CONSUMERS + 1;
        let shared = Arc::new(Shared {
            start: Barrier::new(parties),
            done: Barrier::new(parties),
            stop: AtomicBool::new(false),
            epoch: Instant::now(),
            started_ns: AtomicU64::new(u64::MAX),
            finished_ns: AtomicU64::new(0),
            checksum: AtomicU64::new(0),
            producer_cpu_ns: AtomicU64::new(0),
            consumer_cpu_ns: AtomicU64::new(0),
        });
        let mut workers = Vec::new();
        for (p, mut tx) in txs.into_iter().enumerate() {
            let shared = Arc::clone(&shared);
            let values = split(items, OVERSUB_PRODUCERS, p);
            workers.push(spawn(format!("{}-producer-{p}", C::NAME), move || {
                let _guard = AbortOnPanic;
                while shared.begin() {
                    let cpu = cpu::thread_ns();
                    for value in values.clone() {
                        C::send(&mut tx, value);
                    }
                    let cpu = cpu::thread_ns() - cpu;
                    shared.producer_cpu_ns.fetch_add(cpu, Relaxed);
                    shared.done.wait();
                }
            }));
        }
        for (c, mut rx) in rxs.into_iter().enumerate() {
            let shared = Arc::clone(&shared);
            let quota = split(items, OVERSUB_CONSUMERS, c).count();
            workers.push(spawn(format!("{}-consumer-{c}", C::NAME), move || {
                let _guard = AbortOnPanic;
                while shared.begin() {
                    let cpu = cpu::thread_ns();
                    let mut sum = 0u64;
                    for _ in 0..quota {
                        sum = sum.wrapping_add(C::recv(&mut rx));
                    }
                    shared.finished_ns.fetch_max(shared.now_ns(), Relaxed);
                    let cpu = cpu::thread_ns() - cpu;
                    shared.consumer_cpu_ns.fetch_add(cpu, Relaxed);
                    shared.checksum.fetch_add(sum, Relaxed);
                    shared.done.wait();
                }
            }));
        }
        Some(Pool {
            shared,
            workers,
            items,
        })
    }

    fn round(&self) -> Round {
        let s = &*self.shared;
        s.started_ns.store(u64::MAX, Relaxed);
        s.finished_ns.store(0, Relaxed);
        s.checksum.store(0, Relaxed);
        s.producer_cpu_ns.store(0, Relaxed);
        s.consumer_cpu_ns.store(0, Relaxed);

        let round_wall = Instant::now();
        let process_cpu = cpu::process_ns();
        s.start.wait();
        s.started_ns.fetch_min(s.now_ns(), Relaxed);
        s.done.wait();
        let process_cpu_ns = cpu::process_ns() - process_cpu;
        let round_wall_ns = nanos(round_wall.elapsed());

        assert_eq!(
            s.checksum.load(Relaxed),
            self.items * (self.items - 1) / 2,
            "checksum mismatch: items were lost or duplicated"
        );
        let (started, finished) = (s.started_ns.load(Relaxed), s.finished_ns.load(Relaxed));
        Round {
            wall_ns: finished
                .checked_sub(started)
                .expect("finished after it started"),
            producer_cpu_ns: s.producer_cpu_ns.load(Relaxed),
            consumer_cpu_ns: s.consumer_cpu_ns.load(Relaxed),
            process_cpu_ns,
            round_wall_ns,
        }
    }
}

impl Drop for Pool {
    /// Every worker waits at `start` between rounds: raise `stop`, release them, join them.
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

/// `None` where the contender lacks the 8:8 shape.
fn oversub<C: Contender>(flavour: Flavour, items: u64, sizes: Sizes) -> Option<Vec<Round>> {
    let pool = Pool::new::<C>(flavour, items)?;
    for _ in 0..sizes.oversub_warm_up {
        pool.round();
    }
    Some((0..sizes.oversub_rounds).map(|_| pool.round()).collect())
}

// ---- cases, summaries and JSON ----

/// A case's result: its JSON fields (after group/function/kind), and a one-line summary.
struct Outcome {
    json: String,
    summary: String,
}

struct Case {
    group: String,
    function: &'static str,
    run: Box<dyn Fn(Sizes) -> Option<Outcome>>,
}

impl Case {
    fn id(&self) -> String {
        format!("{}/{}", self.group, self.function)
    }
}

fn json_array(values: &[u64]) -> String {
    let mut out = String::from("[");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write!(out, "{v}").expect("writing to a String");
    }
    out.push(']');
    out
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    // Nearest rank.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn us(ns: u64) -> String {
    format!("{:.1} µs", ns as f64 / 1e3)
}

fn wake_case<C: Contender>(flavour: Flavour) -> Case {
    Case {
        group: format!("wake_{}", flavour.name()),
        function: C::NAME,
        run: Box::new(move |sizes| {
            let w = wake::<C>(flavour, sizes);
            let mut sorted = w.latency_ns.clone();
            sorted.sort_unstable();
            let mut cpu = w.recv_cpu_ns.clone();
            cpu.sort_unstable();
            Some(Outcome {
                json: format!(
                    "\"warm_up\": {}, \"gap_ns\": {}, \"latency_ns\": {}, \"recv_cpu_ns\": {}",
                    sizes.wake_warm_up,
                    nanos(WAKE_GAP),
                    json_array(&w.latency_ns),
                    json_array(&w.recv_cpu_ns)
                ),
                summary: format!(
                    "p50 {}  p99 {}  max {}  ({} wake-ups; receiver CPU per wait: median {})",
                    us(percentile(&sorted, 50.0)),
                    us(percentile(&sorted, 99.0)),
                    us(*sorted.last().expect("at least one sample")),
                    sorted.len(),
                    us(percentile(&cpu, 50.0)),
                ),
            })
        }),
    }
}

fn idle_case<C: Contender>(flavour: Flavour) -> Case {
    Case {
        group: format!("idle_{}", flavour.name()),
        function: C::NAME,
        run: Box::new(move |sizes| {
            let samples: Vec<Idle> = (0..sizes.idle_repeats)
                .map(|_| idle::<C>(flavour, sizes.idle_for))
                .collect();
            let cpu: Vec<u64> = samples.iter().map(|s| s.cpu_ns).collect();
            let wall: Vec<u64> = samples.iter().map(|s| s.wall_ns).collect();
            let percent: Vec<String> = samples
                .iter()
                .map(|s| format!("{:.3}%", 100.0 * s.cpu_ns as f64 / s.wall_ns as f64))
                .collect();
            Some(Outcome {
                json: format!(
                    "\"idle_for_ns\": {}, \"cpu_ns\": {}, \"wall_ns\": {}",
                    nanos(sizes.idle_for),
                    json_array(&cpu),
                    json_array(&wall)
                ),
                summary: format!(
                    "CPU while blocked: {} of a core (each wait ~{:.2} s)",
                    percent.join(", "),
                    sizes.idle_for.as_secs_f64()
                ),
            })
        }),
    }
}

fn oversub_case<C: Contender>(group: &str, flavour: Flavour, items: u64) -> Case {
    Case {
        group: group.to_owned(),
        function: C::NAME,
        run: Box::new(move |sizes| {
            let rounds = oversub::<C>(flavour, items, sizes)?;
            let field =
                |f: fn(&Round) -> u64| json_array(&rounds.iter().map(f).collect::<Vec<_>>());
            let mut walls: Vec<u64> = rounds.iter().map(|r| r.wall_ns).collect();
            walls.sort_unstable();
            let median = rounds
                .iter()
                .find(|r| r.wall_ns == percentile(&walls, 50.0))
                .expect("the median is one of the rounds");
            let cores = |cpu: u64| cpu as f64 / median.wall_ns as f64;
            Some(Outcome {
                json: format!(
                    "\"producers\": {OVERSUB_PRODUCERS}, \"consumers\": {OVERSUB_CONSUMERS}, \
                     \"items\": {items}, \"warm_up\": {}, \"wall_ns\": {}, \
                     \"producer_cpu_ns\": {}, \"consumer_cpu_ns\": {}, \
                     \"process_cpu_ns\": {}, \"round_wall_ns\": {}",
                    sizes.oversub_warm_up,
                    field(|r| r.wall_ns),
                    field(|r| r.producer_cpu_ns),
                    field(|r| r.consumer_cpu_ns),
                    field(|r| r.process_cpu_ns),
                    field(|r| r.round_wall_ns),
                ),
                summary: format!(
                    "median round {:.3} ms: producers {:.2} + consumers {:.2} cores busy, \
                     {:.0} ns CPU per message ({} rounds)",
                    median.wall_ns as f64 / 1e6,
                    cores(median.producer_cpu_ns),
                    cores(median.consumer_cpu_ns),
                    (median.producer_cpu_ns + median.consumer_cpu_ns) as f64 / items as f64,
                    rounds.len()
                ),
            })
        }),
    }
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let flavours = [Flavour::Bounded(0), Flavour::Bounded(1), Flavour::Unbounded];
    for flavour in flavours {
        cases.push(wake_case::<BerthChan>(flavour));
        cases.push(wake_case::<StdChan>(flavour));
        cases.push(wake_case::<CrossbeamChan>(flavour));
    }
    for flavour in flavours {
        cases.push(idle_case::<BerthChan>(flavour));
        cases.push(idle_case::<StdChan>(flavour));
        cases.push(idle_case::<CrossbeamChan>(flavour));
    }
    let b1 = ("oversub_chan_b1", Flavour::Bounded(1), 20_000);
    let b1024 = ("oversub_chan_b1024", Flavour::Bounded(1024), 100_000);
    for (group, flavour, items) in [b1, b1024] {
        cases.push(oversub_case::<BerthChan>(group, flavour, items));
        cases.push(oversub_case::<CrossbeamChan>(group, flavour, items));
    }
    let queue = ("oversub_queue_cap16", Flavour::Bounded(16), 100_000);
    cases.push(oversub_case::<BerthQueue>(queue.0, queue.1, queue.2));
    cases.push(oversub_case::<CrossbeamQueue>(queue.0, queue.1, queue.2));
    cases
}

/// The command line, read as criterion reads it, as far as this binary cares.
struct Args {
    filters: Vec<String>,
    exact: bool,
    list: bool,
    test: bool,
}

impl Args {
    /// Criterion's (and libtest's) options that take a value, which must not be read as a
    /// filter.
    const WITH_VALUE: [&'static str; 17] = [
        "--save-baseline",
        "-s",
        "--baseline",
        "-b",
        "--baseline-lenient",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--profile-time",
        "--plotting-backend",
        "--output-format",
        "--color",
    ];

    fn parse() -> Args {
        let mut args = Args {
            filters: Vec::new(),
            exact: false,
            list: false,
            test: false,
        };
        let mut argv = std::env::args().skip(1);
        while let Some(arg) = argv.next() {
            match arg.as_str() {
                "--exact" => args.exact = true,
                "--list" => args.list = true,
                "--test" => args.test = true,
                flag if Self::WITH_VALUE.contains(&flag) || flag == "--format" || flag == "-c" => {
                    argv.next();
                }
                flag if flag.starts_with('-') => {} // --bench, --noplot, --quiet, --x=y, ...
                filter => args.filters.push(filter.to_owned()),
            }
        }
        args
    }

    fn selects(&self, id: &str) -> bool {
        if self.filters.is_empty() {
            return true;
        }
        self.filters.iter().any(|filter| {
            if self.exact {
                return filter == id;
            }
            filter.split('|').any(|alternative| {
                let (start, rest) = match alternative.strip_prefix('^') {
                    Some(rest) => (true, rest),
                    None => (false, alternative),
                };
                let (end, needle) = match rest.strip_suffix('$') {
                    Some(needle) => (true, needle),
                    None => (false, rest),
                };
                match (start, end) {
                    (true, true) => id == needle,
                    (true, false) => id.starts_with(needle),
                    (false, true) => id.ends_with(needle),
                    (false, false) => id.contains(needle),
                }
            })
        })
    }
}

fn output_path() -> PathBuf {
    if let Some(path) = std::env::var_os("BERTH_WAIT_JSON") {
        return PathBuf::from(path);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            // <target>/<profile>/deps/wait-<hash>
            let exe = std::env::current_exe().ok()?;
            Some(exe.parent()?.parent()?.parent()?.to_path_buf())
        })
        .unwrap_or_else(|| PathBuf::from("target"));
    target.join("berth-wait").join("wait.json")
}

fn main() {
    let args = Args::parse();
    let budget = Budget::from_env();
    let sizes = Sizes::new(budget, args.test);
    let selected: Vec<Case> = cases()
        .into_iter()
        .filter(|case| args.selects(&case.id()))
        .collect();
    if args.list {
        for case in &selected {
            println!("{}: wait", case.id());
        }
        return;
    }
    if selected.is_empty() {
        return;
    }
    let started = Instant::now();
    let mut entries = Vec::new();
    for case in &selected {
        let id = case.id();
        match (case.run)(sizes) {
            Some(outcome) => {
                println!("{id:<32} {}", outcome.summary);
                entries.push(format!(
                    "    {{\"group\": \"{}\", \"function\": \"{}\", {}}}",
                    case.group, case.function, outcome.json
                ));
            }
            None => println!("{id:<32} skipped: this contender lacks the shape"),
        }
    }
    println!(
        "wait: {} cases in {:.1} s",
        entries.len(),
        started.elapsed().as_secs_f64()
    );
    if args.test {
        return;
    }
    let unix_time = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let json = format!(
        "{{\n  \"schema\": \"berth-wait/1\",\n  \"budget\": \"{}\",\n  \
         \"unix_time\": {unix_time},\n  \"cpu_clocks\": {},\n  \"wake_gap_ns\": {},\n  \
         \"cases\": [\n{}\n  ]\n}}\n",
        budget.name(),
        cpu::AVAILABLE,
        nanos(WAKE_GAP),
        entries.join(",\n")
    );
    let path = output_path();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create the output directory");
    }
    std::fs::write(&path, json).expect("write the wait samples");
    println!("wait: samples written to {}", path.display());
}
