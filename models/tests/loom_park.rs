//! loom models of the parker: a sleeper against a waker, in both orders.
//!
//! Run under both parkers (`make loom` does): `BERTH_PARKER=futex` checks the futex parker on
//! loom's model futex, `BERTH_PARKER=condvar` the condvar parker. The mutant
//! `park_no_recheck_rmw` splits the sleeper's re-check RMW into a load and a store; loom must
//! then report the lost wakeup as a deadlock.
#![cfg(loom)]

use berth::park::{Parker, Unparker};
use berth_models::trace;
use loom::sync::atomic::{AtomicUsize, Ordering::*};
use loom::sync::Arc;
use loom::thread;

/// `park`, recorded as it starts and when it returns (a thread that never returns is the
/// lost wakeup).
fn park(parker: &Parker) {
    trace::record("park", "starts");
    parker.park();
    trace::record("park", "returned");
}

/// `unpark`, recorded when it has returned.
fn unpark(unparker: &Unparker) {
    unparker.unpark();
    trace::record("unpark", "returned");
}

/// The waker may run before, during or after the sleeper's park: park must always return.
#[test]
fn sleeper_against_waker() {
    loom::model(|| {
        trace::start();
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        let waker = thread::spawn(move || unpark(&unparker));
        park(&parker);
        waker.join().unwrap();
    });
}

/// The token is kept when the unpark comes first, in program order.
#[test]
fn unpark_before_park_is_kept() {
    loom::model(|| {
        trace::start();
        let parker = Parker::new();
        unpark(parker.unparker());
        park(&parker);
    });
}

/// A flag set before `unpark` is visible after `park` returns, and a sleeper that re-checks a
/// condition in a loop never misses it.
#[test]
fn handshake_publishes_the_flag() {
    loom::model(|| {
        trace::start();
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        let flag = Arc::new(AtomicUsize::new(0));
        let flag2 = Arc::clone(&flag);
        let waker = thread::spawn(move || {
            flag2.store(1, Relaxed);
            unpark(&unparker);
        });
        while flag.load(Relaxed) == 0 {
            park(&parker);
        }
        waker.join().unwrap();
    });
}

/// Two wakers, one sleeper that parks twice: two unparks that race are at most one token, so
/// the sleeper waits for a flag from each.
#[test]
fn two_wakers() {
    loom::model(|| {
        trace::start();
        let parker = Parker::new();
        let done = Arc::new(AtomicUsize::new(0));
        let wakers: Vec<_> = (0..2)
            .map(|_| {
                let unparker = parker.unparker().clone();
                let done = Arc::clone(&done);
                thread::spawn(move || {
                    let before = done.fetch_add(1, Release);
                    trace::record("done.fetch_add(1)", before);
                    unpark(&unparker);
                })
            })
            .collect();
        loop {
            let seen = done.load(Acquire);
            trace::record("done.load", seen);
            if seen >= 2 {
                break;
            }
            park(&parker);
        }
        for w in wakers {
            w.join().unwrap();
        }
    });
}
