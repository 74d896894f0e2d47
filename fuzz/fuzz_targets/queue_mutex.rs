//! `berth::MutexQueue` against a `VecDeque` model (see `common/queue.rs`): every `BoundedQueue`
//! operation, capacities 1..=8, close part way through, each value handed back, popped in FIFO
//! order, or dropped with the queue exactly once.
#![no_main]

mod common;

use berth::MutexQueue;
use common::queue::{run, QueueInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: QueueInput| {
    run(input, MutexQueue::new);
});
