//! Asymmetric fences: the two halves of a store-buffering handshake where one side runs very
//! often and the other rarely.
//!
//! The pattern (Dekker's): thread A stores `x` then loads `y`; thread B stores `y` then loads
//! `x`; at least one of them must see the other's store. With a `SeqCst` fence between each
//! store and load that holds, but A pays for a full fence every time (on x86-64 an `mfence`,
//! about 5 ns). The pool's hot side is every `join`'s push (A: push the job, read whether a
//! worker sleeps); its cold side is a worker falling asleep (B: register as idle, look at the
//! deques once more).
//!
//! [`light`] is the hot side's half: a compiler fence only. [`heavy`] is the cold side's: the
//! Linux system call `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which runs a full memory
//! barrier on every CPU currently running a thread of this process before it returns (and a
//! thread that is not running passes through one when it is switched out). So whenever the
//! heavy side runs, each light side is either before its store (its later load sees B's store,
//! made before the call), or between its store and its load (the barrier drains its store
//! buffer: B's later loads see the store), or past its load (its store became visible to B's
//! later loads through the barrier too). Either way one side sees the other, as with two
//! fences. This is the barrier pair Linux's RCU, folly's `asymmetricHeavyBarrier` and .NET's
//! `FlushProcessWriteBuffers` rest on.
//!
//! The expedited command needs the process to register once (`REGISTER_PRIVATE_EXPEDITED`,
//! Linux 4.14). [`prepare`] registers; until it has succeeded, and forever if it fails (an old
//! kernel, a seccomp filter, not Linux), both halves are `fence(SeqCst)`. The light side reads
//! the mode with one relaxed load: it takes the cheap path only once the mode says registration
//! succeeded, and the mode never goes back, so a heavy side that ran the system call pairs with
//! any light side, and one that fell back to a fence pairs with light sides that all used
//! fences.
//!
//! **What the checkers see.** Loom, shuttle and Miri cannot run the system call, and loom's
//! memory model has no such barrier: under `cfg(loom)`, `cfg(shuttle)` and `cfg(miri)` both
//! halves are `fence(SeqCst)`, which is what the models check. The argument above (that the
//! system call is at least as strong as the fence it replaces, for this pattern) is not
//! machine-checked; the real-thread stress test
//! `pool_suite::join_first_closure_waiting_for_the_second_is_not_stranded`, which saw the
//! missing-fence bug about once in 200,000 joins, runs the shipped code.

#[cfg(all(target_os = "linux", not(any(loom, shuttle, miri))))]
mod imp {
    use super::super::atomic::{
        fence, AtomicU32,
        Ordering::{Relaxed, SeqCst},
    };

    const UNKNOWN: u32 = 0;
    const MEMBARRIER: u32 = 1;
    const FENCES: u32 = 2;

    // From linux/membarrier.h.
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    static MODE: AtomicU32 = AtomicU32::new(UNKNOWN);

    fn membarrier(cmd: libc::c_long) -> bool {
        // SAFETY: `membarrier` takes two integers (command, flags) and a CPU id that is
        // ignored without MEMBARRIER_CMD_FLAG_CPU; it reads and writes no user memory. Its
        // result is checked: any error (ENOSYS, EINVAL, EPERM) means "not available".
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            ) == 0
        }
    }

    pub(crate) fn prepare() {
        if MODE.load(Relaxed) == UNKNOWN {
            let mode = if membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
                MEMBARRIER
            } else {
                FENCES
            };
            MODE.store(mode, Relaxed);
        }
    }

    #[inline]
    pub(crate) fn light() {
        if MODE.load(Relaxed) == MEMBARRIER {
            // Only the compiler may not move the store and the load across each other; the
            // CPU's reordering is the heavy side's to undo.
            ::core::sync::atomic::compiler_fence(SeqCst);
        } else {
            fence(SeqCst);
        }
    }

    pub(crate) fn heavy() {
        // MUTANT asymmetric_heavy_no_barrier: the heavy half forgets the barrier, so neither
        // side of the pair orders its store before its load on the CPU.
        if cfg!(berth_mutant = "asymmetric_heavy_no_barrier") {
            ::core::sync::atomic::compiler_fence(SeqCst);
            return;
        }
        prepare();
        // Orders this thread's own accesses around the call as well (the kernel issues full
        // barriers on entry and exit; this states it in the language's terms).
        fence(SeqCst);
        if MODE.load(Relaxed) == MEMBARRIER {
            // Cannot fail once registered (its errors are an unknown command and a process
            // that did not register); light sides are relying on it, so a failure is a bug.
            assert!(
                membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED),
                "membarrier(PRIVATE_EXPEDITED) failed after the process registered for it"
            );
            fence(SeqCst);
        }
    }

    /// Whether the system call is in use (for tests and the benchmark report).
    pub(crate) fn is_asymmetric() -> bool {
        MODE.load(Relaxed) == MEMBARRIER
    }
}

#[cfg(not(all(target_os = "linux", not(any(loom, shuttle, miri)))))]
mod imp {
    use super::super::atomic::{fence, Ordering::SeqCst};

    pub(crate) fn prepare() {}

    #[inline]
    pub(crate) fn light() {
        fence(SeqCst);
    }

    pub(crate) fn heavy() {
        fence(SeqCst);
    }

    pub(crate) fn is_asymmetric() -> bool {
        false
    }
}

/// Registers the process for the heavy half's system call (once; later calls do nothing).
/// Until it has run, both halves are full fences.
pub(crate) fn prepare() {
    imp::prepare();
}

/// The frequent side's half: between its store and its load.
#[inline]
pub(crate) fn light() {
    imp::light();
}

/// The rare side's half: between its store and its load.
pub(crate) fn heavy() {
    imp::heavy();
}

/// Whether the halves are asymmetric on this machine (the system call registered).
pub(crate) fn is_asymmetric() -> bool {
    imp::is_asymmetric()
}

#[cfg(test)]
mod tests {
    /// The store-buffering litmus test the pair exists for: A stores `x` and loads `y` with the
    /// light half between, B stores `y` and loads `x` with the heavy half between. Both loads
    /// returning 0 is forbidden. Each round uses cache lines neither side has touched for a
    /// long while (so each store misses and waits in the store buffer while the load runs), and
    /// A starts after a short varying spin, to line the two up. With no barrier in the heavy
    /// half (the mutant `asymmetric_heavy_no_barrier`) this machine shows both zeros in
    /// roughly 3 to 25 of every 10,000 rounds. The test runs at least 100,000 rounds, and more
    /// for up to 2 s (at most 2,000,000).
    ///
    /// What it cannot show: that `membarrier` orders anything. A heavy half that is merely slow
    /// (microseconds between the store and the load) makes the outcome improbable too. The
    /// kernel's guarantee is the argument (module docs); this test catches a heavy half that
    /// has no barrier at all. (Under the models and Miri, and where the system call is
    /// unavailable, both halves are `SeqCst` fences.)
    #[test]
    #[cfg(not(any(loom, shuttle, miri)))]
    fn store_buffering_never_reads_both_zeros() {
        use crate::sync::atomic::{AtomicUsize, Ordering::*};
        use crate::sync::{thread, Arc};
        use crate::util::CachePadded;
        /// Lines per array (12.8 MB each): reused cyclically, by then long evicted.
        const LINES: usize = 100_000;
        const STOP: usize = usize::MAX;
        struct Litmus {
            xs: Vec<CachePadded<AtomicUsize>>,
            ys: Vec<CachePadded<AtomicUsize>>,
            /// Round `g` starts when `go == g` (`STOP`: no more rounds); the heavy side stores
            /// `done = g + 1` after it.
            go: AtomicUsize,
            done: AtomicUsize,
        }
        // Spins, yielding now and then: on a loaded machine the other side may be descheduled.
        fn wait_for(v: &AtomicUsize, want: impl Fn(usize) -> bool) -> usize {
            let mut spins = 0u32;
            loop {
                let seen = v.load(Acquire);
                if want(seen) {
                    return seen;
                }
                spins += 1;
                if spins % 128 == 0 {
                    thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
        }
        super::prepare();
        let fresh = || {
            (0..LINES)
                .map(|_| CachePadded::new(AtomicUsize::new(0)))
                .collect()
        };
        let l = Arc::new(Litmus {
            xs: fresh(),
            ys: fresh(),
            go: AtomicUsize::new(STOP - 1),
            done: AtomicUsize::new(0),
        });
        let heavy_side = {
            let l = Arc::clone(&l);
            thread::spawn(move || {
                let mut saw = Vec::new();
                for g in 0.. {
                    if wait_for(&l.go, |v| v == g || v == STOP) == STOP {
                        return saw;
                    }
                    let r = g % LINES;
                    l.ys[r].store(1, Relaxed);
                    super::heavy();
                    saw.push(l.xs[r].load(Relaxed) == 0);
                    l.done.store(g + 1, Release);
                }
                unreachable!()
            })
        };
        let started = std::time::Instant::now();
        let mut light_saw = Vec::new();
        let mut g = 0;
        let enough = |g: usize| g >= LINES && (g >= 20 * LINES || started.elapsed().as_secs() >= 2);
        while !enough(g) {
            let r = g % LINES;
            l.go.store(g, Release);
            for _ in 0..(g * 7919) % 8 {
                std::hint::spin_loop();
            }
            l.xs[r].store(1, Relaxed);
            super::light();
            let y = l.ys[r].load(Relaxed) == 0;
            wait_for(&l.done, |v| v == g + 1);
            // The heavy side's load came before its `done`: reset for the next lap.
            l.xs[r].store(0, Relaxed);
            l.ys[r].store(0, Relaxed);
            light_saw.push(y);
            g += 1;
        }
        l.go.store(STOP, Release);
        let heavy_saw = heavy_side.join().expect("the heavy side panicked");
        let both_zero = light_saw
            .iter()
            .zip(&heavy_saw)
            .filter(|&(a, b)| *a && *b)
            .count();
        assert_eq!(
            both_zero,
            0,
            "{both_zero} of {g} rounds read x = y = 0: the pair let a store and a load pass \
             each other (membarrier in use: {})",
            super::is_asymmetric()
        );
    }

    #[test]
    fn the_halves_run_and_the_mode_is_settled() {
        super::prepare();
        super::light();
        super::heavy();
        super::light();
        let first = super::is_asymmetric();
        super::prepare();
        assert_eq!(
            super::is_asymmetric(),
            first,
            "the mode never changes once settled"
        );
        #[cfg(all(target_os = "linux", not(any(loom, shuttle, miri))))]
        eprintln!("membarrier in use: {first}");
    }
}
