//! `berth::ScqQueue` against a `VecDeque` model (see `common/queue.rs`): every `BoundedQueue`
//! operation, capacities 1..=8, close part way through, each value handed back, popped in FIFO
//! order, or dropped with the queue exactly once.
#![no_main]

mod common;

#[cfg(target_pointer_width = "64")]
use berth::ScqQueue;
use common::queue::{run, QueueInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: QueueInput| {
    // ScqQueue exists on 64-bit targets only.
    #[cfg(target_pointer_width = "64")]
    run(input, ScqQueue::new);
    #[cfg(not(target_pointer_width = "64"))]
    let _ = input;
});
