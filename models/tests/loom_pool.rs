//! loom models of the pool's sleep and wake protocols: a job's latch set racing its owner going
//! to sleep on it, and an idle worker falling asleep racing an injected job. The pool as a whole
//! is too big for loom; `shuttle_pool.rs` drives it with more threads.
#![cfg(loom)]

use berth::pool::ThreadPool;
use berth_models::trace;

/// A thread outside the pool installs a job on a one-worker pool and sleeps on the job's latch,
/// while the worker, possibly asleep in the idle list, must be woken by the injection and then
/// wake the installer by setting the latch. A lost wakeup on either side is a deadlock.
#[test]
fn install_wakes_worker_and_latch_wakes_installer() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        trace::start();
        let pool = ThreadPool::new(1);
        trace::record("install starts", ());
        let got = pool.install(|| {
            trace::record("job runs", 7);
            7u32
        });
        trace::record("install returned", got);
        assert_eq!(got, 7);
        drop(pool);
    });
}

/// A join on a two-worker pool: the second closure may be stolen by the other worker, and the
/// first worker may go to sleep on its latch while the thief sets it. (One preemption: two is
/// 80 s here, too slow for `make test`; `make verify` could raise it.)
#[test]
fn join_latch_set_races_owner_sleeping() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.check(|| {
        let pool = ThreadPool::new(2);
        let got = pool.install(|| berth::join(|| 1u32, || 2u32));
        assert_eq!(got, (1, 2));
        drop(pool);
    });
}
