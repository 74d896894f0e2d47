//! loom models of `berth::channel::Select` / `select!`: exactly one operation completes and the
//! other message stays; a select racing a disconnect; a select on a rendezvous send completes
//! only when the value is taken; a losing case's registration is withdrawn (the mutant
//! `select_keeps_losing_registration` leaves it, a later send wakes the selecting thread instead
//! of the receiver behind it, and loom reports the deadlock) and a wakeup it was chosen for is
//! passed on.
//!
//! Under the models a select's random start is a fixed sequence (`crate::sync::MODEL`), so every
//! execution of a model is reproducible; loom varies the interleavings, not the choice.
#![cfg(loom)]

use berth::channel::{self, RecvError};
use berth::select;
use berth_models::trace;
use loom::thread;

/// One sender on each of two channels, one select: exactly one completes, the other message
/// stays in its channel.
#[test]
fn select_two_channels_exactly_one_completes() {
    loom::model(|| {
        let (ta, ra) = channel::bounded::<u32>(1);
        let (tb, rb) = channel::unbounded::<u32>();
        let a = thread::spawn(move || ta.send(1).unwrap());
        let b = thread::spawn(move || tb.send(2).unwrap());
        let got = select! {
            recv(ra) -> m => m.unwrap(),
            recv(rb) -> m => m.unwrap(),
        };
        a.join().unwrap();
        b.join().unwrap();
        let (left, other) = if got == 1 { (&rb, 2) } else { (&ra, 1) };
        assert!(got == 1 || got == 2);
        assert_eq!(left.try_recv(), Ok(other), "the losing message stays");
        assert!(
            ra.is_empty() && rb.is_empty(),
            "nothing else was taken or left"
        );
    });
}

/// A select racing the drop of the only sender: it returns the message sent before the drop,
/// or the disconnection once the channel is empty, and never hangs.
#[test]
fn select_racing_a_disconnect() {
    for send_first in [false, true] {
        loom::model(move || {
            let (ta, ra) = channel::bounded::<u32>(1);
            let (_keep, rb) = channel::unbounded::<u32>();
            let closer = thread::spawn(move || {
                if send_first {
                    ta.send(5).unwrap();
                }
                drop(ta);
            });
            let got = select! {
                recv(ra) -> m => m,
                recv(rb) -> _ => unreachable!("nothing is sent on b"),
            };
            if send_first {
                assert_eq!(got, Ok(5), "a message sent before the close is never lost");
            } else {
                assert_eq!(got, Err(RecvError));
            }
            closer.join().unwrap();
        });
    }
}

/// A select's send on a rendezvous channel completes only when a receiver takes the value.
#[test]
fn select_on_a_rendezvous_send() {
    loom::model(|| {
        let (tx, rx) = channel::bounded::<u32>(0);
        let (keep, _idle) = channel::bounded::<u32>(0);
        let receiver = thread::spawn(move || rx.recv());
        let res = select! {
            send(tx, 9) -> r => r,
            send(keep, 0) -> _ => unreachable!("nobody receives on the idle channel"),
        };
        assert_eq!(res, Ok(()));
        assert_eq!(receiver.join().unwrap(), Ok(9));
    });
}

/// A select over A and B that B wins must not stay registered on A: a receiver that then
/// blocks on A must be the one a send on A wakes.
#[test]
fn losing_registration_is_withdrawn() {
    loom::model(|| {
        trace::start();
        let (ta, ra) = channel::unbounded::<u32>();
        let (tb, rb) = channel::unbounded::<u32>();
        let ra2 = ra.clone();
        let selector = thread::spawn(move || {
            trace::record("select(recv A, recv B) starts", ());
            let v = select! {
                recv(ra) -> _ => unreachable!("A is sent on only later"),
                recv(rb) -> m => m.unwrap(),
            };
            trace::record("select: received from B", v);
            v
        });
        let sender = thread::spawn(move || {
            tb.send(2).unwrap();
            trace::record("send to B", 2);
        });
        sender.join().unwrap();
        assert_eq!(selector.join().unwrap(), 2);
        // This thread now blocks on A; a send on A must wake it, not the finished select. (It
        // keeps a sender, so the late sender's drop does not disconnect A and wake it anyway.)
        let keep = ta.clone();
        let late = thread::spawn(move || {
            ta.send(1).unwrap();
            trace::record("send to A", 1);
        });
        trace::record("recv A starts", ());
        let got = ra2.recv();
        trace::record("recv A", got);
        assert_eq!(got, Ok(1));
        late.join().unwrap();
        drop(keep);
    });
}

/// A select chosen for a wakeup on A that completes B instead passes the wakeup on: the
/// receiver blocked behind it on A gets A's message.
#[test]
fn losing_case_passes_on_its_wakeup() {
    loom::model(|| {
        let (ta, ra) = channel::unbounded::<u32>();
        let (tb, rb) = channel::unbounded::<u32>();
        let ra2 = ra.clone();
        let rb2 = rb.clone();
        let selector = thread::spawn(move || {
            select! {
                recv(ra) -> m => m.unwrap(),
                recv(rb) -> m => m.unwrap(),
            }
        });
        let receiver = thread::spawn(move || ra2.recv());
        ta.send(1).unwrap();
        tb.send(2).unwrap();
        let got = selector.join().unwrap();
        if got == 1 {
            // The select took A's message: the receiver needs another one.
            ta.send(3).unwrap();
            assert_eq!(receiver.join().unwrap(), Ok(3));
            assert_eq!(rb2.try_recv(), Ok(2));
        } else {
            assert_eq!(got, 2);
            assert_eq!(receiver.join().unwrap(), Ok(1));
        }
    });
}

/// Two threads exchange one value each over two rendezvous channels, each selecting over
/// "send to the other" and "receive from the other" until it has done both. Each select's send
/// can pair with the other select's waiting receive only by claiming it (`SelectCtx`), so the
/// two never both commit to sending (which would leave both blocked in `send` with no receiver
/// left: loom reports that as a deadlock).
#[test]
fn two_selects_exchange_over_rendezvous_channels() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        trace::start();
        fn peer(out: &channel::Sender<u32>, inc: &channel::Receiver<u32>, mine: u32) -> u32 {
            let (mut sent, mut got) = (false, None);
            while !sent || got.is_none() {
                let mut sel = berth::channel::Select::new();
                let r = got.is_none().then(|| sel.recv(inc));
                let s = (!sent).then(|| sel.send(out));
                trace::record("select starts (recv, send)", (r.is_some(), s.is_some()));
                let oper = sel.select();
                if Some(oper.index()) == r {
                    got = Some(oper.recv(inc).unwrap());
                    trace::record("select: received", got);
                } else {
                    assert_eq!(Some(oper.index()), s);
                    trace::record("select: chose send, sending", mine);
                    oper.send(out, mine).unwrap();
                    trace::record("select: sent", mine);
                    sent = true;
                }
            }
            got.unwrap()
        }
        let (ab_tx, ab_rx) = channel::bounded::<u32>(0);
        let (ba_tx, ba_rx) = channel::bounded::<u32>(0);
        let a = thread::spawn(move || peer(&ab_tx, &ba_rx, 1));
        assert_eq!(peer(&ba_tx, &ab_rx, 2), 1);
        assert_eq!(a.join().unwrap(), 2);
    });
}

/// Two selects meet on one rendezvous channel, whichever arrives first: a selecting receiver
/// that finds a selecting sender asleep claims it (the sender wakes committed to its send), and
/// a selecting sender that finds a selecting receiver asleep claims that. Here the sender's
/// message expression then leaves (`break`), so the send is abandoned: the receiver must go
/// back to waiting on both its cases and hear the stop channel, never be left waiting for a
/// value that will not come (loom reports that as a deadlock).
#[test]
fn an_abandoned_claimed_send_releases_the_receiving_select() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        trace::start();
        let (tx, rx) = channel::bounded::<u32>(0);
        let (stop_tx, stop_rx) = channel::bounded::<()>(0);
        let sender = thread::spawn(move || {
            let mut messages = Vec::<u32>::new().into_iter();
            loop {
                trace::record("sender: select starts", ());
                select! {
                    send(tx, match messages.next() {
                        Some(m) => m,
                        None => break,
                    }) -> r => r.unwrap(),
                }
            }
            trace::record("sender: send abandoned, sending stop", ());
            stop_tx.send(()).unwrap();
            trace::record("sender: stop taken", ());
        });
        trace::record("receiver: select starts", ());
        let got = select! {
            recv(rx) -> m => Some(m),
            recv(stop_rx) -> s => {
                s.unwrap();
                None
            }
        };
        trace::record("receiver: select returned (None = stop)", got);
        assert_eq!(got, None, "the only message ever sent is the stop");
        sender.join().unwrap();
    });
}
