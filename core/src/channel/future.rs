//! `send_async` / `recv_async`: the same channels, awaited from any executor.
//!
//! The futures use only `std::future::Future` and `std::task::Waker`. A pending future sits in
//! the same wait list as blocked threads (an entry holding its waker instead of an unparker),
//! so a thread and a task can share one channel in any combination, and the no-lost-wakeup
//! argument of [`crate::park`] is the same: register (W1), re-check with the structure's RMW
//! (W2), return `Pending` (W3). The rendezvous flavour keeps its own FIFOs (see its module).
//!
//! # Cancellation
//!
//! - Dropping a pending [`RecvFuture`] consumes no message. If a notifier had already chosen it
//!   (removed it from the wait list to wake it), the wakeup is passed on to the next waiter, so
//!   a message is never left behind with a waiter asleep. (The mutant
//!   `async_cancel_no_forward` drops that wakeup instead; a loom model catches it.)
//! - Dropping a pending [`SendFuture`] drops the value it had not sent (it was never in the
//!   channel; a bounded channel's capacity is claimed only by a send that completes). A
//!   rendezvous send that a receiver has already taken is complete, even if the future is
//!   dropped before it is polled again.
//! - A future re-polled with a different waker is woken through the new one.

use super::flavors::timer::Clock;
use super::flavors::zero::{Packet, SelectCtx, SelectRecv, Zero};
use super::{Flavor, Receiver, RecvError, SendError, Sender, Shared};
use crate::park::{with_local_parker, Attempt, Handover, Parker, TaskWait};
use crate::sync::{Arc, Mutex};
use std::fmt;
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// The future of [`Sender::send_async`].
///
/// **Cancel safety:** dropping it while pending drops the value it has not sent (nothing of it
/// is in the channel).
///
/// # Examples
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
///
/// let (tx, rx) = berth::channel::bounded(1);
/// tx.send(1).unwrap();
/// let mut cx = Context::from_waker(Waker::noop());
/// {
///     let mut send = pin!(tx.send_async(2));
///     assert!(send.as_mut().poll(&mut cx).is_pending()); // the channel is full
/// } // dropped while pending: 2 is dropped, unsent
/// assert_eq!(rx.try_recv(), Ok(1));
/// assert!(rx.try_recv().is_err());
/// let mut send = pin!(tx.send_async(3));
/// assert_eq!(send.as_mut().poll(&mut cx), Poll::Ready(Ok(())));
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct SendFuture<'a, T> {
    sender: &'a Sender<T>,
    state: SendState<T>,
    /// The future's address is its key in the wait list: it must not move once polled.
    _pinned: PhantomPinned,
}

/// The future of [`Receiver::recv_async`].
///
/// **Cancel safety:** dropping it while pending consumes no message, and passes on a wakeup it
/// had been chosen for.
///
/// # Examples
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
///
/// let (tx, rx) = berth::channel::unbounded();
/// let mut cx = Context::from_waker(Waker::noop());
/// {
///     let mut recv = pin!(rx.recv_async());
///     assert!(recv.as_mut().poll(&mut cx).is_pending()); // nothing sent yet
/// } // dropped while pending: it consumes nothing
/// tx.send(7).unwrap();
/// let mut recv = pin!(rx.recv_async());
/// assert_eq!(recv.as_mut().poll(&mut cx), Poll::Ready(Ok(7)));
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct RecvFuture<'a, T> {
    receiver: &'a Receiver<T>,
    state: RecvState,
    _pinned: PhantomPinned,
}

impl<T> Sender<T> {
    /// Sends `msg`, waiting asynchronously while the channel is full (for a rendezvous channel:
    /// until a receiver takes it). Fails only if the channel is disconnected, handing `msg`
    /// back.
    ///
    /// **Cancel safety:** dropping the future before it completes drops `msg` unsent (no part
    /// of it is in the channel; a rendezvous send withdraws its offer unless a receiver already
    /// took the value, in which case the send had completed) and frees whatever it held of the
    /// channel: its place among the waiting senders. A future re-polled with a new waker is
    /// woken through the new one.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::future::Future;
    /// # use std::pin::pin;
    /// # use std::task::{Context, Poll, Waker};
    /// let (tx, rx) = berth::channel::bounded(1);
    /// let mut cx = Context::from_waker(Waker::noop());
    /// assert_eq!(pin!(tx.send_async(1)).poll(&mut cx), Poll::Ready(Ok(())));
    /// let mut second = pin!(tx.send_async(2));
    /// assert!(second.as_mut().poll(&mut cx).is_pending()); // full
    /// assert_eq!(rx.recv(), Ok(1)); // a thread receives: the task can go on
    /// assert_eq!(second.poll(&mut cx), Poll::Ready(Ok(())));
    /// assert_eq!(rx.recv(), Ok(2));
    /// ```
    pub fn send_async(&self, msg: T) -> SendFuture<'_, T> {
        SendFuture {
            sender: self,
            state: SendState::new(Some(msg)),
            _pinned: PhantomPinned,
        }
    }
}

impl<T> Receiver<T> {
    /// Receives a message, waiting asynchronously while the channel is empty. Fails once the
    /// channel is empty and disconnected.
    ///
    /// **Cancel safety:** dropping the future before it completes consumes no message; if a
    /// sender had already chosen it to wake (removed it from the wait list for a message that is
    /// now in the channel), the drop passes that wakeup on to the next waiting receiver, so no
    /// message is left beside a sleeping receiver. A future re-polled with a new waker is woken
    /// through the new one.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::future::Future;
    /// # use std::pin::pin;
    /// # use std::task::{Context, Poll, Waker};
    /// let (tx, rx) = berth::channel::unbounded();
    /// let mut cx = Context::from_waker(Waker::noop());
    /// let mut recv = pin!(rx.recv_async());
    /// assert!(recv.as_mut().poll(&mut cx).is_pending());
    /// tx.send("hello").unwrap(); // a thread sends: the task is woken
    /// assert_eq!(recv.poll(&mut cx), Poll::Ready(Ok("hello")));
    /// ```
    pub fn recv_async(&self) -> RecvFuture<'_, T> {
        RecvFuture {
            receiver: self,
            state: RecvState::new(),
            _pinned: PhantomPinned,
        }
    }
}

/// The state of one pending async send, kept in place between polls (the future's or the
/// sink's); `key` is its pinned address.
pub(crate) struct SendState<T> {
    pub(crate) value: Option<T>,
    wait: TaskWait,
    zero_pending: Option<Arc<Packet<T>>>,
}

impl<T> SendState<T> {
    pub(crate) fn new(value: Option<T>) -> Self {
        SendState {
            value,
            wait: TaskWait::new(),
            zero_pending: None,
        }
    }

    /// True while a value is not yet sent (held here, or waiting in a rendezvous).
    pub(crate) fn is_pending(&self) -> bool {
        self.value.is_some() || self.zero_pending.is_some()
    }

    /// Drives the held value into the channel. `Ready(Ok)` also when there is nothing to send.
    pub(crate) fn poll(
        &mut self,
        shared: &Shared<T>,
        key: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<T>>> {
        let SendState {
            value,
            wait,
            zero_pending,
        } = self;
        if value.is_none() && zero_pending.is_none() {
            return Poll::Ready(Ok(()));
        }
        match &shared.flavor {
            Flavor::Array(c) => {
                let q = c.queue();
                wait.poll(
                    q.not_full(),
                    key,
                    cx.waker(),
                    || {
                        let v = value.take().expect("a pending send holds its value");
                        match q.push_observe(v) {
                            Handover::Done => Attempt::Ready(Ok(())),
                            Handover::Refused(v) => Attempt::Ready(Err(SendError(v))),
                            Handover::Wait(v, seen) => {
                                *value = Some(v);
                                Attempt::Wait(seen)
                            }
                        }
                    },
                    |&seen| q.push_changed(seen),
                )
            }
            Flavor::List(c) => {
                let v = value.take().expect("a pending send holds its value");
                Poll::Ready(c.push(v).map_err(SendError))
            }
            Flavor::Zero(c) => c
                .poll_send(zero_pending, value, cx.waker())
                .map(|r| r.map_err(SendError)),
            // No sender exists for a timer channel.
            Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => {
                Poll::Ready(Err(SendError(value.take().expect("checked above"))))
            }
        }
    }

    /// Withdraws a pending send (its value, if unsent, is dropped with `self`).
    pub(crate) fn cancel(&mut self, shared: &Shared<T>, key: usize) {
        match &shared.flavor {
            Flavor::Array(c) => self.wait.cancel(c.queue().not_full(), key),
            Flavor::List(_) | Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => {}
            Flavor::Zero(c) => c.cancel_send(&mut self.zero_pending),
        }
    }
}

/// The state of one pending async receive (a future's or a stream's).
pub(crate) struct RecvState {
    wait: TaskWait,
    /// Whether the rendezvous flavour has this task in its receivers' FIFO.
    zero_registered: bool,
    /// A timer channel's wakeup: the instant it was armed for and the sleeping thread's handle.
    timer: Option<(Instant, Arc<TimerWake>)>,
}

/// Shared with the thread that sleeps until a timer channel is due and then wakes the task;
/// `None` once the future completed or was dropped.
struct TimerWake {
    waker: Mutex<Option<Waker>>,
}

/// One poll of an async receive on a timer channel. Nothing in the channel wakes a task when
/// the clock reaches the due instant, so the first `Pending` for a given instant starts a
/// thread that sleeps (on its parker) until then and wakes the task; a re-poll with a new waker
/// updates the one the thread will wake.
fn poll_timer<T, C: Clock<T>>(
    clock: &C,
    timer: &mut Option<(Instant, Arc<TimerWake>)>,
    waker: &Waker,
) -> Poll<Result<T, RecvError>> {
    if let Some(v) = clock.poll_due(Instant::now()) {
        disarm(timer);
        return Poll::Ready(Ok(v));
    }
    let Some(due) = clock.next_due() else {
        disarm(timer); // `never`, or a delivered `at`: nothing will ever be due.
        return Poll::Pending;
    };
    if let Some((armed_for, wake)) = timer {
        if *armed_for == due {
            let mut w = wake.waker.lock();
            if !w.as_ref().is_some_and(|w| w.will_wake(waker)) {
                *w = Some(waker.clone());
            }
            return Poll::Pending;
        }
    }
    disarm(timer);
    let wake = Arc::new(TimerWake {
        waker: Mutex::new(Some(waker.clone())),
    });
    let sleeper = Arc::clone(&wake);
    crate::sync::thread::spawn(move || {
        with_local_parker(|parker| {
            while Instant::now() < due {
                parker.park_until(Some(due));
            }
        });
        if let Some(w) = sleeper.waker.lock().take() {
            w.wake();
        }
    });
    *timer = Some((due, wake));
    Poll::Pending
}

/// The future no longer waits for the timer: the sleeping thread wakes nobody.
fn disarm(timer: &mut Option<(Instant, Arc<TimerWake>)>) {
    if let Some((_, wake)) = timer.take() {
        wake.waker.lock().take();
    }
}

impl RecvState {
    pub(crate) const fn new() -> Self {
        RecvState {
            wait: TaskWait::new(),
            zero_registered: false,
            timer: None,
        }
    }

    pub(crate) fn poll<T>(
        &mut self,
        shared: &Shared<T>,
        key: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, RecvError>> {
        self.poll_in(shared, key, cx, None)
    }

    /// [`poll`](Self::poll) for a receive of a `select` whose claim word is `ctx` (used by the
    /// rendezvous flavour only).
    pub(crate) fn poll_in<T>(
        &mut self,
        shared: &Shared<T>,
        key: usize,
        cx: &mut Context<'_>,
        ctx: Option<&Arc<SelectCtx>>,
    ) -> Poll<Result<T, RecvError>> {
        let RecvState {
            wait,
            zero_registered,
            timer,
        } = self;
        let ready = |r: Result<T, ()>| r.map_err(|()| RecvError);
        match &shared.flavor {
            Flavor::Array(c) => {
                let q = c.queue();
                wait.poll(
                    q.not_empty(),
                    key,
                    cx.waker(),
                    || match q.pop_observe() {
                        Attempt::Ready(r) => Attempt::Ready(ready(r)),
                        Attempt::Wait(seen) => Attempt::Wait(seen),
                    },
                    |&seen| q.pop_changed(seen),
                )
            }
            Flavor::List(c) => wait.poll(
                c.not_empty(),
                key,
                cx.waker(),
                || match c.recv_observe() {
                    Attempt::Ready(r) => Attempt::Ready(ready(r)),
                    Attempt::Wait(seen) => Attempt::Wait(seen),
                },
                |&seen| c.recv_changed(seen),
            ),
            Flavor::Zero(c) => c
                .poll_recv(key, zero_registered, cx.waker(), ctx)
                .map(|r| r.map_err(|_| RecvError)),
            Flavor::At(c) => poll_timer(&c.0, timer, cx.waker()),
            Flavor::Tick(c) => poll_timer(&c.0, timer, cx.waker()),
            Flavor::Never(c) => poll_timer::<T, _>(&c.0, timer, cx.waker()),
        }
    }

    /// One poll of a `select`'s receive on the rendezvous channel `c`: as [`poll_in`]
    /// (Self::poll_in), but it may also claim a waiting selecting sender
    /// ([`Zero::poll_recv_select`]).
    pub(crate) fn poll_zero_select<T>(
        &mut self,
        c: &Zero<T>,
        key: usize,
        waker: &Waker,
        ctx: &Arc<SelectCtx>,
    ) -> SelectRecv<T> {
        c.poll_recv_select(key, &mut self.zero_registered, waker, ctx)
    }

    /// A `select`'s receive that a rendezvous sender claimed (see [`SelectCtx`]): waits for
    /// the claimer's value; `None` if the claimer abandoned the claim.
    pub(crate) fn wait_claimed<T>(
        &mut self,
        receiver: &Receiver<T>,
        key: usize,
        parker: &Parker,
        waker: &Waker,
    ) -> Option<T> {
        match &receiver.shared.flavor {
            Flavor::Zero(c) => c.wait_claimed(key, &mut self.zero_registered, parker, waker),
            _ => unreachable!("only a rendezvous receive is claimed"),
        }
    }

    /// A poll that only looks (a `select`'s `ready`): ready if a message is there or the
    /// channel is disconnected, taking nothing. Not for timer channels (the select handles
    /// them).
    pub(crate) fn poll_ready<T>(
        &mut self,
        shared: &Shared<T>,
        key: usize,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        match &shared.flavor {
            Flavor::Array(c) => {
                let q = c.queue();
                self.wait.poll_peek(
                    q.not_empty(),
                    key,
                    cx.waker(),
                    || q.pop_ready_observe(),
                    |&seen| q.pop_changed(seen),
                )
            }
            Flavor::List(c) => self.wait.poll_peek(
                c.not_empty(),
                key,
                cx.waker(),
                || c.recv_ready_observe(),
                |&seen| c.recv_changed(seen),
            ),
            Flavor::Zero(c) => c.poll_recv_ready(key, &mut self.zero_registered, cx.waker()),
            Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => {
                if !shared.is_empty() {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            }
        }
    }

    /// Withdraws a pending receive, passing on a wakeup it was chosen for.
    pub(crate) fn cancel<T>(&mut self, shared: &Shared<T>, key: usize) {
        match &shared.flavor {
            Flavor::Array(c) => self.wait.cancel(c.queue().not_empty(), key),
            Flavor::List(c) => self.wait.cancel(c.not_empty(), key),
            Flavor::Zero(c) => c.cancel_recv(key, &mut self.zero_registered),
            Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => disarm(&mut self.timer),
        }
    }
}

impl<T> Future for SendFuture<'_, T> {
    type Output = Result<(), SendError<T>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: nothing is moved out of the pinned future; its fields are used in place.
        let this = unsafe { self.get_unchecked_mut() };
        let key = this as *const Self as usize;
        assert!(
            this.state.is_pending(),
            "SendFuture polled after completion"
        );
        this.state.poll(&this.sender.shared, key, cx)
    }
}

impl<T> Drop for SendFuture<'_, T> {
    fn drop(&mut self) {
        let key = self as *const Self as usize;
        self.state.cancel(&self.sender.shared, key);
    }
}

impl<T> Future for RecvFuture<'_, T> {
    type Output = Result<T, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: nothing is moved out of the pinned future; its fields are used in place.
        let this = unsafe { self.get_unchecked_mut() };
        let key = this as *const Self as usize;
        this.state.poll(&this.receiver.shared, key, cx)
    }
}

impl<T> Drop for RecvFuture<'_, T> {
    fn drop(&mut self) {
        let key = self as *const Self as usize;
        self.state.cancel(&self.receiver.shared, key);
    }
}

impl<T> fmt::Debug for SendFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendFuture")
            .field("sent", &!self.state.is_pending())
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for RecvFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvFuture").finish_non_exhaustive()
    }
}
