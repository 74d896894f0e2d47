//! What one push and one pop cost in each bounded queue of the queue benchmark, on one thread,
//! with no contention and no waiting: the algorithms' own work. `VyukovQueue`, `ScqQueue`,
//! `MutexQueue` and crossbeam's `ArrayQueue`.
//!
//! ```text
//! cargo run --release --example queue_cost                # ns per push+pop pair
//! perf record -o scq.data -- target/release/examples/queue_cost
//! perf annotate -i scq.data --stdio -s berth::queue::scq::IndexRing::dequeue
//! ```
//!
//! (run from `reports/bench`; its target dir is `reports/bench/target` unless CARGO_TARGET_DIR
//! says otherwise). The findings are in `reports/bench/losses.md`, section
//! `p1c1_cap1024/berth_scq/vs-vyukov`.
use berth::{MutexQueue, ScqQueue, VyukovQueue};
use crossbeam_queue::ArrayQueue;
use std::hint::black_box;
use std::time::Instant;

const PAIRS: u64 = 2_000_000;
const CAPACITY: usize = 1024;
const ROUNDS: usize = 7;

/// Nanoseconds per `try_push` + `try_pop` pair on one thread.
fn pair_cost(push: impl Fn(u64) -> bool, pop: impl Fn() -> Option<u64>) -> f64 {
    let start = Instant::now();
    let mut sum = 0u64;
    for i in 0..PAIRS {
        assert!(push(black_box(i)), "a push into an empty queue failed");
        sum = sum.wrapping_add(pop().expect("a pop of a one-value queue failed"));
    }
    assert_eq!(sum, PAIRS * (PAIRS - 1) / 2, "values lost or changed");
    start.elapsed().as_nanos() as f64 / PAIRS as f64
}

/// Nanoseconds per `try_pop` of an empty queue, measured right after a value went through (as
/// a consumer that finds nothing just after a push would): one push, one pop, then `EMPTY_POPS`
/// failing pops, per round.
fn empty_pop_cost(push: impl Fn(u64) -> bool, pop: impl Fn() -> Option<u64>) -> f64 {
    const ROUNDS: u64 = PAIRS / 8;
    const EMPTY_POPS: u64 = 8;
    let mut spent = std::time::Duration::ZERO;
    for i in 0..ROUNDS {
        assert!(push(black_box(i)), "a push into an empty queue failed");
        assert_eq!(pop(), Some(i), "the value did not come back");
        let start = Instant::now();
        for _ in 0..EMPTY_POPS {
            assert!(pop().is_none(), "a pop of an empty queue returned a value");
        }
        spent += start.elapsed();
    }
    spent.as_nanos() as f64 / (ROUNDS * EMPTY_POPS) as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let vyukov = VyukovQueue::new(CAPACITY);
    let scq = ScqQueue::new(CAPACITY);
    let mutex = MutexQueue::new(CAPACITY);
    let crossbeam = ArrayQueue::new(CAPACITY);
    let mut samples = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        samples[0].push(pair_cost(
            |x| vyukov.try_push(x).is_ok(),
            || vyukov.try_pop().ok(),
        ));
        samples[1].push(pair_cost(
            |x| scq.try_push(x).is_ok(),
            || scq.try_pop().ok(),
        ));
        samples[2].push(pair_cost(
            |x| mutex.try_push(x).is_ok(),
            || mutex.try_pop().ok(),
        ));
        samples[3].push(pair_cost(|x| crossbeam.push(x).is_ok(), || crossbeam.pop()));
    }
    let [v, s, m, c] = samples.map(median);
    let empty = [
        empty_pop_cost(|x| vyukov.try_push(x).is_ok(), || vyukov.try_pop().ok()),
        empty_pop_cost(|x| scq.try_push(x).is_ok(), || scq.try_pop().ok()),
        empty_pop_cost(|x| mutex.try_push(x).is_ok(), || mutex.try_pop().ok()),
        empty_pop_cost(|x| crossbeam.push(x).is_ok(), || crossbeam.pop()),
    ];
    println!(
        "capacity {CAPACITY}, {PAIRS} push+pop pairs on one thread, median of {ROUNDS} rounds:"
    );
    println!("  VyukovQueue          {v:6.1} ns per pair");
    println!(
        "  ScqQueue             {s:6.1} ns per pair  ({:.2}x Vyukov)",
        s / v
    );
    println!(
        "  MutexQueue           {m:6.1} ns per pair  ({:.2}x Vyukov)",
        m / v
    );
    println!(
        "  crossbeam ArrayQueue {c:6.1} ns per pair  ({:.2}x Vyukov)",
        c / v
    );
    println!("try_pop of an empty queue, just after a value went through (8 per value):");
    for (name, ns) in [
        "VyukovQueue",
        "ScqQueue",
        "MutexQueue",
        "crossbeam ArrayQueue",
    ]
    .iter()
    .zip(empty)
    {
        println!("  {name:20} {ns:6.1} ns per empty pop");
    }
}
