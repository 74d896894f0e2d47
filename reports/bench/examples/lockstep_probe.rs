//! Probe: the cost of one element when a thief keeps pace with the owner (the deque benchmark's
//! slow mode). The owner pushes `ITEMS` elements in bursts of `BURST` and pops `POPS` of each
//! burst; one thief spins on `steal` (no yield on `Empty`), so it takes most elements right
//! after their push. Prints ns per element and the share stolen, per run.
//!
//! `lockstep_probe {berth|crossbeam} RUNS [BURST POPS]`
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

const ITEMS: u64 = 2_000_000;

macro_rules! probe {
    ($worker:expr, $succ:path, $empty:path, $burst:expr, $pops:expr) => {{
        let w = $worker;
        let s = w.stealer();
        let done = Arc::new(AtomicBool::new(false));
        let stolen = Arc::new(AtomicU64::new(0));
        let go = Arc::new(AtomicBool::new(false));
        let h = {
            let (done, stolen, go) = (done.clone(), stolen.clone(), go.clone());
            thread::spawn(move || {
                while !go.load(Acquire) {
                    std::hint::spin_loop();
                }
                let mut n = 0u64;
                loop {
                    match s.steal() {
                        $succ(v) => {
                            std::hint::black_box(v);
                            n += 1;
                        }
                        $empty if done.load(Acquire) => break,
                        _ => std::hint::spin_loop(),
                    }
                }
                stolen.store(n, Relaxed);
            })
        };
        go.store(true, Release);
        let t0 = Instant::now();
        let mut next = 0u64;
        let mut popped = 0u64;
        while next < ITEMS {
            let end = (next + $burst).min(ITEMS);
            for v in next..end {
                w.push(v);
            }
            for _ in 0..$pops {
                if w.pop().is_some() {
                    popped += 1;
                } else {
                    break;
                }
            }
            next = end;
        }
        while w.pop().is_some() {
            popped += 1;
        }
        done.store(true, Release);
        h.join().unwrap();
        let ns = t0.elapsed().as_nanos() as f64 / ITEMS as f64;
        let stolen = stolen.load(Relaxed);
        assert_eq!(stolen + popped, ITEMS);
        (ns, stolen as f64 / ITEMS as f64)
    }};
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("berth");
    let runs: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(5);
    let burst: u64 = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(64);
    let pops: u64 = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(32);
    let mut out = vec![];
    for _ in 0..runs {
        let r = match which {
            "berth" => probe!(
                berth::deque::Worker::<u64>::new(),
                berth::deque::Steal::Success,
                berth::deque::Steal::Empty,
                burst,
                pops
            ),
            "crossbeam" => probe!(
                crossbeam_deque::Worker::<u64>::new_lifo(),
                crossbeam_deque::Steal::Success,
                crossbeam_deque::Steal::Empty,
                burst,
                pops
            ),
            _ => panic!("berth or crossbeam"),
        };
        out.push(format!("{:.1}ns/{:.0}%", r.0, r.1 * 100.0));
    }
    println!("{which:9} {}", out.join(" "));
}
