//! Allocator ballast for the threads that answer requests (the stdio read thread, the HTTP
//! runtime's threads): one small block of every size up to 1 KiB, held while the thread serves,
//! so that mimalloc never finds a page emptied by a request.
//!
//! A request's allocations are mostly freed before the next request makes its own, so the one
//! block of its size class a request allocates is often the only one alive there, and mimalloc
//! retires the page that free leaves empty, only to make it anew for the next request. With a
//! block held in every small class, no page the read thread allocates from ever empties. It
//! belongs beside the allocator's choice (`lib.rs`); `benches/NOTES.md` has the numbers.

use std::any::Any;

/// The blocks, in 8-byte steps up to 1 KiB (66 KiB in all), as the read thread holds them.
pub(crate) fn hold() -> Box<dyn Any + Send> {
    // Opaque to the optimizer, which may otherwise drop allocations that are never read.
    let blocks: Vec<Box<[u8]>> =
        std::hint::black_box((1..=128).map(|step| vec![0u8; step * 8].into_boxed_slice()).collect());
    Box::new(blocks)
}

thread_local! {
    static HELD: std::cell::RefCell<Option<Box<dyn Any + Send>>> = const { std::cell::RefCell::new(None) };
}

/// Holds the blocks on the calling thread until it ends: for the HTTP runtime's threads, whose
/// requests' frees would otherwise empty a page of theirs as the stdio read thread's did.
pub fn hold_on_this_thread() {
    HELD.with(|held| *held.borrow_mut() = Some(hold()));
}
