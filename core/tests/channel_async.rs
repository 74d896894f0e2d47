//! The async operations of `berth::channel` (`Sender::send_async`, `Receiver::recv_async`) on the
//! three flavours (`bounded(n)`, `bounded(0)` rendezvous, `unbounded()`), alone and mixed with
//! the blocking operations.
//!
//! Two kinds of scenario:
//!
//! - **hand-polled**: futures polled one step at a time with wakers that count their wakes, or
//!   driven by a tiny `block_on` that parks its thread. The test chooses every interleaving, so
//!   the assertions are exact: who is woken, when a send completes, what a dropped future leaves
//!   behind. These run under Miri too.
//! - **tokio**: a 2-worker multi-thread runtime with several tasks and threads on each side, and
//!   cancellation by `tokio::time::timeout` and `tokio::select!`. They check exactly-once
//!   delivery, per-producer FIFO, drop accounting, and that nobody is left waiting with a message
//!   in the channel. Miri cannot run tokio's runtime in reasonable time: they are ignored there.
//!
//! Every scenario runs under a watchdog, so a lost wakeup fails in seconds instead of hanging.
//! No assertion depends on timing to pass: sleeps only give other threads the chance to reach a
//! waiting state.

// Tests drive real std threads, atomics, locks and sleeps against the crate; core/clippy.toml
// forbids those in the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::channel::{
    self, Receiver, RecvError, SendError, SendFuture, Sender, TryRecvError, TrySendError,
};
use common::{
    current_tid, join, wait_until_asleep, with_watchdog, DropCounter, DropCounts, WATCHDOG_SECS,
};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Which channel a scenario runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    /// `bounded(n)`; `Bounded(0)` is the rendezvous channel.
    Bounded(usize),
    Unbounded,
}

impl Flavor {
    fn make<T>(self) -> (Sender<T>, Receiver<T>) {
        match self {
            Flavor::Bounded(n) => channel::bounded(n),
            Flavor::Unbounded => channel::unbounded(),
        }
    }

    fn is_rendezvous(self) -> bool {
        self == Flavor::Bounded(0)
    }

    /// How many messages the channel buffers before a send waits (`None`: never waits).
    fn buffer(self) -> Option<usize> {
        match self {
            Flavor::Bounded(n) => Some(n),
            Flavor::Unbounded => None,
        }
    }
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flavor::Bounded(0) => f.write_str("rendezvous"),
            Flavor::Bounded(n) => write!(f, "bounded({n})"),
            Flavor::Unbounded => f.write_str("unbounded"),
        }
    }
}

/// `normal`, or `miri` under Miri (which runs threads about a thousand times slower).
const fn scaled(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// How long a test lets another thread get into a blocking call before acting. Only a chance to
/// exercise the "woken while asleep" path: no assertion depends on it.
const SETTLE: Duration = Duration::from_millis(20);

/// How long a test waits for something that correct code does in microseconds before it
/// declares a message stranded (below the watchdog, so that the specific message is what fails;
/// practically unlimited under Miri, like the watchdog).
const STUCK: Duration = Duration::from_secs(if cfg!(miri) { 24 * 3_600 } else { 12 });

/// Runs `f` under the shared watchdog.
fn watched<R: Send + 'static>(what: String, f: impl FnOnce() -> R + Send + 'static) -> R {
    with_watchdog(WATCHDOG_SECS, &what, f)
}

/// A waker that counts its wakes.
#[derive(Default)]
struct CountingWaker {
    wakes: AtomicUsize,
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, SeqCst);
    }
}

/// A counting waker and its counter.
fn counting_waker() -> (Waker, Arc<CountingWaker>) {
    let counter = Arc::new(CountingWaker::default());
    (Waker::from(Arc::clone(&counter)), counter)
}

impl CountingWaker {
    fn count(&self) -> usize {
        self.wakes.load(SeqCst)
    }
}

/// Polls `fut` once with `waker`.
fn poll<F: Future + ?Sized>(fut: Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    fut.poll(&mut Context::from_waker(waker))
}

/// Wakes a thread parked in [`block_on`].
struct ThreadWaker(thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs a future to completion on this thread, parking between polls (no runtime needed, so it
/// runs under Miri).
fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        // A spurious return only costs a poll.
        thread::park();
    }
}

/// Starts a send that completes at once unless the channel is a rendezvous one: then the future
/// is returned, pending (polled once with `waker`), to be finished with [`finish_send`] once a
/// receiver has taken the value.
fn start_send<'a, T>(
    f: Flavor,
    tx: &'a Sender<T>,
    value: T,
    waker: &Waker,
) -> Option<Pin<Box<SendFuture<'a, T>>>> {
    let mut send = Box::pin(tx.send_async(value));
    let first = poll(send.as_mut(), waker);
    if f.is_rendezvous() {
        assert!(
            first.is_pending(),
            "{f}: send_async completed before any receiver took the value"
        );
        Some(send)
    } else {
        assert!(
            matches!(first, Poll::Ready(Ok(()))),
            "{f}: send_async on a channel with room did not complete on its first poll"
        );
        None
    }
}

/// Finishes a send begun by [`start_send`]: it must be complete now.
fn finish_send<T>(f: Flavor, send: Option<Pin<Box<SendFuture<'_, T>>>>) {
    if let Some(mut send) = send {
        assert!(
            matches!(poll(send.as_mut(), Waker::noop()), Poll::Ready(Ok(()))),
            "{f}: a rendezvous send_async did not complete after a receiver took its value"
        );
    }
}

/// Fills a bounded channel to capacity through `send_async` (each send must complete on its
/// first poll); returns how many messages it sent (0 for rendezvous and unbounded).
fn fill<T>(f: Flavor, tx: &Sender<T>, mut make: impl FnMut(u64) -> T) -> u64 {
    let n = match f.buffer() {
        Some(n) => n as u64,
        None => return 0,
    };
    for i in 0..n {
        let mut send = Box::pin(tx.send_async(make(i)));
        assert!(
            matches!(poll(send.as_mut(), Waker::noop()), Poll::Ready(Ok(()))),
            "{f}: send_async {i} into a channel with room did not complete at once"
        );
    }
    n
}

/// A 2-worker multi-thread tokio runtime with timers.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("building a tokio runtime")
}

/// Awaits a tokio task, re-raising its panic with the original payload.
async fn join_task<T>(task: tokio::task::JoinHandle<T>) -> T {
    match task.await {
        Ok(out) => out,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// Yields to the tokio scheduler `n` times: a cancellation branch that fires after a few turns.
async fn yield_times(n: usize) {
    for _ in 0..n {
        tokio::task::yield_now().await;
    }
}

/// Waits (yielding, then sleeping briefly) until `cond` holds; panics with `stuck()` after
/// [`STUCK`].
fn wait_for(mut cond: impl FnMut() -> bool, stuck: impl FnOnce() -> String) {
    let start = Instant::now();
    let mut turns = 0u32;
    while !cond() {
        assert!(start.elapsed() < STUCK, "{}", stuck());
        turns += 1;
        if turns < 64 {
            thread::yield_now();
        } else {
            thread::sleep(Duration::from_micros(50));
        }
    }
}

/// A tiny deterministic generator (SplitMix64), so that a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Nothing, a few yields, or a short sleep: shifts the interleaving of a thread.
    fn pause(&mut self) {
        match self.below(4) {
            0 => {}
            1 => {
                for _ in 0..self.below(8) {
                    thread::yield_now();
                }
            }
            2 => thread::sleep(Duration::from_micros(self.below(200) as u64)),
            _ => std::hint::spin_loop(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 1. The sync suite's key semantics, through the async API (hand-polled; Miri too)
// ---------------------------------------------------------------------------------------------

/// Messages come out of `recv_async` in the order `send_async` sent them, then the receive
/// fails once the sender is gone.
fn fifo(f: Flavor) {
    let n = scaled(2_000, 40) as u64;
    watched(format!("{f}: send_async/recv_async FIFO"), move || {
        let (tx, rx) = f.make::<u64>();
        let producer = thread::spawn(move || {
            for i in 0..n {
                block_on(tx.send_async(i)).expect("the receiver is alive");
            }
        });
        for i in 0..n {
            assert_eq!(
                block_on(rx.recv_async()),
                Ok(i),
                "{f}: message {i} out of order"
            );
        }
        join(producer);
        assert_eq!(
            block_on(rx.recv_async()),
            Err(RecvError),
            "{f}: recv_async after the last sender left"
        );
    });
}

/// recv_async delivers everything sent before the last sender left (clones keep the channel
/// connected), then fails, and keeps failing.
fn recv_fails_after_senders_drop_and_drain(f: Flavor) {
    watched(
        format!("{f}: recv_async after the senders left"),
        move || {
            let (tx, rx) = f.make::<u64>();
            let tx2 = tx.clone();
            let send_all = move || {
                block_on(tx.send_async(1)).expect("connected");
                drop(tx);
                // One sender is left: still connected.
                block_on(tx2.send_async(2)).expect("a clone keeps the channel connected");
                block_on(tx2.send_async(3)).expect("a clone keeps the channel connected");
            };
            // A send that must wait for a receiver (rendezvous, or a buffer smaller than three)
            // needs its own thread.
            let producer = if f.buffer().is_some_and(|n| n < 3) {
                Some(thread::spawn(send_all))
            } else {
                send_all();
                assert!(rx.is_disconnected(), "{f}: both senders are gone");
                None
            };
            for i in 1..=3 {
                assert_eq!(
                    block_on(rx.recv_async()),
                    Ok(i),
                    "{f}: a message sent before the disconnect must be delivered"
                );
            }
            if let Some(p) = producer {
                join(p);
            }
            for _ in 0..2 {
                assert_eq!(
                    block_on(rx.recv_async()),
                    Err(RecvError),
                    "{f}: recv_async on an empty disconnected channel"
                );
            }
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        },
    );
}

/// A pending recv_async is woken by the last sender's drop (not by a clone's), and then fails.
fn pending_recv_woken_by_last_sender_drop(f: Flavor) {
    watched(
        format!("{f}: pending recv_async, last sender drops"),
        move || {
            let (tx, rx) = f.make::<u64>();
            let tx2 = tx.clone();
            let (waker, wakes) = counting_waker();
            let mut recv = Box::pin(rx.recv_async());
            assert!(poll(recv.as_mut(), &waker).is_pending(), "{f}: empty");
            drop(tx);
            assert!(
                poll(recv.as_mut(), &waker).is_pending(),
                "{f}: a clone of the sender is still alive"
            );
            drop(tx2);
            assert!(
                wakes.count() >= 1,
                "{f}: a pending recv_async was not woken by the last sender's drop"
            );
            assert_eq!(
                poll(recv.as_mut(), &waker),
                Poll::Ready(Err(RecvError)),
                "{f}: recv_async after the last sender's drop"
            );
        },
    );
}

/// After the last receiver is gone, send_async fails at once and hands its own value back; the
/// messages buffered then are dropped with the last receiver.
fn send_fails_after_receivers_drop(f: Flavor) {
    watched(
        format!("{f}: send_async after the receivers left"),
        move || {
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();
            let rx2 = rx.clone();
            drop(rx);
            let buffered = if f.is_rendezvous() {
                0
            } else {
                block_on(tx.send_async(counts.make(0)))
                    .expect("a clone keeps the channel connected");
                1
            };
            assert_eq!(counts.dropped(), 0);
            drop(rx2);
            assert!(tx.is_disconnected(), "{f}: both receivers are gone");
            assert_eq!(
                counts.dropped(),
                buffered,
                "{f}: the buffered message is dropped with the last receiver"
            );
            for id in [7, 8] {
                match block_on(tx.send_async(counts.make(id))) {
                    Err(SendError(v)) => {
                        assert_eq!(v.id(), id, "{f}: send_async handed back another value");
                        assert_eq!(counts.live(), 1, "{f}: the value comes back alive");
                    }
                    Ok(()) => panic!("{f}: send_async succeeded on a disconnected channel"),
                }
                assert_eq!(counts.live(), 0);
            }
            assert_eq!(counts.made(), counts.dropped());
        },
    );
}

/// A pending send_async (the channel full; for rendezvous, no receiver) is woken by the last
/// receiver's drop and fails with its own value; the buffered messages are dropped once.
fn pending_send_woken_by_last_receiver_drop(f: Flavor) {
    watched(
        format!("{f}: pending send_async, last receiver drops"),
        move || {
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();
            let buffered = fill(f, &tx, |i| counts.make(i));
            let (waker, wakes) = counting_waker();
            let mut send = Box::pin(tx.send_async(counts.make(100)));
            let first = poll(send.as_mut(), &waker);
            if f.buffer().is_none() {
                assert!(
                    matches!(first, Poll::Ready(Ok(()))),
                    "{f}: an unbounded send_async never waits"
                );
                return;
            }
            assert!(first.is_pending(), "{f}: no room, no receiver: must wait");
            drop(rx);
            assert!(
                wakes.count() >= 1,
                "{f}: a pending send_async was not woken by the last receiver's drop"
            );
            assert_eq!(
            counts.dropped(),
            buffered as usize,
            "{f}: the buffered messages are dropped with the last receiver, the pending value is not"
        );
            match poll(send.as_mut(), &waker) {
                Poll::Ready(Err(SendError(v))) => {
                    assert_eq!(v.id(), 100, "{f}: another value back")
                }
                Poll::Ready(Ok(())) => panic!("{f}: a pending send succeeded after the disconnect"),
                Poll::Pending => panic!("{f}: a pending send stays pending after the disconnect"),
            }
            drop(send);
            assert_eq!(counts.live(), 0, "{f}: every value dropped once");
            assert_eq!(counts.made(), counts.dropped());
        },
    );
}

/// `close()` from either side wakes every pending recv_async (which then fails) and every
/// pending send_async (which then fails with its own value); buffered messages stay receivable.
fn close_wakes_pending_futures(f: Flavor) {
    watched(format!("{f}: close() wakes pending futures"), move || {
        for by_receiver in [false, true] {
            let side = if by_receiver { "receiver" } else { "sender" };
            // Receivers waiting on an empty channel.
            let (tx, rx) = f.make::<u64>();
            let waiting: Vec<_> = (0..3).map(|_| counting_waker()).collect();
            let mut recvs: Vec<_> = (0..3).map(|_| Box::pin(rx.recv_async())).collect();
            for (r, (w, _)) in recvs.iter_mut().zip(&waiting) {
                assert!(poll(r.as_mut(), w).is_pending(), "{f}: empty");
            }
            assert!(if by_receiver { rx.close() } else { tx.close() });
            for (i, (r, (w, c))) in recvs.iter_mut().zip(&waiting).enumerate() {
                assert!(
                    c.count() >= 1,
                    "{f}: pending recv_async {i} not woken by close() from the {side}"
                );
                assert_eq!(poll(r.as_mut(), w), Poll::Ready(Err(RecvError)));
            }
            drop(recvs);

            // Senders waiting on a full channel (rendezvous: with no receiver).
            if f.buffer().is_none() {
                continue;
            }
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();
            let buffered = fill(f, &tx, |i| counts.make(i));
            let waiting: Vec<_> = (0..3).map(|_| counting_waker()).collect();
            let mut sends: Vec<_> = (0..3)
                .map(|i| Box::pin(tx.send_async(counts.make(100 + i))))
                .collect();
            for (s, (w, _)) in sends.iter_mut().zip(&waiting) {
                assert!(poll(s.as_mut(), w).is_pending(), "{f}: full");
            }
            assert!(if by_receiver { rx.close() } else { tx.close() });
            for (i, (s, (w, c))) in sends.iter_mut().zip(&waiting).enumerate() {
                assert!(
                    c.count() >= 1,
                    "{f}: pending send_async {i} not woken by close() from the {side}"
                );
                match poll(s.as_mut(), w) {
                    Poll::Ready(Err(SendError(v))) => {
                        assert_eq!(v.id(), 100 + i as u64, "{f}: another value back")
                    }
                    other => panic!(
                        "{f}: pending send_async {i} after close(): {:?}",
                        other.map(|r| r.map_err(|e| e.into_inner().id()))
                    ),
                }
            }
            drop(sends);
            // The buffered messages are still there, in order; nothing of the pending sends.
            for i in 0..buffered {
                match block_on(rx.recv_async()) {
                    Ok(v) => assert_eq!(v.id(), i, "{f}: buffered message {i}"),
                    Err(RecvError) => panic!("{f}: buffered message {i} lost by close()"),
                }
            }
            assert_eq!(block_on(rx.recv_async()).map(|v| v.id()), Err(RecvError));
            assert_eq!(counts.live(), 0);
        }
    });
}

/// bounded(1): a send_async waits while the channel is full (re-polling does not push), is
/// woken once when a receive frees the slot, and then completes.
fn bounded1_send_async_waits_while_full() {
    watched("bounded(1): send_async waits while full".into(), || {
        let (tx, rx) = channel::bounded::<u64>(1);
        let (waker, wakes) = counting_waker();
        assert_eq!(
            poll(Box::pin(tx.send_async(1)).as_mut(), &waker),
            Poll::Ready(Ok(()))
        );
        let mut second = Box::pin(tx.send_async(2));
        for _ in 0..3 {
            assert!(poll(second.as_mut(), &waker).is_pending(), "full");
        }
        assert_eq!(rx.len(), 1, "the waiting value is not in the channel");
        assert!(tx.is_full());
        assert_eq!(wakes.count(), 0, "woken while still full");
        assert_eq!(rx.try_recv(), Ok(1));
        assert_eq!(
            wakes.count(),
            1,
            "the waiting send_async was not woken (exactly once) when the slot freed"
        );
        assert_eq!(poll(second.as_mut(), &waker), Poll::Ready(Ok(())));
        drop(second);
        assert_eq!(block_on(rx.recv_async()), Ok(2));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    });
}

/// bounded(1) on tokio: a task's send_async loop stops at the second message until a receive
/// frees the slot, message after message.
fn bounded1_task_waits_while_full() {
    let n = 6u64;
    watched("bounded(1): a task waits while full".into(), move || {
        let rt = runtime();
        let (tx, rx) = channel::bounded::<u64>(1);
        let progress = Arc::new(AtomicUsize::new(0));
        let task = {
            let progress = Arc::clone(&progress);
            rt.spawn(async move {
                for i in 0..n {
                    tx.send_async(i).await.expect("the receiver is alive");
                    progress.fetch_add(1, SeqCst);
                }
            })
        };
        for i in 0..n {
            let done = i as usize + 1;
            wait_for(
                || progress.load(SeqCst) == done,
                || format!("bounded(1): send {i} never completed"),
            );
            thread::sleep(SETTLE);
            if i + 1 < n {
                assert_eq!(
                    progress.load(SeqCst),
                    done,
                    "bounded(1): send_async {} completed while the channel was full",
                    i + 1
                );
            }
            assert_eq!(rx.len(), 1);
            assert_eq!(rx.recv(), Ok(i));
        }
        rt.block_on(join_task(task));
        assert_eq!(block_on(rx.recv_async()), Err(RecvError));
    });
}

// ---------------------------------------------------------------------------------------------
// 2. Cancellation and wakers (hand-polled; Miri too)
// ---------------------------------------------------------------------------------------------

/// Dropping a pending recv_async consumes nothing, whether it was never woken or was woken by
/// the send and dropped before it could take the message: a later receive gets the message.
fn dropped_pending_recv_consumes_nothing(f: Flavor) {
    watched(
        format!("{f}: a dropped recv_async consumes nothing"),
        move || {
            let (tx, rx) = f.make::<u64>();

            // Never woken.
            let (waker, wakes) = counting_waker();
            let mut recv = Box::pin(rx.recv_async());
            assert!(poll(recv.as_mut(), &waker).is_pending());
            drop(recv);
            let send = start_send(f, &tx, 5, Waker::noop());
            assert_eq!(wakes.count(), 0, "{f}: a dropped recv_async was woken");
            assert_eq!(
                rx.try_recv(),
                Ok(5),
                "{f}: the message went to a dropped future"
            );
            finish_send(f, send);

            // Woken by the send, dropped before it was polled again.
            let (waker, wakes) = counting_waker();
            let mut recv = Box::pin(rx.recv_async());
            assert!(poll(recv.as_mut(), &waker).is_pending());
            let send = start_send(f, &tx, 6, Waker::noop());
            assert_eq!(
                wakes.count(),
                1,
                "{f}: the waiting recv_async was not woken"
            );
            drop(recv);
            assert_eq!(
                block_on(rx.recv_async()),
                Ok(6),
                "{f}: a woken, then dropped, recv_async took the message"
            );
            finish_send(f, send);
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        },
    );
}

/// The forwarded wakeup: of two pending recv_async, the send wakes the first only; dropping it
/// unpolled passes the wakeup to the second, which gets the message.
fn chosen_then_dropped_recv_forwards_to_a_task(f: Flavor) {
    watched(
        format!("{f}: a dropped recv_async forwards its wakeup"),
        move || {
            let (tx, rx) = f.make::<u64>();
            let rx2 = rx.clone();
            let (wa, ca) = counting_waker();
            let (wb, cb) = counting_waker();
            let mut first = Box::pin(rx.recv_async());
            let mut second = Box::pin(rx2.recv_async());
            assert!(poll(first.as_mut(), &wa).is_pending());
            assert!(poll(second.as_mut(), &wb).is_pending());
            let send = start_send(f, &tx, 9, Waker::noop());
            assert_eq!(
                (ca.count(), cb.count()),
                (1, 0),
                "{f}: one message wakes the longest-waiting future, and only it"
            );
            drop(first);
            assert_eq!(
                cb.count(),
                1,
                "{f}: a recv_async chosen for a wakeup and dropped did not pass it on"
            );
            assert_eq!(poll(second.as_mut(), &wb), Poll::Ready(Ok(9)));
            finish_send(f, send);
        },
    );
}

/// The forwarded wakeup to a thread: a task is first in line, a thread blocked in `recv` second;
/// the task is chosen and dropped unpolled; the thread must wake and get the message.
fn chosen_then_dropped_recv_forwards_to_a_thread(f: Flavor) {
    watched(
        format!("{f}: a dropped recv_async forwards its wakeup to a thread"),
        move || {
            let (tx, rx) = f.make::<u64>();
            let (waker, wakes) = counting_waker();
            let mut task = Box::pin(rx.recv_async());
            assert!(poll(task.as_mut(), &waker).is_pending());
            let (tid_tx, tid_rx) = mpsc::channel();
            let thread_rx = rx.clone();
            let blocked = thread::spawn(move || {
                tid_tx.send(current_tid()).expect("the test waits for it");
                thread_rx.recv()
            });
            let tid = tid_rx.recv().expect("the thread starts");
            wait_until_asleep(tid, &format!("{f}: a receiver blocked in recv()"));
            let send = start_send(f, &tx, 11, Waker::noop());
            assert_eq!(wakes.count(), 1, "{f}: the first in line was not woken");
            drop(task);
            assert_eq!(
                join(blocked),
                Ok(11),
                "{f}: the thread behind a dropped recv_async got no message"
            );
            finish_send(f, send);
        },
    );
}

/// A recv_async polled with waker A, then with waker B, is woken through B only.
fn recv_waker_replacement(f: Flavor) {
    watched(
        format!("{f}: recv_async re-polled with a new waker"),
        move || {
            let (tx, rx) = f.make::<u64>();
            let (wa, ca) = counting_waker();
            let (wb, cb) = counting_waker();
            let mut recv = Box::pin(rx.recv_async());
            assert!(poll(recv.as_mut(), &wa).is_pending());
            assert!(poll(recv.as_mut(), &wb).is_pending());
            let send = start_send(f, &tx, 3, Waker::noop());
            assert_eq!(ca.count(), 0, "{f}: the send woke the replaced waker");
            assert_eq!(cb.count(), 1, "{f}: the send did not wake the latest waker");
            assert_eq!(poll(recv.as_mut(), &wb), Poll::Ready(Ok(3)));
            finish_send(f, send);

            // Back and forth (A, B, A), and the same waker twice: one registration, the last waker.
            let mut recv = Box::pin(rx.recv_async());
            for w in [&wa, &wb, &wa, &wa] {
                assert!(poll(recv.as_mut(), w).is_pending());
            }
            let send = start_send(f, &tx, 4, Waker::noop());
            assert_eq!(
                (ca.count(), cb.count()),
                (1, 1),
                "{f}: after polls with A, B, A, A only A is woken, once"
            );
            assert_eq!(poll(recv.as_mut(), &wa), Poll::Ready(Ok(4)));
            finish_send(f, send);
        },
    );
}

/// A send_async polled with waker A, then B, is woken through B only when room appears (for
/// rendezvous: when a receiver takes its value).
fn send_waker_replacement(f: Flavor) {
    if f.buffer().is_none() {
        return; // an unbounded send never waits
    }
    watched(
        format!("{f}: send_async re-polled with a new waker"),
        move || {
            let (tx, rx) = f.make::<u64>();
            let buffered = fill(f, &tx, |i| i);
            let (wa, ca) = counting_waker();
            let (wb, cb) = counting_waker();
            let mut send = Box::pin(tx.send_async(100));
            assert!(poll(send.as_mut(), &wa).is_pending());
            assert!(poll(send.as_mut(), &wb).is_pending());
            assert_eq!(rx.try_recv(), Ok(if buffered > 0 { 0 } else { 100 }));
            assert_eq!(ca.count(), 0, "{f}: the receive woke the replaced waker");
            assert_eq!(
                cb.count(),
                1,
                "{f}: the receive did not wake the latest waker"
            );
            assert_eq!(poll(send.as_mut(), &wb), Poll::Ready(Ok(())));
            drop(send);
            let rest: Vec<u64> = rx.try_iter().collect();
            let expected: Vec<u64> = if buffered > 0 {
                (1..buffered).chain([100]).collect()
            } else {
                Vec::new()
            };
            assert_eq!(rest, expected, "{f}: what is left in the channel");
        },
    );
}

/// Dropping a pending send_async drops its value and leaves nothing of it in the channel; a
/// send future dropped before its first poll sends nothing. For rendezvous, with an async
/// receiver woken by the dropped send: it finds nothing, and a later send reaches it.
fn dropped_pending_send_drops_value(f: Flavor) {
    watched(
        format!("{f}: a dropped send_async drops its value"),
        move || {
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();

            // Never polled.
            drop(tx.send_async(counts.make(50)));
            assert_eq!(
                counts.dropped(),
                1,
                "{f}: an unpolled send_async kept its value"
            );
            assert!(rx.try_recv().is_err(), "{f}: an unpolled send_async sent");

            if f.buffer().is_some() {
                let buffered = fill(f, &tx, |i| counts.make(i));
                let mut send = Box::pin(tx.send_async(counts.make(100)));
                assert!(poll(send.as_mut(), Waker::noop()).is_pending(), "{f}: full");
                drop(send);
                assert_eq!(
                    counts.dropped(),
                    2,
                    "{f}: a dropped pending send_async did not drop its value (once)"
                );
                for i in 0..buffered {
                    assert_eq!(rx.try_recv().map(|v| v.id()), Ok(i));
                }
                assert!(
                    matches!(rx.try_recv(), Err(TryRecvError::Empty)),
                    "{f}: the dropped send's value is in the channel"
                );
            }

            if f.is_rendezvous() {
                let (wr, cr) = counting_waker();
                let mut recv = Box::pin(rx.recv_async());
                assert!(poll(recv.as_mut(), &wr).is_pending());
                let mut send = Box::pin(tx.send_async(counts.make(200)));
                assert!(
                    poll(send.as_mut(), Waker::noop()).is_pending(),
                    "{f}: an async receiver never holds a value: the send waits for it to take it"
                );
                assert_eq!(
                    cr.count(),
                    1,
                    "{f}: the send did not wake the async receiver"
                );
                let dropped = counts.dropped();
                drop(send);
                assert_eq!(
                    counts.dropped(),
                    dropped + 1,
                    "{f}: the withdrawn value is dropped"
                );
                assert!(
                    poll(recv.as_mut(), &wr).is_pending(),
                    "{f}: the receiver got a value whose send was dropped"
                );
                let send = start_send(f, &tx, counts.make(201), Waker::noop());
                assert_eq!(
                    cr.count(),
                    2,
                    "{f}: the re-registered receiver was not woken"
                );
                match poll(recv.as_mut(), &wr) {
                    Poll::Ready(Ok(v)) => assert_eq!(v.id(), 201),
                    other => panic!(
                        "{f}: recv_async after the second send: {:?}",
                        other.map(|r| r.map(|v| v.id()))
                    ),
                }
                finish_send(f, send);
            }
            assert_eq!(counts.live(), 0, "{f}: every value dropped once");
        },
    );
}

/// Of two pending send_async on a full bounded channel, a receive wakes the first only;
/// dropping it unpolled passes the wakeup to the second, which completes. The dropped value is
/// dropped, the other is delivered.
fn chosen_then_dropped_send_forwards(f: Flavor) {
    watched(
        format!("{f}: a dropped send_async forwards its wakeup"),
        move || {
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();
            let buffered = fill(f, &tx, |i| counts.make(i));
            assert!(buffered > 0, "a buffered channel");
            let (wa, ca) = counting_waker();
            let (wb, cb) = counting_waker();
            let mut first = Box::pin(tx.send_async(counts.make(100)));
            let mut second = Box::pin(tx.send_async(counts.make(101)));
            assert!(poll(first.as_mut(), &wa).is_pending());
            assert!(poll(second.as_mut(), &wb).is_pending());
            assert_eq!(rx.try_recv().map(|v| v.id()), Ok(0));
            assert_eq!(
                (ca.count(), cb.count()),
                (1, 0),
                "{f}: one free slot wakes the longest-waiting send, and only it"
            );
            drop(first);
            assert_eq!(
                cb.count(),
                1,
                "{f}: a send_async chosen for a wakeup and dropped did not pass it on"
            );
            assert!(matches!(poll(second.as_mut(), &wb), Poll::Ready(Ok(()))));
            drop(second);
            let rest: Vec<u64> = rx.try_iter().map(|v| v.id()).collect();
            let expected: Vec<u64> = (1..buffered).chain([101]).collect();
            assert_eq!(rest, expected, "{f}: what is left in the channel");
            assert_eq!(counts.live(), 0);
        },
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Rendezvous hand-offs (hand-polled and threads; Miri too)
// ---------------------------------------------------------------------------------------------

/// An async send to a rendezvous channel stays pending (however often it is polled) until a
/// receiver takes the value, and is woken then; with a receiver thread already blocked, it
/// completes on its first poll, the value already in the thread's hands.
fn rendezvous_send_async_waits_for_a_receiver() {
    watched("rendezvous: send_async waits for a receiver".into(), || {
        let (tx, rx) = channel::bounded::<u64>(0);
        let (waker, wakes) = counting_waker();
        let mut send = Box::pin(tx.send_async(1));
        for _ in 0..4 {
            assert!(
                poll(send.as_mut(), &waker).is_pending(),
                "rendezvous: send_async completed with no receiver"
            );
        }
        assert_eq!(wakes.count(), 0);
        assert_eq!(rx.try_recv(), Ok(1), "a receiver takes the waiting value");
        assert_eq!(
            wakes.count(),
            1,
            "the send was not woken when its value was taken"
        );
        assert_eq!(poll(send.as_mut(), &waker), Poll::Ready(Ok(())));
        drop(send);

        // A receiver thread already asleep in recv().
        let (tid_tx, tid_rx) = mpsc::channel();
        let thread_rx = rx.clone();
        let receiver = thread::spawn(move || {
            tid_tx.send(current_tid()).expect("the test waits for it");
            thread_rx.recv()
        });
        wait_until_asleep(
            tid_rx.recv().expect("the thread starts"),
            "rendezvous: a receiver blocked in recv()",
        );
        let mut send = Box::pin(tx.send_async(2));
        assert_eq!(
            poll(send.as_mut(), &waker),
            Poll::Ready(Ok(())),
            "rendezvous: send_async to a blocked receiver thread completes at once"
        );
        assert_eq!(join(receiver), Ok(2));
    });
}

/// A rendezvous send finding only an async receiver does not complete: the receiver is woken,
/// the send waits until the task takes the value. `try_send` with only an async receiver is
/// `Full` and wakes nobody. The reverse order (send first) completes on the receiver's first
/// poll.
fn rendezvous_send_async_with_an_async_receiver() {
    watched("rendezvous: send_async and recv_async".into(), || {
        let (tx, rx) = channel::bounded::<u64>(0);
        let (wr, cr) = counting_waker();
        let (ws, cs) = counting_waker();

        let mut recv = Box::pin(rx.recv_async());
        assert!(poll(recv.as_mut(), &wr).is_pending());
        assert_eq!(
            tx.try_send(1),
            Err(TrySendError::Full(1)),
            "try_send with only an async receiver waiting"
        );
        assert_eq!(cr.count(), 0, "a failed try_send woke the async receiver");
        assert!(poll(recv.as_mut(), &wr).is_pending(), "try_send delivered");

        let mut send = Box::pin(tx.send_async(2));
        assert!(
            poll(send.as_mut(), &ws).is_pending(),
            "send_async completed before the async receiver took the value"
        );
        assert_eq!(cr.count(), 1, "the send did not wake the async receiver");
        assert!(
            poll(send.as_mut(), &ws).is_pending(),
            "send_async completed before the async receiver took the value"
        );
        assert_eq!(cs.count(), 0);
        assert_eq!(poll(recv.as_mut(), &wr), Poll::Ready(Ok(2)));
        assert_eq!(
            cs.count(),
            1,
            "the send was not woken when its value was taken"
        );
        assert_eq!(poll(send.as_mut(), &ws), Poll::Ready(Ok(())));
        drop((recv, send));

        // Send first, then receive.
        let mut send = Box::pin(tx.send_async(3));
        assert!(poll(send.as_mut(), &ws).is_pending());
        let mut recv = Box::pin(rx.recv_async());
        assert_eq!(
            poll(recv.as_mut(), &wr),
            Poll::Ready(Ok(3)),
            "a waiting send is taken on the first poll"
        );
        assert_eq!(cs.count(), 2);
        assert_eq!(poll(send.as_mut(), &ws), Poll::Ready(Ok(())));
    });
}

/// A blocking send to a rendezvous channel whose only receiver is a task returns only after the
/// task took the value (the task's first poll after the wake); and a blocking recv against an
/// async send completes the exchange.
fn rendezvous_sync_send_with_an_async_receiver() {
    watched("rendezvous: send() with recv_async".into(), || {
        let (tx, rx) = channel::bounded::<u64>(0);
        let (wr, cr) = counting_waker();
        let mut recv = Box::pin(rx.recv_async());
        assert!(poll(recv.as_mut(), &wr).is_pending());
        let returned = Arc::new(AtomicBool::new(false));
        let sender = {
            let (tx, returned) = (tx.clone(), Arc::clone(&returned));
            thread::spawn(move || {
                let r = tx.send(7);
                returned.store(true, SeqCst);
                r
            })
        };
        wait_for(
            || cr.count() >= 1,
            || "rendezvous: a blocking send never woke the async receiver".into(),
        );
        thread::sleep(SETTLE);
        assert!(
            !returned.load(SeqCst),
            "rendezvous: send() returned before the async receiver took the value"
        );
        assert_eq!(poll(recv.as_mut(), &wr), Poll::Ready(Ok(7)));
        assert_eq!(join(sender), Ok(()));
        assert!(returned.load(SeqCst));

        // The reverse: an async send, a receiver thread.
        let (ws, cs) = counting_waker();
        let mut send = Box::pin(tx.send_async(8));
        assert!(poll(send.as_mut(), &ws).is_pending());
        let receiver = {
            let rx = rx.clone();
            thread::spawn(move || rx.recv())
        };
        assert_eq!(join(receiver), Ok(8));
        assert!(
            cs.count() >= 1,
            "the send was not woken when its value was taken"
        );
        assert_eq!(poll(send.as_mut(), &ws), Poll::Ready(Ok(())));
    });
}

/// A rendezvous send_async whose value a receiver took is complete even if its future is dropped
/// before it is polled again: the value is delivered exactly once (not dropped by the future).
/// A pending one dropped after the channel closed drops its value exactly once.
fn rendezvous_dropped_send_after_take_delivered_once() {
    watched(
        "rendezvous: send_async dropped after the take".into(),
        || {
            let counts = DropCounts::new();
            let (tx, rx) = channel::bounded::<DropCounter>(0);

            // Taken by try_recv.
            let mut send = Box::pin(tx.send_async(counts.make(1)));
            assert!(poll(send.as_mut(), Waker::noop()).is_pending());
            let got = rx.try_recv().expect("a waiting sender");
            assert_eq!(got.id(), 1);
            drop(send);
            assert_eq!(
                counts.dropped(),
                0,
                "the dropped future dropped a delivered value"
            );
            drop(got);
            assert_eq!(counts.live(), 0);

            // Taken by a task.
            let mut recv = Box::pin(rx.recv_async());
            assert!(poll(recv.as_mut(), Waker::noop()).is_pending());
            let mut send = Box::pin(tx.send_async(counts.make(2)));
            assert!(poll(send.as_mut(), Waker::noop()).is_pending());
            let got = match poll(recv.as_mut(), Waker::noop()) {
                Poll::Ready(Ok(v)) => v,
                other => panic!(
                    "recv_async with a waiting sender: {:?}",
                    other.map(|r| r.map(|v| v.id()))
                ),
            };
            drop((send, recv));
            assert_eq!(got.id(), 2);
            assert_eq!(
                counts.dropped(),
                1,
                "the dropped future dropped a delivered value"
            );
            drop(got);

            // Taken by a thread.
            let mut send = Box::pin(tx.send_async(counts.make(3)));
            assert!(poll(send.as_mut(), Waker::noop()).is_pending());
            let receiver = {
                let rx = rx.clone();
                thread::spawn(move || rx.recv().map(|v| v.id()))
            };
            let taken = join(receiver);
            drop(send);
            assert_eq!(taken, Ok(3));
            assert_eq!(
                counts.live(),
                0,
                "delivered and dropped once by its receiver"
            );
            assert_eq!(counts.dropped(), 3);

            // Pending when the channel closes, then dropped unpolled.
            let (ws, cs) = counting_waker();
            let mut send = Box::pin(tx.send_async(counts.make(4)));
            assert!(poll(send.as_mut(), &ws).is_pending());
            drop(rx);
            assert!(
                cs.count() >= 1,
                "the last receiver's drop did not wake the send"
            );
            assert_eq!(
                counts.dropped(),
                3,
                "the close dropped the pending send's value"
            );
            drop(send);
            assert_eq!(
                counts.dropped(),
                4,
                "the value of a send dropped after the close"
            );
            assert_eq!(counts.live(), 0);
        },
    );
}

// ---------------------------------------------------------------------------------------------
// 4. Drop accounting (hand-polled; Miri too)
// ---------------------------------------------------------------------------------------------

/// Messages left in a channel when every handle is gone are dropped exactly once, whichever
/// side goes first (the last receiver's drop drops them at once).
fn leftover_messages_dropped_once(f: Flavor) {
    if f.is_rendezvous() {
        return; // holds nothing: see rendezvous_dropped_send_after_take_delivered_once
    }
    watched(format!("{f}: leftover messages dropped once"), move || {
        // Enough to cross several blocks of the unbounded list (31 slots each).
        let n = f.buffer().unwrap_or(100) as u64;
        for receivers_first in [false, true] {
            let counts = DropCounts::new();
            let (tx, rx) = f.make::<DropCounter>();
            let (tx2, rx2) = (tx.clone(), rx.clone());
            for i in 0..n {
                block_on(tx.send_async(counts.make(i))).expect("room");
            }
            let taken = n / 3;
            for i in 0..taken {
                let v = block_on(rx2.recv_async()).expect("a message");
                assert_eq!(v.id(), i);
            }
            assert_eq!(counts.dropped() as u64, taken);
            if receivers_first {
                drop((rx, rx2));
                assert_eq!(
                    counts.live(),
                    0,
                    "{f}: the last receiver's drop drops the buffered messages, once"
                );
                assert!(block_on(tx.send_async(counts.make(999))).is_err());
                drop((tx, tx2));
            } else {
                drop((tx, tx2));
                assert_eq!(
                    counts.live() as u64,
                    n - taken,
                    "{f}: messages stay receivable after the senders left"
                );
                let v = block_on(rx.recv_async()).expect("still there");
                assert_eq!(v.id(), taken);
                drop(v);
                drop((rx, rx2));
            }
            assert_eq!(counts.live(), 0, "{f}: every message dropped once");
            assert_eq!(counts.made(), counts.dropped());
        }
    });
}

// ---------------------------------------------------------------------------------------------
// 5. Threads and tasks together (tokio)
// ---------------------------------------------------------------------------------------------

/// How many producers and consumers of each kind.
#[derive(Clone, Copy, Debug)]
struct Mix {
    sync_senders: usize,
    async_senders: usize,
    sync_receivers: usize,
    async_receivers: usize,
}

/// Checks that every message (producer in the high half, sequence number in the low half) was
/// delivered exactly once, and that each receiver saw each producer's messages in order.
fn check_exactly_once_fifo(f: Flavor, received: &[Vec<u64>], producers: usize, per: u64) {
    let mut seen = vec![vec![false; per as usize]; producers];
    for (r, got) in received.iter().enumerate() {
        let mut last: Vec<Option<u64>> = vec![None; producers];
        for &m in got {
            let (p, s) = ((m >> 32) as usize, m & 0xffff_ffff);
            assert!(
                p < producers && s < per,
                "{f}: receiver {r} got {m:#x}, never sent"
            );
            assert!(
                !seen[p][s as usize],
                "{f}: message {s} of producer {p} delivered twice"
            );
            seen[p][s as usize] = true;
            if let Some(prev) = last[p] {
                assert!(
                    s > prev,
                    "{f}: receiver {r} got producer {p}'s message {s} after its message {prev}"
                );
            }
            last[p] = Some(s);
        }
    }
    let total: usize = received.iter().map(Vec::len).sum();
    assert_eq!(
        total as u64,
        producers as u64 * per,
        "{f}: messages lost (the first missing: {:?})",
        seen.iter()
            .enumerate()
            .find_map(|(p, s)| s.iter().position(|&x| !x).map(|s| (p, s)))
    );
}

/// Sync and async producers and consumers on one channel: every message delivered exactly
/// once, in each producer's order, and every side ends when the other is gone.
fn mixed(f: Flavor, mix: Mix) {
    let per = scaled(6_000, 20) as u64;
    watched(format!("{f}: mixed {mix:?}"), move || {
        let rt = runtime();
        let (tx, rx) = f.make::<u64>();
        let producers = mix.sync_senders + mix.async_senders;
        let mut sync_producers = Vec::new();
        let mut async_producers = Vec::new();
        for p in 0..producers {
            let tx = tx.clone();
            let base = (p as u64) << 32;
            if p < mix.sync_senders {
                sync_producers.push(thread::spawn(move || {
                    for s in 0..per {
                        tx.send(base | s).expect("receivers are alive");
                    }
                }));
            } else {
                async_producers.push(rt.spawn(async move {
                    for s in 0..per {
                        tx.send_async(base | s).await.expect("receivers are alive");
                        if s % 97 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                }));
            }
        }
        drop(tx);
        let sync_consumers: Vec<_> = (0..mix.sync_receivers)
            .map(|_| {
                let rx = rx.clone();
                thread::spawn(move || rx.iter().collect::<Vec<u64>>())
            })
            .collect();
        let async_consumers: Vec<_> = (0..mix.async_receivers)
            .map(|_| {
                let rx = rx.clone();
                rt.spawn(async move {
                    let mut got = Vec::new();
                    while let Ok(m) = rx.recv_async().await {
                        got.push(m);
                    }
                    got
                })
            })
            .collect();
        drop(rx);
        for p in sync_producers {
            join(p);
        }
        let mut received: Vec<Vec<u64>> = rt.block_on(async {
            for p in async_producers {
                join_task(p).await;
            }
            let mut received = Vec::new();
            for c in async_consumers {
                received.push(join_task(c).await);
            }
            received
        });
        received.extend(sync_consumers.into_iter().map(join));
        check_exactly_once_fifo(f, &received, producers, per);
    });
}

/// Counts a future as *in line* once its first poll returned `Pending` (it is registered in the
/// channel's wait list then), or once it is dropped without that (it never will be). Also counts,
/// in `dropped_woken`, the futures dropped after a wake and before the poll that would have
/// answered it: the cancellations that must pass a wakeup on.
struct InLine<F> {
    inner: Pin<Box<F>>,
    counter: Arc<AtomicUsize>,
    dropped_woken: Arc<AtomicUsize>,
    counted: bool,
    /// Set by the waker given to the last poll (if that poll was `Pending`).
    woken: Option<Arc<AtomicBool>>,
}

/// Passes a wake on, and remembers it.
struct Remember {
    woken: Arc<AtomicBool>,
    waker: Waker,
}

impl Wake for Remember {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, SeqCst);
        self.waker.wake_by_ref();
    }
}

impl<F: Future> InLine<F> {
    fn new(inner: F, counter: &Arc<AtomicUsize>, dropped_woken: &Arc<AtomicUsize>) -> Self {
        InLine {
            inner: Box::pin(inner),
            counter: Arc::clone(counter),
            dropped_woken: Arc::clone(dropped_woken),
            counted: false,
            woken: None,
        }
    }
}

impl<F: Future> Future for InLine<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let woken = Arc::new(AtomicBool::new(false));
        let waker = Waker::from(Arc::new(Remember {
            woken: Arc::clone(&woken),
            waker: cx.waker().clone(),
        }));
        let out = self.inner.as_mut().poll(&mut Context::from_waker(&waker));
        self.woken = out.is_pending().then_some(woken);
        if !std::mem::replace(&mut self.counted, true) {
            self.counter.fetch_add(1, SeqCst);
        }
        out
    }
}

impl<F> Drop for InLine<F> {
    fn drop(&mut self) {
        if !self.counted {
            self.counter.fetch_add(1, SeqCst);
        }
        if self.woken.as_ref().is_some_and(|w| w.load(SeqCst)) {
            self.dropped_woken.fetch_add(1, SeqCst);
        }
    }
}

/// The forwarded-wakeup property under real cancellation, on tokio. Each round:
///
/// 1. *flaky* tasks get in line in `recv_async`, each raced (`select!`, mostly `biased` towards
///    the cancel) against a cancel signal, and some also against a `tokio::time::timeout` or a
///    few scheduler turns;
/// 2. then *backup* tasks get in line behind them, with plain `recv_async` (they give up only when
///    the round is over);
/// 3. the producer sends one or two messages and fires the cancel signal, just before or just
///    after (from a helper thread, so that a blocked rendezvous send can be raced too).
///
/// A send wakes the first future in line: often a flaky one that the cancel signal then drops
/// before it takes the message. It must pass the wakeup on; if it did not, the message would sit
/// in the channel with the backups asleep and the round would never end (the test says "lost
/// wakeup" instead of hanging). Every message is received exactly once. The mutant
/// `async_cancel_no_forward` fails this test on every flavour within a few rounds.
fn recv_cancellation_race(f: Flavor) {
    let rounds = scaled(1_500, 3) as u64;
    watched(format!("{f}: recv_async cancelled in a race"), move || {
        const FLAKY: usize = 3;
        const BACKUP: usize = 2;
        let rt = runtime();
        let (tx, rx) = f.make::<u64>();
        let got = Arc::new(Mutex::new(Vec::new()));
        let count = Arc::new(AtomicUsize::new(0));
        let cancelled = Arc::new(AtomicUsize::new(0));
        let flaky_in_line = Arc::new(AtomicUsize::new(0));
        let backups_in_line = Arc::new(AtomicUsize::new(0));
        let idle = Arc::new(AtomicUsize::new(0));
        let dropped_woken = Arc::new(AtomicUsize::new(0));
        let record = {
            let (got, count) = (Arc::clone(&got), Arc::clone(&count));
            move |m: u64| {
                got.lock().expect("not poisoned").push(m);
                count.fetch_add(1, SeqCst);
            }
        };
        let (round_tx, round_rx) = tokio::sync::watch::channel(0u64);
        let (backup_tx, backup_rx) = tokio::sync::watch::channel(0u64);
        let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(0u64);
        let (over_tx, over_rx) = tokio::sync::watch::channel(0u64);
        let mut tasks = Vec::new();
        for i in 0..FLAKY {
            let (rx, record, idle) = (rx.clone(), record.clone(), Arc::clone(&idle));
            let (in_line, cancelled) = (Arc::clone(&flaky_in_line), Arc::clone(&cancelled));
            let dropped_woken = Arc::clone(&dropped_woken);
            let (mut round_rx, mut cancel_rx) = (round_rx.clone(), cancel_rx.clone());
            tasks.push(rt.spawn(async move {
                let mut rng = Rng::new(i as u64 + 1);
                while round_rx.changed().await.is_ok() {
                    cancel_rx.borrow_and_update();
                    let recv = InLine::new(rx.recv_async(), &in_line, &dropped_woken);
                    // Mostly `biased` towards the cancel signal: a future woken by a send and
                    // by the signal before its task runs is then dropped without taking the
                    // message, the case that must pass the wakeup on.
                    let outcome = match rng.below(4) {
                        0 => {
                            let limit = Duration::from_micros(rng.below(3_000) as u64);
                            tokio::select! {
                                biased;
                                _ = cancel_rx.changed() => None,
                                r = tokio::time::timeout(limit, recv) => r.ok(),
                            }
                        }
                        1 => {
                            let turns = 4 + rng.below(12);
                            tokio::select! {
                                biased;
                                _ = cancel_rx.changed() => None,
                                () = yield_times(turns) => None,
                                r = recv => Some(r),
                            }
                        }
                        2 => tokio::select! {
                            biased;
                            _ = cancel_rx.changed() => None,
                            r = recv => Some(r),
                        },
                        _ => tokio::select! {
                            r = recv => Some(r),
                            _ = cancel_rx.changed() => None,
                        },
                    };
                    match outcome {
                        Some(Ok(m)) => record(m),
                        Some(Err(RecvError)) => panic!("{f}: disconnected during a round"),
                        None => {
                            cancelled.fetch_add(1, SeqCst);
                        }
                    }
                    idle.fetch_add(1, SeqCst);
                }
            }));
        }
        for _ in 0..BACKUP {
            let (rx, record, idle) = (rx.clone(), record.clone(), Arc::clone(&idle));
            let in_line = Arc::clone(&backups_in_line);
            let dropped_woken = Arc::clone(&dropped_woken);
            let (mut backup_rx, mut over_rx) = (backup_rx.clone(), over_rx.clone());
            tasks.push(rt.spawn(async move {
                while backup_rx.changed().await.is_ok() {
                    over_rx.borrow_and_update();
                    // The first receive of the round announces that this task is in line.
                    let mut recv = Some(InLine::new(rx.recv_async(), &in_line, &dropped_woken));
                    loop {
                        let r = match recv.take() {
                            Some(first) => tokio::select! {
                                r = first => r,
                                _ = over_rx.changed() => break,
                            },
                            None => tokio::select! {
                                r = rx.recv_async() => r,
                                _ = over_rx.changed() => break,
                            },
                        };
                        record(r.unwrap_or_else(|RecvError| {
                            panic!("{f}: disconnected during a round")
                        }));
                    }
                    idle.fetch_add(1, SeqCst);
                }
            }));
        }
        drop((rx, round_rx, backup_rx, cancel_rx, over_rx));
        // Fires the cancel signal on request, after a short random delay: races a send that
        // blocks (rendezvous) as well as one that returns at once.
        let (fire_tx, fire_rx) = mpsc::channel::<(u64, usize)>();
        let canceller = {
            let cancel_tx = cancel_tx.clone();
            thread::spawn(move || {
                for (round, spins) in fire_rx {
                    for _ in 0..spins {
                        thread::yield_now();
                    }
                    cancel_tx.send_replace(round);
                }
            })
        };
        let mut rng = Rng::new(0x5eed);
        let mut sent = 0u64;
        let wait = |counter: &AtomicUsize, want: u64, what: &str, round: u64| {
            wait_for(
                || counter.load(SeqCst) as u64 >= want,
                || format!("{f}: round {round}: the {what} never got there"),
            );
        };
        for round in 1..=rounds {
            round_tx.send_replace(round);
            wait(
                &flaky_in_line,
                round * FLAKY as u64,
                "flaky tasks' receives",
                round,
            );
            backup_tx.send_replace(round);
            wait(
                &backups_in_line,
                round * BACKUP as u64,
                "backup receives",
                round,
            );
            // Cancel just before the send (the flaky tasks woken, not run yet when the send
            // chooses one), or from the helper thread around it.
            if rng.below(3) == 0 {
                fire_tx
                    .send((round, rng.below(40)))
                    .expect("the canceller runs");
            } else {
                cancel_tx.send_replace(round);
            }
            for _ in 0..1 + rng.below(2) {
                if let Err(e) = tx.send_timeout(sent, STUCK) {
                    panic!(
                        "{f}: round {round}: message {sent} never taken ({e:?}): the receivers \
                         in line sleep while it waits (lost wakeup)"
                    );
                }
                sent += 1;
            }
            wait_for(
                || count.load(SeqCst) as u64 == sent,
                || {
                    format!(
                        "{f}: round {round}: {} of {sent} messages received: a message sits in \
                         the channel while the backups sleep (lost wakeup)",
                        count.load(SeqCst)
                    )
                },
            );
            over_tx.send_replace(round);
            wait(
                &idle,
                round * (FLAKY + BACKUP) as u64,
                "tasks' rounds",
                round,
            );
        }
        drop((tx, round_tx, backup_tx, cancel_tx, over_tx, fire_tx));
        join(canceller);
        rt.block_on(async {
            for t in tasks {
                join_task(t).await;
            }
        });
        let got = std::mem::take(&mut *got.lock().expect("not poisoned"));
        assert_eq!(
            got.len() as u64,
            sent,
            "{f}: messages lost or delivered twice"
        );
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..sent).collect::<Vec<_>>(),
            "{f}: messages lost or delivered twice"
        );
        eprintln!(
            "{f}: {sent} messages in {rounds} rounds, {} recv_async cancelled, {} of them \
             after a wake",
            cancelled.load(SeqCst),
            dropped_woken.load(SeqCst)
        );
    });
}

/// Senders racing `send_async` against timeouts and `select!` while slow receiver threads
/// take: a send that completed was delivered exactly once; a cancelled send was never delivered
/// (rendezvous: at most once, since a send whose value was taken is complete even if dropped);
/// every value is dropped exactly once in the end.
fn send_cancellation_race(f: Flavor) {
    let n = scaled(4_000, 10);
    watched(format!("{f}: send_async cancelled in a race"), move || {
        const SENDERS: usize = 4;
        const UNSET: u8 = 0;
        const SENT: u8 = 1;
        const CANCELLED: u8 = 2;
        let rt = runtime();
        let counts = DropCounts::new();
        let (tx, rx) = f.make::<DropCounter>();
        let outcome: Arc<Vec<AtomicU8>> = Arc::new((0..n).map(|_| AtomicU8::new(UNSET)).collect());
        // Raised by a receiver thread after each receive: a `biased` select on it drops a send
        // future right after a receive woke it (bounded: chosen for the freed slot, so it must
        // pass the wakeup on) or took its value (rendezvous: complete, the value delivered).
        let (taken_tx, taken_rx) = tokio::sync::watch::channel(0u64);
        let taken_tx = Arc::new(taken_tx);
        let senders: Vec<_> = (0..SENDERS)
            .map(|s| {
                let (tx, counts, outcome) = (tx.clone(), counts.clone(), Arc::clone(&outcome));
                let mut taken_rx = taken_rx.clone();
                rt.spawn(async move {
                    let mut rng = Rng::new(s as u64 + 7);
                    for id in (s..n).step_by(SENDERS) {
                        let v = counts.make(id as u64);
                        taken_rx.borrow_and_update();
                        let done = match rng.below(4) {
                            3 => tokio::select! {
                                biased;
                                _ = taken_rx.changed() => None,
                                r = tx.send_async(v) => Some(r),
                            },
                            0 => {
                                let limit = Duration::from_micros(rng.below(1_500) as u64);
                                tokio::time::timeout(limit, tx.send_async(v)).await.ok()
                            }
                            1 => {
                                let turns = rng.below(6);
                                tokio::select! {
                                    r = tx.send_async(v) => Some(r),
                                    () = yield_times(turns) => None,
                                }
                            }
                            _ => Some(tx.send_async(v).await),
                        };
                        let o = match done {
                            Some(Ok(())) => SENT,
                            Some(Err(e)) => panic!(
                                "{f}: send_async of {} failed on a connected channel",
                                e.into_inner().id()
                            ),
                            None => CANCELLED,
                        };
                        outcome[id].store(o, SeqCst);
                    }
                })
            })
            .collect();
        drop((tx, taken_rx));
        let receivers: Vec<_> = (0..2u64)
            .map(|r| {
                let (rx, taken_tx) = (rx.clone(), Arc::clone(&taken_tx));
                thread::spawn(move || {
                    let mut rng = Rng::new(100 + r);
                    let mut got = Vec::new();
                    while let Ok(v) = rx.recv() {
                        got.push(v);
                        taken_tx.send_modify(|t| *t += 1);
                        if rng.below(4) == 0 {
                            rng.pause();
                        }
                    }
                    got
                })
            })
            .collect();
        drop(rx);
        rt.block_on(async {
            for s in senders {
                if tokio::time::timeout(STUCK, join_task(s)).await.is_err() {
                    panic!(
                        "{f}: a sender task never finished: a send_async sleeps while the \
                         channel has room (lost wakeup)"
                    );
                }
            }
        });
        let got: Vec<DropCounter> = receivers.into_iter().flat_map(join).collect();
        let mut delivered = vec![0u32; n];
        for v in &got {
            delivered[v.id() as usize] += 1;
        }
        let (mut cancelled, mut delivered_anyway) = (0, 0);
        for (id, (o, d)) in outcome.iter().zip(&delivered).enumerate() {
            let o = o.load(SeqCst);
            assert!(*d <= 1, "{f}: value {id} delivered {d} times");
            match o {
                SENT => assert_eq!(*d, 1, "{f}: value {id}: send_async Ok, never received"),
                CANCELLED => {
                    cancelled += 1;
                    delivered_anyway += *d;
                    if !f.is_rendezvous() {
                        assert_eq!(*d, 0, "{f}: value {id}: send cancelled, yet received");
                    }
                }
                _ => panic!("{f}: value {id}: its send never ended"),
            }
        }
        assert_eq!(
            counts.live(),
            got.len() as isize,
            "{f}: values not received must have been dropped exactly once"
        );
        drop(got);
        assert_eq!(counts.live(), 0);
        assert_eq!(
            counts.made(),
            counts.dropped(),
            "{f}: a value dropped twice"
        );
        eprintln!(
            "{f}: {n} values, {cancelled} send_async cancelled, {delivered_anyway} of them \
             after the value was taken"
        );
    });
}

/// Receivers leave early while sync and async producers keep sending: every value ends up
/// received or dropped exactly once (buffered ones with the last receiver, refused ones handed
/// back in the error).
fn receivers_leave_early(f: Flavor) {
    let per = scaled(2_000, 20) as u64;
    watched(format!("{f}: receivers leave early"), move || {
        let rt = runtime();
        let counts = DropCounts::new();
        let (tx, rx) = f.make::<DropCounter>();
        let refused = Arc::new(AtomicUsize::new(0));
        let sync_producer = {
            let (tx, counts, refused) = (tx.clone(), counts.clone(), Arc::clone(&refused));
            thread::spawn(move || {
                for s in 0..per {
                    if let Err(SendError(v)) = tx.send(counts.make(s)) {
                        assert_eq!(v.id(), s, "{f}: another value back");
                        refused.fetch_add(1, SeqCst);
                        break;
                    }
                }
            })
        };
        let async_producers: Vec<_> = (1..3u64)
            .map(|p| {
                let (tx, counts, refused) = (tx.clone(), counts.clone(), Arc::clone(&refused));
                rt.spawn(async move {
                    for s in 0..per {
                        let id = p << 32 | s;
                        if let Err(SendError(v)) = tx.send_async(counts.make(id)).await {
                            assert_eq!(v.id(), id, "{f}: another value back");
                            refused.fetch_add(1, SeqCst);
                            break;
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let rx = rx.clone();
                rt.spawn(async move {
                    let mut got = Vec::new();
                    for _ in 0..per / 4 {
                        match rx.recv_async().await {
                            Ok(v) => got.push(v),
                            Err(RecvError) => break,
                        }
                    }
                    got
                })
            })
            .collect();
        drop(rx);
        let got: Vec<DropCounter> = rt.block_on(async {
            let mut got = Vec::new();
            for c in consumers {
                got.extend(join_task(c).await);
            }
            for p in async_producers {
                join_task(p).await;
            }
            got
        });
        join(sync_producer);
        let mut ids: Vec<u64> = got.iter().map(DropCounter::id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), got.len(), "{f}: a value delivered twice");
        assert_eq!(
            counts.live(),
            got.len() as isize,
            "{f}: every value not received was dropped exactly once"
        );
        drop(got);
        assert_eq!(counts.made(), counts.dropped());
    });
}

/// Rendezvous on tokio: a task's send_async resolves only after a receiver thread has started
/// receiving (the thread raises a flag before it calls `recv`, after a pause), and the thread
/// gets the value; then the reverse, a thread's `send` with a task receiving.
fn rendezvous_send_async_resolves_after_receiver_thread() {
    let rounds = scaled(40, 2) as u64;
    watched(
        "rendezvous: send_async against receiver threads".into(),
        move || {
            let rt = runtime();
            let (tx, rx) = channel::bounded::<u64>(0);
            rt.block_on(async {
                let mut rng = Rng::new(3);
                for round in 0..rounds {
                    let entered = Arc::new(AtomicBool::new(false));
                    let pause = Duration::from_micros(rng.below(2_000) as u64);
                    let receiver = {
                        let (rx, entered) = (rx.clone(), Arc::clone(&entered));
                        thread::spawn(move || {
                            thread::sleep(pause);
                            entered.store(true, SeqCst);
                            rx.recv()
                        })
                    };
                    tx.send_async(round).await.expect("connected");
                    assert!(
                        entered.load(SeqCst),
                        "rendezvous: send_async resolved before any receiver was receiving"
                    );
                    assert_eq!(join(receiver), Ok(round));
                }
            });

            // The reverse: a thread sends, tasks receive.
            let receiver = {
                let rx = rx.clone();
                rt.spawn(async move {
                    let mut got = Vec::new();
                    while let Ok(m) = rx.recv_async().await {
                        got.push(m);
                    }
                    got
                })
            };
            let sender = thread::spawn(move || {
                for m in 0..rounds * 10 {
                    tx.send(m).expect("a task receives");
                }
            });
            join(sender);
            let got = rt.block_on(join_task(receiver));
            assert_eq!(got, (0..rounds * 10).collect::<Vec<_>>());
        },
    );
}

// ---------------------------------------------------------------------------------------------
// The suites
// ---------------------------------------------------------------------------------------------

macro_rules! async_suite {
    ($name:ident, $flavor:expr, { $($extra:item)* }) => {
        mod $name {
            use super::*;

            const F: Flavor = $flavor;

            #[test]
            fn fifo() {
                super::fifo(F);
            }

            #[test]
            fn recv_fails_after_senders_drop_and_drain() {
                super::recv_fails_after_senders_drop_and_drain(F);
            }

            #[test]
            fn pending_recv_woken_by_last_sender_drop() {
                super::pending_recv_woken_by_last_sender_drop(F);
            }

            #[test]
            fn send_fails_after_receivers_drop() {
                super::send_fails_after_receivers_drop(F);
            }

            #[test]
            fn pending_send_woken_by_last_receiver_drop() {
                super::pending_send_woken_by_last_receiver_drop(F);
            }

            #[test]
            fn close_wakes_pending_futures() {
                super::close_wakes_pending_futures(F);
            }

            #[test]
            fn dropped_pending_recv_consumes_nothing() {
                super::dropped_pending_recv_consumes_nothing(F);
            }

            #[test]
            fn chosen_then_dropped_recv_forwards_to_a_task() {
                super::chosen_then_dropped_recv_forwards_to_a_task(F);
            }

            #[test]
            fn chosen_then_dropped_recv_forwards_to_a_thread() {
                super::chosen_then_dropped_recv_forwards_to_a_thread(F);
            }

            #[test]
            fn recv_waker_replacement() {
                super::recv_waker_replacement(F);
            }

            #[test]
            fn send_waker_replacement() {
                super::send_waker_replacement(F);
            }

            #[test]
            fn dropped_pending_send_drops_value() {
                super::dropped_pending_send_drops_value(F);
            }

            #[test]
            fn leftover_messages_dropped_once() {
                super::leftover_messages_dropped_once(F);
            }

            #[test]
            #[cfg_attr(miri, ignore = "tokio's runtime under Miri is too slow")]
            fn mixed_sync_senders_async_receivers() {
                super::mixed(F, Mix { sync_senders: 3, async_senders: 0, sync_receivers: 0, async_receivers: 3 });
            }

            #[test]
            #[cfg_attr(miri, ignore = "tokio's runtime under Miri is too slow")]
            fn mixed_async_senders_sync_receivers() {
                super::mixed(F, Mix { sync_senders: 0, async_senders: 4, sync_receivers: 2, async_receivers: 0 });
            }

            #[test]
            #[cfg_attr(miri, ignore = "tokio's runtime under Miri is too slow")]
            fn mixed_async_both() {
                super::mixed(F, Mix { sync_senders: 0, async_senders: 4, sync_receivers: 0, async_receivers: 4 });
            }

            #[test]
            #[cfg_attr(miri, ignore = "tokio's runtime under Miri is too slow")]
            fn mixed_everything() {
                super::mixed(F, Mix { sync_senders: 2, async_senders: 2, sync_receivers: 2, async_receivers: 2 });
            }

            #[test]
            #[cfg_attr(miri, ignore = "tokio's runtime under Miri is too slow")]
            fn recv_cancellation_race() {
                super::recv_cancellation_race(F);
            }

            #[test]
            #[cfg_attr(miri, ignore = "tokio's runtime under Miri is too slow")]
            fn send_cancellation_race() {
                super::send_cancellation_race(F);
            }

            #[test]
            #[cfg_attr(miri, ignore = "tokio's runtime under Miri is too slow")]
            fn receivers_leave_early() {
                super::receivers_leave_early(F);
            }

            $($extra)*
        }
    };
}

async_suite!(bounded, Flavor::Bounded(4), {
    #[test]
    fn chosen_then_dropped_send_forwards() {
        super::chosen_then_dropped_send_forwards(F);
    }
});

async_suite!(bounded1, Flavor::Bounded(1), {
    #[test]
    fn send_async_waits_while_full() {
        super::bounded1_send_async_waits_while_full();
    }

    #[test]
    #[cfg_attr(miri, ignore = "tokio's runtime under Miri is too slow")]
    fn task_waits_while_full() {
        super::bounded1_task_waits_while_full();
    }

    #[test]
    fn chosen_then_dropped_send_forwards() {
        super::chosen_then_dropped_send_forwards(F);
    }
});

async_suite!(rendezvous, Flavor::Bounded(0), {
    #[test]
    fn send_async_waits_for_a_receiver() {
        super::rendezvous_send_async_waits_for_a_receiver();
    }

    #[test]
    fn send_async_with_an_async_receiver() {
        super::rendezvous_send_async_with_an_async_receiver();
    }

    #[test]
    fn sync_send_with_an_async_receiver() {
        super::rendezvous_sync_send_with_an_async_receiver();
    }

    #[test]
    fn dropped_send_after_take_delivered_once() {
        super::rendezvous_dropped_send_after_take_delivered_once();
    }

    #[test]
    #[cfg_attr(miri, ignore = "tokio's runtime under Miri is too slow")]
    fn send_async_resolves_after_receiver_thread() {
        super::rendezvous_send_async_resolves_after_receiver_thread();
    }
});

async_suite!(unbounded, Flavor::Unbounded, {});

/// A rendezvous `try_send` completes with a thread blocked in `recv` even when an async receiver
/// is queued ahead of it (it used to look only at the front and return `Full`).
#[test]
fn rendezvous_try_send_reaches_a_blocked_thread_behind_an_async_receiver() {
    use std::future::Future;
    use std::task::{Context, Waker};
    common::with_watchdog(30, "rendezvous try_send behind an async receiver", || {
        let (tx, rx) = berth::channel::bounded::<u32>(0);
        let rx2 = rx.clone();
        let mut pending = Box::pin(rx.recv_async());
        assert!(pending
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_pending());
        let blocked = std::thread::spawn(move || rx2.recv());
        // Wait until the thread is queued: try_send succeeds only then.
        let mut sent = false;
        for _ in 0..10_000 {
            if tx.try_send(1).is_ok() {
                sent = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(sent, "try_send never reached the blocked receiver");
        assert_eq!(blocked.join().unwrap(), Ok(1));
        drop(pending);
    });
}
