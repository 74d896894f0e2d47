//! loom models of the async channel operations (`send_async`, `recv_async`): a pending future is
//! woken by a send and by a close; a future dropped after it was chosen for a wakeup passes the
//! wakeup on (the mutant `async_cancel_no_forward` drops it, and the receiver left behind never
//! wakes: loom reports the deadlock); a rendezvous hand-off between a thread and a task
//! completes only when the value is taken.
#![cfg(loom)]

use berth::channel::{self, Receiver, Sender};
use berth_models::trace;
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

/// Flavour `i` (0: bounded(1), 1: unbounded, 2: rendezvous), made alone so a model pays for
/// the atomics of one channel only.
fn flavor(i: usize) -> (&'static str, Sender<u32>, Receiver<u32>) {
    let (name, (tx, rx)) = match i {
        0 => ("bounded(1)", channel::bounded(1)),
        1 => ("unbounded", channel::unbounded()),
        _ => ("rendezvous", channel::bounded(0)),
    };
    (name, tx, rx)
}

/// A task waiting in `recv_async` is woken by a thread's send, on every flavour.
#[test]
fn recv_async_woken_by_send() {
    for i in 0..3 {
        loom::model(move || {
            let (_, tx, rx) = flavor(i);
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
            let (_, tx, rx) = flavor(i);
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
            trace::start();
            let (name, tx, rx) = flavor(i);
            trace::record("channel", name);
            let _keep_connected = tx.clone();
            let rx2 = rx.clone();
            let (w1, _) = counting_waker();
            let signal = Signal::new();
            let w2 = Waker::from(StdArc::clone(&signal));
            let mut f1 = Box::pin(rx.recv_async());
            let mut f2 = Box::pin(rx2.recv_async());
            let p1 = poll_once(f1.as_mut(), &w1);
            trace::record("poll recv_async #1", p1);
            assert!(p1.is_pending());
            let p2 = poll_once(f2.as_mut(), &w2);
            trace::record("poll recv_async #2", p2);
            assert!(p2.is_pending());
            let sender = thread::spawn(move || {
                trace::record("send starts", 7);
                let r = tx.send(7);
                trace::record("send", r);
            });
            drop(f1);
            trace::record("drop(recv_async #1)", ());
            trace::record("wait for #2's waker", ());
            signal.wait();
            trace::record("#2's waker fired", ());
            let p2 = poll_once(f2.as_mut(), &w2);
            trace::record("poll recv_async #2", p2);
            assert_eq!(p2, Poll::Ready(Ok(7)));
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

/// A pending receive is re-polled with a new waker while a thread sends twice: the re-poll uses
/// the new waker (or takes a message at once), and the wakeup it consumes is its own: a second
/// receive afterwards still gets the other message.
#[test]
fn repoll_racing_a_notification() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        let (tx, rx) = channel::bounded::<u32>(2);
        let (wa, _) = counting_waker();
        let mut f1 = Box::pin(rx.recv_async());
        assert!(poll_once(f1.as_mut(), &wa).is_pending());
        let sender = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
            tx
        });
        let sb = Signal::new();
        let wb = Waker::from(StdArc::clone(&sb));
        let first = match poll_once(f1.as_mut(), &wb) {
            Poll::Ready(v) => v,
            Poll::Pending => {
                sb.wait();
                match poll_once(f1.as_mut(), &wb) {
                    Poll::Ready(v) => v,
                    Poll::Pending => panic!("woken through the new waker, but nothing to take"),
                }
            }
        };
        assert_eq!(first, Ok(1));
        drop(f1);
        let second = block_on(rx.recv_async());
        assert_eq!(second, Ok(2));
        drop(sender.join().unwrap());
    });
}

/// Two async sends wait on a full bounded(2) channel; one batch receive (`recv_many`, limit 2)
/// on another thread frees both slots and must wake both senders.
#[test]
fn batch_receive_wakes_two_blocked_senders() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        trace::start();
        let (tx, mut rx) = channel::mpsc::bounded::<u32>(2);
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        trace::record("send 1, send 2 (full)", ());
        let (s1, s2) = (Signal::new(), Signal::new());
        let (w1, w2) = (
            Waker::from(StdArc::clone(&s1)),
            Waker::from(StdArc::clone(&s2)),
        );
        let mut f1 = Box::pin(tx.send_async(3));
        let mut f2 = Box::pin(tx.send_async(4));
        let p1 = poll_once(f1.as_mut(), &w1);
        trace::record("poll send_async(3)", p1);
        assert!(p1.is_pending());
        let p2 = poll_once(f2.as_mut(), &w2);
        trace::record("poll send_async(4)", p2);
        assert!(p2.is_pending());
        let receiver = thread::spawn(move || {
            let mut buf = Vec::new();
            trace::record("recv_many(2) starts", ());
            let r = rx.recv_many(&mut buf, 2);
            trace::record("recv_many(2)", (&r, &buf));
            assert_eq!(r, Ok(2));
            assert_eq!(buf, [1, 2]);
            rx
        });
        trace::record("wait for send_async(3)'s waker", ());
        s1.wait();
        trace::record("send_async(3)'s waker fired", ());
        trace::record("wait for send_async(4)'s waker", ());
        s2.wait();
        trace::record("send_async(4)'s waker fired", ());
        assert_eq!(poll_once(f1.as_mut(), &w1), Poll::Ready(Ok(())));
        assert_eq!(poll_once(f2.as_mut(), &w2), Poll::Ready(Ok(())));
        let mut rx = receiver.join().unwrap();
        let mut rest = Vec::new();
        assert_eq!(rx.recv_many(&mut rest, 2), Ok(2));
        assert_eq!(rest, [3, 4]);
    });
}

/// A message sent before a close is never lost to an async receiver: it gets the message, then
/// the disconnect.
#[test]
fn value_sent_before_close_is_received() {
    for i in 0..3 {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(2);
        b.check(move || {
            let (_, tx, rx) = flavor(i);
            let sender = thread::spawn(move || {
                tx.send(9).unwrap();
                tx.close();
            });
            assert_eq!(block_on(rx.recv_async()), Ok(9));
            assert!(block_on(rx.recv_async()).is_err());
            sender.join().unwrap();
        });
    }
}
