//! shuttle models of the fork-join pool (`berth::pool`): whole pools of 1 to 3 workers, with the
//! threads outside them, under shuttle's random and PCT schedulers. The loom models
//! (`loom_pool.rs`) check the latch and idle-sleep protocols on the smallest pools; these drive
//! more of the pool: steals of a join's second closure, nested joins, `install` from two outside
//! threads at once, scopes with nested spawns, panics in joins and scope jobs, and the drop that
//! waits for spawned jobs. Build with `--cfg shuttle`:
//! `RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle cargo test -p berth-models
//! --release --test shuttle_pool`.
//!
//! There is no global pool under the models: each execution builds its `ThreadPool` and drops
//! it (joining its workers) before it ends.
//!
//! Budget: `SHUTTLE_ITERATIONS` schedules per scheduler (default 200). A failure prints
//! shuttle's encoded schedule; rerun exactly that schedule with `SHUTTLE_REPLAY='<schedule>'`
//! and the test's name as the filter.
//!
//! Shuttle does not model weak memory (loom does): a lost wake-up that needs a stale read (such
//! as the documented best-effort wake of a local push) cannot show here; one that needs only an
//! unlucky interleaving hangs an execution, which shuttle reports as a deadlock.
#![cfg(shuttle)]

use berth::pool::{Scope, ThreadPool};
use shuttle::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use shuttle::sync::Arc;
use shuttle::thread;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

fn iterations() -> usize {
    std::env::var("SHUTTLE_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

/// Runs `f` under the random and the PCT scheduler, or replays one schedule.
fn check(f: impl Fn() + Send + Sync + Clone + 'static) {
    if let Ok(schedule) = std::env::var("SHUTTLE_REPLAY") {
        shuttle::replay(f, &schedule);
        return;
    }
    shuttle::check_random(f.clone(), iterations());
    shuttle::check_pct(f, iterations(), 3);
}

/// Every panic the models provoke on purpose carries this prefix.
const EXPECTED: &str = "expected panic: ";

/// Silences the panics the models provoke on purpose (shuttle's hook would print a schedule for
/// each, in every execution), and leaves every other panic to the hooks installed before (shuttle's
/// included, which prints the failing schedule). Called inside an execution, so after shuttle has
/// installed its hook.
fn quiet_expected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !payload_text(info.payload()).starts_with(EXPECTED) {
                previous(info);
            }
        }));
    });
}

fn payload_text(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        String::new()
    }
}

/// Runs `f`, which must panic, and returns its payload's text.
fn expect_panic<R>(f: impl FnOnce() -> R) -> String {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("the closure was expected to panic, and returned"),
        Err(p) => payload_text(&*p),
    }
}

/// A binary tree of joins `depth` levels deep; returns its number of leaves.
fn join_tree(depth: u32) -> u32 {
    if depth == 0 {
        return 1;
    }
    let (a, b) = berth::join(|| join_tree(depth - 1), || join_tree(depth - 1));
    a + b
}

/// A join on 2 and 3 workers, from outside (`ThreadPool::join`) and from inside: the second
/// closure may be stolen, and the owner may sleep on its latch while the thief sets it.
#[test]
fn join_with_possible_steal() {
    check(|| {
        for workers in [2, 3] {
            let pool = ThreadPool::new(workers);
            let side = AtomicUsize::new(0);
            let (a, b) = pool.join(
                || {
                    side.fetch_add(1, SeqCst);
                    1u32
                },
                || {
                    side.fetch_add(10, SeqCst);
                    2u32
                },
            );
            assert_eq!((a, b), (1, 2));
            assert_eq!(side.load(SeqCst), 11, "join returned before both sides ran");
            let r = pool.install(|| berth::join(berth::current_thread_index, || 5u8));
            assert!(r.0.is_some_and(|i| i < workers));
            assert_eq!(r.1, 5);
            drop(pool);
        }
    });
}

/// Joins nested 3 deep on 2 and 3 workers: 7 joins, whose second closures any worker may steal
/// at any level.
#[test]
fn nested_joins_depth_3() {
    check(|| {
        for workers in [2, 3] {
            let pool = ThreadPool::new(workers);
            assert_eq!(pool.install(|| join_tree(3)), 8);
            drop(pool);
        }
    });
}

/// `install` from outside, twice in a row, then from two outside threads at once, on a 1- and a
/// 2-worker pool: each injected job wakes a (possibly sleeping) worker, and each installer is
/// woken by its job's latch.
#[test]
fn install_from_two_outside_threads() {
    check(|| {
        for workers in [1, 2] {
            let pool = Arc::new(ThreadPool::new(workers));
            assert_eq!(pool.install(|| 1u32), 1);
            assert_eq!(pool.install(|| 2u32), 2);
            let outside: Vec<_> = (0..2u32)
                .map(|t| {
                    let pool = Arc::clone(&pool);
                    thread::spawn(move || pool.install(move || (t, berth::join(|| t * 10, || t))))
                })
                .collect();
            for (t, h) in (0..2u32).zip(outside) {
                assert_eq!(h.join().unwrap(), (t, (t * 10, t)));
            }
            let pool = Arc::try_unwrap(pool).expect("the outside threads are done");
            drop(pool);
        }
    });
}

/// Spawns `fanout` jobs below the caller, `depth` more levels down, each counting itself.
fn spawn_tree<'s>(s: &Scope<'s>, depth: u32, fanout: u32, count: &'s AtomicUsize) {
    count.fetch_add(1, SeqCst);
    if depth > 0 {
        for _ in 0..fanout {
            s.spawn(move |s| spawn_tree(s, depth - 1, fanout, count));
        }
    }
}

/// A scope with several spawns on 2 and 3 workers, some of which spawn again, some borrowing
/// mutably from the caller's stack: the scope returns only once every job has run.
#[test]
fn scope_with_nested_spawns() {
    check(|| {
        for workers in [2, 3] {
            let pool = ThreadPool::new(workers);
            let count = AtomicUsize::new(0);
            let mut slots = [0u32; 3];
            pool.scope(|s| {
                for (i, slot) in slots.iter_mut().enumerate() {
                    s.spawn(move |_| *slot = i as u32 + 1);
                }
                // 1 + 2 + 4 = 7 jobs in a tree.
                s.spawn(|s| spawn_tree(s, 2, 2, &count));
            });
            assert_eq!(
                slots,
                [1, 2, 3],
                "scope returned before a job wrote its slot"
            );
            assert_eq!(
                count.load(SeqCst),
                7,
                "scope returned before a nested job ran"
            );
            drop(pool);
        }
    });
}

/// Panics in join's first closure, second closure, both, in a scope job: each resurfaces in the
/// caller with its payload, after the other side has finished, and the pool carries on.
#[test]
fn panics_resurface_after_the_other_side() {
    check(|| {
        quiet_expected_panics();
        let pool = ThreadPool::new(2);

        let other = AtomicBool::new(false);
        let msg = expect_panic(|| {
            pool.join(
                || -> u8 { panic!("expected panic: a") },
                || other.store(true, SeqCst),
            )
        });
        assert_eq!(msg, "expected panic: a");
        assert!(other.load(SeqCst), "a's panic resurfaced before b finished");

        let other = AtomicBool::new(false);
        let msg = expect_panic(|| {
            pool.join(
                || other.store(true, SeqCst),
                || -> u8 { panic!("expected panic: b") },
            )
        });
        assert_eq!(msg, "expected panic: b");
        assert!(other.load(SeqCst), "b's panic resurfaced before a finished");

        let msg = expect_panic(|| {
            pool.join(
                || -> u8 { panic!("expected panic: both a") },
                || -> u8 { panic!("expected panic: both b") },
            )
        });
        assert_eq!(
            msg, "expected panic: both a",
            "the first closure's panic wins"
        );

        let others = AtomicUsize::new(0);
        let msg = expect_panic(|| {
            pool.scope(|s| {
                s.spawn(|_| {
                    others.fetch_add(1, SeqCst);
                });
                s.spawn(|s| {
                    s.spawn(|_| {
                        others.fetch_add(1, SeqCst);
                    });
                    panic!("expected panic: scope job");
                });
            })
        });
        assert_eq!(msg, "expected panic: scope job");
        assert_eq!(
            others.load(SeqCst),
            2,
            "the scope's panic resurfaced before its jobs ended"
        );

        assert_eq!(
            pool.install(|| join_tree(2)),
            4,
            "the pool after the panics"
        );
        drop(pool);
    });
}

/// Jobs spawned from outside and from a worker (one of them spawning another, one panicking)
/// all run before the pool's drop returns.
#[test]
fn drop_waits_for_spawned_jobs() {
    check(|| {
        quiet_expected_panics();
        let count = Arc::new(AtomicUsize::new(0));
        let pool = ThreadPool::new(2);
        for _ in 0..2 {
            let count = Arc::clone(&count);
            pool.spawn(move || {
                count.fetch_add(1, SeqCst);
            });
        }
        {
            let count = Arc::clone(&count);
            pool.spawn(move || {
                let inner = Arc::clone(&count);
                berth::spawn(move || {
                    inner.fetch_add(1, SeqCst);
                });
                count.fetch_add(1, SeqCst);
            });
        }
        pool.spawn(|| panic!("expected panic: spawned"));
        drop(pool);
        assert_eq!(
            count.load(SeqCst),
            4,
            "drop returned before every spawned job ran"
        );
    });
}

/// The smallest drop race: one worker, one job spawned from outside, then the drop. The worker
/// may look for work (finding none: the job is not sent yet), be preempted, and read the
/// termination flag only after the job was sent and the drop began: if it then exits without
/// looking again, the job is never run (its box is leaked) and the drop returns without it.
/// PCT finds that schedule in every run of 200 iterations.
#[test]
fn drop_right_after_one_spawn_on_one_worker() {
    check(|| {
        let ran = Arc::new(AtomicBool::new(false));
        let pool = ThreadPool::new(1);
        {
            let ran = Arc::clone(&ran);
            pool.spawn(move || ran.store(true, SeqCst));
        }
        drop(pool);
        assert!(
            ran.load(SeqCst),
            "drop returned, and the worker exited, without running the spawned job"
        );
    });
}

/// A worker of pool A installs on pool B (sleeping on its own thread's parker, not its worker
/// parker, until B's job is done), while the other side of A's join may be stolen.
#[test]
fn install_on_another_pool_from_a_worker() {
    check(|| {
        let a = ThreadPool::new(2);
        let b = ThreadPool::new(1);
        let r = a.install(|| {
            berth::join(
                || b.install(|| (b.current_thread_index(), berth::join(|| 1u8, || 2u8))),
                || a.current_thread_index().is_some(),
            )
        });
        assert_eq!(r, ((Some(0), (1, 2)), true));
        drop(b);
        drop(a);
    });
}
