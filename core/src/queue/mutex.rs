//! `MutexQueue`: a ring behind one mutex, with a condvar for each side.
//!
//! The obviously correct reference that every other queue is tested against: every operation
//! takes the lock, so every operation is atomic. Its cost is just as obvious: all producers and
//! consumers serialise on one lock.

use super::{impl_bounded_queue, TryPopError, TryPushError, Wait};
use crate::sync::{Condvar, Mutex, MutexGuard};
use std::collections::VecDeque;
use std::fmt;
use std::time::Instant;

/// A bounded MPMC queue behind one `Mutex`, with `not_full` and `not_empty` condvars.
///
/// Exact capacity: it holds at most `capacity` values, for any capacity of at least 1.
///
/// # Examples
///
/// ```
/// use berth::MutexQueue;
///
/// let q = MutexQueue::new(2);
/// q.try_push(1).unwrap();
/// q.try_push(2).unwrap();
/// assert!(q.try_push(3).unwrap_err().is_full());
/// assert_eq!(q.pop(), Ok(1));
/// ```
pub struct MutexQueue<T> {
    state: Mutex<State<T>>,
    not_full: Condvar,
    not_empty: Condvar,
    cap: usize,
}

struct State<T> {
    ring: VecDeque<T>,
    closed: bool,
    /// Threads inside `not_full.wait`; a pop notifies only if there is one.
    blocked_pushers: usize,
    /// Threads inside `not_empty.wait`; a push notifies only if there is one.
    blocked_poppers: usize,
}

impl<T> MutexQueue<T> {
    /// A queue that holds up to `capacity` values.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0 (a bounded queue needs at least one slot), or too large to allocate.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::MutexQueue;
    ///
    /// let q = MutexQueue::<String>::new(16);
    /// assert_eq!(q.capacity(), 16);
    /// assert!(q.is_empty());
    /// ```
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "MutexQueue capacity must be at least 1, got 0"
        );
        assert!(
            capacity <= isize::MAX as usize / std::mem::size_of::<T>().max(1),
            "MutexQueue capacity {capacity} is too large: {capacity} values of {} bytes exceed isize::MAX bytes",
            std::mem::size_of::<T>()
        );
        MutexQueue {
            state: Mutex::new(State {
                ring: VecDeque::with_capacity(capacity),
                closed: false,
                blocked_pushers: 0,
                blocked_poppers: 0,
            }),
            not_full: Condvar::new(),
            not_empty: Condvar::new(),
            cap: capacity,
        }
    }

    /// Pushes `value` if there is room, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::MutexQueue;
    ///
    /// let q = MutexQueue::new(1);
    /// assert!(q.try_push(1).is_ok());
    /// let full = q.try_push(2).unwrap_err();
    /// assert!(full.is_full());
    /// assert_eq!(full.into_inner(), 2); // the value comes back
    /// ```
    pub fn try_push(&self, value: T) -> Result<(), TryPushError<T>> {
        let state = self.state.lock();
        if state.closed {
            return Err(TryPushError::Closed(value));
        }
        if state.ring.len() == self.cap {
            return Err(TryPushError::Full(value));
        }
        self.push_locked(state, value);
        Ok(())
    }

    super::blocking_methods!(MutexQueue);

    /// Pops the oldest value, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::MutexQueue;
    ///
    /// let q = MutexQueue::new(2);
    /// q.try_push('a').unwrap();
    /// assert_eq!(q.try_pop(), Ok('a'));
    /// assert!(q.try_pop().unwrap_err().is_empty());
    /// ```
    pub fn try_pop(&self) -> Result<T, TryPopError> {
        let mut state = self.state.lock();
        match state.ring.pop_front() {
            Some(v) => {
                self.after_pop(state);
                Ok(v)
            }
            None if state.closed => Err(TryPopError::Closed),
            None => Err(TryPopError::Empty),
        }
    }

    /// Closes the queue and wakes every waiting thread. True for the call that closed it.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::MutexQueue;
    ///
    /// let q = MutexQueue::new(2);
    /// q.push(1).unwrap();
    /// assert!(q.close()); // this call closed it
    /// assert!(!q.close()); // already closed
    /// assert!(q.push(2).is_err()); // every later push fails
    /// assert_eq!(q.pop(), Ok(1)); // what is inside can still be popped
    /// assert!(q.pop().is_err()); // closed and drained
    /// ```
    pub fn close(&self) -> bool {
        let mut state = self.state.lock();
        if state.closed {
            return false;
        }
        state.closed = true;
        drop(state);
        self.not_full.notify_all();
        self.not_empty.notify_all();
        true
    }

    /// True once the queue is closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::MutexQueue;
    ///
    /// let q = MutexQueue::<u8>::new(1);
    /// assert!(!q.is_closed());
    /// q.close();
    /// assert!(q.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// The number of values inside.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::MutexQueue;
    ///
    /// let q = MutexQueue::new(4);
    /// q.push(1).unwrap();
    /// q.push(2).unwrap();
    /// assert_eq!(q.len(), 2);
    /// q.pop().unwrap();
    /// assert_eq!(q.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.state.lock().ring.len()
    }

    /// True if the queue holds no value.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::MutexQueue;
    ///
    /// let q = MutexQueue::new(4);
    /// assert!(q.is_empty());
    /// q.push(1).unwrap();
    /// assert!(!q.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if the queue holds `capacity` values.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::MutexQueue;
    ///
    /// let q = MutexQueue::new(2);
    /// q.push(1).unwrap();
    /// assert!(!q.is_full());
    /// q.push(2).unwrap();
    /// assert!(q.is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        self.len() == self.cap
    }

    /// The number of values the queue can hold.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::MutexQueue;
    ///
    /// let q = MutexQueue::<u64>::new(3); // exact: any capacity of at least 1
    /// assert_eq!(q.capacity(), 3);
    /// ```
    pub fn capacity(&self) -> usize {
        self.cap
    }

    fn push_locked(&self, mut state: MutexGuard<'_, State<T>>, value: T) {
        state.ring.push_back(value);
        let wake = state.blocked_poppers > 0;
        drop(state);
        if wake {
            self.not_empty.notify_one();
        }
    }

    fn after_pop(&self, state: MutexGuard<'_, State<T>>) {
        let wake = state.blocked_pushers > 0;
        drop(state);
        if wake {
            self.not_full.notify_one();
        }
    }

    /// The one blocking body behind `push`, `push_timeout` and `push_deadline`.
    fn push_until(&self, value: T, deadline: Option<Instant>) -> Result<(), (T, Wait)> {
        let mut state = self.state.lock();
        loop {
            if state.closed {
                return Err((value, Wait::Closed));
            }
            if state.ring.len() < self.cap {
                self.push_locked(state, value);
                return Ok(());
            }
            state.blocked_pushers += 1;
            let waited = wait(&self.not_full, state, deadline);
            state = waited.0;
            state.blocked_pushers -= 1;
            if waited.1 {
                // Timed out: one last look, so a slot freed at the deadline is not wasted.
                if !state.closed && state.ring.len() < self.cap {
                    self.push_locked(state, value);
                    return Ok(());
                }
                let why = if state.closed {
                    Wait::Closed
                } else {
                    Wait::TimedOut
                };
                return Err((value, why));
            }
        }
    }

    /// The one blocking body behind `pop`, `pop_timeout` and `pop_deadline`.
    fn pop_until(&self, deadline: Option<Instant>) -> Result<T, Wait> {
        let mut state = self.state.lock();
        loop {
            if let Some(v) = state.ring.pop_front() {
                self.after_pop(state);
                return Ok(v);
            }
            if state.closed {
                return Err(Wait::Closed);
            }
            state.blocked_poppers += 1;
            let waited = wait(&self.not_empty, state, deadline);
            state = waited.0;
            state.blocked_poppers -= 1;
            if waited.1 {
                if let Some(v) = state.ring.pop_front() {
                    self.after_pop(state);
                    return Ok(v);
                }
                return Err(if state.closed {
                    Wait::Closed
                } else {
                    Wait::TimedOut
                });
            }
        }
    }
}

/// Waits on `cond` until notified, a spurious wakeup, or `deadline`; true if the deadline passed.
fn wait<'a, S>(
    cond: &Condvar,
    guard: MutexGuard<'a, S>,
    deadline: Option<Instant>,
) -> (MutexGuard<'a, S>, bool) {
    match deadline {
        None => (cond.wait(guard), false),
        // The models have no clock: a timed wait times out at once.
        Some(_) if crate::sync::MODEL => (guard, true),
        Some(d) => match d.checked_duration_since(Instant::now()) {
            None => (guard, true),
            Some(left) => {
                let guard = cond.wait_timeout(guard, left);
                (guard, Instant::now() >= d)
            }
        },
    }
}

impl_bounded_queue!(MutexQueue);

impl<T> fmt::Debug for MutexQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("MutexQueue")
            .field("len", &state.ring.len())
            .field("capacity", &self.cap)
            .field("closed", &state.closed)
            .finish()
    }
}
