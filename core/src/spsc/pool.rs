//! A pool of nodes allocated once and recycled through a second SPSC ring.
//!
//! Seed `004_35da246730ba79cd.txt` shows why: a queue whose producer allocates each node and
//! whose consumer frees it meets the allocator's locks (glibc's arena mutex once chunks pass the
//! fastbin limit), so the queue is only as non-blocking as `malloc`. Here every node is allocated
//! when the pool is made and then travels in a circle: the sender fills a free node and sends it
//! on the data ring, the receiver reads it and sends it back on the free ring. After
//! construction, no operation calls the allocator.
//!
//! Sizing: the data ring holds `capacity` nodes, and each side holds at most one node at a time
//! (only inside the closure it passed), so with `capacity + 2` nodes the free ring is never empty
//! when the sender takes a node: the sender never waits for a node, only (in `push`) for room in
//! the data ring. The closure-based API is what makes running out impossible: no node can be
//! kept outside the two rings and the two closures. One exception: if `fill` or `read` panics,
//! the node that side holds is dropped with the unwinding; a caller that catches the panic and
//! goes on using the pool has one node fewer (after `capacity + 2` such panics `send_with` would
//! wait forever).

use super::ring::{channel, Consumer, Producer};
use std::error::Error;
use std::fmt;

/// Makes a pool of `capacity + 2` nodes, each built by `init`, and returns its two ends.
///
/// # Examples
///
/// ```
/// let (mut tx, mut rx) = berth::spsc::pool(4, || [0u8; 64]);
/// use std::thread;
///
/// let t = thread::spawn(move || {
///     for i in 0..100u8 {
///         tx.send_with(|node| node[0] = i).unwrap(); // fills a recycled node in place
///     }
/// });
/// let mut sum = 0u32;
/// while let Ok(first) = rx.recv_with(|node| node[0]) {
///     sum += u32::from(first); // the node goes back to the sender after the closure
/// }
/// t.join().unwrap();
/// assert_eq!(sum, (0..100).sum());
/// ```
///
/// # Panics
///
/// If `capacity` is 0 or too large (as [`channel`](super::channel)), or if `init` panics.
pub fn pool<T>(capacity: usize, mut init: impl FnMut() -> T) -> (PoolSender<T>, PoolReceiver<T>) {
    let nodes = capacity
        .checked_add(2)
        .unwrap_or_else(|| panic!("spsc pool capacity {capacity} is too large"));
    let (data_tx, data_rx) = channel::<Box<T>>(capacity);
    let (mut free_tx, free_rx) = channel::<Box<T>>(nodes);
    for _ in 0..nodes {
        if free_tx.try_push(Box::new(init())).is_err() {
            unreachable!("the free ring holds every node");
        }
    }
    (
        PoolSender {
            data: data_tx,
            free: free_rx,
        },
        PoolReceiver {
            data: data_rx,
            free: free_tx,
        },
    )
}

/// The sending end of a [`pool`]: fills free nodes in place and sends them.
///
/// # Examples
///
/// ```
/// use std::thread;
///
/// let (mut tx, mut rx) = berth::spsc::pool(2, || String::with_capacity(32));
/// let sender = thread::spawn(move || {
///     for word in ["recycled", "nodes"] {
///         // The node is a String from the pool: clear and refill it, no allocation.
///         tx.send_with(|s| {
///             s.clear();
///             s.push_str(word);
///         })
///         .unwrap();
///     }
/// });
/// let mut got = Vec::new();
/// while let Ok(len) = rx.recv_with(|s| s.len()) {
///     got.push(len);
/// }
/// sender.join().unwrap();
/// assert_eq!(got, [8, 5]);
/// ```
pub struct PoolSender<T> {
    data: Producer<Box<T>>,
    free: Consumer<Box<T>>,
}

/// The receiving end of a [`pool`]: reads nodes in place and hands them back.
///
/// # Examples
///
/// ```
/// let (mut tx, mut rx) = berth::spsc::pool(4, || vec![0u32; 16]);
/// tx.send_with(|v| v.fill(3)).unwrap();
/// assert_eq!(rx.recv_with(|v| v.iter().sum::<u32>()), Ok(48));
/// drop(tx);
/// assert!(rx.recv_with(|v| v.len()).is_err()); // the sender is gone, nothing is left
/// ```
pub struct PoolReceiver<T> {
    data: Consumer<Box<T>>,
    free: Producer<Box<T>>,
}

/// The receiver of the pool is gone: nothing can be sent.
///
/// # Examples
///
/// ```
/// use berth::spsc::PoolSendError;
///
/// let (mut tx, rx) = berth::spsc::pool(1, || 0u8);
/// drop(rx);
/// assert_eq!(tx.send_with(|n| *n = 1), Err(PoolSendError));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct PoolSendError;

/// The sender of the pool is gone and every node sent has been received.
///
/// # Examples
///
/// ```
/// use berth::spsc::PoolRecvError;
///
/// let (tx, mut rx) = berth::spsc::pool(1, || 0u8);
/// drop(tx);
/// assert_eq!(rx.recv_with(|n| *n), Err(PoolRecvError));
/// ```
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct PoolRecvError;

impl<T> PoolSender<T> {
    /// Takes a free node, lets `fill` write into it, and sends it, waiting (spin, then park)
    /// while the data ring is full. Fails once the receiver is gone (`fill` may or may not have
    /// run on a node that is then dropped with the pool).
    ///
    /// # Panics
    ///
    /// If `fill` panics: the panic goes on, and the node it was filling is dropped, so the pool
    /// has one node fewer (after `capacity + 2` such panics, `send_with` would wait forever).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, mut rx) = berth::spsc::pool(1, || [0u8; 4]);
    /// tx.send_with(|node| node.copy_from_slice(b"ping")).unwrap();
    /// assert_eq!(rx.recv_with(|node| *node), Ok(*b"ping"));
    /// ```
    pub fn send_with(&mut self, fill: impl FnOnce(&mut T)) -> Result<(), PoolSendError> {
        if self.data.is_disconnected() {
            return Err(PoolSendError);
        }
        // Free nodes come back as long as the receiver lives; once it is gone, its end of the
        // free ring is dropped and this fails instead of waiting forever.
        let mut node = self.free.pop().map_err(|_| PoolSendError)?;
        fill(&mut node);
        self.data.push(node).map_err(|_| PoolSendError)
    }

    /// The number of nodes the data ring holds at most.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _rx) = berth::spsc::pool(4, || 0u8); // 4 + 2 nodes in all
    /// assert_eq!(tx.capacity(), 4);
    /// ```
    pub fn capacity(&self) -> usize {
        self.data.capacity()
    }
}

impl<T> PoolReceiver<T> {
    /// Receives a node, lets `read` use it in place, and hands the node back to the sender.
    /// Waits while nothing was sent; fails once the sender is gone and everything was received.
    ///
    /// # Panics
    ///
    /// If `read` panics: the panic goes on, and the node it was reading is dropped, so the pool
    /// has one node fewer (after `capacity + 2` such panics, `send_with` would wait forever).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, mut rx) = berth::spsc::pool(2, || 0u64);
    /// tx.send_with(|n| *n = 40).unwrap();
    /// tx.send_with(|n| *n = 2).unwrap();
    /// let a = rx.recv_with(|n| *n).unwrap();
    /// let b = rx.recv_with(|n| *n).unwrap();
    /// assert_eq!(a + b, 42);
    /// ```
    pub fn recv_with<R>(&mut self, read: impl FnOnce(&mut T) -> R) -> Result<R, PoolRecvError> {
        let mut node = self.data.pop().map_err(|_| PoolRecvError)?;
        let result = read(&mut node);
        // The free ring has room for every node, so this never waits; if the sender is gone the
        // node is simply dropped.
        let _ = self.free.try_push(node);
        Ok(result)
    }

    /// The number of nodes the data ring holds at most.
    ///
    /// # Examples
    ///
    /// ```
    /// let (_tx, rx) = berth::spsc::pool(4, || 0u8);
    /// assert_eq!(rx.capacity(), 4);
    /// ```
    pub fn capacity(&self) -> usize {
        self.data.capacity()
    }
}

impl fmt::Display for PoolSendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending into a pool whose receiver is gone")
    }
}

impl fmt::Display for PoolRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("receiving from a drained pool whose sender is gone")
    }
}

impl Error for PoolSendError {}
impl Error for PoolRecvError {}

impl<T> fmt::Debug for PoolSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolSender")
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for PoolReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolReceiver")
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}
