//! The buffer an encoded message is written into, kept for reuse by the thread that copies
//! answers out of it.
//!
//! The stdio read thread encodes every answer it makes into a fresh buffer and then copies it
//! into the batch it writes; without reuse, each answer would cost an allocation and a free. A
//! buffer given back is handed out again by the next [`take`] on the same thread. Buffers that leave the thread (HTTP bodies,
//! messages queued for a writer) are simply never given back.

use std::cell::Cell;

/// What a message buffer starts with: most messages are a few hundred bytes.
const INITIAL_CAPACITY: usize = 512;
/// A buffer that grew past this is freed rather than kept, so that one large answer does not
/// pin its memory for the thread's lifetime.
const MAX_KEPT_CAPACITY: usize = 64 * 1024;

thread_local! {
    static SPARE: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// An empty buffer: the one last given back on this thread, or a new one.
pub fn take() -> Vec<u8> {
    let buffer = SPARE.with(Cell::take);
    if buffer.capacity() == 0 { Vec::with_capacity(INITIAL_CAPACITY) } else { buffer }
}

/// Keeps `buffer` for the next [`take`] on this thread.
pub fn give_back(mut buffer: Vec<u8>) {
    if buffer.capacity() > MAX_KEPT_CAPACITY {
        return;
    }
    buffer.clear();
    // The spare this replaces is empty unless two buffers were out at once; either way
    // dropping it is correct.
    SPARE.with(|spare| spare.set(buffer));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_handed_out_again_empty() {
        let mut first = take();
        first.extend_from_slice(b"{\"jsonrpc\":\"2.0\"}");
        let address = first.as_ptr();
        give_back(first);
        let second = take();
        assert!(second.is_empty());
        assert_eq!(second.as_ptr(), address, "the same allocation is reused");
        assert!(second.capacity() >= INITIAL_CAPACITY);
        // Nothing was given back since: the next one is new.
        let third = take();
        assert_ne!(third.as_ptr(), address);
    }

    #[test]
    fn a_buffer_that_grew_large_is_not_kept() {
        let _ = take();
        give_back(Vec::with_capacity(MAX_KEPT_CAPACITY + 1));
        assert_eq!(take().capacity(), INITIAL_CAPACITY);
    }
}
