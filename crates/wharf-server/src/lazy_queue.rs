//! A bounded queue of messages to a client that is made when first used: most HTTP sessions
//! never send their client anything unasked, and an idle session then holds no queue.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use tokio::sync::mpsc;

/// Both ends of a queue, made together on first use; the receiving end is taken once.
#[derive(Debug)]
pub struct LazyQueue {
    capacity: usize,
    made: OnceLock<Ends>,
    closed: AtomicBool,
}

#[derive(Debug)]
struct Ends {
    sender: mpsc::Sender<Vec<u8>>,
    receiver: Mutex<Option<mpsc::Receiver<Vec<u8>>>>,
}

impl LazyQueue {
    /// A queue of `capacity` messages (at least one), not made yet.
    pub fn new(capacity: usize) -> LazyQueue {
        LazyQueue { capacity: capacity.max(1), made: OnceLock::new(), closed: AtomicBool::new(false) }
    }

    fn ends(&self) -> &Ends {
        self.made.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(self.capacity);
            Ends { sender, receiver: Mutex::new(Some(receiver)) }
        })
    }

    /// The sending end, made now if it was not; `None` once the queue is closed.
    pub fn sender(&self) -> Option<&mpsc::Sender<Vec<u8>>> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        Some(&self.ends().sender)
    }

    /// The receiving end, made now if it was not; `None` after the first call, or once closed.
    pub fn take_receiver(&self) -> Option<mpsc::Receiver<Vec<u8>>> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        self.ends().receiver.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Nobody will read what is sent from now on: a receiving end never taken is dropped, so
    /// that a sender waiting for room is told the client is gone, and later sends fail at once.
    /// A receiving end already taken stays with its reader.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        if let Some(ends) = self.made.get() {
            drop(ends.receiver.lock().unwrap_or_else(PoisonError::into_inner).take());
        }
    }

    /// True once the queue was made: something was sent, or a reader took it.
    pub fn is_made(&self) -> bool {
        self.made.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn nothing_is_made_until_used_and_what_is_sent_reaches_the_reader() {
        let queue = LazyQueue::new(2);
        assert!(!queue.is_made());
        queue.sender().unwrap().send(b"one".to_vec()).await.unwrap();
        assert!(queue.is_made());
        let mut receiver = queue.take_receiver().expect("the receiving end, once");
        assert!(queue.take_receiver().is_none());
        assert_eq!(receiver.recv().await.as_deref(), Some(&b"one"[..]));
    }

    #[tokio::test]
    async fn closing_a_queue_nobody_reads_releases_a_waiting_sender_and_refuses_later_ones() {
        let queue = std::sync::Arc::new(LazyQueue::new(1));
        queue.sender().unwrap().send(b"fills it".to_vec()).await.unwrap();
        let waiting = tokio::spawn({
            let queue = queue.clone();
            async move { queue.sender().unwrap().send(b"waits for room".to_vec()).await.is_err() }
        });
        tokio::task::yield_now().await;
        queue.close();
        assert!(waiting.await.unwrap(), "the waiting send fails once the queue is closed");
        assert!(queue.sender().is_none());
        assert!(queue.take_receiver().is_none());
    }

    #[tokio::test]
    async fn closing_leaves_a_taken_receiver_with_its_reader() {
        let queue = LazyQueue::new(2);
        let mut receiver = queue.take_receiver().unwrap();
        let sender = queue.sender().unwrap().clone();
        queue.close();
        sender.send(b"still read".to_vec()).await.unwrap();
        assert_eq!(receiver.recv().await.as_deref(), Some(&b"still read"[..]));
    }
}
