//! The threads and tasks waiting for one condition of one structure ("not empty", "not full").

use super::backoff::SpinGauge;
use super::Unparker;
use crate::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use crate::sync::Mutex;
use std::collections::VecDeque;
use std::task::Waker;

/// One registered waiter: a thread (woken through its parker) or an async task (through its
/// waker, keyed by the address of its pinned future).
#[derive(Debug)]
enum Entry {
    Thread(Unparker),
    Task { key: usize, waker: Waker },
}

impl Entry {
    fn wake(self) {
        match self {
            Entry::Thread(u) => u.unpark(),
            Entry::Task { waker, .. } => waker.wake(),
        }
    }
}

/// A FIFO of registered waiters, and the count a notifier reads without taking the lock.
///
/// The count is written only under the lock, and always equals the length of the list; a
/// notifier that reads 0 makes no lock, no allocation and no system call. Why a notifier cannot
/// read 0 while a waiter is about to sleep is the structure's business: its waiters re-check
/// with an RMW on the atomic its notifiers change (see [`crate::park`]).
///
/// A notifier *removes* the waiter it wakes. So a waiter that finds itself no longer registered
/// when it withdraws (`unregister*` returns false) was chosen for a wakeup: if it does not go on
/// to use it (an async operation dropped while pending), it must pass it on with `notify_one`.
#[derive(Debug)]
pub(crate) struct WaitList {
    sleepers: AtomicUsize,
    entries: Mutex<VecDeque<Entry>>,
    /// Whether its waiters' spinning before a sleep pays off (`block_until`).
    pub(crate) spins: SpinGauge,
}

impl WaitList {
    pub(crate) fn new() -> Self {
        WaitList {
            sleepers: AtomicUsize::new(0),
            entries: Mutex::new(VecDeque::new()),
            spins: SpinGauge::new(),
        }
    }

    /// Adds a waiting thread at the back.
    pub(crate) fn register(&self, unparker: &Unparker) {
        let mut entries = self.entries.lock();
        entries.push_back(Entry::Thread(unparker.clone()));
        self.sleepers.store(entries.len(), Relaxed);
    }

    /// Removes a waiting thread; false if a notifier already removed it (it was chosen to wake).
    pub(crate) fn unregister(&self, unparker: &Unparker) -> bool {
        self.remove_where(|e| matches!(e, Entry::Thread(u) if u.same(unparker)))
    }

    /// Registers the task whose pending future is at `key` (its pinned address), or updates
    /// its waker if it is registered already (a re-poll with a new waker uses the new one).
    /// Keeps its place in the FIFO if it had one.
    pub(crate) fn register_task(&self, key: usize, waker: &Waker) {
        let mut entries = self.entries.lock();
        for e in entries.iter_mut() {
            if let Entry::Task { key: k, waker: w } = e {
                if *k == key {
                    if !w.will_wake(waker) {
                        *w = waker.clone();
                    }
                    return;
                }
            }
        }
        entries.push_back(Entry::Task {
            key,
            waker: waker.clone(),
        });
        self.sleepers.store(entries.len(), Relaxed);
    }

    /// Removes the task at `key`; false if it was not registered (a notifier removed it to wake
    /// it, or it never registered).
    pub(crate) fn unregister_task(&self, key: usize) -> bool {
        self.remove_where(|e| matches!(e, Entry::Task { key: k, .. } if *k == key))
    }

    fn remove_where(&self, pred: impl Fn(&Entry) -> bool) -> bool {
        let mut entries = self.entries.lock();
        match entries.iter().position(pred) {
            Some(i) => {
                entries.remove(i);
                self.sleepers.store(entries.len(), Relaxed);
                true
            }
            None => false,
        }
    }

    /// Wakes the longest-registered waiter, if any is registered.
    #[inline]
    pub(crate) fn notify_one(&self) {
        if self.sleepers.load(Relaxed) != 0 {
            self.notify_one_slow();
        }
    }

    /// Wakes up to `n` of the longest-registered waiters (a batch that freed `n` slots). Stops
    /// at the first read of an empty list, so a batch with nobody waiting costs one load. Each
    /// later read of the count is at least as new as the first (coherence), so the re-check
    /// argument of [`notify_one`](Self::notify_one) covers every waiter it could miss.
    #[inline]
    pub(crate) fn notify_many(&self, n: usize) {
        for _ in 0..n {
            if self.sleepers.load(Relaxed) == 0 {
                break;
            }
            self.notify_one_slow();
        }
    }

    #[cold]
    fn notify_one_slow(&self) {
        let chosen = {
            let mut entries = self.entries.lock();
            let chosen = entries.pop_front();
            self.sleepers.store(entries.len(), Relaxed);
            chosen
        };
        // Woken outside the lock: a waker may run arbitrary code.
        if let Some(entry) = chosen {
            entry.wake();
        }
    }

    /// Wakes every registered waiter. Always takes the lock, so it needs no re-check argument:
    /// a waiter registered before it is woken, one registered after sees what the caller changed
    /// before calling.
    #[cold]
    pub(crate) fn notify_all(&self) {
        let all: Vec<Entry> = {
            let mut entries = self.entries.lock();
            self.sleepers.store(0, Relaxed);
            entries.drain(..).collect()
        };
        for entry in all {
            entry.wake();
        }
    }
}
