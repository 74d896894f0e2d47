//! A parallel quicksort on `berth::join`: partition, then sort both halves as a fork-join pair.
//!
//! `join(a, b)` runs `a` on this thread and offers `b` to the other workers; an idle worker
//! steals it, otherwise this thread runs it after `a`. Below `SEQUENTIAL_CUTOFF` elements the
//! halves are sorted in place, so a join is only paid for where there is enough work.
//! The result is checked against `sort_unstable` on the global pool and on a 2-thread pool.
//!
//! Run with `cargo run -p berth --example parallel_quicksort` (add `--release` for timings
//! that mean something).

use std::time::Instant;

const LEN: usize = 200_000;
/// Below this many elements, a slice is sorted sequentially (a join costs more than it saves).
const SEQUENTIAL_CUTOFF: usize = 2_048;

fn quicksort<T: Ord + Send>(v: &mut [T]) {
    if v.len() <= SEQUENTIAL_CUTOFF {
        v.sort_unstable();
        return;
    }
    let (lt, gt) = partition(v);
    let (left, rest) = v.split_at_mut(lt);
    let right = &mut rest[gt - lt..]; // `rest[..gt - lt]` equals the pivot: already in place
    berth::join(|| quicksort(left), || quicksort(right));
}

/// Three-way partition (Dijkstra's Dutch flag) around the median of three randomly chosen
/// elements: afterwards `v[..lt] < pivot`, `v[lt..gt] == pivot`, `v[gt..] > pivot`. Runs of
/// equal elements end up in the middle, so duplicates never make the recursion lopsided, and
/// random samples keep sorted or reversed inputs (or the patterns a partition leaves behind)
/// from choosing the worst pivot again and again.
fn partition<T: Ord>(v: &mut [T]) -> (usize, usize) {
    let (a, b, c) = (
        random_below(v.len()),
        random_below(v.len()),
        random_below(v.len()),
    );
    let median = if (v[a] <= v[b]) == (v[b] <= v[c]) {
        b
    } else if (v[b] <= v[a]) == (v[a] <= v[c]) {
        a
    } else {
        c
    };
    v.swap(0, median); // the pivot sits at v[lt] from here on
    let (mut lt, mut i, mut gt) = (0, 1, v.len());
    while i < gt {
        match v[i].cmp(&v[lt]) {
            std::cmp::Ordering::Less => {
                v.swap(i, lt);
                lt += 1;
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                gt -= 1;
                v.swap(i, gt);
            }
            std::cmp::Ordering::Equal => i += 1,
        }
    }
    (lt, gt)
}

/// A random index below `n`, from a per-thread xorshift64 (pivot choice only: the result of
/// the sort does not depend on it).
fn random_below(n: usize) -> usize {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = const { Cell::new(0x2545_F491_4F6C_DD1D) };
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        (x % n as u64) as usize
    })
}

/// xorshift64*: a fixed, reproducible input with no dependency.
fn random_input(len: usize, mut seed: u64) -> Vec<u64> {
    (0..len)
        .map(|_| {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            seed.wrapping_mul(0x2545_F491_4F6C_DD1D) % 1_000_000 // duplicates on purpose
        })
        .collect()
}

fn check(name: &str, sort: impl FnOnce(&mut Vec<u64>), input: &[u64]) {
    let mut expected = input.to_vec();
    expected.sort_unstable();
    let mut v = input.to_vec();
    let start = Instant::now();
    sort(&mut v);
    let took = start.elapsed();
    assert_eq!(v, expected, "{name}: not sorted like sort_unstable");
    println!(
        "parallel_quicksort: {name}: {} elements sorted in {took:?}",
        v.len()
    );
}

fn main() {
    let input = random_input(LEN, 0x9E37_79B9_7F4A_7C15);
    check("global pool", |v| quicksort(v), &input);

    let pool = berth::pool::ThreadPool::new(2);
    check(
        "ThreadPool::new(2)",
        |v| pool.install(|| quicksort(v)),
        &input,
    );

    // Edge cases: already sorted, reversed, all equal, tiny.
    let sorted: Vec<u64> = (0..LEN as u64).collect();
    check("sorted input", |v| pool.install(|| quicksort(v)), &sorted);
    let reversed: Vec<u64> = (0..LEN as u64).rev().collect();
    check(
        "reversed input",
        |v| pool.install(|| quicksort(v)),
        &reversed,
    );
    check(
        "all equal",
        |v| pool.install(|| quicksort(v)),
        &vec![7; 10_000],
    );
    check("empty", |v| quicksort(v), &[]);
}
