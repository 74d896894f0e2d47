//! loom models of the parker: a sleeper against a waker, in both orders.
//!
//! Run under both parkers (`make loom` does): `BERTH_PARKER=futex` checks the futex parker on
//! loom's model futex, `BERTH_PARKER=condvar` the condvar parker. The mutant
//! `park_no_recheck_rmw` splits the sleeper's re-check RMW into a load and a store; loom must
//! then report the lost wakeup as a deadlock.
#![cfg(loom)]

use berth::park::Parker;
use loom::sync::atomic::{AtomicUsize, Ordering::*};
use loom::sync::Arc;
use loom::thread;

/// The waker may run before, during or after the sleeper's park: park must always return.
#[test]
fn sleeper_against_waker() {
    loom::model(|| {
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        let waker = thread::spawn(move || unparker.unpark());
        parker.park();
        waker.join().unwrap();
    });
}

/// The token is kept when the unpark comes first, in program order.
#[test]
fn unpark_before_park_is_kept() {
    loom::model(|| {
        let parker = Parker::new();
        parker.unparker().unpark();
        parker.park();
    });
}

/// A flag set before `unpark` is visible after `park` returns, and a sleeper that re-checks a
/// condition in a loop never misses it.
#[test]
fn handshake_publishes_the_flag() {
    loom::model(|| {
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        let flag = Arc::new(AtomicUsize::new(0));
        let flag2 = Arc::clone(&flag);
        let waker = thread::spawn(move || {
            flag2.store(1, Relaxed);
            unparker.unpark();
        });
        while flag.load(Relaxed) == 0 {
            parker.park();
        }
        waker.join().unwrap();
    });
}

/// Two wakers, one sleeper that parks twice: two unparks that race are at most one token, so
/// the sleeper waits for a flag from each.
#[test]
fn two_wakers() {
    loom::model(|| {
        let parker = Parker::new();
        let done = Arc::new(AtomicUsize::new(0));
        let wakers: Vec<_> = (0..2)
            .map(|_| {
                let unparker = parker.unparker().clone();
                let done = Arc::clone(&done);
                thread::spawn(move || {
                    done.fetch_add(1, Release);
                    unparker.unpark();
                })
            })
            .collect();
        while done.load(Acquire) < 2 {
            parker.park();
        }
        for w in wakers {
            w.join().unwrap();
        }
    });
}
