//! The workers of one pool, how they find work, and how they sleep.

use super::job::{JobRef, StackJob};
use super::latch::{CoreLatch, LockLatch, WorkerLatch};
use super::ThreadPoolBuildError;
use crate::channel::{self, Receiver, Sender};
use crate::deque::{Steal, Stealer, Worker};
use crate::park::{Backoff, Parker, Unparker, WaitList};
use crate::sync::asymmetric;
use crate::sync::atomic::{
    AtomicUsize,
    Ordering::{AcqRel, Acquire},
};
use crate::sync::thread::JoinHandle;
use crate::sync::{Arc, Mutex};
use std::cell::Cell;
use std::ptr;

/// How a pool's threads are made.
pub(crate) struct Config {
    pub(crate) num_threads: usize,
    pub(crate) thread_name: Option<Box<dyn FnMut(usize) -> String>>,
    pub(crate) stack_size: Option<usize>,
}

/// How long a worker that ran out of work keeps looking for more, yielding its CPU between
/// looks, before it goes to sleep (after the spin-and-yield steps of `Backoff`). A pool is used
/// in bursts: an `install`'s caller gets its result and, typically, calls `install` again a few
/// microseconds later; a worker that slept in between costs the next burst a futex wake-up
/// (10-30 µs on the 2-vCPU benchmark machine) and its `membarrier` on the way to sleep. rayon's
/// workers yield for 32 rounds before they sleep, which is of the same order. Measured:
/// `reports/bench/losses.md`, `pool_fib25_every_t2`. Under the models, which have no clock,
/// there is no such phase.
#[cfg(not(any(loom, shuttle)))]
const IDLE_YIELD_FOR: std::time::Duration = std::time::Duration::from_micros(100);

/// When a worker's idle yield phase began (`IDLE_YIELD_FOR`); `None` while it has work.
#[derive(Default)]
struct IdleYields {
    #[cfg(not(any(loom, shuttle)))]
    since: Option<std::time::Instant>,
}

impl IdleYields {
    /// Found work: the next idle phase starts afresh.
    #[inline]
    fn reset(&mut self) {
        #[cfg(not(any(loom, shuttle)))]
        {
            self.since = None;
        }
    }

    /// Out of work and done with `Backoff`: true (after yielding once) while the phase lasts;
    /// false when it is over (and reset for the next one): time to sleep.
    fn keep_yielding(&mut self) -> bool {
        #[cfg(not(any(loom, shuttle)))]
        {
            let now = std::time::Instant::now();
            let since = *self.since.get_or_insert(now);
            if now.duration_since(since) < IDLE_YIELD_FOR {
                crate::sync::thread::yield_now();
                return true;
            }
            self.since = None;
        }
        false
    }
}

/// What the workers of one pool share.
pub(crate) struct Registry {
    stealers: Vec<Stealer<JobRef>>,
    unparkers: Vec<Unparker>,
    /// Jobs from outside the pool (`install`, `spawn` from a non-worker).
    injector_tx: Sender<JobRef>,
    injector_rx: Receiver<JobRef>,
    /// Workers about to sleep or asleep (for new work; a worker waiting on a latch is also
    /// woken by its latch).
    idle: WaitList,
    /// Bumped (an RMW) after every injected job and at termination: the atomic a sleeping
    /// worker re-checks with an RMW before it parks (the wait-list protocol of `crate::park`).
    events: AtomicUsize,
    /// Nonzero once the pool's handle is dropped: workers exit when they find no work.
    terminate: AtomicUsize,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("num_threads", &self.stealers.len())
            .finish_non_exhaustive()
    }
}

crate::sync::thread::thread_local! {
    /// The worker running on this thread, if any (null otherwise). Not `const { .. }`: loom's
    /// and shuttle's `thread_local!` do not take that form.
    #[allow(clippy::missing_const_for_thread_local)]
    static WORKER_THREAD: Cell<*const WorkerThread> = Cell::new(ptr::null());
}

/// One worker: its deque and its parker. Lives on its thread's stack for the thread's life.
pub(crate) struct WorkerThread {
    worker: Worker<JobRef>,
    parker: Parker,
    index: usize,
    registry: Arc<Registry>,
    rng: Cell<u64>,
}

/// Clears the thread-local pointer when the worker's main loop ends, even by unwinding.
struct ClearCurrent;

impl Drop for ClearCurrent {
    fn drop(&mut self) {
        let _ = WORKER_THREAD.try_with(|c| c.set(ptr::null()));
    }
}

/// Stops and joins a registry's threads when dropped (a failed or panicking build).
struct Terminator<'a>(&'a Registry);

impl Drop for Terminator<'_> {
    fn drop(&mut self) {
        self.0.terminate();
        self.0.join_threads();
    }
}

/// Aborts the process if dropped during an unwind: a panic in berth's own code while a stack
/// job may still be in another thread's hands would free memory that thread is using.
pub(crate) struct AbortIfPanic;

impl Drop for AbortIfPanic {
    fn drop(&mut self) {
        eprintln!("berth::pool: unexpected panic while a job on this stack may be running elsewhere; aborting");
        std::process::abort();
    }
}

impl Registry {
    /// Builds the registry and starts its threads.
    pub(crate) fn new(mut config: Config) -> Result<Arc<Registry>, ThreadPoolBuildError> {
        // Before any worker pushes: the push/sleep fence pair is asymmetric from the start.
        asymmetric::prepare();
        let n = config.num_threads.max(1);
        // Owners pop at every join, thieves steal rarely: the take fence is the one to make
        // cheap (`deque::Worker::new_asymmetric`).
        let workers: Vec<Worker<JobRef>> = (0..n).map(|_| Worker::new_asymmetric()).collect();
        let parkers: Vec<Parker> = (0..n).map(|_| Parker::new()).collect();
        let (injector_tx, injector_rx) = channel::unbounded();
        let registry = Arc::new(Registry {
            stealers: workers.iter().map(|w| w.stealer()).collect(),
            unparkers: parkers.iter().map(|p| p.unparker().clone()).collect(),
            injector_tx,
            injector_rx,
            idle: WaitList::new(),
            events: AtomicUsize::new(0),
            terminate: AtomicUsize::new(0),
            threads: Mutex::new(Vec::with_capacity(n)),
        });
        // Stops the threads already started if a later spawn fails or `thread_name` panics.
        let terminator = Terminator(&registry);
        for (index, (worker, parker)) in workers.into_iter().zip(parkers).enumerate() {
            let name = config.thread_name.as_mut().map(|f| f(index));
            let reg = Arc::clone(&registry);
            let spawned = crate::sync::thread::spawn_with(name, config.stack_size, move || {
                let wt = WorkerThread {
                    worker,
                    parker,
                    index,
                    registry: reg,
                    rng: Cell::new(0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1)),
                };
                WORKER_THREAD.with(|c| c.set(&wt));
                let _clear = ClearCurrent;
                wt.main_loop();
            });
            match spawned {
                Ok(handle) => registry.threads.lock().push(handle),
                Err(e) => return Err(ThreadPoolBuildError::spawn(e)),
            }
        }
        std::mem::forget(terminator);
        Ok(registry)
    }

    pub(crate) fn num_threads(&self) -> usize {
        self.stealers.len()
    }

    /// Hands a job to the pool from outside it; a sleeping worker is woken.
    pub(crate) fn inject(&self, job: JobRef) {
        if self.injector_tx.send(job).is_err() {
            unreachable!("the registry holds the injector's receiver");
        }
        self.events.fetch_add(1, AcqRel); // N1
        self.idle.notify_one(); // N2
    }

    /// Wakes one sleeping worker if any, after a worker pushed onto its own deque and ran the
    /// `SeqCst` fence that pairs with the sleeper's (see `WorkerThread::push`).
    #[inline]
    fn notify_local_push(&self) {
        self.idle.notify_one();
    }

    pub(crate) fn unpark_worker(&self, index: usize) {
        self.unparkers[index].unpark();
    }

    /// Tells the workers to exit once they find no work.
    pub(crate) fn terminate(&self) {
        self.terminate
            .store(1, crate::sync::atomic::Ordering::Release);
        self.events.fetch_add(1, AcqRel);
        self.idle.notify_all();
    }

    /// Joins every worker thread (not from one of them).
    pub(crate) fn join_threads(&self) {
        let threads: Vec<_> = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            // A worker's main loop catches job panics; an error here is a bug in berth.
            let _ = t.join();
        }
    }

    /// Runs `op` on a worker of this pool and returns its result, blocking the calling thread
    /// (which is not a worker of this pool) until then.
    pub(crate) fn in_worker_cold<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread) -> R + Send,
        R: Send,
    {
        crate::park::with_local_parker(|parker| {
            let job = StackJob::new(
                || {
                    let wt = WorkerThread::current().expect("injected jobs run on workers");
                    op(wt)
                },
                LockLatch::new(parker.unparker().clone()),
            );
            // SAFETY: `job` stays on this stack until its latch is set (we wait below).
            self.inject(unsafe { job.as_job_ref() });
            job.latch.wait(parker);
            job.into_result()
        })
    }

    /// Runs `op` on a worker of this pool: directly if the current thread is one.
    pub(crate) fn in_worker<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread) -> R + Send,
        R: Send,
    {
        match WorkerThread::current() {
            Some(wt) if ptr::eq(&*wt.registry, self) => op(wt),
            _ => self.in_worker_cold(op),
        }
    }

    fn has_visible_work(&self) -> bool {
        !self.injector_rx.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }
}

impl WorkerThread {
    /// The worker running on this thread, if any.
    #[inline]
    pub(crate) fn current() -> Option<&'static WorkerThread> {
        let p = WORKER_THREAD.try_with(|c| c.get()).unwrap_or(ptr::null());
        // SAFETY: the pointer is set by the worker's thread to its `WorkerThread`, which lives
        // on that thread's stack for as long as the pointer is set (cleared on exit, even by
        // unwinding); only this thread reads it.
        unsafe { p.as_ref() }
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Pushes a job onto this worker's deque and wakes a sleeping worker to steal it.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        self.worker.push(job);
        // Orders the push before the read of the idle count, against the fence a worker
        // falling asleep runs between its registration and its last look at the deques (a
        // store-buffering pair: without both fences each can miss the other, and a job whose
        // sibling waits for it could sit unseen while the other worker sleeps; pool_suite's
        // `join_first_closure_waiting_for_the_second_is_not_stranded` saw that about once in
        // 200,000 joins). The pair is asymmetric (`crate::sync::asymmetric`): a compiler
        // fence here, on every push, and a process-wide barrier on the sleeper's side, which
        // is rare; where the system call is unavailable (and under the models) both are
        // `SeqCst` fences.
        asymmetric::light();
        self.registry.notify_local_push();
    }

    /// Pops this worker's newest job.
    #[inline]
    pub(crate) fn take_local_job(&self) -> Option<JobRef> {
        self.worker.pop()
    }

    fn next_rand(&self) -> u64 {
        // xorshift64*
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Own deque, then the other workers' (from a random one), then the injector.
    fn find_work(&self) -> Option<JobRef> {
        if let Some(job) = self.worker.pop() {
            return Some(job);
        }
        let stealers = &self.registry.stealers;
        let n = stealers.len();
        if n > 1 {
            let start = (self.next_rand() % n as u64) as usize;
            loop {
                let mut retry = false;
                for k in 0..n {
                    let victim = (start + k) % n;
                    if victim == self.index {
                        continue;
                    }
                    match stealers[victim].steal() {
                        Steal::Success(job) => return Some(job),
                        Steal::Retry => retry = true,
                        Steal::Empty => {}
                    }
                }
                if !retry {
                    break;
                }
            }
        }
        self.registry.injector_rx.try_recv().ok()
    }

    /// Runs a job.
    ///
    /// # Safety
    ///
    /// `job` was taken from a deque or the injector (so it runs once) and is alive.
    #[inline]
    pub(crate) unsafe fn execute(&self, job: JobRef) {
        // SAFETY: forwarded from the caller.
        unsafe { job.execute() }
    }

    fn main_loop(&self) {
        let mut backoff = Backoff::new();
        let mut idle = IdleYields::default();
        loop {
            // Read before the search: a worker exits only if a search that began after it saw
            // `terminate` found nothing (a job injected before the pool's drop is seen by it).
            // Reading it after the search lost jobs (shuttle `drop_right_after_one_spawn`).
            let terminating = self.registry.terminate.load(Acquire) != 0;
            let seen = self.registry.events.load(Acquire);
            if let Some(job) = self.find_work() {
                // SAFETY: taken from a deque or the injector.
                unsafe { self.execute(job) };
                backoff = Backoff::new();
                idle.reset();
                continue;
            }
            if terminating {
                return;
            }
            if !backoff.is_completed() {
                backoff.snooze();
                continue;
            }
            if idle.keep_yielding() {
                continue;
            }
            self.sleep(seen, None);
            backoff = Backoff::new();
        }
    }

    /// Runs other jobs until `latch` is set; sleeps (on this worker's parker) when there is
    /// nothing to run, woken by the latch or by new work.
    pub(crate) fn wait_until(&self, latch: &CoreLatch) {
        let mut backoff = Backoff::new();
        while !latch.probe() {
            let seen = self.registry.events.load(Acquire);
            if let Some(job) = self.find_work() {
                // SAFETY: taken from a deque or the injector.
                unsafe { self.execute(job) };
                backoff = Backoff::new();
                continue;
            }
            if !backoff.is_completed() {
                backoff.snooze();
                continue;
            }
            self.sleep(seen, Some(latch));
        }
    }

    /// Registers as idle, re-checks, and parks (see `crate::park` for the protocol: W1 the
    /// registration, W2 an RMW on `events`, W3 the park; the latch adds its own RMW check).
    fn sleep(&self, seen: usize, latch: Option<&CoreLatch>) {
        let registry = &*self.registry;
        let me = self.parker.unparker();
        registry.idle.register(me); // W1
        if let Some(latch) = latch {
            if !latch.get_sleepy() {
                self.leave_idle(latch);
                return;
            }
        }
        // Pairs with the fence in `push` (see there).
        asymmetric::heavy();
        let changed = registry.events.fetch_add(0, AcqRel) != seen // W2
            || registry.has_visible_work()
            || (latch.is_none() && registry.terminate.load(Acquire) != 0);
        if !changed {
            self.parker.park(); // W3
        }
        match latch {
            None => {
                registry.idle.unregister(me);
            }
            Some(latch) => {
                latch.wake_up();
                self.leave_idle(latch);
            }
        }
    }

    /// A worker waiting on a latch leaves the idle list. If a notifier had chosen it (removed
    /// it to wake it for new work) and its latch is set, it is about to return to its caller
    /// rather than look for that work: pass the wakeup on to another sleeper.
    fn leave_idle(&self, latch: &CoreLatch) {
        let registry = &*self.registry;
        if !registry.idle.unregister(self.parker.unparker()) && latch.probe() {
            registry.idle.notify_one();
        }
    }
}

/// A job's latch owned by the current worker.
pub(crate) fn worker_latch(wt: &WorkerThread) -> WorkerLatch {
    WorkerLatch::new(&wt.registry, wt.index)
}
