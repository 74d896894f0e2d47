//! loom models of the work-stealing deque (`berth::deque`): the owner's pop racing one and two
//! thieves, a steal racing a grow, and a batch steal racing the owner. Each checks that every
//! element is taken exactly once; without either of the two `SeqCst` fences (the mutants
//! `deque_no_take_fence`, `deque_no_steal_fence`) loom finds a schedule in which one element is
//! taken twice.
#![cfg(loom)]

use berth::deque::{Steal, Worker};
use berth_models::trace;
use loom::thread;

/// The owner's push, recorded for the timeline.
fn push(w: &Worker<u32>, v: u32) {
    w.push(v);
    trace::record("push", v);
}

/// A pop, recorded with its result.
fn pop(w: &Worker<u32>) -> Option<u32> {
    let r = w.pop();
    trace::record("pop", r);
    r
}

/// Steals until the deque reports empty (retrying lost races).
fn steal_all(s: &berth::deque::Stealer<u32>, max: usize) -> Vec<u32> {
    let mut got = Vec::new();
    while got.len() < max {
        let r = s.steal();
        trace::record("steal", r);
        match r {
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
        trace::start();
        let w = Worker::new();
        push(&w, 0u32);
        push(&w, 1);
        let s = w.stealer();
        let thief = thread::spawn(move || steal_all(&s, 2));
        let mut mine = Vec::new();
        while let Some(v) = pop(&w) {
            mine.push(v);
        }
        mine.extend(thief.join().unwrap());
        while let Some(v) = pop(&w) {
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
        trace::start();
        let w = Worker::new();
        push(&w, 0u32);
        push(&w, 1);
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let s = w.stealer();
                thread::spawn(move || steal_all(&s, 1))
            })
            .collect();
        let mut all: Vec<u32> = pop(&w).into_iter().collect();
        for t in thieves {
            all.extend(t.join().unwrap());
        }
        while let Some(v) = pop(&w) {
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
        trace::start();
        let w = Worker::new();
        push(&w, 0u32);
        push(&w, 1);
        let s = w.stealer();
        let thief = thread::spawn(move || steal_all(&s, 1));
        push(&w, 2); // grows: 2 slots -> 4
        let mut all = thief.join().unwrap();
        while let Some(v) = pop(&w) {
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
        trace::start();
        let w = Worker::new();
        for i in 0..3u32 {
            push(&w, i);
        }
        let s = w.stealer();
        let thief = thread::spawn(move || {
            let mine = Worker::new();
            let r = s.steal_batch_and_pop(&mine);
            trace::record("steal_batch_and_pop", r);
            let mut got: Vec<u32> = r.success().into_iter().collect();
            while let Some(v) = pop(&mine) {
                got.push(v);
            }
            got
        });
        let mut all = Vec::new();
        while let Some(v) = pop(&w) {
            all.push(v);
        }
        all.extend(thief.join().unwrap());
        while let Some(v) = pop(&w) {
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
        trace::start();
        let w = Worker::new();
        push(&w, 0u32);
        let s = w.stealer();
        let thief = thread::spawn(move || steal_all(&s, 1));
        push(&w, 1);
        push(&w, 2); // index 2 maps to slot 0, which the thief may still be reading
        let mut all = thief.join().unwrap();
        while let Some(v) = pop(&w) {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1, 2]);
        drop(w);
        report(verdict);
    });
}

/// A thief may claim an element through the buffer it loaded before a grow, and release it
/// there; the owner, lapping that element's slot in the new buffer, looks for the stamp in the
/// older buffer too (`Buffer::released_in_older`). The check must never let it write a slot a
/// thief is still reading through the *new* buffer: loom's cell tracking reports any overlap.
#[test]
fn owner_laps_a_thief_that_stole_across_a_grow() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        trace::start();
        let w = Worker::new();
        push(&w, 0u32);
        push(&w, 1);
        let s = w.stealer();
        let s2 = w.stealer();
        let thief = thread::spawn(move || steal_all(&s, 1));
        push(&w, 2); // grows: 2 slots -> 4 (indices up to 2 copied or written there)
        let mut all = steal_all(&s2, 1); // the owner's thread steals one too, moving `top`
        push(&w, 3);
        push(&w, 4); // index 4 maps to slot 0 of the 4-slot buffer: index 0's slot
        all.extend(thief.join().unwrap());
        while let Some(v) = pop(&w) {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1, 2, 3, 4]);
        drop(w);
        report(verdict);
    });
}

/// Steals at most `tries` times (an answer-less steal of a handshake-only deque is `Retry`, and
/// would be forever once the owner stops popping), stopping at `Empty`.
fn steal_tries(s: &berth::deque::Stealer<u32>, tries: usize) -> Vec<u32> {
    let mut got = Vec::new();
    for _ in 0..tries {
        let r = s.steal();
        trace::record("steal", r);
        match r {
            Steal::Success(v) => got.push(v),
            Steal::Empty => break,
            Steal::Retry => {}
        }
    }
    got
}

/// The owner of a handshake-only deque, on its own thread: pops until the deque looks empty,
/// and hands back the deque and what it took. (The models run the thief on the main thread,
/// which keeps running after the spawn, so the schedules that matter fit loom's preemption
/// bound: request, answer, claim, request again, answer with a stale `top`, claim again.)
fn owner_pops(w: Worker<u32>) -> thread::JoinHandle<(Worker<u32>, Vec<u32>)> {
    thread::spawn(move || {
        let mut mine = Vec::new();
        while let Some(v) = pop(&w) {
            mine.push(v);
        }
        (w, mine)
    })
}

/// The asymmetric deque's handshake on its own (`Worker::handshake_only`: no fence in the
/// owner's pop; a thief goes on only once the owner, in a later pop, has answered its request,
/// and otherwise returns `Retry`). One thief steals while the owner pops: its second steal
/// reads the `top` its own first steal wrote, the owner's pop may read an older `top`, and only
/// the handshake's release/acquire pairs keep them from taking the same element (the mutant
/// `deque_handshake_relaxed` drops them). Elements left at the end are popped.
#[test]
fn handshake_pop_races_two_steals_of_one_thief() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        trace::start();
        let w = Worker::handshake_only(0);
        for i in 0..3u32 {
            push(&w, i);
        }
        let s = w.stealer();
        let owner = owner_pops(w);
        let mut all = steal_tries(&s, 3);
        let (w, mine) = owner.join().unwrap();
        all.extend(mine);
        while let Some(v) = pop(&w) {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1, 2]);
        drop(w);
        report(verdict);
    });
}

/// The handshake with two thieves, one steal each, against the owner's pops: a thief's `top`
/// can come from the other thief's claim.
#[test]
fn handshake_pop_races_two_thieves() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        trace::start();
        let w = Worker::handshake_only(0);
        for i in 0..3u32 {
            push(&w, i);
        }
        let s = w.stealer();
        let s2 = w.stealer();
        let owner = owner_pops(w);
        let other = thread::spawn(move || steal_tries(&s2, 1));
        let mut all = steal_tries(&s, 1);
        all.extend(other.join().unwrap());
        let (w, mine) = owner.join().unwrap();
        all.extend(mine);
        while let Some(v) = pop(&w) {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1, 2]);
        drop(w);
        report(verdict);
    });
}

/// A batch steal on a handshake-only deque: each element after the first needs a fresh answer
/// (the batch ends without one), since the owner pops from the other end meanwhile.
#[test]
fn handshake_batch_steal_races_pop() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        trace::start();
        let w = Worker::handshake_only(0);
        for i in 0..3u32 {
            push(&w, i);
        }
        let s = w.stealer();
        let owner = owner_pops(w);
        let mine = Worker::new();
        let mut all = Vec::new();
        for _ in 0..2 {
            let r = s.steal_batch_and_pop(&mine);
            trace::record("steal_batch_and_pop", r);
            match r {
                Steal::Success(v) => {
                    all.push(v);
                    break;
                }
                Steal::Empty => break,
                Steal::Retry => {}
            }
        }
        while let Some(v) = pop(&mine) {
            all.push(v);
        }
        let (w, theirs) = owner.join().unwrap();
        all.extend(theirs);
        while let Some(v) = pop(&w) {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1, 2]);
        drop(w);
        report(verdict);
    });
}

/// Fenced spells of an asymmetric deque (module docs, "Fenced spells"): a thief that asked in
/// vain leaves a hint, and the owner fences its next pops (one, under the models), during which
/// thieves that read the spell's flag after their own fence go on without an answer. Here the
/// main thread first asks while nobody pops, so the owner's first pop starts a spell and its
/// second ends it; meanwhile the thief steals twice, its second steal reading the `top` its
/// first wrote, and the owner's third pop is unfenced again. A thief that still reads the
/// flag as set must not meet an unfenced pop with a stale `top`: the owner's fence after it
/// clears the flag (the mutant `deque_unfence_no_fence` drops it) or the thief's own
/// fence before it reads the flag (the mutant `deque_spell_read_early` reads it first) keeps
/// them apart.
#[test]
fn fenced_spell_ends_while_a_thief_steals() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        trace::start();
        let w = Worker::handshake_only(0);
        for i in 0..4u32 {
            push(&w, i);
        }
        let s = w.stealer();
        // Nobody pops yet: no answer, so `Retry`, and the hint that starts a spell.
        let first = s.steal();
        trace::record("steal", first);
        assert!(
            first.is_retry(),
            "an unanswered steal of a handshake-only deque retries"
        );
        let owner = owner_pops(w);
        let mut all = steal_tries(&s, 3);
        let (w, mine) = owner.join().unwrap();
        all.extend(mine);
        while let Some(v) = pop(&w) {
            all.push(v);
        }
        let verdict = exactly_once(all, &[0, 1, 2, 3]);
        drop(w);
        report(verdict);
    });
}
