//! A 2025 session's standalone stream: the server-initiated messages that belong to no request,
//! carried by one GET stream at a time. A new GET takes them over from the one before, whose
//! client may have gone away without a word, and that one ends; the stream keeps its id and the
//! numbering of its events, so that a client resuming it with `Last-Event-ID` is replayed what
//! the old connection may have lost.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedMutexGuard, mpsc};

use wharf_server::contract::{Cancellation, LazyQueue};

/// How long a new GET waits for the stream it takes over to let go of the messages. The old
/// stream lets go at its next step, so only a stream stuck elsewhere makes it wait that long.
const GIVE_WAY: Duration = Duration::from_secs(5);

/// The messages for the session's GET stream, and which GET holds them.
#[derive(Debug)]
pub(crate) struct Standalone {
    /// Where the session's messages wait until a GET stream takes them.
    source: Arc<LazyQueue>,
    queue: Arc<tokio::sync::Mutex<Queue>>,
    holder: Arc<Mutex<Holder>>,
}

impl Drop for Standalone {
    /// The session is gone: what its handlers still send finds no client.
    fn drop(&mut self) {
        self.source.close();
    }
}

/// What passes from one GET stream of the session to the next.
#[derive(Debug)]
pub(crate) struct Queue {
    /// The session's messages, taken from the source by the first GET stream.
    messages: Option<mpsc::Receiver<Vec<u8>>>,
    /// A message taken from the queue that its stream could not send, for the next one (in a
    /// session without resumption; with it, every message sent is kept as an event).
    pub(crate) unsent: Option<Vec<u8>>,
    /// The number of the stream's last event.
    pub(crate) sequence: u64,
}

#[derive(Debug, Default)]
struct Holder {
    /// The stream's id, given when a GET first opened it.
    stream: Option<u64>,
    /// Which GET holds the queue (each takeover counts one more), and how it is told to let go.
    held: Option<(u64, Cancellation)>,
    takeovers: u64,
}

/// A GET stream's hold on the queue, until it is dropped.
#[derive(Debug)]
pub(crate) struct Hold {
    pub(crate) queue: OwnedMutexGuard<Queue>,
    /// The stream's id.
    pub(crate) stream: u64,
    /// Cancelled when a newer GET takes over.
    pub(crate) taken_over: Cancellation,
    _release: Release,
}

/// A takeover's claim on the messages, given up when dropped: by the hold it became, or by a
/// takeover that ended without one (it timed out, or its GET was dropped while it waited), so
/// that no claim outlives its GET and keeps the session's messages from other ways out.
#[derive(Debug)]
struct Release {
    holder: Arc<Mutex<Holder>>,
    takeover: u64,
}

impl Drop for Release {
    fn drop(&mut self) {
        let mut holder = lock(&self.holder);
        if holder.held.as_ref().is_some_and(|(held, _)| *held == self.takeover) {
            holder.held = None;
        }
    }
}

fn lock(holder: &Mutex<Holder>) -> MutexGuard<'_, Holder> {
    holder.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Queue {
    /// The next message; `None` once the session can send no more.
    pub(crate) async fn next_message(&mut self) -> Option<Vec<u8>> {
        match &mut self.messages {
            Some(messages) => messages.recv().await,
            None => None,
        }
    }
}

impl Standalone {
    pub(crate) fn new(source: Arc<LazyQueue>) -> Standalone {
        let queue = Queue { messages: None, unsent: None, sequence: 0 };
        Standalone { source, queue: Arc::new(tokio::sync::Mutex::new(queue)), holder: Arc::default() }
    }

    /// True while a GET stream holds the messages (or is taking them over).
    pub(crate) fn is_held(&self) -> bool {
        lock(&self.holder).held.is_some()
    }

    /// The stream's id, once a GET opened it.
    pub(crate) fn stream(&self) -> Option<u64> {
        lock(&self.holder).stream
    }

    /// Takes the messages for a new GET stream: the one holding them is told to let go, and
    /// this waits until it did. `new_stream` gives the stream's id the first time. None when
    /// the old stream did not let go in time.
    pub(crate) async fn take_over(&self, new_stream: impl FnOnce() -> u64) -> Option<Hold> {
        let taken_over = Cancellation::new();
        let (stream, takeover) = {
            let mut holder = lock(&self.holder);
            holder.takeovers += 1;
            let takeover = holder.takeovers;
            if let Some((_, previous)) = holder.held.replace((takeover, taken_over.clone())) {
                previous.cancel();
            }
            (*holder.stream.get_or_insert_with(new_stream), takeover)
        };
        let release = Release { holder: self.holder.clone(), takeover };
        let mut queue = tokio::time::timeout(GIVE_WAY, self.queue.clone().lock_owned()).await.ok()?;
        if queue.messages.is_none() {
            queue.messages = self.source.take_receiver();
        }
        Some(Hold { queue, stream, taken_over, _release: release })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_new_hold_takes_the_queue_from_the_old_one_which_is_told_to_let_go() {
        let source = Arc::new(LazyQueue::new(4));
        let standalone = Standalone::new(source.clone());
        let sender = source.sender().unwrap().clone();
        assert!(!standalone.is_held());
        let mut first = standalone.take_over(|| 7).await.unwrap();
        assert_eq!((first.stream, standalone.stream()), (7, Some(7)));
        sender.send(b"one".to_vec()).await.unwrap();
        first.queue.unsent = first.queue.next_message().await;
        first.queue.sequence = 3;
        let second = tokio::spawn({
            let standalone = Arc::new(standalone);
            let taking = standalone.clone();
            async move { (taking.take_over(|| 8).await, standalone) }
        });
        first.taken_over.cancelled().await;
        drop(first);
        let (second, standalone) = second.await.unwrap();
        let second = second.unwrap();
        assert_eq!(second.stream, 7, "the stream keeps its id");
        assert_eq!(second.queue.unsent.as_deref(), Some(&b"one"[..]));
        assert_eq!(second.queue.sequence, 3);
        assert!(standalone.is_held());
        drop(second);
        assert!(!standalone.is_held());
    }

    #[tokio::test]
    async fn a_takeover_whose_get_is_dropped_while_it_waits_leaves_the_messages_unclaimed() {
        let standalone = Standalone::new(Arc::new(LazyQueue::new(4)));
        let first = standalone.take_over(|| 1).await.unwrap();
        {
            let waiting = standalone.take_over(|| 2);
            let _ = tokio::time::timeout(Duration::from_millis(20), waiting).await;
        }
        assert!(first.taken_over.is_cancelled(), "the first stream was told to let go");
        assert!(!standalone.is_held(), "the dropped takeover left no claim behind");
        drop(first);
        assert!(!standalone.is_held());
    }
}
