//! berth: concurrency primitives that are checked by several tools that are blind in different
//! places (loom, shuttle, Miri, ThreadSanitizer, proptest, libFuzzer, stress), each checker
//! proven able to fail by deliberately broken builds.
//!
//! - [`queue`]: bounded MPMC queues ([`MutexQueue`], [`VyukovQueue`]) behind [`BoundedQueue`];
//! - [`park`]: the spin-then-park [`Parker`](park::Parker) every blocking operation sleeps on.
//!
//! # Examples
//!
//! ```
//! use berth::{BoundedQueue, VyukovQueue};
//! use std::sync::Arc;
//! use std::thread;
//!
//! let q = Arc::new(VyukovQueue::new(64));
//! let producers: Vec<_> = (0..4u64)
//!     .map(|id| {
//!         let q = Arc::clone(&q);
//!         thread::spawn(move || {
//!             for i in 0..1_000 {
//!                 q.push(id * 1_000 + i).unwrap(); // sleeps while the queue is full
//!             }
//!         })
//!     })
//!     .collect();
//! let consumer = {
//!     let q = Arc::clone(&q);
//!     thread::spawn(move || {
//!         let mut sum = 0;
//!         while let Ok(v) = q.pop() { // sleeps while empty; fails once closed and drained
//!             sum += v;
//!         }
//!         sum
//!     })
//! };
//! for p in producers {
//!     p.join().unwrap();
//! }
//! q.close();
//! assert_eq!(consumer.join().unwrap(), (0..4_000).sum::<u64>());
//! ```
//!
//! Every atomic, lock and thread operation goes through an internal facade (`sync`) that is
//! std normally, loom under `--cfg loom` and shuttle under `--cfg shuttle`, so the code the
//! model checkers check is the code that ships.

#![warn(missing_docs, missing_debug_implementations, rust_2018_idioms)]

mod sync;
mod util;

pub mod channel;
pub mod deque;
pub mod park;
pub mod pool;
pub mod queue;
pub mod spsc;

pub use pool::{current_num_threads, current_thread_index, join, scope, spawn};
#[cfg(target_pointer_width = "64")]
pub use queue::ScqQueue;
pub use queue::{BoundedQueue, MutexQueue, VyukovQueue};
