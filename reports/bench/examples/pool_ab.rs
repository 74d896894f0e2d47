//! Probe: the pool benchmark's workloads, both contenders in one process, interleaved.
//! `pool_ab {fib25|fib32|every:N|cutoff:N} THREADS SAMPLES ITERS`: each sample runs ITERS back-to-back
//! `install`s on one pool (as criterion's `iter` does), then on the other, alternating which
//! goes first; prints each contender's median per-iteration time (us) over the samples and the
//! median of the per-sample ratios rayon/berth (>1: berth ahead).
use std::time::Instant;
#[inline(never)]
fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}
macro_rules! contender {
    ($m:ident, $join:path) => {
        mod $m {
            pub fn fib_every(n: u64) -> u64 {
                if n < 2 {
                    return n;
                }
                let (a, b) = $join(|| fib_every(n - 1), || fib_every(n - 2));
                a + b
            }
            pub fn fib_cutoff(n: u64) -> u64 {
                if n < 20 {
                    return super::fib_seq(n);
                }
                let (a, b) = $join(|| fib_cutoff(n - 1), || fib_cutoff(n - 2));
                a + b
            }
        }
    };
}
contender!(b, berth::join);
contender!(r, rayon::join);
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (work, t, samples, iters): (&str, usize, usize, usize) = (
        &a[1],
        a[2].parse().unwrap(),
        a[3].parse().unwrap(),
        a[4].parse().unwrap(),
    );
    // `fib25`: fib(25) with a join at every level; `fib32`: fib(32) with a cutoff below 20;
    // `every:N`, `cutoff:N`: the same at another N (`every:1` is an install with no join).
    let (every, n): (bool, u64) = match work {
        "fib25" => (true, 25),
        "fib32" => (false, 32),
        w => match w.split_once(':') {
            Some(("every", n)) => (true, n.parse().expect("every:N")),
            Some(("cutoff", n)) => (false, n.parse().expect("cutoff:N")),
            _ => panic!("usage: pool_ab {{fib25|fib32|every:N|cutoff:N}} THREADS SAMPLES ITERS"),
        },
    };
    let bp = berth::pool::ThreadPool::new(t);
    let rp = rayon::ThreadPoolBuilder::new()
        .num_threads(t)
        .build()
        .unwrap();
    let run = |who: &str| -> f64 {
        let s = Instant::now();
        for _ in 0..iters {
            let r = match (who, every) {
                ("berth", true) => bp.install(|| b::fib_every(std::hint::black_box(n))),
                ("rayon", true) => rp.install(|| r::fib_every(std::hint::black_box(n))),
                ("berth", false) => bp.install(|| b::fib_cutoff(std::hint::black_box(n))),
                _ => rp.install(|| r::fib_cutoff(std::hint::black_box(n))),
            };
            std::hint::black_box(r);
        }
        s.elapsed().as_secs_f64() * 1e6 / iters as f64
    };
    run("berth");
    run("rayon");
    let (mut bs, mut rs, mut ratios) = (vec![], vec![], vec![]);
    for i in 0..samples {
        let (b, r) = if i % 2 == 0 {
            let b = run("berth");
            (b, run("rayon"))
        } else {
            let r = run("rayon");
            (run("berth"), r)
        };
        bs.push(b);
        rs.push(r);
        ratios.push(r / b);
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|x, y| x.partial_cmp(y).unwrap());
        v[v.len() / 2]
    };
    println!(
        "berth {:.1} rayon {:.1} ratio {:.3}",
        med(&mut bs),
        med(&mut rs),
        med(&mut ratios)
    );
}
