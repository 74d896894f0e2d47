//! Helpers shared by the integration tests: a drop-counting value and a watchdog.
//!
//! Each test file includes this with `mod common;`, so a file that uses only part of it would
//! warn about the rest: hence the `dead_code` allowance.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

/// How long a watched scenario may run. Correct code finishes in milliseconds; this is only
/// generous so that an overloaded CI machine never trips it. Under Miri (whose clock is not the
/// wall clock, and which runs a thousand times slower) it is practically unlimited.
pub const WATCHDOG_SECS: u64 = if cfg!(miri) { 24 * 3_600 } else { 20 };

/// The shared counters of a family of [`DropCounter`]s: how many were made, how many dropped.
#[derive(Clone, Debug, Default)]
pub struct DropCounts {
    made: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

impl DropCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// A new value with this `id`, counted as one construction.
    pub fn make(&self, id: u64) -> DropCounter {
        self.made.fetch_add(1, SeqCst);
        DropCounter {
            id,
            counts: self.clone(),
        }
    }

    /// How many values were constructed.
    pub fn made(&self) -> usize {
        self.made.load(SeqCst)
    }

    /// How many values were dropped (a value dropped twice counts twice).
    pub fn dropped(&self) -> usize {
        self.dropped.load(SeqCst)
    }

    /// Constructions minus drops (negative if something was dropped twice).
    pub fn live(&self) -> isize {
        self.made() as isize - self.dropped() as isize
    }
}

/// A value that counts its construction and its drop in shared counters. Not `Clone`: the only
/// way to get two is to construct two, so a queue that duplicates or leaks values shows up as a
/// difference between the counters.
#[derive(Debug)]
pub struct DropCounter {
    id: u64,
    counts: DropCounts,
}

impl DropCounter {
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.counts.dropped.fetch_add(1, SeqCst);
    }
}

/// Runs `f` on a fresh thread and returns its result; panics with `"{what}: the scenario did
/// not finish within {secs} s"` if it takes longer than `secs` seconds.
///
/// A panic inside `f` is re-raised here with its original payload, so its message (already
/// printed by the panic hook) is what fails the test. A thread that hangs is left detached: the
/// panic ends the test, and the process exit ends the thread.
pub fn with_watchdog<R, F>(secs: u64, what: &str, f: F) -> R
where
    R: Send + 'static,
    F: FnOnce() -> R + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let worker = thread::Builder::new()
        .name(format!("watched: {what}"))
        .spawn(move || {
            // The receiver may be gone if the watchdog already gave up; nothing to do then.
            let _ = tx.send(f());
        })
        .expect("spawning the watched thread");
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(r) => {
            worker.join().expect("the watched thread finished");
            r
        }
        // The sender was dropped without sending: `f` panicked. Re-raise its payload.
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => unreachable!("the watched thread ended without a result or a panic"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: the scenario did not finish within {secs} s")
        }
    }
}

/// Joins `handle`, re-raising a panic of that thread with its original payload (so its message
/// is the one that fails the test, rather than a generic "thread panicked").
pub fn join<R>(handle: thread::JoinHandle<R>) -> R {
    match handle.join() {
        Ok(r) => r,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// The CPU time (user + system) the calling thread has used (Linux: `getrusage(RUSAGE_THREAD)`;
/// not available under Miri, where the tests that call it are ignored).
#[cfg(target_os = "linux")]
pub fn thread_cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` points to writable memory the size of a `rusage`; RUSAGE_THREAD reports on
    // the calling thread only.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_THREAD) failed");
    // SAFETY: getrusage returned 0, so it filled the struct (and it was zeroed before anyway).
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The calling thread's kernel id (Linux), for [`wait_until_asleep`]; 0 elsewhere and under
/// Miri.
pub fn current_tid() -> i64 {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        // SAFETY: gettid has no preconditions.
        i64::from(unsafe { libc::gettid() })
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    {
        0
    }
}

/// Returns once the thread `tid` (from [`current_tid`]), which announced that it is about to
/// block, is asleep in the kernel (state `S` in `/proc`), so that a test can make a thread park
/// without depending on timing. Panics, naming `what`, if it is not asleep within 10 s (it spins
/// or yields instead of parking). Under Miri, where threads' states cannot be read, many turns
/// of the scheduler; elsewhere, a 20 ms pause. Allocates (do not call inside a counted window).
pub fn wait_until_asleep(tid: i64, what: &str) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        let path = format!("/proc/self/task/{tid}/stat");
        let start = std::time::Instant::now();
        loop {
            let stat = std::fs::read_to_string(&path).expect("reading a thread's /proc stat");
            // The state follows the command name, in parentheses (which may contain spaces).
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            if state == Some('S') {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{what}: the thread never went to sleep (state {state:?}): \
                 it spins or yields instead of parking"
            );
            thread::sleep(Duration::from_millis(1));
        }
    }
    #[cfg(miri)]
    {
        // Miri hands the CPU to another thread at each yield (a spin hint is a yield there too):
        // this many turns are far more than a blocked thread needs to spin, yield and park. A
        // 20 ms sleep was not enough: with some seeds (-Zmiri-seed=1, 6) the other thread had
        // not parked yet when it ended.
        let _ = (tid, what);
        for _ in 0..MIRI_TURNS {
            thread::yield_now();
        }
    }
    #[cfg(not(any(target_os = "linux", miri)))]
    {
        let _ = (tid, what);
        thread::sleep(Duration::from_millis(20));
    }
}

/// How many times [`wait_until_asleep`] yields under Miri.
#[cfg(miri)]
const MIRI_TURNS: usize = 2_000;
