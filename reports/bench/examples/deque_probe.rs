//! Probe: per-round times and steal outcome counts for berth vs crossbeam deque (bench shape).
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

const ITEMS: u64 = 100_000;
const BURST: u64 = 64;

macro_rules! probe {
    ($name:expr, $worker:expr, $succ:path, $retry:path, $empty:path, $thieves:expr, $rounds:expr) => {{
        let w = $worker;
        let start = Arc::new(Barrier::new($thieves + 1));
        let done = Arc::new(Barrier::new($thieves + 1));
        let owner_done = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new([AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]);
        let hs: Vec<_> = (0..$thieves).map(|_| {
            let s = w.stealer();
            let (start, done, owner_done, stop, counts) = (start.clone(), done.clone(), owner_done.clone(), stop.clone(), counts.clone());
            let delay: u32 = std::env::var("DELAY").ok().map(|s| s.parse().unwrap()).unwrap_or(0);
            thread::spawn(move || loop {
                start.wait();
                if stop.load(Relaxed) { return; }
                let (mut a, mut b, mut c) = (0, 0, 0);
                loop {
                    match s.steal() {
                        $succ(v) => { std::hint::black_box(v); a += 1; for _ in 0..delay { std::hint::spin_loop() } }
                        $retry => { b += 1; std::hint::spin_loop() }
                        $empty if owner_done.load(Acquire) => break,
                        $empty => { c += 1; thread::yield_now() }
                    }
                }
                counts[0].fetch_add(a, Relaxed); counts[1].fetch_add(b, Relaxed); counts[2].fetch_add(c, Relaxed);
                done.wait();
            })
        }).collect();
        let mut times = vec![];
        let mut popped = 0u64;
        for _ in 0..$rounds {
            owner_done.store(false, Relaxed);
            start.wait();
            let t0 = Instant::now();
            let mut next = 0;
            while next < ITEMS {
                let end = (next + BURST).min(ITEMS);
                for v in next..end { w.push(v); }
                for _ in 0..(end - next) / 2 { if w.pop().is_some() { popped += 1 } else { break } }
                next = end;
            }
            while w.pop().is_some() { popped += 1 }
            owner_done.store(true, Release);
            done.wait();
            times.push(t0.elapsed().as_micros() as u64);
            if std::env::var_os("CAPS").is_some() { eprintln!("{} {:?}", times.last().unwrap(), w); }
        }
        stop.store(true, Relaxed);
        start.wait();
        for h in hs { h.join().unwrap(); }
        times.sort();
        let n = times.len();
        println!("{:10} t{} p10 {:6} p50 {:6} p90 {:6} max {:6} us | per round: popped {} stolen {} retry {} empty {}",
            $name, $thieves, times[n/10], times[n/2], times[n*9/10], times[n-1],
            popped / n as u64, counts[0].load(Relaxed) / n as u64, counts[1].load(Relaxed) / n as u64, counts[2].load(Relaxed) / n as u64);
    }};
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(200);
    let which = std::env::args().nth(2).unwrap_or_default();
    let ts: Vec<usize> = std::env::args()
        .nth(3)
        .map(|s| s.split(',').map(|x| x.parse().unwrap()).collect())
        .unwrap_or(vec![1, 2, 4]);
    for t in ts {
        if which != "crossbeam" {
            probe!(
                "berth",
                berth::deque::Worker::<u64>::new(),
                berth::deque::Steal::Success,
                berth::deque::Steal::Retry,
                berth::deque::Steal::Empty,
                t,
                rounds
            );
        }
        if which != "berth" {
            probe!(
                "crossbeam",
                crossbeam_deque::Worker::<u64>::new_lifo(),
                crossbeam_deque::Steal::Success,
                crossbeam_deque::Steal::Retry,
                crossbeam_deque::Steal::Empty,
                t,
                rounds
            );
        }
    }
}
