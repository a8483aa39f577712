//! The 2025-era sessions of the HTTP transport: random ids, idle expiry, a bound on their
//! number and on each client's share of it, the standalone GET stream, and the live state of
//! resumable streams.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;
use wharf_protocol::ProtocolVersion;

use super::events::EventStore;
use super::session_store::{Relayed, SessionStore};
use super::standalone::Standalone;
use wharf_server::contract::LazyQueue;
use wharf_server::contract::Principal;
use wharf_server::contract::Server;
use wharf_server::contract::ServerHooks;
use wharf_server::contract::SessionEndReason;
use wharf_server::contract::client_key;
use wharf_server::contract::{Session, Transport};

/// How many server-initiated messages wait for a session's standalone GET stream.
const STANDALONE_BUFFER: usize = 16;

/// How many of a session's most recent streams a client may still resume once they ended;
/// older ones are forgotten (their events may outlive them in the store, bounded by bytes).
const RESUMABLE_STREAMS: u64 = 64;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One 2025 session reached over HTTP.
#[derive(Debug)]
pub(crate) struct HttpSession {
    pub(crate) session: Arc<Session>,
    /// Who opened it: only requests of the same principal reach it.
    pub(crate) principal: Option<Principal>,
    /// The client it counts against (see `client_key`); `None` when neither a principal nor
    /// an address was known.
    client: Option<Arc<str>>,
    /// Milliseconds since the table's epoch when the client was last heard from.
    last_seen: AtomicU64,
    /// Which session the table made before which: of two last heard from in the same
    /// millisecond, the older is evicted first.
    number: u64,
    /// Requests running and streams open; a session with any is never idle.
    active: AtomicUsize,
    /// With a shared store: milliseconds since the table's epoch when this copy last pushed
    /// the stored session's expiry out.
    refreshed: AtomicU64,
    /// Server-initiated messages, taken by the GET stream while it is open.
    standalone: Standalone,
    /// With a shared store: the way into this copy's GET stream. What the session's handlers
    /// send reaches it only while the stream is open here; otherwise it is relayed to the
    /// instance that holds the stream.
    stream_sender: Option<mpsc::Sender<Vec<u8>>>,
    streams: Mutex<HashMap<u64, LiveStream>>,
    next_stream: AtomicU64,
}

/// A resumable stream's state beyond its stored events.
#[derive(Debug, Default)]
pub(crate) struct LiveStream {
    /// The last event's sequence number.
    pub(crate) sequence: u64,
    /// True once the response was sent: a resumed stream ends after the replay.
    pub(crate) finished: bool,
    /// The GET stream of a client that resumed this stream, if one is open.
    pub(crate) listener: Option<mpsc::Sender<Bytes>>,
}

impl HttpSession {
    /// True when the session's streams number their events and can be resumed: revision
    /// 2025-11-25 and later.
    pub(crate) fn is_resumable(&self) -> bool {
        self.session.negotiated().is_some_and(|negotiated| negotiated.version >= ProtocolVersion::V2025_11_25)
    }

    /// Marks `stream` as ended: its resumed listener closes, and ended streams older than the
    /// most recent [`RESUMABLE_STREAMS`] are forgotten.
    pub(crate) fn finish_stream(&self, stream: u64) {
        let mut streams = lock(&self.streams);
        let live = streams.entry(stream).or_default();
        live.finished = true;
        live.listener = None;
        streams.retain(|id, live| !live.finished || id + RESUMABLE_STREAMS > stream);
    }

    pub(crate) fn next_stream(&self) -> u64 {
        self.next_stream.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn streams(&self) -> MutexGuard<'_, HashMap<u64, LiveStream>> {
        lock(&self.streams)
    }

    /// The server-initiated messages, for the GET stream that takes them over.
    pub(crate) fn standalone(&self) -> &Standalone {
        &self.standalone
    }

    /// True while a GET stream of this copy carries the session's server-initiated messages.
    pub(crate) fn has_stream_open(&self) -> bool {
        self.standalone.is_held()
    }

    /// With a shared store, hands `message` to this copy's GET stream if it is open here;
    /// false if it is not (or no room is left in it).
    pub(crate) fn deliver_to_stream(&self, message: Vec<u8>) -> bool {
        let Some(stream) = &self.stream_sender else { return false };
        self.has_stream_open() && stream.try_send(message).is_ok()
    }

    /// The client the session counts against, when one is known.
    pub(crate) fn client(&self) -> Option<&str> {
        self.client.as_deref()
    }

    /// True when no request runs and no stream is open: the session may be evicted.
    fn is_idle(&self) -> bool {
        self.active.load(Ordering::Acquire) == 0
    }

    /// What orders sessions for eviction, the one heard from longest ago first.
    fn heard(&self) -> Heard {
        (self.last_seen.load(Ordering::Relaxed), self.number)
    }

    /// True when a shared store keeps this session.
    pub(crate) fn is_shared(&self) -> bool {
        self.stream_sender.is_some()
    }
}

/// Marks a session active while it lives; the session may expire only when none is held.
#[derive(Debug)]
pub(crate) struct ActiveGuard {
    session: Arc<HttpSession>,
}

impl ActiveGuard {
    pub(crate) fn new(session: Arc<HttpSession>) -> ActiveGuard {
        session.active.fetch_add(1, Ordering::AcqRel);
        ActiveGuard { session }
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.session.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// When a session was last heard from, and its number: the smallest is evicted first.
type Heard = (u64, u64);

/// The sessions by id, and how many each client holds.
#[derive(Debug, Default)]
struct Table {
    /// Keyed by the id's bytes: a request's `Mcp-Session-Id` is looked up as it came.
    sessions: HashMap<Vec<u8>, Arc<HttpSession>, BuildHasherDefault<IdHasher>>,
    per_client: HashMap<Option<Arc<str>>, usize>,
}

impl Table {
    fn len(&self) -> usize {
        self.sessions.len()
    }

    fn get(&self, id: &[u8]) -> Option<&Arc<HttpSession>> {
        self.sessions.get(id)
    }

    fn held_by(&self, client: &Option<Arc<str>>) -> usize {
        self.per_client.get(client).copied().unwrap_or(0)
    }

    fn insert(&mut self, id: String, session: Arc<HttpSession>) {
        *self.per_client.entry(session.client.clone()).or_default() += 1;
        if let Some(replaced) = self.sessions.insert(id.into_bytes(), session) {
            self.uncount(&replaced);
        }
    }

    fn remove(&mut self, id: &[u8]) -> Option<Arc<HttpSession>> {
        let removed = self.sessions.remove(id)?;
        self.uncount(&removed);
        Some(removed)
    }

    fn uncount(&mut self, session: &HttpSession) {
        if let Some(held) = self.per_client.get_mut(&session.client) {
            *held -= 1;
            if *held == 0 {
                self.per_client.remove(&session.client);
            }
        }
    }

    /// Takes out the sessions `keep` says no to, and returns them.
    fn take_unless(&mut self, mut keep: impl FnMut(&HttpSession) -> bool) -> Vec<Arc<HttpSession>> {
        let gone: Vec<Vec<u8>> =
            self.sessions.iter().filter(|(_, session)| !keep(session)).map(|(id, _)| id.clone()).collect();
        gone.iter().filter_map(|id| self.remove(id)).collect()
    }

    /// The id of `client`'s session idle longest (a session with a request running or a
    /// stream open is not idle).
    fn oldest_idle_of(&self, client: &Option<Arc<str>>) -> Option<Vec<u8>> {
        self.sessions
            .iter()
            .filter(|(_, session)| session.client == *client && session.is_idle())
            .min_by_key(|(_, session)| session.heard())
            .map(|(id, _)| id.clone())
    }

    /// The id of the session to evict when the table is full for a session of `newcomer`: the
    /// one idle longest of the client holding the most sessions (the new one included) among
    /// those with an idle one, so that a client opening sessions by the thousand evicts its
    /// own before anyone else's.
    fn fairest_to_evict(&self, newcomer: &Option<Arc<str>>) -> Option<Vec<u8>> {
        let mut oldest: HashMap<&Option<Arc<str>>, (Heard, &Vec<u8>)> = HashMap::new();
        for (id, session) in self.sessions.iter().filter(|(_, session)| session.is_idle()) {
            let seen = session.heard();
            let entry = oldest.entry(&session.client).or_insert((seen, id));
            if seen < entry.0 {
                *entry = (seen, id);
            }
        }
        oldest
            .into_iter()
            .max_by_key(|(client, (seen, _))| {
                let held = self.held_by(client) + usize::from(*client == newcomer);
                (held, Reverse(*seen))
            })
            .map(|(_, (_, id))| id.clone())
    }
}

/// Every session the transport knows; a session that ends, however it ends, takes its stored
/// events with it, and the server's layers hear of it.
#[derive(Debug)]
pub(crate) struct SessionTable {
    sessions: Mutex<Table>,
    events: Arc<dyn EventStore>,
    /// Told of each session that ends.
    server: Server,
    epoch: Instant,
    idle_timeout: Duration,
    max_sessions: usize,
    max_per_client: usize,
    /// Milliseconds since the epoch when expired sessions were last looked for.
    last_sweep: AtomicU64,
    /// How many sessions the table made: the next one's number.
    made: AtomicU64,
    /// The store that keeps the sessions when instances share them: a session that leaves
    /// this table only because it idled here, was evicted, or the endpoint stopped lives on for
    /// the other instances, and does not end.
    store: Option<Arc<dyn SessionStore>>,
}

/// Why no session could be made.
#[derive(Debug)]
pub(crate) enum CreateError {
    /// Every session slot is taken by a session that is not idle.
    Full,
    /// The client holds as many sessions as it may, none of them idle.
    ClientFull,
    /// The operating system's random source failed.
    Random(String),
}

/// How often, at most, making a session also looks for expired ones, so that each expired
/// session ends (and is reported) soon after it expires even when nobody names it again.
const SWEEP_EVERY_MS: u64 = 1000;

/// Sessions taken out of the table, to be ended once its lock is released.
type Ended = Vec<(Arc<HttpSession>, SessionEndReason, Instant)>;

impl SessionTable {
    pub(crate) fn new(
        events: Arc<dyn EventStore>,
        server: Server,
        idle_timeout: Duration,
        (max_sessions, max_per_client): (usize, usize),
        store: Option<Arc<dyn SessionStore>>,
    ) -> SessionTable {
        SessionTable {
            store,
            sessions: Mutex::new(Table::default()),
            events,
            server,
            epoch: Instant::now(),
            idle_timeout,
            max_sessions,
            max_per_client,
            last_sweep: AtomicU64::new(0),
            made: AtomicU64::new(0),
        }
    }

    pub(crate) fn events(&self) -> &dyn EventStore {
        &*self.events
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn is_expired(&self, session: &HttpSession, now: u64) -> bool {
        let idle_for = now.saturating_sub(session.last_seen.load(Ordering::Relaxed));
        session.is_idle() && u128::from(idle_for) > self.idle_timeout.as_millis()
    }

    /// The moment an expired session expired: its last activity plus the idle timeout.
    fn expired_at(&self, session: &HttpSession) -> Instant {
        let last_seen = Duration::from_millis(session.last_seen.load(Ordering::Relaxed));
        let expired = self.epoch + last_seen + self.idle_timeout;
        expired.min(Instant::now())
    }

    /// Makes a session with a fresh random id for `principal`, or without one for the client
    /// at `address`. A client at its quota ends its own session idle longest first; at the
    /// table's limit, expired sessions go first, then the one idle longest of the client
    /// holding the most.
    pub(crate) fn create(
        &self,
        principal: Option<Principal>,
        address: Option<IpAddr>,
        outbound_for: impl FnOnce(String, Arc<LazyQueue>) -> Arc<Session>,
    ) -> Result<Arc<HttpSession>, CreateError> {
        let id = random_id().map_err(CreateError::Random)?;
        let client = client_key(principal.as_ref(), address);
        self.insert(id, true, |id, outbound| (outbound_for(id, outbound), principal, client))
    }

    /// Serves here a session that another instance opened, as a shared store keeps it: a
    /// session of this id, settled by `settle`, which gives the principal that opened it (None
    /// when the stored session is not one Wharf can read).
    pub(crate) fn adopt(
        &self,
        id: &str,
        settle: impl FnOnce(&Session) -> Option<Option<Principal>>,
    ) -> Result<Option<Arc<HttpSession>>, CreateError> {
        let mut unreadable = false;
        // A copy of a session the store admitted is not held to the client's quota here: the
        // store holds it for the fleet.
        let adopted = self.insert(id.to_owned(), false, |id, outbound| {
            let session = Session::new(id, Transport::Http, outbound);
            let principal = settle(&session).unwrap_or_else(|| {
                unreadable = true;
                None
            });
            let client = client_key(principal.as_ref(), None);
            (session, principal, client)
        })?;
        if unreadable {
            lock(&self.sessions).remove(id.as_bytes());
            return Ok(None);
        }
        Ok(Some(adopted))
    }

    /// Adds a session made by `make` (which gives it, the principal that opened it and the
    /// client it counts against), held to its client's quota when `quota` says so.
    fn insert(
        &self,
        id: String,
        quota: bool,
        make: impl FnOnce(String, Arc<LazyQueue>) -> (Arc<Session>, Option<Principal>, Option<Arc<str>>),
    ) -> Result<Arc<HttpSession>, CreateError> {
        // Made when first used: most sessions never send their client anything unasked.
        let outbound = Arc::new(LazyQueue::new(STANDALONE_BUFFER));
        let now = self.now();
        let (session, principal, client) = make(id.clone(), outbound.clone());
        let (stream_messages, stream_sender, handlers_messages) = if self.store.is_some() {
            session.number_requests_from(random_start());
            // The handlers' messages go through a pump, which knows where the stream is, and
            // this copy's GET stream reads a queue of its own.
            let local = Arc::new(LazyQueue::new(STANDALONE_BUFFER));
            let stream_sender = local.sender().cloned();
            (local, stream_sender, outbound.take_receiver())
        } else {
            (outbound, None, None)
        };
        let session = Arc::new(HttpSession {
            session,
            principal,
            client,
            last_seen: AtomicU64::new(now),
            number: self.made.fetch_add(1, Ordering::Relaxed),
            active: AtomicUsize::new(0),
            refreshed: AtomicU64::new(now),
            standalone: Standalone::new(stream_messages),
            stream_sender,
            streams: Mutex::new(HashMap::new()),
            // Copies of a shared session number their streams far apart, so that an event id
            // names one instance's stream only.
            next_stream: AtomicU64::new(if self.store.is_some() { random_start() } else { 1 }),
        });
        let mut sessions = lock(&self.sessions);
        if let Some(existing) = sessions.get(id.as_bytes()) {
            // Two requests adopted the same shared session at once: both are served by one.
            return Ok(existing.clone());
        }
        if let (Some(messages), Some(store)) = (handlers_messages, &self.store) {
            tokio::spawn(pump(Arc::downgrade(&session), messages, store.clone()));
        }
        let mut ended = Ended::new();
        let swept = self.last_sweep.load(Ordering::Relaxed);
        let over_quota = quota && self.is_over_quota(&sessions, &session.client);
        if sessions.len() >= self.max_sessions || over_quota || now.saturating_sub(swept) >= SWEEP_EVERY_MS {
            self.last_sweep.store(now, Ordering::Relaxed);
            for expired in sessions.take_unless(|session| !self.is_expired(session, now)) {
                let at = self.expired_at(&expired);
                ended.push((expired, SessionEndReason::Expired, at));
            }
        }
        let result = self.make_room(&mut sessions, &session.client, quota, &mut ended);
        if result.is_ok() {
            sessions.insert(id, session.clone());
        }
        drop(sessions);
        self.end(ended);
        result.map(|()| session)
    }

    /// True when `client` holds its quota of sessions already; a client nobody knows has none.
    fn is_over_quota(&self, sessions: &Table, client: &Option<Arc<str>>) -> bool {
        client.is_some() && sessions.held_by(client) >= self.max_per_client
    }

    /// Makes room in the table for a session of `client`: past its quota (when `quota` says
    /// it applies), that client's session idle longest goes; at the table's limit, the
    /// fairest to evict goes.
    fn make_room(
        &self,
        sessions: &mut Table,
        client: &Option<Arc<str>>,
        quota: bool,
        ended: &mut Ended,
    ) -> Result<(), CreateError> {
        if quota && self.is_over_quota(sessions, client) {
            let evicted = sessions.oldest_idle_of(client).and_then(|oldest| sessions.remove(&oldest));
            let Some(evicted) = evicted else { return Err(CreateError::ClientFull) };
            ended.push((evicted, SessionEndReason::Evicted, Instant::now()));
        }
        if sessions.len() >= self.max_sessions {
            let evicted = sessions.fairest_to_evict(client).and_then(|id| sessions.remove(&id));
            let Some(evicted) = evicted else { return Err(CreateError::Full) };
            ended.push((evicted, SessionEndReason::Evicted, Instant::now()));
        }
        Ok(())
    }

    /// The live session with this id; an expired one is removed and reported as gone.
    pub(crate) fn get(&self, id: impl AsRef<[u8]>) -> Option<Arc<HttpSession>> {
        let id = id.as_ref();
        let now = self.now();
        let mut sessions = lock(&self.sessions);
        let session = sessions.get(id)?;
        if self.is_expired(session, now) {
            let expired = sessions.remove(id)?;
            drop(sessions);
            let at = self.expired_at(&expired);
            self.end(vec![(expired, SessionEndReason::Expired, at)]);
            return None;
        }
        session.last_seen.store(now, Ordering::Relaxed);
        Some(session.clone())
    }

    /// True when `copy` last pushed its stored session's expiry out an eighth of the idle
    /// timeout ago or more: the next load does it again.
    pub(crate) fn refresh_due(&self, copy: &HttpSession) -> bool {
        let since = self.now().saturating_sub(copy.refreshed.load(Ordering::Relaxed));
        u128::from(since) * 8 >= self.idle_timeout.as_millis()
    }

    /// Notes that `copy` just pushed its stored session's expiry out.
    pub(crate) fn refreshed(&self, copy: &HttpSession) {
        copy.refreshed.store(self.now(), Ordering::Relaxed);
    }

    /// This instance's copy of a session, as it is: for messages other instances relay.
    pub(crate) fn peek(&self, id: &str) -> Option<Arc<HttpSession>> {
        lock(&self.sessions).get(id.as_bytes()).cloned()
    }

    /// Ends the session with this id, for `reason`.
    pub(crate) fn remove(&self, id: &str, reason: SessionEndReason) {
        let removed = lock(&self.sessions).remove(id.as_bytes());
        match removed {
            Some(session) => self.end(vec![(session, reason, Instant::now())]),
            None => self.events.forget(id),
        }
    }

    /// Drops a session whose `initialize` failed: the client never had it, so it did not end.
    pub(crate) fn discard(&self, id: &str) {
        lock(&self.sessions).remove(id.as_bytes());
        self.events.forget(id);
    }

    /// Forgets the stored events of sessions taken out of the table, and tells the layers of
    /// those that ended (with a shared store, only those closed or found gone).
    fn end(&self, ended: Ended) {
        for (session, reason, at) in ended {
            let lives_on = self.store.is_some()
                && matches!(
                    reason,
                    SessionEndReason::Expired | SessionEndReason::Evicted | SessionEndReason::ServerStopped
                );
            if lives_on {
                continue;
            }
            self.events.forget(session.session.id());
            self.server.end_session(&session.session, reason, at);
        }
    }

    /// Every live session, for delivering server events.
    pub(crate) fn all(&self) -> Vec<Arc<HttpSession>> {
        lock(&self.sessions).sessions.values().cloned().collect()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.sessions).len()
    }
}

/// The endpoint is gone (the server stopped, or the service was dropped): the sessions still
/// open end with it.
impl Drop for SessionTable {
    fn drop(&mut self) {
        let now = self.now();
        let sessions = std::mem::take(&mut *lock(&self.sessions)).sessions;
        let ended = sessions
            .into_values()
            .map(|session| {
                if self.is_expired(&session, now) {
                    let at = self.expired_at(&session);
                    (session, SessionEndReason::Expired, at)
                } else {
                    (session, SessionEndReason::ServerStopped, Instant::now())
                }
            })
            .collect();
        self.end(ended);
    }
}

/// Takes what a shared session's handlers send outside any request (a 2025-11-25 task's
/// requests to the client, say) to the session's GET stream: to this copy's if it is open
/// here, else relayed to the instance that holds it. Ends with the copy.
async fn pump(copy: Weak<HttpSession>, mut messages: mpsc::Receiver<Vec<u8>>, store: Arc<dyn SessionStore>) {
    while let Some(message) = messages.recv().await {
        let Some(copy) = copy.upgrade() else { return };
        if copy.has_stream_open() {
            if let Some(stream) = &copy.stream_sender {
                let _ = stream.send(message).await;
            }
            continue;
        }
        let relayed = Relayed::ToStream { session: copy.session.id().to_owned(), message };
        if let Err(err) = store.relay(&relayed).await {
            tracing::warn!(%err, "a message for the session's stream could not be relayed");
        }
    }
}

/// Where a shared session's copy starts numbering its requests to the client and its streams:
/// 48 random bits, so that two instances' numbers meet only after billions of them. A failed random source
/// leaves the numbers starting at 1, as in a session of one instance.
fn random_start() -> u64 {
    let mut bytes = [0u8; 8];
    match getrandom::fill(&mut bytes[..6]) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => 1,
    }
}

/// A new session id: unguessable, and visible ASCII as `Mcp-Session-Id` requires.
/// Hashes the table's session ids, which an instance of the server made at random: no client
/// chooses a key the table holds, so they need spreading only, not the keyed hash that keeps
/// a client from filling a map with colliding keys (which costs several times as much).
#[derive(Debug, Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    fn finish(&self) -> u64 {
        // The multiplication mixes upward only: the high half is folded into the low bits,
        // which pick the bucket.
        self.0 ^ (self.0 >> 32)
    }
}

fn random_id() -> Result<String, String> {
    wharf_server::contract::hex_id().map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::MemoryEventStore;

    fn table_with(idle_timeout: Duration, max: usize) -> SessionTable {
        let server = Server::builder("sessions", "1").build().unwrap();
        SessionTable::new(Arc::new(MemoryEventStore::new(1024)), server, idle_timeout, (max, max), None)
    }

    fn table(max: usize) -> SessionTable {
        table_with(Duration::from_secs(60), max)
    }

    fn make(table: &SessionTable) -> Result<Arc<HttpSession>, CreateError> {
        table.create(None, None, |id, outbound| Session::new(id, Transport::Http, outbound))
    }

    #[test]
    fn session_ids_spread_over_the_buckets_of_a_small_table() {
        use std::hash::BuildHasher;
        let ids: Vec<String> = (0..4096).map(|_| random_id().unwrap()).collect();
        let hasher = BuildHasherDefault::<IdHasher>::default();
        // The low 6 bits pick one of 64 buckets: each gets about 64 ids.
        let mut buckets = [0usize; 64];
        for id in &ids {
            buckets[(hasher.hash_one(id.as_bytes()) & 63) as usize] += 1;
        }
        assert!(buckets.iter().all(|&count| (24..=110).contains(&count)), "{buckets:?}");
        // And the top 7 bits, which hashbrown compares first, take many values.
        let tops: std::collections::HashSet<u64> = ids.iter().map(|id| hasher.hash_one(id.as_bytes()) >> 57).collect();
        assert!(tops.len() > 100, "{}", tops.len());
    }

    #[test]
    fn ids_are_random_visible_ascii() {
        let table = table(10);
        let first = make(&table).unwrap();
        let second = make(&table).unwrap();
        let (a, b) = (first.session.id(), second.session.id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|byte| (0x21..=0x7e).contains(&byte)));
        assert!(table.get(a).is_some());
        assert!(table.get("nope").is_none());
    }

    #[test]
    fn at_the_limit_the_longest_idle_session_is_evicted_and_active_ones_are_kept() {
        let table = table(2);
        let first = make(&table).unwrap();
        let second = make(&table).unwrap();
        table.events().store(first.session.id(), 1, 1, Bytes::from_static(b"kept"));
        let _busy = ActiveGuard::new(second.clone());
        let third = make(&table).unwrap();
        assert!(table.get(first.session.id()).is_none());
        assert!(table.events().replay(first.session.id(), 1, 0).is_empty(), "its events ended with it");
        assert_eq!(table.len(), 2);
        // Now one session is busy and the other idle; one more evicts the idle one.
        make(&table).unwrap();
        assert!(table.get(third.session.id()).is_none());
        assert!(table.get(second.session.id()).is_some());
    }

    #[test]
    fn when_every_session_is_busy_no_new_one_is_made() {
        let table = table(1);
        let only = make(&table).unwrap();
        let _busy = ActiveGuard::new(only);
        assert!(matches!(make(&table), Err(CreateError::Full)));
    }

    #[test]
    fn a_principal_is_one_client_wherever_it_connects_from() {
        let server = Server::builder("sessions", "1").build().unwrap();
        let events = Arc::new(MemoryEventStore::new(1024));
        let table = SessionTable::new(events, server, Duration::from_secs(60), (100, 2), None);
        let alice = Principal::issued("https://issuer.example", "alice");
        let open = |principal: Option<&Principal>, address: &str| {
            let address = Some(address.parse().unwrap());
            table.create(principal.cloned(), address, |id, outbound| Session::new(id, Transport::Http, outbound))
        };
        let _first = ActiveGuard::new(open(Some(&alice), "127.0.0.1").unwrap());
        let _second = ActiveGuard::new(open(Some(&alice), "127.0.0.2").unwrap());
        assert!(matches!(open(Some(&alice), "127.0.0.3"), Err(CreateError::ClientFull)));
        assert!(open(None, "127.0.0.1").is_ok(), "an anonymous caller at the same address is another client");
        assert_eq!(table.len(), 3);
    }

    #[test]
    fn idle_sessions_expire() {
        let table = table_with(Duration::ZERO, 10);
        let session = make(&table).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(table.get(session.session.id()).is_none());
    }

    #[test]
    fn only_the_most_recent_ended_streams_are_kept() {
        let table = table(1);
        let session = make(&table).unwrap();
        for stream in 1..=RESUMABLE_STREAMS + 10 {
            session.streams().entry(stream).or_default();
            session.finish_stream(stream);
        }
        let streams = session.streams();
        assert_eq!(streams.len() as u64, RESUMABLE_STREAMS);
        assert!(streams.contains_key(&(RESUMABLE_STREAMS + 10)) && !streams.contains_key(&10));
    }
}
