//! [`RedisSessionStore`]: 2025 sessions in one Redis hash each. The field `opened` holds what
//! `initialize` settled; `initialized`, `level` and one `sub:<uri>` field per subscription
//! hold what changes, each written on its own so that instances changing different parts at
//! once lose nothing. Every command that reaches a session also pushes its expiry out by the
//! idle timeout, in the same round trip. What one instance tells the others (clients' messages
//! it cannot place, resource changes) is published on one channel of the deployment, to which
//! every instance subscribes.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;

use tokio::sync::mpsc;
use wharf_server::{Relayed, SessionChange, SessionStore, SessionStoreError, StoreFuture, StoredSession, StreamEvents};

use crate::connection::{Redis, without_secrets};
use crate::subscription;

const OPENED: &str = "opened";
const INITIALIZED: &str = "initialized";
const LEVEL: &str = "level";
const SUBSCRIPTION: &str = "sub:";

/// Keeps 2025 sessions in Redis for every instance of a server.
#[derive(Debug)]
pub struct RedisSessionStore {
    redis: Redis,
    /// Events on their way to Redis, written in order by one task, started at the first.
    events: OnceLock<mpsc::Sender<KeptEvent>>,
}

/// One SSE event to keep.
#[derive(Debug)]
struct KeptEvent {
    session: String,
    stream: u64,
    sequence: u64,
    frame: Bytes,
    idle: Duration,
}

/// How many events of one session Redis keeps (about: the stream is trimmed where it is
/// cheap); older ones are dropped first.
const EVENTS_PER_SESSION: usize = 1000;
/// How many events may wait for Redis; more are dropped (a client resuming then misses them).
const EVENTS_WAITING: usize = 4096;
/// How many waiting events go to Redis in one round trip.
const EVENTS_PER_WRITE: usize = 64;

/// Writes kept events to Redis in the order they came, in batches of one round trip each.
async fn write_events(redis: Redis, mut events: mpsc::Receiver<KeptEvent>) {
    let mut batch = Vec::with_capacity(EVENTS_PER_WRITE);
    while events.recv_many(&mut batch, EVENTS_PER_WRITE).await > 0 {
        let mut pipe = redis::pipe();
        for event in batch.drain(..) {
            let key = redis.keys.events(&event.session);
            pipe.cmd("XADD")
                .arg(&key)
                .arg("MAXLEN")
                .arg("~")
                .arg(EVENTS_PER_SESSION)
                .arg("*")
                .arg("s")
                .arg(event.stream)
                .arg("q")
                .arg(event.sequence)
                .arg("f")
                .arg(event.frame.as_ref())
                .ignore()
                .cmd("PEXPIRE")
                .arg(&key)
                .arg(millis(event.idle))
                .ignore();
        }
        let mut connection = redis.connection.clone();
        if let Err(err) = pipe.query_async::<()>(&mut connection).await {
            tracing::warn!(error = %without_secrets(&err), "stream events could not be kept");
        }
    }
}

/// The events of `stream` after `after` among a session's kept events, each
/// `[id, ["s", stream, "q", sequence, "f", frame]]`; `None` when none of `stream` is kept.
fn events_of(entries: Vec<(String, Vec<Vec<u8>>)>, stream: u64, after: u64) -> Option<StreamEvents> {
    let number = |bytes: &[u8]| std::str::from_utf8(bytes).ok()?.parse::<u64>().ok();
    let mut known = false;
    let events = entries
        .into_iter()
        .filter_map(|(_, mut fields)| {
            if fields.len() != 6 || number(&fields[1])? != stream {
                return None;
            }
            known = true;
            let sequence = number(&fields[3])?;
            (sequence > after).then(|| (sequence, Bytes::from(fields.swap_remove(5))))
        })
        .collect();
    known.then_some(events)
}

impl Redis {
    /// The store of 2025 sessions, for
    /// [`HttpOptions::session_store`](wharf_server::HttpOptions::session_store).
    pub fn session_store(&self) -> Arc<RedisSessionStore> {
        Arc::new(RedisSessionStore { redis: self.clone(), events: OnceLock::new() })
    }
}

fn millis(idle: Duration) -> u64 {
    u64::try_from(idle.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn unavailable(err: &redis::RedisError) -> SessionStoreError {
    SessionStoreError(without_secrets(err))
}

/// A session from its hash's fields; None when `opened` is missing (the session was deleted,
/// and a late change wrote a field of it again).
fn stored(fields: HashMap<String, Vec<u8>>) -> Option<StoredSession> {
    let mut session = StoredSession::default();
    for (field, value) in fields {
        match field.as_str() {
            OPENED => session.opened = value,
            INITIALIZED => session.initialized = true,
            LEVEL => session.log_level = String::from_utf8(value).ok(),
            _ => {
                if let Some(uri) = field.strip_prefix(SUBSCRIPTION) {
                    session.subscriptions.push(uri.to_owned());
                }
            }
        }
    }
    (!session.opened.is_empty()).then_some(session)
}

impl SessionStore for RedisSessionStore {
    fn open<'a>(
        &'a self,
        id: &'a str,
        opened: &'a [u8],
        idle: Duration,
    ) -> StoreFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let key = self.redis.keys.session(id);
            let mut connection = self.redis.connection.clone();
            redis::pipe()
                .atomic()
                .cmd("HSET")
                .arg(&key)
                .arg(OPENED)
                .arg(opened)
                .ignore()
                .cmd("PEXPIRE")
                .arg(&key)
                .arg(millis(idle))
                .ignore()
                .query_async::<()>(&mut connection)
                .await
                .map_err(|err| unavailable(&err))
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        idle: Duration,
    ) -> StoreFuture<'a, Result<Option<StoredSession>, SessionStoreError>> {
        Box::pin(async move {
            let key = self.redis.keys.session(id);
            let mut connection = self.redis.connection.clone();
            let (fields, _): (HashMap<String, Vec<u8>>, i64) = redis::pipe()
                .cmd("HGETALL")
                .arg(&key)
                .cmd("PEXPIRE")
                .arg(&key)
                .arg(millis(idle))
                .query_async(&mut connection)
                .await
                .map_err(|err| unavailable(&err))?;
            Ok(stored(fields))
        })
    }

    fn change<'a>(
        &'a self,
        id: &'a str,
        change: &'a SessionChange,
        idle: Duration,
    ) -> StoreFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let key = self.redis.keys.session(id);
            let mut pipe = redis::pipe();
            pipe.atomic();
            match change {
                SessionChange::Initialized => pipe.cmd("HSET").arg(&key).arg(INITIALIZED).arg("1"),
                SessionChange::LogLevel(level) => pipe.cmd("HSET").arg(&key).arg(LEVEL).arg(level),
                SessionChange::Subscribed(uri) => {
                    pipe.cmd("HSET").arg(&key).arg(format!("{SUBSCRIPTION}{uri}")).arg("1")
                }
                SessionChange::Unsubscribed(uri) => pipe.cmd("HDEL").arg(&key).arg(format!("{SUBSCRIPTION}{uri}")),
                _ => return Ok(()),
            };
            pipe.ignore().cmd("PEXPIRE").arg(&key).arg(millis(idle)).ignore();
            let mut connection = self.redis.connection.clone();
            pipe.query_async::<()>(&mut connection).await.map_err(|err| unavailable(&err))
        })
    }

    fn keep_event(&self, session: &str, stream: u64, sequence: u64, frame: Bytes, idle: Duration) {
        let events = self.events.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(EVENTS_WAITING);
            tokio::spawn(write_events(self.redis.clone(), receiver));
            sender
        });
        let event = KeptEvent { session: session.to_owned(), stream, sequence, frame, idle };
        if events.try_send(event).is_err() {
            tracing::warn!("an event was not kept: too many wait for Redis");
        }
    }

    fn replay_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> StoreFuture<'a, Result<Option<StreamEvents>, SessionStoreError>> {
        Box::pin(async move {
            let mut connection = self.redis.connection.clone();
            let entries: Vec<(String, Vec<Vec<u8>>)> = redis::cmd("XRANGE")
                .arg(self.redis.keys.events(session))
                .arg("-")
                .arg("+")
                .query_async(&mut connection)
                .await
                .map_err(|err| unavailable(&err))?;
            Ok(events_of(entries, stream, after))
        })
    }

    fn relay<'a>(&'a self, relayed: &'a Relayed) -> StoreFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let Some(payload) = relay_payload(relayed) else { return Ok(()) };
            let mut connection = self.redis.connection.clone();
            redis::cmd("PUBLISH")
                .arg(self.redis.keys.relay())
                .arg(payload)
                .query_async::<()>(&mut connection)
                .await
                .map_err(|err| unavailable(&err))
        })
    }

    fn relayed(&self) -> mpsc::Receiver<Relayed> {
        let (sender, receiver) = mpsc::channel(subscription::BUFFER);
        tokio::spawn(subscription::listen(self.redis.clone(), self.redis.keys.relay(), relayed_from, sender));
        receiver
    }

    fn close<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let mut connection = self.redis.connection.clone();
            redis::cmd("DEL")
                .arg(self.redis.keys.session(id))
                .arg(self.redis.keys.events(id))
                .query_async::<()>(&mut connection)
                .await
                .map_err(|err| unavailable(&err))
        })
    }
}

/// A relayed message on the wire: `c`, the session id, a newline and the client's message; or
/// `r` and the URI of a resource that changed.
fn relay_payload(relayed: &Relayed) -> Option<Vec<u8>> {
    match relayed {
        Relayed::ClientMessage { session, message } => {
            let mut payload = Vec::with_capacity(session.len() + 2 + message.len());
            payload.push(b'c');
            payload.extend_from_slice(session.as_bytes());
            payload.push(b'\n');
            payload.extend_from_slice(message);
            Some(payload)
        }
        Relayed::ResourceUpdated(uri) => Some([b"r", uri.as_bytes()].concat()),
        _ => None,
    }
}

fn relayed_from(payload: &[u8]) -> Option<Relayed> {
    match payload.split_first()? {
        (b'c', rest) => {
            let newline = rest.iter().position(|byte| *byte == b'\n')?;
            let session = std::str::from_utf8(&rest[..newline]).ok()?.to_owned();
            Some(Relayed::ClientMessage { session, message: rest[newline + 1..].to_vec() })
        }
        (b'r', uri) => Some(Relayed::ResourceUpdated(std::str::from_utf8(uri).ok()?.to_owned())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_without_what_initialize_settled_is_no_session() {
        let late_change = HashMap::from([("level".to_owned(), b"debug".to_vec())]);
        assert_eq!(stored(late_change), None);
        let whole = HashMap::from([
            (OPENED.to_owned(), b"{}".to_vec()),
            (INITIALIZED.to_owned(), b"1".to_vec()),
            (LEVEL.to_owned(), b"warning".to_vec()),
            ("sub:file:///a".to_owned(), b"1".to_vec()),
        ]);
        let session = stored(whole).unwrap();
        assert!(session.initialized);
        assert_eq!(session.log_level.as_deref(), Some("warning"));
        assert_eq!(session.subscriptions, vec!["file:///a".to_owned()]);
    }

    #[test]
    fn only_the_named_streams_later_events_are_replayed() {
        let entry = |stream: &str, sequence: &str, frame: &str| {
            let fields = ["s", stream, "q", sequence, "f", frame].map(|field| field.as_bytes().to_vec()).to_vec();
            ("1-0".to_owned(), fields)
        };
        let entries =
            vec![entry("7", "1", "a"), entry("8", "1", "other"), entry("7", "2", "b"), entry("7", "x", "bad")];
        assert_eq!(events_of(entries.clone(), 7, 1), Some(vec![(2, Bytes::from_static(b"b"))]));
        assert_eq!(events_of(entries.clone(), 7, 2), Some(Vec::new()), "a kept stream with nothing after");
        assert_eq!(events_of(entries, 9, 0), None, "a stream none of whose events is kept");
    }

    #[test]
    fn relayed_messages_come_back_as_they_went() {
        let message = br#"{"jsonrpc":"2.0","id":"wharf-7","result":{"action":"accept"}}"#.to_vec();
        let answer = Relayed::ClientMessage { session: "abc".to_owned(), message };
        assert_eq!(relayed_from(&relay_payload(&answer).unwrap()), Some(answer));
        let update = Relayed::ResourceUpdated("demo://note\nwith a newline".to_owned());
        assert_eq!(relayed_from(&relay_payload(&update).unwrap()), Some(update));
        assert_eq!(relayed_from(b"cno newline"), None);
        assert_eq!(relayed_from(b"x?"), None);
        assert_eq!(relayed_from(b""), None);
    }
}
