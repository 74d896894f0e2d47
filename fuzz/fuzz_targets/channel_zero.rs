//! `berth::channel::bounded(0)` (the rendezvous flavour) on one thread, against a model (see
//! `common/channel.rs`): no receiver is ever blocked, so `try_send` is `Full` and `try_recv`
//! `Empty` (the timeout forms time out) until the channel is disconnected, then both say
//! `Disconnected` and the blocking forms return at once; each failed send hands its message
//! back. (Rendezvous between two threads is in `two_threads`.)
#![no_main]

mod common;

use common::channel::{run, ChannelInput, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ChannelInput| {
    run(Kind::Zero, input);
});
