//! Probe: the pool benchmark's workloads outside criterion, one contender per process.
//! `join_probe {berth|rayon} {fib25|fib32|qs} THREADS REPS` prints min and median in us
//! (`PROBE_PHASES=1`: also the medians of each tenth of the run, to stderr).
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
            pub fn qs(v: &mut [u64]) {
                if v.len() <= 1000 {
                    super::sort_leaf(v);
                    return;
                }
                let j = super::partition(v);
                let (l, r) = v.split_at_mut(j + 1);
                $join(|| qs(l), || qs(r));
            }
        }
    };
}
// The leaves are shared, never inlined: one copy of their code for both contenders (an inlined
// leaf's placement moved one contender's fib(32) by up to 17% between builds).
#[inline(never)]
fn sort_leaf(v: &mut [u64]) {
    v.sort_unstable();
}
/// Hoare partition around the middle element; returns `j` with `v[..=j] <= p <= v[j+1..]`.
#[inline(never)]
fn partition(v: &mut [u64]) -> usize {
    let p = v[v.len() / 2];
    let (mut i, mut j) = (0, v.len() - 1);
    loop {
        while v[i] < p {
            i += 1
        }
        while v[j] > p {
            j -= 1
        }
        if i >= j {
            return j;
        }
        v.swap(i, j);
        i += 1;
        j -= 1;
    }
}
contender!(b, berth::join);
contender!(r, rayon::join);
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (who, work, t, reps): (&str, &str, usize, usize) =
        (&a[1], &a[2], a[3].parse().unwrap(), a[4].parse().unwrap());
    let bp = berth::pool::ThreadPool::new(t);
    let rp = rayon::ThreadPoolBuilder::new()
        .num_threads(t)
        .build()
        .unwrap();
    let mut data: Vec<u64> = (0..1_000_000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7)
        .collect();
    let mut v = vec![];
    for _ in 0..reps {
        // Only the sort needs a fresh input (criterion's fib iterations run back to back).
        let mut d = if work == "qs" {
            data.clone()
        } else {
            Vec::new()
        };
        let s = Instant::now();
        let r = match (who, work) {
            ("berth", "fib25") => bp.install(|| b::fib_every(25)),
            ("rayon", "fib25") => rp.install(|| r::fib_every(25)),
            ("berth", "fib32") => bp.install(|| b::fib_cutoff(32)),
            ("rayon", "fib32") => rp.install(|| r::fib_cutoff(32)),
            ("berth", "qs") => {
                bp.install(|| b::qs(&mut d));
                d[0]
            }
            ("rayon", "qs") => {
                rp.install(|| r::qs(&mut d));
                d[0]
            }
            _ => panic!("usage"),
        };
        v.push(s.elapsed().as_micros());
        std::hint::black_box(r);
    }
    data.clear();
    if std::env::var_os("PROBE_PHASES").is_some() {
        // Medians of consecutive tenths: does a contender drift over a long run?
        let tenth = (v.len() / 10).max(1);
        let phases: Vec<u128> = v
            .chunks(tenth)
            .map(|c| {
                let mut c = c.to_vec();
                c.sort();
                c[c.len() / 2]
            })
            .collect();
        eprintln!("medians by tenth: {phases:?}");
    }
    v.sort();
    println!("{} {}", v[0], v[v.len() / 2]);
}
