//! `scope`: spawn jobs that borrow from the enclosing stack; the scope returns when all are done.

use super::job::{discard_panic, HeapJob};
use super::latch::{Latch, WorkerLatch};
use super::registry::{worker_latch, Registry, WorkerThread};
use crate::sync::atomic::{AtomicUsize, Ordering::AcqRel};
use crate::sync::{Arc, Mutex};
use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};

/// A scope for spawning jobs that may borrow anything that outlives `'scope`. Made by
/// [`scope`](crate::pool::scope) or [`ThreadPool::scope`](crate::pool::ThreadPool::scope).
///
/// # Examples
///
/// ```
/// # if cfg!(miri) { return; } // the global pool's threads outlive a doctest: Miri reports them
/// let words = ["fork", "join", "scope"];
/// let mut lengths = [0; 3];
/// berth::scope(|s| {
///     for (w, len) in words.iter().zip(lengths.iter_mut()) {
///         // Jobs may borrow from the caller's stack, and spawn more jobs.
///         s.spawn(move |s| s.spawn(move |_| *len = w.len()));
///     }
/// }); // returns once every job (and the jobs they spawned) has finished
/// assert_eq!(lengths, [4, 4, 5]);
/// ```
pub struct Scope<'scope> {
    registry: Arc<Registry>,
    /// One for the scope's body, plus one per spawned job not yet finished.
    pending: AtomicUsize,
    /// The first panic of a spawned job, resumed by the scope once all jobs are done.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Set when `pending` reaches zero; the scope's owner waits on it.
    latch: WorkerLatch,
    /// Invariant in `'scope`, as rayon's: a job may not smuggle a shorter borrow in.
    marker: PhantomData<Invariant<'scope>>,
}

/// A type invariant in `'scope` (rayon's marker).
type Invariant<'scope> = Box<dyn FnOnce(&Scope<'scope>) + Send + Sync + 'scope>;

// SAFETY: shared by the jobs it spawns, which run on the pool's workers; its fields are atomics,
// a mutex, an `Arc`, and a latch whose raw registry pointer is kept alive by `registry`.
unsafe impl Send for Scope<'_> {}
// SAFETY: as above.
unsafe impl Sync for Scope<'_> {}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field(
                "pending",
                &self.pending.load(crate::sync::atomic::Ordering::Relaxed),
            )
            .finish_non_exhaustive()
    }
}

/// A raw pointer to a scope, sent to its jobs (the scope outlives them all).
struct ScopePtr<'scope>(*const Scope<'scope>);

// SAFETY: `Scope` is `Sync`, and the scope waits for every job before it returns.
unsafe impl Send for ScopePtr<'_> {}

impl<'scope> Scope<'scope> {
    fn new(wt: &WorkerThread) -> Self {
        Scope {
            registry: Arc::clone(wt.registry()),
            pending: AtomicUsize::new(1),
            panic: Mutex::new(None),
            latch: worker_latch(wt),
            marker: PhantomData,
        }
    }

    /// Spawns `body` into the pool; the scope does not return before it has run. A panic in
    /// `body` is kept and resumed by the scope once every job has finished (the first one, if
    /// several panic).
    ///
    /// # Examples
    ///
    /// ```
    /// # if cfg!(miri) { return; } // the global pool's threads outlive a doctest: Miri reports them
    /// let mut a = vec![1, 2, 3];
    /// let mut b = vec![4, 5];
    /// berth::pool::scope(|s| {
    ///     s.spawn(|_| a.push(4)); // borrows from the enclosing stack
    ///     s.spawn(|_| b.clear());
    /// });
    /// assert_eq!((a.len(), b.len()), (4, 0));
    /// ```
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.pending.fetch_add(1, AcqRel);
        let ptr = ScopePtr(self as *const Scope<'scope>);
        let run = move || {
            let ptr = ptr;
            // SAFETY: the scope waits (on `pending`) for this job before it returns.
            let scope = unsafe { &*ptr.0 };
            if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| body(scope))) {
                scope.keep_panic(p);
            }
            // SAFETY: the scope is alive until this decrement is seen; not touched after.
            unsafe { Scope::job_completed(ptr.0) };
        };
        // SAFETY: runs once (it goes into exactly one deque or the injector), and what it
        // borrows outlives `'scope`, which the scope outlives by waiting for it.
        let job = unsafe { HeapJob::into_job_ref(run) };
        match WorkerThread::current() {
            Some(wt) if std::ptr::eq(&**wt.registry(), &*self.registry) => wt.push(job),
            _ => self.registry.inject(job),
        }
    }

    fn keep_panic(&self, p: Box<dyn Any + Send>) {
        let rejected = {
            let mut slot = self.panic.lock();
            if slot.is_none() {
                *slot = Some(p);
                None
            } else {
                Some(p)
            }
        };
        // Outside the lock, and never unwinding out of this job (see `discard_panic`).
        if let Some(p) = rejected {
            discard_panic(p);
        }
    }

    /// One job (or the body) is done; the last one sets the latch.
    ///
    /// # Safety
    ///
    /// `this` is live; it may be freed as soon as the latch is set.
    unsafe fn job_completed(this: *const Scope<'scope>) {
        // SAFETY: live until the latch is set below, the last access.
        unsafe {
            if (*this).pending.fetch_sub(1, AcqRel) == 1 {
                // The owner may return as soon as the latch is set: keep the registry (which
                // the latch uses to wake the owner) alive ourselves.
                let registry = Arc::clone(&(*this).registry);
                WorkerLatch::set(std::ptr::addr_of!((*this).latch));
                drop(registry);
            }
        }
    }
}

/// Runs `op` with a new scope on worker `wt` and waits for every job it spawned.
pub(crate) fn run_scope<'scope, OP, R>(wt: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let scope = Scope::new(wt);
    let result = panic::catch_unwind(AssertUnwindSafe(|| op(&scope)));
    // SAFETY: `scope` lives on this stack until the wait below has seen the latch set.
    unsafe { Scope::job_completed(&scope) };
    wt.wait_until(&scope.latch.core);
    let job_panic = scope.panic.lock().take();
    match result {
        Err(p) => {
            if let Some(job_panic) = job_panic {
                discard_panic(job_panic);
            }
            panic::resume_unwind(p)
        }
        Ok(r) => {
            if let Some(p) = job_panic {
                panic::resume_unwind(p);
            }
            r
        }
    }
}
