//! Waiting on several channel operations at once: [`Select`] and the [`select!`](crate::select)
//! macro.

use super::err::{ReadyTimeoutError, SelectTimeoutError, TryReadyError, TrySelectError};
use super::flavors::zero::{SelectCtx, SelectRecv};
use super::flavors::SendFail;
use super::future::RecvState;
use super::{Flavor, Receiver, RecvError, SendError, Sender, Shared};
use crate::park::{with_local_waker, Attempt, Backoff, Parker, TaskWait};
use crate::sync::Arc;
use std::cell::Cell;
use std::fmt;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// One operation of a select, behind a trait object (the operations have different `T`s).
trait Operation {
    /// Completes (a receive) or finds ready (a send) without registering; true if it did.
    fn try_ready(&mut self) -> bool;
    /// Whether it could proceed now, without doing anything (for `ready`).
    fn is_ready(&self) -> bool;
    /// Registers with `cx`'s waker unless ready; `peek`: only look (for `ready`). `ctx`: this
    /// select's claim word (rendezvous channels: see [`SelectCtx`]).
    fn poll(&mut self, cx: &mut Context<'_>, peek: bool, ctx: &Arc<SelectCtx>) -> Poll<()>;
    /// A receive whose select was claimed by a rendezvous sender (see [`SelectCtx`]): waits
    /// for the claimer's value and holds it as its result; false if the claimer abandoned the
    /// claim (the select then polls again).
    fn wait_claimed(&mut self, parker: &Parker, waker: &Waker) -> bool;
    /// A receive whose last `poll` claimed a selecting sender instead of receiving: the select
    /// is committed to it and must [`wait_claimed`](Self::wait_claimed) for the value.
    fn claimed_sender(&self) -> bool;
    /// A send whose select was claimed by a rendezvous receiver while it slept: looks up the
    /// receive reserved for it (so that the send completes into it); false if there is none.
    fn take_reverse_claim(&mut self) -> bool;
    /// The key its rendezvous registration carries (the claim names it).
    fn key(&self) -> usize;
    /// A send: the key of the rendezvous receive it claimed, if it did.
    fn claimed(&self) -> Option<usize>;
    /// A selected send dropped without being completed: release the receive it claimed.
    fn abandon(&mut self);
    /// Withdraws a registration, passing on a wakeup it was chosen for.
    fn cancel(&mut self);
    /// For a timer channel: when it is next due.
    fn next_due(&self) -> Option<Instant>;
    /// The address of the channel (to check that the completing handle is the selected one).
    fn channel(&self) -> *const ();
    fn is_send(&self) -> bool;
    /// A receive: a pointer to its `Option<Result<T, RecvError>>`.
    fn result(&mut self) -> *mut ();
}

/// A handle added to a select, kept as a plain reference until the select needs more: the
/// first, non-registering round (step 1) tries it directly, and the boxed [`Operation`] that
/// registers and holds a result is built only for the operation that is selected there, or for
/// every operation once the select has to wait. So a select that finds an operation ready at
/// once allocates only that operation's box.
trait Handle<'a> {
    /// Step 1: completes a receive, or finds a send ready (claiming a rendezvous partner), without
    /// registering; the operation (holding a receive's result) if it did.
    fn try_select(&'a self) -> Option<Box<dyn Operation + 'a>>;
    /// Whether it could proceed now, without doing anything (for `ready`).
    fn is_ready(&self) -> bool;
    /// The operation, to register with.
    fn build(&'a self) -> Box<dyn Operation + 'a>;
    /// Whether it is on a rendezvous channel (see [`Select::run`] for what that changes).
    fn rendezvous(&self) -> bool;
}

impl<'a, T> Handle<'a> for Receiver<T> {
    fn try_select(&'a self) -> Option<Box<dyn Operation + 'a>> {
        let result = match self.try_recv() {
            Ok(v) => Ok(v),
            Err(super::TryRecvError::Disconnected) => Err(RecvError),
            Err(super::TryRecvError::Empty) => return None,
        };
        Some(Box::new(RecvOp {
            receiver: self,
            state: RecvState::new(),
            result: Some(result),
            claimed_sender: false,
        }))
    }

    fn is_ready(&self) -> bool {
        recv_is_ready(self)
    }

    fn rendezvous(&self) -> bool {
        matches!(self.shared.flavor, Flavor::Zero(_))
    }

    fn build(&'a self) -> Box<dyn Operation + 'a> {
        Box::new(RecvOp {
            receiver: self,
            state: RecvState::new(),
            result: None,
            claimed_sender: false,
        })
    }
}

impl<'a, T> Handle<'a> for Sender<T> {
    fn try_select(&'a self) -> Option<Box<dyn Operation + 'a>> {
        let mut claimed = None;
        send_try_ready(self, &mut claimed).then(|| {
            Box::new(SendOp {
                sender: self,
                wait: TaskWait::new(),
                zero_registered: false,
                claimed,
            }) as Box<dyn Operation + 'a>
        })
    }

    fn is_ready(&self) -> bool {
        send_is_ready(self)
    }

    fn rendezvous(&self) -> bool {
        matches!(self.shared.flavor, Flavor::Zero(_))
    }

    fn build(&'a self) -> Box<dyn Operation + 'a> {
        Box::new(SendOp {
            sender: self,
            wait: TaskWait::new(),
            zero_registered: false,
            claimed: None,
        })
    }
}

/// One added operation: its handle, and its operation once built.
struct Entry<'a> {
    handle: &'a dyn Handle<'a>,
    op: Option<Box<dyn Operation + 'a>>,
}

impl<'a> Entry<'a> {
    fn op(&mut self) -> &mut (dyn Operation + 'a) {
        self.op.as_deref_mut().expect("built before use")
    }
}

fn recv_is_ready<T>(receiver: &Receiver<T>) -> bool {
    let shared = &*receiver.shared;
    match &shared.flavor {
        Flavor::Array(c) => matches!(c.queue().pop_ready_observe(), Attempt::Ready(())),
        Flavor::List(c) => matches!(c.recv_ready_observe(), Attempt::Ready(())),
        Flavor::Zero(c) => c.is_recv_ready(),
        Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => !shared.is_empty(),
    }
}

/// Step 1 for a send: room, a receiver that will take the value (claimed if it is another
/// select's), or a disconnected channel.
/// `claimed`: the key of another select's receive that a rendezvous send claimed.
fn send_try_ready<T>(sender: &Sender<T>, claimed: &mut Option<usize>) -> bool {
    *claimed = None;
    match &sender.shared.flavor {
        Flavor::Array(c) => matches!(c.queue().push_ready_observe(), Attempt::Ready(())),
        Flavor::List(_) => true,
        Flavor::Zero(c) => c.try_claim_receiver(claimed),
        // No sender exists for a timer channel.
        Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => true,
    }
}

fn send_is_ready<T>(sender: &Sender<T>) -> bool {
    match &sender.shared.flavor {
        Flavor::Array(c) => matches!(c.queue().push_ready_observe(), Attempt::Ready(())),
        Flavor::Zero(c) => c.is_send_ready(),
        Flavor::List(_) | Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => true,
    }
}

fn channel_addr<T>(shared: &Shared<T>) -> *const () {
    shared as *const Shared<T> as *const ()
}

fn is_timer<T>(shared: &Shared<T>) -> bool {
    matches!(
        shared.flavor,
        Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_)
    )
}

fn next_due<T>(shared: &Shared<T>) -> Option<Instant> {
    use super::flavors::timer::Clock;
    match &shared.flavor {
        Flavor::At(c) => Clock::<T>::next_due(&c.0),
        Flavor::Tick(c) => Clock::<T>::next_due(&c.0),
        _ => None,
    }
}

struct RecvOp<'a, T> {
    receiver: &'a Receiver<T>,
    state: RecvState,
    /// Set once the operation completed (a receive is complete when it is selected).
    result: Option<Result<T, RecvError>>,
    /// Its last poll claimed a selecting sender on a rendezvous channel (see
    /// [`Operation::claimed_sender`]).
    claimed_sender: bool,
}

impl<T> Operation for RecvOp<'_, T> {
    fn try_ready(&mut self) -> bool {
        match self.receiver.try_recv() {
            Ok(v) => {
                self.result = Some(Ok(v));
                true
            }
            Err(super::TryRecvError::Disconnected) => {
                self.result = Some(Err(RecvError));
                true
            }
            Err(super::TryRecvError::Empty) => false,
        }
    }

    fn is_ready(&self) -> bool {
        recv_is_ready(self.receiver)
    }

    fn poll(&mut self, cx: &mut Context<'_>, peek: bool, ctx: &Arc<SelectCtx>) -> Poll<()> {
        let shared = &*self.receiver.shared;
        if is_timer(shared) {
            // Nothing wakes a timer: the select parks no later than `next_due`.
            return if peek {
                if !shared.is_empty() {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            } else if self.try_ready() {
                Poll::Ready(())
            } else {
                Poll::Pending
            };
        }
        let key = self.key();
        if peek {
            return self.state.poll_ready(shared, key, cx);
        }
        self.claimed_sender = false;
        if let Flavor::Zero(c) = &shared.flavor {
            return match self.state.poll_zero_select(c, key, cx.waker(), ctx) {
                SelectRecv::Ready(r) => {
                    self.result = Some(r.map_err(|_| RecvError));
                    Poll::Ready(())
                }
                SelectRecv::Claimed => {
                    self.claimed_sender = true;
                    Poll::Ready(())
                }
                SelectRecv::Pending => Poll::Pending,
            };
        }
        match self.state.poll_in(shared, key, cx, Some(ctx)) {
            Poll::Ready(r) => {
                self.result = Some(r);
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn wait_claimed(&mut self, parker: &Parker, waker: &Waker) -> bool {
        let key = self.key();
        match self.state.wait_claimed(self.receiver, key, parker, waker) {
            Some(v) => {
                self.result = Some(Ok(v));
                true
            }
            None => false,
        }
    }

    fn claimed_sender(&self) -> bool {
        self.claimed_sender
    }

    fn take_reverse_claim(&mut self) -> bool {
        unreachable!("only a select's sends are claimed by receivers")
    }

    fn key(&self) -> usize {
        self as *const Self as usize
    }

    fn claimed(&self) -> Option<usize> {
        None
    }

    fn abandon(&mut self) {}

    fn cancel(&mut self) {
        let key = self.key();
        self.state.cancel(&self.receiver.shared, key);
    }

    fn next_due(&self) -> Option<Instant> {
        next_due(&self.receiver.shared)
    }

    fn channel(&self) -> *const () {
        channel_addr(&self.receiver.shared)
    }

    fn is_send(&self) -> bool {
        false
    }

    fn result(&mut self) -> *mut () {
        &mut self.result as *mut Option<Result<T, RecvError>> as *mut ()
    }
}

struct SendOp<'a, T> {
    sender: &'a Sender<T>,
    wait: TaskWait,
    /// Whether a rendezvous channel has this operation among its selecting senders.
    zero_registered: bool,
    /// The key of another select's rendezvous receive this send claimed: the send is completed
    /// into that reserved receive.
    claimed: Option<usize>,
}

impl<T> Operation for SendOp<'_, T> {
    fn try_ready(&mut self) -> bool {
        send_try_ready(self.sender, &mut self.claimed)
    }

    fn is_ready(&self) -> bool {
        send_is_ready(self.sender)
    }

    fn poll(&mut self, cx: &mut Context<'_>, peek: bool, ctx: &Arc<SelectCtx>) -> Poll<()> {
        let key = self.key();
        match &self.sender.shared.flavor {
            Flavor::Array(c) => {
                let q = c.queue();
                if peek {
                    self.wait.poll_peek(
                        q.not_full(),
                        key,
                        cx.waker(),
                        || q.push_ready_observe(),
                        |&head| q.push_changed(head),
                    )
                } else {
                    self.wait.poll(
                        q.not_full(),
                        key,
                        cx.waker(),
                        || q.push_ready_observe(),
                        |&head| q.push_changed(head),
                    )
                }
            }
            Flavor::Zero(c) => {
                self.claimed = None;
                c.poll_send_ready(
                    key,
                    &mut self.zero_registered,
                    cx.waker(),
                    ctx,
                    peek,
                    &mut self.claimed,
                )
            }
            Flavor::List(_) | Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => Poll::Ready(()),
        }
    }

    fn cancel(&mut self) {
        let key = self.key();
        match &self.sender.shared.flavor {
            Flavor::Array(c) => self.wait.cancel(c.queue().not_full(), key),
            Flavor::Zero(c) => c.cancel_send_ready(key, &mut self.zero_registered),
            Flavor::List(_) | Flavor::At(_) | Flavor::Tick(_) | Flavor::Never(_) => {}
        }
    }

    fn next_due(&self) -> Option<Instant> {
        None
    }

    fn wait_claimed(&mut self, _: &Parker, _: &Waker) -> bool {
        unreachable!("only a select's receives wait for a claimed value")
    }

    fn claimed_sender(&self) -> bool {
        false
    }

    fn take_reverse_claim(&mut self) -> bool {
        let key = self.key();
        match &self.sender.shared.flavor {
            Flavor::Zero(c) => {
                self.claimed = c.take_reverse_claim(key, &mut self.zero_registered);
                debug_assert!(self.claimed.is_some(), "a claimed send has its receive");
                self.claimed.is_some()
            }
            _ => unreachable!("only a rendezvous send is claimed"),
        }
    }

    fn key(&self) -> usize {
        self as *const Self as usize
    }

    fn claimed(&self) -> Option<usize> {
        self.claimed
    }

    fn abandon(&mut self) {
        // Dropped unsent: release the receive it claimed, or else pass on the wakeup it may
        // have been woken with (see `Zero::pass_on`).
        if let Flavor::Zero(c) = &self.sender.shared.flavor {
            match self.claimed.take() {
                Some(key) => c.abandon_claim(key),
                None => c.pass_on(),
            }
        }
    }

    fn channel(&self) -> *const () {
        channel_addr(&self.sender.shared)
    }

    fn is_send(&self) -> bool {
        true
    }

    fn result(&mut self) -> *mut () {
        std::ptr::null_mut()
    }
}

/// A small xorshift generator for the random start of each round (no dependency). Under the
/// models it starts from a fixed seed, so that every execution of a model is reproducible.
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn new() -> Self {
        if crate::sync::MODEL {
            return Rng(0x9E37_79B9_7F4A_7C15);
        }
        crate::sync::thread::thread_local! {
            static SEED: Cell<u64> = Cell::new({
                use std::hash::{BuildHasher, Hasher};
                let mut h = std::collections::hash_map::RandomState::new().build_hasher();
                h.write_u64(0x5EED);
                h.finish() | 1
            });
        }
        let seed = SEED
            .try_with(|s| {
                // A different stream for each select made on this thread.
                let v = s.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
                s.set(v);
                v
            })
            .unwrap_or(0x2545_F491_4F6C_DD1D);
        Rng(seed | 1)
    }

    /// A uniformly distributed index below `n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        // Multiply-shift: unbiased enough for n far below 2^32, and no division.
        ((u128::from(x) * n as u128) >> 64) as usize
    }
}

/// For `select!`'s fast path: a uniformly random case to start from (`n > 0`; 0 if `n == 0`).
#[doc(hidden)]
pub fn __select_start(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        Rng::new().below(n)
    }
}

/// For `select!`'s fast path: a send's selection, to complete with [`__select_send`]. Dropped
/// without being completed (the message expression panicked), it releases the rendezvous
/// receive it claimed.
#[doc(hidden)]
#[derive(Debug)]
pub struct __SendClaim<'a, T> {
    sender: &'a Sender<T>,
    claimed: Option<usize>,
}

impl<T> Drop for __SendClaim<'_, T> {
    fn drop(&mut self) {
        // Never registered (the fast path registers nothing), so no wakeup to pass on.
        if let (Some(key), Flavor::Zero(c)) = (self.claimed.take(), &self.sender.shared.flavor) {
            c.abandon_claim(key);
        }
    }
}

/// For `select!`'s fast path: whether a send on `sender` can be selected now (room, a receiver
/// that will take the value, claimed if it is another select's, or a disconnected channel).
#[doc(hidden)]
pub fn __select_send_ready<T>(sender: &Sender<T>) -> Option<__SendClaim<'_, T>> {
    let mut claimed = None;
    send_try_ready(sender, &mut claimed).then_some(__SendClaim { sender, claimed })
}

/// For `select!`'s fast path: completes a send selected by [`__select_send_ready`].
#[doc(hidden)]
pub fn __select_send<T>(mut claim: __SendClaim<'_, T>, msg: T) -> Result<(), SendError<T>> {
    let claimed = claim.claimed.take();
    send_selected(claim.sender, claimed, msg)
}

/// Completes a selected send: into the rendezvous receive it claimed, or as `Sender::send`.
fn send_selected<T>(
    sender: &Sender<T>,
    claimed: Option<usize>,
    msg: T,
) -> Result<(), SendError<T>> {
    match (claimed, &sender.shared.flavor) {
        (Some(key), Flavor::Zero(c)) => c.send_claimed(key, msg).map_err(|e| match e {
            SendFail::Full(v) | SendFail::Disconnected(v) | SendFail::Timeout(v) => SendError(v),
        }),
        _ => sender.send(msg),
    }
}

/// Waits on several channel operations at once and completes exactly one.
///
/// Add operations with [`recv`](Select::recv) and [`send`](Select::send) (each returns the
/// operation's index), then wait with [`select`](Select::select) (or `try_select`,
/// `select_timeout`, `select_deadline`) and complete the returned [`SelectedOperation`] with the
/// handle it names. When several operations are ready, each is chosen with equal probability.
/// A disconnected channel's operation is ready (its completion reports the error).
///
/// The [`select!`](crate::select) macro is the convenient form; `Select` is for a number of
/// operations known only at run time.
///
/// # How a select waits
///
/// A select is a thread polling one async operation per channel, with a waker that unparks it.
/// Each operation sits in its channel's wait list exactly where a pending `recv_async` or
/// `send_async` would, so the no-lost-wakeup argument of [`crate::park`] is the one the async
/// channels already rest on (register, re-check with the structure's RMW, then sleep), and the
/// same loom models check it. One round:
///
/// 1. **Try** every operation without registering, starting at a random one (so that when
///    several are ready each is chosen with equal probability), spinning and yielding briefly
///    between rounds as a blocking receive does. A select with an operation on a rendezvous
///    channel tries once and goes on: it spins in step 4 instead, once registered.
/// 2. **Poll** every operation with this thread's waker: a receive that can take a message takes
///    it, a send that can proceed is chosen; otherwise the operation registers (W1) and re-checks
///    (W2). The first that is ready wins.
/// 3. The winner's registration is already gone; every other operation is **withdrawn**. A
///    notifier removes the entry it wakes, so an operation that finds its entry gone was chosen
///    for a wakeup it will not use, and passes it on (`TaskWait::cancel`): a losing case never
///    swallows a wakeup another waiter needs. (The mutant `select_keeps_losing_registration`
///    skips the withdrawal; its loom model shows a receiver left asleep beside a message.)
/// 4. If nothing was ready, the thread parks until woken, until the deadline, or until the
///    earliest timer channel among the operations is due, and goes back to 2. A select with a
///    rendezvous operation spins and yields for the wakeup first: a rendezvous partner can only
///    pair with a select that is registered, so that is where the brief wait belongs (spinning
///    unregistered, two selects that could pair only took turns yielding).
///
/// # What "selected" means
///
/// - A selected **receive** has already received: the message (or the disconnection) is held by
///   the [`SelectedOperation`] until [`recv`](SelectedOperation::recv) hands it over. Exactly
///   one operation completes per select; the others consume nothing.
/// - A selected **send** found the channel ready (room in a bounded channel, a receiver waiting
///   in a rendezvous channel, always for an unbounded one, or the channel disconnected); the
///   message is sent by [`send`](SelectedOperation::send), as `Sender::send` would send it.
///   Nothing is reserved in between: if another sender takes the room (or the waiting receiver)
///   first, `send` waits for the next, as `Sender::send` does. crossbeam-channel reserves the
///   slot instead, at the price of a consumer that can be held up by the selecting thread
///   between the selection and the send; on buffered channels berth keeps the channel's
///   progress independent of user code (on rendezvous channels a claim does tie two selects
///   together: next item). A rendezvous send completes only when a receiver takes the value. The
///   price is on the selecting side: a program that relies on crossbeam's reservation (a
///   selected send that a plain sender cannot overtake) can block here where it would not
///   under crossbeam. For example, a thread whose select chose `send` on an empty `bounded(1)`
///   channel, whose slot a third thread then fills first, waits in `send` and cannot take its
///   other cases meanwhile.
/// - **Rendezvous channels pair selects by claiming.** A blocked thread or a plain
///   `recv_async` waiting on a rendezvous channel will take a value, so a select's send may
///   count on it. Another *select's* waiting receive has promised nothing (that select may
///   complete something else), so a select's send pairs with it only by claiming that select
///   first: a CAS on the other select's claim word (`SelectCtx` in `flavors/zero.rs`)
///   commits it to that receive, which is then reserved for the claiming send: the claimed
///   select waits for that value (beyond its own deadline, if the claimer is slow: it is
///   committed), and the selected send puts it there without waiting. If the selected send is
///   dropped unsent instead (a panic, or a `break`, `return` or `?` in `select!`'s message
///   expression), the claim is released and the claimed select goes back to waiting on all
///   its cases. The claim works the other way too: a select's receive that finds another
///   select's send waiting (asleep) claims that select, which wakes with its send selected,
///   and the receive waits for the value in a reservation the send then fills (or goes back
///   to polling if the send is dropped unsent). A select can be claimed only while it sleeps,
///   never while it polls its own operations, so no select is committed twice: two threads
///   that each select over "send to the other" and "receive from the other" always meet.
///   (Without the claim both select their sends and both block in `send`; the mutant
///   `select_send_no_claim` restores that, and the shuttle model catches it.)
///
/// Timer channels ([`after`](super::after), [`at`](super::at), [`tick`](super::tick),
/// [`never`](super::never)) register nothing: the select parks no later than the earliest one is
/// due.
///
/// # Examples
///
/// ```
/// use berth::channel::{self, Select};
/// use std::thread;
///
/// let (tx1, rx1) = channel::unbounded::<i32>();
/// let (tx2, rx2) = channel::unbounded::<&str>();
/// thread::spawn(move || tx2.send("hi").unwrap());
///
/// let mut sel = Select::new();
/// let first = sel.recv(&rx1);
/// let second = sel.recv(&rx2);
/// let oper = sel.select(); // sleeps until one of them is ready
/// match oper.index() {
///    i if i == first => println!("{:?}", oper.recv(&rx1)),
///    i if i == second => assert_eq!(oper.recv(&rx2), Ok("hi")),
///    _ => unreachable!(),
/// }
/// # drop(tx1);
/// ```
pub struct Select<'a> {
    ops: Vec<Option<Entry<'a>>>,
    rng: Rng,
}

/// An operation chosen by a [`Select`], which must be completed with
/// [`recv`](SelectedOperation::recv) or [`send`](SelectedOperation::send) on the handle that was
/// added for it.
///
/// # Panics
///
/// Dropping it without completing it panics (as crossbeam-channel's does): the select already
/// chose it, and for a receive already took the message, which is then dropped with it.
///
/// # Examples
///
/// ```
/// use berth::channel::{self, Select};
///
/// let (tx, rx) = channel::unbounded();
/// let (done_tx, done_rx) = channel::bounded(1);
/// tx.send(3).unwrap();
/// let mut sel = Select::new();
/// let recv = sel.recv(&rx);
/// let send = sel.send(&done_tx);
/// let oper = sel.select();
/// // Complete it with the handle that was added at its index.
/// match oper.index() {
///     i if i == recv => assert_eq!(oper.recv(&rx), Ok(3)),
///     i if i == send => oper.send(&done_tx, 0).unwrap(),
///     _ => unreachable!(),
/// }
/// ```
#[must_use = "the selected operation must be completed with `recv` or `send`"]
pub struct SelectedOperation<'a> {
    index: usize,
    op: &'a mut (dyn Operation + 'a),
    completed: bool,
    /// Set by `select!` before it evaluates a send's message: a `break`, `return` or `?` in
    /// that expression drops the operation unsent, which is then no error.
    lenient: bool,
}

impl<'a> Select<'a> {
    /// An empty select.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (_tx, rx) = channel::unbounded::<u8>();
    /// let mut sel = Select::new();
    /// assert_eq!(sel.recv(&rx), 0); // operations are numbered from 0 as they are added
    /// assert_eq!(sel.recv(&rx), 1);
    /// ```
    pub fn new() -> Self {
        Select {
            ops: Vec::new(),
            rng: Rng::new(),
        }
    }

    /// Adds a send on `sender`'s channel; returns its index.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (tx, rx) = channel::bounded(1);
    /// let mut sel = Select::new();
    /// let i = sel.send(&tx);
    /// let oper = sel.select(); // there is room: ready at once
    /// assert_eq!(oper.index(), i);
    /// oper.send(&tx, 5).unwrap();
    /// assert_eq!(rx.recv(), Ok(5));
    /// ```
    pub fn send<T>(&mut self, sender: &'a Sender<T>) -> usize {
        self.add(sender)
    }

    /// Adds a receive on `receiver`'s channel; returns its index.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (tx, rx) = channel::unbounded();
    /// tx.send("x").unwrap();
    /// let mut sel = Select::new();
    /// let i = sel.recv(&rx);
    /// let oper = sel.select();
    /// assert_eq!(oper.index(), i);
    /// assert_eq!(oper.recv(&rx), Ok("x"));
    /// ```
    pub fn recv<T>(&mut self, receiver: &'a Receiver<T>) -> usize {
        self.add(receiver)
    }

    fn add(&mut self, handle: &'a dyn Handle<'a>) -> usize {
        self.ops.push(Some(Entry { handle, op: None }));
        self.ops.len() - 1
    }

    /// Removes the operation at `index` (a channel that is no longer of interest); the other
    /// indices do not change.
    ///
    /// # Panics
    ///
    /// If there is no operation at `index` (never added, or removed already).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (tx1, rx1) = channel::unbounded::<u8>();
    /// let (_tx2, rx2) = channel::unbounded::<u8>();
    /// tx1.send(1).unwrap();
    /// let mut sel = Select::new();
    /// let a = sel.recv(&rx1);
    /// let b = sel.recv(&rx2);
    /// sel.remove(a); // no longer interested in rx1
    /// assert_eq!(b, 1); // the other indices do not change
    /// assert!(sel.try_select().is_err()); // only rx2 is left, and it is empty
    /// ```
    pub fn remove(&mut self, index: usize) {
        match self.ops.get_mut(index) {
            Some(op @ Some(_)) => *op = None,
            _ => panic!("Select::remove: no operation at index {index}"),
        }
    }

    /// Waits until one operation is ready and selects it.
    ///
    /// # Panics
    ///
    /// If no operation was added (it would wait forever).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    /// use std::thread;
    ///
    /// let (tx, rx) = channel::bounded(0);
    /// let sender = thread::spawn(move || tx.send(10).unwrap());
    /// let mut sel = Select::new();
    /// let i = sel.recv(&rx);
    /// let oper = sel.select(); // sleeps until the rendezvous send arrives
    /// assert_eq!(oper.index(), i);
    /// assert_eq!(oper.recv(&rx), Ok(10));
    /// sender.join().unwrap();
    /// ```
    pub fn select(&mut self) -> SelectedOperation<'_> {
        assert!(
            self.ops.iter().any(Option::is_some),
            "Select::select: no operation was added, so it would wait forever"
        );
        match self.run(Some(None), false) {
            Some(index) => self.selected(index),
            None => unreachable!("a select without a deadline returns only when one is ready"),
        }
    }

    /// Selects an operation that is ready now, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (tx, rx) = channel::unbounded();
    /// let mut sel = Select::new();
    /// sel.recv(&rx);
    /// assert!(sel.try_select().is_err()); // nothing is ready now
    /// tx.send(1).unwrap();
    /// let oper = sel.try_select().unwrap();
    /// assert_eq!(oper.recv(&rx), Ok(1));
    /// ```
    pub fn try_select(&mut self) -> Result<SelectedOperation<'_>, TrySelectError> {
        match self.run(None, false) {
            Some(index) => Ok(self.selected(index)),
            None => Err(TrySelectError),
        }
    }

    /// Waits at most `timeout` for an operation to be ready and selects it.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    /// use std::time::Duration;
    ///
    /// let (tx, rx) = channel::unbounded::<i32>();
    /// let mut sel = Select::new();
    /// let i = sel.recv(&rx);
    /// assert!(sel.select_timeout(Duration::from_millis(1)).is_err());
    /// drop(tx); // a disconnected channel's operation is ready
    /// let oper = sel.select_timeout(Duration::from_millis(1)).unwrap();
    /// assert_eq!(oper.index(), i);
    /// assert!(oper.recv(&rx).is_err()); // its completion reports the disconnection
    /// ```
    pub fn select_timeout(
        &mut self,
        timeout: Duration,
    ) -> Result<SelectedOperation<'_>, SelectTimeoutError> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.select_deadline(deadline),
            None => Ok(self.select()),
        }
    }

    /// Waits until `deadline` at most for an operation to be ready and selects it.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    /// use std::time::{Duration, Instant};
    ///
    /// let (_tx, rx) = channel::unbounded::<i32>();
    /// let timer = channel::after(Duration::from_millis(1));
    /// let mut sel = Select::new();
    /// sel.recv(&rx);
    /// let fired = sel.recv(&timer);
    /// let oper = sel.select_deadline(Instant::now() + Duration::from_secs(60)).unwrap();
    /// assert_eq!(oper.index(), fired); // the timer channel is due long before the deadline
    /// assert!(oper.recv(&timer).is_ok());
    /// ```
    pub fn select_deadline(
        &mut self,
        deadline: Instant,
    ) -> Result<SelectedOperation<'_>, SelectTimeoutError> {
        match self.run(Some(Some(deadline)), false) {
            Some(index) => Ok(self.selected(index)),
            None => Err(SelectTimeoutError),
        }
    }

    /// Waits until one operation is ready and returns its index, without completing it.
    ///
    /// Nothing is taken: a receive only saw a message (or the disconnection), a send saw room.
    /// By the time the caller acts, another thread may have taken that message or that room, so
    /// the operation that follows should be a `try_` one, in a loop.
    ///
    /// # Panics
    ///
    /// If no operation was added.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (tx, rx) = channel::unbounded();
    /// tx.send(1).unwrap();
    /// let mut sel = Select::new();
    /// let i = sel.recv(&rx);
    /// assert_eq!(sel.ready(), i);
    /// assert_eq!(rx.len(), 1); // nothing was taken
    /// assert_eq!(rx.try_recv(), Ok(1)); // the follow-up is a try_ operation
    /// ```
    pub fn ready(&mut self) -> usize {
        assert!(
            self.ops.iter().any(Option::is_some),
            "Select::ready: no operation was added, so it would wait forever"
        );
        match self.run(Some(None), true) {
            Some(index) => index,
            None => unreachable!("a wait without a deadline returns only when one is ready"),
        }
    }

    /// The index of an operation that is ready now, if any (see [`ready`](Select::ready)).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (tx, rx) = channel::bounded(1);
    /// let mut sel = Select::new();
    /// let send = sel.send(&tx);
    /// assert_eq!(sel.try_ready(), Ok(send)); // room for one
    /// tx.try_send(1).unwrap();
    /// assert!(sel.try_ready().is_err()); // full now
    /// # drop(rx);
    /// ```
    pub fn try_ready(&mut self) -> Result<usize, TryReadyError> {
        self.run(None, true).ok_or(TryReadyError)
    }

    /// Waits at most `timeout` for an operation to be ready (see [`ready`](Select::ready)).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    /// use std::time::Duration;
    ///
    /// let (tx, rx) = channel::unbounded::<u8>();
    /// let mut sel = Select::new();
    /// let i = sel.recv(&rx);
    /// assert!(sel.ready_timeout(Duration::from_millis(1)).is_err());
    /// tx.send(1).unwrap();
    /// assert_eq!(sel.ready_timeout(Duration::from_millis(1)), Ok(i));
    /// ```
    pub fn ready_timeout(&mut self, timeout: Duration) -> Result<usize, ReadyTimeoutError> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.ready_deadline(deadline),
            None => Ok(self.ready()),
        }
    }

    /// Waits until `deadline` at most for an operation to be ready (see [`ready`](Select::ready)).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    /// use std::time::{Duration, Instant};
    ///
    /// let (_tx, rx) = channel::unbounded::<u8>();
    /// let mut sel = Select::new();
    /// sel.recv(&rx);
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(sel.ready_deadline(deadline).is_err());
    /// assert!(Instant::now() >= deadline);
    /// ```
    pub fn ready_deadline(&mut self, deadline: Instant) -> Result<usize, ReadyTimeoutError> {
        self.run(Some(Some(deadline)), true)
            .ok_or(ReadyTimeoutError)
    }

    fn selected(&mut self, index: usize) -> SelectedOperation<'_> {
        let op = self.ops[index]
            .as_mut()
            .expect("the selected operation is present")
            .op();
        SelectedOperation {
            index,
            op,
            completed: false,
            lenient: false,
        }
    }

    /// The select loop (module docs). `wait`: `None` = do not wait, `Some(None)` = forever,
    /// `Some(Some(d))` = until `d`. `peek`: only find a ready operation (`ready`).
    fn run(&mut self, wait: Option<Option<Instant>>, peek: bool) -> Option<usize> {
        // The indices still present; no allocation unless some were removed.
        let removed = self.ops.iter().any(Option::is_none);
        let live: Vec<usize> = if removed {
            (0..self.ops.len())
                .filter(|&i| self.ops[i].is_some())
                .collect()
        } else {
            Vec::new()
        };
        let n = if removed { live.len() } else { self.ops.len() };
        let at = |k: usize| if removed { live[k] } else { k };
        let deadline = wait.flatten();
        let timed_out = |parked: bool| {
            // The models have no clock: a timed wait times out after its first park.
            deadline.is_some_and(|d| (crate::sync::MODEL && parked) || Instant::now() >= d)
        };

        // A rendezvous operation completes only with a partner that can find it, and nothing
        // finds a select that has not registered: such a select spins after registering, not
        // before (step 4), as crossbeam-channel's does. Spinning unregistered, two selects
        // that could pair (or a select and the sleeping partner it would wake) only took turns
        // yielding: the `select_both` benchmark over rendezvous channels spent most of its
        // time in `sched_yield`.
        let rendezvous =
            (0..n).any(|k| self.ops[at(k)].as_ref().expect("live").handle.rendezvous());

        // 1. Try without registering (on the handles: no operation is built unless selected).
        let mut backoff = Backoff::new();
        loop {
            if n > 0 {
                let start = self.rng.below(n);
                for k in 0..n {
                    let i = at((start + k) % n);
                    let entry = self.ops[i].as_mut().expect("live");
                    let ready = match (&mut entry.op, peek) {
                        (Some(op), true) => op.is_ready(),
                        (Some(op), false) => op.try_ready(),
                        (None, true) => entry.handle.is_ready(),
                        (None, false) => match entry.handle.try_select() {
                            Some(op) => {
                                entry.op = Some(op);
                                true
                            }
                            None => false,
                        },
                    };
                    if ready {
                        return Some(i);
                    }
                }
            }
            if wait.is_none() || timed_out(false) {
                return None;
            }
            if rendezvous || backoff.is_completed() {
                break;
            }
            backoff.snooze();
        }

        // 2-4. Register, re-check, park. `ctx` is `BUSY` while this thread polls, `WAITING`
        // only while it parks (when a rendezvous sender may claim one of its receives), `DONE`
        // once it returns.
        for k in 0..n {
            let entry = self.ops[at(k)].as_mut().expect("live");
            if entry.op.is_none() {
                entry.op = Some(entry.handle.build());
            }
        }
        let ops = &mut self.ops;
        let rng = &mut self.rng;
        let ctx = SelectCtx::new();
        let withdraw = |ops: &mut Vec<Option<Entry<'a>>>, keep: Option<usize>| {
            // 3. Withdraw every other registration (forwarding absorbed wakeups). A chosen
            // operation's poll already withdrew its own.
            // MUTANT select_keeps_losing_registration: leave the losers registered, so a later
            // notifier wakes this thread (no longer waiting) instead of a waiter.
            if !cfg!(berth_mutant = "select_keeps_losing_registration") {
                for k in 0..n {
                    let i = at(k);
                    if Some(i) != keep {
                        ops[i].as_mut().expect("live").op().cancel();
                    }
                }
            }
        };
        let outcome = with_local_waker(|parker, waker| {
            let mut cx = Context::from_waker(waker);
            let mut parked = false;
            loop {
                let mut chosen = None;
                let mut reserved = None;
                if n > 0 {
                    let start = rng.below(n);
                    for k in 0..n {
                        let i = at((start + k) % n);
                        let op = ops[i].as_mut().expect("live").op();
                        if op.poll(&mut cx, peek, &ctx).is_ready() {
                            if op.claimed_sender() {
                                reserved = Some(i);
                            } else {
                                chosen = Some(i);
                            }
                            break;
                        }
                    }
                }
                if let Some(i) = reserved {
                    // This receive claimed a sleeping selecting sender (rendezvous): the
                    // select is committed to it. Withdraw the rest first (the wait may take a
                    // moment, and their wakeups belong to others), then wait for the value.
                    // Our word stays `BUSY`, so nothing claims this select meanwhile. If the
                    // claimed sender abandons its send, poll everything again.
                    withdraw(ops, Some(i));
                    if ops[i]
                        .as_mut()
                        .expect("live")
                        .op()
                        .wait_claimed(parker, waker)
                    {
                        ctx.set_done();
                        return Some(i);
                    }
                    continue;
                }
                let give_up = chosen.is_none() && timed_out(parked);
                if chosen.is_some() || give_up {
                    ctx.set_done();
                    withdraw(ops, chosen);
                    return chosen;
                }
                // 4. Sleep until woken, the deadline, or the earliest timer.
                let timer = (0..n)
                    .filter_map(|k| ops[at(k)].as_mut().expect("live").op().next_due())
                    .min();
                let wake_at = match (deadline, timer) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                ctx.set_waiting();
                if rendezvous {
                    parker.spin_then_park_until(wake_at);
                } else {
                    parker.park_until(wake_at);
                }
                parked = true;
                if let Err(key) = ctx.resume() {
                    // A rendezvous partner claimed one of our operations while we slept: that
                    // is the selected operation, whatever else is ready. A claimed receive
                    // waits for the claiming sender's value, unless the claimer abandons it
                    // (its selected send dropped unsent); then poll again. A claimed send is
                    // selected at once: a receive is reserved for its value.
                    let i = (0..n)
                        .map(at)
                        .find(|&i| ops[i].as_mut().expect("live").op().key() == key)
                        .expect("a claim names one of this select's operations");
                    let op = ops[i].as_mut().expect("live").op();
                    let won = if op.is_send() {
                        op.take_reverse_claim()
                    } else {
                        op.wait_claimed(parker, waker)
                    };
                    if won {
                        withdraw(ops, Some(i));
                        return Some(i);
                    }
                    ctx.unclaim();
                }
            }
        });
        outcome
    }
}

impl Default for Select<'_> {
    fn default() -> Self {
        Select::new()
    }
}

impl Drop for Select<'_> {
    fn drop(&mut self) {
        // Under the mutant the losers stay registered; otherwise this finds nothing to do.
        if !cfg!(berth_mutant = "select_keeps_losing_registration") {
            for entry in self.ops.iter_mut().flatten() {
                if let Some(op) = &mut entry.op {
                    op.cancel();
                }
            }
        }
    }
}

impl fmt::Debug for Select<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Select")
            .field("operations", &self.ops.iter().flatten().count())
            .finish_non_exhaustive()
    }
}

impl<'a> SelectedOperation<'a> {
    /// For `select!`: dropping this operation unsent (the message expression left early) is
    /// not an error; the send simply does not happen.
    #[doc(hidden)]
    pub fn __lenient(mut self) -> Self {
        self.lenient = true;
        self
    }

    /// The index of the selected operation (as returned by `Select::send` / `Select::recv`).
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (tx, rx) = channel::unbounded::<u8>();
    /// let (_tx2, rx2) = channel::unbounded::<u8>();
    /// let mut sel = Select::new();
    /// let _first = sel.recv(&rx2);
    /// let second = sel.recv(&rx);
    /// tx.send(1).unwrap();
    /// let oper = sel.select();
    /// assert_eq!(oper.index(), second); // only `rx` had a message
    /// assert_eq!(oper.recv(&rx), Ok(1));
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }

    /// Completes the selected send: sends `msg` on `sender`'s channel (see the module docs: on
    /// a bounded or rendezvous channel whose room another sender took in the meantime, this
    /// waits as [`Sender::send`] does). Fails, handing `msg` back, if the channel is
    /// disconnected.
    ///
    /// # Panics
    ///
    /// If the selected operation is not a send on `sender`'s channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (tx, rx) = channel::unbounded();
    /// let mut sel = Select::new();
    /// sel.send(&tx);
    /// let oper = sel.select();
    /// assert_eq!(oper.send(&tx, "sent"), Ok(()));
    /// assert_eq!(rx.recv(), Ok("sent"));
    /// ```
    pub fn send<T>(mut self, sender: &Sender<T>, msg: T) -> Result<(), SendError<T>> {
        assert!(
            self.op.is_send() && self.op.channel() == channel_addr(&sender.shared),
            "SelectedOperation::send: the selected operation (index {}) is not a send on this \
             sender's channel",
            self.index
        );
        self.completed = true;
        send_selected(sender, self.op.claimed(), msg)
    }

    /// Completes the selected receive: the message it took, or `Err(RecvError)` if the channel
    /// was empty and disconnected.
    ///
    /// # Panics
    ///
    /// If the selected operation is not a receive on `receiver`'s channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use berth::channel::{self, Select};
    ///
    /// let (tx, rx) = channel::unbounded();
    /// tx.send(4).unwrap();
    /// drop(tx);
    /// let mut sel = Select::new();
    /// sel.recv(&rx);
    /// assert_eq!(sel.select().recv(&rx), Ok(4)); // the message it took
    /// let mut sel = Select::new();
    /// sel.recv(&rx);
    /// assert!(sel.select().recv(&rx).is_err()); // empty and disconnected
    /// ```
    pub fn recv<T>(mut self, receiver: &Receiver<T>) -> Result<T, RecvError> {
        assert!(
            !self.op.is_send() && self.op.channel() == channel_addr(&receiver.shared),
            "SelectedOperation::recv: the selected operation (index {}) is not a receive on \
             this receiver's channel",
            self.index
        );
        let slot = self.op.result() as *mut Option<Result<T, RecvError>>;
        // SAFETY: the operation is a receive (`is_send` is false, so it is a `RecvOp<U>` and
        // `result` points at its `Option<Result<U, RecvError>>`) on the channel at the same
        // address as `receiver`'s, which the operation's own `&Receiver<U>` keeps alive. One
        // live allocation has one type: `Shared<U>` is `Shared<T>`, so `U` is `T`. We hold the
        // operation by `&mut`, so nothing else touches the slot.
        let result = unsafe { (*slot).take() };
        self.completed = true;
        result.expect("a selected receive holds its result until it is completed")
    }
}

impl Drop for SelectedOperation<'_> {
    fn drop(&mut self) {
        if !self.completed {
            // A rendezvous receive this send claimed must not wait for it forever.
            self.op.abandon();
        }
        if !self.completed && !self.lenient && !std::thread::panicking() {
            panic!(
                "dropped a SelectedOperation (index {}) without completing it: call `recv` or \
                 `send` with the handle that was selected",
                self.index
            );
        }
    }
}

impl fmt::Debug for SelectedOperation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectedOperation")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}
