//! loom models of the async channel operations (`send_async`, `recv_async`): a pending future is
//! woken by a send and by a close; a future dropped after it was chosen for a wakeup passes the
//! wakeup on (the mutant `async_cancel_no_forward` drops it, and the receiver left behind never
//! wakes: loom reports the deadlock); a rendezvous hand-off between a thread and a task
//! completes only when the value is taken.
#![cfg(loom)]

use berth::channel::{self, Receiver, Sender};
use loom::future::block_on;
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::thread;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

/// A waker that counts its wakes (in a loom atomic, so loom sees the wake as an event).
struct Counter(AtomicUsize);

impl Wake for Counter {
    fn wake(self: StdArc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

fn counting_waker() -> (Waker, StdArc<Counter>) {
    let c = StdArc::new(Counter(AtomicUsize::new(0)));
    (Waker::from(StdArc::clone(&c)), c)
}

fn poll_once<F: Future + ?Sized>(f: Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(waker))
}

fn flavors() -> Vec<(&'static str, Sender<u32>, Receiver<u32>)> {
    let (a, b) = channel::bounded(1);
    let (c, d) = channel::unbounded();
    let (e, f) = channel::bounded(0);
    vec![
        ("bounded(1)", a, b),
        ("unbounded", c, d),
        ("rendezvous", e, f),
    ]
}

/// A task waiting in `recv_async` is woken by a thread's send, on every flavour.
#[test]
fn recv_async_woken_by_send() {
    for i in 0..3 {
        loom::model(move || {
            let (_, tx, rx) = flavors().swap_remove(i);
            let sender = thread::spawn(move || tx.send(7).unwrap());
            assert_eq!(block_on(rx.recv_async()), Ok(7));
            sender.join().unwrap();
        });
    }
}

/// A task waiting in `recv_async` is woken by a close, and fails once the channel is empty.
#[test]
fn recv_async_woken_by_close() {
    for i in 0..3 {
        loom::model(move || {
            let (_, tx, rx) = flavors().swap_remove(i);
            let closer = thread::spawn(move || drop(tx));
            assert!(block_on(rx.recv_async()).is_err());
            closer.join().unwrap();
        });
    }
}

/// A waker that a thread can wait for (a loom mutex and condvar: if it is never woken, loom
/// reports the deadlock).
struct Signal {
    woken: loom::sync::Mutex<bool>,
    cv: loom::sync::Condvar,
}

impl Wake for Signal {
    fn wake(self: StdArc<Self>) {
        *self.woken.lock().unwrap() = true;
        self.cv.notify_all();
    }
}

impl Signal {
    fn new() -> StdArc<Self> {
        StdArc::new(Signal {
            woken: loom::sync::Mutex::new(false),
            cv: loom::sync::Condvar::new(),
        })
    }

    fn wait(&self) {
        let mut woken = self.woken.lock().unwrap();
        while !*woken {
            woken = self.cv.wait(woken).unwrap();
        }
    }
}

/// Two tasks wait; a thread sends one message while the first task's future is dropped. If the
/// send chose the first task, the drop must pass the wakeup on: the second task must be woken
/// (the model waits for its waker; a lost wakeup is a deadlock) and then get the message. A
/// sender handle stays alive, so no disconnect wakes anyone.
#[test]
fn cancelled_recv_forwards_its_wakeup() {
    for i in 0..3 {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(move || {
            let (_name, tx, rx) = flavors().swap_remove(i);
            let _keep_connected = tx.clone();
            let rx2 = rx.clone();
            let (w1, _) = counting_waker();
            let signal = Signal::new();
            let w2 = Waker::from(StdArc::clone(&signal));
            let mut f1 = Box::pin(rx.recv_async());
            let mut f2 = Box::pin(rx2.recv_async());
            assert!(poll_once(f1.as_mut(), &w1).is_pending());
            assert!(poll_once(f2.as_mut(), &w2).is_pending());
            let sender = thread::spawn(move || tx.send(7).unwrap());
            drop(f1);
            signal.wait();
            assert_eq!(poll_once(f2.as_mut(), &w2), Poll::Ready(Ok(7)));
            sender.join().unwrap();
        });
    }
}

/// A thread's rendezvous receive against a task's rendezvous send: the send completes only when
/// the value is taken, and the value arrives.
#[test]
fn rendezvous_send_async_completes_only_when_taken() {
    loom::model(|| {
        let (tx, rx) = channel::bounded::<u32>(0);
        let taken = loom::sync::Arc::new(AtomicUsize::new(0));
        let t2 = loom::sync::Arc::clone(&taken);
        let receiver = thread::spawn(move || {
            let v = rx.recv().unwrap();
            t2.store(1, SeqCst);
            v
        });
        block_on(tx.send_async(5)).unwrap();
        // The receiver has the value (it may not have recorded it yet, but its recv returned
        // or is returning it): joining must yield it.
        assert_eq!(receiver.join().unwrap(), 5);
        let _ = taken;
    });
}

/// A bounded(1) channel, full: a task's `send_async` waits and is woken by a thread's receive.
#[test]
fn send_async_woken_by_recv() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        let (tx, rx) = channel::bounded::<u32>(1);
        tx.send(1).unwrap();
        let receiver = thread::spawn(move || (rx.recv().unwrap(), rx.recv().unwrap()));
        block_on(tx.send_async(2)).unwrap();
        assert_eq!(receiver.join().unwrap(), (1, 2));
    });
}
