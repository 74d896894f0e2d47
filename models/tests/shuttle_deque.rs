//! shuttle models of the work-stealing deque (`berth::deque`): an owner pushing and popping
//! against 2 to 4 thieves (3 to 5 threads), more threads and operations than the loom models
//! (`loom_deque.rs`) can explore exhaustively, under shuttle's random and PCT schedulers. Build
//! with `--cfg shuttle` (`make shuttle`-style: `RUSTFLAGS="--cfg shuttle"
//! CARGO_TARGET_DIR=target/shuttle cargo test -p berth-models --release --test shuttle_deque`).
//!
//! Under the models the first buffer has 2 slots, so every model below grows the deque several
//! times while thieves steal. Each checks that every item is taken exactly once, and that each
//! thief's claims follow push order. No thread waits for another (the thieves make a fixed
//! number of attempts, then the owner drains what is left), so PCT never starves a spinner.
//!
//! Budget: `SHUTTLE_ITERATIONS` schedules per scheduler (default 200). A failure prints
//! shuttle's encoded schedule; rerun exactly that schedule with `SHUTTLE_REPLAY='<schedule>'`
//! and the test's name as the filter.
//!
//! Shuttle does not model weak memory (loom does); these are for the interleavings of many
//! threads: several thieves claiming around a grow, batch steals racing the owner's last-item
//! CAS, the wrap of the indices at `usize::MAX`. What they cannot see: shuttle is sequentially
//! consistent (the fence mutants `deque_no_take_fence` and `deque_no_steal_fence` pass here), and
//! it neither tracks `UnsafeCell` accesses nor schedules between a thief's claiming CAS and its
//! read of the slot, so an owner overwriting a claimed but unread slot (the mutant
//! `deque_skip_stamp`, which passes all of these models) is for loom's `owner_laps_a_slow_thief`.
#![cfg(shuttle)]

use berth::deque::{Steal, Stealer, Worker};
use shuttle::thread;

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

/// How a thief takes.
#[derive(Clone, Copy)]
enum Mode {
    /// `steal` only.
    Steal,
    /// `steal` and `steal_batch_and_pop` (into a worker of its own) in turn.
    Mixed,
}

/// A thief: `attempts` steals (lost races count as attempts; no waiting), alternating with batch
/// steals in `Mixed` mode. Returns its claims in claim order: a batch's returned item, then the
/// moved ones (its local worker is empty before each batch, and pops them newest first).
fn thief(s: &Stealer<u32>, attempts: usize, mode: Mode, local_start: usize) -> Vec<u32> {
    let local = Worker::with_start_index(local_start);
    let mut claims = Vec::new();
    for k in 0..attempts {
        let got = match mode {
            Mode::Mixed if k % 2 == 1 => s.steal_batch_and_pop(&local),
            _ => s.steal(),
        };
        if let Steal::Success(v) = got {
            claims.push(v);
            let mut moved: Vec<u32> = std::iter::from_fn(|| local.pop()).collect();
            moved.reverse();
            claims.extend(moved);
        }
    }
    claims
}

/// Panics unless each thief's claims are in push order and `all` holds each of `0..n` once.
fn verdict(thieves: &[Vec<u32>], mut all: Vec<u32>, n: u32) {
    for (t, claims) in thieves.iter().enumerate() {
        assert!(
            claims.windows(2).all(|p| p[0] < p[1]),
            "thief {t} claimed out of push order: {claims:?}"
        );
        all.extend(claims);
    }
    all.sort_unstable();
    let mut dedup = all.clone();
    dedup.dedup();
    assert_eq!(
        dedup.len(),
        all.len(),
        "an element was taken twice: {all:?}"
    );
    assert_eq!(all, (0..n).collect::<Vec<_>>(), "an element was lost");
}

/// One model: the owner (the main thread of the model) pushes `0..n`, popping once after every
/// `pop_every` pushes (never if 0), while `thieves` threads make `attempts` attempts each; then
/// the owner drains the deque, and every item must have been taken exactly once.
fn owner_vs_thieves(
    start: usize,
    n: u32,
    pop_every: u32,
    thieves: usize,
    attempts: usize,
    mode: Mode,
) {
    let w = Worker::with_start_index(start);
    let handles: Vec<_> = (0..thieves)
        .map(|t| {
            let s = w.stealer();
            // Half the thieves' own workers start near the wrap too.
            let local_start = if t % 2 == 0 { 0 } else { usize::MAX - 1 };
            thread::spawn(move || thief(&s, attempts, mode, local_start))
        })
        .collect();
    let mut mine = Vec::new();
    for i in 0..n {
        w.push(i);
        if pop_every != 0 && i % pop_every == pop_every - 1 {
            mine.extend(w.pop());
        }
    }
    while let Some(v) = w.pop() {
        mine.push(v);
    }
    let stolen: Vec<Vec<u32>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        w.pop().is_none() && w.is_empty(),
        "the drained deque holds more"
    );
    verdict(&stolen, mine, n);
}

/// 3 threads: the owner pushes 10 and pops after every third push; 2 thieves steal 5 times
/// each.
#[test]
fn deque_owner_and_two_thieves() {
    check(|| owner_vs_thieves(0, 10, 3, 2, 5, Mode::Steal));
}

/// 4 threads: 3 thieves mixing steals and batch steals against an owner that pushes 15 and pops
/// after every other push.
#[test]
fn deque_three_thieves_batch() {
    check(|| owner_vs_thieves(0, 15, 2, 3, 5, Mode::Mixed));
}

/// 5 threads: 4 thieves, 20 items, the owner popping after every fourth push.
#[test]
fn deque_four_thieves_batch() {
    check(|| owner_vs_thieves(0, 20, 4, 4, 4, Mode::Mixed));
}

/// Growth: the owner pushes 20 without popping (2 -> 4 -> 8 -> 16 -> 32 slots) while 3 thieves
/// steal and batch-steal, so claims and reads race every grow; then it drains.
#[test]
fn deque_growth_with_thieves() {
    check(|| owner_vs_thieves(0, 20, 0, 3, 6, Mode::Mixed));
}

/// Growth where the owner's pops keep taking the last item from the thieves: pushes and pops
/// alternate (the deque hovers around one item), with 2 thieves.
#[test]
fn deque_last_item_races() {
    check(|| owner_vs_thieves(0, 12, 1, 2, 6, Mode::Mixed));
}

/// The indices start 5 below `usize::MAX` and wrap in the middle of the pushes and grows.
#[test]
fn deque_wrapping_indices() {
    check(|| owner_vs_thieves(usize::MAX - 5, 16, 3, 3, 5, Mode::Mixed));
}

/// The same, starting at `usize::MAX` itself (the first push already wraps `bottom`), 4
/// thieves.
#[test]
fn deque_wrapping_at_max() {
    check(|| owner_vs_thieves(usize::MAX, 12, 0, 4, 3, Mode::Mixed));
}

/// Thieves stealing from a thief: thief A batch-steals from the owner into its own worker,
/// pushing and popping there, while thief B steals from A's worker and from the owner. 3
/// threads (plus the owner, which is the model's main thread): every item once.
#[test]
fn deque_stealing_from_a_thief() {
    check(|| {
        const N: u32 = 12;
        let w = Worker::with_start_index(usize::MAX - 2);
        let a_local: Worker<u32> = Worker::new();
        let from_a = a_local.stealer();
        let a = {
            let s = w.stealer();
            thread::spawn(move || {
                let mut got = Vec::new();
                for _ in 0..4 {
                    if let Steal::Success(v) = s.steal_batch_and_pop(&a_local) {
                        got.push(v);
                    }
                    got.extend(a_local.pop());
                }
                got.extend(std::iter::from_fn(|| a_local.pop()));
                got
            })
        };
        let b = {
            let s = w.stealer();
            thread::spawn(move || {
                let mut got = Vec::new();
                for _ in 0..4 {
                    let r: Steal<u32> = [&from_a, &s].into_iter().map(Stealer::steal).collect();
                    got.extend(r.success());
                }
                got
            })
        };
        let mut all = Vec::new();
        for i in 0..N {
            w.push(i);
            if i % 3 == 2 {
                all.extend(w.pop());
            }
        }
        while let Some(v) = w.pop() {
            all.push(v);
        }
        all.extend(a.join().unwrap());
        all.extend(b.join().unwrap());
        verdict(&[], all, N);
    });
}
