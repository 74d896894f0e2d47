//! shuttle models: more threads and more operations than loom can explore exhaustively, under
//! shuttle's random and PCT schedulers. Build with `--cfg shuttle` (`make shuttle`).
//!
//! Budget: `SHUTTLE_ITERATIONS` schedules per scheduler (default 200; `make verify` uses more).
//! A failure prints shuttle's encoded schedule; rerun exactly that schedule with
//! `SHUTTLE_REPLAY='<schedule>' make shuttle SHUTTLE_TEST=<test name>` (see models/README.md).
//!
//! Shuttle does not model weak memory (loom does); it is here for the schedules loom cannot
//! reach, such as two consumers waiting on a producer paused in the middle of a push.
#![cfg(shuttle)]

use berth::channel;
use berth::VyukovQueue;
use berth_models::trace;
use shuttle::thread;
use std::sync::Arc;

fn iterations() -> usize {
    std::env::var("SHUTTLE_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

/// Runs `f` under the random and the PCT scheduler, or replays one schedule.
fn check(f: impl Fn() + Send + Sync + Clone + 'static) {
    if let Ok(schedule) = std::env::var("SHUTTLE_REPLAY") {
        shuttle::replay(f, &schedule);
        return;
    }
    shuttle::check_random(f.clone(), iterations());
    shuttle::check_pct(f, iterations(), 3);
}

/// Runs `f` under the random scheduler only, or replays one schedule: for models where a thread
/// spin-waits (yielding) on another thread paused mid-operation. PCT keeps a low-priority paused
/// thread off the CPU for as long as a higher-priority one keeps yielding, which no real
/// scheduler does, and reports `exceeded max_steps`.
fn check_random_only(f: impl Fn() + Send + Sync + Clone + 'static) {
    if let Ok(schedule) = std::env::var("SHUTTLE_REPLAY") {
        shuttle::replay(f, &schedule);
        return;
    }
    shuttle::check_random(f, 10 * iterations());
}

/// The schedule loom cannot explore: two consumers blocked on an empty 2-slot queue while the
/// producer may pause between claiming a slot and publishing it.
#[test]
fn vyukov_two_consumers_against_a_mid_push_producer() {
    check(|| {
        let q = Arc::new(VyukovQueue::new(2));
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let q = Arc::clone(&q);
                thread::spawn(move || q.pop().unwrap())
            })
            .collect();
        q.push(1u32).unwrap();
        q.push(2u32).unwrap();
        let mut got: Vec<u32> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, [1, 2], "an element was taken twice or lost: {got:?}");
    });
}

/// 3 producers x 3 values through 2 slots to 3 consumers: exactly once, per-producer FIFO.
#[test]
fn vyukov_three_by_three_exactly_once() {
    check(|| {
        let q = Arc::new(VyukovQueue::new(2));
        let producers: Vec<_> = (0..3u32)
            .map(|p| {
                let q = Arc::clone(&q);
                thread::spawn(move || {
                    for i in 0..3 {
                        q.push(p * 10 + i).unwrap();
                    }
                })
            })
            .collect();
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let q = Arc::clone(&q);
                thread::spawn(move || (0..3).map(|_| q.pop().unwrap()).collect::<Vec<u32>>())
            })
            .collect();
        for p in producers {
            p.join().unwrap();
        }
        let mut all = Vec::new();
        for c in consumers {
            let got = c.join().unwrap();
            for p in 0..3 {
                let mine: Vec<u32> = got.iter().copied().filter(|v| v / 10 == p).collect();
                assert!(
                    mine.windows(2).all(|w| w[0] < w[1]),
                    "producer {p} reordered: {got:?}"
                );
            }
            all.extend(got);
        }
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2, 10, 11, 12, 20, 21, 22], "exactly once");
    });
}

/// How many times the producer of [`vyukov_blocked_consumer_gives_way`] yields before it
/// pushes, and the step bound of that model: a consumer that parks takes a few dozen steps in
/// all, one that keeps yielding takes about as many steps as the producer.
const PRODUCER_YIELDS: usize = 2_000;
const WAITER_STEP_BOUND: usize = 3_000;

/// A consumer blocked on an empty queue must sleep, not take turns on the CPU. The producer
/// yields `PRODUCER_YIELDS` times before it pushes; shuttle's random scheduler gives a runnable
/// thread a turn at about every other step. A consumer that spins briefly and then parks is not
/// runnable while the producer works, and the execution takes about `PRODUCER_YIELDS` steps. The
/// mutant `wait_never_parks` yields forever instead of parking (the reference post's first
/// queue, whose idle consumer burned a core): the consumer stays runnable, takes about half the
/// steps, and the execution passes `WAITER_STEP_BOUND`, which shuttle reports as "exceeded
/// max_steps bound". The real-thread test `vyukov::idle_consumer_sleeps` measures the same thing
/// as CPU time.
#[test]
fn vyukov_blocked_consumer_gives_way() {
    let f = || {
        trace::start();
        let q = Arc::new(VyukovQueue::new(2));
        let q2 = Arc::clone(&q);
        let consumer = thread::spawn(move || {
            trace::record("pop starts (the queue is empty)", ());
            let r = q2.pop();
            trace::record("pop", r);
            r
        });
        let producer = thread::spawn(move || {
            for i in 1..=PRODUCER_YIELDS {
                thread::yield_now();
                if i % 500 == 0 {
                    trace::record("yield_now, times so far", i);
                }
            }
            let r = q.push(7u32);
            trace::record("push", r);
        });
        producer.join().unwrap();
        assert_eq!(consumer.join().unwrap(), Ok(7));
    };
    if let Ok(schedule) = std::env::var("SHUTTLE_REPLAY") {
        shuttle::replay(f, &schedule);
        return;
    }
    let mut config = shuttle::Config::new();
    config.max_steps = shuttle::MaxSteps::FailAfter(WAITER_STEP_BOUND);
    let scheduler = shuttle::scheduler::RandomScheduler::new(iterations());
    shuttle::Runner::new(scheduler, config).run(f);
}

/// Close while two pushers and two poppers may be asleep on a 1-slot queue: everyone wakes,
/// every value is either popped or handed back, none twice.
#[test]
fn vyukov_close_wakes_everyone() {
    check(|| {
        let q = Arc::new(VyukovQueue::new(1));
        let pushers: Vec<_> = (0..2u32)
            .map(|v| {
                let q = Arc::clone(&q);
                thread::spawn(move || q.push(v).err().map(|e| e.into_inner()))
            })
            .collect();
        let poppers: Vec<_> = (0..2)
            .map(|_| {
                let q = Arc::clone(&q);
                thread::spawn(move || q.pop().ok())
            })
            .collect();
        q.close();
        let mut seen: Vec<u32> = pushers
            .into_iter()
            .filter_map(|p| p.join().unwrap())
            .collect();
        seen.extend(poppers.into_iter().filter_map(|c| c.join().unwrap()));
        while let Ok(v) = q.try_pop() {
            seen.push(v);
        }
        seen.sort_unstable();
        assert_eq!(seen, [0, 1], "a value was lost or duplicated");
    });
}

/// Three flavours, 3 producers x 3 messages, 3 consumers, disconnect when the senders go.
fn channel_exactly_once(make: fn() -> (channel::Sender<u32>, channel::Receiver<u32>)) {
    check(move || {
        let (tx, rx) = make();
        let producers: Vec<_> = (0..3u32)
            .map(|p| {
                let tx = tx.clone();
                thread::spawn(move || {
                    for i in 0..3 {
                        tx.send(p * 10 + i).unwrap();
                    }
                })
            })
            .collect();
        drop(tx);
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let rx = rx.clone();
                thread::spawn(move || rx.iter().collect::<Vec<u32>>())
            })
            .collect();
        drop(rx);
        for p in producers {
            p.join().unwrap();
        }
        let mut all: Vec<u32> = consumers
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2, 10, 11, 12, 20, 21, 22], "exactly once");
    });
}

#[test]
fn channel_bounded_exactly_once() {
    channel_exactly_once(|| channel::bounded(2));
}

#[test]
fn channel_unbounded_exactly_once() {
    channel_exactly_once(channel::unbounded);
}

#[test]
fn channel_rendezvous_exactly_once() {
    channel_exactly_once(|| channel::bounded(0));
}

/// The last receiver goes while three senders send: every send that returned `Ok` was either
/// received or dropped with the channel (counted), and no send succeeds after the receiver saw
/// the disconnect.
#[test]
fn channel_receiver_drop_races_senders() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }
    check(|| {
        let dropped = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = channel::bounded::<Counted>(2);
        let senders: Vec<_> = (0..3)
            .map(|_| {
                let tx = tx.clone();
                let dropped = Arc::clone(&dropped);
                thread::spawn(move || {
                    let mut ok = 0;
                    for _ in 0..2 {
                        match tx.send(Counted(Arc::clone(&dropped))) {
                            Ok(()) => ok += 1,
                            Err(e) => drop(e.into_inner()),
                        }
                    }
                    ok
                })
            })
            .collect();
        drop(tx);
        let mut received = 0;
        if let Ok(m) = rx.recv() {
            received += 1;
            drop(m);
        }
        drop(rx);
        let sent_ok: usize = senders.into_iter().map(|s| s.join().unwrap()).sum();
        // Every message constructed was dropped exactly once: 6 in all.
        assert_eq!(
            dropped.load(SeqCst),
            6,
            "a message leaked or was dropped twice"
        );
        assert!(received <= sent_ok);
    });
}

/// Values go out through one SPSC ring and come back through another (the shape of a node
/// pool): nothing lost or duplicated, and both threads finish.
#[test]
fn spsc_round_trips() {
    check(|| {
        let (mut out_tx, mut out_rx) = berth::spsc::channel::<u32>(1);
        let (mut back_tx, mut back_rx) = berth::spsc::channel::<u32>(2);
        let worker = thread::spawn(move || {
            while let Ok(v) = out_rx.pop() {
                back_tx.push(v * 2).unwrap();
            }
        });
        let mut got = Vec::new();
        for i in 0..4 {
            out_tx.push(i).unwrap();
            if i % 2 == 1 {
                got.push(back_rx.pop().unwrap());
                got.push(back_rx.pop().unwrap());
            }
        }
        drop(out_tx);
        worker.join().unwrap();
        assert!(back_rx.pop().is_err());
        assert_eq!(got, [0, 2, 4, 6]);
    });
}

/// SCQ with one slot, three producers and three consumers: the threshold hole's scenario; every
/// value must be delivered. This model found a lost wakeup in berth's first SCQ: a sleeper took
/// D4's "empty" as definitive although a producer had claimed position `H + 1` between the
/// consumer's tail read and its catchup.
#[cfg(target_pointer_width = "64")]
#[test]
fn scq_capacity_1_three_by_three() {
    check_random_only(|| {
        let q = Arc::new(berth::ScqQueue::new(1));
        let producers: Vec<_> = (0..3u32)
            .map(|p| {
                let q = Arc::clone(&q);
                thread::spawn(move || {
                    for i in 0..2 {
                        q.push(p * 10 + i).unwrap();
                    }
                })
            })
            .collect();
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let q = Arc::clone(&q);
                thread::spawn(move || (0..2).map(|_| q.pop().unwrap()).collect::<Vec<u32>>())
            })
            .collect();
        for p in producers {
            p.join().unwrap();
        }
        let mut all: Vec<u32> = consumers
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(all, [0, 1, 10, 11, 20, 21], "exactly once");
    });
}

/// How many times a thread of `scq_two_by_two_exactly_once_fifo` retries a `try_push` that found
/// the queue full, or a `try_pop` that found it empty, before it gives up on that value (or
/// stops popping). Bounded so that the PCT scheduler, which runs a high-priority thread for as
/// long as it can, cannot starve a low-priority producer paused mid-push: the threads that wait
/// for it run out of retries and finish.
#[cfg(target_pointer_width = "64")]
const SCQ_RETRIES: usize = 12;

/// SCQ under the PCT scheduler as well as the random one: two producers push three values each
/// and two consumers pop, through one slot, with `try_push`/`try_pop` retried a bounded number of
/// times (the blocking calls' passive wait spins on a paused producer, which PCT starves: see
/// `scq_capacity_1_three_by_three`). Every value whose push succeeded is popped exactly once, by
/// a consumer or by the final drain, and no refused value ever is (a refused push hands its own
/// value back); each consumer sees each producer's values in order, and the drain finds only
/// values later than any a consumer popped (per-producer FIFO).
#[cfg(target_pointer_width = "64")]
#[test]
fn scq_two_by_two_exactly_once_fifo() {
    check(|| {
        let q = Arc::new(berth::ScqQueue::new(1));
        let producers: Vec<_> = (0..2u32)
            .map(|p| {
                let q = Arc::clone(&q);
                thread::spawn(move || {
                    let mut pushed = Vec::new();
                    for i in 0..3 {
                        let mut value = p * 10 + i;
                        for _ in 0..SCQ_RETRIES {
                            match q.try_push(value) {
                                Ok(()) => {
                                    pushed.push(p * 10 + i);
                                    break;
                                }
                                Err(e) => {
                                    assert!(e.is_full(), "an open queue refused a push: {e:?}");
                                    value = e.into_inner();
                                    assert_eq!(
                                        value,
                                        p * 10 + i,
                                        "a refused push handed back another value"
                                    );
                                    thread::yield_now();
                                }
                            }
                        }
                    }
                    pushed
                })
            })
            .collect();
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let q = Arc::clone(&q);
                thread::spawn(move || {
                    let mut got = Vec::new();
                    let mut misses = 0;
                    while misses < SCQ_RETRIES {
                        match q.try_pop() {
                            Ok(v) => got.push(v),
                            Err(e) => {
                                assert!(e.is_empty(), "an open queue said {e:?}");
                                misses += 1;
                                thread::yield_now();
                            }
                        }
                    }
                    got
                })
            })
            .collect();
        let mut pushed: Vec<u32> = producers
            .into_iter()
            .flat_map(|p| p.join().unwrap())
            .collect();
        let popped: Vec<Vec<u32>> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
        let mut drained = Vec::new();
        while let Ok(v) = q.try_pop() {
            drained.push(v);
        }
        for p in 0..2 {
            let of_p = |vs: &[u32]| {
                vs.iter()
                    .copied()
                    .filter(|v| v / 10 == p)
                    .collect::<Vec<_>>()
            };
            for got in &popped {
                let mine = of_p(got);
                assert!(
                    mine.windows(2).all(|w| w[0] < w[1]),
                    "producer {p} reordered for one consumer: {got:?}"
                );
            }
            let last_popped = popped.iter().flat_map(|g| of_p(g)).max();
            let first_drained = of_p(&drained).into_iter().min();
            if let (Some(a), Some(b)) = (last_popped, first_drained) {
                assert!(
                    a < b,
                    "producer {p}: {b} was still inside after {a} was popped: {popped:?}, drained {drained:?}"
                );
            }
        }
        let mut all: Vec<u32> = popped.into_iter().flatten().chain(drained).collect();
        all.sort_unstable();
        pushed.sort_unstable();
        assert_eq!(all, pushed, "exactly once: popped vs pushed");
    });
}

/// A scheduler for one shape of schedule that neither the random nor the PCT scheduler reaches
/// in any useful number of runs: `workers-*` threads advance in lockstep (one scheduling step
/// each in turn, by task id), and the thread named `injected` runs its whole operation, without
/// being preempted, between two of those steps. Execution `i` injects after the workers' `i`-th
/// step; the scheduler runs `i = 0, 1, 2, ...` until the workers finish before the injection
/// point, so every injection point is tried once. Any other thread (the test's main thread) runs
/// whenever it can, which keeps the set-up and the final checks out of the interleaving.
///
/// Deterministic: it explores the same executions every run, whatever `SHUTTLE_ITERATIONS` says.
#[cfg(target_pointer_width = "64")]
struct LockstepInjection {
    inject_at: usize,
    steps: usize,
    last_worker: Option<shuttle::scheduler::TaskId>,
    /// Set when an execution's workers all finished before the injection point: the last one.
    exhausted: bool,
    started: bool,
    data: shuttle::scheduler::RandomDataSource,
}

#[cfg(target_pointer_width = "64")]
impl LockstepInjection {
    fn new() -> Self {
        use shuttle::scheduler::DataSource;
        LockstepInjection {
            inject_at: 0,
            steps: 0,
            last_worker: None,
            exhausted: false,
            started: false,
            data: shuttle::scheduler::RandomDataSource::initialize(0),
        }
    }

    /// Runs `f` once for every injection point, under shuttle (or replays one schedule).
    fn explore(f: impl Fn() + Send + Sync + 'static) {
        if let Ok(schedule) = std::env::var("SHUTTLE_REPLAY") {
            shuttle::replay(f, &schedule);
            return;
        }
        shuttle::Runner::new(Self::new(), shuttle::Config::default()).run(f);
    }
}

#[cfg(target_pointer_width = "64")]
impl shuttle::scheduler::Scheduler for LockstepInjection {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        use shuttle::scheduler::DataSource;
        if self.exhausted {
            return None;
        }
        if self.started {
            self.inject_at += 1;
        }
        self.started = true;
        self.steps = 0;
        self.last_worker = None;
        Some(shuttle::scheduler::Schedule::new(self.data.reinitialize()))
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        _current: Option<shuttle::scheduler::TaskId>,
        _is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        let name = |t: &shuttle::scheduler::Task| t.name().unwrap_or_default();
        if let Some(t) = runnable
            .iter()
            .find(|t| !name(t).starts_with("worker") && name(t) != "injected")
        {
            return Some(t.id());
        }
        let injected = runnable.iter().find(|t| name(t) == "injected");
        if self.steps >= self.inject_at {
            if let Some(t) = injected {
                return Some(t.id());
            }
        }
        let workers: Vec<_> = runnable
            .iter()
            .filter(|t| name(t).starts_with("worker"))
            .map(|t| t.id())
            .collect();
        if let Some(&first) = workers.first() {
            let next = workers
                .iter()
                .copied()
                .find(|&w| self.last_worker.is_some_and(|last| w > last))
                .unwrap_or(first);
            self.last_worker = Some(next);
            self.steps += 1;
            return Some(next);
        }
        // The workers are done and the injection point was not reached: the last execution.
        self.exhausted = true;
        injected
            .map(|t| t.id())
            .or_else(|| runnable.first().map(|t| t.id()))
    }

    fn next_u64(&mut self) -> u64 {
        use shuttle::scheduler::DataSource;
        self.data.next_u64()
    }
}

/// Spawns a named shuttle thread (the names are the roles [`LockstepInjection`] schedules by).
#[cfg(target_pointer_width = "64")]
fn spawn_named<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .unwrap()
}

/// How many stale dequeuers the threshold hole needs: one more than the reset value `3n - 1`
/// (n = R / 2 = 2 for capacities 1 and 2, so 5): six threads dequeuing the same ring.
#[cfg(target_pointer_width = "64")]
const STALE_DEQUEUERS: usize = 6;

/// The threshold hole in the allocated ring: six consumers on an empty 1-slot SCQ each claim a
/// position, find it empty and read a tail that says so (D4); a push then publishes its value at
/// the very next position and resets the threshold to 5; the six late decrements take it to -1.
/// With the paper's handling every later pop gives up at D1 and the value is stranded; berth's
/// `give_up` finds it. Explored deterministically by [`LockstepInjection`]: the consumers in
/// lockstep, the push injected at each point in turn.
#[cfg(target_pointer_width = "64")]
#[test]
fn scq_exhausted_threshold_strands_no_value() {
    LockstepInjection::explore(|| {
        trace::start();
        let q = Arc::new(berth::ScqQueue::new(1));
        // One value through: the threshold is reset (5) and nobody has spent any of it.
        q.push(0u32).unwrap();
        assert_eq!(q.pop(), Ok(0));
        trace::record("push(0), pop", 0);
        let consumers: Vec<_> = (0..STALE_DEQUEUERS)
            .map(|i| {
                let q = Arc::clone(&q);
                spawn_named(&format!("worker-{i}"), move || {
                    trace::record("try_pop starts", ());
                    let r = q.try_pop();
                    trace::record("try_pop", r);
                    r.ok()
                })
            })
            .collect();
        let q2 = Arc::clone(&q);
        let producer = spawn_named("injected", move || {
            let r = q2.try_push(1);
            trace::record("try_push(1)", r);
            r.is_ok()
        });
        assert!(
            producer.join().unwrap(),
            "the push into an empty queue failed"
        );
        let mut got: Vec<u32> = consumers
            .into_iter()
            .filter_map(|c| c.join().unwrap())
            .collect();
        if got.is_empty() {
            let r = q.try_pop();
            trace::record("try_pop (after everyone finished)", r);
            match r {
                Ok(v) => got.push(v),
                Err(e) => panic!(
                    "a value was stranded: the push completed and no consumer took it, yet \
                     try_pop says {e:?} (the threshold was exhausted by stale dequeuers while the \
                     value sat at the next position to dequeue); queue state: {q:#?}"
                ),
            }
        }
        assert_eq!(got, [1], "exactly once");
    });
}

/// The same hole in the free ring, where the producers are the dequeuers: six pushes into a
/// full 1-slot SCQ each claim a position of the free ring and find it empty; a pop then gives
/// the index back at the next position and resets that ring's threshold; the six late
/// decrements take it to -1. With the paper's handling every later push says `Full` on an empty
/// queue: the one slot is stranded.
#[cfg(target_pointer_width = "64")]
#[test]
fn scq_exhausted_threshold_strands_no_free_slot() {
    LockstepInjection::explore(|| {
        trace::start();
        let q = Arc::new(berth::ScqQueue::new(1));
        q.push(0u32).unwrap();
        trace::record("push(0) (the queue is full)", ());
        let producers: Vec<_> = (0..STALE_DEQUEUERS as u32)
            .map(|i| {
                let q = Arc::clone(&q);
                spawn_named(&format!("worker-{i}"), move || {
                    trace::record(&format!("try_push({}) starts", 10 + i), ());
                    let r = q.try_push(10 + i);
                    trace::record(&format!("try_push({})", 10 + i), r);
                    r.is_ok()
                })
            })
            .collect();
        let q2 = Arc::clone(&q);
        let consumer = spawn_named("injected", move || {
            let r = q2.try_pop();
            trace::record("try_pop", r);
            r.ok()
        });
        assert_eq!(
            consumer.join().unwrap(),
            Some(0),
            "the pop of a full queue failed"
        );
        let pushed = producers
            .into_iter()
            .map(|p| p.join().unwrap())
            .filter(|&ok| ok)
            .count();
        // Empty the queue (at most one push got in), then it must take a value.
        let mut drained = 0;
        while q.try_pop().is_ok() {
            drained += 1;
        }
        trace::record("drain: values popped", drained);
        assert_eq!(drained, pushed, "exactly once");
        let r = q.try_push(99);
        trace::record("try_push(99) into the empty queue", r);
        if let Err(e) = r {
            panic!(
                "a free slot was stranded: the queue is empty, yet try_push says {e:?} (the free \
                 ring's threshold was exhausted by stale dequeuers while the free index sat at \
                 the next position to dequeue); queue state: {q:#?}"
            );
        }
    });
}
