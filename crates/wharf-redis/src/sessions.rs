//! [`RedisSessionStore`]: 2025 sessions in one Redis hash each. The field `opened` holds what
//! `initialize` settled; `initialized`, `level` and one `sub:<uri>` field per subscription
//! hold what changes, each written on its own so that instances changing different parts at
//! once lose nothing. An index of sessions by when they were last heard from serves the cap,
//! and a set of session ids per client the quota per client (both across the fleet);
//! the events of a session's response streams go to a Redis stream of its own. What one
//! instance tells the others is published on one channel of the deployment, to which every
//! instance subscribes.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;

use tokio::sync::{mpsc, oneshot};
use wharf_http::{Relayed, SessionChange, SessionLimits, SessionStore, SessionStoreError, StoredSession};
use wharf_server::StoreFuture;

use crate::commands::query_apart;
use crate::connection::{Redis, millis, unix_millis, without_secrets};
use crate::lane::Lane;
use crate::resp::{self, Reply};
use crate::session_events::{
    EVENTS_PER_WRITE, EVENTS_WAITING, KeptEvent, events_of, follow_events, is_alive, write_events,
};
use crate::session_hash::{INITIALIZED, LEVEL, OPENED, SUBSCRIPTION, stored, stored_from_lane};
use crate::subscription;

/// Keeps 2025 sessions in Redis for every instance of a server.
///
/// It holds the fleet to [`SessionLimits`]: a client (a principal, or an address) opening a
/// session past its quota ends its own session heard from longest ago, on whichever instance
/// it opened it, so that one client flooding the fleet ends no one else's. Two instances
/// opening sessions of one client at the same moment may let it pass its quota by one each.
#[derive(Debug)]
pub struct RedisSessionStore {
    redis: Redis,
    /// Events on their way to Redis, written in order by one task, started at the first.
    events: OnceLock<mpsc::Sender<KeptEvent>>,
    /// This instance, as its streams' first kept events name it: an instance following one of
    /// them tells a sender that died from one that is only quiet by the key that says it runs.
    instance: Arc<str>,
}

impl Redis {
    /// The store of 2025 sessions, for
    /// [`HttpOptions::session_store`](wharf_http::HttpOptions::session_store).
    pub fn session_store(&self) -> Arc<RedisSessionStore> {
        let mut random = [0u8; 8];
        // Only told apart from other instances, never guessed at: the time will do without
        // a random source.
        if getrandom::fill(&mut random).is_err() {
            random = unix_millis().to_le_bytes();
        }
        let instance: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
        Arc::new(RedisSessionStore { redis: self.clone(), events: OnceLock::new(), instance: instance.into() })
    }
}

fn unavailable(err: &redis::RedisError) -> SessionStoreError {
    SessionStoreError::unavailable(without_secrets(err))
}

impl RedisSessionStore {
    /// The session's read on Wharf's own connection: the hash, and with `refresh` its expiry
    /// and its place in the index pushed out, in one write.
    async fn load_on_lane(
        &self,
        lane: &Lane,
        id: &str,
        refresh: Option<Duration>,
    ) -> Result<Option<StoredSession>, SessionStoreError> {
        let key = self.redis.keys.session(id);
        let mut commands = Vec::with_capacity(256);
        resp::command(&mut commands, &[b"HGETALL", key.as_bytes()]);
        let mut replies = 1;
        if let Some(idle) = refresh {
            let idle = millis(idle).to_string();
            let index = self.redis.keys.sessions();
            resp::command(&mut commands, &[b"PEXPIRE", key.as_bytes(), idle.as_bytes()]);
            let now = unix_millis().to_string();
            resp::command(&mut commands, &[b"ZADD", index.as_bytes(), b"XX", now.as_bytes(), id.as_bytes()]);
            resp::command(&mut commands, &[b"PEXPIRE", index.as_bytes(), idle.as_bytes()]);
            replies = 4;
        }
        let answers = lane.query(commands, replies).await.map_err(SessionStoreError::unavailable)?;
        if let Some(Reply::Error(error)) = answers.iter().find(|answer| matches!(answer, Reply::Error(_))) {
            return Err(SessionStoreError::unavailable(format!(
                "Redis refused the session's read: {}",
                String::from_utf8_lossy(error)
            )));
        }
        stored_from_lane(answers.into_iter().next())
    }

    /// The queue of the task that writes events, started with the first.
    fn events(&self) -> &mpsc::Sender<KeptEvent> {
        self.events.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(EVENTS_WAITING);
            tokio::spawn(write_events(self.redis.clone(), self.instance.clone(), receiver));
            sender
        })
    }

    /// Ends the sessions of the client whose ids `client_sessions` holds, those heard from
    /// longest ago first, until one more leaves it within `max_per_client`; forgets the ids of
    /// sessions that ended otherwise. Returns how many it ended.
    async fn make_room_for_client(
        &self,
        client_sessions: &str,
        max_per_client: usize,
    ) -> Result<usize, SessionStoreError> {
        let mut connection = self.redis.connection.clone();
        let ids: Vec<String> = redis::cmd("SMEMBERS")
            .arg(client_sessions)
            .query_async(&mut connection)
            .await
            .map_err(|err| unavailable(&err))?;
        if ids.is_empty() {
            return Ok(0);
        }
        // When each was last heard from, as the index of all sessions says; a session missing
        // from it ended.
        let heard: Vec<Option<f64>> = redis::cmd("ZMSCORE")
            .arg(self.redis.keys.sessions())
            .arg(&ids)
            .query_async(&mut connection)
            .await
            .map_err(|err| unavailable(&err))?;
        let mut live: Vec<(f64, &String)> = Vec::new();
        let mut gone: Vec<&String> = Vec::new();
        for (id, heard) in ids.iter().zip(heard) {
            match heard {
                Some(heard) => live.push((heard, id)),
                None => gone.push(id),
            }
        }
        live.sort_by(|a, b| a.0.total_cmp(&b.0));
        let over = (live.len() + 1).saturating_sub(max_per_client.max(1));
        // A part per ended session (its keys share its slot), the index, the client's set.
        let mut parts = Vec::new();
        let mut index = redis::pipe();
        for (_, id) in &live[..over] {
            tracing::debug!(session = %id.chars().take(8).collect::<String>(), "the client's session quota ended a session");
            let mut ended = redis::pipe();
            ended.cmd("DEL").arg(self.redis.keys.session(id)).arg(self.redis.keys.events(id));
            parts.push(ended);
            index.cmd("ZREM").arg(self.redis.keys.sessions()).arg(*id);
            gone.push(id);
        }
        if gone.is_empty() {
            return Ok(0);
        }
        if !index.is_empty() {
            parts.push(index);
        }
        let mut forgotten = redis::pipe();
        forgotten.cmd("SREM").arg(client_sessions).arg(&gone);
        parts.push(forgotten);
        query_apart(&self.redis.connection, &parts).await.map_err(|err| unavailable(&err))?;
        Ok(over)
    }
}

impl SessionStore for RedisSessionStore {
    fn open<'a>(
        &'a self,
        id: &'a str,
        opened: &'a [u8],
        idle: Duration,
        limits: SessionLimits<'a>,
    ) -> StoreFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let key = self.redis.keys.session(id);
            let index = self.redis.keys.sessions();
            let mut connection = self.redis.connection.clone();
            // Sessions idle past their time leave the index; at the cap, the one heard from
            // longest ago is ended for every instance.
            let now = unix_millis();
            let (_, mut kept): (i64, usize) = redis::pipe()
                .cmd("ZREMRANGEBYSCORE")
                .arg(&index)
                .arg("-inf")
                .arg(now.saturating_sub(millis(idle)))
                .cmd("ZCARD")
                .arg(&index)
                .query_async(&mut connection)
                .await
                .map_err(|err| unavailable(&err))?;
            let client_sessions = limits.client.map(|client| self.redis.keys.sessions_of(client));
            if let Some(client_sessions) = &client_sessions {
                let ended = self.make_room_for_client(client_sessions, limits.max_per_client).await?;
                kept = kept.saturating_sub(ended);
            }
            for _ in limits.max_sessions..=kept {
                let oldest: Vec<String> = redis::cmd("ZPOPMIN")
                    .arg(&index)
                    .query_async(&mut connection)
                    .await
                    .map_err(|err| unavailable(&err))?;
                let Some(oldest) = oldest.first() else { break };
                tracing::debug!(session = %oldest.chars().take(8).collect::<String>(), "the fleet's session cap ended a session");
                redis::cmd("DEL")
                    .arg(self.redis.keys.session(oldest))
                    .arg(self.redis.keys.events(oldest))
                    .query_async::<()>(&mut connection)
                    .await
                    .map_err(|err| unavailable(&err))?;
            }
            // The session's hash, its place in the index, and the client's set: three slots on a
            // cluster.
            let mut session = redis::pipe();
            session.atomic().cmd("HSET").arg(&key).arg(OPENED).arg(opened).cmd("PEXPIRE").arg(&key).arg(millis(idle));
            let mut indexed = redis::pipe();
            indexed.cmd("ZADD").arg(&index).arg(now).arg(id).cmd("PEXPIRE").arg(&index).arg(millis(idle));
            let mut parts = vec![session, indexed];
            if let Some(client_sessions) = &client_sessions {
                // The client's set lives as long as its newest session.
                let mut of_client = redis::pipe();
                of_client.cmd("SADD").arg(client_sessions).arg(id);
                of_client.cmd("PEXPIRE").arg(client_sessions).arg(millis(idle));
                parts.push(of_client);
            }
            query_apart(&self.redis.connection, &parts).await.map_err(|err| unavailable(&err))?;
            self.redis.replicated(&key).await;
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        refresh: Option<Duration>,
    ) -> StoreFuture<'a, Result<Option<StoredSession>, SessionStoreError>> {
        Box::pin(async move {
            if let Some(lane) = &self.redis.lane {
                return self.load_on_lane(lane, id, refresh).await;
            }
            let key = self.redis.keys.session(id);
            let mut connection = self.redis.connection.clone();
            let Some(idle) = refresh else {
                let answer: redis::Value = redis::cmd("HGETALL")
                    .arg(&key)
                    .query_async(&mut connection)
                    .await
                    .map_err(|err| unavailable(&err))?;
                return stored(answer);
            };
            let index = self.redis.keys.sessions();
            // Still one round trip: the session, its expiry pushed out, and its place in the
            // index of sessions by when they were last heard from (only if it is still there).
            let mut session = redis::pipe();
            session.cmd("HGETALL").arg(&key).cmd("PEXPIRE").arg(&key).arg(millis(idle));
            let mut heard = redis::pipe();
            heard.cmd("ZADD").arg(&index).arg("XX").arg(unix_millis()).arg(id);
            heard.cmd("PEXPIRE").arg(&index).arg(millis(idle));
            let answers =
                query_apart(&self.redis.connection, &[session, heard]).await.map_err(|err| unavailable(&err))?;
            // The first pipeline's answers: the hash, then PEXPIRE's.
            let Some(redis::Value::Array(session)) = answers.into_iter().next() else {
                return Err(SessionStoreError::unavailable("Redis answered the session's load unexpectedly"));
            };
            stored(session.into_iter().next().unwrap_or(redis::Value::Nil))
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
            pipe.query_async::<()>(&mut connection).await.map(drop).map_err(|err| unavailable(&err))
        })
    }

    fn keep_event<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        sequence: u64,
        frame: Bytes,
        idle: Duration,
    ) -> StoreFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let (kept, written) = oneshot::channel();
            let event =
                KeptEvent { session: session.to_owned(), stream, sequence, frame: Some(frame), idle, kept: Some(kept) };
            let gone = || SessionStoreError::unavailable("the task that writes events has stopped");
            self.events().send(event).await.map_err(|_| gone())?;
            written.await.map_err(|_| gone())?.map_err(SessionStoreError::unavailable)
        })
    }

    fn keep_stream_end(&self, session: &str, stream: u64, idle: Duration) {
        let end = KeptEvent { session: session.to_owned(), stream, sequence: 0, frame: None, idle, kept: None };
        if self.events().try_send(end).is_err() {
            tracing::warn!("a stream's end was not kept: too many events wait for Redis");
        }
    }

    fn resume_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> StoreFuture<'a, Result<Option<mpsc::Receiver<Bytes>>, SessionStoreError>> {
        Box::pin(async move {
            let key = self.redis.keys.events(session);
            let mut connection = self.redis.connection.clone();
            let entries: Vec<(String, Vec<Vec<u8>>)> = redis::cmd("XRANGE")
                .arg(&key)
                .arg("-")
                .arg("+")
                .query_async(&mut connection)
                .await
                .map_err(|err| unavailable(&err))?;
            let Some(found) = events_of(&entries, stream, after) else { return Ok(None) };
            let sender_died = match (&found.sender, found.ended) {
                (Some(sender), false) => !is_alive(&self.redis, sender).await,
                _ => false,
            };
            if sender_died && found.frames.is_empty() {
                return Err(SessionStoreError::stream_gone(
                    "the instance sending this stream stopped before it ended; the request's outcome is unknown",
                ));
            }
            let (frames, receiver) = mpsc::channel(found.frames.len() + EVENTS_PER_WRITE);
            let handed = found.last;
            for frame in found.frames {
                let _ = frames.try_send(frame);
            }
            if !found.ended && !sender_died {
                let last = entries.last().map(|(id, _)| id.clone());
                let followed = (stream, found.sender);
                tokio::spawn(follow_events(self.redis.clone(), key, followed, (last, handed), frames));
            }
            Ok(Some(receiver))
        })
    }

    fn relay<'a>(&'a self, relayed: &'a Relayed) -> StoreFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let Some(payload) = relay_payload(relayed) else { return Ok(()) };
            subscription::publish(&self.redis, self.redis.keys.relay(), payload)
                .await
                .map(drop)
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
            let mut session = redis::pipe();
            session.cmd("DEL").arg(self.redis.keys.session(id)).arg(self.redis.keys.events(id));
            let mut index = redis::pipe();
            index.cmd("ZREM").arg(self.redis.keys.sessions()).arg(id);
            query_apart(&self.redis.connection, &[session, index]).await.map(drop).map_err(|err| unavailable(&err))
        })
    }
}

/// A relayed message on the wire: `c`, the session id, a newline and the client's message; `r`
/// and the URI of a resource that changed; or `l`, the list that changed, a newline and the
/// scopes of the component that changed it, separated by spaces (scope tokens have none); or
/// `e`, the list, a newline, `1` (enabled) or `0`, a newline and the component's key; or `t`
/// and a task's record as JSON; or `s`, a session id, a newline and a message for its stream.
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
        Relayed::ListChanged(list, scopes) => {
            Some([b"l", list.as_bytes(), b"\n", scopes.join(" ").as_bytes()].concat())
        }
        Relayed::TaskChanged(record) => Some([b"t", record.as_slice()].concat()),
        Relayed::ToStream { session, message } => Some([b"s", session.as_bytes(), b"\n", message].concat()),
        Relayed::Toggled(list, key, enabled) => {
            let enabled: &[u8] = if *enabled { b"1" } else { b"0" };
            Some([b"e", list.as_bytes(), b"\n", enabled, b"\n", key.as_bytes()].concat())
        }
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
        (b't', record) => Some(Relayed::TaskChanged(record.to_vec())),
        (b's', rest) => {
            let newline = rest.iter().position(|byte| *byte == b'\n')?;
            let session = std::str::from_utf8(&rest[..newline]).ok()?.to_owned();
            Some(Relayed::ToStream { session, message: rest[newline + 1..].to_vec() })
        }
        (b'e', rest) => {
            let mut parts = std::str::from_utf8(rest).ok()?.splitn(3, '\n');
            let (list, enabled, key) = (parts.next()?, parts.next()?, parts.next()?);
            Some(Relayed::Toggled(list.to_owned(), key.to_owned(), enabled == "1"))
        }
        (b'l', rest) => {
            let (list, scopes) = std::str::from_utf8(rest).ok()?.split_once('\n')?;
            Some(Relayed::ListChanged(list.to_owned(), scopes.split_whitespace().map(str::to_owned).collect()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relayed_messages_come_back_as_they_went() {
        let message = br#"{"jsonrpc":"2.0","id":"wharf-7","result":{"action":"accept"}}"#.to_vec();
        let answer = Relayed::ClientMessage { session: "abc".to_owned(), message };
        assert_eq!(relayed_from(&relay_payload(&answer).unwrap()), Some(answer));
        let update = Relayed::ResourceUpdated("demo://note\nwith a newline".to_owned());
        assert_eq!(relayed_from(&relay_payload(&update).unwrap()), Some(update));
        let to_stream = Relayed::ToStream { session: "abc".to_owned(), message: b"{\"x\":\n1}".to_vec() };
        assert_eq!(relayed_from(&relay_payload(&to_stream).unwrap()), Some(to_stream));
        let task = Relayed::TaskChanged(br#"{"task_id":"t1"}"#.to_vec());
        assert_eq!(relayed_from(&relay_payload(&task).unwrap()), Some(task));
        for toggled in [true, false] {
            let toggle = Relayed::Toggled("resources".to_owned(), "file:///a\nb".to_owned(), toggled);
            assert_eq!(relayed_from(&relay_payload(&toggle).unwrap()), Some(toggle));
        }
        for scopes in [vec![], vec!["tools:admin".to_owned(), "mcp".to_owned()]] {
            let change = Relayed::ListChanged("tools".to_owned(), scopes);
            assert_eq!(relayed_from(&relay_payload(&change).unwrap()), Some(change));
        }
        assert_eq!(relayed_from(b"cno newline"), None);
        assert_eq!(relayed_from(b"x?"), None);
        assert_eq!(relayed_from(b""), None);
    }
}
