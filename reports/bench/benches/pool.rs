//! The fork-join pool, `berth::pool`, beside rayon (rayon-core's `ThreadPool`), in one run.
//!
//! - `pool_fib32_cutoff_tN`: `fib(32)` with a sequential cutoff below 20 (coarse joins);
//! - `pool_fib25_every_tN`: `fib(25)` with a join at every level (about 240,000 joins of almost
//!   no work: the join's own cost and its sleeping/waking dominate);
//! - `pool_quicksort1m_tN`: a parallel quicksort of 1,000,000 pseudo-random `u64`s (joins down
//!   to 1,000 elements, then `sort_unstable`); the input is regenerated outside the clock.
//!
//! at N = 1 and 2 worker threads, and 4 (oversubscribed on a 2-core machine). Both pools are
//! built once per configuration and reused; each iteration is one `install` and its result is
//! checked (the fib value, or that the output is sorted and has the input's checksum).
//!
//! The sequential leaves (`fib_seq`, `partition`, and `sort_leaf`, the `sort_unstable` of a
//! small slice) are `#[inline(never)]` functions that both contenders call: one copy of their
//! machine code, at one address, so a cell compares the pools and not where the compiler put
//! each contender's inlined copy of its leaf. Inlined, the leaf of `fib(32)` swung one
//! contender by up to 17%, at one thread as much as at two, between two builds of this crate
//! that differed only in an unrelated constant of berth's deque (`reports/bench/losses.md`).
//!
//! Default budget: criterion's default times (3 s warm-up, 5 s measurement), sample size 30
//! (10 for the quicksort); `BENCH_BUDGET=quick` or `smoke`: sample size 10 and the short times
//! of `berth_bench::Budget`.

use berth_bench::Budget;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::hint::black_box;

/// A leaf: shared by both contenders (see the module docs).
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
            pub fn fib_cutoff(n: u64) -> u64 {
                if n < 20 {
                    return super::fib_seq(n);
                }
                let (a, b) = $join(|| fib_cutoff(n - 1), || fib_cutoff(n - 2));
                a + b
            }

            pub fn fib_every(n: u64) -> u64 {
                if n < 2 {
                    return n;
                }
                let (a, b) = $join(|| fib_every(n - 1), || fib_every(n - 2));
                a + b
            }

            pub fn quicksort(v: &mut [u64]) {
                if v.len() <= 1_000 {
                    super::sort_leaf(v);
                    return;
                }
                let mid = super::partition(v);
                let (lo, hi) = v.split_at_mut(mid);
                $join(|| quicksort(lo), || quicksort(&mut hi[1..]));
            }
        }
    };
}

contender!(b, berth::join);
contender!(r, rayon::join);

/// A leaf: shared by both contenders (see the module docs).
#[inline(never)]
fn sort_leaf(v: &mut [u64]) {
    v.sort_unstable();
}

/// Lomuto partition around the middle element; returns the pivot's final index. A leaf: shared
/// by both contenders (see the module docs).
#[inline(never)]
fn partition(v: &mut [u64]) -> usize {
    let last = v.len() - 1;
    v.swap(v.len() / 2, last);
    let pivot = v[last];
    let mut store = 0;
    for i in 0..last {
        if v[i] < pivot {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    store
}

fn input(n: usize) -> Vec<u64> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}

fn check_sorted(v: &[u64], sum: u64) {
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "not sorted");
    assert_eq!(v.iter().fold(0u64, |a, &x| a.wrapping_add(x)), sum);
}

fn benches(c: &mut Criterion) {
    let samples = Budget::from_env().pick(10, 10, 30);
    let fib32 = fib_seq(32);
    let fib25 = fib_seq(25);
    let data = input(1_000_000);
    let sum = data.iter().fold(0u64, |a, &x| a.wrapping_add(x));
    for threads in [1usize, 2, 4] {
        let bp = berth::pool::ThreadPool::new(threads);
        let rp = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();

        let mut g = c.benchmark_group(format!("pool_fib32_cutoff_t{threads}"));
        g.sample_size(samples);
        g.bench_function("berth", |bch| {
            bch.iter(|| assert_eq!(bp.install(|| b::fib_cutoff(black_box(32))), fib32))
        });
        g.bench_function("rayon", |bch| {
            bch.iter(|| assert_eq!(rp.install(|| r::fib_cutoff(black_box(32))), fib32))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("pool_fib25_every_t{threads}"));
        g.sample_size(samples);
        g.bench_function("berth", |bch| {
            bch.iter(|| assert_eq!(bp.install(|| b::fib_every(black_box(25))), fib25))
        });
        g.bench_function("rayon", |bch| {
            bch.iter(|| assert_eq!(rp.install(|| r::fib_every(black_box(25))), fib25))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("pool_quicksort1m_t{threads}"));
        g.sample_size(10);
        g.bench_function("berth", |bch| {
            bch.iter_batched_ref(
                || data.clone(),
                |v| {
                    bp.install(|| b::quicksort(v));
                    check_sorted(v, sum);
                },
                BatchSize::LargeInput,
            )
        });
        g.bench_function("rayon", |bch| {
            bch.iter_batched_ref(
                || data.clone(),
                |v| {
                    rp.install(|| r::quicksort(v));
                    check_sorted(v, sum);
                },
                BatchSize::LargeInput,
            )
        });
        g.finish();
    }
}

criterion_group! {
    name = pool;
    config = Budget::from_env().criterion_default_times(10);
    targets = benches
}
criterion_main!(pool);
