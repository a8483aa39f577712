//! Where events of resumable SSE streams are kept for clients that reconnect with
//! `Last-Event-ID`: the [`EventStore`] trait and the bounded in-memory store built in.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Debug;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;

/// Keeps the events of resumable streams, so that a client that lost its connection gets what
/// it missed. Streams belong to a session; an event is its encoded SSE frame.
///
/// The built-in [`MemoryEventStore`] keeps a bounded number of bytes per session, and in all. A
/// deployment with several server instances behind a load balancer supplies a shared store
/// instead.
pub trait EventStore: Send + Sync + Debug + 'static {
    /// Keeps event `sequence` of `stream` in `session`. Sequences of a stream increase.
    fn store(&self, session: &str, stream: u64, sequence: u64, frame: Bytes);

    /// The kept events of `stream` after `sequence`, in order.
    fn replay(&self, session: &str, stream: u64, after: u64) -> Vec<(u64, Bytes)>;

    /// Forgets everything kept for `session`.
    fn forget(&self, session: &str);
}

/// An [`EventStore`] in memory that keeps at most a number of bytes per session, and at most a
/// number of bytes for all sessions together, dropping the oldest events first.
#[derive(Debug)]
pub struct MemoryEventStore {
    bytes_per_session: usize,
    total_bytes: usize,
    kept: Mutex<KeptEvents>,
}

/// What the store keeps of all sessions.
#[derive(Debug, Default)]
struct KeptEvents {
    sessions: HashMap<String, Kept>,
    /// Each session's oldest event by its stamp, so that the first is the oldest of all.
    oldest: BTreeMap<u64, String>,
    bytes: usize,
    next_stamp: u64,
}

/// What the store keeps of one session.
#[derive(Debug, Default)]
struct Kept {
    bytes: usize,
    events: VecDeque<Event>,
}

#[derive(Debug)]
struct Event {
    /// The order of events of all sessions.
    stamp: u64,
    stream: u64,
    sequence: u64,
    frame: Bytes,
}

/// The bound [`MemoryEventStore::new`] puts on the events of all sessions together.
const DEFAULT_TOTAL_BYTES: usize = 64 * 1024 * 1024;

impl MemoryEventStore {
    /// A store that keeps up to `bytes_per_session` bytes of events for each session, and up
    /// to 64 MiB for all of them together.
    pub fn new(bytes_per_session: usize) -> MemoryEventStore {
        MemoryEventStore { bytes_per_session, total_bytes: DEFAULT_TOTAL_BYTES, kept: Mutex::default() }
    }

    /// Keeps at most `bytes` of events for all sessions together; past it the oldest events of
    /// any session go first. Default 64 MiB.
    pub fn total_bytes(mut self, bytes: usize) -> MemoryEventStore {
        self.total_bytes = bytes;
        self
    }
}

impl KeptEvents {
    /// Drops the oldest event of `session`.
    fn drop_oldest(&mut self, session: &str) {
        let Some(kept) = self.sessions.get_mut(session) else { return };
        let Some(dropped) = kept.events.pop_front() else { return };
        kept.bytes -= dropped.frame.len();
        self.bytes -= dropped.frame.len();
        let name = self.oldest.remove(&dropped.stamp).unwrap_or_else(|| session.to_owned());
        match kept.events.front() {
            Some(next) => {
                self.oldest.insert(next.stamp, name);
            }
            None => {
                self.sessions.remove(session);
            }
        }
    }
}

impl EventStore for MemoryEventStore {
    fn store(&self, session: &str, stream: u64, sequence: u64, frame: Bytes) {
        if frame.len() > self.bytes_per_session || frame.len() > self.total_bytes {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = &mut *kept;
        let stamp = kept.next_stamp;
        kept.next_stamp += 1;
        kept.bytes += frame.len();
        // Looked up before inserting, so that storing an event allocates no key.
        if !kept.sessions.contains_key(session) {
            kept.sessions.insert(session.to_owned(), Kept::default());
            kept.oldest.insert(stamp, session.to_owned());
        }
        let Some(own) = kept.sessions.get_mut(session) else { return };
        own.bytes += frame.len();
        own.events.push_back(Event { stamp, stream, sequence, frame });
        while kept.sessions.get(session).is_some_and(|own| own.bytes > self.bytes_per_session) {
            kept.drop_oldest(session);
        }
        while kept.bytes > self.total_bytes {
            let Some(oldest) = kept.oldest.first_key_value().map(|(_, session)| session.clone()) else { break };
            kept.drop_oldest(&oldest);
        }
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> Vec<(u64, Bytes)> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(own) = kept.sessions.get(session) else { return Vec::new() };
        own.events
            .iter()
            .filter(|event| event.stream == stream && event.sequence > after)
            .map(|event| (event.sequence, event.frame.clone()))
            .collect()
    }

    fn forget(&self, session: &str) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(own) = kept.sessions.remove(session) else { return };
        kept.bytes -= own.bytes;
        if let Some(first) = own.events.front() {
            kept.oldest.remove(&first.stamp);
        }
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

    fn sequences(store: &MemoryEventStore, session: &str) -> Vec<u64> {
        store.replay(session, 1, 0).iter().map(|(sequence, _)| *sequence).collect()
    }

    #[test]
    fn all_sessions_together_stay_within_the_total_and_the_oldest_events_go_first() {
        let store = MemoryEventStore::new(10).total_bytes(25);
        let five = Bytes::from_static(b"12345");
        store.store("a", 1, 1, five.clone());
        store.store("a", 1, 2, five.clone());
        store.store("b", 1, 1, five.clone());
        store.store("c", 1, 1, five.clone());
        store.store("b", 1, 2, five.clone());
        assert_eq!(sequences(&store, "a"), vec![1, 2], "25 bytes in all: everything is kept");
        store.store("c", 1, 2, five.clone());
        assert_eq!(sequences(&store, "a"), vec![2], "the oldest event of all went");
        store.store("d", 1, 1, Bytes::from_static(b"0123456789"));
        assert_eq!(sequences(&store, "a"), Vec::<u64>::new());
        assert_eq!(sequences(&store, "b"), vec![2]);
        assert_eq!(sequences(&store, "c"), vec![1, 2]);
        assert_eq!(sequences(&store, "d"), vec![1]);
    }

    #[test]
    fn dropping_and_forgetting_keep_one_oldest_entry_per_session() {
        let store = MemoryEventStore::new(10).total_bytes(25);
        for sequence in 1..1000 {
            store.store(&format!("s{}", sequence % 7), 1, sequence, Bytes::from_static(b"123"));
        }
        store.forget("s3");
        let kept = store.kept.lock().unwrap();
        assert_eq!(kept.oldest.len(), kept.sessions.len());
        assert_eq!(kept.bytes, kept.sessions.values().map(|own| own.bytes).sum::<usize>());
        assert!(kept.bytes <= 25);
        let stamps: Vec<u64> = kept.sessions.values().map(|own| own.events[0].stamp).collect();
        assert!(stamps.iter().all(|stamp| kept.oldest.contains_key(stamp)));
    }

    #[test]
    fn by_default_the_total_is_bounded_as_well_as_each_session() {
        let store = MemoryEventStore::new(1024 * 1024);
        // One mebibyte shared by every event: the bound counts it for each.
        let frame = Bytes::from(vec![b'x'; 1024 * 1024]);
        for session in 0..100 {
            store.store(&session.to_string(), 1, 1, frame.clone());
        }
        let kept: Vec<usize> = (0..100).filter(|session| !sequences(&store, &session.to_string()).is_empty()).collect();
        assert_eq!(kept, (36..100).collect::<Vec<_>>(), "the 64 most recent sessions' events are kept");
    }
}
