//! The rendezvous flavour (`bounded(0)`): a send completes only when a receiver takes the value.
//!
//! One mutex guards two FIFOs of waiting operations. Waiting senders are always [`Packet`]s
//! holding their value (shared through an `Arc`), whether the sender is a thread or an async
//! task. Waiting receivers are either packets (a blocked thread: a sender moves the value into
//! the packet and the exchange is complete) or *tasks* (an async receive: only a waker).
//!
//! An operation that finds a partner completes the exchange under the lock and wakes the
//! partner after releasing it; otherwise it enqueues itself and waits until its state changes.
//! A packet's state moves once, under the lock, from `WAITING` to `DONE` (a partner completed the
//! exchange) or `CLOSED` (the channel was disconnected); a waiter that gives up (timeout, or a
//! dropped future) takes the lock and withdraws only if it is still `WAITING`, so an exchange
//! that already happened is never undone: a sender is told `Ok` only when a receiver has the
//! value, and a receiver whose partner already put the value in its packet returns it.
//!
//! **Async receivers never hold a value.** A sender that finds an async receiver at the front
//! wakes it and then waits in the senders' FIFO like any sender; the woken task takes the value
//! from the sender's packet when it is polled. So dropping a pending receive can never lose a
//! message (flume 140's bug was the opposite: a rendezvous send returned before its value was
//! taken). If a task was woken that way and is dropped before it takes a value, it passes the
//! wakeup on (`forward`): the waiting sender is matched with the next receiver. The price: a
//! `try_send` does not complete with a waiting async receiver (it needs a receiver that takes the
//! value *now*): it hands the value to the first blocked *thread* in the queue, skipping async
//! receivers ahead of it, and returns `Full` if there is none.
//!
//! **A select's receive is a promise only once claimed.** A receive that belongs to a `select`
//! waits here as a task with its select's claim word ([`SelectCtx`]); a select's send that
//! would pair with it must claim it first (see `SelectCtx` for why, and for the deadlock that
//! happens otherwise). Selecting senders wait (without a value) in `select_senders`, with their
//! claim words too, and a select's receive that finds one asleep claims it in turn
//! ([`Zero::poll_recv_select`]): whichever of two selects arrives second pairs them, with one
//! wakeup.

use super::{RecvFail, SendFail};
use crate::park::{with_local_parker, Backoff, Parker, Unparker};
use crate::sync::atomic::{
    AtomicU32, AtomicUsize,
    Ordering::{Acquire, Release, SeqCst},
};
use crate::sync::{Arc, Mutex};
use std::collections::VecDeque;
use std::fmt;
use std::task::{Poll, Waker};
use std::time::Instant;

const WAITING: u32 = 0;
const DONE: u32 = 1;
const CLOSED: u32 = 2;

/// How to wake a waiter.
enum Wake {
    Thread(Unparker),
    Task(Waker),
}

impl Wake {
    fn wake(self) {
        match self {
            Wake::Thread(u) => u.unpark(),
            Wake::Task(w) => w.wake(),
        }
    }
}

/// One waiting send, or one waiting blocking receive.
pub(crate) struct Packet<T> {
    /// `WAITING`, then `DONE` or `CLOSED`; changed only under the channel lock.
    state: AtomicU32,
    /// A waiting sender's value, or the value handed to a waiting receiver.
    value: Mutex<Option<T>>,
    /// Replaced (under the channel lock) when an async sender is re-polled with a new waker.
    wake: Mutex<Wake>,
}

impl<T> Packet<T> {
    fn new(value: Option<T>, wake: Wake) -> Arc<Self> {
        Arc::new(Packet {
            state: AtomicU32::new(WAITING),
            value: Mutex::new(value),
            wake: Mutex::new(wake),
        })
    }

    /// A clone of the wake handle, to use after the channel lock is released.
    fn waker(&self) -> Wake {
        match &*self.wake.lock() {
            Wake::Thread(u) => Wake::Thread(u.clone()),
            Wake::Task(w) => Wake::Task(w.clone()),
        }
    }
}

/// The claim word of one blocking `select`, shared with the rendezvous channels where its
/// receives wait.
///
/// A rendezvous send needs a receiver that will take the value. A select's receive waiting in
/// a channel has not promised to: the select may complete another operation and withdraw it.
/// So a select's send that wants to pair with another select's receive must first *claim* that
/// select: one CAS of its word from `WAITING` to the receive's key commits the claimed select to
/// that receive (it then receives with a blocking `recv`) and the claiming select to its send.
///
/// The owner keeps its word `BUSY` while it polls its own operations, and sets `WAITING` only
/// just before it parks, `DONE` when it returns. So a thread that claims another is never being
/// claimed at the same time (it is `BUSY` itself, or is not selecting at all), and no select is
/// committed to two operations: two selects that each see the other's receive cannot both
/// select their sends (the deadlock of two threads exchanging over rendezvous channels). A
/// claimer that finds the word `BUSY` adds its waker to `watchers`, and the owner wakes every
/// watcher each time its word leaves `BUSY`, so the claimer looks again instead of sleeping
/// beside a receiver it could have claimed.
pub(crate) struct SelectCtx {
    /// `BUSY`, `WAITING`, `DONE`, or the key of the receive a claimer chose.
    state: AtomicUsize,
    watchers: Mutex<Vec<Waker>>,
}

const BUSY: usize = 0;
const CTX_WAITING: usize = 1;
const CTX_DONE: usize = 2;

impl SelectCtx {
    /// A word for a select that is about to poll its operations (`BUSY`).
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(SelectCtx {
            state: AtomicUsize::new(BUSY),
            watchers: Mutex::new(Vec::new()),
        })
    }

    /// The owner is about to park (a select on a rendezvous channel spins briefly first): it
    /// may be claimed from now on.
    pub(crate) fn set_waiting(&self) {
        self.leave_busy(CTX_WAITING);
    }

    /// The owner is returning: nothing may claim it any more.
    pub(crate) fn set_done(&self) {
        self.leave_busy(CTX_DONE);
    }

    fn leave_busy(&self, to: usize) {
        self.state.store(to, SeqCst);
        let watchers = std::mem::take(&mut *self.watchers.lock());
        for w in watchers {
            w.wake();
        }
    }

    /// The owner woke: back to `BUSY`, or `Err(key)` if a claimer chose its receive at `key`
    /// (the word then stays claimed: nothing can claim it again).
    pub(crate) fn resume(&self) -> Result<(), usize> {
        match self
            .state
            .compare_exchange(CTX_WAITING, BUSY, SeqCst, SeqCst)
        {
            Ok(_) => Ok(()),
            Err(key) => {
                debug_assert!(key > CTX_DONE, "only a claim moves a waiting word");
                Err(key)
            }
        }
    }

    /// The owner's claimed receive was abandoned by its claimer: back to `BUSY` (only the
    /// owner moves a claimed word), to poll its operations again.
    pub(crate) fn unclaim(&self) {
        self.state.store(BUSY, SeqCst);
    }

    /// Tries to claim the owner's receive at `key`. `Busy` if the owner is polling: `watcher`
    /// (if any) is woken when it stops.
    fn claim(&self, key: usize, watcher: Option<&Waker>) -> Claim {
        loop {
            match self
                .state
                .compare_exchange(CTX_WAITING, key, SeqCst, SeqCst)
            {
                Ok(_) => return Claim::Claimed,
                Err(BUSY) => {
                    let Some(w) = watcher else {
                        return Claim::Busy;
                    };
                    let mut watchers = self.watchers.lock();
                    // Re-read under the lock the owner takes after leaving `BUSY`: either it
                    // has not left yet and will wake us, or we see where it went.
                    if self.state.load(SeqCst) == BUSY {
                        if !watchers.iter().any(|x| x.will_wake(w)) {
                            watchers.push(w.clone());
                        }
                        return Claim::Busy;
                    }
                }
                Err(_) => return Claim::Gone,
            }
        }
    }
}

/// What a selecting sender found when it tried to claim a waiting select's receive.
enum Claim {
    Claimed,
    /// The other select is polling; try again when it stops.
    Busy,
    /// The other select is done, or claimed by someone else.
    Gone,
}

/// What a selecting sender found among the waiting receivers.
enum Partner {
    /// A receiver that will take a value.
    Found,
    /// Another select's receive, claimed and reserved for this send (its key).
    Claimed(usize),
    /// None now, but a select that is polling may offer one: look again when it stops.
    Busy,
    None,
}

/// What a `select`'s receive found ([`Zero::poll_recv_select`]).
pub(crate) enum SelectRecv<T> {
    /// Received a value, or the channel is closed.
    Ready(Result<T, RecvFail>),
    /// Claimed a sleeping selecting sender: wait for its value with
    /// [`wait_claimed`](Zero::wait_claimed).
    Claimed,
    /// Registered; wait to be woken.
    Pending,
}

/// A waiting receiver.
enum Receiving<T> {
    /// A blocked thread: takes the value into its packet.
    Packet(Arc<Packet<T>>),
    /// An async task: only woken; it takes the value itself when polled. `key`: the pinned
    /// address of its future. `ctx`: the claim word of the `select` it belongs to, if any (a
    /// plain async receive is committed to receiving; a select's receive only once claimed).
    Task {
        key: usize,
        waker: Waker,
        ctx: Option<Arc<SelectCtx>>,
    },
    /// A select's receive paired with a selecting sender, by either side's claim: reserved
    /// for that sender, which puts its value here when its selected operation is completed
    /// ([`send_claimed`](Zero::send_claimed)); no other sender pairs with it. `sender`: the
    /// key of the send, when the receive claimed it (the claimed sender looks its receive up
    /// by it, [`Zero::take_reverse_claim`]); `None` when the send claimed the receive.
    Claimed {
        key: usize,
        sender: Option<usize>,
        waker: Waker,
        value: Option<T>,
    },
}

/// A `select`'s send waiting for a receiver (it holds no value yet).
struct SelectSender {
    /// The address of the select's operation.
    key: usize,
    waker: Waker,
    /// The select's claim word: a selecting receiver that finds this sender waiting claims it
    /// ([`Zero::poll_recv_select`]). `None` for a `ready`, which promises nothing.
    ctx: Option<Arc<SelectCtx>>,
}

struct State<T> {
    senders: VecDeque<Arc<Packet<T>>>,
    receivers: VecDeque<Receiving<T>>,
    /// Threads in a `select` waiting for a receiver to send to (they hold no value yet), oldest
    /// first: one is woken when a receiver starts waiting (and passes the wakeup on if it does
    /// not pair, see `pass_on`), every one by `close`. Keyed by the address of the select's
    /// operation.
    select_senders: VecDeque<SelectSender>,
    closed: bool,
}

impl<T> State<T> {
    /// Every selecting sender must look again (the channel closed).
    fn wake_select_senders(&mut self, wakes: &mut Vec<Wake>) {
        wakes.extend(self.select_senders.drain(..).map(|s| Wake::Task(s.waker)));
    }

    /// A receiver now waits: wake one selecting sender, the longest registered, to pair with
    /// it. Waking them all made every exchange a herd (all but one woke only to find the
    /// receiver claimed, and slept again). A woken sender that does not pair passes the wakeup
    /// on when it withdraws ([`Zero::cancel_send_ready`]).
    fn wake_one_select_sender(&mut self, wakes: &mut Vec<Wake>) {
        if let Some(s) = self.select_senders.pop_front() {
            wakes.push(Wake::Task(s.waker));
        }
    }

    /// A selecting sender stops waiting here without having paired (it withdrew, or will not
    /// send after all). A waiting receiver wakes only one selecting sender, and this may be
    /// it: woken for the receiver, or woken, then watching the receiver's busy select. So if a
    /// receiver still waits unclaimed, the next selecting sender is woken. This can wake a
    /// sender that finds nothing (the receiver's own sender still on its way); it never leaves
    /// a receiver waiting beside a selecting sender that sleeps.
    fn pass_on(&mut self, wakes: &mut Vec<Wake>) {
        if self
            .receivers
            .iter()
            .any(|r| !matches!(r, Receiving::Claimed { .. }))
        {
            self.wake_one_select_sender(wakes);
        }
    }

    /// Claims the first selecting sender waiting here whose select sleeps (not `own`'s, not a
    /// `ready`'s) and removes its registration. A sender whose select is polling gets `waker`
    /// as a watcher: this receiver looks again when it stops.
    fn claim_select_sender(&mut self, own: &Arc<SelectCtx>, waker: &Waker) -> Option<SelectSender> {
        let i = self.select_senders.iter().position(|s| match &s.ctx {
            Some(c) if !Arc::ptr_eq(c, own) => {
                matches!(c.claim(s.key, Some(waker)), Claim::Claimed)
            }
            _ => false,
        })?;
        self.select_senders.remove(i)
    }

    /// Removes the first waiting receiver that is not reserved by a claim.
    fn pop_unclaimed(&mut self) -> Option<Receiving<T>> {
        let i = self
            .receivers
            .iter()
            .position(|r| !matches!(r, Receiving::Claimed { .. }))?;
        self.receivers.remove(i)
    }

    /// Takes the value of the first waiting sender and completes it.
    fn take_from_sender(&mut self) -> Option<(T, Wake)> {
        let sender = self.senders.pop_front()?;
        let value = take(&sender);
        sender.state.store(DONE, Release);
        Some((value, sender.waker()))
    }

    /// Matches waiting senders with waiting receivers after a task gave up a wakeup; returns
    /// whom to wake once the lock is released.
    fn forward(&mut self, wakes: &mut Vec<Wake>) {
        if self.senders.is_empty() {
            return;
        }
        match self.pop_unclaimed() {
            Some(Receiving::Packet(receiver)) => {
                let (value, sender_wake) = self.take_from_sender().expect("checked non-empty");
                *receiver.value.lock() = Some(value);
                receiver.state.store(DONE, Release);
                wakes.push(sender_wake);
                wakes.push(receiver.waker());
            }
            Some(Receiving::Task { waker, .. }) => wakes.push(Wake::Task(waker)),
            Some(Receiving::Claimed { .. }) => unreachable!("pop_unclaimed"),
            None => {}
        }
    }
}

/// A zero-capacity channel.
pub(crate) struct Zero<T> {
    state: Mutex<State<T>>,
}

/// What a send found at the front of the receivers, under the lock.
enum Offer<T> {
    /// A blocked thread took the value: the send is complete; wake it.
    Took(Wake),
    /// The send must wait with its value; `woke`: an async receiver to wake once the sender is
    /// queued (it will take the value when polled).
    Wait { value: T, woke: Option<Waker> },
}

impl<T> Zero<T> {
    pub(crate) fn new() -> Self {
        Zero {
            state: Mutex::new(State {
                senders: VecDeque::new(),
                receivers: VecDeque::new(),
                select_senders: VecDeque::new(),
                closed: false,
            }),
        }
    }

    /// Offers `value` to the first waiting receiver.
    fn offer(state: &mut State<T>, value: T) -> Offer<T> {
        match state.pop_unclaimed() {
            Some(Receiving::Packet(receiver)) => {
                *receiver.value.lock() = Some(value);
                receiver.state.store(DONE, Release);
                Offer::Took(receiver.waker())
            }
            Some(Receiving::Task { waker, .. }) => Offer::Wait {
                value,
                woke: Some(waker),
            },
            Some(Receiving::Claimed { .. }) => unreachable!("pop_unclaimed"),
            None => Offer::Wait { value, woke: None },
        }
    }

    /// `wait`: `Some(None)` = do not wait (try), `Some(Some(d))` = until `d`, `None` = forever.
    fn send_inner(&self, value: T, wait: Option<Option<Instant>>) -> Result<(), SendFail<T>> {
        let mut state = self.state.lock();
        if state.closed {
            return Err(SendFail::Disconnected(value));
        }
        if wait == Some(None) {
            // A try completes only with a blocked thread, which takes the value now; it skips
            // (and does not wake) async receivers queued ahead of one, which could not.
            let Some(i) = state
                .receivers
                .iter()
                .position(|r| matches!(r, Receiving::Packet(_)))
            else {
                return Err(SendFail::Full(value));
            };
            let Some(Receiving::Packet(receiver)) = state.receivers.remove(i) else {
                unreachable!("position found a packet");
            };
            *receiver.value.lock() = Some(value);
            receiver.state.store(DONE, Release);
            let wake = receiver.waker();
            drop(state);
            wake.wake();
            return Ok(());
        }
        let (value, woke) = match Self::offer(&mut state, value) {
            Offer::Took(wake) => {
                drop(state);
                wake.wake();
                return Ok(());
            }
            Offer::Wait { value, woke } => (value, woke),
        };
        let deadline = match wait {
            Some(None) => return Err(SendFail::Full(value)),
            Some(Some(d)) => Some(d),
            None => None,
        };
        with_local_parker(|parker| {
            let packet = Packet::new(Some(value), Wake::Thread(parker.unparker().clone()));
            state.senders.push_back(Arc::clone(&packet));
            drop(state);
            if let Some(w) = woke {
                w.wake();
            }
            loop {
                match packet.state.load(Acquire) {
                    DONE => return Ok(()),
                    CLOSED => return Err(SendFail::Disconnected(take(&packet))),
                    _ => {}
                }
                if deadline.is_some_and(|d| crate::sync::MODEL || Instant::now() >= d) {
                    let mut state = self.state.lock();
                    match packet.state.load(Acquire) {
                        DONE => return Ok(()),
                        CLOSED => return Err(SendFail::Disconnected(take(&packet))),
                        _ => {
                            state.senders.retain(|p| !Arc::ptr_eq(p, &packet));
                            drop(state);
                            return Err(SendFail::Timeout(take(&packet)));
                        }
                    }
                }
                parker.rendezvous_park_until(deadline);
            }
        })
    }

    fn recv_inner(&self, wait: Option<Option<Instant>>) -> Result<T, RecvFail> {
        self.recv_locked(self.state.lock(), wait)
    }

    /// The receive of a `select` that a sender claimed (see [`SelectCtx`]): waits on this
    /// thread's `parker` for the claiming sender to put its value in the reserved entry, then
    /// takes it. `None` if the claimer abandoned the claim instead (its selected send was
    /// dropped unsent): the select then goes back to polling its operations, with its deadline.
    /// Either way the entry is gone afterwards.
    pub(crate) fn wait_claimed(
        &self,
        key: usize,
        registered: &mut bool,
        parker: &Parker,
        own: &Waker,
    ) -> Option<T> {
        *registered = false;
        // The claimer is running or about to: its value usually comes within a few spins or
        // yields, without the receiver going to sleep (and the claimer waking it).
        let mut backoff = Backoff::new();
        loop {
            {
                let mut state = self.state.lock();
                let i = state
                    .receivers
                    .iter()
                    .position(|r| matches!(r, Receiving::Claimed { key: k, .. } if *k == key))?;
                if let Receiving::Claimed { value, waker, .. } = &mut state.receivers[i] {
                    if let Some(v) = value.take() {
                        state.receivers.remove(i);
                        return Some(v);
                    }
                    // The claimer wakes the entry's waker: make sure it is this thread's (it
                    // is, unless the select ran while thread-locals were being destroyed).
                    if !waker.will_wake(own) {
                        *waker = own.clone();
                    }
                }
            }
            if backoff.is_completed() {
                parker.park();
            } else {
                backoff.snooze();
            }
        }
    }

    fn recv_locked(
        &self,
        mut state: crate::sync::MutexGuard<'_, State<T>>,
        wait: Option<Option<Instant>>,
    ) -> Result<T, RecvFail> {
        if let Some((value, wake)) = state.take_from_sender() {
            drop(state);
            wake.wake();
            return Ok(value);
        }
        if state.closed {
            return Err(RecvFail::Disconnected);
        }
        let deadline = match wait {
            Some(None) => return Err(RecvFail::Empty),
            Some(Some(d)) => Some(d),
            None => None,
        };
        with_local_parker(|parker| {
            let packet = Packet::new(None, Wake::Thread(parker.unparker().clone()));
            state
                .receivers
                .push_back(Receiving::Packet(Arc::clone(&packet)));
            let mut wakes = Vec::new();
            state.wake_one_select_sender(&mut wakes);
            drop(state);
            for w in wakes {
                w.wake();
            }
            loop {
                match packet.state.load(Acquire) {
                    DONE => return Ok(take(&packet)),
                    CLOSED => return Err(RecvFail::Disconnected),
                    _ => {}
                }
                if deadline.is_some_and(|d| crate::sync::MODEL || Instant::now() >= d) {
                    let mut state = self.state.lock();
                    match packet.state.load(Acquire) {
                        DONE => return Ok(take(&packet)),
                        CLOSED => return Err(RecvFail::Disconnected),
                        _ => {
                            state.receivers.retain(
                                |r| !matches!(r, Receiving::Packet(p) if Arc::ptr_eq(p, &packet)),
                            );
                            return Err(RecvFail::Timeout);
                        }
                    }
                }
                parker.rendezvous_park_until(deadline);
            }
        })
    }

    pub(crate) fn try_send(&self, value: T) -> Result<(), SendFail<T>> {
        self.send_inner(value, Some(None))
    }

    pub(crate) fn send(&self, value: T, deadline: Option<Instant>) -> Result<(), SendFail<T>> {
        self.send_inner(value, deadline.map(Some))
    }

    pub(crate) fn try_recv(&self) -> Result<T, RecvFail> {
        self.recv_inner(Some(None))
    }

    pub(crate) fn recv(&self, deadline: Option<Instant>) -> Result<T, RecvFail> {
        self.recv_inner(deadline.map(Some))
    }

    /// One poll of an async send. `pending`: the packet of a send already waiting (kept by the
    /// future between polls); `value`: the value, on the first poll.
    pub(crate) fn poll_send(
        &self,
        pending: &mut Option<Arc<Packet<T>>>,
        value: &mut Option<T>,
        waker: &Waker,
    ) -> Poll<Result<(), T>> {
        let mut state = self.state.lock();
        if let Some(packet) = pending {
            return match packet.state.load(Acquire) {
                DONE => {
                    *pending = None;
                    Poll::Ready(Ok(()))
                }
                CLOSED => {
                    let v = take(packet);
                    *pending = None;
                    Poll::Ready(Err(v))
                }
                _ => {
                    *packet.wake.lock() = Wake::Task(waker.clone());
                    Poll::Pending
                }
            };
        }
        let v = value.take().expect("polled after completion");
        if state.closed {
            return Poll::Ready(Err(v));
        }
        let (v, woke) = match Self::offer(&mut state, v) {
            Offer::Took(wake) => {
                drop(state);
                wake.wake();
                return Poll::Ready(Ok(()));
            }
            Offer::Wait { value, woke } => (value, woke),
        };
        let packet = Packet::new(Some(v), Wake::Task(waker.clone()));
        state.senders.push_back(Arc::clone(&packet));
        *pending = Some(packet);
        drop(state);
        if let Some(w) = woke {
            w.wake();
        }
        Poll::Pending
    }

    /// An async send dropped while pending: withdraw its packet (its value is dropped) unless a
    /// receiver already took it.
    pub(crate) fn cancel_send(&self, pending: &mut Option<Arc<Packet<T>>>) {
        if let Some(packet) = pending.take() {
            let mut state = self.state.lock();
            if packet.state.load(Acquire) == WAITING {
                state.senders.retain(|p| !Arc::ptr_eq(p, &packet));
                drop(state);
                drop(packet.value.lock().take());
            }
        }
    }

    /// One poll of an async receive; `registered`: whether the task sits in the receivers' FIFO.
    /// `ctx`: the claim word of the `select` this receive belongs to (`None` for `recv_async`).
    pub(crate) fn poll_recv(
        &self,
        key: usize,
        registered: &mut bool,
        waker: &Waker,
        ctx: Option<&Arc<SelectCtx>>,
    ) -> Poll<Result<T, RecvFail>> {
        let mut state = self.state.lock();
        if let Some((result, wake)) = Self::take_or_closed(&mut state, key, registered) {
            drop(state);
            if let Some(w) = wake {
                w.wake();
            }
            return Poll::Ready(result);
        }
        Self::register_task(state, key, registered, waker, ctx);
        Poll::Pending
    }

    /// Where every poll of a receive starts: a waiting sender's value (and the sender to wake
    /// once the lock is released), or the close. Either completes the receive, so the task's
    /// registration, if any, is withdrawn.
    fn take_or_closed(
        state: &mut State<T>,
        key: usize,
        registered: &mut bool,
    ) -> Option<(Result<T, RecvFail>, Option<Wake>)> {
        let outcome = match state.take_from_sender() {
            Some((value, wake)) => (Ok(value), Some(wake)),
            None if state.closed => (Err(RecvFail::Disconnected), None),
            None => return None,
        };
        if std::mem::take(registered) {
            Self::remove_task(state, key);
        }
        Some(outcome)
    }

    /// One poll of a `select`'s receive (`ctx`: its claim word). As [`poll_recv`]
    /// (Self::poll_recv), and one step more before it registers: a selecting sender that
    /// waits here, asleep, is claimed (a CAS on its select's word, see [`SelectCtx`]) and the
    /// receive is reserved for it. The claimed select wakes committed to that send, and its
    /// selected send puts the value in the reservation. Without this, a receiver that finds
    /// only selecting senders registers, wakes one, and sleeps until that sender claims it
    /// back: two sleeps and two wakeups per message where one of each is enough.
    pub(crate) fn poll_recv_select(
        &self,
        key: usize,
        registered: &mut bool,
        waker: &Waker,
        ctx: &Arc<SelectCtx>,
    ) -> SelectRecv<T> {
        let mut state = self.state.lock();
        if let Some((result, wake)) = Self::take_or_closed(&mut state, key, registered) {
            drop(state);
            if let Some(w) = wake {
                w.wake();
            }
            return SelectRecv::Ready(result);
        }
        if let Some(sender) = state.claim_select_sender(ctx, waker) {
            if std::mem::take(registered) {
                Self::remove_task(&mut state, key);
            }
            state.receivers.push_back(Receiving::Claimed {
                key,
                sender: Some(sender.key),
                waker: waker.clone(),
                value: None,
            });
            drop(state);
            sender.waker.wake();
            return SelectRecv::Claimed;
        }
        Self::register_task(state, key, registered, waker, Some(ctx));
        SelectRecv::Pending
    }

    /// A select woke claimed for its send at `key` by a selecting receiver
    /// ([`poll_recv_select`](Self::poll_recv_select)): the key of the receive reserved for it,
    /// to complete with [`send_claimed`](Self::send_claimed). The receiver removed the send's
    /// registration when it claimed it.
    pub(crate) fn take_reverse_claim(&self, key: usize, registered: &mut bool) -> Option<usize> {
        *registered = false;
        let state = self.state.lock();
        // Only an entry still waiting for its value: a receive this send filled earlier may
        // not have collected it yet, and a new operation can sit at the old one's address.
        // MUTANT select_claim_stale_reservation: match a filled reservation too (the first
        // version): the new value overwrites the old one and the new claimer waits forever.
        state.receivers.iter().find_map(|r| match r {
            Receiving::Claimed {
                key: k,
                sender: Some(s),
                value,
                ..
            } if *s == key
                && (value.is_none() || cfg!(berth_mutant = "select_claim_stale_reservation")) =>
            {
                Some(*k)
            }
            _ => None,
        })
    }

    /// Puts the task at `key` in the receivers' FIFO (or updates its waker, keeping its place);
    /// a new receiver wakes the selecting senders.
    fn register_task(
        mut state: crate::sync::MutexGuard<'_, State<T>>,
        key: usize,
        registered: &mut bool,
        waker: &Waker,
        ctx: Option<&Arc<SelectCtx>>,
    ) {
        for r in state.receivers.iter_mut() {
            if let Receiving::Task {
                key: k, waker: w, ..
            } = r
            {
                if *k == key {
                    if !w.will_wake(waker) {
                        *w = waker.clone();
                    }
                    *registered = true;
                    return;
                }
            }
        }
        state.receivers.push_back(Receiving::Task {
            key,
            waker: waker.clone(),
            ctx: ctx.cloned(),
        });
        *registered = true;
        let mut wakes = Vec::new();
        state.wake_one_select_sender(&mut wakes);
        drop(state);
        for w in wakes {
            w.wake();
        }
    }

    fn remove_task(state: &mut State<T>, key: usize) -> bool {
        match state
            .receivers
            .iter()
            .position(|r| matches!(r, Receiving::Task { key: k, .. } if *k == key))
        {
            Some(i) => {
                state.receivers.remove(i);
                true
            }
            None => false,
        }
    }

    /// An async receive dropped while pending: withdraw; if a sender had already woken it (and
    /// waits for it to take the value), pass the wakeup on.
    pub(crate) fn cancel_recv(&self, key: usize, registered: &mut bool) {
        if !std::mem::take(registered) {
            return;
        }
        let mut wakes = Vec::new();
        {
            let mut state = self.state.lock();
            if !Self::remove_task(&mut state, key)
                && !cfg!(berth_mutant = "async_cancel_no_forward")
            {
                state.forward(&mut wakes);
            }
        }
        for w in wakes {
            w.wake();
        }
    }

    /// Whether a `try_send` could complete now: a blocked thread waits to receive (or the
    /// channel is closed). For a `select`'s `ready`, which promises nothing.
    pub(crate) fn is_send_ready(&self) -> bool {
        let state = self.state.lock();
        state.closed
            || state
                .receivers
                .iter()
                .any(|r| matches!(r, Receiving::Packet(_)))
    }

    /// Whether a receive could find a sender now (or the channel is closed).
    pub(crate) fn is_recv_ready(&self) -> bool {
        let state = self.state.lock();
        state.closed || !state.senders.is_empty()
    }

    /// Finds a receiver for a selecting sender, under the lock. A blocked thread or a plain
    /// async receive will take a value: found. A waiting select's receive is found only if
    /// `claim` and the CAS that claims it succeeds (its waker is then pushed to `wakes`).
    /// Without `claim` (a `ready`, which promises nothing) only a blocked thread counts, as
    /// for `try_send`. `own`: this
    /// select's word, whose own receives are skipped; `waker`: to watch a select that is busy
    /// (`None`: do not watch; the caller will poll again with a waker).
    fn find_receiver(
        state: &mut State<T>,
        own: Option<&Arc<SelectCtx>>,
        waker: Option<&Waker>,
        claim: bool,
        wakes: &mut Vec<Wake>,
    ) -> Partner {
        let mut busy = false;
        let mut claimed = None;
        for (i, r) in state.receivers.iter().enumerate() {
            match r {
                Receiving::Packet(_) => return Partner::Found,
                Receiving::Claimed { .. } => {}
                // A `ready` (no claim) counts only a blocked thread: the `try_send` that
                // follows it can complete with nothing else.
                Receiving::Task { .. } if !claim => {}
                Receiving::Task {
                    waker: w,
                    ctx: None,
                    ..
                } => {
                    if waker.is_none_or(|mine| !w.will_wake(mine)) {
                        return Partner::Found;
                    }
                }
                Receiving::Task {
                    key,
                    waker: w,
                    ctx: Some(c),
                } => {
                    if own.is_some_and(|o| Arc::ptr_eq(o, c)) {
                        continue;
                    }
                    // MUTANT select_send_no_claim: count another select's waiting receive as a
                    // partner without claiming it (berth's first select): two selects that
                    // each see the other's receive both select their sends and deadlock.
                    if cfg!(berth_mutant = "select_send_no_claim") {
                        return Partner::Found;
                    }
                    match c.claim(*key, waker) {
                        Claim::Claimed => {
                            wakes.push(Wake::Task(w.clone()));
                            claimed = Some((i, *key, w.clone()));
                            break;
                        }
                        Claim::Busy => busy = true,
                        Claim::Gone => {}
                    }
                }
            }
        }
        if let Some((i, key, waker)) = claimed {
            // Reserve the receive for this sender: no other sender may pair with it now.
            state.receivers[i] = Receiving::Claimed {
                key,
                sender: None,
                waker,
                value: None,
            };
            return Partner::Claimed(key);
        }
        if busy {
            Partner::Busy
        } else {
            Partner::None
        }
    }

    /// A `select`'s send, before it registers anything: is there a receiver that will take
    /// the value (claiming a waiting select's receive if need be), or is the channel closed?
    /// `claimed`: set to the key of a select's receive this send claimed (complete the send
    /// with [`send_claimed`](Self::send_claimed)).
    pub(crate) fn try_claim_receiver(&self, claimed: &mut Option<usize>) -> bool {
        let mut wakes = Vec::new();
        let found = {
            let mut state = self.state.lock();
            state.closed
                || match Self::find_receiver(&mut state, None, None, true, &mut wakes) {
                    Partner::Found => true,
                    Partner::Claimed(key) => {
                        *claimed = Some(key);
                        true
                    }
                    Partner::Busy | Partner::None => false,
                }
        };
        for w in wakes {
            w.wake();
        }
        found
    }

    /// A claiming send that will never be completed (its selected operation was dropped
    /// unsent: a panic, or a `break`, `return` or `?` in the message expression): releases the
    /// receive at `key`, whose select then goes back to polling its operations.
    pub(crate) fn abandon_claim(&self, key: usize) {
        let mut state = self.state.lock();
        let Some(i) = state
            .receivers
            .iter()
            .position(|r| matches!(r, Receiving::Claimed { key: k, .. } if *k == key))
        else {
            return;
        };
        let Some(Receiving::Claimed { waker, .. }) = state.receivers.remove(i) else {
            unreachable!("found above");
        };
        drop(state);
        waker.wake();
    }

    /// Completes a send whose select claimed the receive at `key` (see [`SelectCtx`]): puts
    /// `value` in the reserved entry and wakes its receiver, without waiting (the receiver is
    /// committed to taking it). Even a closed channel delivers it: the pair was made before.
    pub(crate) fn send_claimed(&self, key: usize, value: T) -> Result<(), SendFail<T>> {
        let mut state = self.state.lock();
        let slot = state.receivers.iter_mut().find_map(|r| match r {
            Receiving::Claimed {
                key: k,
                waker,
                value,
                sender,
            } if *k == key => {
                // Filled: no longer a reservation for that send (its address may be reused).
                if !cfg!(berth_mutant = "select_claim_stale_reservation") {
                    *sender = None;
                }
                Some((waker.clone(), value))
            }
            _ => None,
        });
        match slot {
            Some((waker, v)) => {
                debug_assert!(v.is_none(), "one value per claim");
                *v = Some(value);
                drop(state);
                waker.wake();
                Ok(())
            }
            None => {
                drop(state);
                debug_assert!(false, "a claimed receive waits for its sender");
                self.send(value, None)
            }
        }
    }

    /// One poll of a `select`'s send: ready if a receiver will take the value (see
    /// [`find_receiver`](Self::find_receiver): another select's receive only once claimed) or
    /// the channel is closed; otherwise registers `waker` among the selecting senders, woken
    /// when a receiver starts waiting. `peek` (a `ready`): claims nothing. Nothing is reserved
    /// beyond the claim: the send itself happens when the selected operation is completed.
    pub(crate) fn poll_send_ready(
        &self,
        key: usize,
        registered: &mut bool,
        waker: &Waker,
        ctx: &Arc<SelectCtx>,
        peek: bool,
        claimed: &mut Option<usize>,
    ) -> Poll<()> {
        let mut wakes = Vec::new();
        let mut state = self.state.lock();
        let partner = Self::find_receiver(&mut state, Some(ctx), Some(waker), !peek, &mut wakes);
        if let Partner::Claimed(key) = partner {
            *claimed = Some(key);
        }
        if state.closed || matches!(partner, Partner::Found | Partner::Claimed(_)) {
            if std::mem::take(registered) {
                state.select_senders.retain(|s| s.key != key);
            }
            if peek {
                // A `ready` promises nothing: whoever was waiting for a sender still is.
                state.pass_on(&mut wakes);
            }
            drop(state);
            for w in wakes {
                w.wake();
            }
            return Poll::Ready(());
        }
        debug_assert!(wakes.is_empty(), "a claim is always used");
        match state.select_senders.iter_mut().find(|s| s.key == key) {
            Some(s) => {
                if !s.waker.will_wake(waker) {
                    s.waker = waker.clone();
                }
                if !peek && !s.ctx.as_ref().is_some_and(|c| Arc::ptr_eq(c, ctx)) {
                    s.ctx = Some(Arc::clone(ctx));
                }
            }
            None => state.select_senders.push_back(SelectSender {
                key,
                waker: waker.clone(),
                ctx: (!peek).then(|| Arc::clone(ctx)),
            }),
        }
        *registered = true;
        Poll::Pending
    }

    /// A `select`'s send withdraws (its select completed another operation, or gave up).
    pub(crate) fn cancel_send_ready(&self, key: usize, registered: &mut bool) {
        if !std::mem::take(registered) {
            return;
        }
        let mut wakes = Vec::new();
        {
            let mut state = self.state.lock();
            state.select_senders.retain(|s| s.key != key);
            // MUTANT select_sender_no_forward: a withdrawing sender passes nothing on; a
            // receiver whose one woken sender went elsewhere sleeps beside the others.
            if !cfg!(berth_mutant = "select_sender_no_forward") {
                state.pass_on(&mut wakes);
            }
        }
        for w in wakes {
            w.wake();
        }
    }

    /// A selecting sender that saw a receiver here will not pair with it after all (its
    /// selected send was dropped unsent, or it was only a `ready`): it may have been the one
    /// sender woken for that receiver, so the wakeup passes on.
    pub(crate) fn pass_on(&self) {
        let mut wakes = Vec::new();
        self.state.lock().pass_on(&mut wakes);
        for w in wakes {
            w.wake();
        }
    }

    /// One poll of a `select`'s `ready` on a receive: ready if a sender waits or the channel is
    /// closed, without taking anything; otherwise registers as an async receiver does. If a
    /// sender had woken it, the wakeup is passed on: whoever receives next takes the value.
    pub(crate) fn poll_recv_ready(
        &self,
        key: usize,
        registered: &mut bool,
        waker: &Waker,
    ) -> Poll<()> {
        let mut wakes = Vec::new();
        let mut state = self.state.lock();
        if !state.senders.is_empty() || state.closed {
            if std::mem::take(registered) && !Self::remove_task(&mut state, key) {
                state.forward(&mut wakes);
            }
            drop(state);
            for w in wakes {
                w.wake();
            }
            return Poll::Ready(());
        }
        // A `ready` promises nothing, so it registers as a plain async receive would.
        Self::register_task(state, key, registered, waker, None);
        Poll::Pending
    }

    /// Disconnects: every waiting sender gets its value back, every waiting receiver
    /// `Disconnected`, every waiting task is woken. True for the call that did it.
    pub(crate) fn close(&self) -> bool {
        let mut wakes = Vec::new();
        {
            let mut guard = self.state.lock();
            if guard.closed {
                return false;
            }
            guard.closed = true;
            let state = &mut *guard;
            for packet in state.senders.drain(..) {
                packet.state.store(CLOSED, Release);
                wakes.push(packet.waker());
            }
            let mut kept = VecDeque::new();
            for r in state.receivers.drain(..) {
                match r {
                    Receiving::Packet(packet) => {
                        packet.state.store(CLOSED, Release);
                        wakes.push(packet.waker());
                    }
                    Receiving::Task { waker, .. } => wakes.push(Wake::Task(waker)),
                    // A claimed pair is committed: the claiming sender still holds a `Sender`
                    // and completes the exchange (`send_claimed` ignores the close).
                    claimed @ Receiving::Claimed { .. } => kept.push_back(claimed),
                }
            }
            state.receivers = kept;
            state.wake_select_senders(&mut wakes);
        }
        for w in wakes {
            w.wake();
        }
        true
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }
}

/// Takes the value out of a packet whose exchange is settled (or withdrawn).
fn take<T>(packet: &Packet<T>) -> T {
    packet
        .value
        .lock()
        .take()
        .expect("a settled packet holds exactly one value")
}

impl<T> fmt::Debug for Zero<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("Zero")
            .field("waiting_senders", &state.senders.len())
            .field("waiting_receivers", &state.receivers.len())
            .field("disconnected", &state.closed)
            .finish()
    }
}
