//! Gathering queued messages into one write: whatever waits in a connection's queue goes out
//! with the message at its head, one line each, up to a batch's size.

use tokio::sync::mpsc;

/// The most bytes a writer gathers before it writes and flushes.
pub(crate) const WRITE_BATCH_BYTES: usize = 64 * 1024;

/// Appends `first` and whatever else is already queued, one line each, up to the batch size;
/// returns how many messages it took.
pub(crate) fn gather(buffer: &mut Vec<u8>, first: &[u8], receiver: &mut mpsc::Receiver<Vec<u8>>) -> usize {
    buffer.extend_from_slice(first);
    buffer.push(b'\n');
    let mut taken = 1;
    while buffer.len() < WRITE_BATCH_BYTES {
        let Ok(message) = receiver.try_recv() else { break };
        buffer.extend_from_slice(&message);
        buffer.push(b'\n');
        taken += 1;
    }
    taken
}
