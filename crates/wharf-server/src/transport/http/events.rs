//! Where events of resumable SSE streams are kept for clients that reconnect with
//! `Last-Event-ID`: the [`EventStore`] trait and the bounded in-memory store built in.

use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;

/// Keeps the events of resumable streams, so that a client that lost its connection gets what
/// it missed. Streams belong to a session; an event is its encoded SSE frame.
///
/// The built-in [`MemoryEventStore`] keeps a bounded number of bytes per session. A deployment
/// with several server instances behind a load balancer supplies a shared store instead.
pub trait EventStore: Send + Sync + Debug + 'static {
    /// Keeps event `sequence` of `stream` in `session`. Sequences of a stream increase.
    fn store(&self, session: &str, stream: u64, sequence: u64, frame: Bytes);

    /// The kept events of `stream` after `sequence`, in order.
    fn replay(&self, session: &str, stream: u64, after: u64) -> Vec<(u64, Bytes)>;

    /// Forgets everything kept for `session`.
    fn forget(&self, session: &str);
}

/// An [`EventStore`] in memory that keeps at most a number of bytes per session, dropping the
/// oldest events first.
#[derive(Debug)]
pub struct MemoryEventStore {
    bytes_per_session: usize,
    sessions: Mutex<HashMap<String, Kept>>,
}

#[derive(Debug, Default)]
struct Kept {
    bytes: usize,
    events: VecDeque<(u64, u64, Bytes)>,
}

impl MemoryEventStore {
    /// A store that keeps up to `bytes_per_session` bytes of events for each session.
    pub fn new(bytes_per_session: usize) -> MemoryEventStore {
        MemoryEventStore { bytes_per_session, sessions: Mutex::new(HashMap::new()) }
    }
}

impl EventStore for MemoryEventStore {
    fn store(&self, session: &str, stream: u64, sequence: u64, frame: Bytes) {
        if frame.len() > self.bytes_per_session {
            return;
        }
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        // Looked up before inserting, so that storing an event allocates no key.
        if !sessions.contains_key(session) {
            sessions.insert(session.to_owned(), Kept::default());
        }
        let Some(kept) = sessions.get_mut(session) else { return };
        kept.bytes += frame.len();
        kept.events.push_back((stream, sequence, frame));
        while kept.bytes > self.bytes_per_session {
            let Some((_, _, dropped)) = kept.events.pop_front() else { break };
            kept.bytes -= dropped.len();
        }
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> Vec<(u64, Bytes)> {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(kept) = sessions.get(session) else { return Vec::new() };
        kept.events
            .iter()
            .filter(|(kept_stream, sequence, _)| *kept_stream == stream && *sequence > after)
            .map(|(_, sequence, frame)| (*sequence, frame.clone()))
            .collect()
    }

    fn forget(&self, session: &str) {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_one_stream_after_a_point_and_stays_within_its_bound() {
        let store = MemoryEventStore::new(10);
        store.store("s", 1, 1, Bytes::from_static(b"aaa"));
        store.store("s", 2, 1, Bytes::from_static(b"bbb"));
        store.store("s", 1, 2, Bytes::from_static(b"ccc"));
        assert_eq!(store.replay("s", 1, 0).len(), 2);
        assert_eq!(store.replay("s", 1, 1), vec![(2, Bytes::from_static(b"ccc"))]);
        assert!(store.replay("other", 1, 0).is_empty());
        store.store("s", 1, 3, Bytes::from_static(b"dddd"));
        // 13 bytes would exceed the bound of 10: the oldest event went.
        assert_eq!(store.replay("s", 1, 0).iter().map(|(sequence, _)| *sequence).collect::<Vec<_>>(), vec![2, 3]);
        store.forget("s");
        assert!(store.replay("s", 1, 0).is_empty());
    }
}
