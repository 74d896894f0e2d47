//! The three channel flavours behind one small internal interface:
//!
//! | flavour  | made by          | algorithm                                               |
//! |----------|------------------|---------------------------------------------------------|
//! | `array`  | `bounded(n > 0)` | [`VyukovQueue`](crate::VyukovQueue): exactly `n` slots |
//! | `list`   | `unbounded()`    | linked blocks of slots, two locks, recycled blocks      |
//! | `zero`   | `bounded(0)`     | rendezvous: a send completes when a receiver takes it   |
//! | `timer`  | `after`, `at`, `tick`, `never` | no buffer: the message is read off the clock |
//!
//! Every flavour offers the same operations with a `deadline: Option<Instant>` (`None`: wait
//! forever), and the handles in `channel/mod.rs` never look inside one.

pub(crate) mod array;
pub(crate) mod list;
pub(crate) mod timer;
pub(crate) mod zero;

/// Why a send did not send: the message comes back.
pub(crate) enum SendFail<T> {
    Full(T),
    Disconnected(T),
    Timeout(T),
}

/// Why a receive did not receive.
pub(crate) enum RecvFail {
    Empty,
    Disconnected,
    Timeout,
}
