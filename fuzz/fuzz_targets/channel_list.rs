//! `berth::channel::unbounded()` (the list flavour: blocks of 31 slots, recycled) against a model
//! (see `common/channel.rs`): `SendMany` crosses block boundaries; close from either side,
//! dropping the last sender or receiver (which drops what is buffered), weak senders.
#![no_main]

mod common;

use common::channel::{run, ChannelInput, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ChannelInput| {
    run(Kind::List, input);
});
