//! loom models of the work-stealing deque (`berth::deque`): the owner's pop racing one and two
//! thieves, a steal racing a grow, and a batch steal racing the owner. Each checks that every
//! element is taken exactly once; without either of the two `SeqCst` fences (the mutants
//! `deque_no_take_fence`, `deque_no_steal_fence`) loom finds a schedule in which one element is
//! taken twice.
#![cfg(loom)]

use berth::deque::{Steal, Worker};
use loom::thread;

/// Steals until the deque reports empty (retrying lost races).
fn steal_all(s: &berth::deque::Stealer<u32>, max: usize) -> Vec<u32> {
    let mut got = Vec::new();
    while got.len() < max {
        match s.steal() {
            Steal::Success(v) => got.push(v),
            Steal::Empty => break,
            Steal::Retry => {}
        }
    }
    got
}

/// Checks that `all` holds each of `expected` exactly once. The verdict is taken before the
/// deque is dropped and reported after (`drop(w)` in between), so a broken build fails with
/// this message rather than in the deque's destructor.
fn exactly_once(mut all: Vec<u32>, expected: &[u32]) -> Result<(), String> {
    all.sort_unstable();
    let mut dedup = all.clone();
    dedup.dedup();
    if dedup.len() != all.len() {
        return Err(format!("an element was taken twice: {all:?}"));
    }
    if all != expected {
        return Err(format!("an element was lost: {all:?}"));
    }
    Ok(())
}

fn report(verdict: Result<(), String>) {
    if let Err(msg) = verdict {
        panic!("{msg}");
    }
}

/// The owner pops twice while one thief steals twice: two elements, each taken once.
#[test]
fn pop_races_one_steal() {
    loom::model(|| {
        let w = Worker::new();
        w.push(0u32);
        w.push(1);
        let s = w.stealer();
        let thief = thread::spawn(move || steal_all(&s, 2));
        let mut mine = Vec::new();
        while let Some(v) = w.pop() {
            mine.push(v);
        }
        mine.extend(thief.join().unwrap());
        while let Some(v) = w.pop() {
            mine.push(v);
        }
        let verdict = exactly_once(mine, &[0, 1]);
        drop(w);
        report(verdict);
    });
}

/// The owner pops while two thieves steal one each.
#[test]
fn pop_races_two_steals() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let w = Worker::new();
        w.push(0u32);
        w.push(1);
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let s = w.stealer();
                thread::spawn(move || steal_all(&s, 1))
            })
            .collect();
        let mut all: Vec<u32> = w.pop().into_iter().collect();
        for t in thieves {
            all.extend(t.join().unwrap());
        }
        while let Some(v) = w.pop() {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1]);
        drop(w);
        report(verdict);
    });
}

/// A thief steals while the owner's pushes outgrow the first buffer (two slots under the
/// models): the element it takes is read from whichever buffer it loaded, never twice.
#[test]
fn steal_races_grow() {
    loom::model(|| {
        let w = Worker::new();
        w.push(0u32);
        w.push(1);
        let s = w.stealer();
        let thief = thread::spawn(move || steal_all(&s, 1));
        w.push(2); // grows: 2 slots -> 4
        let mut all = thief.join().unwrap();
        while let Some(v) = w.pop() {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1, 2]);
        drop(w);
        report(verdict);
    });
}

/// A batch steal races the owner's pops.
#[test]
fn batch_steal_races_pop() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let w = Worker::new();
        for i in 0..3u32 {
            w.push(i);
        }
        let s = w.stealer();
        let thief = thread::spawn(move || {
            let mine = Worker::new();
            let mut got: Vec<u32> = s.steal_batch_and_pop(&mine).success().into_iter().collect();
            while let Some(v) = mine.pop() {
                got.push(v);
            }
            got
        });
        let mut all = Vec::new();
        while let Some(v) = w.pop() {
            all.push(v);
        }
        all.extend(thief.join().unwrap());
        while let Some(v) = w.pop() {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1, 2]);
        drop(w);
        report(verdict);
    });
}

/// A thief that has claimed an element but not yet read it, while the owner pushes a full lap
/// of the two-slot buffer: the owner must not overwrite the slot the thief is reading (berth's
/// claim-then-read protocol: the slot's stamp says when the thief is done; until then the owner
/// moves to a new buffer). loom's cell tracking reports any overlap as a causality violation.
#[test]
fn owner_laps_a_slow_thief() {
    loom::model(|| {
        let w = Worker::new();
        w.push(0u32);
        let s = w.stealer();
        let thief = thread::spawn(move || steal_all(&s, 1));
        w.push(1);
        w.push(2); // index 2 maps to slot 0, which the thief may still be reading
        let mut all = thief.join().unwrap();
        while let Some(v) = w.pop() {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1, 2]);
        drop(w);
        report(verdict);
    });
}
