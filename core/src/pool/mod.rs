//! A fork-join thread pool on berth's work-stealing deque, with rayon-core's API.
//!
//! # Examples
//!
//! ```
//! fn fib(n: u64) -> u64 {
//!     if n < 2 {
//!         return n;
//!     }
//!     let (a, b) = berth::join(|| fib(n - 1), || fib(n - 2));
//!     a + b
//! }
//!
//! let pool = berth::pool::ThreadPool::new(2);
//! assert_eq!(pool.install(|| fib(20)), 6765);
//! ```
//!
//! # How it works
//!
//! Each worker owns a [`deque`](crate::deque) and runs jobs from it LIFO; an idle worker steals
//! the oldest job of another worker (starting from a random one), then looks at the pool's
//! injector (a berth channel) for jobs from outside. The deques are asymmetric
//! ([`Worker::new_asymmetric`](crate::deque::Worker::new_asymmetric)): the owner's pop has no
//! fence instruction, and a thief waits for the owner's answer, which its next pop gives, or
//! failing that runs a process-wide barrier. A worker with nothing to do spins, then
//! yields for up to 100 µs (a pool is used in bursts, and the next `install` usually comes
//! sooner than that), then sleeps on its own [`Parker`](crate::park::Parker): an idle pool uses
//! no CPU.
//!
//! - [`join(a, b)`](join) pushes `b` onto the worker's deque (as a pointer to a job on the
//!   caller's stack: a join allocates nothing), runs `a`, then pops `b` back and runs it, unless
//!   a thief took it. Then the caller runs other jobs while `b` runs elsewhere, and when there
//!   are none it **sleeps on `b`'s latch** instead of spinning (the reference pool in the seeds
//!   spun, and lost to rayon by 1.56x on fine-grained joins).
//! - [`scope`] spawns heap jobs that may borrow from the caller's stack, and returns when every
//!   one has run.
//! - [`spawn`] runs a `'static` job some time later.
//!
//! # Sleeping and waking
//!
//! A worker about to sleep registers in the pool's idle list (W1), re-checks with an RMW on the
//! pool's event counter (W2), and parks (W3); a thread that injects a job bumps the counter with
//! an RMW (N1) and wakes one registered worker (N2): the wait-list protocol of [`crate::park`],
//! so an injected job never waits for a sleeping pool. A worker waiting for a latch also
//! announces itself on the latch with a CAS, and the job that sets the latch wakes it (see
//! `latch.rs`).
//!
//! A job a worker pushes onto its *own* deque (the `b` of a join, a scope's job) wakes a sleeper
//! without a contended RMW: the pusher fences between its push and its read of the idle count,
//! and a worker falling asleep fences between its registration and its last look at the deques,
//! so one of the two always sees the other. (An earlier version had no fences and argued the
//! miss cost only parallelism; it costs progress when the pushed job's sibling waits for it:
//! `pool_suite` caught a join stranded that way.) The pair is asymmetric, because pushes are
//! frequent and sleeps rare: on Linux the pusher's half is a compiler fence and the sleeper's is
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, a barrier on every CPU running the process;
//! elsewhere, before the process registers for it, and under loom, shuttle and Miri (which
//! cannot run it), both halves are `SeqCst` fences (`crate::sync::asymmetric` has the argument
//! and what the checkers do not see). A worker woken for new
//! work whose own latch is set at that moment returns to its caller, and passes the wakeup on.
//!
//! # Panics
//!
//! - A panic in either closure of `join` resurfaces in the caller after both have finished (if
//!   both panic, the first closure's panic wins).
//! - A panic in a scope's job resurfaces from `scope` once every job of the scope has finished
//!   (the first one, if several panic).
//! - Where two panics meet (both closures of a `join`, a scope's body and one of its jobs, two
//!   jobs of one scope), the one not resumed is dropped. A payload whose own `Drop` panics
//!   (`panic_any` with such a value) is dropped under `catch_unwind` and the second payload
//!   leaked, so the caller still gets the panic promised above (before, the scope job that
//!   dropped it unwound its worker, and a drop while unwinding aborted the process; `pool_suite`'s
//!   `a_scope_survives_dropping_payloads_that_panic_on_drop` and
//!   `a_second_panic_whose_payload_panics_on_drop_is_contained`).
//! - A panic in a `spawn`ed job is caught (the panic hook has already printed it) and dropped:
//!   the worker survives and the pool stays usable. A payload whose own `Drop` panics is
//!   dropped under `catch_unwind` and the second payload leaked, as above (before, it unwound
//!   the worker thread, and a one-thread pool was left with no worker: `pool_suite`'s
//!   `a_spawned_payload_that_panics_on_drop_leaves_the_worker`). rayon-core aborts on every
//!   panic in a spawned job that has no panic handler; std aborts when a thread's result
//!   panics on drop.
//! - berth aborts the process if *its own* code panics while a job on the unwinding stack may
//!   still be running on another thread (that thread would write into freed memory), as rayon
//!   does. A worker whose main loop ends, even by unwinding, clears its thread-local pointer.
//!   `pool_suite` checks both (`a_panic_in_berth_inside_a_join_aborts`, in a child process, and
//!   `a_worker_that_exits_or_unwinds_clears_its_thread_local`); no public function lets a user
//!   make berth's code panic, so they inject the panic through a hidden test hook.
//!
//! # Differences from rayon-core
//!
//! - A worker of one pool that calls `install` on another blocks (sleeping) until the job is
//!   done; rayon's worker keeps running its own pool's jobs meanwhile.
//! - Dropping a [`ThreadPool`] waits for every job it was given (spawned ones included) and
//!   joins its threads (rayon's drop returns at once). Dropped from one of its own workers, it
//!   cannot join that thread: it only tells the workers to exit when their work is done.
//! - Under `--cfg loom` or `--cfg shuttle` there is no global pool (a model's threads cannot
//!   outlive one execution): use a [`ThreadPool`].

mod job;
mod latch;
mod registry;
mod scope;

pub use scope::Scope;

use crate::sync::{Arc, OnceLock};
use job::StackJob;
use registry::{worker_latch, AbortIfPanic, Config, Registry, WorkerThread};
use std::fmt;
use std::io;
use std::panic::{self, AssertUnwindSafe};

/// A pool of worker threads.
///
/// # Examples
///
/// ```
/// use berth::pool::ThreadPool;
///
/// let pool = ThreadPool::new(2);
/// let squares: Vec<u64> = pool.install(|| {
///     let mut v = vec![0; 8];
///     berth::scope(|s| {
///         for (i, slot) in v.iter_mut().enumerate() {
///             s.spawn(move |_| *slot = (i * i) as u64);
///         }
///     });
///     v
/// });
/// assert_eq!(squares, [0, 1, 4, 9, 16, 25, 36, 49]);
/// drop(pool); // stops and joins the pool's threads
/// ```
pub struct ThreadPool {
    registry: Arc<Registry>,
}

/// Configures a [`ThreadPool`].
///
/// # Examples
///
/// ```
/// let pool = berth::pool::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("worker-{i}"))
///     .build()
///     .unwrap();
/// assert_eq!(pool.current_num_threads(), 2);
/// ```
#[derive(Default)]
pub struct ThreadPoolBuilder {
    num_threads: usize,
    thread_name: Option<Box<dyn FnMut(usize) -> String>>,
    stack_size: Option<usize>,
}

/// Why a pool could not be built.
///
/// # Examples
///
/// ```
/// # if cfg!(miri) { return; } // the global pool's threads outlive a doctest: Miri reports them
/// use berth::pool::ThreadPoolBuilder;
///
/// ThreadPoolBuilder::new().num_threads(2).build_global().unwrap();
/// let err = ThreadPoolBuilder::new().build_global().unwrap_err(); // only once
/// assert_eq!(err.to_string(), "the global thread pool has already been initialized");
/// ```
#[derive(Debug)]
pub struct ThreadPoolBuildError {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    GlobalPoolAlreadyInitialized,
    Spawn(io::Error),
}

impl ThreadPoolBuildError {
    pub(crate) fn spawn(e: io::Error) -> Self {
        ThreadPoolBuildError {
            kind: ErrorKind::Spawn(e),
        }
    }
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::GlobalPoolAlreadyInitialized => {
                f.write_str("the global thread pool has already been initialized")
            }
            ErrorKind::Spawn(e) => write!(f, "could not spawn a worker thread: {e}"),
        }
    }
}

impl std::error::Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Spawn(e) => Some(e),
            ErrorKind::GlobalPoolAlreadyInitialized => None,
        }
    }
}

/// The number of threads a pool built with `num_threads(0)` gets: `BERTH_NUM_THREADS` if set to
/// a positive number, else the number of CPUs.
fn default_num_threads() -> usize {
    std::env::var("BERTH_NUM_THREADS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
}

impl ThreadPoolBuilder {
    /// A builder with the defaults: as many threads as CPUs (or `BERTH_NUM_THREADS`), unnamed,
    /// the platform's stack size.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::pool::ThreadPoolBuilder;
    ///
    /// let pool = ThreadPoolBuilder::new().build().unwrap(); // the defaults
    /// assert!(pool.current_num_threads() >= 1);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of worker threads; 0 (the default) means `BERTH_NUM_THREADS` if set, else the
    /// number of CPUs.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// assert_eq!(pool.current_num_threads(), 3);
    /// ```
    pub fn num_threads(mut self, n: usize) -> Self {
        self.num_threads = n;
        self
    }

    /// Names each worker thread: `f(index)`.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .thread_name(|i| format!("crunch-{i}"))
    ///     .build()
    ///     .unwrap();
    /// let name = pool.install(|| std::thread::current().name().map(str::to_owned));
    /// assert_eq!(name.as_deref(), Some("crunch-0"));
    /// ```
    pub fn thread_name<F>(mut self, f: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.thread_name = Some(Box::new(f));
        self
    }

    /// The stack size of each worker thread, in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .stack_size(8 << 20) // deep recursion on the workers
    ///     .build()
    ///     .unwrap();
    /// fn depth(n: u64) -> u64 {
    ///     if n == 0 { 0 } else { 1 + depth(n - 1) }
    /// }
    /// assert_eq!(pool.install(|| depth(10_000)), 10_000);
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    fn config(self) -> Config {
        Config {
            num_threads: if self.num_threads == 0 {
                default_num_threads()
            } else {
                self.num_threads
            },
            thread_name: self.thread_name,
            stack_size: self.stack_size,
        }
    }

    /// Starts the pool's threads.
    ///
    /// # Errors
    ///
    /// If a thread cannot be spawned (the threads already started are stopped).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::pool::ThreadPoolBuilder;
    ///
    /// match ThreadPoolBuilder::new().num_threads(2).build() {
    ///     Ok(pool) => assert_eq!(pool.install(|| 6 * 7), 42),
    ///     Err(e) => panic!("no pool: {e}"), // a thread could not be spawned
    /// }
    /// ```
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        Ok(ThreadPool {
            registry: Registry::new(self.config())?,
        })
    }

    /// Makes this configuration the global pool's (used by the free functions outside any
    /// pool). Must come before anything uses the global pool.
    ///
    /// # Errors
    ///
    /// If the global pool already exists, or a thread cannot be spawned.
    ///
    /// # Examples
    ///
    /// ```
    /// # if cfg!(miri) { return; } // the global pool's threads outlive a doctest: Miri reports them
    /// use berth::pool::ThreadPoolBuilder;
    ///
    /// // Before anything uses the global pool (the free functions `join`, `scope`, `spawn`):
    /// ThreadPoolBuilder::new().num_threads(2).build_global().unwrap();
    /// assert_eq!(berth::current_num_threads(), 2);
    /// assert!(ThreadPoolBuilder::new().build_global().is_err()); // it exists now
    /// ```
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        let mut result = Err(ThreadPoolBuildError {
            kind: ErrorKind::GlobalPoolAlreadyInitialized,
        });
        let config = self.config();
        GLOBAL.get_or_init(|| match Registry::new(config) {
            Ok(r) => {
                result = Ok(());
                r
            }
            Err(e) => {
                result = Err(e);
                Registry::new(ThreadPoolBuilder::new().config()).expect("the default global pool")
            }
        });
        result
    }
}

impl fmt::Debug for ThreadPoolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("thread_name", &self.thread_name.is_some())
            .field("stack_size", &self.stack_size)
            .finish()
    }
}

static GLOBAL: OnceLock<Arc<Registry>> = OnceLock::new();

fn global_registry() -> &'static Arc<Registry> {
    if crate::sync::MODEL {
        panic!("berth::pool: there is no global pool under loom or shuttle; use a ThreadPool");
    }
    GLOBAL.get_or_init(|| {
        Registry::new(ThreadPoolBuilder::new().config())
            .unwrap_or_else(|e| panic!("berth::pool: cannot start the global pool: {e}"))
    })
}

/// Runs `op` on a worker: this thread if it is one (of any pool), else the global pool's.
fn in_worker<OP, R>(op: OP) -> R
where
    OP: FnOnce(&WorkerThread) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(wt) => op(wt),
        None => global_registry().in_worker_cold(op),
    }
}

impl ThreadPool {
    /// A pool of `num_threads` threads (0: as many as CPUs, or `BERTH_NUM_THREADS`).
    ///
    /// # Panics
    ///
    /// If a thread cannot be spawned (use [`ThreadPoolBuilder::build`] to get the error).
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPool::new(2);
    /// assert_eq!(pool.current_num_threads(), 2);
    /// assert_eq!(pool.install(|| 1 + 1), 2);
    /// ```
    pub fn new(num_threads: usize) -> Self {
        ThreadPoolBuilder::new()
            .num_threads(num_threads)
            .build()
            .unwrap_or_else(|e| panic!("berth::pool::ThreadPool::new({num_threads}): {e}"))
    }

    /// Runs `op` on one of this pool's threads and returns its result; `join`, `scope` and
    /// `spawn` inside it use this pool. The calling thread sleeps meanwhile (if it is a worker
    /// of this pool, `op` simply runs on it).
    ///
    /// # Panics
    ///
    /// If `op` panics: the panic resurfaces here.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPool::new(2);
    /// let index = pool.install(berth::pool::current_thread_index);
    /// assert!(index.unwrap() < 2);
    /// ```
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.registry.in_worker(|_| op())
    }

    /// [`join`] on this pool.
    ///
    /// # Panics
    ///
    /// If `a` or `b` panics, once both have finished (`a`'s panic if both do).
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPool::new(2);
    /// let (a, b) = pool.join(|| (1..=10).sum::<u32>(), || (11..=20).sum::<u32>());
    /// assert_eq!(a + b, 210);
    /// ```
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| join(a, b))
    }

    /// [`scope`] on this pool.
    ///
    /// # Panics
    ///
    /// If `op` or any job spawned in the scope panics, once all of them have finished.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPool::new(2);
    /// let mut halves = [0u64; 2];
    /// let data: Vec<u64> = (1..=100).collect();
    /// pool.scope(|s| {
    ///     let (lo, hi) = halves.split_at_mut(1);
    ///     let (a, b) = data.split_at(50);
    ///     s.spawn(move |_| lo[0] = a.iter().sum());
    ///     s.spawn(move |_| hi[0] = b.iter().sum());
    /// });
    /// assert_eq!(halves[0] + halves[1], 5050);
    /// ```
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.registry.in_worker(|wt| scope::run_scope(wt, op))
    }

    /// [`spawn`] on this pool.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPool::new(2);
    /// let (tx, rx) = berth::channel::bounded(1);
    /// pool.spawn(move || tx.send(berth::current_thread_index()).unwrap());
    /// assert!(rx.recv().unwrap().is_some()); // it ran on one of the pool's workers
    /// ```
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce() + Send + 'static,
    {
        spawn_in(&self.registry, f)
    }

    /// The number of threads of this pool.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPool::new(3);
    /// assert_eq!(pool.current_num_threads(), 3);
    /// ```
    pub fn current_num_threads(&self) -> usize {
        self.registry.num_threads()
    }

    /// The index of the current thread in this pool, if it is one of its workers.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = berth::pool::ThreadPool::new(2);
    /// assert_eq!(pool.current_thread_index(), None); // not a worker of this pool
    /// let inside = pool.install(|| pool.current_thread_index());
    /// assert!(inside.unwrap() < 2);
    /// ```
    pub fn current_thread_index(&self) -> Option<usize> {
        WorkerThread::current()
            .filter(|wt| std::ptr::eq(&**wt.registry(), &*self.registry))
            .map(|wt| wt.index())
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        self.registry.terminate();
        let on_own_worker = WorkerThread::current()
            .is_some_and(|wt| std::ptr::eq(&**wt.registry(), &*self.registry));
        if !on_own_worker {
            self.registry.join_threads();
        }
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("num_threads", &self.registry.num_threads())
            .finish()
    }
}

/// Runs `a` and `b`, potentially in parallel, and returns both results. On a worker thread it
/// uses that worker's pool; elsewhere, the global pool's.
///
/// `b` is offered to other workers while `a` runs on this thread; if nobody took it, this
/// thread runs it after `a`. Allocates nothing.
///
/// # Panics
///
/// If `a` or `b` panics, once both have finished (`a`'s panic if both do); outside any pool,
/// also if the global pool has to be started and cannot spawn its threads.
///
/// # Examples
///
/// ```
/// # if cfg!(miri) { return; } // the global pool's threads outlive a doctest: Miri reports them
/// let v = vec![1, 2, 3, 4];
/// let (left, right) = berth::join(|| v[..2].iter().sum::<i32>(), || v[2..].iter().sum::<i32>());
/// assert_eq!(left + right, 10);
/// ```
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    in_worker(|wt| join_on(wt, a, b))
}

fn join_on<A, B, RA, RB>(wt: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b, worker_latch(wt));
    // SAFETY: `job_b` stays on this stack until it was popped back unrun or its latch is set
    // (both checked below before returning); `abort` turns any unexpected unwind before then
    // into an abort.
    let job_b_ref = unsafe { job_b.as_job_ref() };
    let abort = AbortIfPanic;
    wt.push(job_b_ref);
    let result_a = panic::catch_unwind(AssertUnwindSafe(a));
    while !job_b.latch.core.probe() {
        match wt.take_local_job() {
            Some(job) if job.same(&job_b_ref) => {
                // Nobody took `b`: run it here.
                std::mem::forget(abort);
                let result_b = panic::catch_unwind(AssertUnwindSafe(|| job_b.run_inline()));
                return match (result_a, result_b) {
                    (Ok(ra), Ok(rb)) => (ra, rb),
                    (Err(p), Ok(rb)) => {
                        drop(rb);
                        panic::resume_unwind(p)
                    }
                    (Err(p), Err(q)) => {
                        job::discard_panic(q);
                        panic::resume_unwind(p)
                    }
                    (Ok(ra), Err(q)) => {
                        drop(ra);
                        panic::resume_unwind(q)
                    }
                };
            }
            // A job `a` spawned (`berth::spawn`) sits above `b`: run it.
            // SAFETY: popped from our deque.
            Some(job) => unsafe { wt.execute(job) },
            None => {
                // A thief has `b`: help with other work, then sleep on the latch.
                wt.wait_until(&job_b.latch.core);
                break;
            }
        }
    }
    std::mem::forget(abort);
    match result_a {
        Ok(ra) => (ra, job_b.into_result()),
        Err(p) => {
            match job_b.into_outcome() {
                Ok(rb) => drop(rb),
                Err(q) => job::discard_panic(q),
            }
            panic::resume_unwind(p)
        }
    }
}

/// Creates a scope for spawning jobs that borrow from the caller's stack; returns once every
/// job spawned in it (recursively) has finished. Runs on the current worker's pool, or the
/// global pool outside any.
///
/// # Panics
///
/// If `op` or any job spawned in the scope panics, once all of them have finished; outside any
/// pool, also if the global pool has to be started and cannot spawn its threads.
///
/// # Examples
///
/// ```
/// # if cfg!(miri) { return; } // the global pool's threads outlive a doctest: Miri reports them
/// let mut counts = [0usize; 4];
/// berth::scope(|s| {
///     for (i, c) in counts.iter_mut().enumerate() {
///         s.spawn(move |_| *c = i * 10);
///     }
/// });
/// assert_eq!(counts, [0, 10, 20, 30]);
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    in_worker(|wt| scope::run_scope(wt, op))
}

/// Runs `f` on the current worker's pool (or the global pool) some time later. A panic in `f`
/// is caught after the panic hook has reported it; the pool carries on.
///
/// # Panics
///
/// Outside any pool, if the global pool has to be started and cannot spawn its threads.
///
/// # Examples
///
/// ```
/// # if cfg!(miri) { return; } // the global pool's threads outlive a doctest: Miri reports them
/// let (tx, rx) = berth::channel::bounded(1);
/// berth::spawn(move || tx.send(42).unwrap());
/// assert_eq!(rx.recv(), Ok(42));
/// ```
pub fn spawn<F>(f: F)
where
    F: FnOnce() + Send + 'static,
{
    spawn_in(current_registry(), f)
}

/// The registry of the current worker's pool, or the global pool's (started if need be).
fn current_registry() -> &'static Arc<Registry> {
    match WorkerThread::current() {
        Some(wt) => wt.registry(),
        None => global_registry(),
    }
}

fn spawn_in<F>(registry: &Arc<Registry>, f: F)
where
    F: FnOnce() + Send + 'static,
{
    spawn_job(registry, move || {
        // The panic hook has printed it; the worker carries on (see the module docs). Dropping
        // the payload is contained too: a payload whose `Drop` panics would otherwise unwind
        // the worker (pool_suite `a_spawned_payload_that_panics_on_drop_leaves_the_worker`).
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(f)) {
            job::discard_panic(payload);
        }
    });
}

/// Queues `run` (which must not unwind, or the worker it runs on unwinds) on `registry`: onto
/// the current worker's deque if it is one of `registry`'s, else through the injector.
fn spawn_job<F>(registry: &Arc<Registry>, run: F)
where
    F: FnOnce() + Send + 'static,
{
    // SAFETY: `run` is `'static` and goes into exactly one deque or the injector.
    let job = unsafe { job::HeapJob::into_job_ref(run) };
    match WorkerThread::current() {
        Some(wt) if std::ptr::eq(&**wt.registry(), &**registry) => wt.push(job),
        _ => registry.inject(job),
    }
}

/// Not part of the API: for berth's own tests of what happens when *berth's* code panics on a
/// worker, which no public function lets a user cause. Like [`spawn`], except that a panic in
/// `f` is not caught: it unwinds the worker that runs `f`, as a bug in berth would (the worker
/// exits and the pool has one fewer), and inside a `join`, whose stack job may be running on
/// another thread, it aborts the process. `pool_suite` uses it to check both.
#[doc(hidden)]
pub fn __spawn_unwinding<F>(f: F)
where
    F: FnOnce() + Send + 'static,
{
    spawn_job(current_registry(), f)
}

/// The index of the current thread in its pool, if it is a worker.
///
/// # Examples
///
/// ```
/// assert_eq!(berth::current_thread_index(), None); // not a worker
/// let pool = berth::pool::ThreadPool::new(2);
/// let index = pool.install(berth::current_thread_index);
/// assert!(index.unwrap() < 2);
/// ```
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::current().map(|wt| wt.index())
}

/// The number of threads of the current worker's pool, or of the global pool outside any
/// (which this starts, if nothing has yet).
///
/// # Panics
///
/// Outside any pool, if the global pool has to be started and cannot spawn its threads.
///
/// # Examples
///
/// ```
/// # if cfg!(miri) { return; } // the global pool's threads outlive a doctest: Miri reports them
/// let pool = berth::pool::ThreadPool::new(3);
/// assert_eq!(pool.install(berth::current_num_threads), 3); // the worker's pool
/// assert!(berth::current_num_threads() >= 1); // outside: the global pool's
/// ```
pub fn current_num_threads() -> usize {
    current_registry().num_threads()
}
