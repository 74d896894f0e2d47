//! Small helpers shared by the primitives.

mod cache_padded;

pub(crate) use cache_padded::CachePadded;
