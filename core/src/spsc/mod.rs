//! Single-producer single-consumer: a bounded ring whose common operation touches only the
//! calling thread's own cache lines, and a [`pool`] of nodes recycled through a second ring so
//! that moving data between two threads never calls the allocator.
//!
//! [`channel`] returns a [`Producer`] and a [`Consumer`], neither `Clone` (one of each is the
//! whole point: no CAS, no contention). Each side keeps its own position and a cached copy of
//! the other side's, and reads the other side's line only when its cache says full (producer)
//! or empty (consumer).
//!
//! # Examples
//!
//! ```
//! let (mut tx, mut rx) = berth::spsc::channel(4);
//! use std::thread;
//!
//! let t = thread::spawn(move || {
//!     for i in 0..100u32 {
//!         tx.push(i).unwrap(); // waits (spins, then parks) while full
//!     }
//! }); // dropping the producer disconnects
//! let mut sum = 0;
//! while let Ok(v) = rx.pop() { // fails once the producer is gone and the ring is drained
//!     sum += v;
//! }
//! t.join().unwrap();
//! assert_eq!(sum, (0..100).sum());
//! ```

mod pool;
mod ring;

pub use pool::{pool, PoolReceiver, PoolRecvError, PoolSendError, PoolSender};
pub use ring::{channel, Consumer, PopError, Producer, PushError, TryPopError, TryPushError};
