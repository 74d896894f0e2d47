//! Who runs first after a wake-up: the woken receiver, or the sender that woke it?
//!
//! One receiver blocks in `recv` on an empty channel; the sender waits 500 µs after each
//! acknowledged message (so the receiver is asleep in the kernel), reads the clock, sends that
//! timestamp, and reads the clock again when `send` returns. For each message this prints the
//! wake latency (receiver's clock when `recv` returns minus the send timestamp) and whether the
//! receiver's `recv` returned before the sender's `send` did: if it did, the kernel switched to
//! the woken receiver at the wake-up; if not, the receiver waited for the sender to block.
//!
//! ```text
//! cargo run --release --example wake_order            # from reports/bench
//! perf sched record -- target/release/examples/wake_order berth_b1
//! perf script -F comm,tid,cpu,time,event,trace | grep -A1 sched_waking
//! ```
//!
//! The findings are in `reports/bench/losses.md`, section `wake_b1/p50` (and its p99 note).
use std::sync::atomic::{AtomicU64, Ordering::Acquire, Ordering::Release};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const WAKE_GAP: Duration = Duration::from_micros(500);
const MESSAGES: usize = 1000;
const WARM_UP: usize = 100;

type Send = Box<dyn Fn(u64) + std::marker::Send>;
type Recv = Box<dyn Fn() -> u64 + std::marker::Send>;

fn pair(name: &str) -> (Send, Recv) {
    macro_rules! boxed {
        ($tx:expr, $rx:expr) => {{
            let (tx, rx) = ($tx, $rx);
            (
                Box::new(move |v| tx.send(v).unwrap()) as Send,
                Box::new(move || rx.recv().unwrap()) as Recv,
            )
        }};
    }
    match name {
        "berth_b0" => {
            let (tx, rx) = berth::channel::bounded::<u64>(0);
            boxed!(tx, rx)
        }
        "berth_b1" => {
            let (tx, rx) = berth::channel::bounded::<u64>(1);
            boxed!(tx, rx)
        }
        "berth_unbounded" => {
            let (tx, rx) = berth::channel::unbounded::<u64>();
            boxed!(tx, rx)
        }
        "std_b0" => {
            let (tx, rx) = std::sync::mpsc::sync_channel::<u64>(0);
            boxed!(tx, rx)
        }
        "std_b1" => {
            let (tx, rx) = std::sync::mpsc::sync_channel::<u64>(1);
            boxed!(tx, rx)
        }
        "std_unbounded" => {
            let (tx, rx) = std::sync::mpsc::channel::<u64>();
            boxed!(tx, rx)
        }
        "crossbeam_b1" => {
            let (tx, rx) = crossbeam_channel::bounded::<u64>(1);
            boxed!(tx, rx)
        }
        other => panic!("unknown case {other}"),
    }
}

fn run(name: &str) {
    let (send, recv) = pair(name);
    let epoch = Instant::now();
    let now = move || u64::try_from(epoch.elapsed().as_nanos()).expect("a short run");
    let acked = Arc::new(AtomicU64::new(0));
    let received = Arc::new(Mutex::new(Vec::with_capacity(MESSAGES)));
    let receiver = {
        let (acked, received) = (Arc::clone(&acked), Arc::clone(&received));
        thread::spawn(move || {
            for i in 1..=MESSAGES as u64 {
                let sent = recv();
                let at = now();
                received.lock().unwrap().push((sent, at));
                acked.store(i, Release);
            }
        })
    };
    let mut returned = Vec::with_capacity(MESSAGES);
    for i in 1..=MESSAGES as u64 {
        while acked.load(Acquire) < i - 1 {
            thread::sleep(Duration::from_micros(20));
        }
        thread::sleep(WAKE_GAP);
        send(now());
        returned.push(now());
    }
    receiver.join().unwrap();
    let received = received.lock().unwrap();
    // (latency, whether the receiver's recv returned before the sender's send did)
    let mut wakes: Vec<(u64, bool)> = Vec::new();
    for (i, (&(sent, at), &back)) in received.iter().zip(&returned).enumerate().skip(WARM_UP) {
        assert!(at >= sent, "message {i} received before it was sent");
        wakes.push((at - sent, at < back));
    }
    wakes.sort_unstable();
    let receiver_first = wakes.iter().filter(|w| w.1).count();
    let q = |p: f64| wakes[((wakes.len() - 1) as f64 * p) as usize].0 as f64 / 1e3;
    // The slowest 1%: in which order did those wakes run?
    let tail = &wakes[wakes.len() - wakes.len() / 100..];
    let tail_receiver_first = tail.iter().filter(|w| w.1).count();
    println!(
        "{name:16} latency p25 {:6.2} p50 {:6.2} p75 {:6.2} p99 {:6.2} max {:7.2} us; the receiver returned before the sender's send() in {receiver_first} of {} wakes, {tail_receiver_first} of the slowest {}",
        q(0.25),
        q(0.5),
        q(0.75),
        q(0.99),
        q(1.0),
        wakes.len(),
        tail.len()
    );
}

fn main() {
    let all = [
        "berth_b0",
        "std_b0",
        "berth_b1",
        "std_b1",
        "crossbeam_b1",
        "berth_unbounded",
        "std_unbounded",
    ];
    let chosen: Vec<String> = std::env::args().skip(1).collect();
    for name in all {
        if chosen.is_empty() || chosen.iter().any(|c| c == name) {
            run(name);
        }
    }
}
