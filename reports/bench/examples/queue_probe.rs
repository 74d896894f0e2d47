//! Moves a fixed number of values through a bounded queue with P producers and C consumers, so
//! that counts taken around the process (`perf stat`) divide per value and `perf record` sees
//! only the queue's work.
//!
//! ```text
//! cargo build --release --example queue_probe      # from reports/bench
//! perf stat -e task-clock,context-switches,syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield \
//!     target/release/examples/queue_probe berth 1 1 16 1000000
//! ```
//!
//! Arguments: `berth` (`VyukovQueue`'s blocking `push`/`pop`: spin, yield, then park),
//! `berth_spin` (`VyukovQueue`'s non-blocking `try_push`/`try_pop`, retried exactly as
//! crossbeam's below: the same queue, waited on without ever parking) or
//! `crossbeam` (`ArrayQueue` retried with `Backoff::snooze`, reset after each success, as the
//! benchmark drives it: spin, then yield forever), producers, consumers, capacity, values. The
//! values `0..N` are split between the producers; each consumer pops its share; the sum is
//! checked. Prints the wall time and the time per value, and the process's CPU time and
//! context switches per value (`getrusage`, for machines without `perf`). The findings are in
//! `reports/bench/losses.md`.
use berth::queue::VyukovQueue;
use berth_bench::Usage;
use crossbeam_queue::ArrayQueue;
use crossbeam_utils::Backoff;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

trait Probe: Send + Sync + 'static {
    fn push(&self, value: u64);
    fn pop(&self) -> u64;
}

impl Probe for VyukovQueue<u64> {
    fn push(&self, value: u64) {
        VyukovQueue::push(self, value).expect("the probe never closes the queue");
    }
    fn pop(&self) -> u64 {
        VyukovQueue::pop(self).expect("the probe never closes the queue")
    }
}

impl Probe for ArrayQueue<u64> {
    fn push(&self, mut value: u64) {
        let backoff = Backoff::new();
        while let Err(back) = ArrayQueue::push(self, value) {
            value = back;
            backoff.snooze();
        }
    }
    fn pop(&self) -> u64 {
        let backoff = Backoff::new();
        loop {
            if let Some(value) = ArrayQueue::pop(self) {
                return value;
            }
            backoff.snooze();
        }
    }
}

/// `VyukovQueue` waited on as `ArrayQueue` is: `try_push`/`try_pop` and `Backoff::snooze`.
struct Spin(VyukovQueue<u64>);

impl Probe for Spin {
    fn push(&self, mut value: u64) {
        let backoff = Backoff::new();
        while let Err(back) = self.0.try_push(value) {
            value = back.into_inner();
            backoff.snooze();
        }
    }
    fn pop(&self) -> u64 {
        let backoff = Backoff::new();
        loop {
            if let Ok(value) = self.0.try_pop() {
                return value;
            }
            backoff.snooze();
        }
    }
}

fn run<Q: Probe>(queue: Q, producers: u64, consumers: u64, values: u64) -> u64 {
    let queue = Arc::new(queue);
    let per_producer = values / producers;
    let mut handles = Vec::new();
    for p in 0..producers {
        let q = Arc::clone(&queue);
        handles.push(thread::spawn(move || {
            for v in p * per_producer..(p + 1) * per_producer {
                q.push(v);
            }
            0
        }));
    }
    for c in 0..consumers {
        let q = Arc::clone(&queue);
        // The first consumer also takes the remainder of the division.
        let share = values / consumers + if c == 0 { values % consumers } else { 0 };
        handles.push(thread::spawn(move || {
            (0..share).map(|_| q.pop()).sum::<u64>()
        }));
    }
    handles
        .into_iter()
        .map(|h| h.join().expect("a probe thread panicked"))
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        eprintln!("usage: queue_probe {{berth|crossbeam}} PRODUCERS CONSUMERS CAPACITY VALUES");
        std::process::exit(2);
    }
    let number = |i: usize| -> u64 { args[i].parse().expect("a number") };
    let (producers, consumers, capacity) = (number(2), number(3), number(4) as usize);
    let values = number(5) / producers * producers;
    let usage = Usage::now();
    let start = Instant::now();
    let sum = match args[1].as_str() {
        "berth" => run(VyukovQueue::new(capacity), producers, consumers, values),
        "berth_spin" => run(
            Spin(VyukovQueue::new(capacity)),
            producers,
            consumers,
            values,
        ),
        "crossbeam" => run(ArrayQueue::new(capacity), producers, consumers, values),
        other => panic!("unknown queue {other:?}"),
    };
    let elapsed = start.elapsed();
    let used = Usage::now().since(usage, values);
    assert_eq!(
        sum,
        values * (values - 1) / 2,
        "a value was lost or duplicated"
    );
    println!(
        "{} {}:{} cap {} {} values: {:.3} ms, {:.1} ns per value",
        args[1],
        producers,
        consumers,
        capacity,
        values,
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_nanos() as f64 / values as f64
    );
    println!("  {used}");
}
