//! `Receiver::stream` / `Sender::sink` (feature `futures`), hand-polled: items in order, the
//! stream ends on disconnect and stays ended (`FusedStream`), a pending stream is woken by a
//! send, dropping a pending stream consumes nothing, a sink holds one item until the channel
//! has room and hands it back on disconnect.
#![cfg(feature = "futures")]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use berth::channel;
use futures_core::stream::{FusedStream, Stream};
use futures_sink::Sink;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

struct Count(AtomicUsize);
impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

fn counting() -> (Waker, Arc<Count>) {
    let c = Arc::new(Count(AtomicUsize::new(0)));
    (Waker::from(Arc::clone(&c)), c)
}

fn next<S: Stream + Unpin>(s: &mut S, w: &Waker) -> Poll<Option<S::Item>> {
    Pin::new(s).poll_next(&mut Context::from_waker(w))
}

#[test]
fn stream_yields_in_order_then_ends_and_stays_ended() {
    for (tx, rx) in [channel::bounded(4), channel::unbounded()] {
        let (w, _) = counting();
        let mut s = rx.into_stream();
        for i in 0..3 {
            tx.send(i).unwrap();
        }
        drop(tx);
        let got: Vec<_> = (0..3).map(|_| next(&mut s, &w)).collect();
        assert_eq!(
            got,
            [
                Poll::Ready(Some(0)),
                Poll::Ready(Some(1)),
                Poll::Ready(Some(2))
            ]
        );
        assert!(!s.is_terminated());
        assert_eq!(next(&mut s, &w), Poll::Ready(None));
        assert!(s.is_terminated());
        assert_eq!(next(&mut s, &w), Poll::Ready(None));
    }
}

#[test]
fn pending_stream_is_woken_by_a_send_and_a_dropped_one_consumes_nothing() {
    let (tx, rx) = channel::bounded(2);
    let (w, woken) = counting();
    {
        let mut s = rx.stream();
        assert_eq!(next(&mut s, &w), Poll::Pending);
        tx.send(1).unwrap();
        assert_eq!(woken.0.load(SeqCst), 1);
        assert_eq!(next(&mut s, &w), Poll::Ready(Some(1)));
        assert_eq!(next(&mut s, &w), Poll::Pending);
    } // dropped while pending
    tx.send(2).unwrap();
    assert_eq!(rx.try_recv(), Ok(2), "the dropped stream took nothing");
}

#[test]
fn sink_holds_an_item_until_there_is_room() {
    let (tx, rx) = channel::bounded(1);
    let (w, woken) = counting();
    let mut cx = Context::from_waker(&w);
    let mut sink = tx.sink();
    let mut p = Pin::new(&mut sink);
    assert!(matches!(
        p.as_mut().poll_ready(&mut cx),
        Poll::Ready(Ok(()))
    ));
    p.as_mut().start_send(1).unwrap();
    assert!(matches!(
        p.as_mut().poll_flush(&mut cx),
        Poll::Ready(Ok(()))
    ));
    assert!(matches!(
        p.as_mut().poll_ready(&mut cx),
        Poll::Ready(Ok(()))
    ));
    p.as_mut().start_send(2).unwrap();
    assert!(
        p.as_mut().poll_flush(&mut cx).is_pending(),
        "full: the item waits in the sink"
    );
    assert_eq!(rx.recv(), Ok(1));
    assert_eq!(woken.0.load(SeqCst), 1, "the receive woke the sink");
    assert!(matches!(
        p.as_mut().poll_close(&mut cx),
        Poll::Ready(Ok(()))
    ));
    assert_eq!(rx.recv(), Ok(2));
}

#[test]
fn sink_hands_the_item_back_on_disconnect() {
    let (tx, rx) = channel::bounded(1);
    let (w, _) = counting();
    let mut cx = Context::from_waker(&w);
    let mut sink = tx.into_sink();
    let mut p = Pin::new(&mut sink);
    p.as_mut().start_send(1).unwrap();
    assert!(matches!(
        p.as_mut().poll_flush(&mut cx),
        Poll::Ready(Ok(()))
    ));
    p.as_mut().start_send(2).unwrap();
    assert!(p.as_mut().poll_flush(&mut cx).is_pending());
    drop(rx);
    match p.as_mut().poll_flush(&mut cx) {
        Poll::Ready(Err(e)) => assert_eq!(e.0, 2),
        other => panic!("expected the item back, got {other:?}"),
    }
}
