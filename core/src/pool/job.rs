//! Jobs: type-erased pointers to work that lives on a stack (`join`, `install`) or on the heap
//! (`spawn`, `Scope::spawn`).

use super::latch::Latch;
use crate::sync::cell::UnsafeCell;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

/// A pointer to a job and the function that runs it: two words, no allocation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobRef {
    pointer: *const (),
    execute_fn: unsafe fn(*const ()),
}

// SAFETY: a `JobRef` is created only for jobs whose closures are `Send`, and the creator keeps
// the job alive until it has run (a stack job's owner waits on its latch; a heap job owns itself).
unsafe impl Send for JobRef {}

impl JobRef {
    /// Runs the job.
    ///
    /// # Safety
    ///
    /// Once per job, while the job is alive (see the creators' contracts).
    #[inline]
    pub(crate) unsafe fn execute(self) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.execute_fn)(self.pointer) }
    }

    /// Whether two refs name the same job.
    #[inline]
    pub(crate) fn same(&self, other: &JobRef) -> bool {
        std::ptr::eq(self.pointer, other.pointer)
    }
}

/// What a job produced.
pub(crate) enum JobResult<R> {
    None,
    Ok(R),
    Panic(Box<dyn Any + Send>),
}

/// A job on its owner's stack: `join`'s second closure, or `install`'s closure.
pub(crate) struct StackJob<L, F, R> {
    pub(crate) latch: L,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
}

impl<L: Latch, F: FnOnce() -> R + Send, R: Send> StackJob<L, F, R> {
    pub(crate) fn new(func: F, latch: L) -> Self {
        StackJob {
            latch,
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(JobResult::None),
        }
    }

    /// A ref to this job.
    ///
    /// # Safety
    ///
    /// The caller keeps `self` alive (and unmoved) until the job has run and set its latch, or
    /// until it took the ref back unrun.
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        JobRef {
            pointer: self as *const Self as *const (),
            execute_fn: Self::execute,
        }
    }

    /// Runs the job on a thread other than its owner's: the result (or panic) is stored, then
    /// the latch set. The job may be freed as soon as the latch is set, so nothing touches it
    /// after.
    unsafe fn execute(this: *const ()) {
        let this = this as *const Self;
        // SAFETY: the owner keeps the job alive until its latch is set, which is our last step;
        // we are the only runner (the ref was taken from a deque or queue exactly once).
        unsafe {
            let func = (*this)
                .func
                .with_mut(|f| (*f).take())
                .expect("a job runs once");
            let result = match panic::catch_unwind(AssertUnwindSafe(func)) {
                Ok(r) => JobResult::Ok(r),
                Err(p) => JobResult::Panic(p),
            };
            (*this).result.with_mut(|r| *r = result);
            L::set(std::ptr::addr_of!((*this).latch));
        }
    }

    /// Runs the job on its owner, which took its ref back from its deque unrun.
    pub(crate) fn run_inline(self) -> R {
        let func = self.func.into_inner().expect("a job runs once");
        func()
    }

    /// The result, once the latch is set: the value, or the job's panic resumed here.
    pub(crate) fn into_result(self) -> R {
        match self.into_outcome() {
            Ok(r) => r,
            Err(p) => panic::resume_unwind(p),
        }
    }

    /// The result, once the latch is set: the value, or the job's panic payload.
    pub(crate) fn into_outcome(self) -> Result<R, Box<dyn Any + Send>> {
        match self.result.into_inner() {
            JobResult::Ok(r) => Ok(r),
            JobResult::Panic(p) => Err(p),
            JobResult::None => unreachable!("a job's result is read after its latch is set"),
        }
    }
}

/// Drops a panic payload that berth does not resume (the second of two panics that meet, or a
/// scope job's panic after the first). A payload's own `Drop` may panic (`panic_any` with such
/// a value): that panic is caught here and its payload leaked, so that it neither unwinds
/// berth's code (a scope job would never be counted finished) nor fires while the other panic
/// unwinds (which aborts the process).
pub(crate) fn discard_panic(payload: Box<dyn Any + Send>) {
    if let Err(again) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

/// A job on the heap: owns itself, freed by its run.
pub(crate) struct HeapJob<F> {
    func: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `func` and returns a ref that runs (and frees) it once.
    ///
    /// # Safety
    ///
    /// The ref must be executed exactly once, and everything `func` borrows must outlive that
    /// run (`spawn` requires `'static`; a scope waits for all its jobs).
    pub(crate) unsafe fn into_job_ref(func: F) -> JobRef {
        JobRef {
            pointer: Box::into_raw(Box::new(HeapJob { func })) as *const (),
            execute_fn: Self::execute,
        }
    }

    unsafe fn execute(this: *const ()) {
        // SAFETY: the pointer came from `Box::into_raw` in `into_job_ref`, and runs once.
        let job = unsafe { Box::from_raw(this as *mut Self) };
        (job.func)();
    }
}
