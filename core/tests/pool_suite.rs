//! The behaviour suite of the fork-join pool (`berth::pool`): results against sequential code,
//! nesting (joins, `install`, pools, scopes), where panics resurface and when, `spawn` and the
//! pool's drop, thread indices and names, the CPU an idle pool uses, and, in child processes of
//! this test binary, `BERTH_NUM_THREADS` and the abort-on-unwind guard.
//!
//! Every scenario runs under a watchdog (`common::with_watchdog`), so a hang (a lost wake-up, a
//! job nobody runs) fails within seconds instead of at the CI timeout; a child process that
//! hangs is killed after as long.
//!
//! The panic scenarios print their (expected) panics through the default hook; the assertions
//! are on the payloads that come back.
//!
//! The idle-CPU scenario measures the whole process (`getrusage(RUSAGE_SELF)`), and the
//! `thread_name` panic scenario watches the threads that start while it runs, so those two run
//! alone: every other test of this file holds a shared lock for its whole run, they the
//! exclusive lock.

// Tests drive real std threads, atomics and sleeps against the crate; core/clippy.toml forbids
// those in the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::pool::{Scope, ThreadPool, ThreadPoolBuilder};
use common::{with_watchdog, WATCHDOG_SECS};
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread;
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// `normal`, or `miri` under Miri (which runs threads about a thousand times slower).
const fn scaled(normal: u64, miri: u64) -> u64 {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// Shared by every test; the idle-CPU test takes it exclusively (it measures the whole process).
static EXCLUSIVE: RwLock<()> = RwLock::new(());

fn shared() -> RwLockReadGuard<'static, ()> {
    EXCLUSIVE.read().unwrap_or_else(|p| p.into_inner())
}

#[cfg(target_os = "linux")]
fn exclusive() -> RwLockWriteGuard<'static, ()> {
    EXCLUSIVE.write().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` under the shared lock and a watchdog.
fn watched<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let _shared = shared();
    with_watchdog(WATCHDOG_SECS, what, f)
}

/// How long a test lets a closure lag behind the other side of a join or a scope, so that the
/// other side (possibly stolen, possibly panicking) finishes first. Only a chance to exercise
/// that order: no assertion depends on the timing.
const LAG: Duration = Duration::from_millis(if cfg!(miri) { 1 } else { 30 });

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Fibonacci with a join at every level.
fn fib_join(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = berth::join(|| fib_join(n - 1), || fib_join(n - 2));
    a + b
}

/// Fibonacci with joins down to `cutoff`, sequential below.
fn fib_cutoff(n: u64, cutoff: u64) -> u64 {
    if n <= cutoff {
        return fib_seq(n);
    }
    let (a, b) = berth::join(|| fib_cutoff(n - 1, cutoff), || fib_cutoff(n - 2, cutoff));
    a + b
}

/// The text of a panic payload (`panic!("literal")` or `panic!("{formatted}")`).
fn payload_text(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "<a payload that is not a string>".to_owned()
    }
}

/// Runs `f`, which must panic, and returns its payload's text.
fn expect_panic<R>(f: impl FnOnce() -> R) -> String {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("the closure was expected to panic, and returned"),
        Err(p) => payload_text(&*p),
    }
}

/// Panics unless `pool` still computes correctly, with joins on all its threads.
fn assert_usable(pool: &ThreadPool) {
    assert_eq!(pool.install(|| fib_join(15)), 610, "the pool after a panic");
}

/// Checks that all `threads` workers of `pool` are still there (none was lost to a panic):
/// `threads` scope jobs that wait for each other at a barrier can only all finish if each runs
/// on a worker of its own. Then checks that the pool still computes.
#[cfg(unix)]
fn assert_every_worker_alive(pool: &ThreadPool, threads: usize) {
    let all = std::sync::Barrier::new(threads);
    pool.scope(|s| {
        for _ in 0..threads {
            s.spawn(|_| {
                all.wait();
            });
        }
    });
    assert_usable(pool);
}

/// A small xorshift64 generator: reproducible data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// What a worker tells about itself (see [`discover_workers`]).
#[derive(Clone, Debug)]
struct WorkerInfo {
    tid: i64,
    name: Option<String>,
    #[cfg(target_os = "linux")]
    pthread: libc::pthread_t,
}

/// Runs `f(index)` on every worker of `pool`, at least once each (possibly more). Rounds of one
/// scope with one job per worker, each job lagging a little so that the others are stolen, until
/// every worker has run one (no job waits for another, so a worker that does not take part
/// costs a round, never a hang).
fn on_every_worker(pool: &ThreadPool, f: impl Fn(usize) + Sync) {
    let n = pool.current_num_threads();
    let seen: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    for _round in 0..1_000 {
        pool.scope(|s| {
            for _ in 0..n {
                s.spawn(|_| {
                    let index =
                        berth::current_thread_index().expect("a scope job runs on a worker");
                    f(index);
                    seen[index].store(true, SeqCst);
                    thread::sleep(Duration::from_millis(5));
                });
            }
        });
        if seen.iter().all(|s| s.load(SeqCst)) {
            return;
        }
    }
    panic!("some worker of the pool never ran a job in 1000 rounds: {seen:?}");
}

/// What every worker of `pool` tells about itself, by index.
fn discover_workers(pool: &ThreadPool) -> Vec<WorkerInfo> {
    let seen: Mutex<Vec<Option<WorkerInfo>>> = Mutex::new(vec![None; pool.current_num_threads()]);
    on_every_worker(pool, |index| {
        seen.lock().unwrap()[index] = Some(WorkerInfo {
            tid: common::current_tid(),
            name: thread::current().name().map(str::to_owned),
            #[cfg(target_os = "linux")]
            // SAFETY: pthread_self has no preconditions.
            pthread: unsafe { libc::pthread_self() },
        });
    });
    let seen = seen.into_inner().unwrap();
    seen.into_iter().map(Option::unwrap).collect()
}

/// Counts down when the thread that holds it exits (a thread-local's destructor).
struct ExitGuard(Arc<AtomicUsize>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

thread_local! {
    static EXIT_GUARD: std::cell::RefCell<Option<ExitGuard>> =
        const { std::cell::RefCell::new(None) };
}

/// Arms an exit guard on every worker of `pool`; the count they share drops to 0 once every
/// worker thread has exited.
fn arm_exit_guards(pool: &ThreadPool) -> Arc<AtomicUsize> {
    let live = Arc::new(AtomicUsize::new(0));
    on_every_worker(pool, |_| {
        EXIT_GUARD.with(|g| {
            let mut g = g.borrow_mut();
            if g.is_none() {
                live.fetch_add(1, SeqCst);
                *g = Some(ExitGuard(Arc::clone(&live)));
            }
        });
    });
    assert_eq!(live.load(SeqCst), pool.current_num_threads());
    live
}

// ---------------------------------------------------------------------------------------------
// 1. Results against sequential code
// ---------------------------------------------------------------------------------------------

const FIB_JOIN_N: u64 = scaled(22, 8);
const FIB_CUTOFF_N: u64 = scaled(32, 12);
const FIB_CUTOFF: u64 = scaled(18, 6);

#[test]
fn fib_join_at_every_level_matches_sequential() {
    watched("fib_join at 1, 2 and 4 threads", || {
        let expected = fib_seq(FIB_JOIN_N);
        for threads in [1, 2, 4] {
            let pool = ThreadPool::new(threads);
            assert_eq!(pool.current_num_threads(), threads);
            assert_eq!(
                pool.install(|| fib_join(FIB_JOIN_N)),
                expected,
                "fib_join({FIB_JOIN_N}) on {threads} threads"
            );
        }
    });
}

#[test]
fn fib_with_sequential_cutoff_matches_sequential() {
    watched("fib with a cutoff at 1, 2 and 4 threads", || {
        let expected = fib_seq(FIB_CUTOFF_N);
        for threads in [1, 2, 4] {
            let pool = ThreadPool::new(threads);
            assert_eq!(
                pool.install(|| fib_cutoff(FIB_CUTOFF_N, FIB_CUTOFF)),
                expected,
                "fib_cutoff({FIB_CUTOFF_N}) on {threads} threads"
            );
        }
    });
}

/// Below this many elements the quicksort sorts sequentially.
const SORT_CUTOFF: usize = if cfg!(miri) { 32 } else { 2_048 };
const SORT_LEN: u64 = scaled(1_000_000, 2_000);

/// Three-way partition around a median-of-three pivot: `v[..lt] < p`, `v[lt..gt] == p`,
/// `v[gt..] > p`.
fn partition3(v: &mut [u64]) -> (usize, usize) {
    let (a, b, c) = (v[0], v[v.len() / 2], v[v.len() - 1]);
    let pivot = a.max(b).min(a.min(b).max(c));
    let (mut lt, mut i, mut gt) = (0, 0, v.len());
    while i < gt {
        if v[i] < pivot {
            v.swap(lt, i);
            lt += 1;
            i += 1;
        } else if v[i] > pivot {
            gt -= 1;
            v.swap(i, gt);
        } else {
            i += 1;
        }
    }
    (lt, gt)
}

fn par_quicksort(v: &mut [u64]) {
    if v.len() <= SORT_CUTOFF {
        v.sort_unstable();
        return;
    }
    let (lt, gt) = partition3(v);
    let (left, rest) = v.split_at_mut(lt);
    let right = &mut rest[gt - lt..];
    berth::join(|| par_quicksort(left), || par_quicksort(right));
}

#[test]
fn parallel_quicksort_matches_sort_unstable() {
    watched("parallel quicksort", || {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        // Random values, then few distinct ones (many equal to the pivot).
        for (threads, modulus) in [(4, u64::MAX), (2, 16)] {
            let data: Vec<u64> = (0..SORT_LEN).map(|_| rng.next() % modulus).collect();
            let mut expected = data.clone();
            expected.sort_unstable();
            let mut got = data;
            let pool = ThreadPool::new(threads);
            pool.install(|| par_quicksort(&mut got));
            assert!(
                got == expected,
                "the parallel quicksort on {threads} threads (values mod {modulus}) differs \
                 from sort_unstable"
            );
        }
    });
}

// ---------------------------------------------------------------------------------------------
// 2. Nesting: joins, install, pools
// ---------------------------------------------------------------------------------------------

/// The sum of `lo..hi` with a join at every split.
fn sum_join(lo: u64, hi: u64) -> u64 {
    if hi - lo <= 1 {
        return if hi > lo { lo } else { 0 };
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = berth::join(|| sum_join(lo, mid), || sum_join(mid, hi));
    a + b
}

#[test]
fn nested_joins() {
    watched("nested joins", || {
        let pool = ThreadPool::new(2);
        // A fixed shape, three levels deep, with values of different types on each side.
        let ((a, (b, c)), (d, e)) = pool.install(|| {
            berth::join(
                || berth::join(|| 1u8, || berth::join(|| "two", || 3u64)),
                || berth::join(|| String::from("four"), || vec![5u32; 5]),
            )
        });
        assert_eq!((a, b, c, d.as_str(), e.len()), (1, "two", 3, "four", 5));
        // `ThreadPool::join` from outside, with joins inside each side.
        let (x, y) = pool.join(|| fib_join(12), || fib_join(13));
        assert_eq!((x, y), (144, 233));
        // A deep, wide tree of joins.
        let n = scaled(100_000, 200);
        assert_eq!(pool.install(|| sum_join(0, n)), n * (n - 1) / 2);
        // Joins that borrow from the caller's stack, mutably on both sides.
        let mut left = vec![1u64; 1000];
        let mut right = vec![2u64; 1000];
        pool.install(|| {
            berth::join(
                || left.iter_mut().for_each(|v| *v += 10),
                || right.iter_mut().for_each(|v| *v *= 10),
            )
        });
        assert!(left.iter().all(|&v| v == 11) && right.iter().all(|&v| v == 20));
    });
}

#[test]
fn install_from_outside_and_reentrant() {
    watched("install from outside and from inside", || {
        let pool = ThreadPool::new(2);
        assert_eq!(pool.install(|| 42), 42);
        assert_eq!(pool.install(|| String::from("owned")), "owned");
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(
            pool.install(|| v.iter().sum::<u64>()),
            5050,
            "borrows the caller's stack"
        );

        // From inside: the nested install runs on the same worker, directly.
        let (outer, inner, value) = pool.install(|| {
            let outer = pool.current_thread_index();
            let (inner, value) = pool.install(|| (pool.current_thread_index(), fib_join(10)));
            (outer, inner, value)
        });
        assert!(outer.is_some());
        assert_eq!(inner, outer, "a re-entrant install moved to another thread");
        assert_eq!(value, 55);
        // Re-entrant from inside a join's stolen (or not) side, three levels deep.
        let r = pool.install(|| {
            berth::join(
                || pool.install(|| pool.install(|| fib_join(8))),
                || pool.install(|| fib_join(9)),
            )
        });
        assert_eq!(r, (21, 34));
    });
}

#[test]
fn install_from_many_outside_threads_at_once() {
    watched("install from four outside threads", || {
        let pool = ThreadPool::new(2);
        let rounds = scaled(300, 5);
        thread::scope(|s| {
            for t in 0..4u64 {
                let pool = &pool;
                s.spawn(move || {
                    for i in 0..rounds {
                        let n = (t + i) % 12;
                        assert_eq!(pool.install(|| fib_join(n)), fib_seq(n));
                        assert_eq!(pool.install(|| t * 1000 + i), t * 1000 + i);
                    }
                });
            }
        });
    });
}

#[test]
fn nested_pools() {
    watched("install on pool B from a worker of pool A", || {
        let a = ThreadPool::new(2);
        let b = ThreadPool::new(2);
        let r = a.install(|| {
            let in_a = a.current_thread_index();
            let (a_in_b, b_in_b, any_in_b, fib) = b.install(|| {
                (
                    a.current_thread_index(),
                    b.current_thread_index(),
                    berth::current_thread_index(),
                    // Joins inside use B (the current worker's pool).
                    fib_join(15),
                )
            });
            (in_a, a_in_b, b_in_b, any_in_b, fib)
        });
        let (in_a, a_in_b, b_in_b, any_in_b, fib) = r;
        assert!(in_a.is_some(), "A's install runs on A");
        assert_eq!(a_in_b, None, "B's job runs on B, not on A");
        assert!(b_in_b.is_some());
        assert_eq!(any_in_b, b_in_b);
        assert_eq!(fib, 610);

        // Both sides of a join on A install on B at once; B's jobs join too, and check that
        // their joins stay on B.
        let (x, y) = a.install(|| {
            berth::join(
                || {
                    b.install(|| {
                        berth::join(|| b.current_thread_index().is_some(), || fib_join(12))
                    })
                },
                || b.install(|| fib_join(13)),
            )
        });
        assert_eq!(x, (true, 144));
        assert_eq!(y, 233);

        // A -> B -> A: B's worker installs back on A, whose other worker is free.
        let r = a.install(|| b.install(|| a.install(|| (a.current_thread_index(), fib_join(10)))));
        assert!(r.0.is_some());
        assert_eq!(r.1, 55);
    });
}

// ---------------------------------------------------------------------------------------------
// 3. Scopes
// ---------------------------------------------------------------------------------------------

#[test]
fn scope_borrows_from_the_stack() {
    watched("scope borrowing from the stack", || {
        let pool = ThreadPool::new(2);
        let mut data = vec![0u64; 1000];
        let base = 7u64;
        let total = AtomicUsize::new(0);
        let r = pool.scope(|s| {
            for (k, chunk) in data.chunks_mut(100).enumerate() {
                let total = &total;
                s.spawn(move |_| {
                    for (j, x) in chunk.iter_mut().enumerate() {
                        *x = base + (k * 100 + j) as u64;
                    }
                    total.fetch_add(chunk.len(), SeqCst);
                });
            }
            "scope result"
        });
        assert_eq!(r, "scope result");
        assert_eq!(total.load(SeqCst), 1000);
        assert!(data.iter().enumerate().all(|(i, &x)| x == base + i as u64));

        // The free function, from inside the pool.
        let mut counts = [0usize; 4];
        pool.install(|| {
            berth::scope(|s| {
                for (i, c) in counts.iter_mut().enumerate() {
                    s.spawn(move |_| *c = i * 10);
                }
            })
        });
        assert_eq!(counts, [0, 10, 20, 30]);
    });
}

/// `Scope::spawn` from threads that are not workers of the scope's pool: a plain thread, and a
/// worker of another pool. Those jobs go through the pool's injector; the scope still waits.
#[test]
fn scope_spawn_from_outside_the_pool() {
    watched("scope spawns from other threads", || {
        let pool = ThreadPool::new(2);
        let other = ThreadPool::new(1);
        let count = AtomicUsize::new(0);
        let ran_on_pool = AtomicUsize::new(0);
        pool.scope(|s| {
            let job = |_: &Scope<'_>| {
                thread::sleep(Duration::from_millis(1));
                if pool.current_thread_index().is_some() {
                    ran_on_pool.fetch_add(1, SeqCst);
                }
                count.fetch_add(1, SeqCst);
            };
            thread::scope(|ts| {
                for _ in 0..3 {
                    ts.spawn(|| {
                        for _ in 0..4 {
                            s.spawn(job);
                        }
                    });
                }
            });
            other.install(|| {
                for _ in 0..4 {
                    s.spawn(job);
                }
            });
        });
        assert_eq!(
            count.load(SeqCst),
            16,
            "the scope returned before its injected jobs ran"
        );
        assert_eq!(
            ran_on_pool.load(SeqCst),
            16,
            "a scope job ran outside the scope's pool"
        );
    });
}

/// Spawns a binary tree of `depth` levels of jobs below the caller, each counting itself.
fn spawn_tree<'s>(s: &Scope<'s>, depth: u32, count: &'s AtomicUsize) {
    count.fetch_add(1, SeqCst);
    if depth > 0 {
        s.spawn(move |s| spawn_tree(s, depth - 1, count));
        s.spawn(move |s| spawn_tree(s, depth - 1, count));
    }
}

#[test]
fn nested_scope_spawns() {
    watched("spawns inside spawned jobs", || {
        let pool = ThreadPool::new(2);
        let count = AtomicUsize::new(0);
        let depth = if cfg!(miri) { 4 } else { 12 };
        pool.scope(|s| spawn_tree(s, depth, &count));
        assert_eq!(
            count.load(SeqCst),
            (1 << (depth + 1)) - 1,
            "a job of the tree"
        );

        // Scopes inside scope jobs, and joins inside those.
        let inner_total = AtomicUsize::new(0);
        pool.scope(|s| {
            for _ in 0..4 {
                s.spawn(|_| {
                    let local = AtomicUsize::new(0);
                    pool.scope(|s2| {
                        for _ in 0..8 {
                            s2.spawn(|_| {
                                let (a, b) = berth::join(|| fib_join(8), || fib_join(7));
                                local.fetch_add((a + b) as usize, SeqCst);
                            });
                        }
                    });
                    // The inner scope has returned: all its jobs have added.
                    assert_eq!(local.load(SeqCst), 8 * 34, "an inner scope returned early");
                    inner_total.fetch_add(local.into_inner(), SeqCst);
                });
            }
        });
        assert_eq!(inner_total.load(SeqCst), 4 * 8 * 34);
    });
}

#[test]
fn scope_returns_only_when_all_jobs_are_done() {
    watched("scope waits for its jobs", || {
        let pool = ThreadPool::new(2);
        for round in 0..scaled(20, 2) {
            let done = AtomicUsize::new(0);
            let jobs = 16;
            pool.scope(|s| {
                for i in 0..jobs {
                    let done = &done;
                    s.spawn(move |s| {
                        if i % 4 == 0 {
                            thread::sleep(Duration::from_millis(2));
                        }
                        // A late job spawned from a job: also waited for.
                        if i == jobs - 1 {
                            s.spawn(move |_| {
                                thread::sleep(Duration::from_millis(3));
                                done.fetch_add(1, SeqCst);
                            });
                        }
                        done.fetch_add(1, SeqCst);
                    });
                }
            });
            assert_eq!(
                done.load(SeqCst),
                jobs + 1,
                "round {round}: scope returned early"
            );
        }
        // From outside any pool: the free function uses the global pool (not under Miri,
        // which reports the global pool's threads, still running, when main exits).
        if !cfg!(miri) {
            let done = AtomicUsize::new(0);
            berth::scope(|s| {
                for _ in 0..8 {
                    s.spawn(|_| {
                        thread::sleep(Duration::from_millis(1));
                        done.fetch_add(1, SeqCst);
                    });
                }
            });
            assert_eq!(
                done.load(SeqCst),
                8,
                "the global pool's scope returned early"
            );
        }
    });
}

// ---------------------------------------------------------------------------------------------
// 4. Panics resurface in the caller, after the other side has finished
// ---------------------------------------------------------------------------------------------

#[test]
fn panic_in_join_first_closure() {
    watched("a panic in join's first closure", || {
        for threads in [1, 2] {
            let pool = ThreadPool::new(threads);
            let b_done = AtomicBool::new(false);
            let msg = expect_panic(|| {
                pool.install(|| {
                    berth::join(
                        || -> u32 { panic!("first closure {threads}") },
                        || {
                            thread::sleep(LAG);
                            b_done.store(true, SeqCst);
                            7u32
                        },
                    )
                })
            });
            assert_eq!(msg, format!("first closure {threads}"));
            assert!(
                b_done.load(SeqCst),
                "{threads} threads: the panic resurfaced before the second closure finished"
            );
            assert_usable(&pool);
        }
    });
}

#[test]
fn panic_in_join_second_closure() {
    watched("a panic in join's second closure", || {
        for threads in [1, 2] {
            let pool = ThreadPool::new(threads);
            let a_done = AtomicBool::new(false);
            let msg = expect_panic(|| {
                pool.install(|| {
                    berth::join(
                        || {
                            thread::sleep(LAG);
                            a_done.store(true, SeqCst);
                            7u32
                        },
                        || -> u32 { panic!("second closure {threads}") },
                    )
                })
            });
            assert_eq!(msg, format!("second closure {threads}"));
            assert!(
                a_done.load(SeqCst),
                "{threads} threads: the panic resurfaced before the first closure finished"
            );
            assert_usable(&pool);
        }
    });
}

#[test]
fn panic_in_both_join_closures_first_wins() {
    watched("a panic in both join closures", || {
        for threads in [1, 2] {
            let pool = ThreadPool::new(threads);
            // The second closure panics first (stolen, while the first lags) ...
            let msg = expect_panic(|| {
                pool.install(|| {
                    berth::join(
                        || -> u8 {
                            thread::sleep(LAG);
                            panic!("slow first")
                        },
                        || -> u8 { panic!("fast second") },
                    )
                })
            });
            assert_eq!(
                msg, "slow first",
                "{threads} threads: the first closure's panic wins"
            );
            // ... or last.
            let msg = expect_panic(|| {
                pool.install(|| {
                    berth::join(
                        || -> u8 { panic!("fast first") },
                        || -> u8 {
                            thread::sleep(LAG);
                            panic!("slow second")
                        },
                    )
                })
            });
            assert_eq!(
                msg, "fast first",
                "{threads} threads: the first closure's panic wins"
            );
            assert_usable(&pool);
        }
    });
}

#[test]
fn panic_deep_in_a_join_tree() {
    watched("a panic deep in a tree of joins", || {
        let pool = ThreadPool::new(2);
        for path in [0b0000u64, 0b1111, 0b0101, 0b1010] {
            let msg = expect_panic(|| pool.install(|| fib_panicking_one(14, 0, path, 4, true)));
            assert_eq!(msg, format!("leaf {path:#b}"));
            assert_usable(&pool);
        }
    });
}

/// Fibonacci with joins that panics at depth `target_depth` on the branch chosen by `path`
/// (bits, low first: 1 takes the second closure), and nowhere else.
fn fib_panicking_one(n: u64, depth: u32, path: u64, target_depth: u32, on_path: bool) -> u64 {
    if on_path && depth == target_depth {
        panic!("leaf {path:#b}");
    }
    if n < 2 {
        return n;
    }
    let bit = (path >> depth) & 1;
    let (a, b) = berth::join(
        || fib_panicking_one(n - 1, depth + 1, path, target_depth, on_path && bit == 0),
        || fib_panicking_one(n - 2, depth + 1, path, target_depth, on_path && bit == 1),
    );
    a + b
}

#[test]
fn panic_in_a_scope_job() {
    watched("a panic in a scope job", || {
        let pool = ThreadPool::new(2);
        let others = AtomicUsize::new(0);
        let msg = expect_panic(|| {
            pool.scope(|s| {
                s.spawn(|_| panic!("scope job"));
                for _ in 0..6 {
                    s.spawn(|_| {
                        thread::sleep(LAG / 3);
                        others.fetch_add(1, SeqCst);
                    });
                }
            })
        });
        assert_eq!(msg, "scope job");
        assert_eq!(
            others.load(SeqCst),
            6,
            "the scope's panic resurfaced before its other jobs ended"
        );
        assert_usable(&pool);

        // A panic in a nested spawn, deep in a scope run from inside the pool.
        let others = AtomicUsize::new(0);
        let msg = expect_panic(|| {
            pool.install(|| {
                berth::scope(|s| {
                    s.spawn(|s| {
                        s.spawn(|s| {
                            s.spawn(|_| panic!("nested scope job"));
                        });
                    });
                    s.spawn(|_| {
                        thread::sleep(LAG);
                        others.fetch_add(1, SeqCst);
                    });
                })
            })
        });
        assert_eq!(msg, "nested scope job");
        assert_eq!(others.load(SeqCst), 1);
        assert_usable(&pool);

        // The scope's body panics after spawning: its jobs still finish first.
        let others = AtomicUsize::new(0);
        let msg = expect_panic(|| {
            pool.scope(|s| {
                for _ in 0..4 {
                    s.spawn(|_| {
                        thread::sleep(LAG / 3);
                        others.fetch_add(1, SeqCst);
                    });
                }
                panic!("scope body");
            })
        });
        assert_eq!(msg, "scope body");
        assert_eq!(
            others.load(SeqCst),
            4,
            "the body's panic resurfaced before the jobs ended"
        );

        // Several jobs panic: one of their payloads comes back, after all of them ran.
        let ran = AtomicUsize::new(0);
        let msg = expect_panic(|| {
            pool.scope(|s| {
                for i in 0..8 {
                    let ran = &ran;
                    s.spawn(move |_| {
                        ran.fetch_add(1, SeqCst);
                        if i % 2 == 0 {
                            panic!("job {i}");
                        }
                    });
                }
            })
        });
        assert!(
            ["job 0", "job 2", "job 4", "job 6"].contains(&msg.as_str()),
            "{msg}"
        );
        assert_eq!(ran.load(SeqCst), 8);
        assert_usable(&pool);
    });
}

#[test]
fn panic_in_install() {
    watched("a panic in install", || {
        let pool = ThreadPool::new(2);
        let msg = expect_panic(|| pool.install(|| -> u32 { panic!("install {}", 42) }));
        assert_eq!(msg, "install 42");
        assert_usable(&pool);

        // The installed job panics while the other side of its join runs elsewhere.
        let other = AtomicBool::new(false);
        let msg = expect_panic(|| {
            pool.install(|| {
                berth::join(
                    || -> () { panic!("install join") },
                    || {
                        thread::sleep(LAG);
                        other.store(true, SeqCst);
                    },
                )
            })
        });
        assert_eq!(msg, "install join");
        assert!(other.load(SeqCst));

        // A re-entrant install's panic goes through the outer one.
        let msg =
            expect_panic(|| pool.install(|| pool.install(|| -> u8 { panic!("inner install") })));
        assert_eq!(msg, "inner install");

        // A panic in pool B's job reaches A's worker, then the caller; both pools survive.
        let b = ThreadPool::new(1);
        let msg = expect_panic(|| pool.install(|| b.install(|| -> u8 { panic!("pool b") })));
        assert_eq!(msg, "pool b");
        assert_usable(&pool);
        assert_usable(&b);

        // A payload that is not a string comes back as it was.
        let p = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| berth::join(|| 1u8, || panic::panic_any(0xBE57_u32)))
        }))
        .expect_err("panic_any in join's second closure");
        assert_eq!(p.downcast_ref::<u32>(), Some(&0xBE57));

        // A caught panic inside the pool does not disturb it.
        let caught = pool.install(|| {
            panic::catch_unwind(|| berth::join(|| -> u8 { panic!("caught inside") }, || 1u8))
                .map_err(|p| payload_text(&*p))
        });
        assert_eq!(caught, Err("caught inside".to_owned()));
        assert_usable(&pool);
    });
}

// ---------------------------------------------------------------------------------------------
// 5. spawn, and the pool's drop
// ---------------------------------------------------------------------------------------------

#[test]
fn panic_in_spawned_job_keeps_the_pool() {
    watched("a panic in a spawned job", || {
        let pool = ThreadPool::new(2);
        let panicked = Arc::new(AtomicUsize::new(0));
        for i in 0..8 {
            let panicked = Arc::clone(&panicked);
            pool.spawn(move || {
                panicked.fetch_add(1, SeqCst);
                panic!("spawned job {i}");
            });
        }
        // Every worker still runs jobs (a worker killed by a panic would never show up here).
        let workers = discover_workers(&pool);
        assert_eq!(workers.len(), 2);
        assert_eq!(
            panicked.load(SeqCst),
            8,
            "scopes ran while spawned jobs were pending"
        );
        assert_usable(&pool);
        // And spawn still works.
        let (tx, rx) = std::sync::mpsc::channel();
        pool.spawn(move || tx.send(berth::current_thread_index()).unwrap());
        assert!(rx.recv().unwrap().is_some());
    });
}

/// Increments `count`, and spawns `fanout` children (on the current worker's pool) `depth` more
/// levels down.
fn spawn_counting(count: Arc<AtomicUsize>, depth: u32, fanout: usize) {
    if depth > 0 {
        for _ in 0..fanout {
            let count = Arc::clone(&count);
            berth::spawn(move || spawn_counting(count, depth - 1, fanout));
        }
    }
    if depth % 2 == 0 {
        thread::sleep(Duration::from_micros(200));
    }
    count.fetch_add(1, SeqCst);
}

#[test]
fn drop_waits_for_spawned_jobs() {
    watched("drop waits for spawned jobs", || {
        for threads in [1, 2, 3] {
            let count = Arc::new(AtomicUsize::new(0));
            let pool = ThreadPool::new(threads);
            let roots = scaled(50, 3) as usize;
            for _ in 0..roots {
                let count = Arc::clone(&count);
                // Each root spawns 2 children, which spawn 2 each: 7 jobs per root.
                pool.spawn(move || spawn_counting(count, 2, 2));
            }
            // Spawned from a worker too (onto its own deque).
            {
                let count = Arc::clone(&count);
                pool.install(move || {
                    for _ in 0..roots {
                        let count = Arc::clone(&count);
                        berth::spawn(move || spawn_counting(count, 1, 3));
                    }
                });
            }
            drop(pool);
            assert_eq!(
                count.load(SeqCst),
                roots * 7 + roots * 4,
                "{threads} threads: drop returned before every spawned job ran"
            );
        }
    });
}

#[test]
fn drop_right_after_spawn_from_a_long_job() {
    watched("drop while a job is still spawning", || {
        let count = Arc::new(AtomicUsize::new(0));
        let pool = ThreadPool::new(2);
        let c = Arc::clone(&count);
        pool.spawn(move || {
            // Still spawning after the drop below has started.
            for _ in 0..20 {
                thread::sleep(Duration::from_millis(1));
                let c = Arc::clone(&c);
                berth::spawn(move || {
                    c.fetch_add(1, SeqCst);
                });
            }
            c.fetch_add(1, SeqCst);
        });
        drop(pool);
        assert_eq!(
            count.load(SeqCst),
            21,
            "a job spawned during the drop was lost"
        );
    });
}

#[test]
fn drop_from_inside_a_worker() {
    watched("a pool dropped by its own job", || {
        let pool = Arc::new(Mutex::new(Some(ThreadPool::new(2))));
        let live = arm_exit_guards(pool.lock().unwrap().as_ref().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        let count = Arc::new(AtomicUsize::new(0));
        {
            let guard = pool.lock().unwrap();
            let p = guard.as_ref().unwrap();
            for _ in 0..10 {
                let count = Arc::clone(&count);
                p.spawn(move || {
                    thread::sleep(Duration::from_millis(1));
                    count.fetch_add(1, SeqCst);
                });
            }
            let pool2 = Arc::clone(&pool);
            p.spawn(move || {
                let taken = pool2.lock().unwrap().take();
                drop(taken); // on one of its own workers: returns without joining
                tx.send(()).unwrap();
            });
        }
        rx.recv().unwrap();
        // The workers exit once their work is done (their threads are not joined).
        let start = std::time::Instant::now();
        while live.load(SeqCst) != 0 {
            assert!(
                start.elapsed() < Duration::from_secs(if cfg!(miri) { 3_600 } else { 10 }),
                "{} worker(s) of a pool dropped from inside never exited",
                live.load(SeqCst)
            );
            thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            count.load(SeqCst),
            10,
            "jobs given before the drop were lost"
        );
    });
}

/// The kernel ids of this process's threads (Linux).
#[cfg(target_os = "linux")]
fn task_ids() -> std::collections::BTreeSet<i64> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// A panic in the `thread_name` closure (here: for the third of three workers) unwinds out of
/// `build`; the workers already started must not be left behind, asleep forever (rayon-core
/// stops them with a guard in `Registry::new`).
///
/// The pool's threads are told apart from others that start meanwhile (libtest starts a thread
/// per test) by their names: `bth-name-panic*` once they have named themselves, or this test
/// thread's own name, which a thread inherits from its creator until it names itself. Runs
/// alone (the exclusive lock) all the same.
#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "reads the process's threads from /proc")]
fn panic_in_thread_name_stops_started_workers() {
    let _exclusive = exclusive();
    with_watchdog(WATCHDOG_SECS, "a panic in thread_name", || {
        let before = task_ids();
        let msg = expect_panic(|| {
            ThreadPoolBuilder::new()
                .num_threads(3)
                .thread_name(|i| {
                    if i == 2 {
                        panic!("no name for {i}");
                    }
                    format!("bth-name-panic{i}")
                })
                .build()
        });
        assert_eq!(msg, "no name for 2");
        let started: Vec<i64> = task_ids().difference(&before).copied().collect();
        let comm = |tid: i64| {
            std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
                .ok()
                .map(|c| c.trim().to_owned())
        };
        let me = comm(common::current_tid()).expect("this thread's name");
        let alive = || -> Vec<(i64, String)> {
            started
                .iter()
                .filter_map(|&tid| Some((tid, comm(tid)?)))
                .filter(|(_, name)| name.starts_with("bth-name-panic") || *name == me)
                .collect()
        };
        let start = std::time::Instant::now();
        while !alive().is_empty() && start.elapsed() < Duration::from_secs(5) {
            thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            alive(),
            Vec::new(),
            "workers started before thread_name panicked are still alive (leaked, asleep \
             forever): (tid, name) listed"
        );
    });
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the global pool's threads outlive the test, which Miri reports when main exits"
)]
fn spawn_outside_any_pool_uses_the_global_pool() {
    watched("berth::spawn from outside", || {
        let (tx, rx) = std::sync::mpsc::channel();
        for i in 0..10 {
            let tx = tx.clone();
            berth::spawn(move || tx.send((i, berth::current_thread_index())).unwrap());
        }
        let mut got: Vec<_> = (0..10).map(|_| rx.recv().unwrap()).collect();
        got.sort_unstable();
        assert!(
            got.iter().all(|(_, idx)| idx.is_some()),
            "a spawned job ran outside a worker"
        );
        assert_eq!(
            got.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        // And join from outside.
        assert_eq!(berth::join(|| fib_join(10), || 2), (55, 2));
        assert!(berth::current_num_threads() >= 1);
    });
}

// ---------------------------------------------------------------------------------------------
// 6. Thread indices, names, the builder
// ---------------------------------------------------------------------------------------------

#[test]
fn current_thread_index_inside_and_outside() {
    watched("current_thread_index", || {
        let pool = ThreadPool::new(3);
        let other = ThreadPool::new(1);
        assert_eq!(
            berth::current_thread_index(),
            None,
            "the test thread is no worker"
        );
        assert_eq!(pool.current_thread_index(), None);
        let (free, own, foreign) = pool.install(|| {
            (
                berth::current_thread_index(),
                pool.current_thread_index(),
                other.current_thread_index(),
            )
        });
        let i = own.expect("inside install");
        assert!(i < 3);
        assert_eq!(free, Some(i));
        assert_eq!(foreign, None, "a worker of another pool");
        // Inside both sides of joins, always one of the pool's indices.
        let indices = pool.install(|| {
            berth::join(
                || berth::join(berth::current_thread_index, berth::current_thread_index),
                || berth::join(berth::current_thread_index, berth::current_thread_index),
            )
        });
        let ((a, b), (c, d)) = indices;
        for idx in [a, b, c, d] {
            assert!(idx.is_some_and(|i| i < 3), "{idx:?}");
        }
        // And from every worker.
        let workers = discover_workers(&pool);
        assert_eq!(workers.len(), 3);
        assert_eq!(berth::current_thread_index(), None);
    });
}

#[test]
fn thread_names() {
    watched("thread names", || {
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .thread_name(|i| format!("berth-suite-{i}"))
            .build()
            .unwrap();
        let (name, index) = pool.install(|| {
            (
                thread::current().name().map(str::to_owned),
                pool.current_thread_index(),
            )
        });
        assert_eq!(name, Some(format!("berth-suite-{}", index.unwrap())));
        let workers = discover_workers(&pool);
        for (i, w) in workers.iter().enumerate() {
            assert_eq!(w.name.as_deref(), Some(format!("berth-suite-{i}").as_str()));
        }
        // Without thread_name, std's default (no name).
        let unnamed = ThreadPool::new(1);
        assert_eq!(
            unnamed.install(|| thread::current().name().map(str::to_owned)),
            None
        );
    });
}

/// Recursion `n` deep with a 4 KiB frame each; returns `n`.
fn deep_stack(n: usize) -> u64 {
    let frame = std::hint::black_box([1u8; 4096]);
    if n == 0 {
        return 0;
    }
    let below = deep_stack(n - 1);
    std::hint::black_box(&frame);
    below + u64::from(frame[n % 4096])
}

#[test]
fn builder_defaults_and_options() {
    watched("the builder", || {
        // 0 means BERTH_NUM_THREADS or the number of CPUs: at least one either way.
        let pool = ThreadPoolBuilder::new().num_threads(0).build().unwrap();
        assert!(pool.current_num_threads() >= 1);
        assert_eq!(pool.install(|| fib_join(10)), 55);
        drop(pool);
        assert!(ThreadPool::new(0).current_num_threads() >= 1);
        let b = ThreadPoolBuilder::new().num_threads(3);
        assert!(format!("{b:?}").contains("num_threads: 3"));

        // Worker stacks of 64 MiB hold a recursion that needs about 16 MiB (std's default for
        // spawned threads is 2 MiB: ignoring stack_size overflows the stack, which aborts).
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .stack_size(64 << 20)
            .build()
            .unwrap();
        let depth = scaled(4_000, 10) as usize;
        assert_eq!(
            pool.install(|| berth::join(|| deep_stack(depth), || deep_stack(depth))),
            (depth as u64, depth as u64)
        );
        assert_eq!(pool.install(|| fib_join(16)), 987);
        assert!(format!("{pool:?}").contains("num_threads: 2"));

        // Once the global pool exists (this call builds it if no test did yet), build_global
        // reports it. (Not under Miri: see spawn_outside_any_pool_uses_the_global_pool.)
        if !cfg!(miri) {
            assert!(berth::current_num_threads() >= 1);
            let err = ThreadPoolBuilder::new()
                .num_threads(1)
                .build_global()
                .expect_err("the global pool already exists");
            assert!(
                err.to_string().contains("already been initialized"),
                "{err}"
            );
        }
    });
}

// ---------------------------------------------------------------------------------------------
// 7. Many small jobs: sleep and wake churn
// ---------------------------------------------------------------------------------------------

/// Workers fall asleep and wake over and over (tiny installs and joins, with pauses so that the
/// pool goes idle in between): a lost wake-up anywhere hangs a round and trips the watchdog.
#[test]
fn sleep_wake_churn() {
    watched("sleep and wake churn", || {
        let pool = ThreadPool::new(2);
        for i in 0..scaled(2_000, 20) {
            let (a, b) = pool.install(|| berth::join(|| i, || i + 1));
            assert_eq!((a, b), (i, i + 1));
            if i % 100 == 0 {
                thread::sleep(Duration::from_millis(1));
            }
            if i % 7 == 0 {
                let n = AtomicUsize::new(0);
                pool.scope(|s| {
                    s.spawn(|_| {
                        n.fetch_add(1, SeqCst);
                    });
                    s.spawn(|_| {
                        n.fetch_add(1, SeqCst);
                    });
                });
                assert_eq!(n.load(SeqCst), 2);
            }
        }
    });
}

/// A join whose first closure waits (spinning) for its second, on a two-worker pool: it ends
/// only if the other worker takes the second closure, so the wake-up that the push of the
/// second closure sends must reach a worker that is falling asleep at that instant. That
/// wake-up has no contended RMW: a `SeqCst` fence after the push and one in the sleeper between
/// its registration and its last look at the deques make one of the two see the other (see
/// "Sleeping and waking" in `berth::pool`, and `WorkerThread::push`). Before those fences this
/// test saw the miss about once in 190,000 joins (2-core x86-64, release build): the second
/// closure sat on the deque while the other worker slept. With them, 20 runs of 30 s each
/// (release build, on a shared 2-core machine: 9.4 million joins) saw none.
///
/// The run lasts `BERTH_MISS_SECS` seconds. The default, 2, is a smoke check (350 joins in a
/// debug build while the 2-core machine was busy; a release build did 10,000 to 1.4 million in
/// 30 s, depending on the load): it would catch missing fences only rarely, and
/// `BERTH_MISS_SECS=60 cargo test --release ...` probes. A closure that waits `GIVE_UP` for its
/// sibling, far longer than any scheduling delay, fails the test as a missed wake-up; the
/// watchdog catches anything else that hangs. Under Miri: three joins.
#[test]
fn join_first_closure_waiting_for_the_second_is_not_stranded() {
    let secs: u64 = std::env::var("BERTH_MISS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    const GIVE_UP: Duration = Duration::from_secs(scaled(10, 24 * 3_600));
    // Under Miri a few joins: its clock is not the machine's, and it interprets every step.
    let max_joins = scaled(u64::MAX, 3);
    let _shared = shared();
    with_watchdog(
        scaled(secs + 30, WATCHDOG_SECS),
        "a join waiting on its own second closure",
        move || {
            let pool = ThreadPool::new(2);
            let start = std::time::Instant::now();
            let mut joins = 0u64;
            while joins < max_joins && start.elapsed() < Duration::from_secs(secs) {
                joins += 1;
                let flag = AtomicBool::new(false);
                let gave_up = pool.install(|| {
                    let (gave_up, ()) = berth::join(
                        || {
                            let waiting = std::time::Instant::now();
                            while !flag.load(SeqCst) {
                                if waiting.elapsed() > GIVE_UP {
                                    return true;
                                }
                                std::hint::spin_loop();
                            }
                            false
                        },
                        || flag.store(true, SeqCst),
                    );
                    gave_up
                });
                assert!(
                    !gave_up,
                    "join {joins}: the second closure sat on the deque for {GIVE_UP:?} while the \
                 other worker slept (a missed wake-up of a local push)"
                );
            }
            eprintln!("{joins} joins in {secs} s, no missed wake-up");
        },
    );
}

// ---------------------------------------------------------------------------------------------
// 8. An idle pool uses no CPU
// ---------------------------------------------------------------------------------------------

/// CPU time (user + system) of the whole process.
#[cfg(target_os = "linux")]
fn process_cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` points to writable memory the size of a `rusage`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_SELF) failed");
    // SAFETY: getrusage returned 0, so it filled the struct (zeroed before anyway).
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// CPU time of another thread of this process (alive), by its pthread handle.
#[cfg(target_os = "linux")]
fn other_thread_cpu_time(thread: libc::pthread_t) -> Duration {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `thread` is a live thread of this process (a worker of a pool not yet dropped).
    let rc = unsafe { libc::pthread_getcpuclockid(thread, &mut clock) };
    assert_eq!(rc, 0, "pthread_getcpuclockid failed");
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is writable; `clock` came from pthread_getcpuclockid.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(thread cpu clock) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "getrusage and /proc are not available under Miri")]
fn idle_pool_uses_no_cpu() {
    let _exclusive = exclusive();
    with_watchdog(WATCHDOG_SECS, "an idle pool's CPU", || {
        let pool = ThreadPool::new(2);
        assert_eq!(pool.install(|| fib_join(18)), 2584);
        let workers = discover_workers(&pool);
        for w in &workers {
            common::wait_until_asleep(w.tid, "an idle pool's worker");
        }
        let window = Duration::from_millis(300);
        let workers_before: Vec<Duration> = workers
            .iter()
            .map(|w| other_thread_cpu_time(w.pthread))
            .collect();
        let process_before = process_cpu_time();
        thread::sleep(window);
        let process_used = process_cpu_time() - process_before;
        let workers_used: Vec<Duration> = workers
            .iter()
            .zip(&workers_before)
            .map(|(w, before)| other_thread_cpu_time(w.pthread) - *before)
            .collect();
        let workers_total: Duration = workers_used.iter().sum();
        assert!(
            workers_total < Duration::from_millis(20),
            "idle pool burned CPU: its workers used {workers_used:?} in {window:?}"
        );
        assert!(
            process_used < Duration::from_millis(50),
            "idle pool burned CPU: the process used {process_used:?} in {window:?} (workers: \
             {workers_used:?})"
        );
        // And it wakes up.
        assert_eq!(pool.install(|| fib_join(10)), 55);
    });
}

// ---------------------------------------------------------------------------------------------
// 9. In a child process: the environment, aborts, a worker's thread-local after it unwinds
// ---------------------------------------------------------------------------------------------

/// Set in a child process of this test binary (see [`run_child`]) to the scenario it runs.
#[cfg(unix)]
const CHILD_ENV: &str = "BERTH_POOL_SUITE_CHILD";

/// The scenario this process runs as a child of [`run_child`], if it is one.
#[cfg(unix)]
fn child_scenario() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

/// Runs the test `test` of this binary, alone, in a child process with `CHILD_ENV=scenario` and
/// the environment changes `env` (`None` removes a variable); this process's environment, which
/// the other tests share, is untouched. Checks that the filter found the test, so that a renamed
/// test cannot pass by running nothing.
#[cfg(unix)]
fn run_child(test: &str, scenario: &str, env: &[(&str, Option<&str>)]) -> std::process::Output {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = std::process::Command::new(exe);
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, scenario);
    for &(key, value) in env {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start a child test process");
    // Drained on their own threads, so a chatty child never blocks on a full pipe.
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    // The watchdog of the child: one that hangs is killed, so the hang fails this test.
    let deadline = std::time::Instant::now() + Duration::from_secs(WATCHDOG_SECS);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child running `{test}` ({scenario}) did not finish within {WATCHDOG_SECS} s: killed");
        }
        thread::sleep(Duration::from_millis(10));
    };
    let out = std::process::Output {
        status,
        stdout: stdout.join().expect("the stdout reader"),
        stderr: stderr.join().expect("the stderr reader"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("running 1 test"),
        "the child did not run `{test}` (scenario {scenario}): stdout {stdout}, stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `num_threads(0)` (the default, and `ThreadPool::new(0)`) means `BERTH_NUM_THREADS` when it is
/// a positive number, else the CPU count (`std::thread::available_parallelism`); the global
/// pool follows the same rule. Each case runs in a child process with its own environment.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "Miri cannot start processes")]
fn num_threads_zero_means_berth_num_threads_or_the_cpu_count() {
    const EXPECT_ENV: &str = "BERTH_POOL_SUITE_EXPECT";
    if child_scenario().as_deref() == Some("num-threads") {
        let expected: usize = std::env::var(EXPECT_ENV).unwrap().parse().unwrap();
        let built = ThreadPoolBuilder::new().num_threads(0).build().unwrap();
        assert_eq!(built.current_num_threads(), expected, "num_threads(0)");
        assert_eq!(built.install(berth::current_num_threads), expected);
        let default = ThreadPoolBuilder::new().build().unwrap();
        assert_eq!(default.current_num_threads(), expected, "the default");
        assert_eq!(
            ThreadPool::new(0).current_num_threads(),
            expected,
            "ThreadPool::new(0)"
        );
        assert_eq!(berth::current_num_threads(), expected, "the global pool");
        return;
    }
    let _shared = shared();
    let cpus = thread::available_parallelism().map_or(1, |n| n.get());
    // A count the CPU count cannot be mistaken for.
    let set = if cpus == 3 { 4 } else { 3 };
    let cases: [(Option<String>, usize); 4] = [
        (Some(set.to_string()), set),
        (None, cpus),
        (Some("0".into()), cpus),
        (Some("many".into()), cpus),
    ];
    for (value, expected) in cases {
        let out = run_child(
            "num_threads_zero_means_berth_num_threads_or_the_cpu_count",
            "num-threads",
            &[
                ("BERTH_NUM_THREADS", value.as_deref()),
                (EXPECT_ENV, Some(&expected.to_string())),
            ],
        );
        assert!(
            out.status.success(),
            "BERTH_NUM_THREADS={value:?}: expected {expected} threads ({cpus} CPUs); the child \
             said: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A panic payload whose `Drop` panics: berth drops the payloads it does not resume, and that
/// second panic must stay contained.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("PanicOnDrop: dropping this payload panics");
    }
}

/// An unexpected panic in berth's code while a `join`'s second closure is on the deque (where a
/// thief could be running it, on memory of this stack frame) aborts the process instead of
/// unwinding past that frame. No public function lets a user make berth's code panic, so the
/// panic comes from the hidden test hook `__spawn_unwinding` (a spawned job whose panic is not
/// caught). On a one-thread pool the order is fixed: the first closure spawns the job (pushed
/// above the second closure), and the join pops it back and runs it, inside the join.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "Miri cannot start processes")]
fn a_panic_in_berth_inside_a_join_aborts() {
    if child_scenario().as_deref() == Some("abort-in-join") {
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `no_core` is a valid rlimit; lowering this process's core size limit affects
        // only this child (no core file for the abort it expects).
        unsafe { libc::setrlimit(libc::RLIMIT_CORE, &no_core) };
        let pool = ThreadPool::new(1);
        pool.install(|| {
            berth::join(
                || berth::pool::__spawn_unwinding(|| panic!("{INJECTED}")),
                || (),
            )
        });
        // Reaching this line fails the parent's check below.
        println!("the join returned");
        return;
    }
    use std::os::unix::process::ExitStatusExt;
    let _shared = shared();
    let out = run_child(
        "a_panic_in_berth_inside_a_join_aborts",
        "abort-in-join",
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGABRT),
        "the child was not aborted: {:?}; stdout {}, stderr {stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.contains(INJECTED),
        "the abort was not the injected panic: {stderr}"
    );
    assert!(
        stderr.contains("berth::pool: unexpected panic while a job on this stack may be running elsewhere; aborting"),
        "the abort did not come from the join's guard: {stderr}"
    );
}

/// The message of the panics `__spawn_unwinding` injects into berth's code.
const INJECTED: &str = "injected: a panic in berth's code";

/// A spawned job's panic is caught and its payload dropped; a payload whose `Drop` panics must
/// not escape from there. It did: it unwound the worker, and a one-thread pool, left with no
/// worker, never ran another job (`install` below hung). Run in a child process, whose hang the
/// parent's watchdog turns into a failure.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "Miri cannot start processes")]
fn a_spawned_payload_that_panics_on_drop_leaves_the_worker() {
    if child_scenario().as_deref() == Some("spawn-payload") {
        for threads in [1, 2] {
            let pool = ThreadPool::new(threads);
            for _ in 0..2 * threads {
                pool.spawn(|| panic::panic_any(PanicOnDrop));
            }
            assert_every_worker_alive(&pool, threads);
        }
        println!("contained");
        return;
    }
    expect_child_contained(
        "a_spawned_payload_that_panics_on_drop_leaves_the_worker",
        "spawn-payload",
    );
}

/// A scope keeps its jobs' first panic and drops the others. A dropped payload whose `Drop`
/// panics must not escape from the job that berth drops it in: it unwound the job's worker,
/// and a panic while unwinding aborted the process. Run in a child process, so that the old
/// behaviour fails this test instead of aborting the suite.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "Miri cannot start processes")]
fn a_scope_survives_dropping_payloads_that_panic_on_drop() {
    if child_scenario().as_deref() == Some("scope-payloads") {
        let pool = ThreadPool::new(2);
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|s| {
                for _ in 0..4 {
                    s.spawn(|_| panic::panic_any(PanicOnDrop));
                }
            })
        }));
        let payload = caught.expect_err("the scope resumes its jobs' first panic");
        assert!(
            payload.is::<PanicOnDrop>(),
            "the scope resumed another panic"
        );
        std::mem::forget(payload); // dropping it would panic here
        assert_every_worker_alive(&pool, 2);
        println!("contained");
        return;
    }
    expect_child_contained(
        "a_scope_survives_dropping_payloads_that_panic_on_drop",
        "scope-payloads",
    );
}

/// Runs `test` in a child process (`run_child`) and checks that it printed "contained" and
/// exited normally, under the watchdog.
#[cfg(unix)]
fn expect_child_contained(test: &'static str, scenario: &'static str) {
    let _shared = shared();
    let out = run_child(test, scenario, &[]);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("contained"),
        "the child failed: {:?}; stdout {}, stderr {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// When two panics meet (both closures of a `join`; a scope's body and one of its jobs), berth
/// resumes one and drops the other. If the dropped payload's `Drop` panics, that panic is
/// contained (and its own payload leaked): the caller gets the panic berth promised, instead
/// of a panic raised while unwinding, which aborted the process. Run in a child process, so
/// that the old behaviour fails this test instead of aborting the suite.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "Miri cannot start processes")]
fn a_second_panic_whose_payload_panics_on_drop_is_contained() {
    if child_scenario().as_deref() == Some("second-payload") {
        for threads in [1, 2] {
            let pool = ThreadPool::new(threads);
            // Both closures of a join: the first one's panic wins.
            let caught = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.join(
                    || panic::panic_any(PanicOnDrop),
                    || panic::panic_any(PanicOnDrop),
                )
            }));
            std::mem::forget(caught.expect_err("join resumes a panic"));
            let caught = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.join(
                    || -> () { panic!("first") },
                    || panic::panic_any(PanicOnDrop),
                )
            }));
            let payload = caught.expect_err("join resumes a panic");
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"first"));
            // A scope's body and one of its jobs: the body's panic wins.
            let caught = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.scope(|s| {
                    s.spawn(|_| panic::panic_any(PanicOnDrop));
                    panic!("body");
                })
            }));
            let payload = caught.expect_err("scope resumes a panic");
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"body"));
            assert_usable(&pool);
        }
        println!("contained");
        return;
    }
    expect_child_contained(
        "a_second_panic_whose_payload_panics_on_drop_is_contained",
        "second-payload",
    );
}

/// `berth::current_thread_index()` as a worker thread's thread-locals are destroyed, after the
/// worker left its main loop: by `(test, index)`.
static SEEN_AT_THREAD_EXIT: Mutex<Vec<(&'static str, Option<usize>)>> = Mutex::new(Vec::new());

/// Records `berth::current_thread_index()` when its thread's thread-locals are destroyed.
struct IndexAtThreadExit(&'static str);

impl Drop for IndexAtThreadExit {
    fn drop(&mut self) {
        let index = berth::current_thread_index();
        SEEN_AT_THREAD_EXIT
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((self.0, index));
    }
}

thread_local! {
    static AT_THREAD_EXIT: std::cell::RefCell<Option<IndexAtThreadExit>> =
        const { std::cell::RefCell::new(None) };
}

/// A worker clears its thread-local pointer when it leaves its main loop, by returning or by
/// unwinding: code that runs on the thread afterwards (here a thread-local's destructor, the
/// last code a thread runs) sees no worker, not a pointer into the stack frame the worker lived
/// in. The unwinding case kills the worker with a panic injected into berth's code (the hidden
/// test hook `__spawn_unwinding`, as in `a_panic_in_berth_inside_a_join_aborts`); the pool's
/// drop then joins a thread that panicked, which it ignores.
#[test]
fn a_worker_that_exits_or_unwinds_clears_its_thread_local() {
    for (case, unwinds) in [("returns", false), ("unwinds", true)] {
        let _shared = shared();
        with_watchdog(
            WATCHDOG_SECS,
            "a worker's thread-local at exit",
            move || {
                let pool = ThreadPool::new(1);
                let (tx, rx) = std::sync::mpsc::channel();
                let job = move || {
                    AT_THREAD_EXIT.with(|a| *a.borrow_mut() = Some(IndexAtThreadExit(case)));
                    tx.send(berth::current_thread_index()).unwrap();
                    if unwinds {
                        panic!("{INJECTED}");
                    }
                };
                if unwinds {
                    // On a worker of `pool`, so the job goes to `pool`.
                    pool.install(|| berth::pool::__spawn_unwinding(job));
                } else {
                    pool.spawn(job);
                }
                assert_eq!(rx.recv().unwrap(), Some(0), "the job ran on worker 0");
                drop(pool); // joins the worker: its thread-locals are destroyed by then
            },
        );
        let seen = SEEN_AT_THREAD_EXIT
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mine: Vec<_> = seen.iter().filter(|(c, _)| *c == case).collect();
        assert_eq!(
            mine,
            [&(case, None)],
            "the worker ({case}) left a pointer to itself in its thread-local"
        );
    }
}
