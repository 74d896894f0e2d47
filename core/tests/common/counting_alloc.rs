//! A global allocator that counts the calls made by threads that switched counting on: the
//! zero-allocation tests (`channel_alloc.rs`, `spsc_alloc.rs`, `pool_alloc.rs`) include it with
//! `#[path = "common/counting_alloc.rs"] mod counting_alloc;`, each in a test binary of its own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// The system allocator, counting the calls made by threads whose switch is on.
pub struct Counting;

/// alloc, alloc_zeroed and realloc calls made while counting (what the tests assert on).
pub static ALLOCS: AtomicUsize = AtomicUsize::new(0);
/// dealloc calls made while counting (what a test asserts on, or only reports, is its choice).
pub static DEALLOCS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's switch. `const`-initialised and without a destructor, so reading it never
    /// allocates (which would recurse into the allocator).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

pub fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(false)
}

pub fn set_counting(on: bool) {
    COUNTING.with(|c| c.set(on));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counting touches only
// atomics and a const thread-local, and allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            ALLOCS.fetch_add(1, SeqCst);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if counting() {
            ALLOCS.fetch_add(1, SeqCst);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counting() {
            ALLOCS.fetch_add(1, SeqCst);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if counting() {
            DEALLOCS.fetch_add(1, SeqCst);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;
