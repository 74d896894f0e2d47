//! Shared by the single-threaded targets: a value that records its own drop, so a target can
//! check that each value is handed back, received, or dropped by the primitive exactly once.
//!
//! Each target includes this with `mod common;` and uses only some of it.
#![allow(dead_code)]

pub mod channel;
pub mod queue;

use std::cell::RefCell;
use std::time::Duration;

thread_local! {
    /// Ids of the `Tracked` values dropped since the last `take_dropped` (the fuzzer calls a
    /// target on one thread; each single-threaded target runs entirely on it).
    static DROPPED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// A value with an id whose drop is recorded. Values a target gets back (received, popped, or
/// returned inside an error) are turned into their id with [`Tracked::into_id`], which does not
/// record a drop: every recorded drop is one the primitive made.
#[derive(Debug)]
pub struct Tracked(u64);

impl Tracked {
    pub fn new(id: u64) -> Self {
        Tracked(id)
    }

    pub fn id(&self) -> u64 {
        self.0
    }

    /// The id, without recording a drop.
    pub fn into_id(self) -> u64 {
        let id = self.0;
        std::mem::forget(self);
        id
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let id = self.0;
        DROPPED.with(|d| d.borrow_mut().push(id));
    }
}

/// Forgets drops recorded by an earlier run (a run that panicked aborts the process anyway).
pub fn reset_dropped() {
    DROPPED.with(|d| d.borrow_mut().clear());
}

/// The ids dropped by the primitive since the last call, sorted.
pub fn take_dropped() -> Vec<u64> {
    let mut v = DROPPED.with(|d| std::mem::take(&mut *d.borrow_mut()));
    v.sort_unstable();
    v
}

/// Asserts that the primitive dropped exactly `expected` (each once) since the last check.
pub fn expect_dropped(expected: impl IntoIterator<Item = u64>, when: &str) {
    let mut expected: Vec<u64> = expected.into_iter().collect();
    expected.sort_unstable();
    let got = take_dropped();
    assert_eq!(got, expected, "values dropped by the primitive {when}");
}

/// A short timeout chosen by the input: 0 to 63 microseconds.
pub fn short_timeout(us: u8) -> Duration {
    Duration::from_micros(u64::from(us % 64))
}

/// A capacity 1..=8 chosen by the input.
pub fn small_capacity(c: u8) -> usize {
    usize::from(c % 8) + 1
}
