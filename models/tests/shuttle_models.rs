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
