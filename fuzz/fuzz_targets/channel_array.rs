//! `berth::channel::bounded(n)`, n in 1..=8 (the array flavour), against a model (see
//! `common/channel.rs`): sends and receives through several cloned handles, full and empty
//! edges, close from either side, dropping the last sender or receiver, weak senders.
#![no_main]

mod common;

use common::channel::{run, ChannelInput, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ChannelInput| {
    let cap = common::small_capacity(input.capacity);
    run(Kind::Array(cap), input);
});
