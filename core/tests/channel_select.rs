//! `berth::channel::Select`, the `select!` macro and the timer channels (`after`, `at`, `tick`,
//! `never`) on every flavour.
//!
//! Every blocking scenario runs under a watchdog, so a lost wakeup fails in seconds instead of
//! hanging. No assertion depends on timing to pass: sleeps only give other threads the chance to
//! reach a waiting state (or `wait_until_asleep` checks that they did), and timer tests assert
//! lower bounds only ("not before it was due").

// Tests drive real std threads, atomics, locks and sleeps against the crate; core/clippy.toml
// forbids those in the crate's own code (which must go through its loom/shuttle facade), not here.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use berth::channel::{
    self, Receiver, RecvError, Select, SendError, Sender, TryRecvError, TrySelectError,
};
use berth::select;
use common::{current_tid, join, wait_until_asleep, with_watchdog, WATCHDOG_SECS};
use std::cell::Cell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The three buffered shapes every generic test runs on.
fn flavours() -> Vec<(&'static str, Sender<u64>, Receiver<u64>)> {
    let (a, b) = channel::bounded(4);
    let (c, d) = channel::bounded(1);
    let (e, f) = channel::unbounded();
    vec![
        ("bounded(4)", a, b),
        ("bounded(1)", c, d),
        ("unbounded", e, f),
    ]
}

#[test]
fn a_ready_receive_is_selected_and_completed() {
    for (name, tx, rx) in flavours() {
        tx.send(7).unwrap();
        let mut sel = Select::new();
        let i = sel.recv(&rx);
        let oper = sel.select();
        assert_eq!(oper.index(), i, "{name}");
        assert_eq!(oper.recv(&rx), Ok(7), "{name}");
        assert!(rx.is_empty(), "{name}");
    }
}

#[test]
fn exactly_one_operation_completes_when_several_are_ready() {
    let (tx1, rx1) = channel::unbounded::<u32>();
    let (tx2, rx2) = channel::bounded::<u32>(2);
    tx1.send(1).unwrap();
    tx2.send(2).unwrap();
    let mut sel = Select::new();
    let a = sel.recv(&rx1);
    let b = sel.recv(&rx2);
    let oper = sel.select();
    let (got, other) = if oper.index() == a {
        (oper.recv(&rx1), &rx2)
    } else {
        assert_eq!(oper.index(), b);
        (oper.recv(&rx2), &rx1)
    };
    assert!(got == Ok(1) || got == Ok(2));
    // The losing case took nothing.
    assert_eq!(other.len(), 1, "the other message stays in its channel");
}

#[test]
fn select_sleeps_until_a_send_on_any_flavour() {
    for (name, tx, rx) in flavours() {
        with_watchdog(WATCHDOG_SECS, name, move || {
            let (_keep, idle) = channel::unbounded::<u64>();
            let (tid_tx, tid_rx) = std::sync::mpsc::channel();
            let t = thread::spawn(move || {
                tid_tx.send(current_tid()).unwrap();
                select! {
                    recv(idle) -> _ => panic!("nothing is sent on the idle channel"),
                    recv(rx) -> msg => msg,
                }
            });
            wait_until_asleep(tid_rx.recv().unwrap(), "a select on two empty channels");
            tx.send(42).unwrap();
            assert_eq!(join(t), Ok(42));
        });
    }
}

#[test]
fn select_on_a_rendezvous_receive_takes_a_waiting_senders_value() {
    with_watchdog(WATCHDOG_SECS, "rendezvous recv", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let t = thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            tx.send(5) // completes only when the select takes it
        });
        wait_until_asleep(tid_rx.recv().unwrap(), "a rendezvous sender");
        let got = select! { recv(rx) -> m => m };
        assert_eq!(got, Ok(5));
        assert_eq!(join(t), Ok(()));
    });
}

#[test]
fn select_on_a_rendezvous_receive_wakes_when_a_sender_arrives() {
    with_watchdog(WATCHDOG_SECS, "rendezvous recv, sender later", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let t = thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            select! { recv(rx) -> m => m }
        });
        wait_until_asleep(tid_rx.recv().unwrap(), "a select on a rendezvous receive");
        tx.send(9).unwrap(); // returns once the selecting thread has the value
        assert_eq!(join(t), Ok(9));
    });
}

#[test]
fn select_on_a_rendezvous_send_completes_only_when_taken() {
    with_watchdog(WATCHDOG_SECS, "rendezvous send", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let taken = Arc::new(AtomicUsize::new(0));
        let t = {
            let taken = Arc::clone(&taken);
            thread::spawn(move || {
                let v = rx.recv().unwrap();
                taken.store(v as usize, SeqCst);
            })
        };
        // The select waits for a receiver; the receiver may come before or after it starts.
        let res = select! { send(tx, 11) -> r => r };
        assert_eq!(res, Ok(()));
        join(t);
        assert_eq!(
            taken.load(SeqCst),
            11,
            "the value was taken by the receiver"
        );
    });
}

#[test]
fn a_selected_rendezvous_send_waits_for_a_receiver_that_arrives_later() {
    with_watchdog(WATCHDOG_SECS, "rendezvous send, receiver later", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let t = thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            select! { send(tx, 3) -> r => r }
        });
        wait_until_asleep(tid_rx.recv().unwrap(), "a select on a rendezvous send");
        assert_eq!(rx.recv(), Ok(3));
        assert_eq!(join(t), Ok(()));
    });
}

#[test]
fn two_selects_meet_on_both_ends_of_a_rendezvous_channel() {
    with_watchdog(WATCHDOG_SECS, "select send vs select recv", || {
        for round in 0..50u32 {
            let (tx, rx) = channel::bounded::<u32>(0);
            let (_keep_a, idle_a) = channel::unbounded::<u32>();
            let (keep_b, _idle_b) = channel::bounded::<u32>(0);
            let sender = thread::spawn(move || {
                select! {
                    send(tx, round) -> r => r.map_err(|e| e.into_inner()),
                    send(keep_b, 0) -> _ => panic!("nobody receives on the idle channel"),
                }
            });
            let got = select! {
                recv(rx) -> m => m,
                recv(idle_a) -> _ => panic!("nothing is sent on the idle channel"),
            };
            assert_eq!(got, Ok(round));
            assert_eq!(join(sender), Ok(()));
        }
    });
}

#[test]
fn one_thread_selecting_both_ends_of_a_rendezvous_channel_does_not_meet_itself() {
    let (tx, rx) = channel::bounded::<u32>(0);
    let mut sel = Select::new();
    sel.send(&tx);
    sel.recv(&rx);
    assert!(sel.select_timeout(Duration::from_millis(20)).is_err());
}

#[test]
fn select_on_sends() {
    // A bounded channel with room is ready; a full one is not.
    let (tx_full, rx_full) = channel::bounded::<u32>(1);
    tx_full.send(0).unwrap();
    let (tx_room, rx_room) = channel::bounded::<u32>(1);
    let lazy = Cell::new(0);
    let make = |v: u32| {
        lazy.set(lazy.get() + 1);
        v
    };
    let r = select! {
        send(tx_full, make(1)) -> _ => "full",
        send(tx_room, make(2)) -> r => { r.unwrap(); "room" }
    };
    assert_eq!(r, "room");
    assert_eq!(
        lazy.get(),
        1,
        "only the selected send evaluates its message"
    );
    assert_eq!(rx_room.try_recv(), Ok(2));
    assert_eq!(rx_full.len(), 1);
    // An unbounded channel is always ready.
    let (tx, rx) = channel::unbounded::<u32>();
    let r = select! { send(tx, 5) -> r => r, default => panic!("unbounded is always ready") };
    assert_eq!(r, Ok(()));
    assert_eq!(rx.recv(), Ok(5));
}

#[test]
fn a_select_send_on_a_full_channel_wakes_when_room_is_made() {
    with_watchdog(WATCHDOG_SECS, "send on full", || {
        let (tx, rx) = channel::bounded::<u32>(1);
        tx.send(1).unwrap();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let t = thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            select! { send(tx, 2) -> r => r }
        });
        wait_until_asleep(tid_rx.recv().unwrap(), "a select on a full channel's send");
        assert_eq!(rx.recv(), Ok(1));
        assert_eq!(join(t), Ok(()));
        assert_eq!(rx.recv(), Ok(2));
    });
}

#[test]
fn disconnected_operations_are_ready_and_report_the_error() {
    for (name, tx, rx) in flavours() {
        drop(tx);
        let r = select! { recv(rx) -> m => m, default => panic!("{name}: a disconnected receive is ready") };
        assert_eq!(r, Err(RecvError), "{name}");
    }
    let (tx, rx) = channel::bounded::<u32>(0);
    drop(rx);
    let r = select! { send(tx, 4) -> r => r, default => panic!("a disconnected send is ready") };
    assert_eq!(r, Err(SendError(4)), "the message comes back");
}

#[test]
fn a_blocked_select_wakes_on_disconnect() {
    for (name, tx, rx) in flavours() {
        with_watchdog(WATCHDOG_SECS, name, move || {
            let (tid_tx, tid_rx) = std::sync::mpsc::channel();
            let t = thread::spawn(move || {
                tid_tx.send(current_tid()).unwrap();
                select! { recv(rx) -> m => m }
            });
            wait_until_asleep(tid_rx.recv().unwrap(), "a select on an empty channel");
            drop(tx);
            assert_eq!(join(t), Err(RecvError));
        });
    }
    with_watchdog(WATCHDOG_SECS, "rendezvous", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let t = thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            select! { send(tx, 8) -> r => r }
        });
        wait_until_asleep(tid_rx.recv().unwrap(), "a select on a rendezvous send");
        drop(rx);
        assert_eq!(join(t), Err(SendError(8)));
    });
}

#[test]
fn try_select_and_timeouts() {
    let (tx, rx) = channel::unbounded::<u32>();
    let mut sel = Select::new();
    sel.recv(&rx);
    assert!(matches!(sel.try_select(), Err(TrySelectError)));
    let start = Instant::now();
    assert!(sel.select_timeout(Duration::from_millis(30)).is_err());
    assert!(
        start.elapsed() >= Duration::from_millis(30),
        "not before the timeout"
    );
    assert!(sel
        .select_deadline(Instant::now() + Duration::from_millis(5))
        .is_err());
    tx.send(1).unwrap();
    let oper = sel
        .select_timeout(Duration::from_secs(WATCHDOG_SECS))
        .unwrap();
    assert_eq!(oper.recv(&rx), Ok(1));
    let r = select! { recv(rx) -> _ => 0, default(Duration::from_millis(10)) => 1 };
    assert_eq!(r, 1);
}

#[test]
fn a_select_with_no_operations() {
    let mut sel = Select::new();
    assert!(sel.try_select().is_err());
    assert!(sel.select_timeout(Duration::from_millis(1)).is_err());
    let r = select! { default => 3 };
    assert_eq!(r, 3);
}

#[test]
#[should_panic(expected = "no operation was added, so it would wait forever")]
fn select_with_no_operations_panics_instead_of_hanging() {
    let _ = Select::new().select();
}

#[test]
#[should_panic(expected = "without completing it")]
fn dropping_a_selected_operation_panics() {
    let (tx, rx) = channel::unbounded::<u32>();
    tx.send(1).unwrap();
    let mut sel = Select::new();
    sel.recv(&rx);
    let oper = sel.select();
    drop(oper);
}

#[test]
#[should_panic(expected = "is not a receive on this receiver's channel")]
fn completing_with_another_channel_panics() {
    let (tx, rx) = channel::unbounded::<u32>();
    let (_tx2, rx2) = channel::unbounded::<u32>();
    tx.send(1).unwrap();
    let mut sel = Select::new();
    sel.recv(&rx);
    let oper = sel.select();
    let _ = oper.recv(&rx2);
}

#[test]
#[should_panic(expected = "is not a send on this sender's channel")]
fn completing_a_receive_as_a_send_panics() {
    let (tx, rx) = channel::unbounded::<u32>();
    tx.send(1).unwrap();
    let mut sel = Select::new();
    sel.recv(&rx);
    let oper = sel.select();
    let _ = oper.send(&tx, 2);
}

#[test]
fn removed_operations_are_not_selected() {
    let (tx1, rx1) = channel::unbounded::<u32>();
    let (tx2, rx2) = channel::unbounded::<u32>();
    tx1.send(1).unwrap();
    tx2.send(2).unwrap();
    let mut sel = Select::new();
    let a = sel.recv(&rx1);
    let b = sel.recv(&rx2);
    sel.remove(a);
    for _ in 0..10 {
        let oper = sel.select();
        assert_eq!(oper.index(), b);
        assert_eq!(oper.recv(&rx2), Ok(2));
        tx2.send(2).unwrap();
    }
    assert_eq!(rx1.len(), 1);
}

#[test]
#[should_panic(expected = "no operation at index 0")]
fn removing_twice_panics() {
    let (_tx, rx) = channel::unbounded::<u32>();
    let mut sel = Select::new();
    let i = sel.recv(&rx);
    sel.remove(i);
    sel.remove(i);
}

#[test]
fn ready_reports_without_consuming() {
    let (tx, rx) = channel::bounded::<u32>(2);
    let (_tx2, rx2) = channel::unbounded::<u32>();
    let mut sel = Select::new();
    let a = sel.recv(&rx);
    sel.recv(&rx2);
    assert!(sel.try_ready().is_err());
    tx.send(1).unwrap();
    assert_eq!(sel.ready(), a);
    assert_eq!(sel.try_ready(), Ok(a));
    assert_eq!(rx.len(), 1, "ready took nothing");
    assert_eq!(rx.try_recv(), Ok(1));
    assert!(sel.ready_timeout(Duration::from_millis(5)).is_err());
}

#[test]
fn ready_wakes_on_a_send_and_leaves_the_message() {
    with_watchdog(WATCHDOG_SECS, "ready", || {
        for (name, tx, rx) in flavours() {
            let (tid_tx, tid_rx) = std::sync::mpsc::channel();
            let t = thread::spawn(move || {
                tid_tx.send(current_tid()).unwrap();
                let mut sel = Select::new();
                sel.recv(&rx);
                sel.ready();
                rx.try_recv()
            });
            wait_until_asleep(tid_rx.recv().unwrap(), name);
            tx.send(6).unwrap();
            assert_eq!(join(t), Ok(6), "{name}");
        }
    });
}

#[test]
fn ready_on_a_rendezvous_receive_passes_on_the_senders_wakeup() {
    // A thread in `ready` and a thread blocked in `recv` wait on one rendezvous channel; a
    // sender wakes whichever is first. `ready` takes nothing, so the value must still reach the
    // blocked receiver.
    with_watchdog(WATCHDOG_SECS, "ready then recv", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let rx2 = rx.clone();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let readier = {
            let tid_tx = tid_tx.clone();
            thread::spawn(move || {
                tid_tx.send(current_tid()).unwrap();
                let mut sel = Select::new();
                sel.recv(&rx);
                sel.ready();
            })
        };
        wait_until_asleep(tid_rx.recv().unwrap(), "a thread in ready");
        let receiver = thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            rx2.recv()
        });
        wait_until_asleep(tid_rx.recv().unwrap(), "a blocked receiver");
        tx.send(1).unwrap();
        assert_eq!(join(receiver), Ok(1));
        join(readier);
    });
}

#[test]
fn the_choice_among_ready_operations_is_fair() {
    // Three channels that always hold a message: over 30,000 selects each must be chosen about
    // a third of the time. The bound (25% to 42%) is more than 19 standard deviations wide.
    let chans: Vec<_> = (0..3).map(|_| channel::unbounded::<u32>()).collect();
    for (tx, _) in &chans {
        tx.send(0).unwrap();
    }
    let mut counts = [0usize; 3];
    let rounds = if cfg!(miri) { 300 } else { 30_000 };
    for _ in 0..rounds {
        let mut sel = Select::new();
        for (_, rx) in &chans {
            sel.recv(rx);
        }
        let oper = sel.select();
        let i = oper.index();
        oper.recv(&chans[i].1).unwrap();
        chans[i].0.send(0).unwrap();
        counts[i] += 1;
    }
    for (i, &c) in counts.iter().enumerate() {
        let share = c as f64 / rounds as f64;
        assert!(
            (0.25..0.42).contains(&share),
            "operation {i} was chosen {c} times out of {rounds}: {counts:?}"
        );
    }
    // The same with one `Select` reused.
    let mut sel = Select::new();
    for (_, rx) in &chans {
        sel.recv(rx);
    }
    let mut counts = [0usize; 3];
    for _ in 0..rounds {
        let oper = sel.select();
        let i = oper.index();
        oper.recv(&chans[i].1).unwrap();
        chans[i].0.send(0).unwrap();
        counts[i] += 1;
    }
    assert!(counts.iter().all(|&c| c * 4 > rounds), "{counts:?}");
}

#[test]
fn macro_grammar() {
    let (tx, rx) = channel::unbounded::<u32>();
    let (tx2, rx2) = channel::bounded::<u32>(1);
    tx.send(1).unwrap();
    // Block bodies without commas, a trailing comma, references and owned handles.
    let r = select! {
        recv(&rx) -> m => {
            m.unwrap()
        }
        recv(rx2) -> m => m.unwrap() + 100,
    };
    assert_eq!(r, 1);
    // `break` from a body leaves the enclosing loop.
    let mut n = 0;
    loop {
        select! {
            send(tx2, 5) -> r => { r.unwrap(); n += 1; }
            default => break,
        }
    }
    assert_eq!(n, 1);
    assert_eq!(rx2.recv(), Ok(5));
    // Irrefutable patterns bind the result.
    tx.send(2).unwrap();
    select! {
        recv(rx) -> ref v => assert_eq!(*v, Ok(2)),
    }
    // A temporary handle lives for the whole select.
    let r = select! {
        recv(channel::after(Duration::from_millis(1))) -> t => t.is_ok(),
    };
    assert!(r);
    // Handles evaluated once.
    let evals = Cell::new(0);
    let get = || {
        evals.set(evals.get() + 1);
        &rx
    };
    tx.send(3).unwrap();
    select! { recv(get()) -> m => assert_eq!(m, Ok(3)) }
    assert_eq!(evals.get(), 1);
}

#[test]
fn timers_deliver_once_no_earlier_than_due() {
    let start = Instant::now();
    let a = channel::after(Duration::from_millis(20));
    assert_eq!(a.try_recv(), Err(TryRecvError::Empty));
    assert!(!a.is_disconnected());
    let t = a.recv().unwrap();
    assert!(t >= start + Duration::from_millis(20));
    assert!(Instant::now() >= t);
    assert_eq!(a.try_recv(), Err(TryRecvError::Empty), "delivered once");
    assert!(a.recv_timeout(Duration::from_millis(5)).is_err());
    assert!(!a.close(), "timer channels never disconnect");

    let when = Instant::now() + Duration::from_millis(5);
    assert_eq!(channel::at(when).recv(), Ok(when));
    let past = Instant::now();
    assert_eq!(channel::at(past).try_recv(), Ok(past));
    assert_eq!(
        channel::after(Duration::MAX).try_recv(),
        Err(TryRecvError::Empty)
    );

    let n = channel::never::<String>();
    assert!(n.recv_timeout(Duration::from_millis(5)).is_err());
    assert_eq!(n.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn tick_keeps_its_phase_and_drops_missed_ticks() {
    let period = Duration::from_millis(10);
    let start = Instant::now();
    let ticker = channel::tick(period);
    let first = ticker.recv().unwrap();
    assert!(first >= start + period);
    let second = ticker.recv().unwrap();
    let gap = second.duration_since(first);
    assert!(
        gap >= period && gap.as_nanos() % period.as_nanos() == 0,
        "ticks keep their phase: {gap:?}"
    );
    // Miss a few ticks: the next receive gets the latest due one, not a backlog.
    thread::sleep(period * 5);
    let late = ticker.try_recv().unwrap();
    assert!(late > second + period, "missed ticks are dropped");
    assert_eq!(late.duration_since(first).as_nanos() % period.as_nanos(), 0);
    assert!(Instant::now() >= late);
}

#[test]
fn select_with_timer_channels() {
    with_watchdog(WATCHDOG_SECS, "timers in select", || {
        let (_tx, rx) = channel::unbounded::<u32>();
        let start = Instant::now();
        let timeout = channel::after(Duration::from_millis(30));
        let r = select! {
            recv(rx) -> _ => "message",
            recv(timeout) -> t => { assert!(t.unwrap() >= start + Duration::from_millis(30)); "timeout" }
        };
        assert_eq!(r, "timeout");
        let ticker = channel::tick(Duration::from_millis(5));
        let mut ticks = 0;
        while ticks < 3 {
            select! {
                recv(rx) -> _ => unreachable!(),
                recv(ticker) -> _ => ticks += 1,
                recv(channel::never::<u32>()) -> _ => unreachable!(),
            }
        }
        assert!(start.elapsed() >= Duration::from_millis(45));
    });
}

#[test]
fn recv_async_on_timer_channels() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let start = Instant::now();
        let a = channel::after(Duration::from_millis(15));
        let t = a.recv_async().await.unwrap();
        assert!(t >= start + Duration::from_millis(15));
        let ticker = channel::tick(Duration::from_millis(3));
        for _ in 0..3 {
            ticker.recv_async().await.unwrap();
        }
        let never = channel::never::<u32>();
        let waited = tokio::time::timeout(Duration::from_millis(5), never.recv_async()).await;
        assert!(waited.is_err());
    });
}

/// Producers on several channels of every flavour, consumers looping over `select!` until all
/// are disconnected: every message exactly once.
#[test]
fn stress_exactly_once_across_flavours() {
    with_watchdog(WATCHDOG_SECS * 3, "select stress", || {
        let per = if cfg!(miri) { 20 } else { 5_000u64 };
        let (t0, r0) = channel::bounded::<u64>(0);
        let (t1, r1) = channel::bounded::<u64>(1);
        let (t2, r2) = channel::bounded::<u64>(16);
        let (t3, r3) = channel::unbounded::<u64>();
        let senders = [t0, t1, t2, t3];
        let producers: Vec<_> = senders
            .into_iter()
            .enumerate()
            .map(|(c, tx)| {
                thread::spawn(move || {
                    for i in 0..per {
                        tx.send((c as u64) << 32 | i).unwrap();
                    }
                })
            })
            .collect();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let (r0, r1, r2, r3) = (r0.clone(), r1.clone(), r2.clone(), r3.clone());
                let seen = Arc::clone(&seen);
                thread::spawn(move || {
                    let mut mine = Vec::new();
                    let mut open = [true; 4];
                    while open.iter().any(|&o| o) {
                        let mut sel = Select::new();
                        let rs = [&r0, &r1, &r2, &r3];
                        let mut idx = [usize::MAX; 4];
                        for c in 0..4 {
                            if open[c] {
                                idx[c] = sel.recv(rs[c]);
                            }
                        }
                        let oper = sel.select();
                        let c = idx.iter().position(|&i| i == oper.index()).unwrap();
                        match oper.recv(rs[c]) {
                            Ok(v) => mine.push(v),
                            Err(RecvError) => open[c] = false,
                        }
                    }
                    seen.lock().unwrap().extend(mine);
                })
            })
            .collect();
        drop((r0, r1, r2, r3));
        for p in producers {
            join(p);
        }
        for c in consumers {
            join(c);
        }
        let seen = seen.lock().unwrap();
        let distinct: HashSet<_> = seen.iter().copied().collect();
        assert_eq!(seen.len(), distinct.len(), "a message was received twice");
        assert_eq!(seen.len() as u64, 4 * per, "a message was lost");
    });
}

/// Senders selecting over two bounded channels, receivers draining both: exactly once.
#[test]
fn stress_select_sends() {
    with_watchdog(WATCHDOG_SECS * 3, "select send stress", || {
        let per = if cfg!(miri) { 20 } else { 5_000u64 };
        let (ta, ra) = channel::bounded::<u64>(1);
        let (tb, rb) = channel::bounded::<u64>(0);
        let producers: Vec<_> = (0..2u64)
            .map(|p| {
                let (ta, tb) = (ta.clone(), tb.clone());
                thread::spawn(move || {
                    for i in 0..per {
                        let v = p << 32 | i;
                        select! {
                            send(ta, v) -> r => r.unwrap(),
                            send(tb, v) -> r => r.unwrap(),
                        }
                    }
                })
            })
            .collect();
        drop((ta, tb));
        let consumers: Vec<_> = [ra, rb]
            .into_iter()
            .map(|r| thread::spawn(move || r.iter().collect::<Vec<_>>()))
            .collect();
        for p in producers {
            join(p);
        }
        let mut all: Vec<u64> = consumers.into_iter().flat_map(join).collect();
        all.sort_unstable();
        let expected: Vec<u64> = (0..2u64)
            .flat_map(|p| (0..per).map(move |i| p << 32 | i))
            .collect();
        let mut expected = expected;
        expected.sort_unstable();
        assert_eq!(all, expected);
    });
}

/// A select's losing case must not keep a registration that swallows a later wakeup: after many
/// selects over A and B that B wins, a thread blocked on A must still be woken by a send on A.
#[test]
fn losing_registrations_do_not_swallow_later_wakeups() {
    with_watchdog(WATCHDOG_SECS, "stale registration", || {
        for flavour in 0..3 {
            let (ta, ra) = match flavour {
                0 => channel::bounded::<u32>(1),
                1 => channel::bounded::<u32>(0),
                _ => channel::unbounded::<u32>(),
            };
            let (tb, rb) = channel::unbounded::<u32>();
            // A select that parks on both, then is won by B.
            let (tid_tx, tid_rx) = std::sync::mpsc::channel();
            let selector = {
                let ra = ra.clone();
                thread::spawn(move || {
                    tid_tx.send(current_tid()).unwrap();
                    select! {
                        recv(ra) -> _ => panic!("A is sent on only later"),
                        recv(rb) -> m => m.unwrap(),
                    }
                })
            };
            wait_until_asleep(tid_rx.recv().unwrap(), "a select on A and B");
            tb.send(1).unwrap();
            assert_eq!(join(selector), 1);
            // Now a plain receiver blocks on A; a send on A must reach it.
            let (tid_tx, tid_rx) = std::sync::mpsc::channel();
            let receiver = thread::spawn(move || {
                tid_tx.send(current_tid()).unwrap();
                ra.recv()
            });
            wait_until_asleep(tid_rx.recv().unwrap(), "a receiver on A");
            ta.send(2).unwrap();
            assert_eq!(join(receiver), Ok(2), "flavour {flavour}");
        }
    });
}

/// Two threads exchange values over two rendezvous channels, each looping a select over "send
/// to the other" and "receive from the other" (a program that is correct under
/// crossbeam-channel). Each select's send is ready only because the other select's receive is
/// waiting; if both selected their sends on that basis and withdrew their receives, both would
/// block in `send` with no receiver left on either channel. A select's rendezvous send must
/// claim the waiting select's receive, so that exactly one of them commits to each exchange.
/// (Found by the shuttle model `rendezvous_exchange_between_two_selects`; before the fix this
/// hung within a few thousand rounds.)
#[test]
fn two_selects_exchange_over_rendezvous_channels() {
    let rounds: u32 = if cfg!(miri) { 20 } else { 20_000 };
    with_watchdog(WATCHDOG_SECS, "two selects exchanging", move || {
        fn peer(out: &Sender<u32>, inc: &Receiver<u32>, rounds: u32) -> u64 {
            let (mut sent, mut got, mut sum) = (0, 0, 0u64);
            while sent < rounds || got < rounds {
                let mut sel = Select::new();
                let r = (got < rounds).then(|| sel.recv(inc));
                let s = (sent < rounds).then(|| sel.send(out));
                let oper = sel.select();
                if Some(oper.index()) == r {
                    sum += u64::from(oper.recv(inc).expect("the other peer is alive"));
                    got += 1;
                } else {
                    assert_eq!(Some(oper.index()), s);
                    oper.send(out, sent).expect("the other peer is alive");
                    sent += 1;
                }
            }
            sum
        }
        let (ab_tx, ab_rx) = channel::bounded::<u32>(0);
        let (ba_tx, ba_rx) = channel::bounded::<u32>(0);
        let a = thread::spawn(move || peer(&ab_tx, &ba_rx, rounds));
        let expect = u64::from(rounds) * u64::from(rounds - 1) / 2;
        assert_eq!(peer(&ba_tx, &ab_rx, rounds), expect);
        assert_eq!(join(a), expect);
    });
}

/// A selecting sender that claims a sleeping select's rendezvous receive and then leaves in
/// its message expression (here a `break`) releases the claim: the other select goes back to
/// waiting on all its cases, with its deadline, rather than being left in a receive it never
/// chose. (Found in review: before the fix it waited in a plain `recv` forever, deaf to its
/// stop channel.)
#[test]
fn a_send_abandoned_in_its_message_releases_the_claimed_select() {
    with_watchdog(WATCHDOG_SECS, "abandoned claim", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let (stop_tx, stop_rx) = channel::bounded::<()>(0);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let selecting = thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            select! {
                recv(rx) -> m => m.map(Some),
                recv(stop_rx) -> _ => Ok(None),
            }
        });
        wait_until_asleep(tid_rx.recv().unwrap(), "the selecting receiver");
        // A producer that selects a send, then finds it has nothing left to send.
        let mut messages = Vec::<u32>::new().into_iter();
        loop {
            select! {
                send(tx, match messages.next() { Some(m) => m, None => break }) -> r => r.unwrap(),
            }
        }
        stop_tx.send(()).unwrap();
        assert_eq!(
            join(selecting),
            Ok(None),
            "the select heard its stop channel"
        );
    });
}

/// `ready` on a rendezvous send reports ready only when a `try_send` can complete (a blocked
/// thread waits to receive), so the documented `ready` + `try_send` loop cannot spin: another
/// select's waiting receive does not count. (Found in review: it spun millions of times.)
#[test]
fn ready_on_a_rendezvous_send_matches_try_send() {
    with_watchdog(WATCHDOG_SECS, "ready matches try_send", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let (_keep, idle) = channel::bounded::<u32>(0);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let selecting = {
            let rx = rx.clone();
            thread::spawn(move || {
                tid_tx.send(current_tid()).unwrap();
                select! {
                    recv(rx) -> m => m,
                    recv(idle) -> m => m,
                }
            })
        };
        wait_until_asleep(tid_rx.recv().unwrap(), "the selecting receiver");
        let mut sel = Select::new();
        sel.send(&tx);
        assert!(
            sel.ready_timeout(Duration::from_millis(50)).is_err(),
            "a select's receive is not a partner for try_send"
        );
        assert!(tx.try_send(1).is_err());
        // A blocked thread is.
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let blocked = thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            rx.recv()
        });
        wait_until_asleep(tid_rx.recv().unwrap(), "the blocked receiver");
        assert_eq!(sel.ready(), 0);
        assert_eq!(tx.try_send(7), Ok(()));
        assert_eq!(join(blocked), Ok(7));
        // Let the select finish.
        tx.send(8).unwrap();
        assert_eq!(join(selecting), Ok(8));
    });
}

/// A `?` (or `return`, `break`) in a send's message expression is not an error, whichever
/// path selected the send: the send simply does not happen. (Found in review: when the
/// select had waited, the dropped `SelectedOperation` panicked.)
#[test]
fn an_early_exit_in_a_message_is_not_a_dropped_operation() {
    fn send_or_bail(tx: &Sender<u32>, msg: Result<u32, &'static str>) -> Result<(), &'static str> {
        select! {
            send(tx, msg?) -> r => r.map_err(|_| "disconnected")?,
        }
        Ok(())
    }
    with_watchdog(WATCHDOG_SECS, "early exit in a message", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        // The receiver arrives only once the sender's select sleeps: the slow path.
        let receiver = thread::spawn(move || {
            wait_until_asleep(tid_rx.recv().unwrap(), "the selecting sender");
            rx.recv_timeout(Duration::from_millis(200))
        });
        tid_tx.send(current_tid()).unwrap();
        assert_eq!(send_or_bail(&tx, Err("bail")), Err("bail"));
        assert!(join(receiver).is_err(), "nothing was sent");
    });
}

/// A selecting receiver that finds a selecting sender asleep claims it, and the sender's
/// message expression then leaves (a `break`): the abandoned send releases the receiver, which
/// goes back to waiting on all its cases and hears its stop channel.
#[test]
fn an_abandoned_send_releases_the_receive_that_claimed_it() {
    with_watchdog(WATCHDOG_SECS, "abandoned reverse claim", || {
        let (tx, rx) = channel::bounded::<u32>(0);
        let (stop_tx, stop_rx) = channel::bounded::<()>(0);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let sending = thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            let mut messages = Vec::<u32>::new().into_iter();
            loop {
                select! {
                    send(tx, match messages.next() { Some(m) => m, None => break }) -> r => r.unwrap(),
                }
            }
            stop_tx.send(()).unwrap();
        });
        // The sender sleeps in its select before the receiver looks: the receiver claims it.
        wait_until_asleep(tid_rx.recv().unwrap(), "the selecting sender");
        let got = select! {
            recv(rx) -> m => Some(m),
            recv(stop_rx) -> s => {
                s.unwrap();
                None
            }
        };
        assert_eq!(got, None, "the only message ever sent is the stop");
        join(sending);
    });
}

/// Four selecting senders and four selecting receivers on four rendezvous channels (the
/// `select_both` benchmark's shape): receivers claim sleeping senders and senders claim
/// sleeping receivers; every message arrives exactly once.
#[test]
fn selecting_senders_and_receivers_exchange_every_message_once() {
    with_watchdog(WATCHDOG_SECS, "select both", || {
        const PER: u64 = if cfg!(miri) { 20 } else { 5_000 };
        let chans: Vec<_> = (0..4).map(|_| channel::bounded::<u64>(0)).collect();
        let txs: Vec<Sender<u64>> = chans.iter().map(|(t, _)| t.clone()).collect();
        let rxs: Vec<Receiver<u64>> = chans.iter().map(|(_, r)| r.clone()).collect();
        drop(chans);
        let producers: Vec<_> = (0..4u64)
            .map(|p| {
                let txs = txs.clone();
                thread::spawn(move || {
                    for i in 0..PER {
                        select! {
                            send(txs[0], p * PER + i) -> r => r.unwrap(),
                            send(txs[1], p * PER + i) -> r => r.unwrap(),
                            send(txs[2], p * PER + i) -> r => r.unwrap(),
                            send(txs[3], p * PER + i) -> r => r.unwrap(),
                        }
                    }
                })
            })
            .collect();
        drop(txs);
        let consumers: Vec<_> = (0..4)
            .map(|_| {
                let rxs = rxs.clone();
                thread::spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        let m = select! {
                            recv(rxs[0]) -> m => m,
                            recv(rxs[1]) -> m => m,
                            recv(rxs[2]) -> m => m,
                            recv(rxs[3]) -> m => m,
                        };
                        match m {
                            Ok(v) => got.push(v),
                            // One channel is disconnected: every producer is done.
                            Err(_) => return got,
                        }
                    }
                })
            })
            .collect();
        drop(rxs);
        for p in producers {
            join(p);
        }
        let mut all: Vec<u64> = consumers.into_iter().flat_map(join).collect();
        all.sort_unstable();
        assert_eq!(
            all,
            (0..4 * PER).collect::<Vec<_>>(),
            "every message exactly once"
        );
    });
}
