//! The threads waiting for one condition of one structure ("not empty", "not full").

use super::Unparker;
use crate::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use crate::sync::Mutex;
use std::collections::VecDeque;

/// A FIFO of registered waiters, and the count a notifier reads without taking the lock.
///
/// The count is written only under the lock, and always equals the length of the list; a
/// notifier that reads 0 makes no lock, no allocation and no system call. Why a notifier cannot
/// read 0 while a waiter is about to sleep is the structure's business: its waiters re-check
/// with an RMW on the atomic its notifiers change (see [`crate::park`]).
#[derive(Debug)]
pub(crate) struct WaitList {
    sleepers: AtomicUsize,
    entries: Mutex<VecDeque<Unparker>>,
}

impl WaitList {
    pub(crate) fn new() -> Self {
        WaitList {
            sleepers: AtomicUsize::new(0),
            entries: Mutex::new(VecDeque::new()),
        }
    }

    /// Adds a waiter at the back.
    pub(crate) fn register(&self, unparker: &Unparker) {
        let mut entries = self.entries.lock();
        entries.push_back(unparker.clone());
        self.sleepers.store(entries.len(), Relaxed);
    }

    /// Removes a waiter; false if a notifier already removed it (it was chosen to wake).
    pub(crate) fn unregister(&self, unparker: &Unparker) -> bool {
        let mut entries = self.entries.lock();
        match entries.iter().position(|e| e.same(unparker)) {
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

    #[cold]
    fn notify_one_slow(&self) {
        let chosen = {
            let mut entries = self.entries.lock();
            let chosen = entries.pop_front();
            self.sleepers.store(entries.len(), Relaxed);
            chosen
        };
        if let Some(unparker) = chosen {
            unparker.unpark();
        }
    }

    /// Wakes every registered waiter. Always takes the lock, so it needs no re-check argument:
    /// a waiter registered before it is woken, one registered after sees what the caller changed
    /// before calling.
    #[cold]
    pub(crate) fn notify_all(&self) {
        let mut entries = self.entries.lock();
        for unparker in entries.drain(..) {
            unparker.unpark();
        }
        self.sleepers.store(0, Relaxed);
    }
}
