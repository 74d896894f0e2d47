//! A warmed-up channel makes no allocator call: a steady stream of messages between one sender
//! thread and one receiver thread, through `unbounded()` and through `bounded(64)`, with a
//! counting global allocator.
//!
//! What may allocate, and why warm-up takes care of it:
//!
//! - the parker of a thread that blocks (a thread-local, made on first use, with its TLS
//!   destructor registration) and the `VecDeque` of a wait list (on its first registration): the
//!   warm-up makes each thread park at least once (the other side holds back until `/proc`
//!   shows the blocked thread asleep, so this does not depend on timing);
//! - the unbounded flavour's blocks: it keeps a bounded spare list (64 KiB of blocks, 2 to 64
//!   blocks; see `channel/flavors/list.rs`), so a burst that runs further ahead than that
//!   allocates new blocks by design. A *steady* stream here is one where the sender stays at
//!   most `WINDOW` (< one 31-slot block) messages ahead of the receiver: then the sender always
//!   finds a spare block (the one the receiver retired last), and the warm-up has made it exist.
//!   (The window is deliberately far inside the slack, so the test does not depend on it.)
//!
//! Only the two worker threads are counted, and only between the moment each turns its own
//! switch on (after warm-up, with every buffer the test itself needs already allocated) and the
//! moment it turns it off; nothing in between prints, formats or grows a collection. The tests
//! of this file run one at a time (a lock), so one's allocations never reach another's count.

// Tests drive real std threads and atomics against the crate; core/clippy.toml forbids them in
// the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::channel::{self, Receiver, Sender};
use common::{join, with_watchdog, WATCHDOG_SECS};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{set_counting, ALLOCS, DEALLOCS};

/// One test of this file at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `normal`, or `miri` under Miri.
const fn scaled(normal: u64, miri: u64) -> u64 {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

const WARMUP: u64 = scaled(10_000, 100);
const MEASURED: u64 = scaled(100_000, 300);
/// How far the sender may run ahead of the receiver in a steady stream (fewer than the 31 slots
/// of an unbounded block; see the module docs).
const WINDOW: u64 = 16;

/// This thread's kernel id (Linux), for [`wait_until_parked`]; 0 elsewhere.
fn my_tid() -> i64 {
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

/// Returns once the thread `tid`, which announced that it is about to block in the channel, is
/// asleep in the kernel (state `S` in `/proc`): parked, since a parker is the only thing it can
/// sleep on then. So the warm-up does not depend on timing to make a thread park. Elsewhere, a
/// pause. Called only before the counting starts (it allocates).
fn wait_until_parked(tid: &AtomicI64) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        let path = format!("/proc/self/task/{}/stat", tid.load(SeqCst));
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
                "a thread blocked on the channel never went to sleep (state {state:?}): \
                 it spins or yields instead of parking"
            );
            thread::sleep(Duration::from_millis(1));
        }
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    {
        // The state of threads cannot be read here: pause, so that the other thread blocks (it
        // spins, yields, then parks: microseconds).
        let _ = tid;
        thread::sleep(Duration::from_millis(20));
    }
}

/// The state the two threads share; everything is allocated before the window.
struct Shared {
    sender_tid: AtomicI64,
    receiver_tid: AtomicI64,
    /// Messages the receiver has taken (the sender's window, and the warm-up's hand-shakes).
    received: AtomicU64,
    /// Set by the receiver just before it calls recv on what it knows is an empty channel.
    receiver_waiting: AtomicU64,
    /// Set by the sender just before it calls send on what it knows is a full channel.
    sender_waiting: AtomicU64,
    /// Both threads are warmed up and may start counting.
    go: AtomicBool,
    /// `NOBODY`, or the worker that panicked first.
    failed: AtomicUsize,
}

/// Spins (yielding) until `cond` holds; a worker whose partner panicked panics too, rather than
/// waiting forever for it.
fn spin_until(shared: &Shared, mut cond: impl FnMut() -> bool) {
    while !cond() {
        if shared.failed.load(SeqCst) != NOBODY {
            panic!("the other thread of the stream failed");
        }
        thread::yield_now();
    }
}

const NOBODY: usize = 0;
const SENDER: usize = 1;
const RECEIVER: usize = 2;

/// Records in `Shared::failed` that this worker panicked (the first one to do so).
struct FailGuard<'a> {
    shared: &'a Shared,
    who: usize,
}

impl Drop for FailGuard<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            let _ = self
                .shared
                .failed
                .compare_exchange(NOBODY, self.who, SeqCst, SeqCst);
        }
    }
}

/// The sender's stream: `first..first + n`, at most `WINDOW` ahead of the receiver when
/// `paced`.
fn stream_send(tx: &Sender<u64>, shared: &Shared, first: u64, n: u64, paced: bool) {
    for v in first..first + n {
        if paced {
            spin_until(shared, || v - shared.received.load(SeqCst) < WINDOW);
        }
        if tx.send(v).is_err() {
            panic!("send failed on a connected channel");
        }
    }
}

/// The receiver's stream: expects `first..first + n` in order.
fn stream_recv(rx: &Receiver<u64>, shared: &Shared, first: u64, n: u64) {
    for want in first..first + n {
        match rx.recv() {
            Ok(v) if v == want => {}
            // Panicking formats (allocates): only on a failure, which ends the test anyway.
            Ok(v) => panic!("received {v}, expected {want}"),
            Err(_) => panic!("recv failed on a connected channel"),
        }
        shared.received.store(want + 1, SeqCst);
    }
}

/// Warms up, then counts the allocator calls of a measured stream; returns (allocs, deallocs).
fn measure(make: fn() -> (Sender<u64>, Receiver<u64>), capacity: Option<u64>) -> (usize, usize) {
    let (tx, rx) = make();
    let shared = Arc::new(Shared {
        received: AtomicU64::new(0),
        sender_tid: AtomicI64::new(0),
        receiver_tid: AtomicI64::new(0),
        receiver_waiting: AtomicU64::new(0),
        sender_waiting: AtomicU64::new(0),
        go: AtomicBool::new(false),
        failed: AtomicUsize::new(NOBODY),
    });
    ALLOCS.store(0, SeqCst);
    DEALLOCS.store(0, SeqCst);
    let done_counting = Arc::new(AtomicUsize::new(0));
    let handshakes = 3;
    let sender = {
        let (shared, done_counting) = (Arc::clone(&shared), Arc::clone(&done_counting));
        thread::spawn(move || {
            let _guard = FailGuard {
                shared: &shared,
                who: SENDER,
            };
            shared.sender_tid.store(my_tid(), SeqCst);
            let mut next = 0;
            // Warm-up 1: the receiver blocks on an empty channel, several times.
            for round in 1..=handshakes {
                spin_until(&shared, || shared.receiver_waiting.load(SeqCst) == round);
                wait_until_parked(&shared.receiver_tid);
                tx.send(next).expect("connected");
                next += 1;
                spin_until(&shared, || shared.received.load(SeqCst) == next);
            }
            // Warm-up 2: the sender blocks on a full channel (bounded only), several times.
            if let Some(cap) = capacity {
                for round in 1..=handshakes {
                    for _ in 0..cap {
                        tx.send(next).expect("connected");
                        next += 1;
                    }
                    shared.sender_waiting.store(round, SeqCst);
                    tx.send(next).expect("connected"); // blocks until the receiver drains
                    next += 1;
                    spin_until(&shared, || shared.received.load(SeqCst) == next);
                }
            }
            // Warm-up 3: a steady stream, through every block transition there will be.
            // Bounded channels pace themselves (the sender blocks while full); the unbounded one
            // is paced by the window.
            let paced = capacity.is_none();
            stream_send(&tx, &shared, next, WARMUP, paced);
            next += WARMUP;
            spin_until(&shared, || shared.received.load(SeqCst) == next);
            // The window.
            spin_until(&shared, || shared.go.load(SeqCst));
            set_counting(true);
            stream_send(&tx, &shared, next, MEASURED, paced);
            set_counting(false);
            done_counting.fetch_add(1, SeqCst);
            tx
        })
    };
    let receiver = {
        let (shared, done_counting) = (Arc::clone(&shared), Arc::clone(&done_counting));
        thread::spawn(move || {
            let _guard = FailGuard {
                shared: &shared,
                who: RECEIVER,
            };
            shared.receiver_tid.store(my_tid(), SeqCst);
            let mut next = 0;
            for round in 1..=handshakes {
                shared.receiver_waiting.store(round, SeqCst);
                stream_recv(&rx, &shared, next, 1); // blocks until the paused sender sends
                next += 1;
            }
            if let Some(cap) = capacity {
                for round in 1..=handshakes {
                    spin_until(&shared, || shared.sender_waiting.load(SeqCst) == round);
                    wait_until_parked(&shared.sender_tid);
                    stream_recv(&rx, &shared, next, cap + 1);
                    next += cap + 1;
                }
            }
            stream_recv(&rx, &shared, next, WARMUP);
            next += WARMUP;
            spin_until(&shared, || shared.go.load(SeqCst));
            set_counting(true);
            stream_recv(&rx, &shared, next, MEASURED);
            set_counting(false);
            done_counting.fetch_add(1, SeqCst);
            rx
        })
    };
    // Both threads are past warm-up once the receiver has taken every warm-up message.
    let warmup_total = handshakes + capacity.map_or(0, |c| handshakes * (c + 1)) + WARMUP;
    // If a worker panics, its panic is what fails the test (the other one follows it).
    let until = |cond: &dyn Fn() -> bool| {
        while !cond() {
            match shared.failed.load(SeqCst) {
                NOBODY => thread::yield_now(),
                who => return Err(who),
            }
        }
        Ok(())
    };
    let ok = until(&|| shared.received.load(SeqCst) == warmup_total).and_then(|()| {
        ALLOCS.store(0, SeqCst);
        DEALLOCS.store(0, SeqCst);
        shared.go.store(true, SeqCst);
        until(&|| done_counting.load(SeqCst) == 2)
    });
    let counted = (ALLOCS.load(SeqCst), DEALLOCS.load(SeqCst));
    let (tx, rx) = match ok {
        Ok(()) => (join(sender), join(receiver)),
        Err(SENDER) => (join(sender), join(receiver)),
        Err(_) => {
            let rx = join(receiver);
            (join(sender), rx)
        }
    };
    assert_eq!(
        shared.received.load(SeqCst),
        warmup_total + MEASURED,
        "every message arrived"
    );
    drop((tx, rx));
    counted
}

/// The counter sees allocations made by a thread whose switch is on, and only those.
#[test]
fn the_counter_counts() {
    let _serial = serial();
    ALLOCS.store(0, SeqCst);
    let other = thread::spawn(|| {
        // Switch off on this thread: not counted.
        let v: Vec<u64> = (0..100).collect();
        v.len()
    });
    set_counting(true);
    let b = std::hint::black_box(Box::new(5u64));
    let mut v: Vec<u64> = std::hint::black_box(Vec::with_capacity(1));
    for i in 0..2 {
        v.push(i); // the second push grows it: a realloc (or an alloc)
    }
    set_counting(false);
    let counted = ALLOCS.load(SeqCst);
    assert_eq!(join(other), 100);
    drop((b, v));
    assert!(
        counted >= 3,
        "the counting allocator saw {counted} calls for a Box, a Vec and its growth"
    );
}

#[test]
fn unbounded_steady_stream_makes_no_allocator_call() {
    let _serial = serial();
    let (allocs, deallocs) = with_watchdog(
        WATCHDOG_SECS * 3,
        "unbounded steady stream (allocation count)",
        || measure(channel::unbounded, None),
    );
    assert_eq!(
        allocs, 0,
        "unbounded(): {allocs} allocator calls (alloc/realloc) and {deallocs} deallocs in a \
         warmed-up steady stream of {MEASURED} messages (sender at most {WINDOW} ahead)"
    );
}

#[test]
fn bounded_steady_stream_makes_no_allocator_call() {
    let _serial = serial();
    let (allocs, deallocs) = with_watchdog(
        WATCHDOG_SECS * 3,
        "bounded(64) steady stream (allocation count)",
        || measure(|| channel::bounded(64), Some(64)),
    );
    assert_eq!(
        allocs, 0,
        "bounded(64): {allocs} allocator calls (alloc/realloc) and {deallocs} deallocs in a \
         warmed-up steady stream of {MEASURED} messages"
    );
}
