//! One output written by two threads: a connection's read thread, which writes the answers it
//! made itself, and its writer thread, which writes everything that went through the queue.
//!
//! The read thread writes past the queue so that an answer it made costs no hand-over to
//! another thread, just the one write the bare loop also does. Order is kept with the queue's
//! count of messages sent and not yet written (see `session::Outbound`): the read thread
//! writes directly only while that count is zero, checked under the same lock the writer
//! thread holds while it writes and lowers it.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::mpsc;

use crate::contract::Error;
use crate::transport::write_batch::gather;

/// An output shared by a read thread and a writer thread; every write is whole lines.
pub(crate) struct SharedWriter {
    writer: Mutex<Box<dyn Write + Send>>,
    unwritten: Arc<AtomicUsize>,
}

impl SharedWriter {
    pub(crate) fn new(writer: impl Write + Send + 'static) -> Arc<SharedWriter> {
        Arc::new(SharedWriter { writer: Mutex::new(Box::new(writer)), unwritten: Arc::new(AtomicUsize::new(0)) })
    }

    /// The count the connection's queue keeps of messages not yet written.
    pub(crate) fn unwritten(&self) -> Arc<AtomicUsize> {
        self.unwritten.clone()
    }

    fn lock(&self) -> MutexGuard<'_, Box<dyn Write + Send>> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes `lines` (each ending in a newline) and returns true, unless queued messages are
    /// still to be written: then it writes nothing and returns false, and the lines must go
    /// through the queue behind them.
    pub(crate) fn write_unless_queued(&self, lines: &[u8]) -> std::io::Result<bool> {
        let mut writer = self.lock();
        if self.unwritten.load(Ordering::Acquire) != 0 {
            return Ok(false);
        }
        writer.write_all(lines)?;
        writer.flush()?;
        Ok(true)
    }

    /// The writer thread's loop: writes `first` (a message already taken from the queue), then
    /// what is queued, gathering whatever waits into one write, until every sender is gone.
    pub(crate) fn write_queue(
        &self,
        first: Option<Vec<u8>>,
        mut receiver: mpsc::Receiver<Vec<u8>>,
    ) -> Result<(), Error> {
        let mut buffer = Vec::new();
        let mut first = first;
        while let Some(message) = first.take().or_else(|| receiver.blocking_recv()) {
            let gathered = gather(&mut buffer, &message, &mut receiver);
            let mut writer = self.lock();
            writer.write_all(&buffer).and_then(|()| writer.flush()).map_err(Error::io)?;
            // Lowered under the lock, so that the read thread, which checks it under the same
            // lock, never sees a message counted out before it is written.
            self.unwritten.fetch_sub(gathered, Ordering::AcqRel);
            drop(writer);
            buffer.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Outbound;

    /// A `Write` whose bytes the test can read while the writer still holds it.
    #[derive(Clone, Default)]
    struct Recorded(Arc<Mutex<Vec<u8>>>);

    impl Write for Recorded {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn direct_lines_wait_while_queued_messages_are_unwritten() {
        let recorded = Recorded::default();
        let shared = SharedWriter::new(recorded.clone());
        let (sender, receiver) = mpsc::channel(8);
        let outbound = Outbound::counted(sender, shared.unwritten());

        // Nothing queued: the line goes straight out.
        assert!(shared.write_unless_queued(b"first\n").unwrap());
        // A queued message not yet written holds direct lines back.
        outbound.send(b"queued".to_vec()).await.unwrap();
        assert!(!shared.write_unless_queued(b"too early\n").unwrap());

        // Once the writer thread wrote it, direct lines may go again.
        drop(outbound);
        let writer = {
            let shared = shared.clone();
            std::thread::spawn(move || shared.write_queue(None, receiver))
        };
        writer.join().unwrap().unwrap();
        assert_eq!(shared.unwritten.load(Ordering::Acquire), 0);
        assert!(shared.write_unless_queued(b"last\n").unwrap());
        assert_eq!(String::from_utf8(recorded.0.lock().unwrap().clone()).unwrap(), "first\nqueued\nlast\n");
    }

    #[tokio::test]
    async fn a_send_given_up_while_waiting_for_room_counts_nothing() {
        let shared = SharedWriter::new(Recorded::default());
        let (sender, _receiver) = mpsc::channel(1);
        let outbound = Outbound::counted(sender, shared.unwritten());
        outbound.send(b"fills the queue".to_vec()).await.unwrap();
        let mut second = Box::pin(outbound.send(b"no room".to_vec()));
        let polled = std::future::poll_fn(|cx| std::task::Poll::Ready(second.as_mut().poll(cx))).await;
        assert!(polled.is_pending(), "the second send should wait for room");
        drop(second);
        assert_eq!(shared.unwritten.load(Ordering::Acquire), 1);
    }
}
