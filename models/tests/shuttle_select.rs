//! shuttle models of `berth::channel::Select` and the `select!` macro: up to 6 threads, 2 to 4
//! channels of every flavour (`bounded(1)`, `bounded(0)` rendezvous, `unbounded`) and dozens of
//! operations, more than the loom models (`loom_select.rs`) can explore exhaustively, under
//! shuttle's random and PCT schedulers. Build with `--cfg shuttle` (`RUSTFLAGS="--cfg shuttle"
//! CARGO_TARGET_DIR=target/shuttle cargo test -p berth-models --release --test shuttle_select`).
//!
//! The models check that every message is delivered exactly once and in per-channel FIFO order
//! (per consumer); that a disconnected operation is ready and reports its error, a receive only
//! after the messages sent before the disconnection; that a send selected on a rendezvous
//! channel returns `Ok` only for a value a receiver took (and a failed one hands its value back);
//! that a select that completes, gives up or leaves withdraws its other registrations and passes
//! on a wakeup it was chosen for; and that nothing hangs (shuttle reports `deadlock!` with the
//! names of the blocked threads).
//!
//! Timeouts: the models have no clock. A timed select (`select_timeout`, `default(timeout)`)
//! times out after its first park, and that park returns at once (`core/src/park`), so under
//! shuttle a timed select is: try, register, re-check, take a token if one raced in, poll again,
//! give up and withdraw. That withdrawal racing the producers is what the models check; the
//! duration means nothing here.
//!
//! Under the models a select's random start is a fixed sequence (`crate::sync::MODEL`): a fresh
//! `Select` always starts at the same operation. So the consumers below reuse one `Select`
//! across rounds, or rotate the order of their cases, to vary which ready operation is chosen.
//!
//! Budget: `SHUTTLE_ITERATIONS` schedules per scheduler (default 200). A failure prints
//! shuttle's encoded schedule; rerun exactly that schedule with `SHUTTLE_REPLAY='<schedule>'`
//! and the test's name as the filter.
//!
//! Shuttle does not model weak memory (loom does); these are for the interleavings of many
//! threads and many rounds of selects.
#![cfg(shuttle)]

use berth::channel::{
    self, Receiver, RecvError, Select, SelectedOperation, SendError, Sender, TrySelectError,
};
use berth::select;
use berth_models::trace;
use shuttle::thread;
use std::collections::VecDeque;
use std::time::Duration;

fn iterations() -> usize {
    std::env::var("SHUTTLE_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

/// Runs `f` under the random and the PCT scheduler, or replays one schedule.
fn check(f: impl Fn() + Send + Sync + Clone + 'static) {
    check_times(1, f);
}

/// `check` with `times` the budget, for a model whose losing schedule is rare among random
/// ones (a few in a thousand) but that runs in microseconds.
fn check_times(times: usize, f: impl Fn() + Send + Sync + Clone + 'static) {
    if let Ok(schedule) = std::env::var("SHUTTLE_REPLAY") {
        shuttle::replay(f, &schedule);
        return;
    }
    shuttle::check_random(f.clone(), times * iterations());
    shuttle::check_pct(f, times * iterations(), 3);
}

/// Spawns a named shuttle thread (a deadlock report names the blocked threads).
fn spawn<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .unwrap()
}

/// Channel `c` of a model: `bounded(1)`, `bounded(0)` (rendezvous), `unbounded`, in turn.
fn flavour(c: usize) -> (Sender<u32>, Receiver<u32>) {
    match c % 3 {
        0 => channel::bounded(1),
        1 => channel::bounded(0),
        _ => channel::unbounded(),
    }
}

/// The `i`-th message of channel `c`.
fn msg(c: usize, i: u32) -> u32 {
    c as u32 * 100 + i
}

/// Spawns `producer-{c}`, which sends `per` messages on channel `c` and then drops its sender.
fn producer(c: usize, tx: Sender<u32>, per: u32) -> thread::JoinHandle<()> {
    spawn(&format!("producer-{c}"), move || {
        for i in 0..per {
            tx.send(msg(c, i))
                .expect("a receiver is alive until the channel is drained");
        }
    })
}

/// Spawns one producer per sender, channel `c` for the `c`-th.
fn producers(txs: Vec<Sender<u32>>, per: u32) -> Vec<thread::JoinHandle<()>> {
    txs.into_iter()
        .enumerate()
        .map(|(c, tx)| producer(c, tx, per))
        .collect()
}

/// What a consumer received: `(channel, message)` in the order it received them.
type Received = Vec<(usize, u32)>;

/// Panics unless each consumer received each channel's messages in order, and all of them
/// together received each of the `per[c]` messages of each channel `c` exactly once.
fn verdict(consumers: &[Received], per: &[u32]) {
    for (k, got) in consumers.iter().enumerate() {
        for c in 0..per.len() {
            let mine: Vec<u32> = got.iter().filter(|m| m.0 == c).map(|m| m.1).collect();
            assert!(
                mine.windows(2).all(|w| w[0] < w[1]),
                "consumer {k} received channel {c} out of order: {mine:?} (all it got: {got:?})"
            );
        }
    }
    let mut all: Vec<u32> = consumers.iter().flatten().map(|m| m.1).collect();
    all.sort_unstable();
    let expected: Vec<u32> = per
        .iter()
        .enumerate()
        .flat_map(|(c, &n)| (0..n).map(move |i| msg(c, i)))
        .collect();
    assert_eq!(
        all, expected,
        "a message was lost or received twice (per consumer: {consumers:?})"
    );
}

/// A consumer on one `Select`, reused across rounds: receives on every channel until each is
/// disconnected (then removes its operation). `first` is the channel added first (they are
/// added in turn from it), so that consumers differ; channels are reported by their number.
fn select_consumer(rxs: &[Receiver<u32>], first: usize) -> Received {
    let n = rxs.len();
    let order: Vec<usize> = (0..n).map(|k| (first + k) % n).collect();
    let mut sel = Select::new();
    let index: Vec<usize> = order.iter().map(|&c| sel.recv(&rxs[c])).collect();
    let mut live = n;
    let mut got = Vec::new();
    while live > 0 {
        let oper = sel.select();
        let i = oper.index();
        let c = order[index
            .iter()
            .position(|&x| x == i)
            .expect("a live operation was selected")];
        match oper.recv(&rxs[c]) {
            Ok(v) => got.push((c, v)),
            Err(RecvError) => {
                sel.remove(i);
                live -= 1;
            }
        }
    }
    got
}

/// How many times a consumer with a `default` gives up (finds nothing ready, or times out)
/// before it waits for good: a bound, so that PCT cannot starve the producers behind a consumer
/// that never blocks.
const GIVE_UPS: usize = 3;

/// A consumer looping over `select!` on three channels until each is disconnected: a
/// disconnected channel's case is replaced by `never()` (always ready otherwise, it would be
/// chosen again and again), and the cases are rotated each round to vary the choice. With
/// `timed`, it has a `default(timeout)` case until it has timed out `GIVE_UPS` times.
fn macro_consumer(rxs: &[Receiver<u32>], timed: bool) -> Received {
    let never = channel::never();
    let mut open = [true; 3];
    let mut got = Vec::new();
    let mut gave_up = 0;
    let mut round = 0;
    while open.contains(&true) {
        let pick = |k: usize| {
            let c = (k + round) % 3;
            (c, if open[c] { &rxs[c] } else { &never })
        };
        let ((c0, r0), (c1, r1), (c2, r2)) = (pick(0), pick(1), pick(2));
        round += 1;
        let done = if timed && gave_up < GIVE_UPS {
            select! {
                recv(r0) -> m => Some((c0, m)),
                recv(r1) -> m => Some((c1, m)),
                recv(r2) -> m => Some((c2, m)),
                default(Duration::from_millis(1)) => None,
            }
        } else {
            select! {
                recv(r0) -> m => Some((c0, m)),
                recv(r1) -> m => Some((c1, m)),
                recv(r2) -> m => Some((c2, m)),
            }
        };
        match done {
            Some((c, Ok(v))) => got.push((c, v)),
            Some((c, Err(RecvError))) => open[c] = false,
            None => gave_up += 1,
        }
    }
    got
}

/// A consumer on one reused `Select`: `try_select`, and if nothing is ready `select_timeout`,
/// until it has given up `GIVE_UPS` times; then `select`.
fn trying_consumer(rxs: &[Receiver<u32>]) -> Received {
    let mut sel = Select::new();
    let index: Vec<usize> = rxs.iter().map(|r| sel.recv(r)).collect();
    // Completes a selected receive: (its index, its channel, what it received).
    let complete = |oper: SelectedOperation<'_>| {
        let i = oper.index();
        let c = index
            .iter()
            .position(|&x| x == i)
            .expect("a live operation was selected");
        (i, c, oper.recv(&rxs[c]))
    };
    let mut live = rxs.len();
    let mut got = Vec::new();
    let mut gave_up = 0;
    while live > 0 {
        let done = if gave_up >= GIVE_UPS {
            Some(complete(sel.select()))
        } else {
            match sel.try_select().map(&complete) {
                Ok(done) => Some(done),
                // Nothing ready now: wait (under the models, one park) before giving up.
                Err(TrySelectError) => sel
                    .select_timeout(Duration::from_millis(1))
                    .map(&complete)
                    .ok(),
            }
        };
        match done {
            Some((_, c, Ok(v))) => got.push((c, v)),
            Some((i, _, Err(RecvError))) => {
                sel.remove(i);
                live -= 1;
            }
            None => gave_up += 1,
        }
    }
    got
}

/// Three producers, one on each flavour (bounded(1), rendezvous, unbounded), 6 messages each;
/// two consumers, one reusing a `Select`, one looping over `select!`, both until every channel
/// is disconnected and drained: exactly once, per-channel FIFO, no hang. 6 threads.
#[test]
fn consumers_drain_every_flavour_exactly_once() {
    const PER: u32 = 6;
    check(|| {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..3).map(flavour).unzip();
        let producers = producers(txs, PER);
        let by_select = {
            let rxs = rxs.clone();
            spawn("select-consumer", move || select_consumer(&rxs, 0))
        };
        let by_macro = {
            let rxs = rxs.clone();
            spawn("macro-consumer", move || macro_consumer(&rxs, false))
        };
        drop(rxs);
        for p in producers {
            p.join().unwrap();
        }
        let got = [by_select.join().unwrap(), by_macro.join().unwrap()];
        verdict(&got, &[PER; 3]);
    });
}

/// Four channels (bounded(1), rendezvous, unbounded, rendezvous), 4 messages each, drained by
/// two consumers on a reused `Select` each (this thread and one more), which add the channels
/// in different orders: exactly once, per-channel FIFO, no hang. 6 threads.
#[test]
fn two_select_consumers_on_four_channels() {
    const PER: u32 = 4;
    check(|| {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..4).map(flavour).unzip();
        let producers = producers(txs, PER);
        let other = {
            let rxs = rxs.clone();
            spawn("select-consumer", move || select_consumer(&rxs, 2))
        };
        let mine = select_consumer(&rxs, 1);
        drop(rxs);
        for p in producers {
            p.join().unwrap();
        }
        verdict(&[mine, other.join().unwrap()], &[PER; 4]);
    });
}

/// Selects that give up, against three producers (bounded(1), rendezvous, unbounded; 4
/// messages each): one consumer on `select!` with `default(timeout)`, one on `try_select` then
/// `select_timeout` (each giving up at most 3 times before it waits for good), and this thread
/// on a plain `select` loop. A select that gives up must take nothing (no message lost) and
/// must pass on a wakeup it was chosen for (no consumer left asleep beside a message: no hang);
/// exactly once, per-channel FIFO. 6 threads.
#[test]
fn selects_that_give_up_take_nothing() {
    const PER: u32 = 4;
    check(|| {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..3).map(flavour).unzip();
        let producers = producers(txs, PER);
        let timed = {
            let rxs = rxs.clone();
            spawn("timed-macro-consumer", move || macro_consumer(&rxs, true))
        };
        let trying = {
            let rxs = rxs.clone();
            spawn("trying-consumer", move || trying_consumer(&rxs))
        };
        let mine = select_consumer(&rxs, 1);
        drop(rxs);
        for p in producers {
            p.join().unwrap();
        }
        verdict(
            &[timed.join().unwrap(), trying.join().unwrap(), mine],
            &[PER; 3],
        );
    });
}

/// What a relay did: the values its sends on the rendezvous channel returned `Ok` for. (A relay
/// returns only once it has passed on every value it received.)
struct Relayed {
    sent_on_zero: Vec<u32>,
}

/// Whether a relay offers its value on the bounded(1) channel in round `round`: every third
/// round, and always once the rendezvous channel is disconnected. (Offered both every round,
/// the bounded channel's room nearly always wins over the rendezvous channel, which is ready
/// only while the sink's receive waits on it.)
fn offer_one(zero_open: bool, round: usize) -> bool {
    !zero_open || round % 3 == 2
}

/// A relay on one `Select` per round, mixing a receive and two sends: it receives from `input`
/// while that is open, and, while it holds values, offers the oldest on the rendezvous channel
/// `zero` (until that is disconnected) and, see [`offer_one`], on the bounded(1) channel `one`.
/// Values are tagged with the relay: `v * 10 + tag`.
fn select_relay(input: &Receiver<u32>, zero: Sender<u32>, one: &Sender<u32>, tag: u32) -> Relayed {
    let mut held: VecDeque<u32> = VecDeque::new();
    let mut input_open = true;
    let mut zero_open = true;
    let mut sent_on_zero = Vec::new();
    for round in 0.. {
        let mut sel = Select::new();
        let r = input_open.then(|| sel.recv(input));
        let z = (zero_open && !held.is_empty()).then(|| sel.send(&zero));
        let o = (!held.is_empty() && offer_one(zero_open, round)).then(|| sel.send(one));
        if r.is_none() && z.is_none() && o.is_none() {
            break;
        }
        let oper = sel.select();
        let i = Some(oper.index());
        if i == r {
            match oper.recv(input) {
                Ok(v) => held.push_back(v * 10 + tag),
                Err(RecvError) => input_open = false,
            }
        } else if i == z {
            let v = held.pop_front().expect("offered only while holding");
            match oper.send(&zero, v) {
                Ok(()) => sent_on_zero.push(v),
                Err(SendError(back)) => {
                    held.push_front(back);
                    zero_open = false;
                }
            }
        } else {
            assert_eq!(i, o);
            let v = held.pop_front().expect("offered only while holding");
            oper.send(one, v)
                .expect("the sink drains `one` until it is disconnected");
        }
    }
    // Leaving: the sink learns that this relay is done from the disconnection.
    drop(zero);
    Relayed { sent_on_zero }
}

/// The same relay on `select!`: an operation that must not be offered is pointed at a channel
/// that is never ready (`never()` for the receive; for the sends, a rendezvous channel whose
/// receiver is kept and never receives), and a send's message is taken only if it is selected.
fn macro_relay(input: &Receiver<u32>, zero: Sender<u32>, one: &Sender<u32>, tag: u32) -> Relayed {
    let never = channel::never();
    let (idle, _idle_rx) = channel::bounded::<u32>(0);
    let mut held: VecDeque<u32> = VecDeque::new();
    let mut input_open = true;
    let mut zero_open = true;
    let mut sent_on_zero = Vec::new();
    let mut round = 0;
    while input_open || !held.is_empty() {
        let r = if input_open { input } else { &never };
        let z = if zero_open && !held.is_empty() {
            &zero
        } else {
            &idle
        };
        let o = if !held.is_empty() && offer_one(zero_open, round) {
            one
        } else {
            &idle
        };
        round += 1;
        let front = held.front().copied();
        select! {
            recv(r) -> m => match m {
                Ok(v) => held.push_back(v * 10 + tag),
                Err(RecvError) => input_open = false,
            },
            send(z, held.pop_front().expect("offered only while holding")) -> res => match res {
                Ok(()) => sent_on_zero.push(front.expect("offered only while holding")),
                Err(SendError(back)) => {
                    held.push_front(back);
                    zero_open = false;
                }
            },
            send(o, held.pop_front().expect("offered only while holding")) -> res => {
                res.expect("the sink drains `one` until it is disconnected");
            }
        }
    }
    drop(zero);
    Relayed { sent_on_zero }
}

/// Two sources (plain sends into one unbounded channel, 5 values each); two relays mixing a
/// receive and two sends in each select (one relay on `Select`, one on `select!`); and a sink
/// (this thread) selecting over a rendezvous channel and a bounded(1) one, which takes 3 values
/// from the rendezvous channel and then drops it, disconnecting it under the relays' selects.
/// Exactly once end to end; per-source FIFO through each relay and channel; the relays'
/// rendezvous sends returned `Ok` for exactly the values the sink took from that channel (a send
/// that completed with no receiver taking its value would lose it), and one that failed handed
/// its value back to be relayed on the other channel. 5 threads.
#[test]
fn relays_mixing_sends_and_receives_conserve_messages() {
    const PER: u32 = 5;
    const TAKE_FROM_ZERO: usize = 3;
    check(|| {
        let (in_tx, in_rx) = channel::unbounded::<u32>();
        let (zero_tx, zero_rx) = channel::bounded::<u32>(0);
        let (one_tx, one_rx) = channel::bounded::<u32>(1);
        let sources: Vec<_> = (0..2)
            .map(|s| {
                let tx = in_tx.clone();
                spawn(&format!("source-{s}"), move || {
                    for i in 0..PER {
                        tx.send(msg(s, i)).unwrap();
                    }
                })
            })
            .collect();
        drop(in_tx);
        let relays: Vec<_> = (0..2u32)
            .map(|tag| {
                let (input, zero, one) = (in_rx.clone(), zero_tx.clone(), one_tx.clone());
                spawn(&format!("relay-{tag}"), move || {
                    if tag == 0 {
                        select_relay(&input, zero, &one, tag)
                    } else {
                        macro_relay(&input, zero, &one, tag)
                    }
                })
            })
            .collect();
        drop((in_rx, zero_tx, one_tx));

        // The sink.
        let mut zero_rx = Some(zero_rx);
        let mut one_open = true;
        let (mut from_zero, mut from_one) = (Vec::new(), Vec::new());
        let mut round = 0;
        while zero_rx.is_some() || one_open {
            let mut sel = Select::new();
            // Alternate the order the operations are added in, to vary the choice.
            let (mut z, mut o) = (None, None);
            for k in 0..2 {
                match (k + round) % 2 {
                    0 => z = zero_rx.as_ref().map(|r| sel.recv(r)),
                    _ => o = one_open.then(|| sel.recv(&one_rx)),
                }
            }
            round += 1;
            let oper = sel.select();
            let i = Some(oper.index());
            if i == z {
                let taken = oper.recv(zero_rx.as_ref().expect("selected"));
                drop(sel);
                match taken {
                    Ok(v) => {
                        from_zero.push(v);
                        if from_zero.len() == TAKE_FROM_ZERO {
                            // Disconnect the rendezvous channel under the relays.
                            zero_rx = None;
                        }
                    }
                    Err(RecvError) => zero_rx = None,
                }
            } else {
                assert_eq!(i, o);
                match oper.recv(&one_rx) {
                    Ok(v) => from_one.push(v),
                    Err(RecvError) => one_open = false,
                }
            }
        }
        for s in sources {
            s.join().unwrap();
        }
        let relayed: Vec<Relayed> = relays.into_iter().map(|r| r.join().unwrap()).collect();

        for (name, got) in [("rendezvous", &from_zero), ("bounded(1)", &from_one)] {
            for tag in 0..2 {
                for s in 0..2 {
                    let mine: Vec<u32> = got
                        .iter()
                        .copied()
                        .filter(|&x| x % 10 == tag && x / 10 / 100 == s)
                        .collect();
                    assert!(
                        mine.windows(2).all(|w| w[0] < w[1]),
                        "source {s}'s values through relay {tag} and the {name} channel were \
                         reordered: {got:?}"
                    );
                }
            }
        }
        let mut sent_on_zero: Vec<u32> = relayed
            .iter()
            .flat_map(|r| r.sent_on_zero.iter().copied())
            .collect();
        sent_on_zero.sort_unstable();
        let mut taken = from_zero.clone();
        taken.sort_unstable();
        assert_eq!(
            sent_on_zero, taken,
            "the relays' rendezvous sends returned Ok for other values than the sink took from \
             that channel"
        );
        let mut all: Vec<u32> = from_zero.iter().chain(&from_one).map(|x| x / 10).collect();
        all.sort_unstable();
        let expected: Vec<u32> = (0..2)
            .flat_map(|s| (0..PER).map(move |i| msg(s, i)))
            .collect();
        assert_eq!(
            all, expected,
            "a value was lost or relayed twice (rendezvous: {from_zero:?}, bounded(1): \
             {from_one:?})"
        );
    });
}

/// This thread selects over a receive on a bounded(1) channel whose producer sends 3 values and
/// then drops its sender, a receive on an unbounded channel whose producer sends one value and
/// drops its sender, and a send on a rendezvous channel whose two receivers take 2 and 1 values
/// (each giving up a wait up to 3 times first) and then drop their receivers: each disconnected
/// operation is reported ready with its error,
/// a receive only after every value sent before the disconnection (none lost), a send with its
/// own value handed back; the rendezvous sends that returned `Ok` are exactly the values the
/// receivers took; nothing hangs. Afterwards a select that does not wait finds the disconnected
/// operations ready (it does not take `default`). 5 threads.
#[test]
fn a_select_sees_disconnects_from_both_sides() {
    check(|| {
        let (a_tx, a_rx) = channel::bounded::<u32>(1);
        let (u_tx, u_rx) = channel::unbounded::<u32>();
        let (z_tx, z_rx) = channel::bounded::<u32>(0);
        let pa = producer(0, a_tx, 3);
        let pu = producer(2, u_tx, 1);
        let takers: Vec<_> = [2, 1]
            .into_iter()
            .enumerate()
            .map(|(k, n)| {
                let rx = z_rx.clone();
                spawn(&format!("taker-{k}"), move || {
                    // Gives up a few times first: a select's send may see this receiver
                    // waiting, and must then wait for the next when it withdraws.
                    let (mut got, mut gave_up) = (Vec::new(), 0);
                    while got.len() < n {
                        if gave_up < GIVE_UPS {
                            match rx.recv_timeout(Duration::from_millis(1)) {
                                Ok(v) => got.push(v),
                                Err(e) => {
                                    assert!(e.is_timeout(), "the sender is alive");
                                    gave_up += 1;
                                }
                            }
                        } else {
                            got.push(rx.recv().expect("the sender is alive"));
                        }
                    }
                    got
                })
            })
            .collect();
        drop(z_rx);

        let (mut from_a, mut from_u, mut sent_z) = (Vec::new(), Vec::new(), Vec::new());
        let mut handed_back = None;
        let mut sel = Select::new();
        let iz = sel.send(&z_tx);
        let ia = sel.recv(&a_rx);
        let iu = sel.recv(&u_rx);
        let mut live = 3;
        while live > 0 {
            let oper = sel.select();
            let i = oper.index();
            if i == ia {
                match oper.recv(&a_rx) {
                    Ok(v) => from_a.push(v),
                    Err(RecvError) => {
                        assert_eq!(
                            from_a,
                            [msg(0, 0), msg(0, 1), msg(0, 2)],
                            "the bounded channel's disconnection was reported before the values \
                             sent before it"
                        );
                        sel.remove(ia);
                        live -= 1;
                    }
                }
            } else if i == iu {
                match oper.recv(&u_rx) {
                    Ok(v) => from_u.push(v),
                    Err(RecvError) => {
                        assert_eq!(
                            from_u,
                            [msg(2, 0)],
                            "the unbounded channel's disconnection was reported before the \
                             value sent before it"
                        );
                        sel.remove(iu);
                        live -= 1;
                    }
                }
            } else {
                assert_eq!(i, iz);
                let next = sent_z.len() as u32;
                match oper.send(&z_tx, next) {
                    Ok(()) => sent_z.push(next),
                    Err(SendError(back)) => {
                        handed_back = Some(back);
                        sel.remove(iz);
                        live -= 1;
                    }
                }
            }
        }
        drop(sel);
        let mut taken: Vec<u32> = takers.into_iter().flat_map(|t| t.join().unwrap()).collect();
        taken.sort_unstable();
        assert_eq!(
            sent_z, taken,
            "the rendezvous sends that returned Ok are not the values the receivers took"
        );
        assert_eq!(
            handed_back,
            Some(3),
            "the failed rendezvous send did not hand back its own value"
        );
        pa.join().unwrap();
        pu.join().unwrap();
        let now = select! {
            recv(a_rx) -> m => m,
            recv(u_rx) -> m => m,
            send(z_tx, 9) -> r => r.map(|()| 9).map_err(|_| RecvError),
            default => panic!("a select that does not wait found no disconnected operation ready"),
        };
        assert_eq!(
            now,
            Err(RecvError),
            "a disconnected operation reports its error"
        );
    });
}

/// A consumer completes one select over three channels (bounded(1), rendezvous, unbounded) and
/// leaves, while plain receivers block on the first two, producers push 3 values into each of
/// those, and this thread sends one value on the third: whatever the select registered and lost
/// must be withdrawn, and a wakeup it was chosen for passed on, or the receiver queued behind it
/// sleeps beside a value while the producer waits for room (bounded) or for a taker
/// (rendezvous). The withdrawal races the producers' notifications here; see
/// `a_select_that_left_strands_no_receiver` for the deterministic shape. 6 threads.
#[test]
fn a_consumer_leaving_after_one_select_strands_nobody() {
    const PER: u32 = 3;
    check(|| {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..3).map(flavour).unzip();
        let leaver = {
            let (r0, r1, r2) = (rxs[0].clone(), rxs[1].clone(), rxs[2].clone());
            spawn("leaver", move || {
                select! {
                    recv(r0) -> m => (0, m),
                    recv(r1) -> m => (1, m),
                    recv(r2) -> m => (2, m),
                }
                // Leaves, dropping its handles (the channels keep other receivers).
            })
        };
        let stayers: Vec<_> = rxs[..2]
            .iter()
            .enumerate()
            .map(|(c, r)| {
                let r = r.clone();
                spawn(&format!("receiver-{c}"), move || {
                    r.iter().collect::<Vec<u32>>()
                })
            })
            .collect();
        let mut txs = txs.into_iter();
        let producers: Vec<_> = (0..2)
            .map(|c| producer(c, txs.next().expect("three"), PER))
            .collect();
        // The unbounded channel gets one value, from this thread; its sender stays.
        let u_tx = txs.next().expect("three");
        u_tx.send(msg(2, 0)).unwrap();
        let (c, m) = leaver.join().unwrap();
        for p in producers {
            p.join().unwrap();
        }
        let mut got: Vec<Received> = stayers
            .into_iter()
            .enumerate()
            .map(|(c, s)| s.join().unwrap().into_iter().map(|v| (c, v)).collect())
            .collect();
        let mut leaver_got = Vec::new();
        match m {
            Ok(v) => leaver_got.push((c, v)),
            Err(RecvError) => assert!(c < 2, "channel {c} was never disconnected"),
        }
        // The unbounded channel's value: taken by the leaver, or still there.
        while let Ok(v) = rxs[2].try_recv() {
            leaver_got.push((2, v));
        }
        got.push(leaver_got);
        drop(u_tx);
        verdict(&got, &[PER, PER, 1]);
    });
}

/// A select over a bounded(1) channel A, a rendezvous channel Z and a rendezvous channel U,
/// completed on U by this thread's select on a send into U, must leave nothing registered on A
/// and Z: the receivers that then block on A and Z, each behind where the select's entry was,
/// must be woken by the producers that push 3 values into each. This thread's send is ready
/// only once the select's receive waits on U, so the select has registered on A and Z (in the
/// same pass) before it completes on U; after it, the receivers and the producers race. A
/// registration left behind is woken by the next send in place of the receiver queued behind
/// it, which sleeps beside the value while the producer waits for room (A) or for a taker (Z):
/// shuttle reports the deadlock (the mutant `select_keeps_losing_registration`, within a few
/// schedules). 6 threads.
#[test]
fn a_select_that_left_strands_no_receiver() {
    const PER: u32 = 3;
    check(|| {
        let (a_tx, a_rx) = channel::bounded::<u32>(1);
        let (z_tx, z_rx) = channel::bounded::<u32>(0);
        let (u_tx, u_rx) = channel::bounded::<u32>(0);
        let selector = {
            let (a, z) = (a_rx.clone(), z_rx.clone());
            spawn("selector", move || {
                select! {
                    recv(a) -> m => panic!("nothing is sent on A yet, got {m:?}"),
                    recv(z) -> m => panic!("nothing is sent on Z yet, got {m:?}"),
                    recv(u_rx) -> m => m,
                }
            })
        };
        let sent = select! { send(u_tx, 7) -> r => r };
        assert_eq!(sent, Ok(()), "the rendezvous send failed");
        assert_eq!(
            selector.join().unwrap(),
            Ok(7),
            "the rendezvous send completed, but the select did not receive its value"
        );
        let receivers: Vec<_> = [a_rx, z_rx]
            .into_iter()
            .enumerate()
            .map(|(c, r)| {
                spawn(&format!("receiver-{c}"), move || {
                    r.iter().collect::<Vec<u32>>()
                })
            })
            .collect();
        for p in [producer(0, a_tx, PER), producer(1, z_tx, PER)] {
            p.join().unwrap();
        }
        let got: Vec<Received> = receivers
            .into_iter()
            .enumerate()
            .map(|(c, r)| r.join().unwrap().into_iter().map(|v| (c, v)).collect())
            .collect();
        verdict(&got, &[PER, PER]);
    });
}

/// Two threads exchange 3 values each over two rendezvous channels, each looping over a select
/// of "send mine to the other" and "receive the other's" (dropping a case once it has done its
/// 3): a correct program under crossbeam-channel's `select!` (whose grammar `berth::select!`
/// takes), since at any moment one of the two pairs can meet.
///
/// Before berth's selects claimed each other's rendezvous receives (`SelectCtx` in
/// `core/src/channel/flavors/zero.rs`) this deadlocked within a few schedules: both threads
/// registered their receive, each found the other's receive waiting and selected its *send*,
/// both withdrew their receives, and both blocked in `SelectedOperation::send` with no receiver
/// left on either channel. Now a select's send pairs with another select's receive only by
/// claiming it, and a select that is polling cannot be claimed, so one of the two commits to
/// receiving.
#[test]
fn rendezvous_exchange_between_two_selects() {
    fn peer(out: &Sender<u32>, inc: &Receiver<u32>, base: u32) -> Vec<u32> {
        let (mut sent, mut got) = (0, Vec::new());
        while sent < 3 || got.len() < 3 {
            let mut sel = Select::new();
            let r = (got.len() < 3).then(|| sel.recv(inc));
            let s = (sent < 3).then(|| sel.send(out));
            trace::record("select starts (recv, send)", (r.is_some(), s.is_some()));
            let oper = sel.select();
            if Some(oper.index()) == r {
                got.push(oper.recv(inc).expect("the other peer is alive"));
                trace::record("select: received", got.last());
            } else {
                assert_eq!(Some(oper.index()), s);
                trace::record("select: chose send, sending", base + sent);
                oper.send(out, base + sent)
                    .expect("the other peer is alive");
                trace::record("select: sent", base + sent);
                sent += 1;
            }
        }
        got
    }
    check(|| {
        trace::start();
        let (ab_tx, ab_rx) = channel::bounded::<u32>(0);
        let (ba_tx, ba_rx) = channel::bounded::<u32>(0);
        let a = spawn("peer-a", move || peer(&ab_tx, &ba_rx, 100));
        assert_eq!(peer(&ba_tx, &ab_rx, 200), [100, 101, 102]);
        assert_eq!(a.join().unwrap(), [200, 201, 202]);
    });
}

/// A receiver that starts waiting on a rendezvous channel wakes one selecting sender, not all
/// of them; a woken sender that completes another operation instead must pass the wakeup on.
/// `s1` selects over sending on X and on Y, `s2` only over X; `rx` and `ry` receive with plain
/// blocking calls. If `ry` and `rx` both wake `s1` (the first registered on each channel) and
/// `s1` serves `ry`, then `s2`, still asleep, must be woken for `rx`: otherwise both sleep
/// forever beside each other (mutant `select_sender_no_forward`). Both case orders of `s1`
/// run, since a fresh select's first choice is fixed under the models, and each sender sends
/// `ROUNDS` values, so one execution offers the losing schedule several times. Even so the
/// random scheduler meets it about once in a few hundred executions (caught in 10 of 10 runs
/// of 2,000), so this model runs 25 times the budget: about a second.
#[test]
fn a_woken_select_sender_that_goes_elsewhere_passes_the_wakeup_on() {
    const ROUNDS: u32 = 4;
    for y_first in [false, true] {
        check_times(25, move || {
            trace::start();
            let (tx_x, rx_x) = channel::bounded::<u32>(0);
            let (tx_y, rx_y) = channel::bounded::<u32>(0);
            let s1 = {
                let tx_x = tx_x.clone();
                spawn("s1-selects-x-or-y", move || {
                    for v in 0..ROUNDS {
                        trace::record("select starts", v);
                        if y_first {
                            select! {
                                send(tx_y, v) -> res => {
                                res.expect("ry is alive");
                                trace::record("select: sent to y", v);
                            }
                                send(tx_x, v) -> res => {
                                res.expect("rx is alive");
                                trace::record("select: sent to x", v);
                            }
                            }
                        } else {
                            select! {
                                send(tx_x, v) -> res => {
                                res.expect("rx is alive");
                                trace::record("select: sent to x", v);
                            }
                                send(tx_y, v) -> res => {
                                res.expect("ry is alive");
                                trace::record("select: sent to y", v);
                            }
                            }
                        }
                    }
                })
            };
            let s2 = spawn("s2-selects-x", move || {
                for v in 100..100 + ROUNDS {
                    trace::record("select starts", v);
                    select! {
                        send(tx_x, v) -> res => {
                                res.expect("rx is alive");
                                trace::record("select: sent to x", v);
                            }
                    }
                }
            });
            let ry = spawn("ry-receives-y", move || {
                rx_y.iter()
                    .inspect(|v| trace::record("recv y", v))
                    .collect::<Vec<_>>()
            });
            let mut got: Vec<u32> = rx_x
                .iter()
                .inspect(|v| trace::record("recv x", v))
                .collect();
            got.extend(ry.join().unwrap());
            s1.join().unwrap();
            s2.join().unwrap();
            got.sort_unstable();
            let want: Vec<u32> = (0..ROUNDS).chain(100..100 + ROUNDS).collect();
            assert_eq!(got, want, "every value delivered exactly once");
        });
    }
}

/// Selects on both ends of two rendezvous channels (the `select_both` benchmark's shape, made
/// small): two producers each send 3 messages through a `select!` over both channels, two
/// consumers receive through a `select!` over both. Every exchange pairs two selects, so each
/// is made by a claim: a selecting sender that finds a receiver's select asleep claims it, and
/// a selecting receiver that finds a sender's select asleep claims that (the sender's value
/// then goes into the receive reserved for it). Exactly once, no hang. 5 threads.
///
/// A producer's next select can sit at the address of its last one while a reservation it
/// filled is still waiting to be collected: the claimed send must find the reservation made
/// for it now, not the filled one (the bug the first version of the receive's claim had:
/// the second value overwrote the first and a consumer waited forever).
#[test]
fn selecting_senders_meet_selecting_receivers() {
    const PER: u32 = 3;
    // The stale-reservation schedule is about 1 in 1,000 random ones; a schedule takes
    // microseconds.
    check_times(50, || {
        trace::start();
        let (tx0, rx0) = channel::bounded::<u32>(0);
        let (tx1, rx1) = channel::bounded::<u32>(0);
        let producers: Vec<_> = (0..2u32)
            .map(|p| {
                let (tx0, tx1) = (tx0.clone(), tx1.clone());
                spawn(&format!("producer-{p}"), move || {
                    for i in 0..PER {
                        let m = p * 100 + i;
                        // Rotate the case order: a fresh select always starts at its first.
                        if i % 2 == 0 {
                            select! {
                                send(tx0, m) -> r => r.unwrap(),
                                send(tx1, m) -> r => r.unwrap(),
                            }
                        } else {
                            select! {
                                send(tx1, m) -> r => r.unwrap(),
                                send(tx0, m) -> r => r.unwrap(),
                            }
                        }
                        trace::record("producer: sent", m);
                    }
                })
            })
            .collect();
        drop((tx0, tx1));
        let consumer = move |rx0: Receiver<u32>, rx1: Receiver<u32>| {
            let mut got = Vec::new();
            loop {
                let m = if got.len() % 2 == 0 {
                    select! {
                        recv(rx0) -> m => m,
                        recv(rx1) -> m => m,
                    }
                } else {
                    select! {
                        recv(rx1) -> m => m,
                        recv(rx0) -> m => m,
                    }
                };
                trace::record("consumer: select returned", m);
                match m {
                    Ok(v) => got.push(v),
                    // Disconnected: both producers are done (each holds both senders).
                    Err(_) => return got,
                }
            }
        };
        let other = {
            let (rx0, rx1) = (rx0.clone(), rx1.clone());
            spawn("consumer-1", move || consumer(rx0, rx1))
        };
        let mut all = consumer(rx0, rx1);
        for p in producers {
            p.join().unwrap();
        }
        all.extend(other.join().unwrap());
        all.sort_unstable();
        assert_eq!(
            all,
            vec![0, 1, 2, 100, 101, 102],
            "every message exactly once"
        );
    });
}
