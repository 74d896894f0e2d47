//! Moves a fixed number of messages through one library's blocking channel, so that counts
//! taken around the whole process (`perf stat`, `strace -c`) can be divided per message, and
//! `perf record` sees the channel's work and nothing of criterion's.
//!
//! ```text
//! cargo build --release --example chan_probe      # from reports/bench
//! perf stat -e task-clock,context-switches,syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield \
//!     target/release/examples/chan_probe berth b0 spsc 20000
//! perf record -e cpu-clock -g target/release/examples/chan_probe berth unbounded spsc 2000000
//! ```
//!
//! Arguments: library (`berth`, `crossbeam`, `flume`, `kanal`, `std`), flavour (`b0`, `b1`,
//! `b1024`, `unbounded`), shape (`spsc` 1:1, `mpsc` 4:1, `mpmc` 4:4; `std` has no `mpmc`) and
//! the number of messages. The shapes and flavours are the benchmark's (`benches/channels.rs`);
//! each producer sends its share, each consumer receives until the channel is closed, and the
//! sum of everything received is checked. Prints the wall time and the time per message, and
//! the process's CPU time and context switches per message (`getrusage`, for machines without
//! `perf`).
//! The findings are in `reports/bench/losses.md`.
use berth_bench::Usage;
use std::thread;
use std::time::Instant;

/// Runs `producers` threads that send `0..messages` between them and `consumers` threads that
/// receive until every sender is gone; returns the sum received.
macro_rules! run {
    ($tx:expr, $rx:expr, $producers:expr, $consumers:expr, $messages:expr, $clone_rx:expr) => {{
        let (tx, rx) = ($tx, $rx);
        let per = $messages / $producers as u64;
        let mut handles = Vec::new();
        for p in 0..$producers as u64 {
            let tx = tx.clone();
            handles.push(thread::spawn(move || {
                for v in p * per..(p + 1) * per {
                    tx.send(v).expect("the receivers outlive the senders");
                }
                0u64
            }));
        }
        drop(tx);
        let mut receivers = Vec::new();
        for _ in 1..$consumers {
            receivers.push($clone_rx(&rx));
        }
        receivers.push(rx);
        for rx in receivers {
            handles.push(thread::spawn(move || {
                let mut sum = 0u64;
                while let Ok(v) = rx.recv() {
                    sum = sum.wrapping_add(v);
                }
                sum
            }));
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("a probe thread panicked"))
            .fold(0u64, u64::wrapping_add)
    }};
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: chan_probe LIB FLAVOUR SHAPE MESSAGES");
        std::process::exit(2);
    }
    let capacity = match args[2].as_str() {
        "b0" => Some(0),
        "b1" => Some(1),
        "b1024" => Some(1024),
        "unbounded" => None,
        other => panic!("unknown flavour {other:?}"),
    };
    let (producers, consumers) = match args[3].as_str() {
        "spsc" => (1, 1),
        "mpsc" => (4, 1),
        "mpmc" => (4, 4),
        other => panic!("unknown shape {other:?}"),
    };
    let messages: u64 = args[4].parse().expect("MESSAGES is a number");
    let messages = messages - messages % producers as u64;
    let usage = Usage::now();
    let start = Instant::now();
    let sum = match (args[1].as_str(), capacity) {
        ("berth", Some(n)) => {
            let (tx, rx) = berth::channel::bounded::<u64>(n);
            run!(
                tx,
                rx,
                producers,
                consumers,
                messages,
                |r: &berth::channel::Receiver<u64>| r.clone()
            )
        }
        ("berth", None) => {
            let (tx, rx) = berth::channel::unbounded::<u64>();
            run!(
                tx,
                rx,
                producers,
                consumers,
                messages,
                |r: &berth::channel::Receiver<u64>| r.clone()
            )
        }
        ("crossbeam", Some(n)) => {
            let (tx, rx) = crossbeam_channel::bounded::<u64>(n);
            run!(
                tx,
                rx,
                producers,
                consumers,
                messages,
                |r: &crossbeam_channel::Receiver<u64>| r.clone()
            )
        }
        ("crossbeam", None) => {
            let (tx, rx) = crossbeam_channel::unbounded::<u64>();
            run!(
                tx,
                rx,
                producers,
                consumers,
                messages,
                |r: &crossbeam_channel::Receiver<u64>| r.clone()
            )
        }
        ("flume", Some(n)) => {
            let (tx, rx) = flume::bounded::<u64>(n);
            run!(
                tx,
                rx,
                producers,
                consumers,
                messages,
                |r: &flume::Receiver<u64>| r.clone()
            )
        }
        ("flume", None) => {
            let (tx, rx) = flume::unbounded::<u64>();
            run!(
                tx,
                rx,
                producers,
                consumers,
                messages,
                |r: &flume::Receiver<u64>| r.clone()
            )
        }
        ("kanal", Some(n)) => {
            let (tx, rx) = kanal::bounded::<u64>(n);
            run!(
                tx,
                rx,
                producers,
                consumers,
                messages,
                |r: &kanal::Receiver<u64>| r.clone()
            )
        }
        ("kanal", None) => {
            let (tx, rx) = kanal::unbounded::<u64>();
            run!(
                tx,
                rx,
                producers,
                consumers,
                messages,
                |r: &kanal::Receiver<u64>| r.clone()
            )
        }
        ("std", capacity) => {
            assert_eq!(consumers, 1, "std::sync::mpsc has one receiver");
            let no_clone = |_: &std::sync::mpsc::Receiver<u64>| -> std::sync::mpsc::Receiver<u64> {
                unreachable!("one consumer")
            };
            match capacity {
                Some(n) => {
                    let (tx, rx) = std::sync::mpsc::sync_channel::<u64>(n);
                    run!(tx, rx, producers, consumers, messages, no_clone)
                }
                None => {
                    let (tx, rx) = std::sync::mpsc::channel::<u64>();
                    run!(tx, rx, producers, consumers, messages, no_clone)
                }
            }
        }
        (other, _) => panic!("unknown library {other:?}"),
    };
    let elapsed = start.elapsed();
    let used = Usage::now().since(usage, messages);
    assert_eq!(
        sum,
        messages * (messages - 1) / 2,
        "a message was lost or duplicated"
    );
    println!(
        "{} {} {} {} messages: {:.3} ms, {:.1} ns per message",
        args[1],
        args[2],
        args[3],
        messages,
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_nanos() as f64 / messages as f64
    );
    println!("  {used}");
}
