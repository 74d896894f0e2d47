//! Waiting without burning a core: spin, then yield, then sleep in the kernel.
//!
//! Two layers, each with its own no-lost-wakeup argument.
//!
//! # 1. The parker: one thread's token
//!
//! [`Parker`] / [`Unparker`] is a one-token semaphore owned by one thread. `park` consumes the
//! token or sleeps until one arrives; `unpark` makes the token available. Two implementations:
//!
//! - the **futex parker** (default on Linux and macOS): the token *is* the futex word; the kernel
//!   (`futex(2)`, `__ulock`) compares the word and sleeps atomically;
//! - the **condvar parker** (everywhere else, and under `--cfg berth_parker="condvar"`): the same
//!   states in an atomic beside a `Mutex` and a `Condvar`.
//!
//! In both, the owner's last check before sleeping is the CAS `EMPTY -> PARKED`, a
//! read-modify-write on the same atomic the unparker swaps to `NOTIFIED`. Two RMWs on one atomic
//! are totally ordered, so either the unparker sees `PARKED` (and wakes the sleeper: the kernel's
//! compare or the mutex closes the gap between the CAS and the sleep), or the owner sees
//! `NOTIFIED` (and does not sleep). A token made available when nobody is asleep costs one swap:
//! no lock and no system call. The proofs are in `futex_parker.rs` and `condvar_parker.rs`; the
//! loom models in `models/tests/loom_park.rs` check them under both parkers, and the mutant
//! `park_no_recheck_rmw` (the CAS split into a load and a store) must make loom report the
//! deadlock.
//!
//! Under `--cfg loom` and `--cfg shuttle` the futex parker runs unchanged on a model futex built
//! from the model's `Mutex` and `Condvar` (`futex.rs`), and the condvar parker on the model's
//! `Mutex` and `Condvar`.
//!
//! # 2. Wait lists: many threads, one condition
//!
//! A queue keeps a `WaitList` per condition ("not empty", "not full"). A waiter
//! (`block_until`) first spins and yields on the condition (`Backoff`; it skips both and
//! sleeps at once while the list's `SpinGauge` says they have not been paying off). Then:
//!
//! 1. **W1** registers its unparker in the list (the list's count is written under its lock);
//! 2. **W2** re-checks the condition with an RMW (`fetch_add(0, _)`) on the atomic the
//!    notifier's operation modifies (a queue's consumer re-checks on `tail`, which every push
//!    CASes); if it changed, it unregisters and retries;
//! 3. **W3** parks.
//!
//! A notifier:
//!
//! 1. **N1** changes that atomic with an RMW that is at least `AcqRel` (the push's CAS on
//!    `tail`) and publishes;
//! 2. **N2** reads the list's count (`Relaxed`); only if it is not zero does it take the lock,
//!    pop the first waiter and unpark it.
//!
//! Why no wakeup is lost: W2 and N1 are RMWs on one atomic, so one is first in its modification
//! order. If W2 is first, N1 reads W2's value (or a later RMW's: all writes to the atomic are
//! RMWs, so they continue W2's release sequence); W2 releases and N1 acquires, so W2
//! synchronises with N1, W1 happens before N2, and N2 sees the waiter. If N1 is first, W2 reads
//! N1's value (an RMW always reads the newest value) and the waiter does not sleep. No `SeqCst`
//! is needed, and loom (which models `SeqCst` loads and stores only as acquire/release) checks
//! exactly this argument: the mutant `vyukov_recheck_load` (W2 as a plain load) deadlocks in
//! the loom model `parked_producer_woken_by_pop`.
//!
//! A waiter that times out unregisters *before* its final attempt: if a notifier had already
//! chosen it, the notifier published first, so the final attempt sees the value or sees that
//! another thread took it; either way no sleeper is left behind with a value in the queue.
//!
//! # Examples
//!
//! A thread that sleeps until another hands it work, and a wakeup that comes first is kept:
//!
//! ```
//! use berth::park::Parker;
//! use std::sync::atomic::{AtomicBool, Ordering};
//! use std::sync::Arc;
//! use std::thread;
//!
//! let parker = Parker::new();
//! let unparker = parker.unparker().clone();
//! let ready = Arc::new(AtomicBool::new(false));
//! let producer = {
//!     let ready = Arc::clone(&ready);
//!     thread::spawn(move || {
//!         ready.store(true, Ordering::Release);
//!         unparker.unpark(); // kept if the owner is not asleep yet
//!     })
//! };
//! while !ready.load(Ordering::Acquire) {
//!     parker.park(); // a token may be stale: re-check the condition
//! }
//! producer.join().unwrap();
//! ```

mod backoff;
#[cfg(not(any(
    berth_parker = "condvar",
    not(any(loom, shuttle, target_os = "linux", target_os = "macos"))
)))]
mod futex;
#[cfg(not(any(
    berth_parker = "condvar",
    not(any(loom, shuttle, target_os = "linux", target_os = "macos"))
)))]
mod futex_parker;
#[cfg(not(any(
    berth_parker = "condvar",
    not(any(loom, shuttle, target_os = "linux", target_os = "macos"))
)))]
use futex_parker as imp;

#[cfg(any(
    berth_parker = "condvar",
    not(any(loom, shuttle, target_os = "linux", target_os = "macos"))
))]
mod condvar_parker;
#[cfg(any(
    berth_parker = "condvar",
    not(any(loom, shuttle, target_os = "linux", target_os = "macos"))
))]
use condvar_parker as imp;

mod wait_list;

pub(crate) use backoff::Backoff;
pub(crate) use wait_list::WaitList;

use crate::sync::Arc;
use std::fmt;
use std::marker::PhantomData;
use std::task::Waker;
use std::time::{Duration, Instant};

/// The name of the parker this build uses: `"futex"` or `"condvar"`.
///
/// # Examples
///
/// ```
/// assert!(["futex", "condvar"].contains(&berth::park::PARKER));
/// ```
pub const PARKER: &str = if cfg!(any(
    berth_parker = "condvar",
    not(any(loom, shuttle, target_os = "linux", target_os = "macos"))
)) {
    "condvar"
} else {
    "futex"
};

/// A one-token semaphore owned by one thread: [`park`](Parker::park) waits for the token,
/// an [`Unparker`] makes it available.
///
/// A token made available while nobody waits is kept (at most one), so an `unpark` that comes
/// before the `park` is not lost. `unpark` calls the kernel only when the owner is actually
/// asleep.
///
/// `Parker` is `Send` but not `Sync`: one thread parks on it at a time.
///
/// ```compile_fail
/// fn shared<P: Sync>(_: &P) {}
/// shared(&berth::park::Parker::new());
/// ```
///
/// # Examples
///
/// ```
/// use berth::park::Parker;
/// use std::thread;
///
/// let parker = Parker::new();
/// let unparker = parker.unparker().clone();
/// let t = thread::spawn(move || unparker.unpark());
/// parker.park(); // returns once the other thread has unparked (or had already)
/// t.join().unwrap();
/// ```
pub struct Parker {
    unparker: Unparker,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

/// Makes a [`Parker`]'s token available. Cloneable and shareable.
///
/// # Examples
///
/// ```
/// use berth::park::Parker;
/// use std::thread;
///
/// let parker = Parker::new();
/// let unparkers: Vec<_> = (0..3).map(|_| parker.unparker().clone()).collect();
/// for u in unparkers {
///     thread::spawn(move || u.unpark()).join().unwrap();
/// }
/// parker.park(); // three unparks, one token: this returns at once...
/// assert!(!parker.park_timeout(std::time::Duration::from_millis(1))); // ...and this times out
/// ```
#[derive(Clone)]
pub struct Unparker {
    inner: Arc<imp::Inner>,
}

impl Parker {
    /// A parker without a token.
    ///
    /// # Examples
    ///
    /// ```
    /// let parker = berth::park::Parker::new();
    /// assert!(!parker.park_timeout(std::time::Duration::ZERO)); // no token yet
    /// ```
    pub fn new() -> Self {
        Parker {
            unparker: Unparker {
                inner: Arc::new(imp::Inner::new()),
            },
            _not_sync: PhantomData,
        }
    }

    /// Consumes the token, sleeping until one is available.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::park::Parker;
    /// use std::thread;
    ///
    /// let parker = Parker::new();
    /// let unparker = parker.unparker().clone();
    /// let waker = thread::spawn(move || unparker.unpark());
    /// parker.park(); // sleeps until the token arrives (or takes it if it is already there)
    /// waker.join().unwrap();
    /// ```
    pub fn park(&self) {
        self.unparker.inner.park(None);
    }

    /// Consumes the token, sleeping at most `timeout`. Returns false if it timed out.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::park::Parker;
    /// use std::time::Duration;
    ///
    /// let parker = Parker::new();
    /// assert!(!parker.park_timeout(Duration::from_millis(1))); // timed out
    /// parker.unparker().unpark();
    /// assert!(parker.park_timeout(Duration::from_secs(60))); // the token was there: at once
    /// ```
    pub fn park_timeout(&self, timeout: Duration) -> bool {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.park_deadline(deadline),
            None => {
                self.park();
                true
            }
        }
    }

    /// Consumes the token, sleeping until `deadline` at most. Returns false if it timed out.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::park::Parker;
    /// use std::time::{Duration, Instant};
    ///
    /// let parker = Parker::new();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(!parker.park_deadline(deadline));
    /// assert!(Instant::now() >= deadline);
    /// ```
    pub fn park_deadline(&self, deadline: Instant) -> bool {
        self.unparker.inner.park(Some(deadline))
    }

    /// The handle that unparks this parker.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::park::Parker;
    ///
    /// let parker = Parker::new();
    /// let unparker = parker.unparker().clone(); // cloneable, Send + Sync
    /// unparker.unpark();
    /// parker.park(); // the token is there: returns at once
    /// ```
    pub fn unparker(&self) -> &Unparker {
        &self.unparker
    }

    pub(crate) fn park_until(&self, deadline: Option<Instant>) -> bool {
        self.unparker.inner.park(deadline)
    }

    /// [`park_until`](Self::park_until), spinning and yielding first while polling for the
    /// token (`Backoff`): for a waiter whose partner usually comes within microseconds, and
    /// whose registration lets that partner find it meanwhile (a select on a rendezvous
    /// channel). The token protocol is the one `park` uses; only the wait before it differs.
    pub(crate) fn spin_then_park_until(&self, deadline: Option<Instant>) -> bool {
        self.poll_then_park_until(deadline, 0)
    }

    /// [`spin_then_park_until`](Self::spin_then_park_until) with a longer yield phase
    /// (`RENDEZVOUS_EXTRA_YIELDS` more yields): for a blocked send or receive on a rendezvous
    /// channel, whose partner completes the exchange for it. With both sides of a `bounded(0)`
    /// exchange parking after the short phase, every message cost a futex sleep and wake-up
    /// (2 futex calls and 1 context switch per message, 30-47 µs); with the longer phase a
    /// partner on the other core almost always arrives first (`losses.md`, `chan_b0_spsc1x1`).
    /// The yields also put the woken thread in the slower of the two wake-up modes that the
    /// wake-latency section of `losses.md` describes; its rendezvous wake latency stays below
    /// std's.
    pub(crate) fn rendezvous_park_until(&self, deadline: Option<Instant>) -> bool {
        self.poll_then_park_until(deadline, backoff::RENDEZVOUS_EXTRA_YIELDS)
    }

    /// Polls the token through a `Backoff` and then `extra_yields` yields, then parks. The extra
    /// yields stop at the deadline: on a crowded machine each yield may give the CPU away for a
    /// whole time slice, and a timed wait should not overrun by many of them.
    fn poll_then_park_until(&self, deadline: Option<Instant>, extra_yields: u32) -> bool {
        let mut backoff = Backoff::new();
        while !backoff.is_completed() {
            if self.unparker.inner.try_park() {
                return true;
            }
            backoff.snooze();
        }
        for _ in 0..extra_yields {
            if self.unparker.inner.try_park() {
                return true;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            crate::sync::thread::yield_now();
        }
        self.unparker.inner.park(deadline)
    }
}

impl Default for Parker {
    fn default() -> Self {
        Parker::new()
    }
}

impl Unparker {
    /// Makes the token available and wakes the parked owner, if it is asleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::park::Parker;
    /// use std::time::Duration;
    ///
    /// let parker = Parker::new();
    /// parker.unparker().unpark();
    /// parker.unparker().unpark(); // at most one token is kept
    /// assert!(parker.park_timeout(Duration::ZERO));
    /// assert!(!parker.park_timeout(Duration::ZERO));
    /// ```
    pub fn unpark(&self) {
        self.inner.unpark();
    }

    pub(crate) fn same(&self, other: &Unparker) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for Parker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parker")
            .field("kind", &PARKER)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Unparker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unparker")
            .field("kind", &PARKER)
            .finish_non_exhaustive()
    }
}

/// This thread's parker, and a waker that unparks it. One thread-local, not two: loom runs a
/// thread's thread-local destructors in an order of its own choosing, and two destructors that
/// each drop a loom `Arc` would make a model's executions differ.
struct Local {
    parker: Parker,
    waker: Waker,
}

impl Local {
    fn new() -> Self {
        let parker = Parker::new();
        let waker = unparker_waker(parker.unparker().clone());
        Local { parker, waker }
    }
}

crate::sync::thread::thread_local! {
    static LOCAL: Local = Local::new();
}

/// Runs `f` with this thread's parker (a fresh one while thread-locals are being destroyed).
pub(crate) fn with_local_parker<R>(f: impl FnOnce(&Parker) -> R) -> R {
    with_local_waker(|parker, _| f(parker))
}

/// Wakes a thread through its unparker: lets a thread wait where async tasks wait (a `select`
/// polls the channels' async states with it).
struct UnparkWake(Unparker);

// `std::task::Wake`'s methods take std's `Arc` by signature; the reference count is the
// waker's own (see `crate::sync::waker_from`), the unpark goes through the facade.
#[allow(clippy::disallowed_types)]
impl std::task::Wake for UnparkWake {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

fn unparker_waker(unparker: Unparker) -> Waker {
    crate::sync::waker_from(UnparkWake(unparker))
}

/// Runs `f` with this thread's parker and a waker that unparks it (fresh ones while
/// thread-locals are being destroyed).
pub(crate) fn with_local_waker<R>(f: impl FnOnce(&Parker, &Waker) -> R) -> R {
    let mut f = Some(f);
    match LOCAL.try_with(|l| (f.take().expect("called once"))(&l.parker, &l.waker)) {
        Ok(r) => r,
        Err(_) => {
            let local = Local::new();
            (f.take().expect("not called yet"))(&local.parker, &local.waker)
        }
    }
}

/// One attempt at a blocking operation.
pub(crate) enum Attempt<R, K> {
    /// Done: the operation's result.
    Ready(R),
    /// Not possible now; the observation to re-check before sleeping.
    Wait(K),
}

/// The shared blocking body behind every `push`, `pop`, `*_timeout`, `*_deadline`.
///
/// Calls `attempt` until it is ready, spinning and yielding first, then registering in `list`,
/// re-checking with `changed` (which must be an RMW on the atomic the notifiers change, see the
/// module docs) and parking. Returns `None` once `deadline` passes.
pub(crate) fn block_until<R, K>(
    list: &WaitList,
    deadline: Option<Instant>,
    mut attempt: impl FnMut() -> Attempt<R, K>,
    mut changed: impl FnMut(&K) -> bool,
) -> Option<R> {
    let mut backoff = Backoff::new();
    let mut parked = false;
    // The list's `SpinGauge`, asked at the first failed attempt: spin and yield before parking?
    let mut spin: Option<bool> = None;
    loop {
        let seen = match attempt() {
            Attempt::Ready(r) => {
                if spin == Some(true) && !parked {
                    list.spins.paid();
                }
                return Some(r);
            }
            Attempt::Wait(seen) => seen,
        };
        if let Some(d) = deadline {
            // The models have no clock: a timed wait times out after its first park.
            if (crate::sync::MODEL && parked) || Instant::now() >= d {
                return None;
            }
        }
        let spins = *spin.get_or_insert_with(|| list.spins.should_spin());
        if !spins {
            backoff.complete(); // spinning has not been paying off on this list: sleep now
        }
        if !backoff.is_completed() {
            backoff.snooze();
            continue;
        }
        // MUTANT wait_never_parks: keep yielding instead of sleeping (the reference post's first
        // queue, whose idle consumer burned a core).
        if cfg!(berth_mutant = "wait_never_parks") {
            crate::sync::thread::yield_now();
            continue;
        }
        // The first sleep of a wait is timed for the gauge (`None` under the models).
        let asleep_since = if parked { None } else { list.spins.clock() };
        with_local_parker(|parker| {
            let me = parker.unparker();
            list.register(me); // W1
            if changed(&seen) {
                // W2 saw the notifier's change: do not sleep.
                list.unregister(me);
                return;
            }
            // W3; then unregister before the next attempt (see "A waiter that times out").
            parker.park_until(deadline);
            list.unregister(me);
        });
        if let Some(since) = asleep_since {
            list.spins.slept(since.elapsed(), spins);
        }
        parked = true;
    }
}

/// What one attempt to hand a value over (a push, a send) did.
pub(crate) enum Handover<T, K> {
    /// The value was taken.
    Done,
    /// It never will be (closed, disconnected): the value comes back.
    Refused(T),
    /// Not now: the value comes back, with the observation to re-check before sleeping.
    Wait(T, K),
}

/// [`block_until`] for an operation that carries a value: keeps the value between attempts and
/// hands it back on failure. `Err((value, true))`: refused; `Err((value, false))`: timed out.
pub(crate) fn block_handover_until<T, K>(
    list: &WaitList,
    deadline: Option<Instant>,
    value: T,
    mut attempt: impl FnMut(T) -> Handover<T, K>,
    changed: impl FnMut(&K) -> bool,
) -> Result<(), (T, bool)> {
    let mut pending = Some(value);
    let done = block_until(
        list,
        deadline,
        || {
            let value = pending
                .take()
                .expect("the value is put back after each failure");
            match attempt(value) {
                Handover::Done => Attempt::Ready(Ok(())),
                Handover::Refused(v) => Attempt::Ready(Err(v)),
                Handover::Wait(v, seen) => {
                    pending = Some(v);
                    Attempt::Wait(seen)
                }
            }
        },
        changed,
    );
    match done {
        Some(Ok(())) => Ok(()),
        Some(Err(v)) => Err((v, true)),
        None => Err((
            pending
                .take()
                .expect("a timed-out operation keeps its value"),
            false,
        )),
    }
}

/// The async counterpart of [`block_until`]: the registration state of one pending future in
/// one wait list.
///
/// A poll runs the attempt; if it must wait, it registers the task's waker (W1, or updates it:
/// a re-poll with a new waker uses the new one), re-checks with the structure's RMW (W2), and
/// returns `Pending` (W3). A notifier removes the entry it wakes, so a future that withdraws and
/// finds its entry gone was chosen for a wakeup: [`cancel`](TaskWait::cancel) (on drop) passes
/// that wakeup on to the next waiter, so a cancelled future never swallows one.
#[derive(Debug, Default)]
pub(crate) struct TaskWait {
    registered: bool,
}

impl TaskWait {
    pub(crate) const fn new() -> Self {
        TaskWait { registered: false }
    }

    /// One poll. `key` is the pinned address of the future (unique while it is registered).
    pub(crate) fn poll<R, K>(
        &mut self,
        list: &WaitList,
        key: usize,
        waker: &std::task::Waker,
        mut attempt: impl FnMut() -> Attempt<R, K>,
        mut changed: impl FnMut(&K) -> bool,
    ) -> std::task::Poll<R> {
        loop {
            match attempt() {
                Attempt::Ready(r) => {
                    if self.registered {
                        // Chosen or not, we are done: a wakeup we absorbed was for what we took,
                        // or for something another waiter (woken by its own notifier) takes.
                        list.unregister_task(key);
                        self.registered = false;
                    }
                    return std::task::Poll::Ready(r);
                }
                Attempt::Wait(seen) => {
                    list.register_task(key, waker); // W1
                    self.registered = true;
                    if changed(&seen) {
                        continue; // W2 saw the notifier's change: try again.
                    }
                    return std::task::Poll::Pending; // W3
                }
            }
        }
    }

    /// [`poll`](Self::poll) for an attempt that only looks (a `select`'s `ready`): once ready,
    /// the caller may not use what it saw, so a wakeup it was chosen for is passed on as a
    /// cancelled one is (a spare wakeup costs a waiter one more look; a lost one, its sleep).
    pub(crate) fn poll_peek<K>(
        &mut self,
        list: &WaitList,
        key: usize,
        waker: &std::task::Waker,
        mut attempt: impl FnMut() -> Attempt<(), K>,
        mut changed: impl FnMut(&K) -> bool,
    ) -> std::task::Poll<()> {
        loop {
            match attempt() {
                Attempt::Ready(()) => {
                    self.cancel(list, key);
                    return std::task::Poll::Ready(());
                }
                Attempt::Wait(seen) => {
                    list.register_task(key, waker); // W1
                    self.registered = true;
                    if changed(&seen) {
                        continue; // W2
                    }
                    return std::task::Poll::Pending; // W3
                }
            }
        }
    }

    /// The future is dropped while pending: withdraw, and pass on a wakeup it was chosen for.
    pub(crate) fn cancel(&mut self, list: &WaitList, key: usize) {
        if !self.registered {
            return;
        }
        self.registered = false;
        if !list.unregister_task(key) {
            // A notifier removed us to wake us: that wakeup is owed to another waiter.
            // MUTANT async_cancel_no_forward: drop it instead.
            if !cfg!(berth_mutant = "async_cancel_no_forward") {
                list.notify_one();
            }
        }
    }
}
