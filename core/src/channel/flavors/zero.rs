//! The rendezvous flavour (`bounded(0)`): a send completes only when a receiver takes the value.
//!
//! One mutex guards two FIFOs of waiting operations, each a [`Packet`] on the waiting thread's
//! stack frame's behalf (shared through an `Arc`): senders waiting with their value inside, and
//! receivers waiting for one. An operation that finds a partner of the other kind completes the
//! exchange under the lock (moving the value, setting the partner's state) and unparks the
//! partner after releasing it; otherwise it enqueues its packet, releases the lock and parks
//! until its state changes.
//!
//! A packet's state moves once, under the lock, from `WAITING` to `DONE` (a partner completed
//! the exchange) or `CLOSED` (the channel was disconnected); a waiter that times out takes the
//! lock and withdraws its packet only if it is still `WAITING`, so an exchange that happened at
//! the deadline is never undone: a sender is told `Ok` only when a receiver has the value, and a
//! receiver whose partner already put the value in its packet returns it.

use super::{RecvFail, SendFail};
use crate::park::{with_local_parker, Unparker};
use crate::sync::atomic::{
    AtomicU32,
    Ordering::{Acquire, Release},
};
use crate::sync::{Arc, Mutex};
use std::collections::VecDeque;
use std::fmt;
use std::time::Instant;

const WAITING: u32 = 0;
const DONE: u32 = 1;
const CLOSED: u32 = 2;

/// One waiting send or receive.
struct Packet<T> {
    /// `WAITING`, then `DONE` or `CLOSED`; changed only under the channel lock.
    state: AtomicU32,
    /// A waiting sender's value, or the value handed to a waiting receiver.
    value: Mutex<Option<T>>,
    unparker: Unparker,
}

struct State<T> {
    senders: VecDeque<Arc<Packet<T>>>,
    receivers: VecDeque<Arc<Packet<T>>>,
    closed: bool,
}

/// A zero-capacity channel.
pub(crate) struct Zero<T> {
    state: Mutex<State<T>>,
}

impl<T> Zero<T> {
    pub(crate) fn new() -> Self {
        Zero {
            state: Mutex::new(State {
                senders: VecDeque::new(),
                receivers: VecDeque::new(),
                closed: false,
            }),
        }
    }

    /// `deadline`: `Some(None)` = do not wait (try), `Some(Some(d))` = until `d`, `None` = forever.
    fn send_inner(&self, value: T, wait: Option<Option<Instant>>) -> Result<(), SendFail<T>> {
        let mut state = self.state.lock();
        if state.closed {
            return Err(SendFail::Disconnected(value));
        }
        if let Some(receiver) = state.receivers.pop_front() {
            *receiver.value.lock() = Some(value);
            receiver.state.store(DONE, Release);
            drop(state);
            receiver.unparker.unpark();
            return Ok(());
        }
        let deadline = match wait {
            Some(None) => return Err(SendFail::Full(value)),
            Some(Some(d)) => Some(d),
            None => None,
        };
        with_local_parker(|parker| {
            let packet = Arc::new(Packet {
                state: AtomicU32::new(WAITING),
                value: Mutex::new(Some(value)),
                unparker: parker.unparker().clone(),
            });
            state.senders.push_back(Arc::clone(&packet));
            drop(state);
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
                parker.park_until(deadline);
            }
        })
    }

    fn recv_inner(&self, wait: Option<Option<Instant>>) -> Result<T, RecvFail> {
        let mut state = self.state.lock();
        if let Some(sender) = state.senders.pop_front() {
            let value = take(&sender);
            sender.state.store(DONE, Release);
            drop(state);
            sender.unparker.unpark();
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
            let packet = Arc::new(Packet {
                state: AtomicU32::new(WAITING),
                value: Mutex::new(None),
                unparker: parker.unparker().clone(),
            });
            state.receivers.push_back(Arc::clone(&packet));
            drop(state);
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
                            state.receivers.retain(|p| !Arc::ptr_eq(p, &packet));
                            return Err(RecvFail::Timeout);
                        }
                    }
                }
                parker.park_until(deadline);
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

    /// Disconnects: every waiting sender gets its value back, every waiting receiver
    /// `Disconnected`. True for the call that did it.
    pub(crate) fn close(&self) -> bool {
        let waiting: Vec<_> = {
            let mut guard = self.state.lock();
            if guard.closed {
                return false;
            }
            guard.closed = true;
            let state = &mut *guard;
            let waiting = state
                .senders
                .drain(..)
                .chain(state.receivers.drain(..))
                .collect();
            for packet in &waiting {
                let packet: &Arc<Packet<T>> = packet;
                packet.state.store(CLOSED, Release);
            }
            waiting
        };
        for packet in waiting {
            packet.unparker.unpark();
        }
        true
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }
}

/// Takes the value out of a packet whose exchange is settled.
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
